/* lm-disk-settings.c: the per-disk standby timer, APM level and readahead
 * while laptop mode is on, and their exact restore through the journal
 * (its part, lm_disks_journal_part; the participant row that drives it is
 * participants/lm-rows.c).
 * An excluded disk is never sent a command, even to restore; a disk in
 * standby is sent none either (each would spin it up): what it should
 * get waits for its next wake. */
#include "config.h"

#include <string.h>

#include "lm-ata.h"
#include "lm-blockdev.h"
#include "lm-disk-policy.h"
#include "lm-disks-private.h"
#include "lm-error.h"
#include "lm-escape.h"
#include "lm-io.h"
#include "lm-journal.h"
#include "lm-paths.h"
#include "lm-sgio.h"

/* The journal part; its originals are group "Disks" in the state file. */
#define PART "Disks"

/* Journal keys are "<id>.<what>"; <id>.Device names the disk the others
 * were saved for. */
static char *
state_key (const char *id, const char *what)
{
  return g_strdup_printf ("%s.%s", id, what);
}

static gboolean
write_readahead (const char *name, guint kib, GError **error)
{
  g_autofree char *sys = g_strdup_printf ("/sys/block/%s/queue/read_ahead_kb", name);
  g_autofree char *path = lm_path (sys);
  g_autofree char *value = g_strdup_printf ("%u", kib);
  g_autofree char *now = lm_io_read_value (path, NULL);

  if (now != NULL && g_str_equal (now, value))
    return TRUE; /* already so: nothing to write */
  return lm_io_write_value (path, value, error);
}

/* What one apply sends to @d, for the journal's writer. */
typedef struct
{
  LmDisk *d;
  guint8 timer;
  guint apm;
  gint readahead_kib;
} DiskWrite;

/* The journal's writer: which change the key's suffix says. A drive that
 * refuses is named in the failures, and its original sent back at restore
 * anyway (the part keeps refused values). */
static gboolean
write_setting (const char *key, const char *value, gpointer data, GError **error)
{
  DiskWrite *w = data;
  guint8 cdb[LM_ATA_CDB_LEN];

  if (g_str_has_suffix (key, ".Standby"))
    {
      lm_ata_cdb_idle (cdb, w->timer);
      if (!lm_disk_send (w->d, LM_DISKS_CMD_IDLE, cdb, error))
        {
          g_prefix_error (error, "standby timer: ");
          return FALSE;
        }
      w->d->applied_standby = w->timer;
      return TRUE;
    }
  if (g_str_has_suffix (key, ".APM"))
    {
      lm_ata_cdb_apm (cdb, w->apm);
      if (!lm_disk_send (w->d, LM_DISKS_CMD_APM, cdb, error))
        {
          g_prefix_error (error, "APM: ");
          return FALSE;
        }
      w->d->applied_apm = (gint) w->apm;
      return TRUE;
    }
  if (!write_readahead (w->d->name, (guint) w->readahead_kib, error))
    {
      g_prefix_error (error, "readahead: ");
      return FALSE;
    }
  w->d->applied_readahead = w->readahead_kib;
  return TRUE;
}

static gboolean restore_all (GPtrArray *entries, gpointer data, GString *failures, GError **error);

/* Restored per disk, by id (restore_all): a disk asleep keeps its entries
 * until it wakes. */
const LmJournalPart lm_disks_journal_part = {
  .part = PART,
  .what = "disk",
  .mode = LM_JOURNAL_EACH_KEPT,
  .write = write_setting,
  .restore_all = restore_all,
};

static void
add_change (GPtrArray *changes, const char *id, const char *what, const char *original,
            const char *value, gboolean unmarked)
{
  g_autofree char *key = state_key (id, what);
  LmJournalChange *c = lm_journal_change_new (key, original, value);

  c->unmarked = unmarked;
  g_ptr_array_add (changes, c);
}

/* What to change on @d and its originals; what cannot be changed goes to
 * @failures. The drive's current standby timer cannot be read: what goes
 * back is ACStandbySeconds, default 0 (off, the power-on default of most
 * drives). <id>.Device, first, names the disk the others are saved for. */
