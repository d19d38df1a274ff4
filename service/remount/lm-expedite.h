/* lm-expedite.h: expedited RCU grace periods for the few milliseconds a
 * batch of remounts takes, journaled like every other value the daemon
 * changes. */
#pragma once

#include <glib.h>

#include "lm-journal.h"
#include "lm-state.h"

G_BEGIN_DECLS

/* Its journal part: the remounts' part restores it first (@with). */
extern const LmJournalPart lm_expedite_part;

/* Before a batch of remounts: remembers /sys/kernel/rcu_expedited durably
 * and sets it. Returns FALSE (and changes nothing) where the file is
 * missing, already set by someone else, or the journal cannot be written:
 * the remounts then only take longer. */
gboolean lm_expedite_begin (LmState *state);
/* The same in two steps, for a caller with a journal transaction of its
 * own: plan (staged in it, TRUE when it is to be set) inside its
 * prepare(), start (write; FALSE and forgotten when refused) after the
 * commit. */
gboolean lm_expedite_plan (LmState *state);
gboolean lm_expedite_start (LmState *state);
/* After the batch, or at start-up after a crash inside it: puts the
 * original back unless someone else changed it since, and forgets it. */
void lm_expedite_end (LmState *state);
gboolean lm_expedite_saved (LmState *state);

G_END_DECLS
