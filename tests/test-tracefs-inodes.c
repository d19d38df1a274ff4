/* test-tracefs-inodes.c: the tracefs backend's inode dirtiers and writeback
 * windows (lm-tracefs-inodes.c): a thread's write is the owner of the inode
 * it writes back, never another's; kernel threads own nothing; clean
 * inodes stop standing for data after the grace; the bound holds. */
#include "lm-tracefs-inodes.h"

static LmAttribTask
task (guint32 pid, const char *name, gboolean kthread)
{
  LmAttribTask t = { 0 };

  t.tid = t.pid = pid;
  g_strlcpy (t.comm, name, sizeof t.comm);
  g_strlcpy (t.thread, name, sizeof t.thread);
  t.kthread = kthread;
  t.uid = kthread ? 0 : 1000;
  return t;
}

static void
test_windows (void)
{
  g_autoptr (LmTracefsInodes) in = lm_tracefs_inodes_new (16);
  LmAttribTask a = task (100, "writer-a", FALSE), b = task (200, "writer-b", FALSE);
  LmAttribTask k = task (2, "jbd2/sda1-8", TRUE), owner;
  guint64 ino = 0;

  lm_tracefs_inodes_dirtied (in, "8:0", 12, &a, 1000);
  lm_tracefs_inodes_dirtied (in, "8:0", 13, &b, 2000);
  /* A kernel thread's dirtying is nobody's. */
  lm_tracefs_inodes_dirtied (in, "8:0", 14, &k, 3000);
  g_assert_cmpuint (lm_tracefs_inodes_size (in), ==, 2);

  /* Outside a window: no owner. */
  g_assert_false (lm_tracefs_inodes_owner (in, 40, 4000, &owner, &ino));
  /* The flusher writes 12 (the oldest), then 13: each its own dirtier. */
  lm_tracefs_inodes_wb_start (in, 40, "8:0", 12);
  g_assert_true (lm_tracefs_inodes_owner (in, 40, 4000, &owner, &ino));
  g_assert_cmpstr (owner.comm, ==, "writer-a");
  g_assert_cmpuint (ino, ==, 12);
  /* Another thread at the same time is not in that window. */
  g_assert_false (lm_tracefs_inodes_owner (in, 41, 4000, &owner, &ino));
  lm_tracefs_inodes_wb_end (in, 40, "8:0", 12, FALSE, 5000);
  g_assert_false (lm_tracefs_inodes_owner (in, 40, 5001, &owner, &ino));
  lm_tracefs_inodes_wb_start (in, 40, "8:0", 13);
  g_assert_true (lm_tracefs_inodes_owner (in, 40, 6000, &owner, &ino));
  g_assert_cmpstr (owner.comm, ==, "writer-b");
  lm_tracefs_inodes_wb_end (in, 40, "8:0", 13, TRUE, 7000);

  /* 12 was written clean: within the grace it still stands (a worker may
   * submit late), after it not. A bdi of another disk is another inode. */
  lm_tracefs_inodes_wb_start (in, 41, "8:0", 12);
  g_assert_true (lm_tracefs_inodes_owner (in, 41, 5000 + LM_TRACEFS_CLEAN_GRACE_US, &owner, &ino));
  g_assert_false (lm_tracefs_inodes_owner (in, 41, 5001 + LM_TRACEFS_CLEAN_GRACE_US, &owner, &ino));
  lm_tracefs_inodes_wb_end (in, 41, "8:0", 12, FALSE, 9000);
  lm_tracefs_inodes_wb_start (in, 41, "8:16", 12);
  g_assert_false (lm_tracefs_inodes_owner (in, 41, 9000, &owner, &ino));
  lm_tracefs_inodes_wb_end (in, 41, "8:16", 12, FALSE, 9000);

  /* Dirtied again by another: the new dirtier, dirty again. */
  lm_tracefs_inodes_dirtied (in, "8:0", 12, &b, 10000000000);
  lm_tracefs_inodes_wb_start (in, 42, "8:0", 12);
  g_assert_true (lm_tracefs_inodes_owner (in, 42, 20000000000, &owner, &ino));
  g_assert_cmpstr (owner.comm, ==, "writer-b");
}

static void
test_bound (void)
{
  g_autoptr (LmTracefsInodes) in = lm_tracefs_inodes_new (4);
  LmAttribTask a = task (100, "writer-a", FALSE), owner;
  guint64 ino;

  for (guint64 i = 1; i <= 10; i++)
    lm_tracefs_inodes_dirtied (in, "btrfs-1", i, &a, (gint64) i);
  g_assert_cmpuint (lm_tracefs_inodes_size (in), ==, 4);
  /* The least recently dirtied went first. */
  lm_tracefs_inodes_wb_start (in, 7, "btrfs-1", 6);
  g_assert_false (lm_tracefs_inodes_owner (in, 7, 20, &owner, &ino));
  lm_tracefs_inodes_wb_start (in, 7, "btrfs-1", 7);
  g_assert_true (lm_tracefs_inodes_owner (in, 7, 20, &owner, &ino));
  /* Windows are bounded too: many threads, no growth past the cap. */
  for (guint32 tid = 1000; tid < 5000; tid++)
    lm_tracefs_inodes_wb_start (in, tid, "btrfs-1", 7);
  g_assert_true (lm_tracefs_inodes_owner (in, 4999, 20, &owner, &ino));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tracefs-inodes/windows", test_windows);
  g_test_add_func ("/tracefs-inodes/bound", test_bound);
  return g_test_run ();
}
