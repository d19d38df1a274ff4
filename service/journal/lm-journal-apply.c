/* lm-journal-apply.c: lm-journal.h's whole operations, the one transaction
 * every part's change goes through and its restore, over the steps of
 * lm-journal.c. Owns the order (durable before the system is touched,
 * undone when refused) and every save of the state file; never decides
 * what to write, which is the part's. */
#include "lm-journal.h"

#include "lm-error.h"
#include "lm-escape.h"
#include "lm-journal-private.h"

LmJournalChange *
lm_journal_change_new (const char *key, const char *original, const char *value)
{
  LmJournalChange *c = g_new0 (LmJournalChange, 1);

  c->key = g_strdup (key);
  c->original = g_strdup (original);
  c->value = g_strdup (value);
  return c;
}

void
lm_journal_change_free (LmJournalChange *change)
{
  if (change == NULL)
    return;
  g_free (change->key);
  g_free (change->original);
  g_free (change->value);
  g_free (change->shown);
  g_free (change);
}

GPtrArray *
lm_journal_changes_new (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) lm_journal_change_free);
}

void
lm_journal_add_failure (GString *failures, const char *message)
{
  g_string_append_printf (failures, "%s%s", failures->len > 0 ? "; " : "", message);
}

gboolean
lm_journal_save (LmState *state, GError **error)
{
  return lm_state_save (state, error);
}

void
lm_journal_save_soon (LmState *state)
{
  lm_state_save_soon (state);
}

char *
lm_journal_name (const LmJournalPart *part, const char *key)
{
  return part->name != NULL ? part->name (key) : g_strdup (key);
}

void
lm_journal_entry_free (LmJournalEntry *entry)
{
  if (entry == NULL)
    return;
  g_free (entry->key);
  g_free (entry->original);
  g_free (entry->applied);
  g_free (entry);
}

/* The pending keys of @part (its own only, where it shares the group),
 * after moving in what an older release left elsewhere. */
static char **
part_keys (LmState *state, const LmJournalPart *part)
{
  g_auto (GStrv) all = NULL;
  GPtrArray *keys = g_ptr_array_new ();

  if (part->upgrade != NULL)
    part->upgrade (state, part);
  all = lm_journal_pending (state, part->part);
  for (guint i = 0; all[i] != NULL; i++)
    if (part->keys == NULL || g_strv_contains (part->keys, all[i]))
      g_ptr_array_add (keys, g_strdup (all[i]));
  g_ptr_array_add (keys, NULL);
  return (char **) g_ptr_array_free (keys, FALSE);
}

static GPtrArray *
entries_for (LmState *state, const LmJournalPart *part, const char *const *keys)
{
  GPtrArray *entries = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_journal_entry_free);

  for (guint i = 0; keys[i] != NULL; i++)
    {
      LmJournalEntry *e = g_new0 (LmJournalEntry, 1);
      e->key = g_strdup (keys[i]);
      e->original = lm_journal_original (state, part->part, keys[i]);
      e->applied = lm_journal_applied (state, part->part, keys[i]);
      g_ptr_array_add (entries, e);
    }
  return entries;
}

GPtrArray *
lm_journal_entries (LmState *state, const LmJournalPart *part)
{
  g_auto (GStrv) keys = part_keys (state, part);
  return entries_for (state, part, (const char *const *) keys);
}

gboolean
lm_journal_saved (LmState *state, const LmJournalPart *part)
{
  g_auto (GStrv) keys = part_keys (state, part);
  return keys[0] != NULL || (part->with != NULL && lm_journal_saved (state, part->with));
}

void
lm_journal_stage (LmState *state, const LmJournalPart *part, const LmJournalChange *change)
{
  if (change->original != NULL)
    lm_journal_remember (state, part->part, change->key, change->original);
  if (change->value != NULL && !change->unmarked)
    lm_journal_mark (state, part->part, change->key, change->value);
}

