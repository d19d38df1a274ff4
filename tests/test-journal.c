/* test-journal.c: the restore journal: remember once, mark, check, forget,
 * any bytes as keys, and what the file holds after a crash between steps. */
#include <sys/stat.h>
#include <unistd.h>

#include "lm-journal-private.h"
#include "test-fakeroot.h"

static char *
state_path (LmFakeRoot *f)
{
  return g_build_filename (f->root, "var/lib/laptop-moded/state", NULL);
}

/* What a daemon started after a crash would find. */
static LmState *
reload (LmFakeRoot *f)
{
  g_autofree char *path = state_path (f);
  LmState *s = lm_state_new (path);
  g_assert_true (lm_state_load (s, NULL));
  return s;
}

static void
test_remember_once (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = state_path (f);
  g_autoptr (LmState) s = lm_state_new (path);

  lm_journal_remember (s, "Tunables", "dirty_ratio", "20");
  lm_journal_mark (s, "Tunables", "dirty_ratio", "40");
  /* A second apply reads our own value back: the first original stays. */
  lm_journal_remember (s, "Tunables", "dirty_ratio", "40");
  g_autofree char *orig = lm_journal_original (s, "Tunables", "dirty_ratio");
  g_autofree char *applied = lm_journal_applied (s, "Tunables", "dirty_ratio");
  g_assert_cmpstr (orig, ==, "20");
  g_assert_cmpstr (applied, ==, "40");
  g_assert_true (lm_journal_has_pending (s, "Tunables"));
  g_assert_false (lm_journal_has_pending (s, "Disks"));

  /* Same groups as before the journal: old state files still restore. */
  g_autofree char *raw = lm_state_get (s, "Tunables", "dirty_ratio");
  g_autofree char *raw_applied = lm_state_get (s, "TunablesApplied", "dirty_ratio");
  g_assert_cmpstr (raw, ==, "20");
  g_assert_cmpstr (raw_applied, ==, "40");

  lm_journal_forget (s, "Tunables", "dirty_ratio");
  g_assert_false (lm_journal_has_pending (s, "Tunables"));
  g_assert_true (lm_state_is_empty (s));
}

static void
test_check (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = state_path (f);
  g_autoptr (LmState) s = lm_state_new (path);

  lm_journal_remember (s, "P", "k", "orig");
  g_assert_cmpint (lm_journal_check (s, "P", "k", "orig"), ==, LM_JOURNAL_AS_ORIGINAL);
  /* Applied not known (a crash before the mark): ours to restore. */
  g_assert_cmpint (lm_journal_check (s, "P", "k", "other"), ==, LM_JOURNAL_OURS);
  lm_journal_mark (s, "P", "k", "ours");
  g_assert_cmpint (lm_journal_check (s, "P", "k", "ours"), ==, LM_JOURNAL_OURS);
  g_assert_cmpint (lm_journal_check (s, "P", "k", "someone"), ==, LM_JOURNAL_CHANGED);
  g_assert_cmpint (lm_journal_check (s, "P", "k", "orig"), ==, LM_JOURNAL_AS_ORIGINAL);
}

/* Keys a GKeyFile cannot take as they are (a disk id with '=', a mount
 * point with brackets, newlines, spaces, bytes that are not UTF-8) and
 * values that are not UTF-8 survive a save and a load. */
static void
test_any_bytes (LmFakeRoot *f, gconstpointer data)
{
  static const char *const keys[] = {
    "ata-WDC=1",
    "[Group]",
    "/mnt/with space",
    "/mnt/new\nline",
    "/mnt/\xff\xfe",
    "a%41b",
    " lead",
    "trail ",
    "#comment",
    "x\\y",
    "=",
    "%",
    "%zz",
    NULL,
  };
  g_autofree char *path = state_path (f);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (GError) error = NULL;

  for (guint i = 0; keys[i] != NULL; i++)
    {
      g_autofree char *value = g_strdup_printf ("v%u \xff%%\n\t", i);
      lm_journal_remember (s, "Mounts", keys[i], value);
    }
  g_assert_true (lm_state_save (s, &error));
  g_assert_no_error (error);

  g_autoptr (LmState) back = reload (f);
  g_auto (GStrv) pending = lm_journal_pending (back, "Mounts");
  g_assert_cmpuint (g_strv_length (pending), ==, g_strv_length ((GStrv) keys));
  for (guint i = 0; keys[i] != NULL; i++)
    {
      g_autofree char *expect = g_strdup_printf ("v%u \xff%%\n\t", i);
      g_autofree char *value = lm_journal_original (back, "Mounts", keys[i]);
      g_assert_true (g_strv_contains ((const char *const *) pending, keys[i]));
      g_assert_cmpstr (value, ==, expect);
    }
}

/* Crash between any two steps of an apply: before the commit the file holds
 * nothing of it (nothing was changed yet); after the commit it holds the
 * original (restore puts it back); after an undo, nothing again. */
