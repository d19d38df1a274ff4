/* lm-attrib-tracefs.c: the tracefs attribution backend (no BPF): a private
 * tracefs instance of the daemon's own with the block (bios, and passthrough
 * requests at block_rq_issue) and writeback events, and the task events
 * that say which process a thread is (lm-tracefs-tasks.c), read from its
 * trace_pipe and filtered in user space. Where the instance lives (tracefs
 * mounted if absent, put back after a crash) is lm-tracefs-mount.c's. */
#include "config.h"

#include "lm-attrib-config.h"
#include "lm-lines.h"
#include "lm-tracefs-inodes.h"
#include "lm-tracefs-mount.h"
#include "lm-tracefs-parse.h"
#include "lm-tracefs-tasks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <glib-unix.h>

#include "lm-attrib-stack.h"
#include "lm-attrib.h"
#include "lm-blockdev.h"
#include "lm-bpf-record.h"
#include "lm-error.h"
#include "lm-excluded.h"
#include "lm-io.h"
#include "lm-journal.h"
#include "lm-paths.h"
#include "lm-sb-disks.h"

#define LINE_MAX_BYTES 4096

#if LM_HAVE_TRACEFS

#include <tracefs.h>

struct _LmAttrib
{
  LmAttribConfig config;
  LmAttribModel *model;
  char *tracing;    /* where tracefs is */
  gboolean mounted; /* by us */
  struct tracefs_instance *instance;
  int fd;
  guint source;
  LmLines lines;
  GHashTable *disks; /* "maj,min" → disk name: sysfs once per device, not per event */
  LmTracefsTasks *tasks;
  LmTracefsInodes *inodes; /* who dirtied which inode; which inode a thread writes */
  LmAttribUppers *uppers;  /* whose data dm/md devices' latest woken bios carried */
  GHashTable *seeks;       /* disk → Seek: a kernel spin-up of nobody's data, held */
};

/* A kernel thread's spin-up that carried nobody's data, held while the
 * same pass's bios are looked at (LM_ATTRIB_SEEK_US, lm-attrib-stack.h);
 * on a dm or md device, its note is amended instead. */
typedef struct
{
  LmAttrib *a;
  char *disk;
  gboolean listed; /* a disk (a spin-up held), not an upper device (a note) */
  guint32 key;
  gint64 usec;
  LmAttribTask task;
  gboolean write;
  guint64 sector;
  guint timer;
} Seek;

static const char *
disk_of (LmAttrib *a, guint32 major, guint32 minor)
{
  g_autofree char *devnum = g_strdup_printf ("%u:%u", major, minor);
  const char *disk = g_hash_table_lookup (a->disks, devnum);

  if (disk != NULL)
    return disk;
  char *name = lm_blockdev_disk_for_devnum (major, minor);
  g_hash_table_insert (a->disks, g_steal_pointer (&devnum), name);
  return name;
}

/* The daemon's own commands (CHECK POWER MODE never wakes a disk) and
 * kernel threads' (a driver's media polling) are not wake-ups and must not
 * hide a disk's idle gap; as lm-attrib.bpf.c's lm_rq_issue. */
static void
handle_passthrough (LmAttrib *a, const LmTracefsRecord *r)
{
  const char *disk = disk_of (a, r->major, r->minor);
  LmAttribTask task;
  LmSpinUp spinup;

  lm_tracefs_tasks_lookup (a->tasks, r->pid, r->comm, r->usec, &task);
  if (task.pid == (guint32) getpid () || task.kthread
      || !lm_attrib_model_woke (a->model, disk, r->usec))
    return;
  lm_attrib_model_spinup_owned (a->model, disk, r->usec, &task, FALSE, 0, NULL, 0, &spinup);
  spinup.via = LM_VIA_PASSTHROUGH;
  a->config.func (&spinup, a->config.user_data);
}

