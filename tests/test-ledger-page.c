/* test-ledger-page.c: GetLedgerPage's index and cursors: every record once
 * across pages (also across compaction and pending writes), a cursor past
 * the end, bogus and stale cursors, limit 0 and over the bound; the budget. */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "lm-budget.h"
#include "lm-error.h"
#include "lm-ledger-dbus.h"
#include "lm-ledger-index.h"
#include "lm-ledger.h"
#include "lm-limits.h"

static LmLedgerRecord
spinup_at (gint64 t, guint32 pid)
{
  LmLedgerRecord r = { .kind = LM_LEDGER_SPINUP, .time_us = t, .end_us = t, .pid = pid, .uid = 0 };

  g_strlcpy (r.disk, "sda", sizeof r.disk);
  g_strlcpy (r.comm, "cat", sizeof r.comm);
  return r;
}

static void
count_one (const guint8 *data, gsize size, gpointer user_data)
{
  LmLedgerRecord r;

  g_assert_cmpint (lm_ledger_record_decode (data, size, &r), ==, (gssize) size);
  g_array_append_val (user_data, r.pid);
}

static char *
temp_ledger (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("lm-ledger-page-XXXXXX", &error);

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

/* Every page of @ledger, @limit at a time: the pids in order. */
static GArray *
read_all (LmLedger *ledger, guint limit, guint *pages)
{
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autofree char *cursor = g_strdup ("");

  *pages = 0;
  do
    {
      g_autoptr (GError) error = NULL;
      char *next = NULL;
      guint count = 0;
      g_autoptr (GBytes) bytes
          = lm_ledger_page (ledger, 0, G_MAXINT64, cursor, limit, &next, &count, &error);
      g_assert_no_error (error);
      g_autoptr (GVariant) page = lm_ledger_records_to_variant (bytes);
      g_assert_cmpuint (count, ==, g_variant_n_children (page));
      g_assert_cmpuint (g_variant_n_children (page), <=, limit);
      for (gsize i = 0; i < g_variant_n_children (page); i++)
        {
          g_autoptr (GVariant) rec = g_variant_get_child_value (page, i);
          guint32 pid;
          g_assert_true (g_variant_lookup (rec, "Pid", "u", &pid));
          g_array_append_val (pids, pid);
        }
      g_free (cursor);
      cursor = next;
      (*pages)++;
    }
  while (cursor[0] != '\0');
  return pids;
}

static void
test_pages_cover_all (void)
{
  g_autofree char *path = temp_ledger ();
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
  gint64 now = g_get_real_time ();
  guint pages;

  for (guint i = 1; i <= 2500; i++)
    {
      LmLedgerRecord r = spinup_at (now - 3000 + i, i);
      lm_ledger_append (ledger, &r);
    }
  g_autoptr (GArray) pids = read_all (ledger, LM_LIMIT_LEDGER_PAGE, &pages);
  g_assert_cmpuint (pids->len, ==, 2500);
  g_assert_cmpuint (pages, ==, 3);
  for (guint i = 0; i < pids->len; i++)
    g_assert_cmpuint (g_array_index (pids, guint32, i), ==, i + 1);

  /* A page that ends exactly at the last record is the last: no empty
   * page after it. */
  g_autoptr (GArray) ones = read_all (ledger, 500, &pages);
  g_assert_cmpuint (ones->len, ==, 2500);
  g_assert_cmpuint (pages, ==, 5);

  /* Loaded again from the file: the same records, by one parse. */
  g_clear_pointer (&ledger, lm_ledger_free);
  ledger = lm_ledger_new (path);
  g_autoptr (GArray) again = read_all (ledger, 1000, &pages);
  g_assert_cmpuint (again->len, ==, 2500);
  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

/* Records written between pages come in later pages; compaction keeps the
 * cursor's place (no record twice, none of the kept ones lost). */
static void
test_cursor_across_writes_and_compaction (void)
{
  g_autofree char *path = temp_ledger ();
  g_autoptr (GByteArray) file = g_byte_array_new ();
  g_autofree char *cursor = NULL;
  g_autoptr (GError) error = NULL;
  gint64 now = g_get_real_time ();
  guint32 pid = 0;

  /* A file with 100 records a day past 30 days old, which the next write
   * drops (a compaction), and 100 recent ones. */
  for (guint i = 0; i < 100; i++)
    {
      LmLedgerRecord r = spinup_at (now - LM_LEDGER_MAX_AGE_US - LM_LEDGER_COMPACT_SLACK_US
                                        - (gint64) 3600 * G_USEC_PER_SEC + i,
                                    ++pid);
      lm_ledger_record_encode (&r, file);
    }
  for (guint i = 0; i < 100; i++)
    {
      LmLedgerRecord r = spinup_at (now - 1000 + i, ++pid);
      lm_ledger_record_encode (&r, file);
    }
  g_assert_true (g_file_set_contents (path, (const char *) file->data, file->len, NULL));
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
  guint n_first = 0;
  g_autoptr (GBytes) b_first
      = lm_ledger_page (ledger, 0, G_MAXINT64, "", 150, &cursor, &n_first, &error);
  g_autoptr (GVariant) first = b_first != NULL ? lm_ledger_records_to_variant (b_first) : NULL;
  g_assert_no_error (error);
  g_assert_cmpuint (g_variant_n_children (first), ==, 150);
  g_assert_cmpstr (cursor, !=, "");

  /* Deferred, then written: the pending records are served already. */
  lm_ledger_set_state_disk (ledger, "sdz");
  lm_ledger_set_deferring (ledger, TRUE, 600);
  for (guint i = 0; i < 10; i++)
    {
      LmLedgerRecord r = spinup_at (now + i, ++pid);
      lm_ledger_append (ledger, &r);
    }
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 10);
  /* Written with a compaction: the 100 old records go. */
  lm_ledger_set_deferring (ledger, FALSE, 600);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 0);

  g_autofree char *next = NULL;
  guint n_rest = 0;
  g_autoptr (GBytes) b_rest
      = lm_ledger_page (ledger, 0, G_MAXINT64, cursor, 1000, &next, &n_rest, &error);
  g_autoptr (GVariant) rest = b_rest != NULL ? lm_ledger_records_to_variant (b_rest) : NULL;
  g_assert_no_error (error);
  g_assert_cmpstr (next, ==, "");
  g_assert_cmpuint (g_variant_n_children (rest), ==, 60);
  for (gsize i = 0; i < 60; i++)
    {
      g_autoptr (GVariant) rec = g_variant_get_child_value (rest, i);
      guint32 got;
      g_assert_true (g_variant_lookup (rec, "Pid", "u", &got));
      g_assert_cmpuint (got, ==, 151 + i);
    }
  /* From the start again: the old ones are gone. */
  guint pages;
  g_autoptr (GArray) all = read_all (ledger, 1000, &pages);
  g_assert_cmpuint (all->len, ==, 110);
  g_assert_cmpuint (g_array_index (all, guint32, 0), ==, 101);

  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

static void
test_cursor_edges (void)
{
  g_autofree char *path = temp_ledger ();
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
  g_autofree char *cursor = NULL;
  gint64 now = g_get_real_time ();

  for (guint i = 1; i <= 5; i++)
    {
      LmLedgerRecord r = spinup_at (now + i, i);
      lm_ledger_append (ledger, &r);
    }
  g_autoptr (GError) error = NULL;
  guint n_page = 0;
  g_autoptr (GBytes) b_page
      = lm_ledger_page (ledger, 0, G_MAXINT64, "", 2, &cursor, &n_page, &error);
  g_autoptr (GVariant) page = b_page != NULL ? lm_ledger_records_to_variant (b_page) : NULL;
  g_assert_no_error (error);
  g_assert_cmpuint (g_variant_n_children (page), ==, 2);
  g_assert_true (lm_ledger_dbus_check_page (ledger, cursor, 2, &error));
  g_assert_no_error (error);

  /* Past the end: an empty last page, not an error. */
  const char *dot = strchr (cursor, '.');
  g_assert_nonnull (dot);
  g_autofree char *past = g_strdup_printf ("%.*s.%" G_GUINT64_FORMAT, (int) (dot - cursor), cursor,
                                           (guint64) 1000000);
  g_autofree char *end = NULL;
  guint n_none = 0;
  g_autoptr (GBytes) b_none
      = lm_ledger_page (ledger, 0, G_MAXINT64, past, 10, &end, &n_none, &error);
  g_autoptr (GVariant) none = b_none != NULL ? lm_ledger_records_to_variant (b_none) : NULL;
  g_assert_no_error (error);
  g_assert_cmpuint (g_variant_n_children (none), ==, 0);
  g_assert_cmpstr (end, ==, "");

  /* A range that matches nothing: one empty last page. */
  g_autofree char *end2 = NULL;
  guint n_empty = 0;
  g_autoptr (GBytes) b_empty = lm_ledger_page (ledger, 0, 1, "", 10, &end2, &n_empty, &error);
  g_autoptr (GVariant) empty = b_empty != NULL ? lm_ledger_records_to_variant (b_empty) : NULL;
  g_assert_no_error (error);
  g_assert_cmpuint (g_variant_n_children (empty), ==, 0);
  g_assert_cmpstr (end2, ==, "");

  /* Bogus: not ours in form, sequence 0, overflowing, another epoch. */
  g_autofree char *stale = g_strdup (cursor);
  stale[0] = stale[0] == '0' ? '1' : '0';
  g_autofree char *zero = g_strdup_printf ("%.*s.0", (int) (dot - cursor), cursor);
  g_autofree char *huge
      = g_strdup_printf ("%.*s.99999999999999999999999", (int) (dot - cursor), cursor);
  const char *bogus[] = { "x",           "1",          ".",           "12345678",    "1234567.1",
                          "123456789.1", "zzzzzzzz.1", "00000000.-1", "00000000. 1", "00000000.1x",
                          "\x1b[31m.1",  zero,         huge,          stale };
  for (gsize i = 0; i < G_N_ELEMENTS (bogus); i++)
    {
      g_autoptr (GError) e = NULL;
      g_autofree char *n = NULL;
      g_assert_false (lm_ledger_dbus_check_page (ledger, bogus[i], 10, &e));
      g_assert_error (e, LM_ERROR, LM_ERROR_INVALID_ARGS);
      g_assert_true (strstr (e->message, "cursor") != NULL);
      g_assert_null (strchr (e->message, '\x1b'));
      g_clear_error (&e);
      guint count = 0;
      g_assert_null (lm_ledger_page (ledger, 0, G_MAXINT64, bogus[i], 10, &n, &count, &e));
      g_assert_error (e, LM_ERROR, LM_ERROR_INVALID_ARGS);
    }
  g_autoptr (GError) e = NULL;
  g_assert_false (lm_ledger_dbus_check_page (ledger, stale, 10, &e));
  g_assert_true (strstr (e->message, "stale") != NULL);
  g_clear_error (&e);

  /* Too long, checked by size before its form. */
  g_autofree char *long_cursor = g_strnfill (LM_LIMIT_CURSOR + 1, '1');
  g_assert_false (lm_ledger_dbus_check_page (ledger, long_cursor, 10, &e));
  g_assert_error (e, LM_ERROR, LM_ERROR_INVALID_ARGS);
  g_assert_true (strstr (e->message, "at most 64 bytes") != NULL);
  g_clear_error (&e);

  /* limit 0 and over the bound. */
  g_assert_false (lm_ledger_dbus_check_page (ledger, "", 0, &e));
  g_assert_error (e, LM_ERROR, LM_ERROR_INVALID_ARGS);
  g_assert_true (strstr (e->message, "limit: 1 to 1000") != NULL);
  g_clear_error (&e);
  g_assert_false (lm_ledger_dbus_check_page (ledger, "", LM_LIMIT_LEDGER_PAGE + 1, &e));
  g_assert_error (e, LM_ERROR, LM_ERROR_INVALID_ARGS);
  g_clear_error (&e);
  g_assert_false (lm_ledger_dbus_check_page (ledger, "", G_MAXUINT32, &e));
  g_clear_error (&e);
  g_assert_true (lm_ledger_dbus_check_page (ledger, "", 1, &e));
  g_assert_true (lm_ledger_dbus_check_page (ledger, "", LM_LIMIT_LEDGER_PAGE, &e));
  g_assert_no_error (e);

  /* Another daemon's cursor (a restart) is stale too. */
  g_clear_pointer (&ledger, lm_ledger_free);
  ledger = lm_ledger_new (path);
  g_assert_false (lm_ledger_dbus_check_page (ledger, cursor, 10, &e));
  g_assert_error (e, LM_ERROR, LM_ERROR_INVALID_ARGS);
  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

/* The index alone: limit 0 gives no record and the place of the first;
 * truncation and in-place patches; other bytes at compaction: new epoch. */
static void
test_index (void)
{
  g_autoptr (LmLedgerIndex) index = lm_ledger_index_new ();
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  g_autoptr (GArray) got = g_array_new (FALSE, FALSE, sizeof (guint32));
  guint64 next;
  gsize three = 0;

  for (guint i = 1; i <= 5; i++)
    {
      LmLedgerRecord r = spinup_at (100 * i, i);
      if (i == 4)
        three = bytes->len;
      lm_ledger_record_encode (&r, bytes);
    }
  lm_ledger_index_add (index, bytes->data, bytes->len);
  g_assert_cmpuint (lm_ledger_index_count (index), ==, 5);

  g_assert_cmpuint (
      lm_ledger_index_page (index, 0, G_MAXINT64, 1, 0, NULL, 0, count_one, got, &next), ==, 0);
  g_assert_cmpuint (next, ==, 1);
  /* The span: records overlapping [250, 400]. */
  g_assert_cmpuint (lm_ledger_index_page (index, 250, 400, 1, 10, NULL, 0, count_one, got, &next),
                    ==, 2);
  g_assert_cmpuint (next, ==, 0);
  g_assert_cmpuint (g_array_index (got, guint32, 0), ==, 3);
  g_assert_cmpuint (g_array_index (got, guint32, 1), ==, 4);

  /* Records still growing come after, at positions of their own. */
  LmLedgerRecord open[2] = { spinup_at (600, 6), spinup_at (700, 7) };
  g_array_set_size (got, 0);
  g_assert_cmpuint (
      lm_ledger_index_page (index, 0, G_MAXINT64, 5, 2, open, 2, count_one, got, &next), ==, 2);
  g_assert_cmpuint (g_array_index (got, guint32, 1), ==, 6);
  g_assert_cmpuint (next, ==, 7);
  g_array_set_size (got, 0);
  g_assert_cmpuint (
      lm_ledger_index_page (index, 0, G_MAXINT64, next, 2, open, 2, count_one, got, &next), ==, 1);
  g_assert_cmpuint (g_array_index (got, guint32, 0), ==, 7);
  g_assert_cmpuint (next, ==, 0);

  /* A record filled in place (same size): served as filled. */
  LmLedgerRecord four = spinup_at (400, 44);
  g_autoptr (GByteArray) patch = g_byte_array_new ();
  lm_ledger_record_encode (&four, patch);
  lm_ledger_index_patch (index, three, patch->data, patch->len);
  g_array_set_size (got, 0);
  lm_ledger_index_page (index, 400, 400, 1, 10, NULL, 0, count_one, got, &next);
  g_assert_cmpuint (g_array_index (got, guint32, 0), ==, 44);

  /* Dropped pending records leave the index too. */
  lm_ledger_index_truncate (index, three);
  g_assert_cmpuint (lm_ledger_index_count (index), ==, 3);
  g_assert_cmpuint (lm_ledger_index_bytes (index), ==, three);

  /* Compaction from other bytes than indexed: the epoch moves on. */
  g_autofree char *before = lm_ledger_index_format_cursor (index, 2);
  guint64 seq;
  g_assert_true (lm_ledger_index_parse_cursor (index, before, &seq, NULL));
  gsize kept = 0;
  lm_ledger_index_replace (index, bytes->data, three, bytes->data, bytes->len, &kept, 1);
  g_autoptr (GError) error = NULL;
  g_assert_false (lm_ledger_index_parse_cursor (index, before, &seq, &error));
  g_assert_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS);
}

static void
test_budget (void)
{
  g_autoptr (LmBudget) budget
      = lm_budget_new ("this user", "GetLedger's budget of records", 1000, 60);
  g_autoptr (GError) error = NULL;
  gint64 t = 5 * G_USEC_PER_SEC;

  g_assert_true (lm_budget_check (budget, "1000", t, &error));
  lm_budget_charge (budget, "1000", 600, t);
  g_assert_true (lm_budget_check (budget, "1000", t, &error));
  lm_budget_charge (budget, "1000", 600, t);
  /* Below zero: refused, saying when to come back; others unaffected. */
  g_assert_false (lm_budget_check (budget, "1000", t, &error));
  g_assert_error (error, LM_ERROR, LM_ERROR_LIMIT_EXCEEDED);
  g_assert_true (strstr (error->message, "this user") != NULL);
  g_assert_true (strstr (error->message, "try again in 13 s") != NULL);
  g_clear_error (&error);
  g_assert_true (lm_budget_check (budget, "1001", t, &error));
  /* Refilled evenly: 200 back after 12 s. */
  g_assert_cmpfloat (lm_budget_left (budget, "1000", t + 12 * G_USEC_PER_SEC), >, -1);
  g_assert_true (lm_budget_check (budget, "1000", t + 13 * G_USEC_PER_SEC, &error));
  /* Full again after the whole period: forgotten at the next look. */
  g_assert_cmpuint (lm_budget_size (budget), ==, 1);
  g_assert_true (lm_budget_check (budget, "1000", t + 200 * G_USEC_PER_SEC, &error));
  g_assert_cmpuint (lm_budget_size (budget), ==, 0);
  /* Keys that refilled are swept as others come. */
  for (guint i = 0; i < 1000; i++)
    {
      char key[16];
      g_snprintf (key, sizeof key, ":1.%u", i);
      lm_budget_charge (budget, key, 1, t + (gint64) i * G_USEC_PER_SEC);
    }
  g_assert_cmpuint (lm_budget_size (budget), <=, 257);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ledger-page/pages-cover-all", test_pages_cover_all);
  g_test_add_func ("/ledger-page/cursor-across-writes-and-compaction",
                   test_cursor_across_writes_and_compaction);
  g_test_add_func ("/ledger-page/cursor-edges", test_cursor_edges);
  g_test_add_func ("/ledger-page/index", test_index);
  g_test_add_func ("/ledger-page/budget", test_budget);
  return g_test_run ();
}
