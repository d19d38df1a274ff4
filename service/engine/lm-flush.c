/* lm-flush.c: the user-space laptop-mode engine (the kernel dropped its own
 * in 7.0). A BPF program (the engine's part of lm-attrib.bpf.c, shared with
 * attribution through lm-bpf-shared.c) arms a disk on I/O that a process
 * issued; once the
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
#include <string.h>
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
#include "lm-removable.h"
#include "lm-sb-disks.h"

#if LM_HAVE_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include <linux/types.h>

#include "lm-flush-bpf-event.h"
#include "lm-attrib-bpf-event.h"
#include "lm-bpf-shared.h"
#include "lm-mounts.h"

#define PROGRAM "the user-space laptop-mode engine"
/* A filesystem on a removable disk is written this long after it was first
 * dirtied: within the kernel's stock expiry (30 s), laptop mode or not. */
#define REMOVABLE_SECONDS 25

/* A physical whole disk, armed by its own I/O or by I/O on a device stacked
 * on it (dm-crypt, LVM, md): it is flushed once all of those are quiet. */
typedef struct
{
  LmFlush *owner;  /* borrowed: disks live in owner->disks */
  guint32 key;     /* (major << 20) | first_minor, as the BPF program keys it */
  GArray *members; /* guint32 BPF keys that armed it: itself, dm and md on it */
  guint timer;
  gboolean flushing;
  gboolean again;     /* armed and quiet again while its flush was running */
  guint64 last_io_ns; /* its members' last arming I/O when the flush began */
} LmFlushDisk;

/* A mounted filesystem on a removable or hot-plug disk. */
typedef struct
{
  LmFlush *owner;
  guint32 sb_dev; /* s_dev as the kernel encodes it, the BPF map's key */
  guint timer;
  gboolean flushing;
} LmFlushRemovable;

struct _LmFlush
{
  /* Reference counted (GRcBox): a flush thread may outlive lm_flush_free(),
   * which only stops everything and drops the owner's reference. */
  gboolean stopped;
  guint seconds;
  struct lm_attrib_bpf *skel; /* shared (lm-bpf-shared.c): a reference */
  LmBpfRing ring;
  LmBpfRing dirtied_ring;
  GHashTable *disks;     /* key → LmFlushDisk */
  GHashTable *removable; /* sb_dev → LmFlushRemovable */
  int mountinfo_fd;      /* polled: the mount table changed */
  guint mountinfo_watch;
  /* Flush threads only: superblock (dev_t) → CLOCK_BOOTTIME its last
   * syncfs() began, so that a filesystem on two disks is flushed once. */
  GMutex synced_lock;
  GHashTable *synced;
};

typedef struct
{
  LmFlush *owner; /* a reference */
  guint32 key;    /* the disk to flush, or 0 for a removable filesystem */
  guint32 sb_dev; /* that removable filesystem */
  guint64 last_io_ns;
  int flushers_fd; /* a dup: the map outlives the skeleton while we use it */
  guint32 kib;     /* written to the disk during the flush, set by the thread */
  guint skipped;   /* filesystems another disk's flush had just written */
} FlushJob;

static LmFlushReportFunc report_func;
static gpointer report_data;

static dev_t
dev_of_key (guint32 key)
{
  return makedev (key >> 20, key & 0xfffff);
}

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

/* One superblock and the mounts that show it (subvolumes, binds). */
typedef struct
{
  dev_t sb_dev;
  GPtrArray *mounts; /* LmMount, borrowed from the table */
} Target;

static void
target_free (Target *t)
{
  g_ptr_array_unref (t->mounts);
  g_free (t);
}

/* Whether superblock @m has a disk below it at all: tmpfs, proc and the
 * like have neither a device number nor a device source. */
static gboolean
may_have_disk (const LmMount *m)
{
  return major (m->devno) != 0 || (m->source != NULL && g_str_has_prefix (m->source, "/dev/"));
}

/* Each superblock in @mounts that lm_sb_disks_for_dev() puts on @disk, or
 * with @disk 0 the one superblock @sb_dev; with all its mounts. */
