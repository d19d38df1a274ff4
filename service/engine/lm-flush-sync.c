/* lm-flush-sync.c: the user-space engine's flush, in a worker thread:
 * which filesystems live on the disk that woke (lm_sb_disks_for_dev), each
 * superblock once (a btrfs on two disks, subvolumes and binds), synced
 * through a mount still in place with syncfs(), with the thread registered
 * in the BPF program's "flushers" map so that the flush never arms a disk. */
#define _GNU_SOURCE
#include "config.h"

#include "lm-attrib-config.h"

#if LM_HAVE_BPF

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lm-blockdev.h"
#include "lm-error.h"
#include "lm-flush-private.h"
#include "lm-paths.h"
#include "lm-sb-disks.h"

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

gint64
lm_flush_boot_ns (void)
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
gboolean
lm_flush_may_have_disk (const LmMount *m)
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
          if (g_hash_table_contains (not_on, &sb) || !lm_flush_may_have_disk (m)
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
  gint64 now = lm_flush_boot_ns ();
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

char *
lm_flush_job_name (const FlushJob *job)
{
  if (job->key != 0)
    return lm_blockdev_disk_for_devnum (job->key >> 20, job->key & 0xfffff);
  return g_strdup_printf ("removable filesystem %u:%u", job->sb_dev >> 20, job->sb_dev & 0xfffff);
}

/* syncfs() each filesystem on the disk (or the one removable filesystem);
 * returns how many, or an error naming those that failed. */
void
lm_flush_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  FlushJob *job = task_data;
  __u32 tid = (__u32) gettid ();
  __u32 one = 1;
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) failures = g_string_new (NULL);
  g_autofree char *disk = job->key != 0 ? lm_flush_job_name (job) : NULL;
  g_autofree char *name = lm_flush_job_name (job);
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

#endif
