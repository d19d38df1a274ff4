/* test-ledger.c: the spin-up ledger's records and file: round trip, torn
 * tails, flipped bytes, the size bound over a month and age pruning;
 * activity records (their budget per day, over a month) and the count of
 * the flush that follows a spin-up. */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "lm-excluded.h"
#include "lm-ledger.h"
#include "lm-replay.h"

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
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
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
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
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
  g_autoptr (GVariant) q = lm_ledger_query (ledger, now, now, 100);
  g_assert_cmpuint (g_variant_n_children (q), ==, 1);
  lm_ledger_note_power ("sda", FALSE, 0, ledger);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 0);
  g_autoptr (GArray) after = read_file (path);
  /* The spin-up, and the asleep interval that the wake closed. */
  g_assert_cmpuint (after->len, ==, got->len + 2);
  g_assert_cmpint (g_array_index (after, LmLedgerRecord, after->len - 1).kind, ==,
                   LM_LEDGER_ASLEEP);

  /* An excluded state disk is not watched: nothing would say it woke, and
   * it is not kept asleep, so records are written at once. */
  const char *excluded[] = { "sda", NULL };
  lm_excluded_set (excluded);
  r = spinup_at (now, "vim", "todo");
  g_strlcpy (r.disk, "sdb", sizeof r.disk);
  lm_ledger_append (ledger, &r);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 0);
  g_autoptr (GArray) written = read_file (path);
  g_assert_cmpuint (written->len, ==, after->len + 1);
  lm_excluded_reset ();

  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

static void
test_activity_round_trip (void)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();
  LmLedgerRecord a = { .kind = LM_LEDGER_ACTIVITY,
                       .time_us = 1780000000000000,
                       .end_us = 1780000003000000,
                       .uid = -1,
                       .reads = 2,
                       .writes = 1,
                       .dirtied = 3 };
  LmLedgerRecord old = spinup_at (1780000000000000, "cat", "x");
  gsize skipped = 1;

  g_strlcpy (a.disk, "sda", sizeof a.disk);
  lm_ledger_record_encode (&old, buf);
  gsize old_len = buf->len;
  lm_ledger_record_encode (&a, buf);
  /* The first files' layout: extension length 0 (once "reserved"). */
  g_assert_cmpuint (buf->data[LM_LEDGER_HEADER_SIZE + 6], ==, 0);
  /* No filesystem seen: the older shape, 12 bytes. */
  g_assert_cmpuint (buf->data[old_len + LM_LEDGER_HEADER_SIZE + 6], ==, LM_LEDGER_ACTIVITY_EXT_V1);
  g_assert_cmpuint (buf->len - old_len, ==,
                    LM_LEDGER_HEADER_SIZE + LM_LEDGER_FIXED_SIZE + LM_LEDGER_ACTIVITY_EXT_V1 + 3);
  g_autoptr (GArray) got = parse (buf->data, buf->len, &skipped);
  g_assert_cmpuint (got->len, ==, 2);
  g_assert_cmpuint (skipped, ==, 0);
  g_assert_true (memcmp (&g_array_index (got, LmLedgerRecord, 1), &a, sizeof a) == 0);
  g_autoptr (GVariant) v = g_variant_ref_sink (lm_ledger_record_to_variant (&a));
  g_autofree char *text = g_variant_print (v, TRUE);
  g_assert_cmpstr (text, ==,
                   "{'Kind': <'activity'>, 'Disk': <'sda'>, 'Time': <uint64 1780000000000000>, "
                   "'End': <uint64 1780000003000000>, 'Reads': <uint32 2>, 'Writes': <uint32 1>, "
                   "'Dirtied': <uint32 3>}");
  /* With the filesystems its data went to (btrfs and ext4 on one disk):
   * 16 bytes, and Filesystems in the variant. */
  g_autoptr (GByteArray) with_fs = g_byte_array_new ();
  LmLedgerRecord b = a;
  b.fs = LM_REPLAY_FS_BTRFS | LM_REPLAY_FS_EXT4;
  lm_ledger_record_encode (&b, with_fs);
  g_assert_cmpuint (with_fs->data[LM_LEDGER_HEADER_SIZE + 6], ==, LM_LEDGER_ACTIVITY_EXT);
  g_autoptr (GArray) got_fs = parse (with_fs->data, with_fs->len, NULL);
  g_assert_cmpuint (got_fs->len, ==, 1);
  g_assert_true (memcmp (&g_array_index (got_fs, LmLedgerRecord, 0), &b, sizeof b) == 0);
  g_autoptr (GVariant) vb = g_variant_ref_sink (lm_ledger_record_to_variant (&b));
  guint32 fs = 0;
  g_assert_true (g_variant_lookup (vb, "Filesystems", "u", &fs));
  g_assert_cmpuint (fs, ==, LM_REPLAY_FS_BTRFS | LM_REPLAY_FS_EXT4);
  /* With the dirty spells begun in it: 20 bytes, Spells in the variant. */
  g_autoptr (GByteArray) with_spells = g_byte_array_new ();
  LmLedgerRecord c = b;
  c.spells = 2, c.spells_known = TRUE;
  lm_ledger_record_encode (&c, with_spells);
  g_autoptr (GArray) got_spells = parse (with_spells->data, with_spells->len, NULL);
  g_assert_true (memcmp (&g_array_index (got_spells, LmLedgerRecord, 0), &c, sizeof c) == 0);
  g_assert_false (g_array_index (got_fs, LmLedgerRecord, 0).spells_known); /* 16 bytes */
  g_autoptr (GVariant) vc = g_variant_ref_sink (lm_ledger_record_to_variant (&c));
  g_assert_true (g_variant_lookup (vc, "Spells", "u", &fs) && fs == 2);
  /* An activity record without its extension is refused. */
  buf->data[old_len + LM_LEDGER_HEADER_SIZE + 6] = 0;
  g_autoptr (GArray) bad = parse (buf->data, buf->len, NULL);
  g_assert_cmpuint (bad->len, ==, 1);
}