static GPtrArray *
changes_for (LmDisk *d, const LmDiskPolicy *p, DiskWrite *w, GString *failures)
{
  g_autoptr (GPtrArray) changes = lm_journal_changes_new ();
  g_autoptr (GError) error = NULL;

  add_change (changes, d->id, "Device", d->name, NULL, FALSE);
  if (d->ata && p->standby_seconds >= 0
      && lm_ata_standby_encode ((guint) p->standby_seconds, &w->timer, NULL))
    {
      guint8 ac = 0;
      if (p->ac_standby_seconds >= 0)
        lm_ata_standby_encode ((guint) p->ac_standby_seconds, &ac, NULL);
      g_autofree char *original = g_strdup_printf ("%u", ac);
      g_autofree char *value = g_strdup_printf ("%u", w->timer);
      add_change (changes, d->id, "Standby", original, value, TRUE);
    }
  if (d->ata && p->apm > 0)
    {
      g_autofree char *path = lm_blockdev_devnode (d->name);
      g_autoptr (LmSgio) dev = lm_sgio_open (path, &error);
      guint original_apm = 0;
      if (dev != NULL && lm_sgio_read_apm (dev, &original_apm, &error))
        {
          g_autofree char *original = g_strdup_printf ("%u", original_apm);
          g_autofree char *value = g_strdup_printf ("%d", p->apm);
          w->apm = (guint) p->apm;
          add_change (changes, d->id, "APM", original, value, TRUE);
        }
      else
        {
          g_autofree char *message = g_strconcat ("APM left alone: ", error->message, NULL);
          lm_journal_add_failure (failures, message);
        }
    }
  if (p->readahead_kib >= 0)
    {
      g_autofree char *original = lm_blockdev_read (d->name, "queue/read_ahead_kb");
      g_autofree char *value = g_strdup_printf ("%d", p->readahead_kib);
      w->readahead_kib = p->readahead_kib;
      if (original != NULL)
        add_change (changes, d->id, "ReadaheadKiB", original, value, FALSE);
      else
        lm_journal_add_failure (failures, "no queue/read_ahead_kb");
    }
  if (changes->len == 1)
    g_ptr_array_set_size (changes, 0); /* the device alone: nothing to do */
  return g_steal_pointer (&changes);
}

static void restore_held_back (LmDisks *self, LmDisk *d);

/* Originals first, durably, then the changes, through the journal. A drive
 * that refuses a command does not keep laptop mode off: the failure shows
 * in the Disks property and the log. A drive in standby gets nothing now
 * (IDENTIFY, IDLE and SET FEATURES would spin it up, and turning laptop
 * mode on again must not wake a disk): all of it goes out when it wakes. */
void
lm_disk_apply (LmDisks *self, LmDisk *d)
{
  const LmDiskPolicy *p = lm_disk_policies_lookup (self->policies, d->id, d->name);
  g_autoptr (GString) failures = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) changes = NULL;
  DiskWrite w = { d, 0, 0, -1 };

  if (p == NULL || d->excluded)
    return;
  if ((p->standby_seconds >= 0 || p->apm > 0) && lm_disk_in_standby (d))
    {
      g_debug ("Disk %s is in standby: its laptop-mode settings go out when it wakes", d->name);
      d->apply_pending = TRUE;
      return;
    }
  d->apply_pending = FALSE;
  /* Originals it never got back (it slept through the restore): first. */
  if (d->restore_pending)
    restore_held_back (self, d);
  if ((p->standby_seconds >= 0 || p->apm > 0) && !d->ata)
    lm_journal_add_failure (failures, "not an ATA disk: no standby timer or APM");
  changes = changes_for (d, p, &w, failures);
  if (!lm_journal_apply (self->state, &lm_disks_journal_part, changes, &w, failures, &error))
    {
      g_autofree char *message = g_strconcat ("nothing changed: ", error->message, NULL);
      lm_journal_add_failure (failures, message);
    }
  else if (changes->len > 0)
    g_message ("Disk %s: laptop-mode settings applied", d->name);
  lm_disk_set_error (d, failures->len > 0 ? failures->str : NULL);
}

