/* lm-remount-jobs.c: holding the mount points to remount (checked against
 * a mount table read while held) and the remounts through them, in threads. */
#include "config.h"

#include "lm-remount-private.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "lm-error.h"
#include "lm-mount-options.h"
#include "lm-paths.h"
#include "lm-remount.h"

/* Every mount, in mount table order; NULL with @error unset when a fake
 * root has no mount table (tests of tier 2: remounting is off there). */
GPtrArray *
lm_remount_read_mounts (GError **error)
{
  g_autofree char *path = lm_path (LM_MOUNTINFO);

  if (!g_str_equal (lm_root (), "/") && !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_debug ("No %s under the fake root %s; not remounting anything", LM_MOUNTINFO, lm_root ());
      return NULL;
    }
  return lm_mounts_read (error);
}

/* --- Holding mount points ---------------------------------------------- */

/* A mount point held open (lm-mountfd.c) and what the kernel's table says
 * about the held mount, read while it was held: every decision (what to
 * save as original, whether someone else remounted it) is taken on that,
 * and the remount goes through the same descriptor. */

void
lm_held_free (LmHeld *held)
{
  lm_mount_free (held->mount);
  if (held->fd >= 0)
    close (held->fd);
  g_free (held->skip);
  g_free (held);
}

#ifdef LM_REMOUNT_TEST_HOOKS
static LmRemountTestHook test_hook;
static gpointer test_hook_data;

void
lm_remount_test_set_hook (LmRemountTestHook hook, gpointer user_data)
{
  test_hook = hook;
  test_hook_data = user_data;
}
#endif

/* Open @was's mount point without following any symlink and check that
 * the mount reached is the one read: same mount id, and its root. */
static void
hold_open (LmHeld *held, const LmMount *was)
{
  g_autoptr (GError) error = NULL;
  int id = -1;
  gboolean is_root = TRUE;

  held->fd = lm_mountfd_open (was->target, &error);
  if (held->fd < 0)
    held->skip
        = g_strdup_printf ("it cannot be opened without following a symlink: %s", error->message);
  else if (!lm_mountfd_identify (held->fd, &id, &is_root, &error))
    held->skip = g_strdup (error->message);
  else if (id != was->id)
    held->skip
        = g_strdup_printf ("it leads to mount %d now, not to mount %d that was read", id, was->id);
  else if (!is_root)
    held->skip = g_strdup ("it leads into that mount, not to its root");
}

/* Hold the mount point of each of @wanted (entries of a table read before,
 * borrowed), in order. A descriptor pins its mount, so the id cannot go to
 * another mount while held; but an id is reused as soon as its mount is
 * gone, so it may already name a newer mount (another disk on the same
 * directory). The table read now, with every mount held, says what each
 * held mount is: the same device, type, subtree and mount point as read,
 * or it is skipped. Devices come from the table, not fstat(): btrfs gives
 * an st_dev of its own (0:41 where mountinfo says 0:40). */
GPtrArray *
lm_remount_hold (GPtrArray *wanted, const char *phase)
{
  g_autoptr (GPtrArray) held = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_held_free);
  g_autoptr (GPtrArray) now = NULL;
  g_autoptr (GHashTable) by_id = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr (GError) error = NULL;
  gboolean any = FALSE;

#ifdef LM_REMOUNT_TEST_HOOKS
  if (test_hook != NULL && wanted->len > 0)
    test_hook (phase, test_hook_data);
#endif
  for (guint i = 0; i < wanted->len; i++)
    {
      LmHeld *h = g_new0 (LmHeld, 1);
      hold_open (h, g_ptr_array_index (wanted, i));
      any = any || h->skip == NULL;
      g_ptr_array_add (held, h);
    }
  if (!any)
    return g_steal_pointer (&held);

  now = lm_remount_read_mounts (&error);
  for (guint i = 0; now != NULL && i < now->len; i++)
    {
      LmMount *m = g_ptr_array_index (now, i);
      g_hash_table_insert (by_id, GINT_TO_POINTER (m->id), m);
    }
  for (guint i = 0; i < held->len; i++)
    {
      LmHeld *h = g_ptr_array_index (held, i);
      const LmMount *was = g_ptr_array_index (wanted, i);
      LmMount *is = g_hash_table_lookup (by_id, GINT_TO_POINTER (was->id));

      if (h->skip != NULL)
        continue;
      if (now == NULL)
        h->skip = g_strdup_printf ("the mount table cannot be read again: %s",
                                   error != NULL ? error->message : "no mount table");
      else if (is == NULL)
        h->skip = g_strdup ("it was unmounted");
      else if (!g_str_equal (is->key, was->key) || !g_str_equal (is->fstype, was->fstype)
               || !g_str_equal (is->root, was->root) || !g_str_equal (is->target, was->target))
        {
          g_autofree char *is_target = lm_remount_escape (is->target);
          g_autofree char *is_root = lm_remount_escape (is->root);
          g_autofree char *was_root = lm_remount_escape (was->root);
          h->skip = g_strdup_printf ("mount %d is device %s (%s, %s) on %s now, not device %s "
                                     "(%s, %s) as read",
                                     was->id, is->key, is->fstype, is_root, is_target, was->key,
                                     was->fstype, was_root);
        }
      else
        h->mount = lm_mount_copy (is);
    }
  return g_steal_pointer (&held);
}