/* The bdi of a writeback event: "maj:min", or its own name (btrfs). */
static char *
bdi_name (const LmTracefsRecord *r)
{
  return r->bdi[0] != '\0' ? g_strdup (r->bdi) : g_strdup_printf ("%u:%u", r->major, r->minor);
}

/* Who dirtied an inode's data: named now, in trace order, as by writeback
 * time the process has often exited and its pid may be another's. A time
 * stamp marked dirty (sync(1), fsync) carries no data. */
static void
handle_dirtied (LmAttrib *a, const LmTracefsRecord *r)
{
  LmAttribTask task;
  g_autofree char *bdi = NULL;

  if (!r->pages)
    return;
  bdi = bdi_name (r);
  lm_tracefs_tasks_lookup (a->tasks, r->pid, r->comm, r->usec, &task);
  lm_tracefs_inodes_dirtied (a->inodes, bdi, r->ino, &task, r->usec);
}

/* The seek on @s->disk is over, with @owner found at @usec (NULL: none):
 * the note amended, or the spin-up delivered. */
static void
seek_end (Seek *s, const LmAttribTask *owner, guint64 ino, gint64 usec)
{
  LmAttrib *a = s->a;
  LmAttribTask stacked;
  LmSpinUp spinup;

  g_hash_table_steal (a->seeks, s->disk);
  if (s->timer != 0)
    g_source_remove (s->timer);
  if (!s->listed)
    {
      if (owner != NULL)
        lm_attrib_uppers_amend (a->uppers, s->key, usec, owner, ino);
    }
  else
    {
      /* What the stack carried meanwhile may name the owner. */
      if (owner == NULL && lm_attrib_uppers_owner (a->uppers, s->disk, s->usec, &stacked, &ino))
        owner = &stacked;
      lm_attrib_model_spinup_owned (a->model, s->disk, s->usec, &s->task, s->write, s->sector,
                                    owner, owner != NULL ? ino : 0, &spinup);
      a->config.func (&spinup, a->config.user_data);
    }
  g_free (s->disk);
  g_free (s);
}

static gboolean
seek_timeout (gpointer user_data)
{
  Seek *s = user_data;

  s->timer = 0;
  seek_end (s, NULL, 0, 0);
  return G_SOURCE_REMOVE;
}

static void
seek_start (LmAttrib *a, const char *disk, gboolean listed, const LmTracefsRecord *r,
            const LmAttribTask *task)
{
  Seek *s = g_hash_table_lookup (a->seeks, disk);

  /* One per disk: an older one still held goes first. */
  if (s != NULL)
    seek_end (s, NULL, 0, 0);
  s = g_new0 (Seek, 1);
  s->a = a;
  s->disk = g_strdup (disk);
  s->listed = listed;
  s->key = lm_bpf_record_disk_key (r->major, r->minor);
  s->usec = r->usec;
  s->task = *task;
  s->write = r->write;
  s->sector = r->sector;
  s->timer = g_timeout_add (LM_ATTRIB_HOLD_MS, seek_timeout, s);
  g_hash_table_insert (a->seeks, s->disk, s);
}

/* A bio of @disk that woke nothing: within a seek, a kernel thread's that
 * carries a process's data names it. Tasks are looked up only then. */
static void
seek_bio (LmAttrib *a, const char *disk, const LmTracefsRecord *r)
{
  Seek *s = g_hash_table_lookup (a->seeks, disk);
  LmAttribTask task, owner;
  guint64 ino = 0;

  if (s == NULL)
    return;
  if (r->usec - s->usec > LM_ATTRIB_SEEK_US)
    {
      seek_end (s, NULL, 0, 0);
      return;
    }
  lm_tracefs_tasks_lookup (a->tasks, r->pid, r->comm, r->usec, &task);
  if (!task.kthread || g_str_has_prefix (task.thread, "kswapd"))
    return;
  if (lm_tracefs_inodes_owner (a->inodes, r->pid, r->usec, &owner, &ino))
    seek_end (s, &owner, ino, r->usec);
}

