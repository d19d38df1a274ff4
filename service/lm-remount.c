/* lm-remount.c: the save-remount-restore transaction over the mount table; sets commit=
 * only, never on a mount not saved first, on one remounted by someone else, or on a
 * removable disk (jobs: lm-remount-jobs.c). */
#include "config.h"

#include "lm-remount.h"

#include "lm-expedite.h"

#include <string.h>

#include "lm-error.h"
#include "lm-journal.h"
#include "lm-remount-jobs.h"
#include "lm-removable.h"

/* The journal's part for remounts: one entry per superblock, keyed by
 * "<major:minor> <mount point used>", holding the superblock options before
 * (the original) and after ours (applied), exactly as the kernel showed them.
 * Only their commit= is ever acted on (lm_remount_options_commit): the
 * strings are for people, never sent back to the kernel. */
#define PART "Remount"

static gboolean
in_list (char *const *list, const char *item)
{
  return list != NULL && g_strv_contains ((const char *const *) list, item);
}

static gboolean
excluded_by_user (const LmSettings *settings, const char *target)
{
  g_autofree char *trimmed = g_strdup (target);
  gsize len = strlen (trimmed);

  if (len > 1 && trimmed[len - 1] == '/')
    trimmed[len - 1] = '\0';
  for (guint i = 0; settings->no_remount != NULL && settings->no_remount[i] != NULL; i++)
    {
      g_autofree char *want = g_strdup (settings->no_remount[i]);
      gsize wlen = strlen (want);
      if (wlen > 1 && want[wlen - 1] == '/')
        want[wlen - 1] = '\0';
      if (g_str_equal (want, trimmed))
        return TRUE;
    }
  return FALSE;
}

/* One mount per superblock to remount, in mount table order: commit= is a
 * superblock option, so bind mounts and further mount points of the same
 * filesystem share it. A NoRemount mount point opts its whole superblock
 * out, and so does a disk that can be pulled out: data written to a USB
 * stick must not wait MaxLostWork seconds in memory. Each entry is
 * borrowed from @mounts. */
static GPtrArray *
pick_superblocks (GPtrArray *mounts, const LmSettings *settings)
{
  g_autoptr (GPtrArray) picked = g_ptr_array_new ();
  g_autoptr (GHashTable) by_key = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) opted_out = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      g_autofree char *why = NULL;
      if (!in_list (settings->remount_types, m->fstype)
          || g_hash_table_contains (opted_out, m->key))
        continue;
      if (excluded_by_user (settings, m->target))
        g_hash_table_add (opted_out, m->key);
      else if (lm_removable_superblock (m->devno, m->fstype, m->source, &why))
        {
          g_autofree char *shown = lm_remount_escape (m->target);
          g_message ("Not remounting %s (device %s): %s", shown, m->key, why);
          g_hash_table_add (opted_out, m->key);
        }
    }

  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      if (!in_list (settings->remount_types, m->fstype)
          || g_hash_table_contains (opted_out, m->key))
        continue;
      /* A read-only superblock has no journal commits to stretch; a
       * read-only mount of a writable one cannot carry the remount (its
       * "ro" would make the whole filesystem read-only). */
      if (!lm_remount_options_writable (m->fs_options)
          || !lm_remount_options_writable (m->vfs_options))
        continue;
      LmMount *seen = g_hash_table_lookup (by_key, m->key);
      if (seen == NULL)
        {
          g_hash_table_insert (by_key, m->key, m);
          g_ptr_array_add (picked, m);
        }
      else if (!g_str_equal (seen->root, "/") && g_str_equal (m->root, "/"))
        {
          /* Prefer the filesystem's own root over a bind of a subtree. */
          guint index;
          if (g_ptr_array_find (picked, seen, &index))
            picked->pdata[index] = m;
          g_hash_table_insert (by_key, m->key, m);
        }
    }
  return g_steal_pointer (&picked);
}

gboolean
lm_remount_saved (LmState *state)
{
  g_auto (GStrv) keys = lm_remount_record_pending (state, PART);
  return keys[0] != NULL || lm_expedite_saved (state);
}

/* The journal's verdict on superblock @m saved as @record, judged on its
 * commit= alone, the one thing ours: as the original, as we applied it (or
 * not known), or changed by someone else since. */
