/* lm-expedite.c: each ext4 remount waits for one RCU grace period (it takes
 * a per-cpu rwsem for writing: synchronize_rcu()), 10 to 20 ms of a Start
 * that otherwise takes a few. Expedited grace periods (a round of IPIs
 * instead of waiting for every CPU to pass a quiescent state) cut that to
 * well under a millisecond; the switch is global, so it is on only while the
 * batch runs, and journaled so that a crash inside the window is undone at
 * the next start (lm_remount_restore calls lm_expedite_end). */
#include "lm-expedite.h"

#include "lm-io.h"
#include "lm-journal.h"
#include "lm-journal.h"
#include "lm-paths.h"

#define PART "Expedite"
#define KEY "rcu_expedited"
#define SYSFS "/sys/kernel/rcu_expedited"

gboolean
lm_expedite_plan (LmState *state)
{
  g_autofree char *path = lm_path (SYSFS);
  g_autofree char *current = lm_io_read_value (path, NULL);

  /* Missing (tiny RCU, a fake root), or someone else wants it on. */
  if (current == NULL || !g_str_equal (current, "0"))
    return FALSE;
  lm_journal_remember (state, PART, KEY, current);
  lm_journal_mark (state, PART, KEY, "1");
  return TRUE;
}

gboolean
lm_expedite_start (LmState *state)
{
  g_autofree char *path = lm_path (SYSFS);
  g_autoptr (GError) error = NULL;

  if (lm_io_write_value (path, "1", &error))
    return TRUE;
  g_debug ("Not expediting grace periods: %s", error->message);
  lm_journal_forget (state, PART, KEY);
  lm_journal_save_soon (state);
  return FALSE;
}

gboolean
lm_expedite_begin (LmState *state)
{
  g_autoptr (LmJournalTx) tx = lm_journal_begin (state);
  g_autoptr (GError) error = NULL;

  if (!lm_expedite_plan (state))
    return FALSE;
  if (!lm_journal_commit (tx, &error))
    {
      g_debug ("Not expediting grace periods: %s", error->message);
      return FALSE;
    }
  return lm_expedite_start (state);
}

void
lm_expedite_end (LmState *state)
{
  g_autofree char *original = lm_journal_original (state, PART, KEY);
  g_autofree char *path = lm_path (SYSFS);
  g_autoptr (GError) error = NULL;

  if (original == NULL)
    return;
  g_autofree char *current = lm_io_read_value (path, NULL);
  if (current != NULL && lm_journal_check (state, PART, KEY, current) == LM_JOURNAL_OURS
      && !lm_io_write_value (path, original, &error))
    {
      /* Kept in the journal: the next restore (a Stop, the next start)
       * tries again rather than leave it on for good. */
      g_warning ("Could not put %s back to %s: %s", SYSFS, original, error->message);
      return;
    }
  lm_journal_forget (state, PART, KEY);
  lm_journal_save_soon (state); /* a lost forget only writes the original again */
}

gboolean
lm_expedite_saved (LmState *state)
{
  return lm_journal_has_pending (state, PART);
}
