/* lm-flush.c: the user-space laptop-mode engine (the kernel dropped its own
 * in 7.0). A BPF program arms a disk on I/O that a process issued; once the
 * disk has been quiet for LaptopModeSeconds, a worker thread syncfs()es the
 * filesystems on it, with its thread id in the program's "flushers" map so
 * the flush never arms the disk again. No timer runs while disks are idle;
 * this file never polls, never blocks the main loop, never syncs other disks. */
#define _GNU_SOURCE
#include "config.h"

#include "lm-attrib-config.h"

#include "lm-flush.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "lm-attrib.h"
#include "lm-blockdev.h"
#include "lm-bpf.h"
#include "lm-bpf-record.h"
#include "lm-error.h"
#include "lm-excluded.h"
#include "lm-paths.h"

#if LM_HAVE_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include <linux/types.h>

#include "lm-flush-bpf-event.h"
#include "lm-flush.skel.h"
#include "lm-mounts.h"

#define PROGRAM "the user-space laptop-mode engine"
/* dm on dm on a partition is the deepest real stack; a loop in sysfs must
 * not hang the flush thread. */

typedef struct
{
  LmFlush *owner; /* borrowed: disks live in owner->disks */
  guint32 key;    /* (major << 20) | first_minor, as the BPF program keys it */
  guint timer;
  gboolean flushing;
  gboolean again; /* armed and quiet again while its flush was running */
} LmFlushDisk;

struct _LmFlush
{
  /* Reference counted (GRcBox): a flush thread may outlive lm_flush_free(),
   * which only stops everything and drops the owner's reference. */
  gboolean stopped;
  guint seconds;
  struct lm_flush_bpf *skel;
  LmBpfRing ring;
  GHashTable *disks; /* key → LmFlushDisk */
};

typedef struct
{
  LmFlush *owner; /* a reference */
  guint32 key;
  int flushers_fd; /* a dup: the map outlives the skeleton while we use it */
  guint32 kib;     /* written to the disk during the flush, set by the thread */
} FlushJob;

static LmFlushReportFunc report_func;
static gpointer report_data;

/* Sectors written to @disk so far (the 7th field of its stat), or 0. */
static guint64
written_sectors (const char *disk)
{
  g_autofree char *stat = lm_blockdev_read (disk, "stat");
  guint64 sectors = 0;

  if (stat == NULL || sscanf (stat, "%*u %*u %*u %*u %*u %*u %" G_GUINT64_FORMAT, &sectors) != 1)
    return 0;
  return sectors;
}

static gint64
boot_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_BOOTTIME, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

/* --- Which filesystems live on a disk ----------------------------------- */

/* The block device of a superblock: mountinfo's major:minor, or for
 * filesystems with an anonymous device number (btrfs) the source's. */
static dev_t
block_device_of (const LmMount *m)
{
  struct stat st;

  if (major (m->devno) != 0)
    return m->devno;
  if (m->source != NULL && g_str_has_prefix (m->source, "/dev/") && stat (m->source, &st) == 0
      && S_ISBLK (st.st_mode))
    return st.st_rdev;
  return 0;
}

typedef struct
{
  char *target;
  dev_t sb_dev; /* what fstat() of the mount point must show */
} Target;

static void
target_free (Target *t)
{
  g_free (t->target);
  g_free (t);
}

/* One mount point per superblock whose device is on @disk. */
static GPtrArray *
filesystems_on (const char *disk, GError **error)
{
  g_autoptr (GPtrArray) mounts = lm_mounts_read (error);
  g_autoptr (GPtrArray) targets = NULL;
  g_autoptr (GHashTable) seen = NULL;

  if (mounts == NULL)
    return NULL;
  targets = g_ptr_array_new_with_free_func ((GDestroyNotify) target_free);
  seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      dev_t blk = block_device_of (m);
      gint64 sb_dev = (gint64) m->devno;

      if (blk == 0 || g_hash_table_contains (seen, &sb_dev))
        continue;
      g_autofree char *name = lm_blockdev_disk_for_devnum (major (blk), minor (blk));
      if (!lm_blockdev_is_on (name, disk))
        continue;
      g_hash_table_add (seen, g_memdup2 (&sb_dev, sizeof sb_dev));
      Target *t = g_new0 (Target, 1);
      t->target = g_strdup (m->target);
      t->sb_dev = m->devno;
      g_ptr_array_add (targets, t);
    }
  return g_steal_pointer (&targets);
}

