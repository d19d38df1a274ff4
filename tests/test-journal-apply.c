/* test-journal-apply.c: the journal's one transaction (lm-journal-apply.c)
 * over files in a fake root: all or nothing, each value alone, kept, the
 * restore's three verdicts, and a participant that is one row (apply,
 * restore and Conflicts driven by its LmParticipant alone). */
#include "lm-conflicts.h"
#include "lm-io.h"
#include "lm-journal-private.h"
#include "lm-journal-recovery.h"
#include "lm-journal.h"
#include "lm-participants.h"
#include "test-fakeroot.h"

#define PART "Knobs"

static char *
knob_path (const char *key)
{
  g_autofree char *sys = g_build_filename ("/knobs", key, NULL);
  return lm_path (sys);
}

static char *
read_knob (const char *key, gpointer data, GError **error)
{
  g_autofree char *path = knob_path (key);
  return lm_io_read_value (path, NULL);
}

/* Keys starting "refuse" are refused, as the kernel would. */
static gboolean
write_knob (const char *key, const char *value, gpointer data, GError **error)
{
  g_autofree char *path = knob_path (key);

  if (g_str_has_prefix (key, "refuse"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED, "%s: refused", key);
      return FALSE;
    }
  return lm_io_write_value (path, value, error);
}

static char *
knob_name (const char *key)
{
  return g_strconcat ("knob.", key, NULL);
}

static LmJournalPart part = {
  .part = PART,
  .what = "knob",
  .write = write_knob,
  .read = read_knob,
  .name = knob_name,
};

static LmState *
new_state (LmFakeRoot *f)
{
  g_autofree char *path = g_build_filename (f->root, "state", NULL);
  return lm_state_new (path);
}

static void
put (LmFakeRoot *f, const char *key, const char *value)
{
  g_autofree char *rel = g_build_filename ("knobs", key, NULL);
  lm_fake_root_put (f, rel, value);
}

static char *
get (LmFakeRoot *f, const char *key)
{
  g_autofree char *rel = g_build_filename ("knobs", key, NULL);
  return lm_fake_root_get (f, rel);
}

static void
add (GPtrArray *changes, const char *key, const char *original, const char *value)
{
  g_ptr_array_add (changes, lm_journal_change_new (key, original, value));
}

static void
test_all_or_nothing (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) s = new_state (f);
  g_autoptr (GPtrArray) changes = lm_journal_changes_new ();
  g_autoptr (GError) error = NULL;

  put (f, "a", "1");
  put (f, "refuse_b", "2");
  put (f, "side", "7");
  add (changes, "a", "1", "10");
  add (changes, "refuse_b", "2", "20");
  add (changes, "side", "7", NULL);
  part.mode = LM_JOURNAL_ALL_OR_NOTHING;
  g_assert_false (lm_journal_apply (s, &part, changes, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED);
  /* What was written is put back, and the journal forgets it all. */
  g_autofree char *a = get (f, "a");
  g_assert_cmpstr (a, ==, "1");
  g_assert_true (lm_state_is_empty (s));
  g_autofree char *file = g_build_filename (f->root, "state", NULL);
  g_assert_false (g_file_test (file, G_FILE_TEST_EXISTS));
}

static void
test_side_effect_recorded (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) s = new_state (f);
  g_autoptr (GPtrArray) changes = lm_journal_changes_new ();

  put (f, "a", "1");
  put (f, "side", "7");
  add (changes, "a", "1", "10");
  add (changes, "side", "7", NULL);
  part.mode = LM_JOURNAL_ALL_OR_NOTHING;
  g_assert_true (lm_journal_apply (s, &part, changes, NULL, NULL, NULL));
  g_autofree char *a = get (f, "a");
  g_autofree char *applied = lm_journal_applied (s, PART, "a");
  g_autofree char *side = lm_journal_applied (s, PART, "side");
  g_autofree char *side_original = lm_journal_original (s, PART, "side");
  g_assert_cmpstr (a, ==, "10");
  g_assert_cmpstr (applied, ==, "10");
  g_assert_cmpstr (side, ==, "7"); /* as the system shows it after */
  g_assert_cmpstr (side_original, ==, "7");
}