/* A bio: a spin-up when it ends its disk's idle gap. A kernel thread's is
 * blamed on the owner of its data: the dirtier of the inode it is writing
 * back, else, on a disk under a stack, whoever's data the stack's latest
 * bio carried; else nobody's (the kernel's). A dm or md device's gap is
 * only noted, for the disk beneath. Tasks are looked up only at a gap. */
static void
handle_bio (LmAttrib *a, const LmTracefsRecord *r)
{
  const char *disk = disk_of (a, r->major, r->minor);
  LmAttribTask task, owner;
  guint64 ino = 0;
  gboolean have = FALSE;
  LmSpinUp spinup;

  if (!lm_attrib_model_gap (a->model, disk, r->usec))
    {
      seek_bio (a, disk, r);
      return;
    }
  gboolean listed = lm_blockdev_is_listed (disk);
  if (listed && lm_excluded_has (disk))
    return;
  lm_tracefs_tasks_lookup (a->tasks, r->pid, r->comm, r->usec, &task);
  if (task.kthread)
    have = lm_tracefs_inodes_owner (a->inodes, r->pid, r->usec, &owner, &ino);
  if (!listed)
    {
      lm_attrib_uppers_note (a->uppers, lm_bpf_record_disk_key (r->major, r->minor), r->usec,
                             !task.kthread ? &task
                             : have        ? &owner
                                           : NULL,
                             have ? ino : 0);
      if (task.kthread && !have)
        seek_start (a, disk, FALSE, r, &task);
      return;
    }
  if (task.kthread && !have)
    have = lm_attrib_uppers_owner (a->uppers, disk, r->usec, &owner, &ino);
  if (task.kthread && !have && !g_str_has_prefix (task.thread, "kswapd"))
    {
      seek_start (a, disk, TRUE, r, &task);
      return;
    }
  lm_attrib_model_spinup_owned (a->model, disk, r->usec, &task, r->write, r->sector,
                                have ? &owner : NULL, ino, &spinup);
  a->config.func (&spinup, a->config.user_data);
}

/* The writeback of one inode by thread @pid: its bios carry that inode's
 * data until the end event. */
static void
handle_writeback (LmAttrib *a, const LmTracefsRecord *r)
{
  g_autofree char *bdi = bdi_name (r);

  if (r->kind == LM_TRACEFS_WB_START)
    lm_tracefs_inodes_wb_start (a->inodes, r->pid, bdi, r->ino);
  else
    lm_tracefs_inodes_wb_end (a->inodes, r->pid, bdi, r->ino, r->dirty, r->usec);
}

static void
handle_line (char *line, gsize length, gpointer user_data)
{
  LmAttrib *a = user_data;
  LmTracefsRecord r;

  LmTracefsKind kind = lm_tracefs_parse_line (line, length, &r);

  /* The trace clock is CLOCK_MONOTONIC and lines are read after the fact:
   * a time stamp ahead of now is no line of the kernel's, and would move
   * a disk's last I/O past its real spin-ups. */
  if (kind != LM_TRACEFS_NONE && kind != LM_TRACEFS_LOST
      && r.usec > g_get_monotonic_time () + G_USEC_PER_SEC)
    {
      g_debug ("A trace line stamped %" G_GINT64_FORMAT " µs, ahead of the clock: ignored", r.usec);
      return;
    }
  switch (kind)
    {
      case LM_TRACEFS_BIO:
        handle_bio (a, &r);
        break;
      case LM_TRACEFS_DIRTIED:
        handle_dirtied (a, &r);
        break;
      case LM_TRACEFS_WB_START:
      case LM_TRACEFS_WB_END:
        handle_writeback (a, &r);
        break;
      case LM_TRACEFS_PASSTHROUGH:
        handle_passthrough (a, &r);
        break;
      case LM_TRACEFS_NEWTASK:
        lm_tracefs_tasks_newtask (a->tasks, r.pid, r.task_pid, r.task_name, r.clone_flags, r.usec);
        break;
      case LM_TRACEFS_RENAME:
        lm_tracefs_tasks_rename (a->tasks, r.task_pid, r.task_name, r.usec);
        break;
      case LM_TRACEFS_LOST:
        g_debug ("The trace dropped events: asking /proc about tasks again");
        lm_tracefs_tasks_clear (a->tasks);
        break;
      case LM_TRACEFS_NONE:
        break;
    }
}

