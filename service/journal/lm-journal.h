/* lm-journal.h: the restore journal as everyone outside journal/ sees it:
 * whole operations on a declared part (an LmJournalPart), never its steps
 * (those are lm-journal-private.h's). Apply: remember, mark, commit, write,
 * undo on refusal (lm-journal-apply.c); restore: read, check, write back,
 * forget; crash recovery: every registered part in one loop
 * (lm-journal-recovery.h). Parts say what they change, never how to
 * journal it. */
#pragma once

#include <glib.h>

#include "lm-state.h"

G_BEGIN_DECLS

typedef enum
{
  LM_JOURNAL_AS_ORIGINAL, /* already the original: nothing to write */
  LM_JOURNAL_OURS,        /* what we applied (or unknown): write the original */
  LM_JOURNAL_CHANGED,     /* someone else changed it since: leave it */
} LmJournalVerdict;

/* The one rule for "someone else changed it": @current against the
 * @original remembered and the value @applied (either NULL: not known). */
LmJournalVerdict lm_journal_verdict (const char *original, const char *applied,
                                     const char *current);

/* The same rule on values derived from the entry (a remount's commit=),
 * where NULL is a value (no commit= at all) and whether the original and
 * the applied value are known is said apart. */
LmJournalVerdict lm_journal_verdict_known (gboolean original_known, const char *original,
                                           gboolean applied_known, const char *applied,
                                           const char *current);

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
  gboolean drop;     /* not a change: the entry at @key is someone else's now,
                      * forgotten in the same durable write (last in the list) */
} LmJournalChange;

/* One entry as the journal holds it, for a part's restore_all() and
 * lm_journal_entries(). */
typedef struct
{
  char *key;
  char *original; /* NULL: none remembered (a hand-edited file) */
  char *applied;  /* NULL: never marked */
  gboolean done;  /* set by restore_all(): put back, or nothing left to put
                   * back: forgotten; else kept, tried again next time */
} LmJournalEntry;

void lm_journal_entry_free (LmJournalEntry *entry);

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

/* A value someone else wrote since it was applied, at the next apply. */
typedef enum
{
  LM_JOURNAL_OVERWRITE,     /* written over like any other */
  LM_JOURNAL_LEAVE_CHANGED, /* left as they wrote it unless that is the original,
                             * silently (Conflicts lists and logs it): tunables */
  LM_JOURNAL_LEAVE_ANY,     /* left, even when put back to the original, and
                             * logged: sysfs */
} LmJournalTheirs;

typedef struct _LmJournalPart LmJournalPart;

/* How a participant's values are journaled, written and put back. */
struct _LmJournalPart
{
  const char *part; /* the journal part: a group of the state file */
  const char *what; /* "tunable": for messages */
  LmJournalMode mode;
  gboolean keep_failed; /* restore: an original the system refused stays
                         * journaled, tried again at the next Stop or start */
  LmJournalTheirs theirs;
  gboolean restore_soon; /* restore: its forgets saved soon, not now (a lost
                          * one only writes the original again) */
  /* The keys of @part that are this part's, when another part shares the
   * group (attribution's block_dump and tracefs); NULL: every key. */
  const char *const *keys;
  /* Another part changed only while this one's writes run, journaled in
   * the same durable write (the remounts' grace-period switch): saved
   * with this one, and restored first by lm_journal_restore(). */
  const LmJournalPart *with;
  /* Write @value at @key. FALSE sets @error; LM_ERROR_REFUSED: refused,
   * and nothing a user must act on (logged by the writer). */
  gboolean (*write) (const char *key, const char *value, gpointer data, GError **error);
  /* Instead of write() one by one: every change at once (remounts, side
   * by side). FALSE: refused, and the writer put back what it wrote;
   * @given_up[i] TRUE: that value vanished meanwhile, taken back out. */
  gboolean (*write_all) (GPtrArray *changes, gboolean *given_up, gpointer data, GError **error);
  /* Called inside the transaction, before the commit: what else goes into
   * the same durable write (lm_journal_stage(): the remounts' grace-period
   * switch); NULL: none. */
  void (*prepare) (LmState *state, GPtrArray *changes, gpointer data);
  /* Instead of restoring one by one: every entry at once (remounts side
   * by side, disks one drive at a time, a tracefs mount), marking each
   * done or kept; failures appended. FALSE (and @error): nothing could
   * be tried, nothing is forgotten. */
  gboolean (*restore_all) (GPtrArray *entries, gpointer data, GString *failures, GError **error);
  /* Before the journal reads its entries: move ones an older release
   * kept elsewhere in the state file in (lm_journal_stage()); NULL: none. */
  void (*upgrade) (LmState *state, const LmJournalPart *part);
  /* Put @original back at @key (restore and roll-back); NULL: write(). */
  gboolean (*put_back) (const char *key, const char *original, gpointer data, GError **error);
  /* What @key holds now. NULL with @error unset: gone, nothing to restore. */
  char *(*read) (const char *key, gpointer data, GError **error);
  /* Whether an entry read back from the state file is one this participant
   * writes (the file may have been tampered with); NULL: any. */
  gboolean (*valid) (const char *key, const char *original);
  /* How to name @key to a user ("vm.dirty_ratio"); NULL: the key itself. */
  char *(*name) (const char *key);
};

/* Journal @changes durably (the state as it stands is written even when
 * there are none), then write them, in order. A change the part's
 * @theirs rule leaves is taken out of @changes first, and so is
 * each @drop, its entry forgotten. ALL_OR_NOTHING: a
 * refusal puts back what was written (side effects too) and forgets the
 * entries, and is returned. EACH/EACH_KEPT: a refusal is appended to
 * @failures ("; " between) and the others go on; FALSE only when the
 * journal could not be written (then nothing was changed). */
gboolean lm_journal_apply (LmState *state, const LmJournalPart *part, GPtrArray *changes,
                           gpointer data, GString *failures, GError **error);
/* Put back (its @with part first) every pending entry of @part still
 * ours, leave the ones someone else changed since (logged), forget them,
 * and save. */
gboolean lm_journal_restore (LmState *state, const LmJournalPart *part, gpointer data,
                             GError **error);
/* The same for @keys only (NULL-terminated). */
gboolean lm_journal_restore_keys (LmState *state, const LmJournalPart *part,
                                  const char *const *keys, gpointer data, GError **error);

/* The part's entries (of LmJournalEntry), and whether there are any (or
 * any of its @with part's). */
GPtrArray *lm_journal_entries (LmState *state, const LmJournalPart *part);
gboolean lm_journal_saved (LmState *state, const LmJournalPart *part);
/* How @part names @key to a user. */
char *lm_journal_name (const LmJournalPart *part, const char *key);

/* Journal @change of @part without writing it, in memory: durable with
 * the transaction in progress (inside another part's prepare()) or the
 * next save (an entry upgrade() found in an older layout). */
void lm_journal_stage (LmState *state, const LmJournalPart *part, const LmJournalChange *change);
/* Journal @change of @part durably, now, without writing it: the caller
 * makes the change itself after (a mount, a directory); FALSE and nothing
 * journaled when the state file cannot be written. Put back through
 * restore_all() like any other entry. */
gboolean lm_journal_record (LmState *state, const LmJournalPart *part,
                            const LmJournalChange *change, GError **error);

/* Forget @part's entries without putting anything back (saved soon):
 * changes journaled but never made (their write failed), so that a value
 * someone else writes there now is not taken for ours. */
void lm_journal_drop (LmState *state, const LmJournalPart *part);

/* Append @message to @failures, "; " between. */
void lm_journal_add_failure (GString *failures, const char *message);

G_END_DECLS
