/* lm-remount.c: the save-remount-restore transaction over the mount table; sets commit=
 * only, never on a mount not saved first, on one remounted by someone else, or on a
 * removable disk (jobs: lm-remount-jobs.c). */
#include "config.h"

#include "lm-remount.h"

#include "lm-expedite.h"

#include <string.h>

#include "lm-error.h"
#include "lm-remount-private.h"
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

/* One superblock to remount, parallel to its LmJournalChange. */
typedef struct
{
  LmMount *mount;    /* borrowed, as read while held */
  int fd;            /* borrowed: the held mount point */
  char *undo;        /* the commit= that puts the previous options back */
  gboolean skipped;  /* vanished under us */
  LmRemountJob *job; /* borrowed from the run's jobs */
} LmRemountStep;

static void
lm_remount_step_clear (LmRemountStep *step)
{
  g_free (step->undo);
}

/* What the journal's writer needs: the steps and the value to set. */
typedef struct
{
  LmState *state;
  GArray *steps; /* of LmRemountStep */
  const char *commit;
  gboolean expedited; /* the grace-period switch planned (lm-expedite.c) */
} LmRemountRun;

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
roll_back (GArray *steps)
{
  g_autoptr (GPtrArray) jobs
      = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_remount_job_free);

  for (guint i = 0; i < steps->len; i++)
    {
      LmRemountStep *step = &g_array_index (steps, LmRemountStep, i);
      if (step->skipped || step->job->err != 0)
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

/* The grace-period switch goes into the same durable write as the
 * originals. */
static void
prepare (LmState *state, GPtrArray *changes, gpointer data)
{
  LmRemountRun *run = data;

  run->expedited = changes->len > 0 && lm_expedite_plan (state);
}

/* What the kernel shows now, for the "remounted by someone else" check at
 * restore: drivers may spell options their own way. */
static void
note_shown (GPtrArray *changes, GArray *steps)
{
  g_autoptr (GPtrArray) now = lm_remount_read_mounts (NULL);

  for (guint i = 0; now != NULL && i < steps->len; i++)
    {
      LmRemountStep *step = &g_array_index (steps, LmRemountStep, i);
      LmMount *m
          = step->skipped ? NULL : lm_mounts_find (now, step->mount->key, step->mount->target);
      if (m != NULL)
        ((LmJournalChange *) g_ptr_array_index (changes, i))->shown = g_strdup (m->fs_options);
    }
}

/* The journal's writer: remount side by side; a mount that vanished
 * meanwhile is given up; any other failure undoes all the others. */
static gboolean
write_all (GPtrArray *changes, gboolean *given_up, gpointer data, GError **error)
{
  LmRemountRun *run = data;
  gboolean expedited = run->expedited && lm_expedite_start (run->state);
  g_autoptr (GPtrArray) jobs
      = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_remount_job_free);
  g_autoptr (GError) first_error = NULL;

  for (guint i = 0; i < run->steps->len; i++)
    {
      LmRemountStep *step = &g_array_index (run->steps, LmRemountStep, i);
      step->job = lm_remount_job_new (step->mount, step->fd, run->commit, step->undo);
      g_ptr_array_add (jobs, step->job);
    }
  lm_remount_run_jobs (jobs);
  if (expedited)
    lm_expedite_end (run->state);
  for (guint i = 0; i < run->steps->len; i++)
    {
      LmRemountStep *step = &g_array_index (run->steps, LmRemountStep, i);
      g_autoptr (GError) local_error = NULL;

      if (lm_remount_job_result (step->job, &local_error))
        continue;
      if (!still_mounted (step->mount))
        {
          g_autofree char *shown = lm_remount_escape (step->mount->target);
          g_message ("%s vanished while being remounted; skipping it", shown);
          step->skipped = given_up[i] = TRUE;
        }
      else if (first_error == NULL)
        first_error = g_steal_pointer (&local_error);
      else
        g_warning ("%s", local_error->message);
    }
  if (first_error != NULL)
    {
      roll_back (run->steps);
      g_propagate_error (error, g_steal_pointer (&first_error));
      return FALSE;
    }
  note_shown (changes, run->steps);
  return TRUE;
}

/* All or nothing: remounts are the likelier to fail, and a failure leaves
 * every superblock as it was. The restore is lm-remount-restore.c's. */
const LmJournalPart lm_remount_part = {
  .part = PART,
  .what = "remounted filesystem",
  .mode = LM_JOURNAL_ALL_OR_NOTHING,
  .write_all = write_all,
  .prepare = prepare,
  .restore_all = lm_remount_restore_all,
  .upgrade = lm_remount_legacy_migrate,
  .with = &lm_expedite_part,
};

/* Superblocks changed earlier but no longer wanted (Remount turned off, a
 * type dropped from RemountTypes, NoRemount): put back. */