static LmJournalVerdict
commit_verdict (LmState *state, const char *record, const LmMount *m)
{
  g_autofree char *original = lm_journal_original (state, PART, record);
  g_autofree char *applied = lm_journal_applied (state, PART, record);
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

  switch (commit_verdict (state, record, m))
    {
      case LM_JOURNAL_AS_ORIGINAL:
        g_message ("%s already has its original options; nothing to restore there", shown);
        lm_journal_forget (state, PART, record);
        return FALSE;
      case LM_JOURNAL_CHANGED:
        {
          g_autofree char *original = lm_journal_original (state, PART, record);
          g_autofree char *now = lm_remount_escape (m->fs_options);
          g_autofree char *was = lm_remount_escape (original);
          g_message ("%s was remounted by someone else while laptop mode was on (now %s); "
                     "leaving it (original options were %s)",
                     shown, now, was);
          lm_journal_forget (state, PART, record);
          return FALSE;
        }
      case LM_JOURNAL_OURS:
        break;
    }
  if (!lm_remount_options_writable (m->vfs_options) || !lm_remount_options_writable (m->fs_options))
    {
      g_message ("%s is now mounted read-only; leaving it", shown);
      lm_journal_forget (state, PART, record);
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
      lm_journal_forget (state, PART, record);
      return NULL;
    }
  m = lm_mounts_find (mounts, dev, target);
  if (m == NULL)
    {
      shown = lm_remount_escape (target);
      g_message ("%s (device %s) is no longer mounted; nothing to restore there", shown, dev);
      lm_journal_forget (state, PART, record);
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

/* Put the saved superblocks @keys back, side by side. Failures are
 * appended to @failures and their records kept, so a later Stop or start-up
 * tries again; @restored gets key -> original for each one done. */
static void
restore_keys (GPtrArray *mounts, LmState *state, const char *const *keys, GString *failures,
              GHashTable *restored)
{
  g_autoptr (GPtrArray) wanted = g_ptr_array_new ();
  g_autoptr (GPtrArray) wanted_keys = g_ptr_array_new ();
  g_autoptr (GPtrArray) held = NULL;
  g_autoptr (GPtrArray) jobs
      = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_remount_job_free);
  g_autoptr (GPtrArray) job_keys = g_ptr_array_new ();

  for (guint i = 0; keys[i] != NULL; i++)
    {
      LmMount *m = restore_target (mounts, state, keys[i]);
      if (m == NULL)
        continue;
      g_ptr_array_add (wanted, m);
      g_ptr_array_add (wanted_keys, (gpointer) keys[i]);
    }
  held = lm_remount_hold (wanted, "restore");
  for (guint i = 0; i < held->len; i++)
    {
      LmHeld *h = g_ptr_array_index (held, i);
      const char *record = g_ptr_array_index (wanted_keys, i);
      g_autofree char *key = lm_remount_record_dev (record);

      if (h->skip != NULL)
        {
          lm_remount_log_skip (g_ptr_array_index (wanted, i), h);
          if (superblock_mounted (key))
            {
              /* Still mounted somewhere: the record stays, so the next
               * Stop or start-up restores it through a mount that checks. */
              g_autofree char *shown
                  = lm_remount_escape (((LmMount *) g_ptr_array_index (wanted, i))->target);
              g_string_append_printf (failures,
                                      "%s%s (device %s) changed while being restored; it is "
                                      "still mounted elsewhere and will be restored next time",
                                      failures->len ? "; " : "", shown, key);
            }
          else
            {
              g_message ("Device %s is no longer mounted; nothing to restore there", key);
              lm_journal_forget (state, PART, record);
            }
          continue;
        }
      if (!restore_check (h->mount, state, record))
        continue;
      g_autofree char *original = lm_journal_original (state, PART, record);
      g_autofree char *commit = lm_remount_options_commit_restore (h->mount->fstype, original);
      g_ptr_array_add (jobs, lm_remount_job_new (h->mount, h->fd, commit, commit));
      g_ptr_array_add (job_keys, (gpointer) record);
    }
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
          g_string_append_printf (failures, "%s%s", failures->len ? "; " : "",
                                  local_error->message);
          continue;
        }
      if (restored != NULL)
        g_hash_table_insert (restored, lm_remount_record_dev (record),
                             lm_journal_original (state, PART, record));
      lm_journal_forget (state, PART, record);
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
  g_auto (GStrv) keys = lm_remount_record_pending (state, PART);
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

  restore_keys (mounts, state, (const char *const *) keys, failures, expected);

  g_autoptr (GError) save_error = NULL;
  if (!lm_state_save (state, &save_error))
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

typedef struct
{
  LmMount *mount;       /* borrowed, as read while held */
  int fd;               /* borrowed: the held mount point */
  char *previous;       /* superblock options before this call */
  char *undo;           /* the commit= that puts the previous ones back */
  gboolean skipped;     /* vanished under us */
  char *applied_before; /* our record from an earlier call, or NULL */
  char *record;         /* its journal key */
} LmRemountStep;

static void
lm_remount_step_clear (LmRemountStep *step)
{
  g_free (step->previous);
  g_free (step->undo);
  g_free (step->applied_before);
  g_free (step->record);
}

/* A step not carried out: a superblock first seen now is forgotten; one
 * changed by an earlier call still carries those options, wherever it is
 * mounted now, so its record stays as it was for the restore to find. */
static void
step_skip (LmState *state, LmRemountStep *step)
{
  step->skipped = TRUE;
  if (step->applied_before != NULL)
    lm_journal_mark (state, PART, step->record, step->applied_before);
  else
    lm_journal_forget (state, PART, step->record);
}

static gboolean
still_mounted (const LmMount *m)
{
  g_autoptr (GPtrArray) mounts = lm_remount_read_mounts (NULL);

  if (mounts == NULL)
    return TRUE;
  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *now = g_ptr_array_index (mounts, i);
      if (g_str_equal (now->key, m->key) && g_str_equal (now->target, m->target))
        return TRUE;
    }
  return FALSE;
}