static void
test_each (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) s = new_state (f);
  g_autoptr (GPtrArray) changes = lm_journal_changes_new ();
  g_autoptr (GString) failures = g_string_new (NULL);

  put (f, "a", "1");
  put (f, "refuse_b", "2");
  add (changes, "a", "1", "10");
  add (changes, "refuse_b", "2", "20");
  part.mode = LM_JOURNAL_EACH;
  g_assert_true (lm_journal_apply (s, &part, changes, NULL, failures, NULL));
  g_assert_cmpstr (failures->str, ==, "refuse_b: refused");
  g_autofree char *a = lm_journal_original (s, PART, "a");
  g_autofree char *b = lm_journal_original (s, PART, "refuse_b");
  g_assert_cmpstr (a, ==, "1");
  g_assert_null (b); /* refused: never changed, nothing to restore */

  /* EACH_KEPT: the original stays, sent back at restore anyway. */
  g_string_truncate (failures, 0);
  part.mode = LM_JOURNAL_EACH_KEPT;
  g_assert_true (lm_journal_apply (s, &part, changes, NULL, failures, NULL));
  g_autofree char *kept = lm_journal_original (s, PART, "refuse_b");
  g_assert_cmpstr (kept, ==, "2");
}

static void
test_restore_verdicts (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) s = new_state (f);
  g_autoptr (GPtrArray) changes = lm_journal_changes_new ();
  g_autoptr (GError) error = NULL;

  put (f, "ours", "1");
  put (f, "theirs", "2");
  put (f, "back", "3");
  add (changes, "ours", "1", "10");
  add (changes, "theirs", "2", "20");
  add (changes, "back", "3", "30");
  part.mode = LM_JOURNAL_ALL_OR_NOTHING;
  g_assert_true (lm_journal_apply (s, &part, changes, NULL, NULL, NULL));
  put (f, "theirs", "99"); /* someone else's now */
  put (f, "back", "3");    /* already the original */

  /* After a crash: what a new daemon reads from the file. */
  g_autofree char *path = g_build_filename (f->root, "state", NULL);
  g_autoptr (LmState) again = lm_state_new (path);
  g_assert_true (lm_state_load (again, NULL));
  g_assert_true (lm_journal_restore (again, &part, NULL, &error));
  g_assert_no_error (error);
  g_autofree char *ours = get (f, "ours");
  g_autofree char *theirs = get (f, "theirs");
  g_assert_cmpstr (ours, ==, "1");
  g_assert_cmpstr (theirs, ==, "99");
  g_assert_true (lm_state_is_empty (again));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_restore_keeps_failed (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) s = new_state (f);
  g_autoptr (GError) error = NULL;

  put (f, "refuse_x", "20");
  lm_journal_remember (s, PART, "refuse_x", "2");
  lm_journal_mark (s, PART, "refuse_x", "20");
  part.keep_failed = TRUE;
  g_assert_false (lm_journal_restore (s, &part, NULL, &error));
  g_assert_nonnull (strstr (error->message, "Could not restore every knob"));
  g_assert_true (lm_journal_has_pending (s, PART)); /* tried again next time */
  g_clear_error (&error);
  part.keep_failed = FALSE;
  g_assert_false (lm_journal_restore (s, &part, NULL, &error));
  g_assert_false (lm_journal_has_pending (s, PART));
}

/* --- whole operations: someone else's values, drops, recovery ------------- */

/* A value someone else wrote since it was applied, at the next apply: as
 * the part's rule says, and a drop forgets its entry. */
static void
test_theirs_and_drop (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) s = new_state (f);
  g_autoptr (GPtrArray) first = lm_journal_changes_new ();
  g_autoptr (GPtrArray) again = lm_journal_changes_new ();
  g_autoptr (GPtrArray) drop = lm_journal_changes_new ();
  LmJournalPart p = part;

  p.mode = LM_JOURNAL_ALL_OR_NOTHING;
  p.theirs = LM_JOURNAL_LEAVE_CHANGED;
  put (f, "changed", "1");
  put (f, "back", "2");
  add (first, "changed", "1", "10");
  add (first, "back", "2", "20");
  g_assert_true (lm_journal_apply (s, &p, first, NULL, NULL, NULL));
  put (f, "changed", "99"); /* theirs: left */
  put (f, "back", "2");     /* the original again: ours to set */
  add (again, "changed", "99", "10");
  add (again, "back", "2", "20");
  g_assert_true (lm_journal_apply (s, &p, again, NULL, NULL, NULL));
  g_assert_cmpuint (again->len, ==, 1); /* taken out of the list */
  g_autofree char *changed = get (f, "changed");
  g_autofree char *back = get (f, "back");
  g_assert_cmpstr (changed, ==, "99");
  g_assert_cmpstr (back, ==, "20");

  /* Sysfs's rule: even put back to the original, theirs. */
  p.theirs = LM_JOURNAL_LEAVE_ANY;
  put (f, "back", "2");
  g_ptr_array_set_size (again, 0);
  add (again, "back", "2", "20");
  g_assert_true (lm_journal_apply (s, &p, again, NULL, NULL, NULL));
  g_autofree char *left = get (f, "back");
  g_assert_cmpstr (left, ==, "2");

  /* A drop: the entry forgotten, nothing written. */
  g_ptr_array_add (drop, lm_journal_change_new ("changed", NULL, NULL));
  ((LmJournalChange *) g_ptr_array_index (drop, 0))->drop = TRUE;
  g_assert_true (lm_journal_apply (s, &p, drop, NULL, NULL, NULL));
  g_autoptr (GPtrArray) entries = lm_journal_entries (s, &p);
  g_assert_cmpuint (entries->len, ==, 1);
  g_assert_cmpstr (((LmJournalEntry *) g_ptr_array_index (entries, 0))->key, ==, "back");
}