void
lm_disks_apply (LmDisks *self, const LmSettings *settings)
{
  GHashTableIter iter;
  gpointer d;
  gboolean same = lm_disk_policies_equal (self->policies, settings->disks);

  if (self->active && !same)
    {
      g_autoptr (GError) error = NULL;
      if (!lm_disks_restore (self, &error))
        g_warning ("%s", error->message);
    }
  g_hash_table_unref (self->policies);
  self->policies = lm_disk_policies_copy (settings->disks);
  g_hash_table_iter_init (&iter, self->disks);
  while (g_hash_table_iter_next (&iter, NULL, &d))
    {
      LmDisk *disk = d;
      lm_disk_set_excluded (disk, lm_disk_policy_excluded (lm_disk_policies_lookup (
                                      self->policies, disk->id, disk->name)));
      /* It slept through the restore, so it still has what this apply
       * would send: nothing to send, nothing to put back. */
      if (disk->restore_pending && same && !disk->excluded
          && (disk->applied_standby >= 0 || disk->applied_apm >= 0 || disk->applied_readahead >= 0))
        {
          disk->restore_pending = FALSE;
          g_debug ("Disk %s slept while laptop mode was off: its settings are still in effect",
                   disk->name);
          continue;
        }
      if (!self->active
          || (disk->applied_standby < 0 && disk->applied_apm < 0 && disk->applied_readahead < 0))
        lm_disk_apply (self, disk);
    }
  self->active = TRUE;
  lm_disks_update_excluded (self);
  lm_disks_publish (self);
}

static LmDisk *
find_by_id (LmDisks *self, const char *id, const char *name)
{
  GHashTableIter iter;
  gpointer d;

  g_hash_table_iter_init (&iter, self->disks);
  while (g_hash_table_iter_next (&iter, NULL, &d))
    if (g_str_equal (((LmDisk *) d)->id, id))
      return d;
  d = name != NULL ? g_hash_table_lookup (self->disks, name) : NULL;
  return d != NULL && g_str_equal (((LmDisk *) d)->id, name) ? d : NULL;
}

/* The entry of disk @id's @what, or NULL. */
static LmJournalEntry *
entry_of (GPtrArray *entries, const char *id, const char *what)
{
  g_autofree char *key = state_key (id, what);

  for (guint i = 0; i < entries->len; i++)
    {
      LmJournalEntry *e = g_ptr_array_index (entries, i);
      if (g_str_equal (e->key, key))
        return e;
    }
  return NULL;
}

/* Disk @id's entries done: forgotten. */
static void
forget (GPtrArray *entries, const char *id)
{
  /* ReadaheadApplied: what versions before the journal wrote. */
  static const char *const whats[]
      = { "Device", "Standby", "APM", "ReadaheadKiB", "ReadaheadApplied" };
  for (gsize i = 0; i < G_N_ELEMENTS (whats); i++)
    {
      LmJournalEntry *e = entry_of (entries, id, whats[i]);
      if (e != NULL)
        e->done = TRUE;
    }
}

static char *
saved (GPtrArray *entries, const char *id, const char *what)
{
  LmJournalEntry *e = entry_of (entries, id, what);
  return e != NULL ? g_strdup (e->original) : NULL;
}

/* Whether saved value *@value is a whole number up to @max; if not, it is
 * dropped with a warning naming it, and FALSE tells the caller to skip the disk. */
static gboolean
saved_number (const char *id, const char *what, char **value, guint64 max)
{
  if (*value == NULL || g_ascii_string_to_unsigned (*value, 10, 0, max, NULL, NULL))
    return TRUE;
  g_autofree char *shown_id = lm_escape (id, -1, LM_ESCAPE_DEFAULT);
  g_autofree char *shown = lm_escape (*value, -1, LM_ESCAPE_DEFAULT);
  g_warning ("Refusing the saved %s “%s” of disk %s in the state file: not a number up to "
             "%" G_GUINT64_FORMAT "; not restoring that disk",
             what, shown, shown_id, max);
  g_clear_pointer (value, g_free);
  return FALSE;
}