/* A deferred run: its reason in a 4-byte extension, the caller's names in
 * comm and path; a reason past the last one known is refused. */
static void
test_deferred_round_trip (void)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();
  LmLedgerRecord a = { .kind = LM_LEDGER_DEFERRED,
                       .time_us = 1780000000000000,
                       .end_us = 1780002820000000,
                       .pid = 4242,
                       .uid = 0,
                       .reason = LM_LEDGER_REASON_AWAKE };
  LmLedgerReason reason;

  g_strlcpy (a.disk, "sda", sizeof a.disk);
  g_strlcpy (a.comm, "mandb", sizeof a.comm);
  g_strlcpy (a.path, "man-db.service", sizeof a.path);
  lm_ledger_record_encode (&a, buf);
  g_assert_cmpuint (buf->len, ==,
                    LM_LEDGER_HEADER_SIZE + LM_LEDGER_FIXED_SIZE + LM_LEDGER_DEFERRED_EXT + 3 + 5
                        + 14);
  g_autoptr (GArray) got = parse (buf->data, buf->len, NULL);
  g_assert_cmpuint (got->len, ==, 1);
  g_assert_true (memcmp (&g_array_index (got, LmLedgerRecord, 0), &a, sizeof a) == 0);
  g_autoptr (GVariant) v = g_variant_ref_sink (lm_ledger_record_to_variant (&a));
  g_autofree char *text = g_variant_print (v, TRUE);
  g_assert_cmpstr (text, ==,
                   "{'Kind': <'deferred'>, 'Disk': <'sda'>, 'Time': <uint64 1780000000000000>, "
                   "'End': <uint64 1780002820000000>, 'Reason': <'awake'>, 'Pid': <uint32 4242>, "
                   "'Comm': <'mandb'>, 'Uid': <uint32 0>, 'Unit': <'man-db.service'>}");

  /* Each of WaitAwake's words, and nothing else. */
  for (guint i = 0; i < 5; i++)
    {
      const char *word = lm_ledger_reason_to_string ((LmLedgerReason) i);
      g_assert_true (lm_ledger_reason_from_string (word, &reason));
      g_assert_cmpuint (reason, ==, i);
    }
  g_assert_false (lm_ledger_reason_from_string ("later", &reason));
  g_assert_false (lm_ledger_reason_from_string (NULL, &reason));

  /* A reason code no version wrote: the record is skipped, not misread. */
  g_byte_array_set_size (buf, 0);
  a.reason = (LmLedgerReason) 9;
  lm_ledger_record_encode (&a, buf);
  g_autoptr (GArray) bad = parse (buf->data, buf->len, NULL);
  g_assert_cmpuint (bad->len, ==, 0);
}

