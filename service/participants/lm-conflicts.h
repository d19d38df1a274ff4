/* lm-conflicts.h: values we applied that someone else changed since.
 * Owns finding and listing them; never writes a value back. */
#pragma once

#include <glib.h>

#include "lm-state.h"

G_BEGIN_DECLS

typedef struct _LmConflicts LmConflicts;

LmConflicts *lm_conflicts_new (void);
void lm_conflicts_free (LmConflicts *conflicts);
/* Compare every journal entry that has an applied value with what the
 * system holds now; a new (what, found) pair is logged once. Called only at
 * moments the daemon looks anyway (a state change, Start, Stop, Configure),
 * never on a timer. Returns TRUE when the list changed. */
gboolean lm_conflicts_check (LmConflicts *conflicts, LmState *state);
/* Forget the list (laptop mode went off: nothing of ours is applied). */
gboolean lm_conflicts_clear (LmConflicts *conflicts);
/* The Conflicts property: a(sxss) what, when (µs since the epoch),
 * expected (what we applied), found. */
GVariant *lm_conflicts_to_variant (LmConflicts *conflicts);
/* The ConflictWriters property: a{ss} what -> who changed it ("tlp[1234]",
 * or "unknown; TLP is installed"), escaped as Conflicts is. */
GVariant *lm_conflicts_writers_to_variant (LmConflicts *conflicts);

/* Who last wrote the sysctl or sysfs file @name in directory @dir, itself
 * in @up, where something watched it (lm_bpf_shared_setting_writer);
 * NULL: not seen. */
typedef char *(*LmConflictsWriterFunc) (const char *up, const char *dir, const char *name);
void lm_conflicts_set_writer_func (LmConflicts *conflicts, LmConflictsWriterFunc func);
/* The other power tools installed under the root ("TLP and powertop"),
 * NULL when none is. */
char *lm_conflicts_power_tools (void);
/* @what ("vm.dirty_expire_centisecs", a sysfs path) as the names of its
 * file's grandparent and parent directories and its own ("sys", "vm",
 * "dirty_expire_centisecs"); FALSE when it names no file. Pure. */
gboolean lm_conflicts_file_of (const char *what, char **up, char **dir, char **name);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmConflicts, lm_conflicts_free)

G_END_DECLS