/* --- The flush, in a worker thread ------------------------------------- */

static void flush_clear (LmFlush *self);

static void
flush_job_free (FlushJob *job)
{
  if (job->flushers_fd >= 0)
    close (job->flushers_fd);
  g_rc_box_release_full (job->owner, (GDestroyNotify) flush_clear);
  g_free (job);
}

/* syncfs() each filesystem on the disk; returns how many, or an error
 * naming those that failed. */
static void
flush_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  FlushJob *job = task_data;
  __u32 tid = (__u32) gettid ();
  __u32 one = 1;
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) failures = g_string_new (NULL);
  g_autofree char *disk = lm_blockdev_disk_for_devnum (job->key >> 20, job->key & 0xfffff);
  guint synced = 0;

  /* Registered before the first I/O of the flush (even the mount table
   * read), so nothing this thread does can arm a disk. */
  if (bpf_map_update_elem (job->flushers_fd, &tid, &one, BPF_ANY) != 0)
    g_debug ("Cannot register flush thread %u: %s", tid, g_strerror (errno));

  guint64 before = written_sectors (disk);
  g_autoptr (GPtrArray) targets = filesystems_on (disk, &error);
  for (guint i = 0; targets != NULL && i < targets->len; i++)
    {
      Target *t = g_ptr_array_index (targets, i);
      struct stat st;
      /* O_DIRECTORY: never open a device node or FIFO that was bind-mounted
       * over a file; such a mount has a directory mount elsewhere or none. */
      int fd = open (t->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

      if (fd < 0)
        {
          if (errno != ENOENT && errno != ENOTDIR)
            g_string_append_printf (failures, "%s%s: %s", failures->len ? "; " : "", t->target,
                                    g_strerror (errno));
          continue;
        }
      /* Something mounted over it since: that is not the filesystem we
       * mean, and syncing it would touch another disk. */
      if (fstat (fd, &st) == 0 && st.st_dev == t->sb_dev)
        {
          if (syncfs (fd) == 0)
            synced++;
          else
            g_string_append_printf (failures, "%s%s: %s", failures->len ? "; " : "", t->target,
                                    g_strerror (errno));
        }
      close (fd);
    }

  bpf_map_delete_elem (job->flushers_fd, &tid);
  /* syncfs() returns once the data is written: what was held back. */
  job->kib = (guint32) MIN ((written_sectors (disk) - MIN (before, written_sectors (disk))) / 2,
                            G_MAXUINT32);

  if (error != NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else if (failures->len > 0)
    g_task_return_new_error (task, LM_ERROR, LM_ERROR_KERNEL,
                             "Could not flush every filesystem on %s: %s", disk, failures->str);
  else
    g_task_return_int (task, synced);
}

static void start_flush (LmFlush *self, LmFlushDisk *d);

static void
flush_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FlushJob *job = g_task_get_task_data (G_TASK (result));
  LmFlush *self = job->owner;
  g_autoptr (GError) error = NULL;
  g_autofree char *disk = lm_blockdev_disk_for_devnum (job->key >> 20, job->key & 0xfffff);
  gint64 started = GPOINTER_TO_SIZE (user_data);
  gssize synced = g_task_propagate_int (G_TASK (result), &error);

  if (synced < 0)
    g_warning ("%s", error->message);
  else
    g_debug ("Flushed %" G_GSSIZE_FORMAT " filesystems on %s in %" G_GINT64_FORMAT
             " ms: %u KiB written",
             synced, disk, (g_get_monotonic_time () - started) / 1000, job->kib);
  if (report_func != NULL && !self->stopped)
    report_func (disk, job->kib, report_data);
  if (self->stopped)
    return;
  LmFlushDisk *d = g_hash_table_lookup (self->disks, GUINT_TO_POINTER (job->key));
  if (d == NULL)
    return;
  d->flushing = FALSE;
  if (d->again)
    {
      d->again = FALSE;
      start_flush (self, d);
    }
}

