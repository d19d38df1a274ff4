/* lm-tunables.h: the kernel's writeback tunables and how they are changed.
 * Owns the backend interface (sysctl, bdflush) and what to write; the
 * journal's transaction saves every original before it is written. */
#pragma once

#include <glib.h>

#include "lm-engines.h"
#include "lm-settings.h"
#include "lm-state.h"

G_BEGIN_DECLS

typedef struct
{
  char *name; /* file under /proc/sys/vm */
  char *value;
} LmTunable;

LmTunable *lm_tunable_new (const char *name, const char *value);
void lm_tunable_free (LmTunable *tunable);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmTunable, lm_tunable_free)

typedef struct _LmTunablesBackend
{
  const char *name;
  /* TRUE when this kernel has the files this backend writes. */
  gboolean (*probe) (void);
  /* The engines this kernel's files allow, as LmEngine bits: the kernel
   * engine needs a vm.laptop_mode file (honoured or not). */
  guint (*engines) (void);
  /* The values to write, in order, for @settings and @engine (the kernel
   * engine adds vm.laptop_mode; each engine has its own thresholds). */
  GPtrArray *(*plan) (const LmSettings *settings, LmEngine engine, GError **error);
  /* Files the kernel changes as a side effect of the planned writes
   * (writing dirty_ratio zeroes dirty_bytes): saved, never written. */
  const char *const *side_effects;
} LmTunablesBackend;

extern const LmTunablesBackend lm_tunables_sysctl;
extern const LmTunablesBackend lm_tunables_bdflush;

const LmTunablesBackend *lm_tunables_probe (void);

gboolean lm_tunables_apply (const LmTunablesBackend *backend, const LmSettings *settings,
                            LmEngine engine, LmState *state, GError **error);
gboolean lm_tunables_restore (LmState *state, GError **error);
gboolean lm_tunables_saved (LmState *state);

char *lm_tunables_path (const char *name);
/* Whether @name is one of the files the backends write or save. */
gboolean lm_tunables_is_known (const char *name);

G_END_DECLS
