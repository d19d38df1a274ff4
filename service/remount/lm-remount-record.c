/* lm-remount-record.c: the journal key of a remount record, and the reader of records
 * from state files written before the journal held them; never writes that old layout. */
#include "config.h"

#include "lm-mount-options.h"
#include "lm-remount-private.h"

#include <string.h>

char *
lm_remount_record_key (const char *dev, const char *target)
{
  return g_strconcat (dev, " ", target, NULL);
}

/* The superblock ("major:minor", never a space) and mount point of journal
 * key @record; FALSE for a key that is not one (a hand-edited file). */
gboolean
lm_remount_record_split (const char *record, char **dev, char **target)
{
  const char *space = strchr (record, ' ');

  if (space == NULL || space == record || space[1] != '/')
    return FALSE;
  /* Only what lm_remount_record_key() writes: "major:minor /mount/point". */
  const char *colon = memchr (record, ':', (gsize) (space - record));
  if (colon == NULL || colon == record || colon + 1 == space
      || strspn (record, "0123456789") != (gsize) (colon - record)
      || strspn (colon + 1, "0123456789") != (gsize) (space - colon - 1))
    return FALSE;
  *dev = g_strndup (record, space - record);
  *target = g_strdup (space + 1);
  return TRUE;
}

char *
lm_remount_record_dev (const char *record)
{
  const char *space = strchr (record, ' ');
  return space != NULL ? g_strndup (record, space - record) : g_strdup (record);
}

/* Up to the release that moved remounts onto the journal, a record was three
 * groups keyed by the superblock's "major:minor", each value \xNN-escaped:
 * "Remounts" (mount point), "RemountsOriginal" and "RemountsApplied". A
 * daemon of that version killed while laptop mode was on leaves such a file;
 * its first start after the upgrade must still restore it. This can go once
 * no supported upgrade starts from a version before that one. */
#define OLD_MOUNTS "Remounts"
#define OLD_ORIGINAL "RemountsOriginal"
#define OLD_APPLIED "RemountsApplied"

static char *
old_get (LmState *state, const char *group, const char *key)
{
  g_autofree char *text = lm_state_get (state, group, key);
  return text != NULL ? lm_remount_unescape (text) : NULL;
}

void
lm_remount_legacy_migrate (LmState *state, const LmJournalPart *part)
{
  g_auto (GStrv) keys = lm_state_get_keys (state, OLD_MOUNTS);
  g_auto (GStrv) originals = lm_state_get_keys (state, OLD_ORIGINAL);
  g_auto (GStrv) applieds = lm_state_get_keys (state, OLD_APPLIED);

  for (guint i = 0; keys[i] != NULL; i++)
    {
      g_autofree char *target = old_get (state, OLD_MOUNTS, keys[i]);
      g_autofree char *original = old_get (state, OLD_ORIGINAL, keys[i]);
      g_autofree char *applied = old_get (state, OLD_APPLIED, keys[i]);
      g_autofree char *record = NULL;

      if (target == NULL || original == NULL)
        {
          g_warning ("Incomplete remount record %s in the state file; dropping it", keys[i]);
          continue;
        }
      record = lm_remount_record_key (keys[i], target);
      g_autoptr (LmJournalChange) c = lm_journal_change_new (record, original, applied);
      lm_journal_stage (state, part, c);
    }
  for (guint i = 0; keys[i] != NULL; i++)
    lm_state_remove (state, OLD_MOUNTS, keys[i]);
  for (guint i = 0; originals[i] != NULL; i++)
    lm_state_remove (state, OLD_ORIGINAL, originals[i]);
  for (guint i = 0; applieds[i] != NULL; i++)
    lm_state_remove (state, OLD_APPLIED, applieds[i]);
}

LmJournalEntry *
lm_remount_record_find (GPtrArray *entries, const char *dev)
{
  for (guint i = 0; i < entries->len; i++)
    {
      LmJournalEntry *e = g_ptr_array_index (entries, i);
      g_autofree char *d = lm_remount_record_dev (e->key);
      if (g_str_equal (d, dev))
        return e;
    }
  return NULL;
}