static void
start_flush (LmFlush *self, LmFlushDisk *d)
{
  if (d->flushing)
    {
      d->again = TRUE;
      return;
    }
  FlushJob *job = g_new0 (FlushJob, 1);
  job->owner = g_rc_box_acquire (self);
  job->key = d->key;
  job->flushers_fd = fcntl (bpf_map__fd (self->skel->maps.flushers), F_DUPFD_CLOEXEC, 3);
  if (job->flushers_fd < 0)
    {
      g_warning ("Cannot flush: duplicating a BPF map descriptor failed: %s", g_strerror (errno));
      flush_job_free (job);
      return;
    }
  d->flushing = TRUE;
  g_autoptr (GTask) task
      = g_task_new (NULL, NULL, flush_done, GSIZE_TO_POINTER (g_get_monotonic_time ()));
  g_task_set_task_data (task, job, (GDestroyNotify) flush_job_free);
  g_task_run_in_thread (task, flush_thread);
}

/* --- Arming and the quiet timer ----------------------------------------- */

/* The disk was armed LaptopModeSeconds ago (or at its last check): flush
 * if no I/O that arms came since, else wait for the rest of the quiet
 * period. One timer per armed disk, none for a disarmed one. */
static gboolean
disk_timer (gpointer user_data)
{
  LmFlushDisk *d = user_data;
  LmFlush *self = d->owner;
  int fd = bpf_map__fd (self->skel->maps.disks);
  struct lm_flush_disk st;

  d->timer = 0;
  if (bpf_map_lookup_elem (fd, &d->key, &st) == 0)
    {
      gint64 wait_ns = (gint64) self->seconds * 1000000000 - (boot_ns () - (gint64) st.last_ns);
      if (wait_ns > 0)
        {
          g_debug ("Disk %u:%u still busy; checking again in %" G_GINT64_FORMAT " ms", d->key >> 20,
                   d->key & 0xfffff, wait_ns / 1000000);
          d->timer = g_timeout_add ((guint) (wait_ns / 1000000) + 1, disk_timer, d);
          return G_SOURCE_REMOVE;
        }
      /* Disarm before flushing: a process's I/O during the flush arms the
       * disk again and is flushed after its own quiet period. An I/O that
       * lands between the lookup and this update is lost to the timer;
       * the window is microseconds and the disk is awake then anyway. */
      st.armed = 0;
      if (bpf_map_update_elem (fd, &d->key, &st, BPF_EXIST) != 0)
        g_debug ("Cannot disarm disk %u:%u: %s", d->key >> 20, d->key & 0xfffff,
                 g_strerror (errno));
    }
  start_flush (self, d);
  return G_SOURCE_REMOVE;
}

static int
on_armed (void *ctx, void *data, size_t size)
{
  LmFlush *self = ctx;
  LmBpfArmedRecord rec, *e = &rec;

  if (!lm_bpf_record_armed (data, size, &rec))
    return 0;
  guint32 key = lm_bpf_record_disk_key (e->major, e->minor);
  LmFlushDisk *d = g_hash_table_lookup (self->disks, GUINT_TO_POINTER (key));
  if (d == NULL)
    {
      d = g_new0 (LmFlushDisk, 1);
      d->owner = self;
      d->key = key;
      g_hash_table_insert (self->disks, GUINT_TO_POINTER (key), d);
    }
  if (d->timer == 0)
    {
      g_autofree char *disk = lm_blockdev_disk_for_devnum (e->major, e->minor);
      g_debug ("Disk %s armed by a %s of %s (%u): flushing it %u s after its last I/O", disk,
               e->write ? "write" : "read", e->comm, e->pid, self->seconds);
      d->timer = g_timeout_add (self->seconds * 1000, disk_timer, d);
    }
  return 0;
}

