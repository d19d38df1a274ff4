/* test-replay.c: the "what laptop mode saved" replay (common/lm-replay.c)
 * against hand-worked cases of the stock writeback policy. */
#include <glib.h>
#include <string.h>

#include "lm-replay.h"

#define S G_USEC_PER_SEC
#define T0 ((gint64) 1700000000) /* a multiple of 5: ticks fall on round seconds */

static void
test_empty (void)
{
  LmReplayResult r = { 99, 99 };

  lm_replay_stock (NULL, 0, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 0);
  g_assert_cmpint (r.awake_s, ==, 0);
  /* An empty or inverted window counts nothing, whatever the runs. */
  LmReplayRun run = { T0 * S, (T0 + 10) * S, 10, 10, 10 };
  lm_replay_stock (&run, 1, T0 * S, T0 * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 0);
  lm_replay_stock (&run, 1, (T0 + 10) * S, T0 * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 0);
  g_assert_cmpint (r.awake_s, ==, 0);
}

static void
test_reads_when_recorded (void)
{
  /* Two reads 100 s apart: two spin-ups, 5 s awake each. */
  LmReplayRun runs[] = {
    { (T0 + 100) * S, (T0 + 101) * S, 1, 0, 0 },
    { (T0 + 200) * S, (T0 + 201) * S, 1, 0, 0 },
  };
  LmReplayResult r;

  lm_replay_stock (runs, 2, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 2);
  g_assert_cmpint (r.awake_s, ==, 10);
  /* Reads every second for 60 s keep one wake going: 60 s + the gap. */
  LmReplayRun busy = { (T0 + 100) * S, (T0 + 160) * S, 60, 0, 0 };
  lm_replay_stock (&busy, 1, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 1);
  g_assert_cmpint (r.awake_s, ==, 64);
  /* Six reads spread over 60 s: 10 s apart, each its own spin-up. */
  busy.reads = 6;
  lm_replay_stock (&busy, 1, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 6);
  g_assert_cmpint (r.awake_s, ==, 30);
}

static void
test_dirtying_expires (void)
{
  /* Data dirtied at T0+101: the journal commits at +106, the flusher writes
   * it at the first 5 s tick at or after +131, which is +135, and the
   * blocks allocated then commit at +140. */
  LmReplayRun run = { (T0 + 101) * S, (T0 + 102) * S, 0, 0, 1 };
  LmReplayResult r;

  lm_replay_stock (&run, 1, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 3);
  g_assert_cmpint (r.awake_s, ==, 15);
  /* With a standby timer of 60 s all fall in one wake, 106..200. */
  lm_replay_stock (&run, 1, T0 * S, (T0 + 3600) * S, 60, &r);
  g_assert_cmpuint (r.spinups, ==, 1);
  g_assert_cmpint (r.awake_s, ==, 140 + 60 - 106);
  /* A writeback after the window's end is not counted in it. */
  lm_replay_stock (&run, 1, T0 * S, (T0 + 120) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 1);
  g_assert_cmpint (r.awake_s, ==, 5);
}

static void
test_journal_groups_changes (void)
{
  /* Dirtying in 3 consecutive seconds joins one transaction: one commit
   * at +105; on ext4 (not recorded: as ext4) the three seconds are one
   * dirty spell, written at +130, whose allocation commits at +135, a
   * full idle gap later: a spin-up of its own. */
  LmReplayRun run = { (T0 + 100) * S, (T0 + 103) * S, 0, 0, 3 };
  LmReplayResult r;

  lm_replay_stock (&run, 1, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 3);
  g_assert_cmpint (r.awake_s, ==, 5 + 5 + 5);
  /* On btrfs the three seconds are one dirty spell: one write-back at
   * +130, with the transaction's commit. */
  run.fs = LM_REPLAY_FS_BTRFS;
  lm_replay_stock (&run, 1, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 1);
  g_assert_cmpint (r.awake_s, ==, 5);
}

static void
test_overlapping_and_unordered (void)
{
  /* The same second recorded twice, and runs out of order: the disk does
   * I/O at one instant once. */
  LmReplayRun runs[] = {
    { (T0 + 500) * S, (T0 + 501) * S, 1, 0, 0 },
    { (T0 + 100) * S, (T0 + 101) * S, 1, 1, 0 },
    { (T0 + 100) * S, (T0 + 101) * S, 1, 0, 0 },
  };
  LmReplayResult r;

  lm_replay_stock (runs, 3, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 2);
  g_assert_cmpint (r.awake_s, ==, 10);
}