/* Best effort: used while already failing, so only log. Through the same
 * held mount points as the remounts being undone. */
static void
roll_back (GArray *steps, GPtrArray *done)
{
  g_autoptr (GPtrArray) jobs
      = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_remount_job_free);

  for (guint i = 0; i < steps->len; i++)
    {
      LmRemountStep *step = &g_array_index (steps, LmRemountStep, i);
      LmRemountJob *job = g_ptr_array_index (done, i);
      if (step->skipped || job->err != 0)
        continue;
      g_ptr_array_add (jobs, lm_remount_job_new (step->mount, step->fd, step->undo, step->undo));
    }
  lm_remount_run_jobs (jobs);
  for (guint i = 0; i < jobs->len; i++)
    {
      g_autoptr (GError) error = NULL;
      if (!lm_remount_job_result (g_ptr_array_index (jobs, i), &error))
        g_warning ("Rolling back a remount failed: %s", error->message);
    }
}

gboolean
lm_remount_apply (const LmSettings *settings, LmState *state, GError **error)
{
  g_autoptr (LmJournalTx) tx = NULL;
  g_autofree char *commit = g_strdup_printf ("%u", settings->max_lost_work);
  g_autoptr (GError) local_error = NULL;
  g_autoptr (GPtrArray) mounts = lm_remount_read_mounts (&local_error);
  g_autoptr (GPtrArray) picked = NULL;
  g_autoptr (GPtrArray) held = NULL;
  g_autoptr (GArray) steps = g_array_new (FALSE, TRUE, sizeof (LmRemountStep));
  g_autoptr (GString) failures = g_string_new (NULL);

  g_array_set_clear_func (steps, (GDestroyNotify) lm_remount_step_clear);
  if (mounts == NULL)
    {
      if (local_error == NULL)
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  picked = settings->remount ? pick_superblocks (mounts, settings) : g_ptr_array_new ();

  /* 1. Superblocks changed earlier but no longer wanted (Remount turned
   * off, a type dropped from RemountTypes, NoRemount): put them back. */
  g_auto (GStrv) saved = lm_remount_record_pending (state, PART);
  g_autoptr (GPtrArray) unwanted = g_ptr_array_new ();
  for (guint i = 0; saved[i] != NULL; i++)
    {
      g_autofree char *dev = lm_remount_record_dev (saved[i]);
      gboolean wanted = FALSE;
      for (guint j = 0; j < picked->len && !wanted; j++)
        wanted = g_str_equal (((LmMount *) g_ptr_array_index (picked, j))->key, dev);
      if (!wanted)
        g_ptr_array_add (unwanted, saved[i]);
    }
  g_ptr_array_add (unwanted, NULL);
  restore_keys (mounts, state, (const char *const *) unwanted->pdata, failures, NULL);
  if (failures->len > 0)
    {
      if (!lm_state_save (state, NULL))
        g_warning ("Could not rewrite %s", lm_state_get_path (state));
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "%s", failures->str);
      return FALSE;
    }
  tx = lm_journal_begin (state);

  /* 2. Hold every mount point to change, then plan from what the table
   * says about the held mounts, and record the originals. A mount point
   * that is not the mount read is left alone, and so is its record. */
  held = lm_remount_hold (picked, "apply");
  for (guint i = 0; i < picked->len; i++)
    {
      LmHeld *h = g_ptr_array_index (held, i);
      if (h->skip != NULL)
        {
          lm_remount_log_skip (g_ptr_array_index (picked, i), h);
          continue;
        }
      LmMount *m = h->mount;
      g_autofree char *record = lm_remount_record_find (state, PART, m->key);
      g_autofree char *original = record != NULL ? lm_journal_original (state, PART, record) : NULL;
      g_autofree char *applied = record != NULL ? lm_journal_applied (state, PART, record) : NULL;
      g_autofree char *next = lm_remount_options_with_commit (m->fstype, m->fs_options, commit);
      g_autofree char *now = lm_remount_options_commit (m->fstype, m->fs_options);

      if (!lm_remount_options_writable (m->fs_options)
          || !lm_remount_options_writable (m->vfs_options))
        continue; /* made read-only meanwhile: see pick_superblocks() */
      if (original != NULL && applied != NULL
          && commit_verdict (state, record, m) != LM_JOURNAL_OURS)
        {
          g_autofree char *shown = lm_remount_escape (m->target);
          g_message ("%s was remounted by someone else while laptop mode was on; leaving it",
                     shown);
          lm_journal_forget (state, PART, record);
          continue;
        }
      if (g_strcmp0 (now, commit) == 0)
        continue; /* already so, by us or by the user's own fstab */
      if (original == NULL)
        {
          g_free (record);
          record = lm_remount_record_key (m->key, m->target);
          lm_journal_remember (state, PART, record, m->fs_options);
        }
      lm_journal_mark (state, PART, record, next);
      LmRemountStep step = { m,
                             h->fd,
                             g_strdup (m->fs_options),
                             lm_remount_options_commit_restore (m->fstype, m->fs_options),
                             FALSE,
                             original != NULL ? g_steal_pointer (&applied) : NULL,
                             g_steal_pointer (&record) };
      g_array_append_val (steps, step);
    }

  /* 3. Make the originals durable before touching anything (with the
   * grace-period switch, lm-expedite.c, in the same write). */
  gboolean expedited = steps->len > 0 && lm_expedite_plan (state);
  if (!lm_journal_commit (tx, error))
    return FALSE;
  expedited = expedited && lm_expedite_start (state);

  /* 4. Remount, side by side; if any fails, undo all the others. */
  g_autoptr (GPtrArray) jobs
      = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_remount_job_free);
  g_autoptr (GError) first_error = NULL;
  for (guint i = 0; i < steps->len; i++)
    {
      LmRemountStep *step = &g_array_index (steps, LmRemountStep, i);
      g_ptr_array_add (jobs, lm_remount_job_new (step->mount, step->fd, commit, step->undo));
    }
  lm_remount_run_jobs (jobs);
  if (expedited)
    lm_expedite_end (state);
  for (guint i = 0; i < steps->len; i++)
    {
      LmRemountStep *step = &g_array_index (steps, LmRemountStep, i);
      LmRemountJob *job = g_ptr_array_index (jobs, i);

      if (lm_remount_job_result (job, &local_error))
        continue;
      if (!still_mounted (step->mount))
        {
          g_autofree char *shown = lm_remount_escape (step->mount->target);
          g_message ("%s vanished while being remounted; skipping it", shown);
          step_skip (state, step);
        }
      else if (first_error == NULL)
        first_error = g_steal_pointer (&local_error);
      else
        g_warning ("%s", local_error->message);
      g_clear_error (&local_error);
    }
  if (first_error != NULL)
    {
      roll_back (steps, jobs);
      lm_journal_undo (tx);
      g_propagate_error (error, g_steal_pointer (&first_error));
      return FALSE;
    }

  /* 5. Record what the kernel shows now, for the "remounted by someone
   * else" check at restore: drivers may spell options their own way. */
  if (steps->len > 0)
    {
      g_autoptr (GPtrArray) now = lm_remount_read_mounts (NULL);
      for (guint i = 0; now != NULL && i < steps->len; i++)
        {
          LmRemountStep *step = &g_array_index (steps, LmRemountStep, i);
          LmMount *m
              = step->skipped ? NULL : lm_mounts_find (now, step->mount->key, step->mount->target);
          if (m != NULL)
            lm_journal_mark (state, PART, step->record, m->fs_options);
        }
      lm_state_save_soon (state); /* not needed for an exact restore */
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
  g_auto (GStrv) keys = lm_remount_record_pending (state, PART);
  g_autoptr (GPtrArray) pairs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  GVariantBuilder b;

  for (guint i = 0; keys[i] != NULL; i++)
    {
      g_autofree char *dev = NULL;
      g_autofree char *target = NULL;
      g_autofree char *original = lm_journal_original (state, PART, keys[i]);
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