/* A spin-up's thread name is its extension: up to 15 bytes, no NUL; the
 * first files' spin-ups (no extension) are spin-ups without a thread. */
/* A spin-up's unit follows its thread's name and a NUL, with or without
 * a thread; a second NUL is no record; GetLedger shows it as Unit. */
static void
test_unit_round_trip (void)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();
  LmLedgerRecord a = spinup_at (1780000001000000, "sda", "cron");
  LmLedgerRecord b = spinup_at (1780000002000000, "sda", "firefox-esr");
  gsize skipped = 99;

  g_strlcpy (a.unit, "cron.service", sizeof a.unit);
  g_strlcpy (b.thread, "Cache2 I/O", sizeof b.thread);
  memset (b.unit, 'u', LM_LEDGER_UNIT_EXT);
  lm_ledger_record_encode (&a, buf);
  gsize a_len = buf->len;
  lm_ledger_record_encode (&b, buf);
  g_assert_cmpuint (buf->data[LM_LEDGER_HEADER_SIZE + 6], ==, 1 + strlen ("cron.service"));
  g_assert_cmpuint (buf->data[LM_LEDGER_HEADER_SIZE + LM_LEDGER_FIXED_SIZE], ==, 0);
  g_autoptr (GArray) got = parse (buf->data, buf->len, &skipped);
  g_assert_cmpuint (got->len, ==, 2);
  g_assert_cmpuint (skipped, ==, 0);
  g_assert_true (memcmp (&g_array_index (got, LmLedgerRecord, 0), &a, sizeof a) == 0);
  g_assert_true (memcmp (&g_array_index (got, LmLedgerRecord, 1), &b, sizeof b) == 0);
  g_autoptr (GVariant) v = g_variant_ref_sink (lm_ledger_record_to_variant (&a));
  const char *unit = NULL;
  g_assert_true (g_variant_lookup (v, "Unit", "&s", &unit));
  g_assert_cmpstr (unit, ==, "cron.service");

  /* A second NUL inside the unit. */
  guint8 *ext = buf->data + LM_LEDGER_HEADER_SIZE + LM_LEDGER_FIXED_SIZE;
  ext[5] = '\0';
  guint32 crc = GUINT32_TO_LE (
      lm_ledger_crc32 (buf->data + LM_LEDGER_HEADER_SIZE, a_len - LM_LEDGER_HEADER_SIZE));
  memcpy (buf->data + 8, &crc, 4);
  g_autoptr (GArray) two = parse (buf->data, buf->len, NULL);
  g_assert_cmpuint (two->len, ==, 1);
}