static GPtrArray *
targets_in (GPtrArray *mounts, dev_t disk, dev_t sb_dev)
{
  g_autoptr (GPtrArray) targets = g_ptr_array_new_with_free_func ((GDestroyNotify) target_free);
  g_autoptr (GHashTable) by_sb = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GHashTable) not_on = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      gint64 sb = (gint64) m->devno;
      Target *t = g_hash_table_lookup (by_sb, &sb);

      if (t == NULL)
        {
          if (g_hash_table_contains (not_on, &sb) || !may_have_disk (m)
              || (disk == 0 && m->devno != sb_dev))
            continue;
          if (disk != 0)
            {
              g_autoptr (GError) error = NULL;
              g_autoptr (GArray) under = lm_sb_disks_for_dev (m->devno, &error);
              if (under == NULL)
                g_debug ("%s", error->message);
              if (!lm_sb_disks_has (under, disk))
                {
                  g_hash_table_add (not_on, g_memdup2 (&sb, sizeof sb));
                  continue;
                }
            }
          t = g_new0 (Target, 1);
          t->sb_dev = m->devno;
          t->mounts = g_ptr_array_new ();
          g_ptr_array_add (targets, t);
          g_hash_table_insert (by_sb, &t->sb_dev, t);
        }
      g_ptr_array_add (t->mounts, m);
    }
  return g_steal_pointer (&targets);
}

/* mountinfo's id of the mount @fd is on, from /proc/self/fdinfo; -1 when
 * it cannot say. */
static int
mount_id_of (int fd)
{
  g_autofree char *sys = g_strdup_printf ("/proc/self/fdinfo/%d", fd);
  g_autofree char *path = lm_path (sys);
  g_autofree char *info = NULL;
  const char *line;

  if (!g_file_get_contents (path, &info, NULL, NULL))
    return -1;
  line = strstr (info, "mnt_id:");
  return line != NULL ? (int) g_ascii_strtoll (line + strlen ("mnt_id:"), NULL, 10) : -1;
}

/* syncfs() superblock @t through the first of its mounts still in place.
 * FALSE with @failures added to when one is there but cannot be synced;
 * TRUE with *synced unset when none of its mounts is left. */
