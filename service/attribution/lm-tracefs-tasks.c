/* lm-tracefs-tasks.c: which process a thread in a trace_pipe line belongs
 * to. ftrace prints only a thread's pid and a name from its cache of recent
 * names (often stale or "<...>"); /proc shows the pid's owner now, which
 * may be another task by the time a line is read. So the map follows the
 * tasks through their own events (task_newtask, task_rename: an exec
 * renames the task after its file, under its leader's pid), in trace
 * order, and asks /proc only about a task it has not seen or that was
 * renamed (an exec may change its uid), and only when /proc's task started
 * before the line. sched_process_exec is not followed: its file name is
 * text of the process's choosing, long enough to forge whole lines.
 * It never opens tracefs; every path goes through lm_path(). */
#include "config.h"

#include "lm-tracefs-tasks.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lm-paths.h"

#define CLONE_THREAD_FLAG 0x00010000 /* clone(2)'s CLONE_THREAD */
#define PF_KTHREAD_FLAG 0x00200000
#define KTHREADD_PID 2 /* the parent of every kernel thread */

typedef struct
{
  GList link; /* in the queue, most recently used first; data is the task */
  guint32 pid;
  guint32 tgid; /* 0 while not known */
  char name[16];
  gboolean kthread;
  gint64 uid;
  gboolean uid_asked; /* /proc was asked for the uid (or the task is gone);
                       * FALSE again after a rename, which an exec is */
} Task;

struct _LmTracefsTasks
{
  GHashTable *by_pid; /* pid → Task, owned */
  GQueue lru;
  guint max;
};

/* What /proc says about a pid, when that task was there at a given time. */
typedef struct
{
  guint32 tgid;
  char name[16];
  gboolean kthread;
  gint64 uid;
} ProcTask;

static void
task_free (gpointer p)
{
  g_free (p);
}

LmTracefsTasks *
lm_tracefs_tasks_new (guint max_entries)
{
  LmTracefsTasks *t = g_new0 (LmTracefsTasks, 1);

  /* Two at least: a thread and its leader are held at once. */
  t->max = MAX (max_entries, 2);
  t->by_pid = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, task_free);
  g_queue_init (&t->lru);
  return t;
}

void
lm_tracefs_tasks_free (LmTracefsTasks *t)
{
  if (t == NULL)
    return;
  g_hash_table_unref (t->by_pid);
  g_free (t);
}

guint
lm_tracefs_tasks_size (LmTracefsTasks *t)
{
  return g_hash_table_size (t->by_pid);
}

void
lm_tracefs_tasks_clear (LmTracefsTasks *t)
{
  g_queue_init (&t->lru);
  g_hash_table_remove_all (t->by_pid);
}

static char *
read_proc (guint32 pid, const char *file)
{
  g_autofree char *rel = g_strdup_printf ("/proc/%u/%s", pid, file);
  g_autofree char *path = lm_path (rel);
  char *text = NULL;

  return g_file_get_contents (path, &text, NULL, NULL) ? text : NULL;
}

/* A "Key:\tvalue" number of /proc/PID/status (its first, for Uid). */
static gboolean
status_number (const char *status, const char *key, guint64 *value)
{
  g_autofree char *line = g_strdup_printf ("\n%s:\t", key);
  const char *field = strstr (status, line);

  if (field == NULL)
    return FALSE;
  g_auto (GStrv) fields = g_strsplit_set (field + strlen (line), "\t\n", 2);
  return fields[0] != NULL
         && g_ascii_string_to_unsigned (fields[0], 10, 0, G_MAXUINT32, value, NULL);
}

/* The task /proc shows as @pid, if it is the one that ran at @mono_us: a
 * task that started later owns a pid reused since. stat is read last:
 * a task started by then before @mono_us was there at the reads before. */
static gboolean
proc_task (guint32 pid, gint64 mono_us, ProcTask *out)
{
  g_autofree char *comm = pid != 0 ? read_proc (pid, "comm") : NULL;
  g_autofree char *status = comm != NULL ? read_proc (pid, "status") : NULL;
  guint64 tgid, uid, flags;
  gint64 start;

  if (status == NULL || !status_number (status, "Tgid", &tgid) || tgid == 0
      || !lm_attrib_proc_stat (pid, &flags, &start) || start > mono_us)
    return FALSE;
  out->tgid = (guint32) tgid;
  g_strchomp (comm);
  g_strlcpy (out->name, comm, sizeof out->name);
  out->kthread = (flags & PF_KTHREAD_FLAG) != 0;
  out->uid = out->kthread ? 0 : status_number (status, "Uid", &uid) ? (gint64) uid : -1;
  return TRUE;
}

static void
touch (LmTracefsTasks *t, Task *task)
{
  g_queue_unlink (&t->lru, &task->link);
  g_queue_push_head_link (&t->lru, &task->link);
}