static gboolean
on_readable (int fd, GIOCondition condition, gpointer user_data)
{
  LmAttrib *a = user_data;
  g_autoptr (GError) error = NULL;
  g_autofree char *what
      = g_strdup_printf ("%s/instances/%s/trace_pipe", a->tracing, LM_TRACEFS_INSTANCE);

  if (lm_lines_drain (&a->lines, fd, what, &error))
    return G_SOURCE_CONTINUE;
  g_warning ("%s; spin-up attribution stops", error->message);
  a->source = 0;
  return G_SOURCE_REMOVE;
}

static void
tracefs_stop (LmAttrib *a)
{
  g_autoptr (GError) error = NULL;

  if (a == NULL)
    return;
  if (a->source != 0)
    g_source_remove (a->source);
  if (a->fd >= 0)
    close (a->fd);
  /* Held spin-ups go out as they are: nothing may be lost at a stop. */
  while (a->seeks != NULL && g_hash_table_size (a->seeks) > 0)
    {
      GHashTableIter iter;
      gpointer s;
      g_hash_table_iter_init (&iter, a->seeks);
      if (g_hash_table_iter_next (&iter, NULL, &s))
        seek_end (s, NULL, 0, 0);
    }
  g_clear_pointer (&a->seeks, g_hash_table_unref);
  if (a->instance != NULL)
    {
      tracefs_instance_destroy (a->instance);
      tracefs_instance_free (a->instance);
    }
  if (!lm_tracefs_put_back (a->config.state, &a->mounted, &error))
    g_warning ("%s", error->message);
  g_clear_pointer (&a->model, lm_attrib_model_free);
  g_clear_pointer (&a->disks, g_hash_table_unref);
  g_clear_pointer (&a->tasks, lm_tracefs_tasks_free);
  g_clear_pointer (&a->inodes, lm_tracefs_inodes_free);
  g_clear_pointer (&a->uppers, lm_attrib_uppers_free);
  lm_lines_clear (&a->lines);
  g_free (a->tracing);
  g_free (a);
}

static LmAttrib *
fail (LmAttrib *a, GError **error, int err, const char *what)
{
  if (what != NULL) /* else @error is set already */
    g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot %s in %s: %s", what, a->tracing,
                 g_strerror (err));
  tracefs_stop (a);
  return NULL;
}