/* Send @cdb (@command: its LM_DISKS_CMD_* name) to @d; a refusal is named
 * in @failures ("sda: APM: …"). */
static gboolean
send_or_note (LmDisk *d, const guint8 cdb[LM_ATA_CDB_LEN], const char *command, const char *what,
              GString *failures)
{
  g_autoptr (GError) error = NULL;

  if (lm_disk_send (d, command, cdb, &error))
    return TRUE;
  g_string_append_printf (failures, "%s%s: %s: %s", failures->len ? "; " : "", d->name, what,
                          error->message);
  return FALSE;
}

/* Put back what the state file says, for every disk in it, present or
 * not: also used after a crash, before anything was applied by this run.
 * An excluded disk is not touched, even to restore. */
static gboolean
restore_disk (LmDisks *self, GPtrArray *entries, const char *id, GString *failures)
{
  g_autofree char *name = saved (entries, id, "Device");
  g_autofree char *standby = saved (entries, id, "Standby");
  g_autofree char *apm = saved (entries, id, "APM");
  g_autofree char *readahead = saved (entries, id, "ReadaheadKiB");
  LmJournalEntry *readahead_entry = entry_of (entries, id, "ReadaheadKiB");
  LmDisk *d = find_by_id (self, id, name);
  g_autoptr (GError) error = NULL;
  guint8 cdb[LM_ATA_CDB_LEN];
  gboolean ok = TRUE;

  if (d == NULL)
    {
      g_message ("Disk %s is gone; nothing to restore on it", id);
      return TRUE;
    }
  if (d->excluded)
    return TRUE;
  /* Numbers this daemon saved, or nothing: a tampered file sends no
   * command built from text it made up. */
  if (!saved_number (id, "APM", &apm, 255) || !saved_number (id, "Standby", &standby, 255)
      || !saved_number (id, "ReadaheadKiB", &readahead, G_MAXUINT32))
    return TRUE;
  if (apm != NULL)
    {
      lm_ata_cdb_apm (cdb, (guint) g_ascii_strtoull (apm, NULL, 10));
      ok &= send_or_note (d, cdb, LM_DISKS_CMD_APM, "APM", failures);
    }
  if (standby != NULL)
    {
      lm_ata_cdb_idle (cdb, (guint8) g_ascii_strtoull (standby, NULL, 10));
      ok &= send_or_note (d, cdb, LM_DISKS_CMD_IDLE, "standby timer", failures);
    }
  if (readahead != NULL)
    {
      g_autofree char *now = lm_blockdev_read (d->name, "queue/read_ahead_kb");
      if (now != NULL
          && lm_journal_verdict (readahead_entry->original, readahead_entry->applied, now)
                 == LM_JOURNAL_CHANGED)
        g_message ("Disk %s: read_ahead_kb was changed to %s by someone else; leaving it "
                   "(original was %s)",
                   d->name, now, readahead);
      else if (!write_readahead (d->name, (guint) g_ascii_strtoull (readahead, NULL, 10), &error))
        {
          g_string_append_printf (failures, "%s%s: readahead: %s", failures->len ? "; " : "",
                                  d->name, error->message);
          g_clear_error (&error);
          ok = FALSE;
        }
    }
  d->applied_standby = d->applied_apm = d->applied_readahead = -1;
  return ok;
}

/* What one restore puts back: every disk, or the one that woke. */
typedef struct
{
  LmDisks *self;
  const char *only; /* an id: that disk alone, awake now */
  GString *failures_of_one;
  guint restored;
} DisksRestore;

/* The journal's restorer. A disk asleep keeps its originals in the
 * journal for its next wake (a command now would spin it up); if laptop
 * mode is back on first, it still has what it should. A failed restore is
 * not retried forever: the drive forgets APM and its timer at the next
 * power cycle anyway. */