static void
test_thread_round_trip (void)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();
  LmLedgerRecord old = spinup_at (1780000000000000, "cat", "x");
  LmLedgerRecord a = spinup_at (1780000001000000, "firefox-esr", "");
  LmLedgerRecord b = spinup_at (1780000002000000, "fio", "");
  gsize skipped = 1;

  g_strlcpy (a.thread, "Cache2 I/O", sizeof a.thread);
  g_strlcpy (b.thread, "0123456789abcde", sizeof b.thread);
  lm_ledger_record_encode (&old, buf);
  gsize old_len = buf->len;
  lm_ledger_record_encode (&a, buf);
  gsize a_len = buf->len - old_len;
  lm_ledger_record_encode (&b, buf);
  g_assert_cmpuint (buf->data[LM_LEDGER_HEADER_SIZE + 6], ==, 0);
  g_assert_cmpuint (buf->data[old_len + LM_LEDGER_HEADER_SIZE + 6], ==, strlen ("Cache2 I/O"));
  g_assert_cmpuint (a_len, ==,
                    LM_LEDGER_HEADER_SIZE + LM_LEDGER_FIXED_SIZE + strlen ("Cache2 I/O")
                        + strlen ("sda") + strlen ("firefox-esr"));
  g_autoptr (GArray) got = parse (buf->data, buf->len, &skipped);
  g_assert_cmpuint (got->len, ==, 3);
  g_assert_cmpuint (skipped, ==, 0);
  g_assert_true (memcmp (&g_array_index (got, LmLedgerRecord, 0), &old, sizeof old) == 0);
  g_assert_cmpstr (g_array_index (got, LmLedgerRecord, 0).thread, ==, "");
  g_assert_true (memcmp (&g_array_index (got, LmLedgerRecord, 1), &a, sizeof a) == 0);
  g_assert_true (memcmp (&g_array_index (got, LmLedgerRecord, 2), &b, sizeof b) == 0);
  g_autoptr (GVariant) v = g_variant_ref_sink (lm_ledger_record_to_variant (&a));
  g_autofree char *text = g_variant_print (v, TRUE);
  g_assert_cmpstr (text, ==,
                   "{'Kind': <'spinup'>, 'Disk': <'sda'>, 'Time': <uint64 1780000001000000>, "
                   "'Pid': <uint32 4242>, 'Comm': <'firefox-esr'>, 'Thread': <'Cache2 I/O'>, "
                   "'Uid': <uint32 1000>, 'Via': <'writeback'>, 'Flushed': <uint32 7>}");
  g_autoptr (GVariant) w = g_variant_ref_sink (lm_ledger_record_to_variant (&old));
  g_assert_false (g_variant_lookup (w, "Thread", "&s", NULL));

  /* A NUL that ends the extension (a unit that is empty), or an extension
   * longer than a name can be, is no record. */
  guint8 *ext = buf->data + old_len + LM_LEDGER_HEADER_SIZE + LM_LEDGER_FIXED_SIZE;
  ext[strlen ("Cache2 I/O") - 1] = '\0';
  guint32 crc = GUINT32_TO_LE (
      lm_ledger_crc32 (buf->data + old_len + LM_LEDGER_HEADER_SIZE, a_len - LM_LEDGER_HEADER_SIZE));
  memcpy (buf->data + old_len + 8, &crc, 4);
  g_autoptr (GArray) nul = parse (buf->data, buf->len, NULL);
  g_assert_cmpuint (nul->len, ==, 2);

  /* Say the extension is 16 bytes, taken from the comm and path: the
   * lengths still add up, only the extension's is wrong. */
  g_autoptr (GByteArray) forged = g_byte_array_new ();
  LmLedgerRecord d = spinup_at (1780000000000000, "", "0123456789abcdef");
  lm_ledger_record_encode (&d, forged);
  guint8 *p = forged->data + LM_LEDGER_HEADER_SIZE;
  p[4] = 0;  /* path length */
  p[6] = 16; /* extension length */
  crc = GUINT32_TO_LE (lm_ledger_crc32 (p, forged->len - LM_LEDGER_HEADER_SIZE));
  memcpy (forged->data + 8, &crc, 4);
  g_autoptr (GArray) forged_got = parse (forged->data, forged->len, NULL);
  g_assert_cmpuint (forged_got->len, ==, 0);
}

static LmActivity
run_at (gint64 t, guint seconds)
{
  LmActivity a = {
    .start_us = t, .end_us = t + (gint64) seconds * G_USEC_PER_SEC, .reads = 1, .dirtied = seconds
  };

  g_strlcpy (a.disk, "sda", sizeof a.disk);
  return a;
}

typedef struct
{
  guint records;
  guint64 dirtied;
  GHashTable *per_day; /* local day number → records */
} ActivityCount;

static void
count_activity (const LmLedgerRecord *r, gsize offset, gsize size, gpointer user_data)
{
  ActivityCount *c = user_data;

  if (r->kind != LM_LEDGER_ACTIVITY)
    return;
  c->records++;
  c->dirtied += r->dirtied;
  g_autoptr (GDateTime) t = g_date_time_new_from_unix_local (r->time_us / G_USEC_PER_SEC);
  gpointer day
      = GINT_TO_POINTER (g_date_time_get_year (t) * 1000 + g_date_time_get_day_of_year (t));
  g_hash_table_insert (
      c->per_day, day,
      GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (c->per_day, day)) + 1));
}

/* A month of a disk busy for a second every 20 s (4,320 runs a day): at
 * most LM_LEDGER_ACTIVITY_PER_DAY (+1 over midnight) records a day, no
 * second lost from the counts, and the file within its bound. */