static gboolean
sync_target (const Target *t, gboolean *synced, GString *failures)
{
  *synced = FALSE;
  for (guint i = 0; i < t->mounts->len; i++)
    {
      const LmMount *m = g_ptr_array_index (t->mounts, i);
      struct stat st;
      /* O_DIRECTORY: never open a device node or FIFO that was bind-mounted
       * over a file; such a mount has a directory mount elsewhere or none. */
      int fd = open (m->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

      if (fd < 0)
        {
          if (errno != ENOENT && errno != ENOTDIR && errno != EACCES)
            g_string_append_printf (failures, "%s%s: %s", failures->len ? "; " : "", m->target,
                                    g_strerror (errno));
          continue;
        }
      /* Something mounted over it since would be another filesystem, maybe
       * on another disk. The mount id says; st_dev cannot for btrfs, whose
       * subvolumes each have their own. */
      int id = mount_id_of (fd);
      gboolean same = id >= 0 ? id == m->id : fstat (fd, &st) == 0 && st.st_dev == t->sb_dev;
      if (same)
        {
          if (syncfs (fd) == 0)
            *synced = TRUE;
          else
            g_string_append_printf (failures, "%s%s: %s", failures->len ? "; " : "", m->target,
                                    g_strerror (errno));
        }
      close (fd);
      if (same)
        return *synced;
    }
  return TRUE;
}

/* Whether this job still has to write superblock @sb_dev: not when another
 * disk's flush began writing it after this disk's last arming I/O. */
static gboolean
claim (LmFlush *self, dev_t sb_dev, guint64 last_io_ns)
{
  gint64 sb = (gint64) sb_dev;
  gint64 now = boot_ns ();
  gboolean mine;

  g_mutex_lock (&self->synced_lock);
  gint64 *began = g_hash_table_lookup (self->synced, &sb);
  mine = began == NULL || last_io_ns == 0 || *began < (gint64) last_io_ns;
  if (mine)
    {
      gint64 *key = g_memdup2 (&sb, sizeof sb);
      g_hash_table_replace (self->synced, key, g_memdup2 (&now, sizeof now));
    }
  g_mutex_unlock (&self->synced_lock);
  return mine;
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

static char *
job_name (const FlushJob *job)
{
  if (job->key != 0)
    return lm_blockdev_disk_for_devnum (job->key >> 20, job->key & 0xfffff);
  return g_strdup_printf ("removable filesystem %u:%u", job->sb_dev >> 20, job->sb_dev & 0xfffff);
}

/* syncfs() each filesystem on the disk (or the one removable filesystem);
 * returns how many, or an error naming those that failed. */
static void
flush_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  FlushJob *job = task_data;
  __u32 tid = (__u32) gettid ();
  __u32 one = 1;
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) failures = g_string_new (NULL);
  g_autofree char *disk = job->key != 0 ? job_name (job) : NULL;
  g_autofree char *name = job_name (job);
  guint synced = 0;

  /* Registered before the first I/O of the flush (even the mount table
   * read), so nothing this thread does can arm a disk. */
  if (bpf_map_update_elem (job->flushers_fd, &tid, &one, BPF_ANY) != 0)
    g_debug ("Cannot register flush thread %u: %s", tid, g_strerror (errno));

  guint64 before = disk != NULL ? written_sectors (disk) : 0;
  g_autoptr (GPtrArray) mounts = lm_mounts_read (&error);
  g_autoptr (GPtrArray) targets = NULL;
  if (mounts != NULL)
    targets = job->key != 0 ? targets_in (mounts, dev_of_key (job->key), 0)
                            : targets_in (mounts, 0, dev_of_key (job->sb_dev));
  for (guint i = 0; targets != NULL && i < targets->len; i++)
    {
      Target *t = g_ptr_array_index (targets, i);
      gboolean done;

      if (job->key != 0 && !claim (job->owner, t->sb_dev, job->last_io_ns))
        {
          job->skipped++;
          continue;
        }
      if (sync_target (t, &done, failures) && done)
        synced++;
    }

  bpf_map_delete_elem (job->flushers_fd, &tid);
  /* syncfs() returns once the data is written: what was held back. */
  if (disk != NULL)
    {
      guint64 after = written_sectors (disk);
      job->kib = (guint32) MIN ((after - MIN (before, after)) / 2, G_MAXUINT32);
    }

  if (error != NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else if (failures->len > 0)
    g_task_return_new_error (task, LM_ERROR, LM_ERROR_KERNEL,
                             "Could not flush every filesystem on %s: %s", name, failures->str);
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
  g_autofree char *name = job_name (job);
  gint64 started = GPOINTER_TO_SIZE (user_data);
  gssize synced = g_task_propagate_int (G_TASK (result), &error);

  if (synced < 0)
    g_warning ("%s", error->message);
  else if (job->key != 0)
    g_debug ("Flushed %" G_GSSIZE_FORMAT " filesystems on %s in %" G_GINT64_FORMAT
             " ms: %u KiB written%s",
             synced, name, (g_get_monotonic_time () - started) / 1000, job->kib,
             job->skipped > 0 ? " (others just written by another disk's flush)" : "");
  else
    g_debug ("Flushed %s (on a removable disk) in %" G_GINT64_FORMAT " ms", name,
             (g_get_monotonic_time () - started) / 1000);
  if (job->key == 0)
    {
      LmFlushRemovable *r
          = self->stopped ? NULL
                          : g_hash_table_lookup (self->removable, GUINT_TO_POINTER (job->sb_dev));
      if (r != NULL)
        r->flushing = FALSE;
      return;
    }
  if (report_func != NULL && !self->stopped)
    report_func (name, job->kib, report_data);
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

/* Runs @job in a worker thread; FALSE (and @job freed) when it cannot. */
static gboolean
run_job (LmFlush *self, FlushJob *job)
{
  job->owner = g_rc_box_acquire (self);
  job->flushers_fd = fcntl (bpf_map__fd (self->skel->maps.flushers), F_DUPFD_CLOEXEC, 3);
  if (job->flushers_fd < 0)
    {
      g_warning ("Cannot flush: duplicating a BPF map descriptor failed: %s", g_strerror (errno));
      flush_job_free (job);
      return FALSE;
    }
  g_autoptr (GTask) task
      = g_task_new (NULL, NULL, flush_done, GSIZE_TO_POINTER (g_get_monotonic_time ()));
  g_task_set_task_data (task, job, (GDestroyNotify) flush_job_free);
  g_task_run_in_thread (task, flush_thread);
  return TRUE;
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
  job->key = d->key;
  job->last_io_ns = d->last_io_ns;
  d->flushing = run_job (self, job);
}

/* --- Arming and the quiet timer ----------------------------------------- */

/* The disk was armed LaptopModeSeconds ago (or at its last check): flush
 * if no I/O that arms came since on it or on what is stacked on it, else
 * wait for the rest of the quiet period. One timer per armed disk, none
 * for a disarmed one. */
static gboolean
disk_timer (gpointer user_data)
{
  LmFlushDisk *d = user_data;
  LmFlush *self = d->owner;
  int fd = bpf_map__fd (self->skel->maps.disks);
  guint64 last_ns = 0;

  d->timer = 0;
  for (guint i = 0; i < d->members->len; i++)
    {
      struct lm_attrib_disk st;
      guint32 key = g_array_index (d->members, guint32, i);
      if (bpf_map_lookup_elem (fd, &key, &st) == 0)
        last_ns = MAX (last_ns, st.last_ns);
    }
  gint64 wait_ns = (gint64) self->seconds * 1000000000 - (boot_ns () - (gint64) last_ns);
  if (last_ns != 0 && wait_ns > 0)
    {
      g_debug ("Disk %u:%u still busy; checking again in %" G_GINT64_FORMAT " ms", d->key >> 20,
               d->key & 0xfffff, wait_ns / 1000000);
      d->timer = g_timeout_add ((guint) (wait_ns / 1000000) + 1, disk_timer, d);
      return G_SOURCE_REMOVE;
    }
  /* Disarm before flushing: a process's I/O during the flush arms the
   * disk again and is flushed after its own quiet period. An I/O that
   * lands between the lookup and this update is lost to the timer; the
   * window is microseconds and the disk is awake then anyway. */
  for (guint i = 0; i < d->members->len; i++)
    {
      struct lm_attrib_disk st;
      guint32 key = g_array_index (d->members, guint32, i);
      if (bpf_map_lookup_elem (fd, &key, &st) != 0)
        continue;
      st.armed = 0;
      if (bpf_map_update_elem (fd, &key, &st, BPF_EXIST) != 0)
        g_debug ("Cannot disarm disk %u:%u: %s", key >> 20, key & 0xfffff, g_strerror (errno));
    }
  d->last_io_ns = last_ns;
  start_flush (self, d);
  return G_SOURCE_REMOVE;
}

static LmFlushDisk *
disk_get (LmFlush *self, guint32 key)
{
  LmFlushDisk *d = g_hash_table_lookup (self->disks, GUINT_TO_POINTER (key));
  if (d == NULL)
    {
      d = g_new0 (LmFlushDisk, 1);
      d->owner = self;
      d->key = key;
      d->members = g_array_new (FALSE, FALSE, sizeof (guint32));
      g_hash_table_insert (self->disks, GUINT_TO_POINTER (key), d);
    }
  return d;
}

/* Device @key armed: the physical disks under it are, found anew each time
 * (arming is rare, and a dm device may since sit on another disk). */
static int
on_armed (void *ctx, void *data, size_t size)
{
  LmFlush *self = ctx;
  LmBpfArmedRecord rec, *e = &rec;
  g_autoptr (GError) error = NULL;

  if (!lm_bpf_record_armed (data, size, &rec))
    return 0;
  guint32 key = lm_bpf_record_disk_key (e->major, e->minor);
  g_autofree char *armed = lm_blockdev_disk_for_devnum (e->major, e->minor);
  g_autoptr (GArray) under = lm_sb_disks_for_dev (makedev (e->major, e->minor), &error);
  if (under == NULL)
    {
      g_debug ("%s; flushing %s as a disk of its own", error->message, armed);
      under = g_array_new (FALSE, FALSE, sizeof (dev_t));
      dev_t self_dev = makedev (e->major, e->minor);
      g_array_append_val (under, self_dev);
    }
  for (guint i = 0; i < under->len; i++)
    {
      dev_t phys = g_array_index (under, dev_t, i);
      guint32 phys_key = lm_bpf_record_disk_key (major (phys), minor (phys));
      g_autofree char *disk = lm_blockdev_disk_for_devnum (major (phys), minor (phys));

      if (lm_excluded_has (disk))
        continue;
      LmFlushDisk *d = disk_get (self, phys_key);
      gboolean member = FALSE;
      for (guint j = 0; j < d->members->len; j++)
        member = member || g_array_index (d->members, guint32, j) == key;
      if (!member)
        g_array_append_val (d->members, key);
      if (d->timer == 0)
        {
          g_debug ("Disk %s armed by a %s of %s (%u)%s%s: flushing it %u s after its last I/O",
                   disk, e->write ? "write" : "read", e->comm, e->pid,
                   key != phys_key ? " on " : "", key != phys_key ? armed : "", self->seconds);
          d->timer = g_timeout_add (self->seconds * 1000, disk_timer, d);
        }
    }
  return 0;
}

/* --- Removable disks: written within the stock expiry ------------------- */

static gboolean
removable_timer (gpointer user_data)
{
  LmFlushRemovable *r = user_data;
  LmFlush *self = r->owner;
  __u32 zero = 0;

  r->timer = 0;
  if (r->flushing)
    {
      /* A big write still going out: look again shortly. */
      r->timer = g_timeout_add_seconds (1, removable_timer, r);
      return G_SOURCE_REMOVE;
    }
  /* Clean before the sync: what is dirtied during it is told again. */
  if (bpf_map_update_elem (bpf_map__fd (self->skel->maps.removable), &r->sb_dev, &zero, BPF_EXIST)
      != 0)
    g_debug ("Cannot rearm removable filesystem %u:%u: %s", r->sb_dev >> 20, r->sb_dev & 0xfffff,
             g_strerror (errno));
  FlushJob *job = g_new0 (FlushJob, 1);
  job->sb_dev = r->sb_dev;
  r->flushing = run_job (self, job);
  return G_SOURCE_REMOVE;
}

static int
on_dirtied (void *ctx, void *data, size_t size)
{
  LmFlush *self = ctx;
  struct lm_flush_dirtied e;

  if (size < sizeof e)
    return 0;
  memcpy (&e, data, sizeof e);
  LmFlushRemovable *r = g_hash_table_lookup (self->removable, GUINT_TO_POINTER (e.sb_dev));
  if (r != NULL && r->timer == 0)
    {
      g_debug ("Removable filesystem %u:%u dirtied: writing it in %u s", e.sb_dev >> 20,
               e.sb_dev & 0xfffff, REMOVABLE_SECONDS);
      r->timer = g_timeout_add_seconds (REMOVABLE_SECONDS, removable_timer, r);
    }
  return 0;
}

static void
removable_free (LmFlushRemovable *r)
{
  g_clear_handle_id (&r->timer, g_source_remove);
  g_free (r);
}

/* Whether superblock @m lies on a removable or hot-plug disk that is not
 * excluded. */
static gboolean
on_removable_disk (const LmMount *m)
{
  if (!may_have_disk (m))
    return FALSE;
  g_autoptr (GArray) under = lm_sb_disks_for_dev (m->devno, NULL);
  for (guint i = 0; under != NULL && i < under->len; i++)
    {
      dev_t d = g_array_index (under, dev_t, i);
      g_autofree char *disk = lm_blockdev_disk_for_devnum (major (d), minor (d));
      if (lm_removable_disk (disk, NULL) && !lm_excluded_has (disk))
        return TRUE;
    }
  return FALSE;
}

/* The removable filesystems mounted now, in the map and the table. A new
 * one may hold data dirtied before we watched: it is written once soon. */
static void
removable_update (LmFlush *self)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) mounts = lm_mounts_read (&error);
  g_autoptr (GHashTable) now = g_hash_table_new (NULL, NULL);
  int fd = bpf_map__fd (self->skel->maps.removable);
  GHashTableIter iter;
  gpointer key;
  LmFlushRemovable *r;

  if (mounts == NULL)
    {
      g_warning ("Removable disks: %s", error->message);
      return;
    }
  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      guint32 sb = lm_bpf_record_disk_key (major (m->devno), minor (m->devno));
      if (g_hash_table_contains (now, GUINT_TO_POINTER (sb)))
        continue;
      if (g_hash_table_contains (self->removable, GUINT_TO_POINTER (sb)))
        {
          g_hash_table_add (now, GUINT_TO_POINTER (sb));
          continue;
        }
      if (!on_removable_disk (m))
        continue;
      g_hash_table_add (now, GUINT_TO_POINTER (sb));
      __u32 pending = 1;
      if (bpf_map_update_elem (fd, &sb, &pending, BPF_ANY) != 0)
        {
          g_warning ("Cannot watch %s on a removable disk: %s", m->target, g_strerror (errno));
          continue;
        }
      r = g_new0 (LmFlushRemovable, 1);
      r->owner = self;
      r->sb_dev = sb;
      g_hash_table_insert (self->removable, GUINT_TO_POINTER (sb), r);
      g_debug ("%s is on a removable disk: its dirty data is written within %u s", m->target,
               REMOVABLE_SECONDS);
      r->timer = g_timeout_add_seconds (REMOVABLE_SECONDS, removable_timer, r);
    }
  g_hash_table_iter_init (&iter, self->removable);
  while (g_hash_table_iter_next (&iter, &key, (gpointer *) &r))
    if (!g_hash_table_contains (now, key))
      {
        guint32 sb = GPOINTER_TO_UINT (key);
        bpf_map_delete_elem (fd, &sb);
        g_hash_table_iter_remove (&iter);
      }
}