/* Logged with the mount point escaped: it may hold any bytes, terminal
 * escapes included. */
void
lm_remount_log_skip (const LmMount *was, const LmHeld *held)
{
  g_autofree char *shown = lm_remount_escape (was->target);

  g_message ("Not remounting %s (device %s, mount %d): %s; it is no longer the filesystem read "
             "from the mount table, and is not followed",
             shown, was->key, was->id, held->skip);
}

/* --- Remounting -------------------------------------------------------- */

/* One remount, through a held mount point. Each costs a journal commit and
 * a cache flush (8 to 25 ms on a loop device, the same order on a disk), so
 * the remounts of different superblocks run side by side: 20 filesystems
 * then take about as long as one. Everything else (holding and checking,
 * reading the flags) is done before, on the main thread. */

void
lm_remount_job_free (LmRemountJob *job)
{
  g_free (job->commit);
  g_free (job->undo_commit);
  g_free (job->why);
  g_free (job);
}

/* Set commit=@commit on @m's superblock through @fd, and nothing else
 * (lm-mountfd.c); @undo_commit is what goes back if mount(2) is used and
 * its check finds the mount's flags moved. */
LmRemountJob *
lm_remount_job_new (const LmMount *m, int fd, const char *commit, const char *undo_commit)
{
  LmRemountJob *job = g_new0 (LmRemountJob, 1);

  job->mount = m;
  job->fd = fd;
  job->commit = g_strdup (commit);
  job->undo_commit = g_strdup (undo_commit);
  job->lazytime = lm_remount_options_lazytime (m->fstype, m->fs_options);
  return job;
}

static void
job_failed (LmRemountJob *job, int err, const char *how, GError *error)
{
  job->err = err != 0 ? err : EINVAL;
  g_free (job->why);
  job->why = g_strdup_printf ("%s: %s", how, error->message);
}

static void
job_run (gpointer data, gpointer user_data)
{
  LmRemountJob *job = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *fspick_said = NULL;

  if (job->err != 0)
    return;
  if (job->method == LM_MOUNTFD_FSPICK)
    {
      errno = 0;
      if (lm_mountfd_set_commit (job->fd, job->commit, &error))
        return;
      int err = errno;
      if (!lm_mountfd_not_available (err))
        {
          job_failed (job, err, "fspick", error);
          return;
        }
      /* Refused for this one mount (a seccomp or LSM rule): mount(2). */
      fspick_said = g_strdup (error->message);
      g_clear_error (&error);
      job->method = LM_MOUNTFD_PROC_FD;
    }
  errno = 0;
  if (lm_mountfd_remount_commit (job->fd, job->commit, job->undo_commit, job->lazytime, &error))
    return;
  int err = errno;
  g_autofree char *how = fspick_said != NULL
                             ? g_strdup_printf ("fspick() refused (%s); mount(2)", fspick_said)
                             : g_strdup ("fspick() refused or missing here; mount(2)");
  job_failed (job, err, how, error);
}

void
lm_remount_run_jobs (GPtrArray *jobs)
{
  g_autoptr (GError) error = NULL;
  LmMountfdMethod method = lm_mountfd_method ();
  GThreadPool *pool;

  for (guint i = 0; i < jobs->len; i++)
    {
      LmRemountJob *job = g_ptr_array_index (jobs, i);
      job->method = method;
    }
  if (jobs->len <= 1)
    {
      g_ptr_array_foreach (jobs, (GFunc) job_run, NULL);
      return;
    }
  pool = g_thread_pool_new (job_run, NULL, (int) MIN (jobs->len, 32), TRUE, &error);
  if (pool == NULL)
    {
      g_debug ("No threads for the remounts (%s); one after the other", error->message);
      g_ptr_array_foreach (jobs, (GFunc) job_run, NULL);
      return;
    }
  for (guint i = 0; i < jobs->len; i++)
    g_thread_pool_push (pool, g_ptr_array_index (jobs, i), NULL);
  g_thread_pool_free (pool, FALSE, TRUE); /* waits for every job */
}

gboolean
lm_remount_job_result (const LmRemountJob *job, GError **error)
{
  g_autofree char *shown = lm_remount_escape (job->mount->target);

  if (job->err != 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "Cannot remount %s (%s) with commit=%s: %s",
                   shown, job->mount->fstype, job->commit,
                   job->why != NULL ? job->why : g_strerror (job->err));
      return FALSE;
    }
  g_debug ("Remounted %s with commit=%s (through %s)", shown, job->commit,
           lm_mountfd_method_name (job->method));
  return TRUE;
}