/* A drop stays done when a refused write undoes the transaction it came
 * with: the entry is someone else's whatever this apply's fate. */
static void
test_drop_survives_undo (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) s = new_state (f);
  g_autoptr (GPtrArray) first = lm_journal_changes_new ();
  g_autoptr (GPtrArray) again = lm_journal_changes_new ();
  LmJournalPart p = part;

  p.mode = LM_JOURNAL_ALL_OR_NOTHING;
  put (f, "theirs", "1");
  put (f, "refuse_c", "3");
  add (first, "theirs", "1", "10");
  g_assert_true (lm_journal_apply (s, &p, first, NULL, NULL, NULL));
  g_ptr_array_add (again, lm_journal_change_new ("theirs", NULL, NULL));
  ((LmJournalChange *) g_ptr_array_index (again, 0))->drop = TRUE;
  add (again, "refuse_c", "3", "30");
  g_assert_false (lm_journal_apply (s, &p, again, NULL, NULL, NULL));
  g_autoptr (GPtrArray) entries = lm_journal_entries (s, &p);
  g_assert_cmpuint (entries->len, ==, 0);
  g_assert_false (lm_journal_saved (s, &p));
}

/* A change journaled but never made (its write failed): dropped, nothing
 * is written, not even over a value equal to the one it would have set. */
static void
test_drop_part (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) s = new_state (f);
  g_autoptr (LmJournalChange) c = lm_journal_change_new ("x", "0", "1");

  put (f, "x", "0");
  g_assert_true (lm_journal_record (s, &part, c, NULL));
  g_assert_true (lm_journal_saved (s, &part));
  put (f, "x", "1"); /* someone else's, after our write failed */
  lm_journal_drop (s, &part);
  g_assert_false (lm_journal_saved (s, &part));
  g_assert_true (lm_journal_restore (s, &part, NULL, NULL));
  g_autofree char *x = get (f, "x");
  g_assert_cmpstr (x, ==, "1");
}

static gboolean
restore_all_but_kept (GPtrArray *entries, gpointer data, GString *failures, GError **error)
{
  for (guint i = 0; i < entries->len; i++)
    {
      LmJournalEntry *e = g_ptr_array_index (entries, i);
      e->done = !g_str_equal (e->key, "kept");
    }
  return TRUE;
}

static gboolean
recover_counted (gconstpointer owner, gpointer context, GError **error)
{
  (*(guint *) context)++;
  return TRUE;
}

/* Two parts in one group, each its own keys; a part that restores all at
 * once; one registry, one loop, a part added twice kept once. */