static void
test_huge_counts (void)
{
  /* Counts beyond the run's length are capped by it; a run reaching far
   * outside the window is clipped to it, so work stays bounded. */
  LmReplayRun runs[] = {
    { (T0 + 10) * S, (T0 + 20) * S, G_MAXUINT32, G_MAXUINT32, G_MAXUINT32 },
    { 0, G_MAXINT64, G_MAXUINT32, 0, 0 },
  };
  LmReplayResult r;

  lm_replay_stock (runs, 1, T0 * S, (T0 + 3600) * S, 5, &r);
  /* Reads and writes 10..19, commits at 15 and 20 (a transaction opens
   * every 5 s), the one dirty spell written at 40 and its allocation
   * committed at 45, a full gap apart. */
  g_assert_cmpuint (r.spinups, ==, 3);
  g_assert_cmpint (r.awake_s, ==, (25 - 10) + 10);
  lm_replay_stock (runs, 2, T0 * S, (T0 + 3600) * S, 5, &r);
  /* Reads every second of the hour: one wake, the whole window. */
  g_assert_cmpuint (r.spinups, ==, 1);
  g_assert_cmpint (r.awake_s, ==, 3600);
}

static void
test_count_bench_rule (void)
{
  /* bench/engine_bench.py's analyse(): I/O after >= idle s without any is a
   * spin-up, and the disk starts asleep. */
  gint64 io[] = { T0 + 0, T0 + 4, T0 + 9, T0 + 9, T0 + 30 };
  LmReplayResult r;

  lm_replay_count (io, G_N_ELEMENTS (io), T0, T0 + 100, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 3);
  g_assert_cmpint (r.awake_s, ==, 9 + 5 + 5);
}

/* Data dirtied on one filesystem at T0+101, stock policy, idle gap 5 s. */
static void
replay_one (guint32 fs, LmReplayResult *r)
{
  LmReplayRun run = { (T0 + 101) * S, (T0 + 102) * S, 0, 0, 1, fs };

  lm_replay_stock (&run, 1, T0 * S, (T0 + 3600) * S, 5, r);
  /* A record without spells: only that is unsure. */
  g_assert_cmpuint (lm_replay_unsure (&run, 1), ==, LM_REPLAY_UNSURE_SPELLS_NOT_RECORDED);
}

static void
test_ext4 (void)
{
  LmReplayResult r;

  /* jbd2 commits at +106, the flusher writes the data at +135, and the
   * blocks it allocated then commit at +140: three wakes. */
  replay_one (LM_REPLAY_FS_EXT4, &r);
  g_assert_cmpuint (r.spinups, ==, 3);
  g_assert_cmpint (r.awake_s, ==, 15);
  /* A file written every 2 s for a minute (each write changes its mtime: a
   * dirtied second each): a transaction opens with the first write after
   * each commit, so commits come every 6 s (+105, +111 ... +159); the
   * data is one dirty spell, written at +130 and again at +160 (whose
   * allocation commits at +165): eleven wakes, not one long awake stretch
   * from a write at every 5 s tick. */
  LmReplayRun runs[30];
  for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
    runs[i] = (LmReplayRun){ (T0 + 100 + 2 * i) * S, (T0 + 101 + 2 * i) * S, 0, 0, 1,
                             LM_REPLAY_FS_EXT4 };
  lm_replay_stock (runs, G_N_ELEMENTS (runs), T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 11);
  g_assert_cmpint (r.awake_s, ==, 57);
}

static void
test_btrfs (void)
{
  LmReplayResult r;

  /* The transaction commits at +131, the data goes at +135: 4 s apart,
   * one wake (131..140). */
  replay_one (LM_REPLAY_FS_BTRFS, &r);
  g_assert_cmpuint (r.spinups, ==, 1);
  g_assert_cmpint (r.awake_s, ==, 9);
  /* Changes for 20 s join one transaction, committed at +130, and one
   * dirty spell, written with it at +130: one wake. On ext4 the same
   * changes commit every 5 s (+105 to +120), their one dirty spell is
   * written at +130 and its allocation commits at +135: six (each 5 s
   * apart: the idle timer ran out before each). */
  LmReplayRun run = { (T0 + 100) * S, (T0 + 120) * S, 0, 0, 20, LM_REPLAY_FS_BTRFS };
  lm_replay_stock (&run, 1, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 1);
  g_assert_cmpint (r.awake_s, ==, 5);
  run.fs = LM_REPLAY_FS_EXT4;
  lm_replay_stock (&run, 1, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 6);
  g_assert_cmpint (r.awake_s, ==, 30);
}

