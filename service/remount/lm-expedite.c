/* lm-expedite.c: each ext4 remount waits for one RCU grace period (it takes
 * a per-cpu rwsem for writing: synchronize_rcu()), 10 to 20 ms of a Start
 * that otherwise takes a few. Expedited grace periods (a round of IPIs
 * instead of waiting for every CPU to pass a quiescent state) cut that to
 * well under a millisecond; the switch is global, so it is on only while the
 * batch runs, and a journal part of its own, restored with the remounts'
 * (their part's @with), so that a crash inside the window is undone at the
 * next start. */
#include "lm-expedite.h"

#include "lm-io.h"
#include "lm-paths.h"

#define PART "Expedite"
#define KEY "rcu_expedited"
#define SYSFS "/sys/kernel/rcu_expedited"

static char *
read_switch (const char *key, gpointer data, GError **error)
{
  g_autofree char *path = lm_path (SYSFS);
  return lm_io_read_value (path, NULL); /* missing: tiny RCU, a fake root */
}

static gboolean
write_switch (const char *key, const char *value, gpointer data, GError **error)
{
  g_autofree char *path = lm_path (SYSFS);
  return lm_io_write_value (path, value, error);
}

static gboolean
valid (const char *key, const char *original)
{
  return g_str_equal (key, KEY) && g_str_equal (original, "0");
}

static char *
name (const char *key)
{
  return g_strdup (SYSFS);
}

/* A refused write is undone at once; one put back that fails stays
 * journaled, tried again at the next restore (a Stop, the next start)
 * rather than left on for good. Forgets are saved soon: a lost one only
 * writes the original again. */
const LmJournalPart lm_expedite_part = {
  .part = PART,
  .what = "grace-period switch",
  .mode = LM_JOURNAL_ALL_OR_NOTHING,
  .keep_failed = TRUE,
  .restore_soon = TRUE,
  .write = write_switch,
  .read = read_switch,
  .valid = valid,
  .name = name,
};

/* The change to make, or NULL where the file is missing or someone else
 * wants it on. */
static LmJournalChange *
change (void)
{
  g_autofree char *current = read_switch (KEY, NULL, NULL);

  if (current == NULL || !g_str_equal (current, "0"))
    return NULL;
  return lm_journal_change_new (KEY, current, "1");
}

gboolean
lm_expedite_begin (LmState *state)
{
  g_autoptr (GPtrArray) changes = lm_journal_changes_new ();
  g_autoptr (GError) error = NULL;
  LmJournalChange *c = change ();

  if (c == NULL)
    return FALSE;
  g_ptr_array_add (changes, c);
  if (lm_journal_apply (state, &lm_expedite_part, changes, NULL, NULL, &error))
    return TRUE;
  g_debug ("Not expediting grace periods: %s", error->message);
  return FALSE;
}

gboolean
lm_expedite_plan (LmState *state)
{
  g_autoptr (LmJournalChange) c = change ();

  if (c == NULL)
    return FALSE;
  lm_journal_stage (state, &lm_expedite_part, c);
  return TRUE;
}

gboolean
lm_expedite_start (LmState *state)
{
  g_autoptr (GError) error = NULL;

  if (write_switch (KEY, "1", NULL, &error))
    return TRUE;
  g_debug ("Not expediting grace periods: %s", error->message);
  /* Still the original: forgotten, not restored (a "1" read now would be
   * someone else's, and a restore would write it back to "0"). */
  lm_journal_drop (state, &lm_expedite_part);
  return FALSE;
}

void
lm_expedite_end (LmState *state)
{
  g_autoptr (GError) error = NULL;

  if (!lm_journal_restore (state, &lm_expedite_part, NULL, &error))
    g_warning ("%s", error->message);
}

gboolean
lm_expedite_saved (LmState *state)
{
  return lm_journal_saved (state, &lm_expedite_part);
}
