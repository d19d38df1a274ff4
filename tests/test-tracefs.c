/* test-tracefs.c: the trace_pipe line parser (lm-tracefs-parse.c), with
 * lines as ftrace prints them, odd task names and broken lines; the task
 * events the backend follows threads with. */
#include "lm-tracefs-parse.h"

static LmTracefsKind
parse (const char *line, LmTracefsRecord *r)
{
  return lm_tracefs_parse_line (line, strlen (line), r);
}

static void
test_bio (void)
{
  LmTracefsRecord r;

  g_assert_cmpint (parse ("            bash-2345    [001] d..1.  1234.567890: block_bio_queue: 8,0 "
                          "R 2048 + 8 [bash]",
                          &r),
                   ==, LM_TRACEFS_BIO);
  g_assert_cmpstr (r.comm, ==, "bash");
  g_assert_cmpuint (r.pid, ==, 2345);
  g_assert_cmpint (r.usec, ==, G_GINT64_CONSTANT (1234567890));
  g_assert_cmpuint (r.major, ==, 8);
  g_assert_cmpuint (r.minor, ==, 0);
  g_assert_false (r.write);
  g_assert_cmpuint (r.sector, ==, 2048);
  g_assert_cmpuint (r.sectors, ==, 8);

  g_assert_cmpint (parse ("     kworker/u8:3-123     [000] .....   98.000001: block_bio_queue: "
                          "259,0 WS 123456 + 16 [kworker/u8:3]",
                          &r),
                   ==, LM_TRACEFS_BIO);
  g_assert_cmpstr (r.comm, ==, "kworker/u8:3");
  g_assert_true (r.write);
  g_assert_cmpuint (r.major, ==, 259);
}

/* Task names hold spaces and dashes; "<...>" when ftrace forgot it. */
static void
test_names (void)
{
  LmTracefsRecord r;

  g_assert_cmpint (parse ("  Web Content-4242    [003] ..... 100.000100: block_bio_queue: 7,0 D 0 "
                          "+ 8 [Web Content]",
                          &r),
                   ==, LM_TRACEFS_BIO);
  g_assert_cmpstr (r.comm, ==, "Web Content");
  g_assert_cmpuint (r.pid, ==, 4242);
  g_assert_true (r.write); /* a discard writes */

  g_assert_cmpint (
      parse ("   my-prog-name-1-42    [001] ..... 1.000000: writeback_mark_inode_dirty: "
             "bdi 7:3: ino=99 state=I_DIRTY_PAGES flags=I_DIRTY_PAGES",
             &r),
      ==, LM_TRACEFS_DIRTIED);
  g_assert_cmpstr (r.comm, ==, "my-prog-name-1");
  g_assert_cmpuint (r.pid, ==, 42);
  g_assert_cmpuint (r.major, ==, 7);
  g_assert_cmpuint (r.minor, ==, 3);
  g_assert_cmpuint (r.ino, ==, 99);
  g_assert_cmpstr (r.bdi, ==, "");

  /* A thread's own name, as a browser's cache thread (the process is
   * looked up later, in /proc); btrfs dirties through a bdi of its own,
   * printed by name (as 6.18 prints it). */
  g_assert_cmpint (
      parse ("      Cache2 I/O-5123    [001] ..... 77.000001: writeback_mark_inode_dirty: "
             "bdi btrfs-12: ino=257 state= flags=I_DIRTY_SYNC|I_DIRTY_DATASYNC|I_DIRTY_PAGES",
             &r),
      ==, LM_TRACEFS_DIRTIED);
  g_assert_cmpstr (r.comm, ==, "Cache2 I/O");
  g_assert_cmpuint (r.pid, ==, 5123);
  g_assert_cmpstr (r.bdi, ==, "btrfs-12");
  g_assert_cmpuint (r.major, ==, 0);
  g_assert_cmpuint (r.minor, ==, 0);
  g_assert_cmpuint (r.ino, ==, 257);

  g_assert_cmpint (
      parse ("           <...>-777     [002] ..... 5.5: block_bio_queue: 8,16 RA 99 + 256 [<...>]",
             &r),
      ==, LM_TRACEFS_BIO);
  g_assert_cmpstr (r.comm, ==, "<...>");
  g_assert_cmpuint (r.minor, ==, 16);

  /* Longer than the kernel's 15 bytes: cut, never overflowing. */
  g_assert_cmpint (
      parse ("a-very-long-task-name-that-goes-on-1 [0] . 1.0: block_bio_queue: 8,0 R 1 "
             "+ 1 [x]",
             &r),
      ==, LM_TRACEFS_BIO);
  g_assert_cmpstr (r.comm, ==, "a-very-long-tas");
}

