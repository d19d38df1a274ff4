/* lm-journal-private.h: the journal's inside, for journal/ alone: the
 * original of each change (remembered once), the value applied, and the
 * steps of a transaction. Everyone else goes through lm-journal.h. */
#pragma once

#include <glib.h>

#include "lm-journal.h"
#include "lm-state.h"

G_BEGIN_DECLS

/* Entries are kept per participant ("Tunables", "Disks", ...); keys are any
 * bytes (a mount point, a disk id with '='): lm-state encodes them. */
void lm_journal_remember (LmState *state, const char *part, const char *key, const char *original);
void lm_journal_mark (LmState *state, const char *part, const char *key, const char *applied);
char *lm_journal_original (LmState *state, const char *part, const char *key);
char *lm_journal_applied (LmState *state, const char *part, const char *key);
void lm_journal_forget (LmState *state, const char *part, const char *key);
/* The keys with a remembered original, decoded. */
char **lm_journal_pending (LmState *state, const char *part);
gboolean lm_journal_has_pending (LmState *state, const char *part);

/* lm_journal_verdict() on what the journal holds for @key. */
LmJournalVerdict lm_journal_check (LmState *state, const char *part, const char *key,
                                   const char *current);

/* A change in steps: begin, record, commit (durable: only then touch the
 * system), and undo when the system refused it. A transaction freed before
 * its commit leaves the in-memory state as at begin. */
typedef struct _LmJournalTx LmJournalTx;

LmJournalTx *lm_journal_begin (LmState *state);
gboolean lm_journal_commit (LmJournalTx *tx, GError **error);
void lm_journal_undo (LmJournalTx *tx);
void lm_journal_tx_free (LmJournalTx *tx);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmJournalTx, lm_journal_tx_free)

/* Saving, in one place: now (a restore that forgot entries), or soon
 * (records a crash may lose: lm_state_save_soon()). */
gboolean lm_journal_save (LmState *state, GError **error);
void lm_journal_save_soon (LmState *state);

G_END_DECLS