static void
test_recovery (LmFakeRoot *f, gconstpointer data)
{
  static const char *const own_keys[] = { "a", NULL };
  static const char *const other_keys[] = { "kept", "gone", NULL };
  g_autoptr (LmState) s = new_state (f);
  g_autoptr (GPtrArray) changes = lm_journal_changes_new ();
  g_autoptr (LmJournalRecovery) recovery = lm_journal_recovery_new ();
  LmJournalPart own = part;
  LmJournalPart other = { .part = PART, .what = "other", .keys = other_keys };
  LmJournalPart empty = { .part = "Empty", .what = "empty" };
  guint counted = 0;

  own.mode = LM_JOURNAL_ALL_OR_NOTHING;
  own.keys = own_keys;
  other.restore_all = restore_all_but_kept;
  put (f, "a", "1");
  add (changes, "a", "1", "10");
  g_assert_true (lm_journal_apply (s, &own, changes, NULL, NULL, NULL));
  {
    g_autoptr (LmJournalChange) kept = lm_journal_change_new ("kept", "k", NULL);
    g_autoptr (LmJournalChange) gone = lm_journal_change_new ("gone", "g", NULL);
    g_assert_true (lm_journal_record (s, &other, kept, NULL));
    g_assert_true (lm_journal_record (s, &other, gone, NULL));
  }
  g_autoptr (GPtrArray) mine = lm_journal_entries (s, &own);
  g_assert_cmpuint (mine->len, ==, 1);

  /* After a crash: a new daemon, the file as it was. */
  g_autofree char *path = g_build_filename (f->root, "state", NULL);
  g_autoptr (LmState) next = lm_state_new (path);
  g_assert_true (lm_state_load (next, NULL));
  lm_journal_recovery_add (recovery, &own, "own", NULL, NULL);
  lm_journal_recovery_add (recovery, &other, "other", NULL, NULL);
  lm_journal_recovery_add (recovery, &empty, "empty", recover_counted, NULL);
  lm_journal_recovery_add (recovery, &own, "own again", recover_counted, NULL);
  g_assert_true (lm_journal_recovery_saved (recovery, next));
  lm_journal_recovery_run (recovery, next, &counted);
  g_assert_cmpuint (counted, ==, 0); /* nothing of "empty"; "own" once, by the journal */
  g_autofree char *a = get (f, "a");
  g_assert_cmpstr (a, ==, "1");
  g_assert_false (lm_journal_saved (next, &own));
  g_autoptr (GPtrArray) left = lm_journal_entries (next, &other);
  g_assert_cmpuint (left->len, ==, 1);
  g_assert_cmpstr (((LmJournalEntry *) g_ptr_array_index (left, 0))->key, ==, "kept");
}

/* --- a participant is one row --------------------------------------------- */

static gboolean
row_apply (const LmSystem *sys, const LmSettings *settings, LmEngine engine, GError **error)
{
  g_autoptr (GPtrArray) changes = lm_journal_changes_new ();
  g_autofree char *now = read_knob ("row", NULL, NULL);

  add (changes, "row", now, "on");
  part.mode = LM_JOURNAL_ALL_OR_NOTHING;
  return lm_journal_apply (sys->state, &part, changes, NULL, NULL, error);
}

static gboolean
row_restore (const LmSystem *sys, GError **error)
{
  return lm_journal_restore (sys->state, &part, NULL, error);
}

static const LmParticipant row = {
  .name = "knobs",
  .apply = row_apply,
  .restore = row_restore,
  .journal = &part,
};

static void
test_one_row (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) s = new_state (f);
  g_autoptr (LmConflicts) conflicts = lm_conflicts_new ();
  LmSystem sys = { s, NULL, NULL };
  const LmParticipant *last = NULL;

  lm_participants_add (&row);
  for (guint i = 0; lm_participants_get (i) != NULL; i++)
    last = lm_participants_get (i);
  g_assert_true (last == &row); /* after the daemon's own */

  put (f, "row", "off");
  g_assert_true (last->apply (&sys, NULL, LM_ENGINE_NONE, NULL));
  g_assert_true (lm_journal_saved (s, last->journal));
  g_assert_false (lm_conflicts_check (conflicts, s));
  put (f, "row", "theirs");
  /* Listed through the row's reader, no table elsewhere. */
  g_assert_true (lm_conflicts_check (conflicts, s));
  g_autoptr (GVariant) v = lm_conflicts_to_variant (conflicts);
  const char *what, *expected, *found;
  gint64 when;
  g_variant_get_child (v, 0, "(&sx&s&s)", &what, &when, &expected, &found);
  g_assert_cmpstr (what, ==, "knob.row");
  g_assert_cmpstr (expected, ==, "on");
  g_assert_cmpstr (found, ==, "theirs");
  /* Nobody watched the write, no power tool under the root: unknown. */
  g_autoptr (GVariant) writers = lm_conflicts_writers_to_variant (conflicts);
  const char *by = NULL;
  g_assert_true (g_variant_lookup (writers, "knob.row", "&s", &by));
  g_assert_cmpstr (by, ==, "unknown");

  put (f, "row", "on");
  g_assert_true (last->restore (&sys, NULL));
  g_autofree char *back = get (f, "row");
  g_assert_cmpstr (back, ==, "off");
  g_assert_false (lm_journal_saved (s, last->journal));
}