void
lm_journal_drop (LmState *state, const LmJournalPart *part)
{
  g_auto (GStrv) keys = part_keys (state, part);

  for (guint i = 0; keys[i] != NULL; i++)
    lm_journal_forget (state, part->part, keys[i]);
  if (keys[0] != NULL)
    lm_journal_save_soon (state);
}

gboolean
lm_journal_record (LmState *state, const LmJournalPart *part, const LmJournalChange *change,
                   GError **error)
{
  g_autoptr (LmJournalTx) tx = lm_journal_begin (state);

  lm_journal_stage (state, part, change);
  return lm_journal_commit (tx, error);
}

static gboolean
put_back (const LmJournalPart *part, const char *key, const char *original, gpointer data,
          GError **error)
{
  if (part->put_back != NULL)
    return part->put_back (key, original, data, error);
  return part->write (key, original, data, error);
}

/* Best effort: used while already failing, so only log. The writes made,
 * newest first, after the side effects they caused. */
static void
roll_back (const LmJournalPart *part, GPtrArray *changes, guint written, gpointer data)
{
  for (guint i = changes->len; i > 0; i--)
    {
      LmJournalChange *c = g_ptr_array_index (changes, i - 1);
      g_autoptr (GError) error = NULL;
      g_autofree char *name = NULL;

      if (c->original == NULL || (c->value != NULL && i - 1 >= written))
        continue;
      if (put_back (part, c->key, c->original, data, &error))
        continue;
      name = lm_journal_name (part, c->key);
      g_warning ("Rolling back %s failed: %s", name, error->message);
    }
}

/* A value refused (EACH) or given up (write_all): its entry as it was
 * before this call (@before: its applied value then), or gone when new. */
static void
take_back (LmState *state, const LmJournalPart *part, const LmJournalChange *c, const char *before,
           gboolean known)
{
  if (!known)
    lm_journal_forget (state, part->part, c->key);
  else if (before != NULL)
    lm_journal_mark (state, part->part, c->key, before);
}

/* Step 1: originals and what will be written, in memory. @before gets each
 * entry's applied value from an earlier call, @known whether it had one. */
static void
record (LmState *state, const LmJournalPart *part, GPtrArray *changes, GPtrArray *before,
        GArray *known)
{
  for (guint i = 0; i < changes->len; i++)
    {
      LmJournalChange *c = g_ptr_array_index (changes, i);
      g_autofree char *original = lm_journal_original (state, part->part, c->key);
      gboolean had = original != NULL;

      g_ptr_array_add (before, lm_journal_applied (state, part->part, c->key));
      g_array_append_val (known, had);
      lm_journal_stage (state, part, c);
    }
}

/* Whether the part's rule leaves @c, a value someone else wrote since
 * it was applied. */
static gboolean
theirs (LmState *state, const LmJournalPart *part, const LmJournalChange *c)
{
  g_autofree char *original = NULL;
  g_autofree char *applied = NULL;

  if (part->theirs == LM_JOURNAL_OVERWRITE || c->value == NULL || c->original == NULL)
    return FALSE;
  original = lm_journal_original (state, part->part, c->key);
  applied = lm_journal_applied (state, part->part, c->key);
  if (part->theirs == LM_JOURNAL_LEAVE_ANY)
    return original != NULL && applied != NULL && !g_str_equal (c->original, applied);
  return lm_journal_verdict (original, applied, c->original) == LM_JOURNAL_CHANGED;
}

/* Step 0: the changes this apply leaves out: entries someone else's now,
 * forgotten (@drop), and values the part leaves to whoever wrote them. */
static void
settle (LmState *state, const LmJournalPart *part, GPtrArray *changes)
{
  for (guint i = changes->len; i > 0; i--)
    {
      LmJournalChange *c = g_ptr_array_index (changes, i - 1);

      if (c->drop)
        lm_journal_forget (state, part->part, c->key);
      else if (theirs (state, part, c))
        {
          /* LEAVE_CHANGED is silent: Conflicts lists and logs it, once. */
          g_autofree char *name
              = part->theirs == LM_JOURNAL_LEAVE_ANY ? lm_journal_name (part, c->key) : NULL;
          if (name != NULL)
            g_message ("%s was changed to %s by someone else; leaving it", name, c->original);
        }
      else
        continue;
      g_ptr_array_remove_index (changes, i - 1);
    }
}

