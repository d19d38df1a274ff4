/* test-tracefs-tasks.c: the tracefs backend's thread → process map
 * (lm-tracefs-tasks.c) on a fake /proc: first sight, the task events
 * (new threads and processes, renames, exec), a pid reused by another
 * task, and the bound with its least-recently-used eviction; then the
 * spin-up model fed with what it resolves. */
#include <time.h>
#include <unistd.h>

#include "lm-attrib.h"
#include "lm-tracefs-tasks.h"
#include "test-fakeroot.h"

#define CLONE_THREAD 0x00010000
#define THREAD_FLAGS 0x3d0f00 /* as pthread_create() asks (CLONE_THREAD among them) */
#define PF_KTHREAD 0x00200000

/* Now on the trace clock (CLOCK_MONOTONIC), µs. */
static gint64
now_us (void)
{
  return g_get_monotonic_time ();
}

/* A start time, in /proc's ticks since boot, @delta_s from now. */
static guint64
start_ticks (int delta_s)
{
  struct timespec boot;
  long hz = sysconf (_SC_CLK_TCK);

  g_assert_cmpint (clock_gettime (CLOCK_BOOTTIME, &boot), ==, 0);
  gint64 t = (gint64) boot.tv_sec + delta_s;
  return t > 0 ? (guint64) t * (guint64) hz : 0;
}

/* /proc/PID as the kernel shows a task: its own name, its process, its
 * flags and when it started. */
static void
put_task (LmFakeRoot *f, guint32 pid, guint32 tgid, const char *name, guint uid, guint flags,
          guint64 started)
{
  g_autofree char *comm = g_strdup_printf ("proc/%u/comm", pid);
  g_autofree char *status = g_strdup_printf ("proc/%u/status", pid);
  g_autofree char *stat = g_strdup_printf ("proc/%u/stat", pid);
  g_autofree char *name_nl = g_strdup_printf ("%s\n", name);
  g_autofree char *status_text = g_strdup_printf (
      "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%u\nNgid:\t0\nPid:\t%u\n"
      "PPid:\t1\nUid:\t%u\t%u\t%u\t%u\n",
      name, tgid, pid, uid, uid, uid, uid);
  g_autofree char *stat_text
      = g_strdup_printf ("%u (%s) S 1 %u %u 0 -1 %u 0 0 0 0 0 0 0 0 20 0 1 0 %" G_GUINT64_FORMAT
                         " 1000 100 18446744073709551615\n",
                         pid, name, tgid, tgid, flags, started);

  lm_fake_root_put (f, comm, name_nl);
  lm_fake_root_put (f, status, status_text);
  lm_fake_root_put (f, stat, stat_text);
}

static void
assert_task (const LmAttribTask *t, guint32 pid, const char *comm, const char *thread)
{
  g_assert_cmpuint (t->pid, ==, pid);
  g_assert_cmpstr (t->comm, ==, comm);
  g_assert_cmpstr (t->thread, ==, thread);
}

/* A thread seen for the first time is asked about in /proc: its process
 * is its thread group's, named after the leader. */
static void
test_first_sight (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmTracefsTasks) tasks = lm_tracefs_tasks_new (16);
  LmAttribTask t;

  put_task (f, 1234, 1234, "firefox-esr", 1000, 0x400000, start_ticks (-100));
  put_task (f, 1301, 1234, "Cache2 I/O", 1000, 0x400040, start_ticks (-50));
  put_task (f, 40, 40, "kworker/u8:0", 0, PF_KTHREAD, start_ticks (-1000));

  /* ftrace's name cache forgot it: "<...>". */
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 1301, "<...>", now_us (), &t));
  assert_task (&t, 1234, "firefox-esr", "Cache2 I/O");
  g_assert_cmpuint (t.tid, ==, 1301);
  g_assert_cmpint (t.uid, ==, 1000);
  g_assert_false (t.kthread);
  g_assert_cmpuint (lm_tracefs_tasks_size (tasks), ==, 2);

  g_assert_true (lm_tracefs_tasks_lookup (tasks, 40, "kworker/u8:0", now_us (), &t));
  g_assert_true (t.kthread);
  g_assert_cmpint (t.uid, ==, 0);

  /* Neither the map nor /proc: as printed, its own process. */
  g_assert_false (lm_tracefs_tasks_lookup (tasks, 999, "gone", now_us (), &t));
  assert_task (&t, 999, "gone", "gone");
  g_assert_cmpint (t.uid, ==, -1);
  g_assert_false (t.kthread);
  /* The idle task, for I/O issued from an interrupt: the kernel's. */
  g_assert_false (lm_tracefs_tasks_lookup (tasks, 0, "swapper/1", now_us (), &t));
  g_assert_true (t.kthread);
}

/* Threads made and renamed while watched, io_uring's workers among them:
 * all of the process that made them, after it exited too. */