/* The writeback events around one inode's writeback, and the data flag of
 * a dirtying: a time stamp marked dirty (sync(1), fsync) is no data. */
static void
test_writeback_events (void)
{
  LmTracefsRecord r;

  g_assert_cmpint (parse ("              dd-26531   [000] .....  1792.926921: "
                          "writeback_mark_inode_dirty: bdi 254:0: ino=10953180 state= "
                          "flags=I_DIRTY_PAGES",
                          &r),
                   ==, LM_TRACEFS_DIRTIED);
  g_assert_true (r.pages);
  g_assert_cmpuint (r.ino, ==, 10953180);
  g_assert_cmpint (parse ("            sync-26535   [000] .....  1793.231792: "
                          "writeback_mark_inode_dirty: bdi 254:0: ino=10953180 "
                          "state=I_DIRTY_PAGES flags=I_DIRTY_SYNC",
                          &r),
                   ==, LM_TRACEFS_DIRTIED);
  g_assert_false (r.pages);
  g_assert_cmpint (parse ("   kworker/u8:3-26535   [000] .....  1793.232691: "
                          "writeback_single_inode_start: bdi btrfs-3: ino=257 "
                          "state=I_DIRTY_SYNC|I_DIRTY_PAGES|I_SYNC dirtied_when=4295340504 age=0 "
                          "index=4 to_write=0 wrote=0 cgroup_ino=1",
                          &r),
                   ==, LM_TRACEFS_WB_START);
  g_assert_cmpstr (r.bdi, ==, "btrfs-3");
  g_assert_cmpuint (r.ino, ==, 257);
  g_assert_cmpuint (r.pid, ==, 26535);
  g_assert_cmpint (parse ("   kworker/u8:3-26535   [000] .....  1793.232792: "
                          "writeback_single_inode: bdi 254:0: ino=10953180 state=I_SYNC "
                          "dirtied_when=4295340504 age=0 index=4 to_write=0 wrote=0 cgroup_ino=1",
                          &r),
                   ==, LM_TRACEFS_WB_END);
  g_assert_false (r.dirty);
  g_assert_cmpuint (r.major, ==, 254);
  g_assert_cmpint (parse ("   kworker/u8:3-26535   [000] .....  1793.232792: "
                          "writeback_single_inode: bdi 254:0: ino=7 state=I_DIRTY_PAGES|I_SYNC "
                          "dirtied_when=4295340504 age=0 index=4 to_write=0 wrote=0 cgroup_ino=1",
                          &r),
                   ==, LM_TRACEFS_WB_END);
  g_assert_true (r.dirty);
}

