/* lm-tracefs-mount.h: where the tracefs backend's instance lives: tracefs
 * mounted if absent, and what puts it back at a stop or after a crash. */
#pragma once

#include <glib.h>

#include "lm-journal.h"

G_BEGIN_DECLS

/* The instance's name under instances/ (also what a crash leaves). */
#define LM_TRACEFS_INSTANCE "laptop-moded"

/* Attribution's journal part for the mount and the instance: restored at
 * a stop with the mounted flag, after a crash from the journal alone. */
extern const LmJournalPart lm_tracefs_journal_part;

/* TRUE when tracefs is mounted on its usual place, or the kernel has it
 * and the place exists (LM_ERROR_NOT_SUPPORTED otherwise). */
gboolean lm_tracefs_available (GError **error);

/* Journal, then do: mount tracefs on @tracing if it is not there
 * (*@mounted TRUE then), and the instance, of which a crashed run's
 * leftover is removed. On failure, lm_tracefs_put_back() undoes it. */
gboolean lm_tracefs_prepare (LmState *state, const char *tracing, gboolean *mounted,
                             GError **error);

/* Unmount what this run mounted (*@mounted) and forget the journal's
 * entries; the instance itself is libtracefs's to destroy first. */
gboolean lm_tracefs_put_back (LmState *state, gboolean *mounted, GError **error);

G_END_DECLS