static void
test_newtask_rename (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmTracefsTasks) tasks = lm_tracefs_tasks_new (16);
  LmAttribTask t;
  gint64 now = now_us ();

  put_task (f, 4242, 4242, "fio", 1000, 0, start_ticks (-10));
  lm_tracefs_tasks_newtask (tasks, 4242, 4250, "fio", THREAD_FLAGS, now);
  lm_tracefs_tasks_rename (tasks, 4250, "iou-wrk-4242", now + 1);
  lm_tracefs_tasks_newtask (tasks, 4242, 4251, "fio", THREAD_FLAGS, now + 2);
  lm_tracefs_tasks_rename (tasks, 4251, "Cache2 I/O", now + 3);

  /* /proc never heard of the threads: they exited before their lines
   * were read. The uid is the process's. */
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 4250, "<...>", now + 4, &t));
  assert_task (&t, 4242, "fio", "iou-wrk-4242");
  g_assert_cmpint (t.uid, ==, 1000);
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 4251, "fio", now + 4, &t));
  assert_task (&t, 4242, "fio", "Cache2 I/O");

  /* The leader renames itself: its threads' process has the new name. */
  lm_tracefs_tasks_rename (tasks, 4242, "fio-main", now + 5);
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 4250, "iou-wrk-4242", now + 6, &t));
  assert_task (&t, 4242, "fio-main", "iou-wrk-4242");

  /* A child process (no CLONE_THREAD) is a process of its own. */
  lm_tracefs_tasks_newtask (tasks, 4242, 4260, "fio-main", 0x1200011, now + 7);
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 4260, "fio-main", now + 8, &t));
  assert_task (&t, 4260, "fio-main", "fio-main");

  /* A thread of a process the map has not seen, renamed: /proc says whose. */
  put_task (f, 700, 700, "thunderbird", 1000, 0, start_ticks (-10));
  put_task (f, 701, 700, "thunderbird", 1000, 0, start_ticks (-10));
  lm_tracefs_tasks_rename (tasks, 701, "IndexedDB #1", now + 9);
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 701, "<...>", now + 10, &t));
  assert_task (&t, 700, "thunderbird", "IndexedDB #1");

  /* Kernel threads are made by kthreadd. */
  put_task (f, 2, 2, "kthreadd", 0, PF_KTHREAD, start_ticks (-1000));
  lm_tracefs_tasks_newtask (tasks, 2, 90, "kthreadd", 0x800711, now + 11);
  lm_tracefs_tasks_rename (tasks, 90, "kworker/1:2", now + 12);
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 90, "kworker/1:2", now + 13, &t));
  g_assert_true (t.kthread);
  assert_task (&t, 90, "kworker/1:2", "kworker/1:2");
}

/* An exec is a rename (the kernel names the task after its file) under
 * the leader's pid: the program's name; /proc is asked again for the uid
 * (a set-user-ID file); a thread's exec leaves the leader named. A helper a
 * kernel thread starts (modprobe) is a process: only kthreadd makes kernel
 * threads. */
static void
test_exec (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmTracefsTasks) tasks = lm_tracefs_tasks_new (16);
  LmAttribTask t;
  gint64 now = now_us ();

  put_task (f, 500, 500, "bash", 1000, 0, start_ticks (-10));
  lm_tracefs_tasks_newtask (tasks, 500, 510, "bash", 0x1200011, now);
  put_task (f, 510, 510, "dd", 1000, 0, start_ticks (-1));
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 510, "bash", now + 1, &t));
  g_assert_cmpint (t.uid, ==, 1000);
  /* exec of a set-user-ID dd: renamed, and /proc says root now. */
  put_task (f, 510, 510, "dd", 0, 0, start_ticks (-1));
  lm_tracefs_tasks_rename (tasks, 510, "dd", now + 2);
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 510, "bash", now + 3, &t));
  assert_task (&t, 510, "dd", "dd");
  g_assert_cmpint (t.uid, ==, 0);

  /* A thread (520, of 510) execs: the rename comes under 510. */
  lm_tracefs_tasks_newtask (tasks, 510, 520, "dd", THREAD_FLAGS, now + 8);
  lm_tracefs_tasks_rename (tasks, 510, "sh", now + 9);
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 510, "sh", now + 11, &t));
  assert_task (&t, 510, "sh", "sh");

  /* modprobe started by a kworker: a process from the start. */
  put_task (f, 60, 60, "kworker/0:1", 0, PF_KTHREAD, start_ticks (-1000));
  lm_tracefs_tasks_newtask (tasks, 60, 530, "kworker/0:1", 0x800100, now + 12);
  lm_tracefs_tasks_rename (tasks, 530, "modprobe", now + 13);
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 530, "modprobe", now + 14, &t));
  g_assert_false (t.kthread);
  assert_task (&t, 530, "modprobe", "modprobe");
  /* What kthreadd makes is the kernel's. */
  put_task (f, 2, 2, "kthreadd", 0, PF_KTHREAD, start_ticks (-1000));
  lm_tracefs_tasks_newtask (tasks, 2, 540, "kthreadd", 0x800100, now + 15);
  lm_tracefs_tasks_rename (tasks, 540, "kworker/1:2", now + 16);
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 540, "kworker/1:2", now + 17, &t));
  g_assert_true (t.kthread);
}