static gboolean
restore_unwanted (GPtrArray *mounts, GPtrArray *picked, LmState *state, GError **error)
{
  g_autoptr (GPtrArray) saved = lm_journal_entries (state, &lm_remount_part);
  g_autoptr (GPtrArray) unwanted = g_ptr_array_new ();
  LmRemountRestore r = { state, mounts, FALSE };

  for (guint i = 0; i < saved->len; i++)
    {
      const char *record = ((LmJournalEntry *) g_ptr_array_index (saved, i))->key;
      g_autofree char *dev = lm_remount_record_dev (record);
      gboolean wanted = FALSE;
      for (guint j = 0; j < picked->len && !wanted; j++)
        wanted = g_str_equal (((LmMount *) g_ptr_array_index (picked, j))->key, dev);
      if (!wanted)
        g_ptr_array_add (unwanted, (gpointer) record);
    }
  g_ptr_array_add (unwanted, NULL);
  return lm_journal_restore_keys (state, &lm_remount_part, (const char *const *) unwanted->pdata,
                                  &r, error);
}

/* The change for held mount @m, or NULL when there is none: made
 * read-only meanwhile, or already so; a drop when someone else remounted
 * it (its record forgotten, written with the others). */
static LmJournalChange *
change_for (GPtrArray *entries, const LmMount *m, const char *commit)
{
  LmJournalEntry *e = lm_remount_record_find (entries, m->key);
  g_autofree char *next = lm_remount_options_with_commit (m->fstype, m->fs_options, commit);
  g_autofree char *now = lm_remount_options_commit (m->fstype, m->fs_options);

  if (!lm_remount_options_writable (m->fs_options) || !lm_remount_options_writable (m->vfs_options))
    return NULL; /* see pick_superblocks() */
  if (e != NULL && e->original != NULL && e->applied != NULL
      && lm_remount_commit_verdict (e, m) != LM_JOURNAL_OURS)
    {
      g_autofree char *shown = lm_remount_escape (m->target);
      LmJournalChange *c = lm_journal_change_new (e->key, NULL, NULL);
      g_message ("%s was remounted by someone else while laptop mode was on; leaving it", shown);
      c->drop = TRUE;
      return c;
    }
  if (g_strcmp0 (now, commit) == 0)
    return NULL; /* already so, by us or by the user's own fstab */
  if (e != NULL && e->original != NULL)
    return lm_journal_change_new (e->key, NULL, next);
  g_autofree char *key = lm_remount_record_key (m->key, m->target);
  return lm_journal_change_new (key, m->fs_options, next);
}

/* Hold every mount point to change, then plan from what the table says
 * about the held mounts. A mount point that is not the mount read is left
 * alone, and so is its record. The drops go last, after the changes the
 * steps stand beside. */
static void
plan (LmState *state, GPtrArray *picked, GPtrArray *held, const char *commit, GPtrArray *changes,
      GArray *steps)
{
  g_autoptr (GPtrArray) entries = lm_journal_entries (state, &lm_remount_part);
  g_autoptr (GPtrArray) drops = g_ptr_array_new ();

  for (guint i = 0; i < picked->len; i++)
    {
      LmHeld *h = g_ptr_array_index (held, i);
      LmJournalChange *c;

      if (h->skip != NULL)
        {
          lm_remount_log_skip (g_ptr_array_index (picked, i), h);
          continue;
        }
      c = change_for (entries, h->mount, commit);
      if (c == NULL)
        continue;
      if (c->drop)
        {
          g_ptr_array_add (drops, c);
          continue;
        }
      LmRemountStep step
          = { h->mount, h->fd,
              lm_remount_options_commit_restore (h->mount->fstype, h->mount->fs_options) };
      g_ptr_array_add (changes, c);
      g_array_append_val (steps, step);
    }
  for (guint i = 0; i < drops->len; i++)
    g_ptr_array_add (changes, g_ptr_array_index (drops, i));
}

gboolean
lm_remount_apply (const LmSettings *settings, LmState *state, GError **error)
{
  g_autofree char *commit = g_strdup_printf ("%u", settings->max_lost_work);
  g_autoptr (GError) local_error = NULL;
  g_autoptr (GPtrArray) mounts = lm_remount_read_mounts (&local_error);
  g_autoptr (GPtrArray) picked = NULL;
  g_autoptr (GPtrArray) held = NULL;
  g_autoptr (GArray) steps = g_array_new (FALSE, TRUE, sizeof (LmRemountStep));
  g_autoptr (GPtrArray) changes = lm_journal_changes_new ();
  LmRemountRun run = { state, steps, commit, FALSE };

  g_array_set_clear_func (steps, (GDestroyNotify) lm_remount_step_clear);
  if (mounts == NULL)
    {
      if (local_error == NULL)
        return TRUE; /* a fake root without a mount table */
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  picked = settings->remount ? pick_superblocks (mounts, settings) : g_ptr_array_new ();
  if (!restore_unwanted (mounts, picked, state, error))
    return FALSE;
  held = lm_remount_hold (picked, "apply");
  plan (state, picked, held, commit, changes, steps);
  return lm_journal_apply (state, &lm_remount_part, changes, &run, NULL, error);
}
