/* test-ledger-wait.c: the ledger never wakes the disk under its state
 * directory: records wait while it sleeps, also past MaxLostWork, and are
 * written (and reach it) when it wakes for someone else, before suspend and
 * at Stop; a month-old ledger compacts once a day, not at every write;
 * LedgerSummary says since when records wait. */
#include "config.h"

#include <glib/gstdio.h>
#include <sys/stat.h>

#include "lm-ledger.h"

static const gint64 day = (gint64) 24 * 3600 * G_USEC_PER_SEC;

static LmLedgerRecord
spinup (const char *disk, gint64 t)
{
  LmLedgerRecord r = {
    .kind = LM_LEDGER_SPINUP, .time_us = t, .end_us = t, .pid = 1, .uid = 0, .via = LM_VIA_WRITEBACK
  };

  g_strlcpy (r.disk, disk, sizeof r.disk);
  g_strlcpy (r.comm, "cron", sizeof r.comm);
  return r;
}

static char *
temp_ledger (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("lm-ledger-wait-XXXXXX", &error);

  g_assert_no_error (error);
  return g_build_filename (dir, "ledger", NULL);
}

static void
remove_ledger (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_unlink (path);
  g_rmdir (dir);
}

static gsize
file_size (const char *path)
{
  GStatBuf st;

  return g_stat (path, &st) == 0 ? (gsize) st.st_size : 0;
}

static ino_t
file_ino (const char *path)
{
  GStatBuf st;

  g_assert_cmpint (g_stat (path, &st), ==, 0);
  return st.st_ino;
}

static gboolean
quit_loop (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

/* Runs the main loop for @ms: the ledger's MaxLostWork timer fires in it. */
static void
run_for (guint ms)
{
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);

  g_timeout_add (ms, quit_loop, loop);
  g_main_loop_run (loop);
}

static gint64
unwritten_since (LmLedger *ledger, const char *disk)
{
  g_autoptr (GVariant) summary = g_variant_ref_sink (lm_ledger_summary (ledger, NULL, 600, 2));
  g_autoptr (GVariant) entry = g_variant_lookup_value (summary, disk, G_VARIANT_TYPE_VARDICT);
  guint64 since = 0;

  if (entry != NULL)
    g_variant_lookup (entry, "UnwrittenSince", "t", &since);
  return (gint64) since;
}

/* The state disk asleep: MaxLostWork (1 s here) passes three times and
 * nothing is written; its wake for someone else writes everything. */
static void
test_sleeping_disk_not_woken (void)
{
  g_autofree char *path = temp_ledger ();
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
  gint64 now = g_get_real_time ();

  lm_ledger_set_state_disk (ledger, "sda");
  lm_ledger_set_deferring (ledger, TRUE, 1);
  lm_ledger_note_power ("sda", TRUE, now, ledger); /* the awake interval: a record */
  g_assert_true (lm_ledger_state_disk_asleep (ledger));
  LmLedgerRecord r = spinup ("sdb", now);
  lm_ledger_append (ledger, &r);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 2);
  g_assert_cmpint (unwritten_since (ledger, "sda"), >=, now);
  run_for (3500);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 2);
  g_assert_cmpuint (file_size (path), ==, 0);
  /* GetLedger shows them meanwhile. */
  g_autoptr (GVariant) q = lm_ledger_query (ledger, 0, G_MAXINT64, 10);
  g_assert_cmpuint (g_variant_n_children (q), ==, 2);
  /* sda woken by someone else: written at once, in that spin-up. */
  lm_ledger_note_power ("sda", FALSE, 0, ledger);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 0);
  g_assert_cmpuint (file_size (path), >, 0);
  g_assert_cmpint (unwritten_since (ledger, "sda"), ==, 0);
  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

/* A state disk that stayed awake (busy) has its records written when
 * MaxLostWork passes, as before. */
static void
test_awake_disk_written_after_max_lost_work (void)
{
  g_autofree char *path = temp_ledger ();
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
  gint64 now = g_get_real_time ();

  lm_ledger_set_state_disk (ledger, "sda");
  lm_ledger_set_deferring (ledger, TRUE, 1);
  lm_ledger_note_power ("sda", FALSE, now, ledger);
  g_assert_false (lm_ledger_state_disk_asleep (ledger));
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 0); /* written: it is awake */
  gsize before = file_size (path);
  LmLedgerRecord r = spinup ("sdb", now);
  lm_ledger_append (ledger, &r);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 1);
  run_for (2500);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 0);
  g_assert_cmpuint (file_size (path), >, before);
  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

/* Before suspend, and at Stop (laptop mode off), what waited is written
 * though the disk sleeps. */
static void
test_written_before_suspend_and_at_stop (void)
{
  g_autofree char *path = temp_ledger ();
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
  gint64 now = g_get_real_time ();

  lm_ledger_set_state_disk (ledger, "sda");
  lm_ledger_set_deferring (ledger, TRUE, 600);
  lm_ledger_note_power ("sda", TRUE, now, ledger);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 1);
  lm_ledger_note_sleep (ledger, TRUE);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 0);
  gsize suspended = file_size (path);
  g_assert_cmpuint (suspended, >, 0);
  lm_ledger_note_sleep (ledger, FALSE);
  LmLedgerRecord r = spinup ("sdb", now + 1);
  lm_ledger_append (ledger, &r);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 1);
  g_assert_cmpuint (file_size (path), ==, suspended);
  lm_ledger_set_deferring (ledger, FALSE, 600);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 0);
  g_assert_cmpuint (file_size (path), >, suspended);
  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