static void
test_rejected (void)
{
  static const char *const lines[] = {
    "",
    "# tracer: nop",
    "bash-1 [0] . 1.0: block_bio_queue: 8,0 R 2048 + 0 [bash]", /* a flush: no data */
    "bash-1 [0] . 1.0: block_bio_queue: 8,0 R 2048",
    "bash-1 [0] . 1.0: block_bio_queue: 8 R 2048 + 8 [bash]",
    "bash-1 [0] . 1.0: block_bio_queue: 8,0,1 R 2048 + 8 [bash]",
    "bash-1 [0] . 1.0: block_bio_queue: 8,x R 2048 + 8 [bash]",
    "bash-1 [0] . 1.0: block_bio_queue: 8,0 R -5 + 8 [bash]",
    "bash-1 [0] . 1.0: block_bio_queue: 8,0 R 5 + 99999999999 [bash]",
    "bash [0] . 1.0: block_bio_queue: 8,0 R 2048 + 8 [bash]",         /* no pid */
    "bash-1 . 1.0: block_bio_queue: 8,0 R 2048 + 8 [bash]",           /* no cpu */
    "[0] . 1.0: block_bio_queue: 8,0 R 2048 + 8 [bash]",              /* nothing before the cpu */
    "bash-1 [0] . 1.1234567: block_bio_queue: 8,0 R 2048 + 8 [bash]", /* µs out of range */
    "bash-1 [0] . 99999999999.0: block_bio_queue: 8,0 R 2 + 8 [x]",
    "bash-1 [0] . 1: block_bio_queue: 8,0 R 2048 + 8 [bash]",
    "vim-1 [0] . 1.0: writeback_mark_inode_dirty: bdi 8:0 ino=12",
    "vim-1 [0] . 1.0: writeback_mark_inode_dirty: dev 8:0: ino=12",
    "vim-1 [0] . 1.0: writeback_mark_inode_dirty: bdi 8:0: inode=12",
    "vim-1 [0] . 1.0: writeback_mark_inode_dirty: bdi :: ino=12",
    /* bdi names that could walk a path when looked up in sysfs */
    "vim-1 [0] . 1.0: writeback_mark_inode_dirty: bdi ..: ino=12",
    "vim-1 [0] . 1.0: writeback_mark_inode_dirty: bdi a/b: ino=12",
    "vim-1 [0] . 1.0: writeback_mark_inode_dirty: bdi .hidden: ino=12",
    "vim-1 [0] . 1.0: writeback_mark_inode_dirty: bdi : ino=12",
    "vim-1 [0] . 1.0: writeback_mark_inode_dirty: bdi "
    "a-name-of-thirty-two-bytes-longx: ino=12",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (lines); i++)
    {
      LmTracefsRecord r;
      g_test_message ("%s", lines[i]);
      g_assert_cmpint (parse (lines[i], &r), ==, LM_TRACEFS_NONE);
      g_assert_cmpint (r.kind, ==, LM_TRACEFS_NONE);
    }
}

/* The length is the line: bytes after it are not looked at, a NUL in it
 * ends it. */
static void
test_length (void)
{
  const char line[] = "bash-1 [0] . 1.0: block_bio_queue: 8,0 R 2048 + 8 [bash]";
  LmTracefsRecord r;

  g_assert_cmpint (lm_tracefs_parse_line (line, strlen (line) - 12, &r), ==, LM_TRACEFS_NONE);
  g_assert_cmpint (lm_tracefs_parse_line (line, sizeof line, &r), ==, LM_TRACEFS_BIO);
  const char cut[] = "bash-1 [0] . 1.0: block_bio_queue: 8,0 R 2048 +\0 8 [x]";
  g_assert_cmpint (lm_tracefs_parse_line (cut, sizeof cut - 1, &r), ==, LM_TRACEFS_NONE);
}

/* block_rq_issue lines of driver-private requests: recorded on 6.18
 * (virtio-blk's serial-number request, read by cat from sysfs), and the
 * 6.1 format (no I/O priority) of hdparm -I's SG_IO on an AHCI disk. */