static void
forget (LmTracefsTasks *t, Task *task)
{
  g_queue_unlink (&t->lru, &task->link);
  g_hash_table_remove (t->by_pid, GUINT_TO_POINTER (task->pid));
}

static Task *
find (LmTracefsTasks *t, guint32 pid)
{
  Task *task = g_hash_table_lookup (t->by_pid, GUINT_TO_POINTER (pid));

  if (task != NULL)
    touch (t, task);
  return task;
}

/* A new entry for @pid, replacing what the map had for it (a former owner
 * of the pid); the least recently used go past the bound. */
static Task *
add (LmTracefsTasks *t, guint32 pid)
{
  Task *old = g_hash_table_lookup (t->by_pid, GUINT_TO_POINTER (pid));
  Task *task = g_new0 (Task, 1);

  if (old != NULL)
    forget (t, old);
  while (g_hash_table_size (t->by_pid) >= t->max)
    forget (t, g_queue_peek_tail (&t->lru));
  task->pid = pid;
  task->uid = -1;
  task->link.data = task;
  g_hash_table_insert (t->by_pid, GUINT_TO_POINTER (pid), task);
  g_queue_push_head_link (&t->lru, &task->link);
  return task;
}

/* The map's task @pid, else the one /proc shows if it ran at @mono_us. */
static Task *
find_or_sight (LmTracefsTasks *t, guint32 pid, gint64 mono_us)
{
  Task *task = find (t, pid);
  ProcTask p;

  if (task != NULL)
    return task;
  if (!proc_task (pid, mono_us, &p))
    return NULL;
  task = add (t, pid);
  task->tgid = p.tgid;
  g_strlcpy (task->name, p.name, sizeof task->name);
  task->kthread = p.kthread;
  task->uid = p.uid;
  task->uid_asked = TRUE;
  return task;
}

void
lm_tracefs_tasks_newtask (LmTracefsTasks *t, guint32 parent, guint32 child, const char *name,
                          guint64 clone_flags, gint64 mono_us)
{
  Task *p = find_or_sight (t, parent, mono_us);
  /* Copied before add(), which may evict. */
  guint32 tgid = p != NULL ? p->tgid : 0;
  /* Only kthreadd makes kernel threads; what a kernel thread starts
   * otherwise (a usermode helper such as modprobe) is a process. */
  gboolean kthread = parent == KTHREADD_PID;
  gint64 uid = p != NULL ? p->uid : -1;
  Task *task = add (t, child);

  task->tgid = (clone_flags & CLONE_THREAD_FLAG) ? tgid : child;
  g_strlcpy (task->name, name, sizeof task->name);
  task->kthread = kthread;
  /* Inherited; asked again once, as a child may change its ids. */
  task->uid = uid;
}

void
lm_tracefs_tasks_rename (LmTracefsTasks *t, guint32 pid, const char *name, gint64 mono_us)
{
  Task *task = find_or_sight (t, pid, mono_us);

  if (task == NULL)
    {
      /* Gone already, or its pid is another's: its process is not known. */
      task = add (t, pid);
      task->kthread = lm_attrib_is_kernel_thread (pid, name);
    }
  g_strlcpy (task->name, name, sizeof task->name);
  /* An exec renames too (set-user-ID programs change the uid): /proc is
   * asked again at the next lookup. */
  task->uid_asked = FALSE;
}

gboolean
lm_tracefs_tasks_lookup (LmTracefsTasks *t, guint32 pid, const char *printed_comm, gint64 mono_us,
                         LmAttribTask *out)
{
  Task *task = find_or_sight (t, pid, mono_us);
  ProcTask p;

  memset (out, 0, sizeof *out);
  out->tid = out->pid = pid;
  if (task == NULL)
    {
      g_strlcpy (out->comm, printed_comm, sizeof out->comm);
      g_strlcpy (out->thread, printed_comm, sizeof out->thread);
      /* pid 0 is the idle task (I/O from an interrupt): the kernel's. */
      out->kthread = pid == 0 || lm_attrib_is_kernel_thread (pid, printed_comm);
      out->uid = out->kthread ? 0 : -1;
      return FALSE;
    }
  if (task->tgid == 0 || !task->uid_asked)
    {
      gboolean known = proc_task (pid, mono_us, &p);
      if (task->tgid == 0)
        task->tgid = known ? p.tgid : pid;
      if (known && !task->uid_asked)
        {
          task->uid = p.uid;
          task->kthread = p.kthread;
        }
      task->uid_asked = TRUE;
    }
  guint32 tgid = task->tgid;
  Task *leader = tgid == pid ? task : find_or_sight (t, tgid, mono_us);
  out->pid = tgid;
  g_strlcpy (out->comm, leader != NULL ? leader->name : task->name, sizeof out->comm);
  g_strlcpy (out->thread, task->name, sizeof out->thread);
  out->kthread = task->kthread;
  out->uid = task->kthread ? 0 : task->uid;
  return TRUE;
}
