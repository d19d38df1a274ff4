/* lm-journal-apply.h: the journal's transaction, written once for every
 * participant: remember, mark, commit, write, undo on refusal; and read,
 * check, write back, forget on restore. Participants say what they change
 * (an LmJournalPart and a list of LmJournalChange), never how to journal it. */
#pragma once

#include <glib.h>

#include "lm-journal.h"

G_BEGIN_DECLS

/* One value a participant wants changed. */
typedef struct
{
  char *key;
  char *original;    /* what the system holds now: remembered the first time only */
  char *value;       /* what to write; NULL: changed by the others as a side effect
                      * (remembered, never written; recorded as the kernel made it) */
  gboolean unmarked; /* written but not readable back (a drive command): no
                      * applied value to compare, so never reported as changed */
  char *shown;       /* set by a writer: what the system shows after the write
                      * (a driver's own spelling), recorded as applied */
} LmJournalChange;

LmJournalChange *lm_journal_change_new (const char *key, const char *original, const char *value);
void lm_journal_change_free (LmJournalChange *change);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmJournalChange, lm_journal_change_free)
/* A GPtrArray that frees its LmJournalChange entries. */
GPtrArray *lm_journal_changes_new (void);

typedef enum
{
  LM_JOURNAL_ALL_OR_NOTHING, /* a refused write undoes the ones made (tunables) */
  LM_JOURNAL_EACH,           /* a refused value alone is taken back out (hardware power) */
  LM_JOURNAL_EACH_KEPT,      /* a refused value stays journaled: its original is sent
                              * back at restore anyway (drive commands) */
} LmJournalMode;

/* How a participant's values are journaled, written and put back. */
typedef struct
{
  const char *part; /* the journal part: a group of the state file */
  const char *what; /* "tunable": for messages */
  LmJournalMode mode;
  gboolean keep_failed; /* restore: an original the system refused stays
                         * journaled, tried again at the next Stop or start */
  /* Write @value at @key. FALSE sets @error; LM_ERROR_REFUSED: refused,
   * and nothing a user must act on (logged by the writer). */
  gboolean (*write) (const char *key, const char *value, gpointer data, GError **error);
  /* Instead of write() one by one: every change at once (remounts, side
   * by side). FALSE: refused, and the writer put back what it wrote;
   * @given_up[i] TRUE: that value vanished meanwhile, taken back out. */
  gboolean (*write_all) (GPtrArray *changes, gboolean *given_up, gpointer data, GError **error);
  /* Called inside the transaction, before the commit: what else goes into
   * the same durable write (the remounts' grace-period switch); NULL: none. */
  void (*prepare) (LmState *state, GPtrArray *changes, gpointer data);
  /* Put @original back at @key (restore and roll-back); NULL: write(). */
  gboolean (*put_back) (const char *key, const char *original, gpointer data, GError **error);
  /* What @key holds now. NULL with @error unset: gone, nothing to restore. */
  char *(*read) (const char *key, gpointer data, GError **error);
  /* Whether an entry read back from the state file is one this participant
   * writes (the file may have been tampered with); NULL: any. */
  gboolean (*valid) (const char *key, const char *original);
  /* How to name @key to a user ("vm.dirty_ratio"); NULL: the key itself. */
  char *(*name) (const char *key);
} LmJournalPart;

/* Journal @changes durably (the state as it stands is written even when
 * there are none: a participant may have forgotten entries), then write
 * them, in order. ALL_OR_NOTHING: a
 * refusal puts back what was written (side effects too) and forgets the
 * entries, and is returned. EACH/EACH_KEPT: a refusal is appended to
 * @failures ("; " between) and the others go on; FALSE only when the
 * journal could not be written (then nothing was changed). */
gboolean lm_journal_apply (LmState *state, const LmJournalPart *part, GPtrArray *changes,
                           gpointer data, GString *failures, GError **error);
/* Put back every pending entry of @part still ours, leave the ones someone
 * else changed since (logged), forget them, and save. */
gboolean lm_journal_restore (LmState *state, const LmJournalPart *part, gpointer data,
                             GError **error);
/* The same for @keys only (NULL-terminated). */
gboolean lm_journal_restore_keys (LmState *state, const LmJournalPart *part,
                                  const char *const *keys, gpointer data, GError **error);

/* Saving, in one place: now (a restore that forgot entries), or soon
 * (records a crash may lose: lm_state_save_soon()). */
gboolean lm_journal_save (LmState *state, GError **error);
void lm_journal_save_soon (LmState *state);
/* Append @message to @failures, "; " between. */
void lm_journal_add_failure (GString *failures, const char *message);

G_END_DECLS