static void
test_passthrough (void)
{
  LmTracefsRecord r;

  g_assert_cmpint (parse ("             cat-17701   [000] ..... 15588.401575: block_rq_issue: "
                          "254,0 N 20 () 0 + 0 none,0,0 [cat]",
                          &r),
                   ==, LM_TRACEFS_PASSTHROUGH);
  g_assert_cmpstr (r.comm, ==, "cat");
  g_assert_cmpuint (r.pid, ==, 17701);
  g_assert_cmpint (r.usec, ==, G_GINT64_CONSTANT (15588401575));
  g_assert_cmpuint (r.major, ==, 254);
  g_assert_cmpuint (r.minor, ==, 0);
  g_assert_cmpuint (r.bytes, ==, 20);
  g_assert_false (r.write);

  g_assert_cmpint (parse ("          hdparm-311     [000] .....    61.250001: block_rq_issue: "
                          "8,0 N 512 () 0 + 0 [hdparm]",
                          &r),
                   ==, LM_TRACEFS_PASSTHROUGH);
  g_assert_cmpstr (r.comm, ==, "hdparm");
  g_assert_cmpuint (r.major, ==, 8);
  g_assert_cmpuint (r.bytes, ==, 512);

  /* Before 5.x the command's bytes were printed, with spaces. */
  g_assert_cmpint (parse ("  smartctl-9 [1] . 2.000003: block_rq_issue: 8,16 N 512 (85 08 0e 00 00 "
                          "00 01 00 00 00 00 00 00 40 ec 00) 0 + 0 [smartctl]",
                          &r),
                   ==, LM_TRACEFS_PASSTHROUGH);
  g_assert_cmpuint (r.minor, ==, 16);

  const char *const others[] = {
    /* ordinary requests: their bios were already seen */
    "cat-1 [0] . 1.0: block_rq_issue: 254,0 R 4096 () 2048 + 8 none,0,0 [cat]",
    "kworker/0:1-5 [0] . 1.0: block_rq_issue: 254,0 WS 4096 () 88 + 8 none,0,0 [kworker/0:1]",
    "kworker/0:1-5 [0] . 1.0: block_rq_issue: 254,0 FF 0 () 0 + 0 none,0,0 [kworker/0:1]",
    /* "N" with sectors: zone management, write-zeroes */
    "mkfs-2 [0] . 1.0: block_rq_issue: 259,0 N 0 () 524288 + 0 none,0,0 [mkfs]",
    "mkfs-2 [0] . 1.0: block_rq_issue: 259,0 N 0 () 0 + 2048 none,0,0 [mkfs]",
    /* broken */
    "cat-1 [0] . 1.0: block_rq_issue: 254,0 N 20 0 + 0 [cat]",
    "cat-1 [0] . 1.0: block_rq_issue: 254,0 N 20 ()0 + 0 [cat]",
    "cat-1 [0] . 1.0: block_rq_issue: 254,0 N x () 0 + 0 [cat]",
    "cat-1 [0] . 1.0: block_rq_issue: 254 N 20 () 0 + 0 [cat]",
    "cat-1 [0] . 1.0: block_rq_issue: 254,0 N 20 () 0 +",
    "cat-1 [0] . 1.0: block_rq_issue: 254,0 N 20 () 0 - 0 [cat]",
    "cat [0] . 1.0: block_rq_issue: 254,0 N 20 () 0 + 0 [cat]",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (others); i++)
    {
      g_test_message ("%s", others[i]);
      g_assert_cmpint (parse (others[i], &r), ==, LM_TRACEFS_NONE);
      g_assert_cmpuint (r.pid, ==, 0);
    }
}

/* Task events, as 6.18 printed them for a python program naming a thread
 * (prctl), and what a process choosing its names could do with them. */
