/* lm-state.h: what the daemon changed on the system and what was there before.
 * Owns the durable state file; it must be written before any change it
 * describes, so a crash is always followed by an exact restore. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _LmState LmState;

LmState *lm_state_new (const char *path);
void lm_state_free (LmState *state);
const char *lm_state_get_path (LmState *state);

gboolean lm_state_load (LmState *state, GError **error);
gboolean lm_state_save (LmState *state, GError **error);
/* Save from an idle callback (at the latest when @state is freed): for
 * records a crash may lose, such as what the kernel made of a value
 * already applied, so they cost no fsync while a caller waits. A
 * lm_state_save() before then writes them too. */
void lm_state_save_soon (LmState *state);
gboolean lm_state_is_empty (LmState *state);

char *lm_state_get (LmState *state, const char *group, const char *key);
/* Keys may be any string (encoded reversibly in the file). Values are
 * UTF-8 text: GKeyFile loses a leading form feed, so callers storing
 * arbitrary bytes escape them first (as lm-remount.c does). */
void lm_state_set (LmState *state, const char *group, const char *key, const char *value);
void lm_state_remove (LmState *state, const char *group, const char *key);
char **lm_state_get_keys (LmState *state, const char *group);

char *lm_state_snapshot (LmState *state);
void lm_state_revert (LmState *state, const char *snapshot);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmState, lm_state_free)

G_END_DECLS