static void
test_crash_between_steps (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = state_path (f);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (GError) error = NULL;

  {
    g_autoptr (LmJournalTx) tx = lm_journal_begin (s);
    lm_journal_remember (s, "Tunables", "dirty_ratio", "20");
    g_autoptr (LmState) crash1 = reload (f);
    g_assert_true (lm_state_is_empty (crash1));

    lm_journal_mark (s, "Tunables", "dirty_ratio", "40");
    g_assert_true (lm_journal_commit (tx, &error));
    g_assert_no_error (error);
    g_autoptr (LmState) crash2 = reload (f);
    g_autofree char *o = lm_journal_original (crash2, "Tunables", "dirty_ratio");
    g_autofree char *a = lm_journal_applied (crash2, "Tunables", "dirty_ratio");
    g_assert_cmpstr (o, ==, "20");
    g_assert_cmpstr (a, ==, "40");

    /* The kernel refused the write: undo, in memory and on disk. */
    lm_journal_undo (tx);
    g_assert_true (lm_state_is_empty (s));
    g_autoptr (LmState) crash3 = reload (f);
    g_assert_true (lm_state_is_empty (crash3));
    g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  }

  /* A transaction dropped before its commit leaves memory as it was. */
  lm_journal_remember (s, "Disks", "sda", "254");
  g_assert_true (lm_state_save (s, NULL));
  {
    g_autoptr (LmJournalTx) tx = lm_journal_begin (s);
    lm_journal_remember (s, "Disks", "sdb", "128");
  }
  g_auto (GStrv) disks = lm_journal_pending (s, "Disks");
  g_assert_cmpuint (g_strv_length (disks), ==, 1);
  g_assert_cmpstr (disks[0], ==, "sda");
}

/* A commit that cannot be made durable changes nothing, in memory either. */
static void
test_commit_fails (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *dir = g_build_filename (f->root, "ro", NULL);
  g_autofree char *path = g_build_filename (dir, "state", NULL);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (GError) error = NULL;

  if (geteuid () == 0)
    {
      /* root writes anywhere: make the path a directory instead. */
      g_assert_cmpint (g_mkdir_with_parents (path, 0700), ==, 0);
      g_autofree char *inner = g_build_filename (path, "x", NULL);
      g_assert_true (g_file_set_contents (inner, "", 0, NULL));
    }
  else
    g_assert_cmpint (g_mkdir_with_parents (dir, 0500), ==, 0);

  g_autoptr (LmJournalTx) tx = lm_journal_begin (s);
  lm_journal_remember (s, "Tunables", "dirty_ratio", "20");
  g_assert_false (lm_journal_commit (tx, &error));
  g_assert_nonnull (error);
  g_assert_false (lm_journal_has_pending (s, "Tunables"));
}

/* The rule on derived values (a remount's commit=): NULL is a value there,
 * "no commit= at all", and whether each side is known is said apart. */
static void
test_verdict_known (void)
{
  /* Neither known: ours, whatever is there. */
  g_assert_cmpint (lm_journal_verdict_known (FALSE, NULL, FALSE, NULL, "600"), ==, LM_JOURNAL_OURS);
  /* The original had no commit=, and none is there now: as the original. */
  g_assert_cmpint (lm_journal_verdict_known (TRUE, NULL, TRUE, "600", NULL), ==,
                   LM_JOURNAL_AS_ORIGINAL);
  /* Ours is there. */
  g_assert_cmpint (lm_journal_verdict_known (TRUE, NULL, TRUE, "600", "600"), ==, LM_JOURNAL_OURS);
  /* Someone set another value, or took ours away (the original had one). */
  g_assert_cmpint (lm_journal_verdict_known (TRUE, NULL, TRUE, "600", "30"), ==,
                   LM_JOURNAL_CHANGED);
  g_assert_cmpint (lm_journal_verdict_known (TRUE, "5", TRUE, "600", NULL), ==, LM_JOURNAL_CHANGED);
  /* The applied value not known: never judged changed. */
  g_assert_cmpint (lm_journal_verdict_known (TRUE, "5", FALSE, NULL, "30"), ==, LM_JOURNAL_OURS);
  /* lm_journal_verdict: NULL means not known. */
  g_assert_cmpint (lm_journal_verdict (NULL, "40", "20"), ==, LM_JOURNAL_CHANGED);
  g_assert_cmpint (lm_journal_verdict ("20", NULL, "40"), ==, LM_JOURNAL_OURS);
  g_assert_cmpint (lm_journal_verdict ("20", "40", "20"), ==, LM_JOURNAL_AS_ORIGINAL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define lm_test_add(path, fn)                                                                      \
  g_test_add (path, LmFakeRoot, NULL, lm_fake_root_setup, fn, lm_fake_root_teardown)
  lm_test_add ("/journal/remember-once", test_remember_once);
  lm_test_add ("/journal/check", test_check);
  lm_test_add ("/journal/any-bytes", test_any_bytes);
  lm_test_add ("/journal/crash-between-steps", test_crash_between_steps);
  lm_test_add ("/journal/commit-fails", test_commit_fails);
  g_test_add_func ("/journal/verdict-known", test_verdict_known);
  return g_test_run ();
}