static gboolean
restore_all (GPtrArray *entries, gpointer data, GString *failures, GError **error)
{
  DisksRestore *r = data;
  g_autoptr (GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < entries->len; i++)
    {
      const char *key = ((LmJournalEntry *) g_ptr_array_index (entries, i))->key;
      if (g_str_has_suffix (key, ".Device"))
        g_ptr_array_add (ids, g_strndup (key, strlen (key) - strlen (".Device")));
    }
  for (guint i = 0; i < ids->len; i++)
    {
      const char *id = ids->pdata[i];
      g_autofree char *name = saved (entries, id, "Device");
      LmDisk *d = find_by_id (r->self, id, name);

      if (r->only != NULL && !g_str_equal (id, r->only))
        continue;
      if (r->only == NULL && d != NULL && !d->excluded && lm_disk_in_standby (d))
        {
          d->restore_pending = TRUE;
          g_debug ("Disk %s is in standby: its originals go back when it wakes", d->name);
          continue;
        }
      if (d != NULL)
        d->restore_pending = FALSE;
      restore_disk (r->self, entries, id, failures);
      forget (entries, id);
      r->restored++;
    }
  if (r->failures_of_one != NULL)
    g_string_append (r->failures_of_one, failures->str);
  return TRUE;
}

gboolean
lm_disks_restore (LmDisks *self, GError **error)
{
  DisksRestore r = { self, NULL, NULL, 0 };
  GHashTableIter iter;
  gpointer value;
  gboolean ok;

  /* Settings that waited for a sleeping disk are not needed any more. */
  g_hash_table_iter_init (&iter, self->disks);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    ((LmDisk *) value)->apply_pending = FALSE;
  ok = lm_journal_restore (self->state, &lm_disks_journal_part, &r, error);
  self->active = FALSE;
  if (r.restored > 0)
    g_message ("Restored the disks' standby timer, APM and readahead");
  lm_disks_publish (self);
  return ok;
}

/* The originals of @d that waited for it to wake: sent now, and forgotten. */
static void
restore_held_back (LmDisks *self, LmDisk *d)
{
  g_autoptr (GString) failures = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  DisksRestore r = { self, d->id, failures, 0 };

  d->restore_pending = FALSE;
  if (!lm_journal_restore (self->state, &lm_disks_journal_part, &r, &error) && failures->len == 0)
    lm_journal_add_failure (failures, error->message); /* the state file's */
  g_message ("Disk %s woke: its original standby timer, APM and readahead put back", d->name);
  lm_disk_set_error (d, failures->len > 0 ? failures->str : NULL);
}

void
lm_disk_woken (LmDisks *self, LmDisk *d)
{
  if (d->excluded)
    return;
  if (d->apply_pending && self->active)
    {
      lm_disk_apply (self, d); /* the originals first, if they waited too */
      if (!d->apply_pending)
        g_message ("Disk %s woke: laptop-mode settings sent now", d->name);
    }
  else if (d->restore_pending)
    restore_held_back (self, d);
  d->apply_pending = d->apply_pending && self->active;
  lm_disks_publish (self);
}

void
lm_disks_resume (LmDisks *self)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->disks);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      LmDisk *d = value;
      g_autoptr (GString) failures = g_string_new (NULL);
      g_autoptr (GError) error = NULL;
      guint8 cdb[LM_ATA_CDB_LEN];

      if (d->excluded || (d->applied_standby < 0 && d->applied_apm < 0))
        continue;
      if (d->applied_standby >= 0)
        {
          lm_ata_cdb_idle (cdb, (guint8) d->applied_standby);
          if (!lm_disk_send (d, LM_DISKS_CMD_IDLE, cdb, &error))
            g_string_append_printf (failures, "standby timer: %s; ", error->message);
          g_clear_error (&error);
        }
      if (d->applied_apm >= 0)
        {
          lm_ata_cdb_apm (cdb, (guint) d->applied_apm);
          if (!lm_disk_send (d, LM_DISKS_CMD_APM, cdb, &error))
            g_string_append_printf (failures, "APM: %s; ", error->message);
          g_clear_error (&error);
        }
      g_message ("Disk %s: standby timer and APM sent again after resume", d->name);
      if (failures->len > 2)
        g_string_truncate (failures, failures->len - 2);
      lm_disk_set_error (d, failures->len > 0 ? failures->str : NULL);
    }
}