static void
disk_free (LmFlushDisk *d)
{
  g_clear_handle_id (&d->timer, g_source_remove);
  g_free (d);
}

static void
flush_clear (LmFlush *self)
{
  g_clear_pointer (&self->disks, g_hash_table_unref);
}

/* Loading is the only honest test (verifier, BTF, tracepoint); it takes
 * milliseconds and its answer does not change while we run, so once. */
gboolean
lm_flush_probe (GError **error)
{
  static int loaded_errno = -1; /* not tried yet */

  if (!lm_bpf_check_possible (PROGRAM, error))
    return FALSE;
  if (loaded_errno < 0)
    {
      lm_bpf_log_to_glib ();
      struct lm_flush_bpf *skel = lm_flush_bpf__open_and_load ();
      loaded_errno = skel != NULL ? 0 : (errno > 0 ? errno : EINVAL);
      lm_flush_bpf__destroy (skel);
    }
  if (loaded_errno != 0)
    return lm_bpf_set_error (error, loaded_errno, "load", PROGRAM);
  return TRUE;
}

LmFlush *
lm_flush_new (guint laptop_mode_seconds, GError **error)
{
  g_autoptr (LmFlush) self = NULL;
  int err;

  if (!lm_bpf_check_possible (PROGRAM, error))
    return NULL;
  self = g_rc_box_new0 (LmFlush);
  self->seconds = MAX (laptop_mode_seconds, 1);
  self->disks = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) disk_free);
  lm_bpf_log_to_glib ();
  self->skel = lm_flush_bpf__open_and_load ();
  if (self->skel == NULL)
    {
      lm_bpf_set_error (error, errno, "load", PROGRAM);
      return NULL;
    }
  /* Before attaching: an excluded disk is never armed, not even once. */
  lm_excluded_add_map (bpf_map__fd (self->skel->maps.excluded), -1, -1);
  err = lm_flush_bpf__attach (self->skel);
  if (err != 0)
    {
      lm_bpf_set_error (error, err, "attach", PROGRAM);
      return NULL;
    }
  if (!lm_bpf_ring_open (&self->ring, bpf_map__fd (self->skel->maps.armed), on_armed, self, PROGRAM,
                         error))
    return NULL;
  if (report_func != NULL)
    report_func (NULL, 1, report_data); /* flushes will be reported */
  return g_steal_pointer (&self);
}

void
lm_flush_set_seconds (LmFlush *self, guint laptop_mode_seconds)
{
  /* Timers already running keep their deadline; the next check uses this. */
  self->seconds = MAX (laptop_mode_seconds, 1);
}

/* Detach and drop every timer now; a flush already running finishes (it
 * cannot be cancelled inside syncfs) and only then frees the rest. */
void
lm_flush_free (LmFlush *self)
{
  if (self == NULL)
    return;
  if (report_func != NULL && self->skel != NULL)
    report_func (NULL, 0, report_data);
  self->stopped = TRUE;
  lm_bpf_ring_close (&self->ring);
  if (self->disks != NULL)
    g_hash_table_remove_all (self->disks);
  if (self->skel != NULL)
    lm_excluded_remove_map (bpf_map__fd (self->skel->maps.excluded));
  g_clear_pointer (&self->skel, lm_flush_bpf__destroy);
  g_rc_box_release_full (self, (GDestroyNotify) flush_clear);
}

void
lm_flush_set_report_func (LmFlushReportFunc func, gpointer user_data)
{
  report_func = func;
  report_data = user_data;
}

#else

void
lm_flush_set_report_func (LmFlushReportFunc func, gpointer user_data)
{
}

gboolean
lm_flush_probe (GError **error)
{
  g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
               "laptop-moded was built without BPF (clang, bpftool and libbpf were missing); "
               "the user-space laptop-mode engine needs it");
  return FALSE;
}

LmFlush *
lm_flush_new (guint laptop_mode_seconds, GError **error)
{
  lm_flush_probe (error);
  return NULL;
}

void
lm_flush_set_seconds (LmFlush *self, guint laptop_mode_seconds)
{
}

void
lm_flush_free (LmFlush *self)
{
}

#endif