/* Step 4: what the system shows now, for the "changed by someone else"
 * check: side effects as the kernel made them, values as a writer saw them.
 * A crash may lose it (the restore is exact anyway). */
static void
record_shown (LmState *state, const LmJournalPart *part, GPtrArray *changes, gpointer data)
{
  gboolean any = FALSE;

  for (guint i = 0; i < changes->len; i++)
    {
      LmJournalChange *c = g_ptr_array_index (changes, i);

      if (c->value == NULL && c->shown == NULL && part->read != NULL)
        c->shown = part->read (c->key, data, NULL);
      if (c->shown == NULL)
        continue;
      lm_journal_mark (state, part->part, c->key, c->shown);
      any = TRUE;
    }
  if (any)
    lm_journal_save_soon (state);
}

/* One by one, in order. */
static gboolean
write_each (const LmJournalPart *part, GPtrArray *changes, gpointer data, gboolean *refused,
            GString *failures, GError **error)
{
  for (guint i = 0; i < changes->len; i++)
    {
      LmJournalChange *c = g_ptr_array_index (changes, i);
      g_autoptr (GError) local_error = NULL;

      if (c->value == NULL || part->write (c->key, c->value, data, &local_error))
        continue;
      if (part->mode == LM_JOURNAL_ALL_OR_NOTHING)
        {
          roll_back (part, changes, i, data);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      if (!g_error_matches (local_error, LM_ERROR, LM_ERROR_REFUSED))
        lm_journal_add_failure (failures, local_error->message);
      refused[i] = part->mode == LM_JOURNAL_EACH;
    }
  return TRUE;
}

gboolean
lm_journal_apply (LmState *state, const LmJournalPart *part, GPtrArray *changes, gpointer data,
                  GString *failures, GError **error)
{
  g_autoptr (LmJournalTx) tx = NULL;
  g_autoptr (GPtrArray) before = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) known = g_array_new (FALSE, FALSE, sizeof (gboolean));
  g_autofree gboolean *refused = NULL;
  gboolean any_refused = FALSE;
  gboolean ok;

  /* Before the transaction: an entry someone else's now stays forgotten
   * when a refused write undoes the transaction. */
  settle (state, part, changes);
  tx = lm_journal_begin (state);
  refused = g_new0 (gboolean, changes->len + 1);
  /* 1, 2: durable before anything is touched. */
  record (state, part, changes, before, known);
  if (part->prepare != NULL)
    part->prepare (state, changes, data);
  if (!lm_journal_commit (tx, error))
    return FALSE;
  if (changes->len == 0)
    return TRUE;

  /* 3: the writes; a refusal undone as the part says. */
  ok = part->write_all != NULL ? part->write_all (changes, refused, data, error)
                               : write_each (part, changes, data, refused, failures, error);
  if (!ok)
    {
      lm_journal_undo (tx);
      return FALSE;
    }
  for (guint i = 0; i < changes->len; i++)
    if (refused[i])
      {
        take_back (state, part, g_ptr_array_index (changes, i), g_ptr_array_index (before, i),
                   g_array_index (known, gboolean, i));
        any_refused = TRUE;
      }
  if (any_refused && part->write_all == NULL)
    {
      g_autoptr (GError) save_error = NULL;
      if (!lm_journal_save (state, &save_error))
        lm_journal_add_failure (failures, save_error->message);
    }
  else if (any_refused)
    lm_journal_save_soon (state); /* vanished: the restore finds nothing there */
  record_shown (state, part, changes, data);
  return TRUE;
}

/* One entry: the original written back if the value is still ours; the
 * entry forgotten unless the write failed and the part keeps those. */
