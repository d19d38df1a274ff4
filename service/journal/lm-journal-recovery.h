/* lm-journal-recovery.h: crash recovery in one place: every part whose
 * values a run may leave changed (participants, attribution's sysctl and
 * mount), registered by its owner, put back in one loop at start-up. */
#pragma once

#include <glib.h>

#include "lm-journal.h"

G_BEGIN_DECLS

typedef struct _LmJournalRecovery LmJournalRecovery;

/* Put back what the part registered with @owner holds, with the
 * @context given to lm_journal_recovery_run(). */
typedef gboolean (*LmJournalRecoverFunc) (gconstpointer owner, gpointer context, GError **error);

LmJournalRecovery *lm_journal_recovery_new (void);
void lm_journal_recovery_free (LmJournalRecovery *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmJournalRecovery, lm_journal_recovery_free)

/* @part, named @name in the log ("tunables"), in the order its changes
 * are made; @recover NULL: lm_journal_restore() with no data. A part
 * added twice is kept once, where it was first added. */
void lm_journal_recovery_add (LmJournalRecovery *self, const LmJournalPart *part, const char *name,
                              LmJournalRecoverFunc recover, gconstpointer owner);
/* TRUE when the journal holds something of any part added. */
gboolean lm_journal_recovery_saved (LmJournalRecovery *self, LmState *state);
/* At start-up: every part that holds something put back, newest first,
 * each whatever the others did (failures logged). */
void lm_journal_recovery_run (LmJournalRecovery *self, LmState *state, gpointer context);

G_END_DECLS
