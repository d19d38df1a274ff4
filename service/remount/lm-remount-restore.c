/* lm-remount-restore.c: the remounts' journal restorer: putting remounted
 * superblocks back at Stop, after a crash, and for the ones an apply no
 * longer wants; only through a held mount point that checks, never over a
 * remount by someone else. The journal forgets what it marks done. */
#include "config.h"

#include "lm-remount.h"

#include <string.h>

#include "lm-expedite.h"
#include "lm-remount-private.h"

gboolean
lm_remount_saved (LmState *state)
{
  return lm_journal_saved (state, &lm_remount_part); /* the grace-period switch too */
}

/* The journal's verdict on superblock @m saved as entry @e, judged on its
 * commit= alone, the one thing ours: as the original, as we applied it (or
 * not known), or changed by someone else since. */
LmJournalVerdict
lm_remount_commit_verdict (const LmJournalEntry *e, const LmMount *m)
{
  g_autofree char *now = lm_remount_options_commit (m->fstype, m->fs_options);
  g_autofree char *was = lm_remount_options_commit (m->fstype, e->original);
  g_autofree char *ours = lm_remount_options_commit (m->fstype, e->applied);

  return lm_journal_verdict_known (e->original != NULL, was, e->applied != NULL, ours, now);
}

/* Whether the superblock saved as @e may be put back through mount @m:
 * never fight over a mount that someone else remounted or made read-only,
 * nor write what is already there (the entry is done). */
static gboolean
restore_check (const LmMount *m, LmJournalEntry *e)
{
  g_autofree char *shown = lm_remount_escape (m->target);

  switch (lm_remount_commit_verdict (e, m))
    {
      case LM_JOURNAL_AS_ORIGINAL:
        g_message ("%s already has its original options; nothing to restore there", shown);
        e->done = TRUE;
        return FALSE;
      case LM_JOURNAL_CHANGED:
        {
          g_autofree char *now = lm_remount_escape (m->fs_options);
          g_autofree char *was = lm_remount_escape (e->original);
          g_message ("%s was remounted by someone else while laptop mode was on (now %s); "
                     "leaving it (original options were %s)",
                     shown, now, was);
          e->done = TRUE;
          return FALSE;
        }
      case LM_JOURNAL_OURS:
        break;
    }
  if (!lm_remount_options_writable (m->vfs_options) || !lm_remount_options_writable (m->fs_options))
    {
      g_message ("%s is now mounted read-only; leaving it", shown);
      e->done = TRUE;
      return FALSE;
    }
  return TRUE;
}

/* The mount through which to put the superblock saved as @e back, or
 * NULL when there is nothing to do there (the entry is done). */
static LmMount *
restore_target (GPtrArray *mounts, LmJournalEntry *e)
{
  g_autofree char *dev = NULL;
  g_autofree char *target = NULL;
  g_autofree char *shown = NULL;
  LmMount *m;

  if (e->original == NULL || !lm_remount_record_split (e->key, &dev, &target))
    {
      g_autofree char *bad = lm_remount_escape (e->key);
      g_warning ("Incomplete remount record %s in the state file; dropping it", bad);
      e->done = TRUE;
      return NULL;
    }
  m = lm_mounts_find (mounts, dev, target);
  if (m == NULL)
    {
      shown = lm_remount_escape (target);
      g_message ("%s (device %s) is no longer mounted; nothing to restore there", shown, dev);
      e->done = TRUE;
      return NULL;
    }
  return restore_check (m, e) ? m : NULL;
}

/* Whether superblock @key is mounted anywhere, in a table read now. */
static gboolean
superblock_mounted (const char *key)
{
  g_autoptr (GPtrArray) mounts = lm_remount_read_mounts (NULL);

  for (guint i = 0; mounts != NULL && i < mounts->len; i++)
    if (g_str_equal (((LmMount *) g_ptr_array_index (mounts, i))->key, key))
      return TRUE;
  return FALSE;
}

/* A held mount point that is not the mount read: the entry stays while
 * the superblock is mounted somewhere (the next Stop or start-up restores
 * it through a mount that checks), else it is done. */
static void
held_skipped (const LmMount *wanted, const LmHeld *h, LmJournalEntry *e, GString *failures)
{
  g_autofree char *key = lm_remount_record_dev (e->key);

  lm_remount_log_skip (wanted, h);
  if (superblock_mounted (key))
    {
      g_autofree char *shown = lm_remount_escape (wanted->target);
      g_string_append_printf (failures,
                              "%s%s (device %s) changed while being restored; it is "
                              "still mounted elsewhere and will be restored next time",
                              failures->len ? "; " : "", shown, key);
      return;
    }
  g_message ("Device %s is no longer mounted; nothing to restore there", key);
  e->done = TRUE;
}

/* The jobs that put @wanted back, each through its held mount point;
 * @job_entries gets each job's entry. */