static LmAttrib *
tracefs_start (const LmAttribConfig *config, GError **error)
{
  LmAttrib *a = g_new0 (LmAttrib, 1);
  static const char *const events[][2] = {
    { "block", "block_bio_queue" },
    { "writeback", "writeback_mark_inode_dirty" },
    { "writeback", "writeback_single_inode_start" },
    { "writeback", "writeback_single_inode" },
    { "block", "block_rq_issue" },
  };
  /* A thread's process and names, followed in trace order. Not
   * sched_process_exec: it prints the file name raw, and a file named
   * "x\n<a whole block_bio_queue line>" would forge an event; exec
   * renames the task (task_rename) after its file anyway. */
  static const char *const task_events[][2] = {
    { "task", "task_newtask" },
    { "task", "task_rename" },
  };

  a->config = *config;
  a->fd = -1;
  lm_lines_init (&a->lines, LINE_MAX_BYTES, handle_line, a);
  a->disks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  a->tasks = lm_tracefs_tasks_new (LM_TRACEFS_TASKS_MAX);
  a->inodes = lm_tracefs_inodes_new (LM_TRACEFS_INODES_MAX);
  a->uppers = lm_attrib_uppers_new ();
  a->seeks = g_hash_table_new (g_str_hash, g_str_equal);
  a->tracing = lm_path ("/sys/kernel/tracing");

  if (!lm_tracefs_prepare (config->state, a->tracing, &a->mounted, error))
    return fail (a, error, 0, NULL);
  /* Never let libtracefs look for (or mount) tracefs on its own. */
  if (tracefs_set_tracing_dir (a->tracing) != 0)
    return fail (a, error, errno, "use tracefs");
  a->instance = tracefs_instance_create (LM_TRACEFS_INSTANCE);
  if (a->instance == NULL)
    return fail (a, error, errno, "create the tracefs instance " LM_TRACEFS_INSTANCE);
  /* CLOCK_MONOTONIC time stamps, the clock the model and the signal use. */
  if (tracefs_instance_file_write (a->instance, "trace_clock", "mono") < 0)
    return fail (a, error, errno, "set the trace clock of instance " LM_TRACEFS_INSTANCE);
  /* Only driver-private requests ("N", see lm-tracefs-parse.c) and not the
   * daemon's own: every other request was already seen as a bio. An old
   * kernel without glob filters sends them all and the parser drops them. */
  g_autofree char *filter = g_strdup_printf ("rwbs ~ \"N*\" && common_pid != %d", (int) getpid ());
  if (tracefs_event_file_write (a->instance, "block", "block_rq_issue", "filter", filter) < 0)
    g_debug ("Cannot filter block_rq_issue (%s): every request is read", g_strerror (errno));
  for (gsize i = 0; i < G_N_ELEMENTS (events); i++)
    if (tracefs_event_enable (a->instance, events[i][0], events[i][1]) != 0)
      {
        g_autofree char *what
            = g_strdup_printf ("enable the %s:%s event", events[i][0], events[i][1]);
        return fail (a, error, errno ? errno : ENOENT, what);
      }
  /* Without them (a kernel built without these events) a thread's process
   * is still found in /proc while the thread lives. */
  for (gsize i = 0; i < G_N_ELEMENTS (task_events); i++)
    if (tracefs_event_enable (a->instance, task_events[i][0], task_events[i][1]) != 0)
      g_message ("Cannot enable the %s:%s event (%s): threads are named from /proc",
                 task_events[i][0], task_events[i][1], g_strerror (errno ? errno : ENOENT));
  a->fd = tracefs_instance_file_open (a->instance, "trace_pipe", O_RDONLY | O_NONBLOCK);
  if (a->fd < 0)
    return fail (a, error, errno, "open trace_pipe of instance " LM_TRACEFS_INSTANCE);
  a->model = lm_attrib_model_new (config->idle_ms, g_get_monotonic_time ());
  a->source = g_unix_fd_add (a->fd, G_IO_IN, on_readable, a);
  return a;
}

static gboolean
tracefs_probe (GError **error)
{
  if (geteuid () != 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "tracefs instances need root");
      return FALSE;
    }
  return lm_tracefs_available (error);
}

/* The daemon's own command woke @disk: the model's last I/O of it is
 * now, as if the backend had seen it (it filters the daemon out). */
static void
tracefs_own_io (LmAttrib *a, const char *disk)
{
  lm_attrib_model_gap (a->model, disk, g_get_monotonic_time ());
}

const LmAttribBackend lm_attrib_tracefs = {
  .name = "tracefs",
  .probe = tracefs_probe,
  .start = tracefs_start,
  .stop = tracefs_stop,
  .own_io = tracefs_own_io,
  .journal = &lm_tracefs_journal_part,
};

#else

static gboolean
tracefs_probe (GError **error)
{
  if (!lm_tracefs_available (error))
    return FALSE;
  g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
               "laptop-moded was built without libtracefs");
  return FALSE;
}

const LmAttribBackend lm_attrib_tracefs = {
  .name = "tracefs",
  .probe = tracefs_probe,
  .journal = &lm_tracefs_journal_part,
};

#endif