static gboolean
on_mounts_changed (int fd, GIOCondition condition, gpointer user_data)
{
  removable_update (user_data);
  return G_SOURCE_CONTINUE;
}

static void
disk_free (LmFlushDisk *d)
{
  g_clear_handle_id (&d->timer, g_source_remove);
  g_array_unref (d->members);
  g_free (d);
}

static void
flush_clear (LmFlush *self)
{
  g_clear_pointer (&self->disks, g_hash_table_unref);
  g_clear_pointer (&self->removable, g_hash_table_unref);
  g_clear_pointer (&self->synced, g_hash_table_unref);
  g_mutex_clear (&self->synced_lock);
}

/* Loading is the only honest test (verifier, BTF, tracepoint); it takes
 * milliseconds and its answer does not change while we run, so once. */
gboolean
lm_flush_probe (GError **error)
{
  return lm_bpf_shared_probe (PROGRAM, error);
}

LmFlush *
lm_flush_new (guint laptop_mode_seconds, GError **error)
{
  g_autoptr (LmFlush) self = NULL;

  if (!lm_bpf_check_possible (PROGRAM, error))
    return NULL;
  self = g_rc_box_new0 (LmFlush);
  self->seconds = MAX (laptop_mode_seconds, 1);
  self->disks = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) disk_free);
  self->removable = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) removable_free);
  self->synced = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_mutex_init (&self->synced_lock);
  self->mountinfo_fd = -1;
  self->skel = lm_bpf_shared_ref (PROGRAM, error);
  if (self->skel == NULL)
    return NULL;
  lm_bpf_shared_engine (TRUE);
  if (!lm_bpf_ring_open (&self->ring, bpf_map__fd (self->skel->maps.armed), on_armed, self, PROGRAM,
                         error))
    return NULL;
  if (!lm_bpf_ring_open (&self->dirtied_ring, bpf_map__fd (self->skel->maps.dirtied), on_dirtied,
                         self, PROGRAM, error))
    return NULL;
  /* The mount table's fd reports a change as POLLPRI: no polling. */
  g_autofree char *mountinfo = lm_path (LM_MOUNTINFO);
  self->mountinfo_fd = open (mountinfo, O_RDONLY | O_CLOEXEC);
  if (self->mountinfo_fd >= 0)
    self->mountinfo_watch = g_unix_fd_add (self->mountinfo_fd, G_IO_PRI, on_mounts_changed, self);
  removable_update (self);
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
  lm_bpf_ring_close (&self->dirtied_ring);
  g_clear_handle_id (&self->mountinfo_watch, g_source_remove);
  if (self->mountinfo_fd >= 0)
    close (self->mountinfo_fd);
  self->mountinfo_fd = -1;
  if (self->disks != NULL)
    g_hash_table_remove_all (self->disks);
  if (self->removable != NULL)
    g_hash_table_remove_all (self->removable);
  if (self->skel != NULL)
    {
      lm_bpf_shared_engine (FALSE);
      lm_bpf_shared_unref ();
      self->skel = NULL;
    }
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
