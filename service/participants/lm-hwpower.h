/* lm-hwpower.h: the hardware's own power settings while laptop mode is on:
 * SATA link power (ALPM), runtime PM of each disk and its controller, and the
 * NVMe latency tolerance; each restored exactly through the journal. */
#pragma once

#include <glib.h>

#include "lm-settings.h"
#include "lm-state.h"

G_BEGIN_DECLS

/* The journal part; keys are the canonical sysfs paths written. */
#define LM_HWPOWER_PART "HwPower"

/* Best effort: a file the kernel refuses is left as it was and named in
 * @error; the others are applied. Originals are durable before any write. */
gboolean lm_hwpower_apply (const LmSettings *settings, LmState *state, GError **error);
/* Put back every original still ours; values someone else changed since
 * are left alone (and logged). Also used after a crash. */
gboolean lm_hwpower_restore (LmState *state, GError **error);
gboolean lm_hwpower_saved (LmState *state);
/* What is applied now: canonical sysfs path → the value written (for
 * whoever checks that nobody else changed it). */
GHashTable *lm_hwpower_applied (LmState *state);

/* The disk's link policy, runtime PM and NVMe tolerance as sysfs has them
 * now, added to a Disks entry. */
void lm_hwpower_describe_disk (const char *disk, GVariantBuilder *builder);

G_END_DECLS
