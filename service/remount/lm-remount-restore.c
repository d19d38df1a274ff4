/* lm-remount-restore.c: putting remounted superblocks back: at Stop, after
 * a crash, and for the ones an apply no longer wants; only through a held
 * mount point that checks, never over a remount by someone else. */
#include "config.h"

#include "lm-remount.h"

#include <string.h>

#include "lm-error.h"
#include "lm-expedite.h"
#include "lm-journal.h"
#include "lm-remount-private.h"

gboolean
lm_remount_saved (LmState *state)
{
  g_auto (GStrv) keys = lm_remount_record_pending (state, LM_REMOUNT_PART);
  return keys[0] != NULL || lm_expedite_saved (state);
}

/* The journal's verdict on superblock @m saved as @record, judged on its
 * commit= alone, the one thing ours: as the original, as we applied it (or
 * not known), or changed by someone else since. */
LmJournalVerdict
lm_remount_commit_verdict (LmState *state, const char *record, const LmMount *m)
{
  g_autofree char *original = lm_journal_original (state, LM_REMOUNT_PART, record);
  g_autofree char *applied = lm_journal_applied (state, LM_REMOUNT_PART, record);
  g_autofree char *now = lm_remount_options_commit (m->fstype, m->fs_options);
  g_autofree char *was = lm_remount_options_commit (m->fstype, original);
  g_autofree char *ours = lm_remount_options_commit (m->fstype, applied);

  if (original != NULL && g_strcmp0 (now, was) == 0)
    return LM_JOURNAL_AS_ORIGINAL;
  if (applied != NULL && g_strcmp0 (now, ours) != 0)
    return LM_JOURNAL_CHANGED;
  return LM_JOURNAL_OURS;
}

/* Whether the superblock saved as @record may be put back through mount
 * @m: never fight over a mount that someone else remounted or made
 * read-only, nor write what is already there (the record is dropped). */
static gboolean
restore_check (const LmMount *m, LmState *state, const char *record)
{
  g_autofree char *shown = lm_remount_escape (m->target);

  switch (lm_remount_commit_verdict (state, record, m))
    {
      case LM_JOURNAL_AS_ORIGINAL:
        g_message ("%s already has its original options; nothing to restore there", shown);
        lm_journal_forget (state, LM_REMOUNT_PART, record);
        return FALSE;
      case LM_JOURNAL_CHANGED:
        {
          g_autofree char *original = lm_journal_original (state, LM_REMOUNT_PART, record);
          g_autofree char *now = lm_remount_escape (m->fs_options);
          g_autofree char *was = lm_remount_escape (original);
          g_message ("%s was remounted by someone else while laptop mode was on (now %s); "
                     "leaving it (original options were %s)",
                     shown, now, was);
          lm_journal_forget (state, LM_REMOUNT_PART, record);
          return FALSE;
        }
      case LM_JOURNAL_OURS:
        break;
    }
  if (!lm_remount_options_writable (m->vfs_options) || !lm_remount_options_writable (m->fs_options))
    {
      g_message ("%s is now mounted read-only; leaving it", shown);
      lm_journal_forget (state, LM_REMOUNT_PART, record);
      return FALSE;
    }
  return TRUE;
}

/* The mount through which to put the superblock saved as @record back, or
 * NULL when there is nothing to do there (the record is dropped). */
static LmMount *
restore_target (GPtrArray *mounts, LmState *state, const char *record)
{
  g_autofree char *dev = NULL;
  g_autofree char *target = NULL;
  g_autofree char *shown = NULL;
  LmMount *m;

  if (!lm_remount_record_split (record, &dev, &target))
    {
      g_autofree char *bad = lm_remount_escape (record);
      g_warning ("Incomplete remount record %s in the state file; dropping it", bad);
      lm_journal_forget (state, LM_REMOUNT_PART, record);
      return NULL;
    }
  m = lm_mounts_find (mounts, dev, target);
  if (m == NULL)
    {
      shown = lm_remount_escape (target);
      g_message ("%s (device %s) is no longer mounted; nothing to restore there", shown, dev);
      lm_journal_forget (state, LM_REMOUNT_PART, record);
      return NULL;
    }
  return restore_check (m, state, record) ? m : NULL;
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

/* A held mount point that is not the mount read: the record stays while
 * the superblock is mounted somewhere (the next Stop or start-up restores
 * it through a mount that checks), else it is dropped. */
static void
held_skipped (LmState *state, const LmMount *wanted, const LmHeld *h, const char *record,
              GString *failures)
{
  g_autofree char *key = lm_remount_record_dev (record);

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
  lm_journal_forget (state, LM_REMOUNT_PART, record);
}

/* The jobs that put @wanted back, each through its held mount point;
 * @job_keys gets each job's record. */
static GPtrArray *
restore_jobs (LmState *state, GPtrArray *wanted, GPtrArray *wanted_keys, GPtrArray *held,
              GString *failures, GPtrArray *job_keys)
{
  GPtrArray *jobs = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_remount_job_free);

  for (guint i = 0; i < held->len; i++)
    {
      LmHeld *h = g_ptr_array_index (held, i);
      const char *record = g_ptr_array_index (wanted_keys, i);

      if (h->skip != NULL)
        {
          held_skipped (state, g_ptr_array_index (wanted, i), h, record, failures);
          continue;
        }
      if (!restore_check (h->mount, state, record))
        continue;
      g_autofree char *original = lm_journal_original (state, LM_REMOUNT_PART, record);
      g_autofree char *commit = lm_remount_options_commit_restore (h->mount->fstype, original);
      g_ptr_array_add (jobs, lm_remount_job_new (h->mount, h->fd, commit, commit));
      g_ptr_array_add (job_keys, (gpointer) record);
    }
  return jobs;
}