static char *
fake_writer (const char *up, const char *dir, const char *name)
{
  return g_str_equal (up, "sys") && g_str_equal (dir, "knob") && g_str_equal (name, "row")
             ? g_strdup ("tlp[77]")
             : NULL;
}

/* Who: the writer func's answer by the file's directory and name, else the
 * power tools installed under the root; what names which file. */
static void
test_conflict_writers (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) s = new_state (f);
  g_autoptr (LmConflicts) conflicts = lm_conflicts_new ();
  LmSystem sys = { s, NULL, NULL };
  const char *by = NULL;
  gboolean added = FALSE;

  for (guint i = 0; lm_participants_get (i) != NULL; i++)
    added |= lm_participants_get (i) == &row;
  if (!added)
    lm_participants_add (&row);
  lm_conflicts_set_writer_func (conflicts, fake_writer);
  put (f, "row", "off");
  g_assert_true (row.apply (&sys, NULL, LM_ENGINE_NONE, NULL));
  put (f, "row", "theirs");
  g_assert_true (lm_conflicts_check (conflicts, s));
  g_autoptr (GVariant) writers = lm_conflicts_writers_to_variant (conflicts);
  g_assert_true (g_variant_lookup (writers, "knob.row", "&s", &by));
  g_assert_cmpstr (by, ==, "tlp[77]");
  put (f, "row", "on");
  g_assert_true (row.restore (&sys, NULL));

  g_autofree char *none = lm_conflicts_power_tools ();
  g_assert_null (none);
  for (const char *const *p
       = (const char *const[]){ "usr/sbin/tlp", "usr/sbin/tuned", "usr/bin/system76-power", NULL };
       *p != NULL; p++)
    {
      g_autofree char *path = g_build_filename (lm_root (), *p, NULL);
      g_autofree char *dir = g_path_get_dirname (path);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      g_assert_true (g_file_set_contents (path, "", 0, NULL));
    }
  g_autofree char *tools = lm_conflicts_power_tools ();
  g_assert_cmpstr (tools, ==, "TLP, tuned and system76-power");

  /* A sysfs path that is not there is taken as written. */
  const char *const cases[][4] = {
    { "vm.dirty_expire_centisecs", "sys", "vm", "dirty_expire_centisecs" },
    { "kernel.nmi_watchdog", "sys", "kernel", "nmi_watchdog" },
    { "net.ipv4.tcp_x", "net", "ipv4", "tcp_x" },
    { "/sys/devices/pci0000:00/0000:00:99.0/power/control", "0000:00:99.0", "power", "control" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *up = NULL, *dir = NULL, *name = NULL;
      g_assert_true (lm_conflicts_file_of (cases[i][0], &up, &dir, &name));
      g_assert_cmpstr (up, ==, cases[i][1]);
      g_assert_cmpstr (dir, ==, cases[i][2]);
      g_assert_cmpstr (name, ==, cases[i][3]);
    }
  for (const char *const *bad = (const char *const[]){ "", "novalue", ".x", "x.", "a..b", NULL };
       *bad != NULL; bad++)
    {
      g_autofree char *up = NULL, *dir = NULL, *name = NULL;
      g_assert_false (lm_conflicts_file_of (*bad, &up, &dir, &name));
      g_assert_null (dir);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define lm_test_add(path, fn)                                                                      \
  g_test_add (path, LmFakeRoot, NULL, lm_fake_root_setup, fn, lm_fake_root_teardown)
  lm_test_add ("/journal-apply/all-or-nothing", test_all_or_nothing);
  lm_test_add ("/journal-apply/side-effect-recorded", test_side_effect_recorded);
  lm_test_add ("/journal-apply/each", test_each);
  lm_test_add ("/journal-apply/restore-verdicts", test_restore_verdicts);
  lm_test_add ("/journal-apply/restore-keeps-failed", test_restore_keeps_failed);
  lm_test_add ("/journal-apply/theirs-and-drop", test_theirs_and_drop);
  lm_test_add ("/journal-apply/drop-survives-undo", test_drop_survives_undo);
  lm_test_add ("/journal-apply/drop-part", test_drop_part);
  lm_test_add ("/journal-apply/recovery", test_recovery);
  lm_test_add ("/journal-apply/one-row", test_one_row);
  lm_test_add ("/journal-apply/conflict-writers", test_conflict_writers);
  return g_test_run ();
}