/* A writer that exited before its line was read is never blamed on the
 * pid's next owner: /proc's task that started after the line is not it,
 * and a new task seen being made replaces the old one only from then on. */
static void
test_reuse (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmTracefsTasks) tasks = lm_tracefs_tasks_new (16);
  LmAttribTask t;
  gint64 line = now_us () - 5 * G_USEC_PER_SEC;

  /* Seen first after the pid went to a task started 2 s after the line. */
  put_task (f, 800, 800, "new-owner", 0, 0, start_ticks (-3));
  g_assert_false (lm_tracefs_tasks_lookup (tasks, 800, "dd", line, &t));
  assert_task (&t, 800, "dd", "dd");
  g_assert_cmpint (t.uid, ==, -1);
  g_assert_cmpuint (lm_tracefs_tasks_size (tasks), ==, 0);
  /* Its own lines, later, are its own. */
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 800, "new-owner", now_us (), &t));
  assert_task (&t, 800, "new-owner", "new-owner");

  /* A thread whose leader's pid is another's now: the thread's name. */
  put_task (f, 810, 811, "worker", 1000, 0, start_ticks (-10));
  put_task (f, 811, 811, "new-owner", 0, 0, start_ticks (-3));
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 810, "worker", line, &t));
  assert_task (&t, 811, "worker", "worker");

  /* Known from its creation; its pid reused by another, made later. */
  gint64 now = now_us ();
  put_task (f, 900, 900, "bash", 1000, 0, start_ticks (-10));
  put_task (f, 1, 1, "systemd", 0, 0, start_ticks (-1000));
  lm_tracefs_tasks_newtask (tasks, 900, 901, "bash", 0x1200011, now);
  lm_tracefs_tasks_rename (tasks, 901, "dd", now + 1);
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 901, "dd", now + 2, &t));
  assert_task (&t, 901, "dd", "dd");
  lm_tracefs_tasks_newtask (tasks, 1, 901, "systemd", 0x1200011, now + 3);
  lm_tracefs_tasks_rename (tasks, 901, "sshd", now + 4);
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 901, "dd", now + 5, &t));
  assert_task (&t, 901, "sshd", "sshd");
}

/* At most the bound; the least recently used goes first, and a task that
 * went is asked about in /proc again when seen. */
static void
test_eviction (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmTracefsTasks) tasks = lm_tracefs_tasks_new (4);
  LmAttribTask t;
  gint64 now = now_us ();

  put_task (f, 100, 100, "parent", 1000, 0, start_ticks (-10));
  put_task (f, 101, 100, "parent", 1000, 0, start_ticks (-10));
  for (guint32 pid = 101; pid <= 103; pid++)
    lm_tracefs_tasks_newtask (tasks, 100, pid, "parent", THREAD_FLAGS, now);
  g_assert_cmpuint (lm_tracefs_tasks_size (tasks), ==, 4);
  /* 101 and its leader are used now: 102, then 103 go. */
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 101, "parent", now + 1, &t));
  lm_tracefs_tasks_newtask (tasks, 1, 104, "systemd", 0x1200011, now + 2);
  g_assert_cmpuint (lm_tracefs_tasks_size (tasks), ==, 4);
  lm_tracefs_tasks_newtask (tasks, 1, 105, "systemd", 0x1200011, now + 3);
  g_assert_cmpuint (lm_tracefs_tasks_size (tasks), ==, 4);
  /* Gone from the map, and /proc does not know them: as printed. */
  g_assert_false (lm_tracefs_tasks_lookup (tasks, 102, "parent", now + 4, &t));
  g_assert_false (lm_tracefs_tasks_lookup (tasks, 103, "parent", now + 4, &t));
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 101, "parent", now + 5, &t));
  assert_task (&t, 100, "parent", "parent");

  /* Events dropped: everything is forgotten, /proc asked again. */
  lm_tracefs_tasks_clear (tasks);
  g_assert_cmpuint (lm_tracefs_tasks_size (tasks), ==, 0);
  g_assert_false (lm_tracefs_tasks_lookup (tasks, 104, "systemd", now + 5, &t));
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 101, "parent", now + 5, &t));
  assert_task (&t, 100, "parent", "parent");

  /* Many more than the bound; 101 and 100 come back from /proc. */
  for (guint32 pid = 2000; pid < 3000; pid++)
    lm_tracefs_tasks_newtask (tasks, 1, pid, "systemd", 0x1200011, now + 6);
  g_assert_cmpuint (lm_tracefs_tasks_size (tasks), ==, 4);
  g_assert_true (lm_tracefs_tasks_lookup (tasks, 101, "<...>", now + 7, &t));
  assert_task (&t, 100, "parent", "parent");
  g_assert_cmpint (t.uid, ==, 1000);
}