static GPtrArray *
restore_jobs (GPtrArray *wanted, GPtrArray *wanted_entries, GPtrArray *held, GString *failures,
              GPtrArray *job_entries)
{
  GPtrArray *jobs = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_remount_job_free);

  for (guint i = 0; i < held->len; i++)
    {
      LmHeld *h = g_ptr_array_index (held, i);
      LmJournalEntry *e = g_ptr_array_index (wanted_entries, i);

      if (h->skip != NULL)
        {
          held_skipped (g_ptr_array_index (wanted, i), h, e, failures);
          continue;
        }
      if (!restore_check (h->mount, e))
        continue;
      g_autofree char *commit = lm_remount_options_commit_restore (h->mount->fstype, e->original);
      g_ptr_array_add (jobs, lm_remount_job_new (h->mount, h->fd, commit, commit));
      g_ptr_array_add (job_entries, e);
    }
  return jobs;
}

/* Log where the kernel shows something else than the saved original (a
 * driver that normalises an option): the restore was still the best one. */
static void
check_restored (GPtrArray *done)
{
  g_autoptr (GPtrArray) mounts = lm_remount_read_mounts (NULL);

  for (guint j = 0; mounts != NULL && j < done->len; j++)
    {
      const LmJournalEntry *e = g_ptr_array_index (done, j);
      g_autofree char *key = lm_remount_record_dev (e->key);
      for (guint i = 0; i < mounts->len; i++)
        {
          LmMount *m = g_ptr_array_index (mounts, i);
          if (g_str_equal (m->key, key) && !g_str_equal (m->fs_options, e->original))
            {
              g_autofree char *shown = lm_remount_escape (m->target);
              g_warning ("%s shows %s after the restore, not the original %s", shown, m->fs_options,
                         e->original);
              break;
            }
        }
    }
}

/* The journal's restorer: the saved superblocks put back side by side.
 * A failure is appended to @failures and its entry kept, so a later Stop
 * or start-up tries again. */
gboolean
lm_remount_restore_all (GPtrArray *entries, gpointer data, GString *failures, GError **error)
{
  LmRemountRestore *r = data;
  g_autoptr (GPtrArray) read = NULL;
  g_autoptr (GPtrArray) wanted = g_ptr_array_new ();
  g_autoptr (GPtrArray) wanted_entries = g_ptr_array_new ();
  g_autoptr (GPtrArray) job_entries = g_ptr_array_new ();
  g_autoptr (GPtrArray) done = g_ptr_array_new ();
  g_autoptr (GPtrArray) held = NULL;
  g_autoptr (GPtrArray) jobs = NULL;
  GPtrArray *mounts = r->mounts;
  g_autoptr (GError) local_error = NULL;

  if (mounts == NULL && (mounts = read = lm_remount_read_mounts (&local_error)) == NULL)
    {
      if (local_error == NULL)
        return TRUE; /* a fake root without a mount table */
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  for (guint i = 0; i < entries->len; i++)
    {
      LmMount *m = restore_target (mounts, g_ptr_array_index (entries, i));
      if (m == NULL)
        continue;
      g_ptr_array_add (wanted, m);
      g_ptr_array_add (wanted_entries, g_ptr_array_index (entries, i));
    }
  /* Held while the jobs run: they borrow the fds. */
  held = lm_remount_hold (wanted, "restore");
  jobs = restore_jobs (wanted, wanted_entries, held, failures, job_entries);
  gboolean expedited = jobs->len > 0 && lm_expedite_begin (r->state);
  lm_remount_run_jobs (jobs);
  if (expedited)
    lm_expedite_end (r->state);
  for (guint i = 0; i < jobs->len; i++)
    {
      LmJournalEntry *e = g_ptr_array_index (job_entries, i);

      if (!lm_remount_job_result (g_ptr_array_index (jobs, i), &local_error))
        {
          lm_journal_add_failure (failures, local_error->message);
          g_clear_error (&local_error);
          continue;
        }
      e->done = TRUE;
      g_ptr_array_add (done, e);
    }
  if (r->check)
    check_restored (done);
  return TRUE;
}

gboolean
lm_remount_restore (LmState *state, GError **error)
{
  LmRemountRestore r = { state, NULL, TRUE };

  /* The grace-period switch first (@with): left by a crash inside a batch. */
  return lm_journal_restore (state, &lm_remount_part, &r, error);
}

static int
compare_pairs (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (((char *const *) *(char ***) a)[0], ((char *const *) *(char ***) b)[0]);
}

/* (mount point, original superblock options), for the Remounted property;
 * both escaped as lm_remount_escape() does. */
GVariant *
lm_remount_list (LmState *state)
{
  g_autoptr (GPtrArray) entries = lm_journal_entries (state, &lm_remount_part);
  g_autoptr (GPtrArray) pairs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  GVariantBuilder b;

  for (guint i = 0; i < entries->len; i++)
    {
      LmJournalEntry *e = g_ptr_array_index (entries, i);
      g_autofree char *dev = NULL;
      g_autofree char *target = NULL;
      if (e->original == NULL || !lm_remount_record_split (e->key, &dev, &target))
        continue;
      char **pair = g_new0 (char *, 3);
      pair[0] = lm_remount_escape (target);
      pair[1] = lm_remount_escape (e->original);
      g_ptr_array_add (pairs, pair);
    }
  g_ptr_array_sort (pairs, compare_pairs);
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(ss)"));
  for (guint i = 0; i < pairs->len; i++)
    {
      char **pair = g_ptr_array_index (pairs, i);
      g_variant_builder_add (&b, "(ss)", pair[0], pair[1]);
    }
  return g_variant_builder_end (&b);
}