static void
test_task_events (void)
{
  LmTracefsRecord r;

  g_assert_cmpint (
      parse ("         python3-8673    [000] .....  1198.155678: task_newtask: pid=8678 "
             "comm=python3 clone_flags=3d0f00 oom_score_adj=0",
             &r),
      ==, LM_TRACEFS_NEWTASK);
  g_assert_cmpuint (r.pid, ==, 8673);
  g_assert_cmpuint (r.task_pid, ==, 8678);
  g_assert_cmpstr (r.task_name, ==, "python3");
  g_assert_cmphex (r.clone_flags, ==, 0x3d0f00);
  g_assert_cmpint (r.usec, ==, G_GINT64_CONSTANT (1198155678));

  g_assert_cmpint (
      parse ("      Cache2 I/O-8678    [000] .....  1198.155999: task_rename: pid=8678 "
             "oldcomm=python3 newcomm=Cache2 I/O oom_score_adj=0",
             &r),
      ==, LM_TRACEFS_RENAME);
  g_assert_cmpuint (r.pid, ==, 8678);
  g_assert_cmpuint (r.task_pid, ==, 8678);
  g_assert_cmpstr (r.task_name, ==, "Cache2 I/O");

  /* Without the pid field: the printer's own rename. */
  g_assert_cmpint (parse ("    iou-wrk-4242-4250    [001] .....  10.000001: task_rename: "
                          "oldcomm=fio newcomm=iou-wrk-4242 oom_score_adj=0",
                          &r),
                   ==, LM_TRACEFS_RENAME);
  g_assert_cmpuint (r.task_pid, ==, 4250);
  g_assert_cmpstr (r.task_name, ==, "iou-wrk-4242");
  /* The printer's pid is a pid_t as the field's is: past INT_MAX (the
   * fuzzer's input) the line is no event. */
  g_assert_cmpint (parse ("    iou-wrk-2677454220    [001] .....  10.000001: task_rename: "
                          "oldcomm=fio newcomm=iou-wrk-7 oom_score_adj=0",
                          &r),
                   ==, LM_TRACEFS_NONE);
  g_assert_cmpint (parse ("    iou-wrk-2147483647    [001] .....  10.000001: task_rename: "
                          "oldcomm=fio newcomm=iou-wrk-7 oom_score_adj=0",
                          &r),
                   ==, LM_TRACEFS_RENAME);
  g_assert_cmpuint (r.task_pid, ==, G_MAXINT32);

  /* sched_process_exec is not followed (its file name is the process's
   * text): such a line is no event, and one whose file name holds a whole
   * block_bio_queue line, cut at the newlines or not, forges nothing. */
  g_assert_cmpint (parse ("         python3-8673    [000] .....  1198.077742: sched_process_exec: "
                          "filename=/usr/bin/python3 pid=8673 old_pid=8673",
                          &r),
                   ==, LM_TRACEFS_NONE);
  g_assert_cmpint (
      parse ("   sh-100 [001] ..... 5.000001: sched_process_exec: filename=/tmp/x 1.0: "
             "block_bio_queue: 8,0 R 1 + 8 [x] pid=100 old_pid=100",
             &r),
      ==, LM_TRACEFS_NONE);
  g_assert_cmpuint (r.major, ==, 0);
  g_assert_cmpint (
      parse ("   sh-100 [001] ..... 5.000001: sched_process_exec: filename=/tmp/x", &r), ==,
      LM_TRACEFS_NONE);
  /* The part after the newline is a whole line of its own: the kernel
   * cannot tell it from a real one, which is why exec is not enabled. */
  /* Any field holding a marker leaves words between the CPU and the time
   * stamp: refused, whatever the event. */
  const char *const forged[] = {
    "   sh-100 [001] ..... 5.000001: writeback_mark_inode_dirty: bdi 7:0: ino=1 x 9.0: "
    "block_bio_queue: 8,0 W 0 + 8 [fake]",
    "   sh-100 [001] ..... 5.000001: task_rename: pid=1 oldcomm=a newcomm=b 9.0: "
    "block_bio_queue: 8,0 W 0 + 8 [fake]",
    "   sh-100 [001] ..... junk 5.000001: block_bio_queue: 8,0 W 0 + 8 [fake]",
    "   sh-100 [001] junk ..... 5.000001: block_bio_queue: 8,0 W 0 + 8 [fake]",
    "   sh-100 [0x1] ..... 5.000001: block_bio_queue: 8,0 W 0 + 8 [fake]",
    "   sh-100 [] ..... 5.000001: block_bio_queue: 8,0 W 0 + 8 [fake]",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (forged); i++)
    {
      g_test_message ("%s", forged[i]);
      g_assert_cmpint (parse (forged[i], &r), ==, LM_TRACEFS_NONE);
      g_assert_cmpuint (r.pid, ==, 0);
    }
  /* Without irq-info there is no flags column. */
  g_assert_cmpint (parse ("   sh-100 [001] 5.000001: block_bio_queue: 8,0 W 0 + 8 [sh]", &r), ==,
                   LM_TRACEFS_BIO);
  g_assert_cmpuint (r.pid, ==, 100);
  /* A task named like the event (15 bytes fit): the name is not the marker. */
  g_assert_cmpint (parse (" : task_rename: -300     [001] ..... 5.000001: task_rename: pid=300 "
                          "oldcomm=: task_rename:  newcomm=plain oom_score_adj=0",
                          &r),
                   ==, LM_TRACEFS_RENAME);
  g_assert_cmpuint (r.task_pid, ==, 300);
  g_assert_cmpstr (r.task_name, ==, "plain");
  /* New names with spaces and the next field's text in them. */
  g_assert_cmpint (parse ("   x-301  [001] ..... 5.000001: task_rename: pid=301 oldcomm=x "
                          "newcomm=a newcomm=b oom_score_adj=0",
                          &r),
                   ==, LM_TRACEFS_RENAME);
  g_assert_cmpstr (r.task_name, ==, "a newcomm=b");
  g_assert_cmpint (parse ("   x-302  [001] ..... 5.000001: task_newtask: pid=303 comm=a "
                          "clone_flags=1 clone_flags=11 oom_score_adj=0",
                          &r),
                   ==, LM_TRACEFS_NEWTASK);
  g_assert_cmpstr (r.task_name, ==, "a clone_flags=1");
  g_assert_cmphex (r.clone_flags, ==, 0x11);

  /* ftrace's note of dropped events; a task can only look like one after
   * a space. */
  g_assert_cmpint (parse ("CPU:1 [LOST 1284 EVENTS]", &r), ==, LM_TRACEFS_LOST);
  g_assert_cmpint (parse ("CPU:0 [LOST EVENTS]", &r), ==, LM_TRACEFS_LOST);
  /* Only exactly ftrace's note: what a task's name could make of one is not. */
  g_assert_cmpint (parse ("CPU:0 [LOST 12 EVENTS] x", &r), ==, LM_TRACEFS_NONE);
  g_assert_cmpint (parse ("CPU:0 [LOST 12EVENTS]", &r), ==, LM_TRACEFS_NONE);
  /* A task that named itself "CPU:1 [LOST 1": its own I/O, not a note. */
  g_assert_cmpint (
      parse ("CPU:1 [LOST 1-1234 [001] ..... 5.000001: block_bio_queue: 8,0 R 0 + 8 [a]", &r), ==,
      LM_TRACEFS_BIO);
  g_assert_cmpuint (r.pid, ==, 1234);
  g_assert_cmpint (parse (" CPU:1 [LOST 1 E-9  [001] ..... 5.000001: task_rename: pid=9 oldcomm=a "
                          "newcomm=b oom_score_adj=0",
                          &r),
                   ==, LM_TRACEFS_RENAME);

  const char *const broken[] = {
    "   x-1  [001] ..... 5.000001: task_newtask: pid=2 comm=x oom_score_adj=0",
    "   x-1  [001] ..... 5.000001: task_newtask: pid=x comm=x clone_flags=0 oom_score_adj=0",
    "   x-1  [001] ..... 5.000001: task_newtask: pid=2 comm=x clone_flags=zz oom_score_adj=0",
    "   x-1  [001] ..... 5.000001: task_newtask: pid=2 comm=sixteen-bytes-xx clone_flags=0 "
    "oom_score_adj=0",
    "   x-1  [001] ..... 5.000001: task_rename: pid=2 oldcomm=x oom_score_adj=0",
    "   x-1  [001] ..... 5.000001: task_rename: pid=2 oldcomm=x newcomm=y",
    "   x-1  [001] ..... 5.000001: task_rename: pid=-2 oldcomm=x newcomm=y oom_score_adj=0",
    "   x-1  [001] ..... 5.000001: task_rename: oldcomm=x newcomm=sixteen-bytes-xx "
    "oom_score_adj=0",
    "   x-1  [001] ..... 5.000001: sched_process_exec: filename=/bin/x pid=2 old_pid=2",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (broken); i++)
    {
      g_test_message ("%s", broken[i]);
      g_assert_cmpint (parse (broken[i], &r), ==, LM_TRACEFS_NONE);
      g_assert_cmpuint (r.task_pid, ==, 0);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tracefs/bio", test_bio);
  g_test_add_func ("/tracefs/names", test_names);
  g_test_add_func ("/tracefs/writeback-events", test_writeback_events);
  g_test_add_func ("/tracefs/rejected", test_rejected);
  g_test_add_func ("/tracefs/length", test_length);
  g_test_add_func ("/tracefs/passthrough", test_passthrough);
  g_test_add_func ("/tracefs/task-events", test_task_events);
  return g_test_run ();
}
