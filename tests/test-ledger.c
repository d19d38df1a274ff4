/* test-ledger.c: the spin-up ledger's records and file: round trip, torn
 * tails, flipped bytes, the size bound over a month and age pruning. */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "lm-ledger.h"

static LmLedgerRecord
spinup_at (gint64 t, const char *comm, const char *path)
{
  LmLedgerRecord r = { .kind = LM_LEDGER_SPINUP,
                       .time_us = t,
                       .end_us = t,
                       .pid = 4242,
                       .uid = 1000,
                       .via = LM_VIA_WRITEBACK,
                       .flushed = 7 };

  g_strlcpy (r.disk, "sda", sizeof r.disk);
  g_strlcpy (r.comm, comm, sizeof r.comm);
  g_strlcpy (r.path, path, sizeof r.path);
  return r;
}

static void
collect (const LmLedgerRecord *r, gsize offset, gsize size, gpointer user_data)
{
  g_array_append_vals (user_data, r, 1);
}

static GArray *
parse (const guint8 *data, gsize length, gsize *skipped)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (LmLedgerRecord));

  lm_ledger_parse (data, length, collect, out, skipped);
  return out;
}

static void
test_crc (void)
{
  /* The standard check value of CRC-32/ISO-HDLC. */
  g_assert_cmphex (lm_ledger_crc32 ((const guint8 *) "123456789", 9), ==, 0xCBF43926);
}

static void
test_round_trip (void)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();
  LmLedgerRecord a = spinup_at (1780000000000000, "firefox", "places.sqlite");
  LmLedgerRecord b = { .kind = LM_LEDGER_ASLEEP, .time_us = 5, .end_us = 900, .uid = -1 };
  LmLedgerRecord c = spinup_at (G_MAXINT64, "0123456789abcde", "");
  gsize skipped = 99;

  g_strlcpy (b.disk, "nvme0n1", sizeof b.disk);
  memset (c.path, 'p', sizeof c.path - 1);
  c.path[sizeof c.path - 1] = '\0';
  lm_ledger_record_encode (&a, buf);
  lm_ledger_record_encode (&b, buf);
  lm_ledger_record_encode (&c, buf);

  g_autoptr (GArray) got = parse (buf->data, buf->len, &skipped);
  g_assert_cmpuint (got->len, ==, 3);
  g_assert_cmpuint (skipped, ==, 0);
  g_assert_true (memcmp (&g_array_index (got, LmLedgerRecord, 0), &a, sizeof a) == 0);
  g_assert_true (memcmp (&g_array_index (got, LmLedgerRecord, 1), &b, sizeof b) == 0);
  g_assert_true (memcmp (&g_array_index (got, LmLedgerRecord, 2), &c, sizeof c) == 0);
}

static void
test_torn_tail (void)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();
  LmLedgerRecord a = spinup_at (1000, "cat", "a");
  LmLedgerRecord b = spinup_at (2000, "dd", "b");

  lm_ledger_record_encode (&a, buf);
  gsize first = buf->len;
  lm_ledger_record_encode (&b, buf);
  /* Every cut inside the second record keeps the first, whole. */
  for (gsize cut = first; cut < buf->len; cut++)
    {
      gsize skipped = 0;
      g_autoptr (GArray) got = parse (buf->data, cut, &skipped);
      g_assert_cmpuint (got->len, ==, 1);
      g_assert_cmpint (g_array_index (got, LmLedgerRecord, 0).time_us, ==, 1000);
      g_assert_cmpuint (skipped, ==, cut - first);
    }
  /* And a new record appended after a torn one is found again. */
  g_byte_array_set_size (buf, buf->len - 3);
  lm_ledger_record_encode (&a, buf);
  g_autoptr (GArray) got = parse (buf->data, buf->len, NULL);
  g_assert_cmpuint (got->len, ==, 2);
}

static void
test_flipped_bytes (void)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();
  LmLedgerRecord r[3]
      = { spinup_at (1, "a", "x"), spinup_at (2, "b", "y"), spinup_at (3, "c", "z") };
  gsize ends[3];

  for (int i = 0; i < 3; i++)
    {
      lm_ledger_record_encode (&r[i], buf);
      ends[i] = buf->len;
    }
  /* Any single flipped bit in the middle record loses that record only. */
  for (gsize pos = ends[0]; pos < ends[1]; pos++)
    for (int bit = 0; bit < 8; bit++)
      {
        buf->data[pos] ^= 1 << bit;
        g_autoptr (GArray) got = parse (buf->data, buf->len, NULL);
        g_assert_cmpuint (got->len, ==, 2);
        g_assert_cmpint (g_array_index (got, LmLedgerRecord, 0).time_us, ==, 1);
        g_assert_cmpint (g_array_index (got, LmLedgerRecord, 1).time_us, ==, 3);
        buf->data[pos] ^= 1 << bit;
      }
}