static void
restore_one (LmState *state, const LmJournalPart *part, const char *key, gpointer data,
             GString *failures)
{
  g_autofree char *original = lm_journal_original (state, part->part, key);
  g_autofree char *name = lm_journal_name (part, key);
  g_autofree char *current = NULL;
  g_autoptr (GError) error = NULL;

  if (original == NULL || (part->valid != NULL && !part->valid (key, original)))
    {
      /* Not something this daemon wrote: the file was tampered with. */
      g_autofree char *shown = lm_escape (key, -1, LM_ESCAPE_DEFAULT);
      g_autofree char *value = lm_escape (original, -1, LM_ESCAPE_DEFAULT);
      g_warning ("Refusing the saved %s “%s” (original “%s”) in %s: laptop-moded writes no such "
                 "name or value; dropping it",
                 part->what, shown, value != NULL ? value : "", lm_state_get_path (state));
      lm_journal_forget (state, part->part, key);
      return;
    }
  current = part->read (key, data, &error);
  if (current == NULL && error != NULL)
    {
      lm_journal_add_failure (failures, error->message);
      return; /* kept: tried again at the next Stop or start */
    }
  if (current == NULL)
    g_message ("%s is gone; nothing to restore there", name);
  else
    switch (lm_journal_check (state, part->part, key, current))
      {
        case LM_JOURNAL_AS_ORIGINAL:
          break;
        case LM_JOURNAL_CHANGED:
          g_message ("%s was changed to %s by someone else; leaving it (original was %s)", name,
                     current, original);
          break;
        case LM_JOURNAL_OURS:
          if (put_back (part, key, original, data, &error))
            break;
          lm_journal_add_failure (failures, error->message);
          if (part->keep_failed)
            return;
          break;
      }
  lm_journal_forget (state, part->part, key);
}

/* All at once, by the part's own restore_all(): what it marks done is
 * forgotten. */
static gboolean
restore_all (LmState *state, const LmJournalPart *part, const char *const *keys, gpointer data,
             GString *failures, GError **error)
{
  g_autoptr (GPtrArray) entries = entries_for (state, part, keys);

  if (!part->restore_all (entries, data, failures, error))
    return FALSE;
  for (guint i = 0; i < entries->len; i++)
    {
      LmJournalEntry *e = g_ptr_array_index (entries, i);
      if (e->done)
        lm_journal_forget (state, part->part, e->key);
    }
  return TRUE;
}

gboolean
lm_journal_restore_keys (LmState *state, const LmJournalPart *part, const char *const *keys,
                         gpointer data, GError **error)
{
  g_autoptr (GString) failures = g_string_new (NULL);
  g_autoptr (GError) save_error = NULL;

  if (keys[0] == NULL)
    return TRUE;
  if (part->restore_all != NULL)
    {
      if (!restore_all (state, part, keys, data, failures, error))
        return FALSE;
    }
  else
    for (guint i = 0; keys[i] != NULL; i++)
      restore_one (state, part, keys[i], data, failures);
  if (part->restore_soon)
    lm_journal_save_soon (state);
  else if (!lm_journal_save (state, &save_error))
    lm_journal_add_failure (failures, save_error->message);
  if (failures->len == 0)
    return TRUE;
  g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "Could not restore every %s: %s", part->what,
               failures->str);
  return FALSE;
}

gboolean
lm_journal_restore (LmState *state, const LmJournalPart *part, gpointer data, GError **error)
{
  g_auto (GStrv) keys = NULL;

  if (part->with != NULL)
    {
      /* Left by a crash inside this part's writes; a failure stays
       * journaled and is tried again next time. */
      g_autoptr (GError) with_error = NULL;
      if (!lm_journal_restore (state, part->with, NULL, &with_error))
        g_warning ("%s", with_error->message);
    }
  keys = part_keys (state, part);
  return lm_journal_restore_keys (state, part, (const char *const *) keys, data, error);
}
