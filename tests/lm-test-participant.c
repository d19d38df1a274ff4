/* lm-test-participant.c: a participant that exists only in laptop-moded-test:
 * one file under the fake root, "laptop" while laptop mode is on. It shows
 * that one file and one row make a participant (journaled, restored at Stop
 * and after a crash, reported in Conflicts) with no other file touched;
 * inert where the file does not exist. */
#include "lm-io.h"
#include "lm-journal.h"
#include "lm-participants.h"
#include "lm-paths.h"

#define PART "TestKnob"
#define KEY "knob"
#define KNOB "/sys/kernel/lm_test_knob"
#define ON "laptop"

static char *
read_knob (const char *key, gpointer data, GError **error)
{
  g_autofree char *path = lm_path (KNOB);
  return lm_io_read_value (path, NULL); /* missing: gone, nothing to do */
}

static gboolean
write_knob (const char *key, const char *value, gpointer data, GError **error)
{
  g_autofree char *path = lm_path (KNOB);
  return lm_io_write_value (path, value, error);
}

static gboolean
valid (const char *key, const char *original)
{
  return g_str_equal (key, KEY);
}

static char *
name (const char *key)
{
  return g_strdup ("test.knob");
}

static const LmJournalPart journal_part = {
  .part = PART,
  .what = "test knob",
  .mode = LM_JOURNAL_ALL_OR_NOTHING,
  .keep_failed = TRUE,
  .theirs = LM_JOURNAL_LEAVE_CHANGED, /* someone else's: left, and listed in Conflicts */
  .write = write_knob,
  .read = read_knob,
  .valid = valid,
  .name = name,
};

static gboolean
knob_apply (const LmSystem *sys, const LmSettings *settings, LmEngine engine, GError **error)
{
  g_autofree char *now = read_knob (KEY, NULL, NULL);
  g_autoptr (GPtrArray) changes = lm_journal_changes_new ();

  if (now == NULL || g_str_equal (now, ON))
    return TRUE;
  g_ptr_array_add (changes, lm_journal_change_new (KEY, now, ON));
  return lm_journal_apply (sys->state, &journal_part, changes, NULL, NULL, error);
}

static gboolean
knob_restore (const LmSystem *sys, GError **error)
{
  return lm_journal_restore (sys->state, &journal_part, NULL, error);
}

static const LmParticipant row = {
  .name = "test knob",
  .must_succeed = FALSE,
  .apply = knob_apply,
  .restore = knob_restore,
  .journal = &journal_part,
};

__attribute__ ((constructor)) static void
add_test_participant (void)
{
  lm_participants_add (&row);
}