/* The pending cap bounds memory: the 4096th record forces the write. */
static void
test_cap_forces_write (void)
{
  g_autofree char *path = temp_ledger ();
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
  gint64 now = g_get_real_time ();

  lm_ledger_set_state_disk (ledger, "sda");
  lm_ledger_set_deferring (ledger, TRUE, 600);
  lm_ledger_note_power ("sda", TRUE, now, ledger);
  for (guint i = 1; i < LM_LEDGER_MAX_PENDING - 1; i++)
    {
      LmLedgerRecord r = spinup ("sdb", now + i);
      lm_ledger_append (ledger, &r);
    }
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, LM_LEDGER_MAX_PENDING - 1);
  g_assert_cmpuint (file_size (path), ==, 0);
  LmLedgerRecord r = spinup ("sdb", now + LM_LEDGER_MAX_PENDING);
  lm_ledger_append (ledger, &r);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 0);
  g_assert_cmpuint (file_size (path), >, 0);
  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

/* A ledger a month old compacts when its oldest record is a day past the
 * 30 days, dropping what ended before them: the next writes append, they
 * do not replace the file (and fsync it) each time. */
static void
test_month_old_compacts_once_a_day (void)
{
  g_autofree char *path = temp_ledger ();
  gint64 now = g_get_real_time ();
  g_autoptr (GByteArray) file = g_byte_array_new ();

  /* Two records a day, from 32 days ago. */
  for (int i = 0; i < 64; i++)
    {
      LmLedgerRecord r = spinup ("sdb", now - 32 * day + i * (day / 2));
      lm_ledger_record_encode (&r, file);
    }
  g_autofree char *dir = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, (const char *) file->data, file->len, NULL));
  g_assert_cmpint (g_chmod (path, 0600), ==, 0);
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
  ino_t loaded = file_ino (path); /* loading rewrites nothing */

  LmLedgerRecord r = spinup ("sdb", now);
  lm_ledger_append (ledger, &r); /* laptop mode off: written at once */
  ino_t compacted = file_ino (path);
  g_assert_true (compacted != loaded);
  g_autoptr (GVariant) all = lm_ledger_query (ledger, 0, G_MAXINT64, 1000);
  /* 30 days of two a day (one may sit on the boundary), and the new one. */
  g_assert_cmpuint (g_variant_n_children (all), >=, 60);
  g_assert_cmpuint (g_variant_n_children (all), <=, 62);
  for (int i = 1; i <= 20; i++)
    {
      r = spinup ("sdb", now + i);
      lm_ledger_append (ledger, &r);
    }
  g_assert_true (file_ino (path) == compacted);
  g_autoptr (GVariant) again = lm_ledger_query (ledger, 0, G_MAXINT64, 1000);
  g_assert_cmpuint (g_variant_n_children (again), ==, g_variant_n_children (all) + 20);
  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

static void
publish_summary (gpointer user_data)
{
  g_autoptr (GVariant) summary = g_variant_ref_sink (lm_ledger_summary (user_data, NULL, 600, 2));
}

/* The first record left waiting publishes LedgerSummary, which names the
 * state disk; here it arises while the ledger walks its disks (intervals
 * closed before suspend) and the state disk was never noted: the summary
 * must not add to the table being walked (CI at 4d903f2: GLib-CRITICAL,
 * the daemon aborted). */
static void
test_first_waiting_record_inside_a_walk (void)
{
  g_autofree char *path = temp_ledger ();
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
  gint64 now = g_get_real_time ();

  lm_ledger_set_changed_func (ledger, publish_summary, ledger);
  lm_ledger_set_state_disk (ledger, "sda");
  lm_ledger_note_power ("sdb", TRUE, now - 2, ledger);
  lm_ledger_note_power ("sdc", TRUE, now - 1, ledger);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 0); /* laptop mode off: written */
  lm_ledger_set_deferring (ledger, TRUE, 600);
  lm_ledger_note_sleep (ledger, TRUE); /* closes sdb's and sdc's intervals, then writes */
  lm_ledger_note_sleep (ledger, FALSE);
  LmLedgerRecord r = spinup ("sdb", now);
  lm_ledger_append (ledger, &r);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 1);
  /* Said of sda though nothing of sda was noted yet. */
  g_assert_cmpint (unwritten_since (ledger, "sda"), >=, now);
  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL);
  g_test_add_func ("/ledger-wait/sleeping-disk-not-woken", test_sleeping_disk_not_woken);
  g_test_add_func ("/ledger-wait/awake-disk-written-after-max-lost-work",
                   test_awake_disk_written_after_max_lost_work);
  g_test_add_func ("/ledger-wait/written-before-suspend-and-at-stop",
                   test_written_before_suspend_and_at_stop);
  g_test_add_func ("/ledger-wait/cap-forces-write", test_cap_forces_write);
  g_test_add_func ("/ledger-wait/month-old-compacts-once-a-day",
                   test_month_old_compacts_once_a_day);
  g_test_add_func ("/ledger-wait/first-waiting-record-inside-a-walk",
                   test_first_waiting_record_inside_a_walk);
  return g_test_run ();
}