static int
cmp_s (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

static void
test_xfs (void)
{
  LmReplayResult r;
  LmReplayRun run = { (T0 + 101) * S, (T0 + 102) * S, 0, 0, 1, LM_REPLAY_FS_XFS };

  /* One phase of the log worker's clock, its ticks on multiples of 30 s
   * (+100, +130, ...: T0 is 20 s past one): the change is forced at +130,
   * the data written at +135, the log covered at +160 and +190, then
   * nothing more. */
  g_autoptr (GArray) io = lm_replay_stock_io (&run, 1, T0 * S, (T0 + 3600) * S);
  const gint64 want[] = { 130, 135, 160, 190 };
  g_array_sort (io, cmp_s);
  g_assert_cmpuint (io->len, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    g_assert_cmpint (g_array_index (io, gint64, i), ==, T0 + want[i]);
  /* The report cannot know the phase (the clock runs from the mount): it
   * averages the 30. The force comes 1 to 30 s after the change, in some
   * phases within the data's wake: 111 wakes and 575 s awake over the 30,
   * 3.7 and 19.2 each, rounded. */
  replay_one (LM_REPLAY_FS_XFS, &r);
  g_assert_cmpuint (r.spinups, ==, 4);
  g_assert_cmpint (r.awake_s, ==, 19);
  /* A change 40 s after the first: a tick between them forces the first,
   * the next the second (its data at +175), then two covering ticks: 172
   * wakes and 900 s over the 30 phases. */
  LmReplayRun runs[] = {
    { (T0 + 101) * S, (T0 + 102) * S, 0, 0, 1, LM_REPLAY_FS_XFS },
    { (T0 + 141) * S, (T0 + 142) * S, 0, 0, 1, LM_REPLAY_FS_XFS },
  };
  lm_replay_stock (runs, 2, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 6);
  g_assert_cmpint (r.awake_s, ==, 30);
}

static void
test_no_journal (void)
{
  LmReplayResult r;

  /* vfat, ext2: the data's write-back alone, at +135. */
  replay_one (LM_REPLAY_FS_NO_JOURNAL, &r);
  g_assert_cmpuint (r.spinups, ==, 1);
  g_assert_cmpint (r.awake_s, ==, 5);
}

/* One disk, two filesystems: each keeps its own transaction. */
static void
test_two_filesystems_on_one_disk (void)
{
  LmReplayResult r;
  /* ext4 at +101 (commit +106, data +135, its allocation's commit +140),
   * btrfs at +120 (commit +150, data +150): wakes at 106, 135, 140 and
   * 150. */
  LmReplayRun runs[] = {
    { (T0 + 101) * S, (T0 + 102) * S, 0, 0, 1, LM_REPLAY_FS_EXT4 },
    { (T0 + 120) * S, (T0 + 121) * S, 0, 0, 1, LM_REPLAY_FS_BTRFS },
  };
  lm_replay_stock (runs, 2, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 4);
  g_assert_cmpint (r.awake_s, ==, 20);
  /* A btrfs change does not join ext4's open transaction, nor the reverse:
   * had both been ext4, +120 would have opened a commit at +125, its data
   * going in the spell of +101's, at +135. */
  runs[1].fs = LM_REPLAY_FS_EXT4;
  lm_replay_stock (runs, 2, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 4); /* 106, 125, 135, 140 */
  /* One second in which both were dirtied (a mask of two): ext4's commit
   * at +106, btrfs's at +131, the data at +135 and ext4's allocation
   * committed at +140. */
  LmReplayRun both
      = { (T0 + 101) * S, (T0 + 102) * S, 0, 0, 1, LM_REPLAY_FS_EXT4 | LM_REPLAY_FS_BTRFS };
  lm_replay_stock (&both, 1, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 3);
  g_assert_cmpint (r.awake_s, ==, 5 + 9 + 5);
}

/* Where the records hold the dirty spells, each file's data goes at its own
 * expiry; where they do not, each filesystem kind's dirtied seconds are
 * one spell. */
static void
test_spells (void)
{
  LmReplayResult r;
  /* Two files made dirty on btrfs at +100 and +110 (and kept dirty): the
   * transaction committed at +130, the first file at +130, the second at
   * +140. */
  LmReplayRun runs[] = {
    { (T0 + 100) * S, (T0 + 101) * S, 0, 0, 1, LM_REPLAY_FS_BTRFS, 1, TRUE },
    { (T0 + 110) * S, (T0 + 111) * S, 0, 0, 1, LM_REPLAY_FS_BTRFS, 1, TRUE },
  };
  lm_replay_stock (runs, 2, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 2);
  g_assert_cmpint (r.awake_s, ==, 10);
  /* The same without spells: one spell from +100, written at +130. */
  runs[0].spells_known = runs[1].spells_known = FALSE;
  lm_replay_stock (runs, 2, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 1);
  g_assert_cmpint (r.awake_s, ==, 5);
  /* A dirtied second that began no spell (a file already dirty) adds a
   * change, no write-back: ext4 at +100 (a spell) and +120 (none): commits
   * +105 and +125, the file at +130, its allocation committed at +135. */
  LmReplayRun ext4[] = {
    { (T0 + 100) * S, (T0 + 101) * S, 0, 0, 1, LM_REPLAY_FS_EXT4, 1, TRUE },
    { (T0 + 120) * S, (T0 + 121) * S, 0, 0, 1, LM_REPLAY_FS_EXT4, 0, TRUE },
  };
  lm_replay_stock (ext4, 2, T0 * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 4);
  g_assert_cmpint (r.awake_s, ==, 20);
  /* A window from +110: the file made dirty at +100 is still written back
   * in it, at +130 (its allocation at +135), beside +120's commit (+125). */
  lm_replay_stock (ext4, 2, (T0 + 110) * S, (T0 + 3600) * S, 5, &r);
  g_assert_cmpuint (r.spinups, ==, 3);
  g_assert_cmpint (r.awake_s, ==, 15);
}

/* Where it had to assume, it says so; reads alone need no filesystem. */
static void
test_unsure (void)
{
  LmReplayRun runs[] = {
    { (T0 + 101) * S, (T0 + 102) * S, 1, 1, 0, 0 },
    { (T0 + 201) * S, (T0 + 202) * S, 0, 0, 1, LM_REPLAY_FS_EXT4, 1, TRUE },
  };
  g_assert_cmpuint (lm_replay_unsure (runs, 2), ==, 0);
  g_assert_null (lm_replay_unsure_to_string (0));
  /* A record from before the spells (a 12- or 16-byte activity record). */
  runs[1].spells_known = FALSE;
  g_assert_cmpuint (lm_replay_unsure (runs, 2), ==, LM_REPLAY_UNSURE_SPELLS_NOT_RECORDED);
  g_assert_nonnull (strstr (lm_replay_unsure_to_string (LM_REPLAY_UNSURE_SPELLS_NOT_RECORDED),
                            "before laptop-moded counted the files"));
  runs[1].spells_known = TRUE;
  runs[1].fs = 0; /* an older ledger's record */
  g_assert_cmpuint (lm_replay_unsure (runs, 2), ==, LM_REPLAY_UNSURE_FS_NOT_RECORDED);
  g_assert_nonnull (
      strstr (lm_replay_unsure_to_string (lm_replay_unsure (runs, 2)), "not recorded"));
  /* Not recorded is replayed as ext4, as before the field. */
  LmReplayResult as_unknown, as_ext4;
  lm_replay_stock (&runs[1], 1, T0 * S, (T0 + 3600) * S, 5, &as_unknown);
  runs[1].fs = LM_REPLAY_FS_EXT4;
  lm_replay_stock (&runs[1], 1, T0 * S, (T0 + 3600) * S, 5, &as_ext4);
  g_assert_cmpuint (as_unknown.spinups, ==, as_ext4.spinups);
  g_assert_cmpint (as_unknown.awake_s, ==, as_ext4.awake_s);
  runs[1].fs = LM_REPLAY_FS_OTHER | LM_REPLAY_FS_EXT4;
  g_assert_cmpuint (lm_replay_unsure (runs, 2), ==, LM_REPLAY_UNSURE_FS_NOT_MODELLED);
  g_assert_nonnull (
      strstr (lm_replay_unsure_to_string (LM_REPLAY_UNSURE_FS_NOT_MODELLED), "no model"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/replay/empty", test_empty);
  g_test_add_func ("/replay/reads-when-recorded", test_reads_when_recorded);
  g_test_add_func ("/replay/dirtying-expires", test_dirtying_expires);
  g_test_add_func ("/replay/journal-groups-changes", test_journal_groups_changes);
  g_test_add_func ("/replay/overlapping-and-unordered", test_overlapping_and_unordered);
  g_test_add_func ("/replay/huge-counts", test_huge_counts);
  g_test_add_func ("/replay/count-bench-rule", test_count_bench_rule);
  g_test_add_func ("/replay/ext4", test_ext4);
  g_test_add_func ("/replay/btrfs", test_btrfs);
  g_test_add_func ("/replay/xfs", test_xfs);
  g_test_add_func ("/replay/no-journal", test_no_journal);
  g_test_add_func ("/replay/two-filesystems-on-one-disk", test_two_filesystems_on_one_disk);
  g_test_add_func ("/replay/unsure", test_unsure);
  g_test_add_func ("/replay/spells", test_spells);
  return g_test_run ();
}
