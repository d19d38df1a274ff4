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

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmConflicts, lm_conflicts_free)

G_END_DECLS
