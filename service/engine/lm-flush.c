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
#include "lm-flush-private.h"

#define PROGRAM "the user-space laptop-mode engine"
/* A filesystem on a removable disk is written this long after it was first
 * dirtied: within the kernel's stock expiry (30 s), laptop mode or not. */
#define REMOVABLE_SECONDS 25

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

static void start_flush (LmFlush *self, LmFlushDisk *d);

static void
flush_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FlushJob *job = g_task_get_task_data (G_TASK (result));
  LmFlush *self = job->owner;
  g_autoptr (GError) error = NULL;
  g_autofree char *name = lm_flush_job_name (job);
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
  if (self->report != NULL && !self->stopped)
    self->report (name, job->kib, self->report_data);
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
  g_task_run_in_thread (task, lm_flush_thread);
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
  guint64 last_ns = 0;

  d->timer = 0;
  for (guint i = 0; i < d->members->len; i++)
    {
      struct lm_attrib_disk *st = lm_bpf_shared_disk (g_array_index (d->members, guint32, i));
      if (st != NULL)
        last_ns = MAX (last_ns, __atomic_load_n (&st->last_ns, __ATOMIC_SEQ_CST));
    }
  gint64 wait_ns = (gint64) self->seconds * 1000000000 - (lm_flush_boot_ns () - (gint64) last_ns);
  if (last_ns != 0 && wait_ns > 0)
    {
      g_debug ("Disk %u:%u still busy; checking again in %" G_GINT64_FORMAT " ms", d->key >> 20,
               d->key & 0xfffff, wait_ns / 1000000);
      d->timer = g_timeout_add ((guint) (wait_ns / 1000000) + 1, disk_timer, d);
      return G_SOURCE_REMOVE;
    }
  /* Disarm before flushing: a process's I/O during the flush arms the
   * disk again and is flushed after its own quiet period. One that came
   * after the time was read above is flushed now with the rest. */
  for (guint i = 0; i < d->members->len; i++)
    {
      struct lm_attrib_disk *st = lm_bpf_shared_disk (g_array_index (d->members, guint32, i));
      if (st != NULL)
        __atomic_store_n (&st->armed, 0, __ATOMIC_SEQ_CST);
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
  if (!lm_flush_may_have_disk (m))
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
lm_flush_new (guint laptop_mode_seconds, LmFlushReportFunc report, gpointer report_data,
              GError **error)
{
  g_autoptr (LmFlush) self = NULL;

  if (!lm_bpf_check_possible (PROGRAM, error))
    return NULL;
  self = g_rc_box_new0 (LmFlush);
  self->seconds = MAX (laptop_mode_seconds, 1);
  self->report = report;
  self->report_data = report_data;
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
  if (self->report != NULL)
    self->report (NULL, 1, self->report_data); /* flushes will be reported */
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
  if (self->report != NULL && self->skel != NULL)
    self->report (NULL, 0, self->report_data);
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

#else

gboolean
lm_flush_probe (GError **error)
{
  g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
               "laptop-moded was built without BPF (clang, bpftool and libbpf were missing); "
               "the user-space laptop-mode engine needs it");
  return FALSE;
}

LmFlush *
lm_flush_new (guint laptop_mode_seconds, LmFlushReportFunc report, gpointer report_data,
              GError **error)
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