/* Put the saved superblocks @keys back, side by side. Failures are
 * appended to @failures and their records kept, so a later Stop or start-up
 * tries again; @restored gets key -> original for each one done. */
void
lm_remount_restore_keys (GPtrArray *mounts, LmState *state, const char *const *keys,
                         GString *failures, GHashTable *restored)
{
  g_autoptr (GPtrArray) wanted = g_ptr_array_new ();
  g_autoptr (GPtrArray) wanted_keys = g_ptr_array_new ();
  g_autoptr (GPtrArray) job_keys = g_ptr_array_new ();
  g_autoptr (GPtrArray) held = NULL;
  g_autoptr (GPtrArray) jobs = NULL;

  for (guint i = 0; keys[i] != NULL; i++)
    {
      LmMount *m = restore_target (mounts, state, keys[i]);
      if (m == NULL)
        continue;
      g_ptr_array_add (wanted, m);
      g_ptr_array_add (wanted_keys, (gpointer) keys[i]);
    }
  /* Held while the jobs run: they borrow the fds. */
  held = lm_remount_hold (wanted, "restore");
  jobs = restore_jobs (state, wanted, wanted_keys, held, failures, job_keys);
  gboolean expedited = jobs->len > 0 && lm_expedite_begin (state);
  lm_remount_run_jobs (jobs);
  if (expedited)
    lm_expedite_end (state);
  for (guint i = 0; i < jobs->len; i++)
    {
      const char *record = g_ptr_array_index (job_keys, i);
      g_autoptr (GError) local_error = NULL;

      if (!lm_remount_job_result (g_ptr_array_index (jobs, i), &local_error))
        {
          lm_journal_add_failure (failures, local_error->message);
          continue;
        }
      if (restored != NULL)
        g_hash_table_insert (restored, lm_remount_record_dev (record),
                             lm_journal_original (state, LM_REMOUNT_PART, record));
      lm_journal_forget (state, LM_REMOUNT_PART, record);
    }
}

/* Log where the kernel shows something else than the saved original (a
 * driver that normalises an option): the restore was still the best one. */
static void
check_restored (GHashTable *expected)
{
  g_autoptr (GPtrArray) mounts = lm_remount_read_mounts (NULL);
  GHashTableIter iter;
  gpointer key, value;

  if (mounts == NULL)
    return;
  g_hash_table_iter_init (&iter, expected);
  while (g_hash_table_iter_next (&iter, &key, &value))
    for (guint i = 0; i < mounts->len; i++)
      {
        LmMount *m = g_ptr_array_index (mounts, i);
        if (g_str_equal (m->key, key) && !g_str_equal (m->fs_options, value))
          {
            g_autofree char *shown = lm_remount_escape (m->target);
            g_warning ("%s shows %s after the restore, not the original %s", shown, m->fs_options,
                       (char *) value);
            break;
          }
      }
}

gboolean
lm_remount_restore (LmState *state, GError **error)
{
  g_auto (GStrv) keys = lm_remount_record_pending (state, LM_REMOUNT_PART);
  g_autoptr (GString) failures = g_string_new (NULL);
  g_autoptr (GHashTable) expected = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GError) local_error = NULL;

  lm_expedite_end (state); /* left by a crash inside a batch of remounts */
  if (keys[0] == NULL)
    return TRUE;
  g_autoptr (GPtrArray) mounts = lm_remount_read_mounts (&local_error);
  if (mounts == NULL)
    {
      if (local_error == NULL)
        return TRUE; /* a fake root without a mount table */
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  lm_remount_restore_keys (mounts, state, (const char *const *) keys, failures, expected);

  g_autoptr (GError) save_error = NULL;
  if (!lm_journal_save (state, &save_error))
    g_string_append_printf (failures, "%s%s", failures->len ? "; " : "", save_error->message);
  check_restored (expected);

  if (failures->len > 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL,
                   "Could not restore every remounted "
                   "filesystem: %s",
                   failures->str);
      return FALSE;
    }
  return TRUE;
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
  g_auto (GStrv) keys = lm_remount_record_pending (state, LM_REMOUNT_PART);
  g_autoptr (GPtrArray) pairs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  GVariantBuilder b;

  for (guint i = 0; keys[i] != NULL; i++)
    {
      g_autofree char *dev = NULL;
      g_autofree char *target = NULL;
      g_autofree char *original = lm_journal_original (state, LM_REMOUNT_PART, keys[i]);
      if (original == NULL || !lm_remount_record_split (keys[i], &dev, &target))
        continue;
      char **pair = g_new0 (char *, 3);
      pair[0] = lm_remount_escape (target);
      pair[1] = lm_remount_escape (original);
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