static void
test_activity_budget (void)
{
  g_autofree char *path = temp_ledger ();
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
  gint64 now = g_get_real_time ();
  const gint64 day = (gint64) 24 * 3600 * G_USEC_PER_SEC;
  const guint per_day = 4320;
  guint64 fed = 0;

  /* The last 30 days but an hour (older goes at the first compaction). */
  for (guint i = 0; i < 30 * per_day - 360; i++)
    {
      LmActivity a = run_at (now - 30 * day + (3600 + (gint64) i * 20) * G_USEC_PER_SEC, 1);
      lm_ledger_note_activity (&a, ledger);
      fed += a.dirtied;
    }
  g_assert_true (lm_ledger_flush (ledger, TRUE, NULL));
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  ActivityCount c = { 0, 0, g_hash_table_new (NULL, NULL) };
  lm_ledger_parse ((const guint8 *) contents, length, count_activity, &c, NULL);
  g_assert_cmpuint (c.dirtied, ==, fed);
  /* Runs 20 s apart merge from half the budget on (60 s). */
  g_assert_cmpuint (c.records, >=, 29 * LM_LEDGER_ACTIVITY_PER_DAY / 2);
  g_assert_cmpuint (length, <=, LM_LEDGER_MAX_BYTES);
  GHashTableIter iter;
  gpointer k, v;
  g_hash_table_iter_init (&iter, c.per_day);
  while (g_hash_table_iter_next (&iter, &k, &v))
    g_assert_cmpuint (GPOINTER_TO_UINT (v), <=, LM_LEDGER_ACTIVITY_PER_DAY + 1);
  g_hash_table_unref (c.per_day);
  /* About 64 bytes a record: a month at the budget fits the file. */
  g_assert_cmpuint (length / c.records * LM_LEDGER_ACTIVITY_PER_DAY * 31, <, LM_LEDGER_MAX_BYTES);
  g_clear_pointer (&ledger, lm_ledger_free);
  remove_ledger (path);
}

/* A direct spin-up while laptop mode is on waits for the engine's flush
 * and carries its count; with laptop mode off it is written with 0. */
static void
test_flushed (void)
{
  g_autofree char *path = temp_ledger ();
  g_autoptr (LmLedger) ledger = lm_ledger_new (path);
  LmSpinUp s = { .time_us = g_get_real_time (), .pid = 7, .uid = 0, .via = LM_VIA_DIRECT };

  g_strlcpy (s.disk, "sdb", sizeof s.disk);
  g_strlcpy (s.comm, "cat", sizeof s.comm);
  lm_ledger_set_deferring (ledger, TRUE, 600);
  lm_ledger_note_flushed (NULL, 1, ledger); /* the user-space engine runs */
  lm_ledger_note_spinup (&s, ledger);
  g_assert_cmpuint (lm_ledger_pending (ledger), ==, 1); /* waits for its count */
  g_autoptr (GVariant) q = lm_ledger_query (ledger, 0, G_MAXINT64, 10);
  g_assert_cmpuint (g_variant_n_children (q), ==, 1);
  lm_ledger_note_flushed ("sdb", 1234, ledger);
  g_autoptr (GVariant) q2 = lm_ledger_query (ledger, 0, G_MAXINT64, 10);
  g_autoptr (GVariant) first = g_variant_get_child_value (q2, 0);
  guint32 flushed = 0;
  g_assert_true (g_variant_lookup (first, "Flushed", "u", &flushed));
  g_assert_cmpuint (flushed, ==, 1234);
  g_assert_true (lm_ledger_flush (ledger, FALSE, NULL));
  lm_ledger_set_deferring (ledger, FALSE, 600);
  s.time_us += G_USEC_PER_SEC;
  lm_ledger_note_spinup (&s, ledger);
  lm_ledger_note_flushed ("sdb", 99, ledger); /* no spin-up waits: ignored */
  g_autoptr (GArray) got = read_file (path);
  g_assert_cmpuint (got->len, ==, 2);
  g_assert_cmpuint (g_array_index (got, LmLedgerRecord, 0).flushed, ==, 1234);
  g_assert_cmpuint (g_array_index (got, LmLedgerRecord, 1).flushed, ==, 0);
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
  g_test_add_func ("/ledger/activity-round-trip", test_activity_round_trip);
  g_test_add_func ("/ledger/thread-round-trip", test_thread_round_trip);
  g_test_add_func ("/ledger/unit-round-trip", test_unit_round_trip);
  g_test_add_func ("/ledger/deferred-round-trip", test_deferred_round_trip);
  g_test_add_func ("/ledger/activity-budget", test_activity_budget);
  g_test_add_func ("/ledger/flushed", test_flushed);
  return g_test_run ();
}