/* The model with tasks resolved by the map: a spin-up from a named thread
 * names the program; data a thread dirtied and the flusher wrote is the
 * program's, even once the thread's pid belongs to another task. */
static void
test_model (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmTracefsTasks) tasks = lm_tracefs_tasks_new (16);
  g_autoptr (LmAttribModel) model = lm_attrib_model_new (10, 0);
  LmAttribTask t;
  LmSpinUp s;
  gint64 now = now_us ();

  put_task (f, 1234, 1234, "firefox-esr", 1000, 0, start_ticks (-100));
  put_task (f, 40, 40, "kworker/u8:0", 0, PF_KTHREAD, start_ticks (-1000));
  lm_tracefs_tasks_newtask (tasks, 1234, 1301, "firefox-esr", THREAD_FLAGS, now);
  lm_tracefs_tasks_rename (tasks, 1301, "Cache2 I/O", now + 1);

  g_assert_true (lm_attrib_model_woke (model, "sda", 100000));
  lm_tracefs_tasks_lookup (tasks, 1301, "python3", now + 2, &t);
  lm_attrib_model_spinup (model, "sda", 100000, &t, FALSE, 8, &s);
  g_assert_cmpstr (s.comm, ==, "firefox-esr");
  g_assert_cmpuint (s.pid, ==, 1234);
  g_assert_cmpstr (s.thread, ==, "Cache2 I/O");
  g_assert_cmpstr (s.submitter_comm, ==, "Cache2 I/O");
  g_assert_cmpint (s.uid, ==, 1000);
  g_assert_cmpint (s.via, ==, LM_VIA_DIRECT);
  g_assert_false (lm_attrib_model_woke (model, "sda", 100001));

  /* Dirtied by the thread; the thread exits and its pid is a new task's. */
  lm_tracefs_tasks_lookup (tasks, 1301, "Cache2 I/O", now + 3, &t);
  lm_attrib_model_dirtied_by (model, "sdb", &t, 12, NULL);
  put_task (f, 1301, 1301, "new-owner", 0, 0, start_ticks (0));
  lm_tracefs_tasks_newtask (tasks, 1, 1301, "systemd", 0x1200011, now + 4);
  /* A kernel thread's dirtying replaces nobody. */
  lm_tracefs_tasks_lookup (tasks, 40, "kworker/u8:0", now + 5, &t);
  lm_attrib_model_dirtied_by (model, "sdb", &t, 13, NULL);

  g_assert_true (lm_attrib_model_woke (model, "sdb", 200000));
  lm_tracefs_tasks_lookup (tasks, 40, "kworker/u8:0", now + 6, &t);
  lm_attrib_model_spinup (model, "sdb", 200000, &t, TRUE, 8, &s);
  g_assert_cmpint (s.via, ==, LM_VIA_WRITEBACK);
  g_assert_cmpstr (s.comm, ==, "firefox-esr");
  g_assert_cmpuint (s.pid, ==, 1234);
  g_assert_cmpstr (s.thread, ==, "Cache2 I/O");
  g_assert_cmpint (s.uid, ==, 1000);
  g_assert_cmpuint (s.inode, ==, 12);
  g_assert_cmpstr (s.submitter_comm, ==, "kworker/u8:0");
  g_assert_cmpuint (s.submitter_pid, ==, 40);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/tracefs-tasks/first-sight", LmFakeRoot, NULL, lm_fake_root_setup, test_first_sight,
              lm_fake_root_teardown);
  g_test_add ("/tracefs-tasks/newtask-rename", LmFakeRoot, NULL, lm_fake_root_setup,
              test_newtask_rename, lm_fake_root_teardown);
  g_test_add ("/tracefs-tasks/exec", LmFakeRoot, NULL, lm_fake_root_setup, test_exec,
              lm_fake_root_teardown);
  g_test_add ("/tracefs-tasks/reuse", LmFakeRoot, NULL, lm_fake_root_setup, test_reuse,
              lm_fake_root_teardown);
  g_test_add ("/tracefs-tasks/eviction", LmFakeRoot, NULL, lm_fake_root_setup, test_eviction,
              lm_fake_root_teardown);
  g_test_add ("/tracefs-tasks/model", LmFakeRoot, NULL, lm_fake_root_setup, test_model,
              lm_fake_root_teardown);
  return g_test_run ();
}