static char *
temp_ledger (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("lm-ledger-XXXXXX", &error);

  g_assert_no_error (error);
  return g_build_filename (dir, "state", "ledger", NULL);
}

static void
remove_ledger (const char *path)
{
  g_autofree char *state = g_path_get_dirname (path);
  g_autofree char *dir = g_path_get_dirname (state);

  g_unlink (path);
  g_rmdir (state);
  g_rmdir (dir);
}

static GArray *
read_file (const char *path)
{
  g_autofree char *contents = NULL;
  gsize length = 0, skipped = 1;

  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  GArray *got = parse ((const guint8 *) contents, length, &skipped);
  g_assert_cmpuint (skipped, ==, 0);
  return got;
}

static void
test_month_bounded (void)
{
  g_autofree char *path = temp_ledger ();
  g_autoptr (LmLedger) ledger = lm_ledger_new (path, NULL);
  gint64 now = g_get_real_time ();
  const gint64 day = (gint64) 24 * 3600 * G_USEC_PER_SEC;
  const guint per_day = 3000; /* a disk woken every 30 s, day and night */
  g_autofree char *long_path = g_strnfill (120, 'f');
  GStatBuf st;

  for (guint i = 0; i < 30 * per_day; i++)
    {
      LmLedgerRecord r = spinup_at (now - 30 * day + i * (day / per_day), "firefox", long_path);
      lm_ledger_append (ledger, &r); /* not deferring: written at once */
      if (i % 5000 == 0)
        {
          g_assert_cmpint (g_stat (path, &st), ==, 0);
          g_assert_cmpint (st.st_size, <=, LM_LEDGER_MAX_BYTES);
        }
    }
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_size, <=, LM_LEDGER_MAX_BYTES);
  g_assert_cmpint (st.st_size, >=, LM_LEDGER_MAX_BYTES / 2);
  /* The newest survive, the oldest went first. */
  g_autoptr (GArray) got = read_file (path);
  LmLedgerRecord *last = &g_array_index (got, LmLedgerRecord, got->len - 1);
  g_assert_cmpint (last->time_us, ==, now - 30 * day + (30 * per_day - 1) * (day / per_day));
  for (guint i = 1; i < got->len; i++)
    g_assert_cmpint (g_array_index (got, LmLedgerRecord, i - 1).time_us, <,
                     g_array_index (got, LmLedgerRecord, i).time_us);
  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

static void
test_age_pruning (void)
{
  g_autofree char *path = temp_ledger ();
  g_autoptr (LmLedger) ledger = lm_ledger_new (path, NULL);
  gint64 now = g_get_real_time ();
  const gint64 day = (gint64) 24 * 3600 * G_USEC_PER_SEC;

  /* 40 days of a spin-up a day: loading prunes nothing by itself, the
   * first write past the age compacts. */
  for (int i = 40; i >= 1; i--)
    {
      LmLedgerRecord r = spinup_at (now - i * day, "cron", "");
      lm_ledger_append (ledger, &r);
    }
  g_autoptr (GArray) got = read_file (path);
  for (guint i = 0; i < got->len; i++)
    g_assert_cmpint (g_array_index (got, LmLedgerRecord, i).end_us, >=,
                     now - LM_LEDGER_MAX_AGE_US - G_USEC_PER_SEC);
  g_assert_cmpuint (got->len, >=, 29);
  g_assert_cmpuint (got->len, <=, 31);

  /* Deferred: nothing is written until the state disk wakes. */
  lm_ledger_set_state_disk (ledger, "sda");
  lm_ledger_set_deferring (ledger, TRUE, 600);
  LmLedgerRecord r = spinup_at (now, "vim", "notes");
  g_strlcpy (r.disk, "sdb", sizeof r.disk);
  lm_ledger_append (ledger, &r);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 1);
  g_autoptr (GArray) before = read_file (path);
  g_assert_cmpuint (before->len, ==, got->len);
  /* ... but GetLedger sees it already. */
  g_autoptr (GVariant) q = g_variant_ref_sink (lm_ledger_query (ledger, now, now, 100));
  g_assert_cmpuint (g_variant_n_children (q), ==, 1);
  lm_ledger_note_power (ledger, "sda", FALSE, 0);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 0);
  g_autoptr (GArray) after = read_file (path);
  /* The spin-up, and the asleep interval that the wake closed. */
  g_assert_cmpuint (after->len, ==, got->len + 2);
  g_assert_cmpint (g_array_index (after, LmLedgerRecord, after->len - 1).kind, ==,
                   LM_LEDGER_ASLEEP);

  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL);
  g_test_add_func ("/ledger/crc", test_crc);
  g_test_add_func ("/ledger/round-trip", test_round_trip);
  g_test_add_func ("/ledger/torn-tail", test_torn_tail);
  g_test_add_func ("/ledger/flipped-bytes", test_flipped_bytes);
  g_test_add_func ("/ledger/month-bounded", test_month_bounded);
  g_test_add_func ("/ledger/age-pruning", test_age_pruning);
  return g_test_run ();
}
