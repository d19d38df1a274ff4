/* lm-disks.c: the disks from sysfs, listed again on block uevents, and the
 * list's life cycle and funcs. Each disk's power state is watched by
 * lm-disk-watch.c, only when it matters (quiet past its threshold, or
 * woken), never on a fixed tick; an excluded disk is never sent a command,
 * has no timer and is not watched (lm-excluded.c keeps the kernel filters
 * from looking at it). Where spin-ups come from the kernel (bpf), no timer
 * runs for a sleeping disk: at most one per expected sleep after a spin-up.
 * Per-disk settings while laptop mode is on are lm-disk-settings.c's. */
#include "config.h"

#include "lm-disks.h"
#include "lm-disks-private.h"

#include <string.h>

#include "lm-ata.h"
#include "lm-blockdev.h"
#include "lm-disk-policy.h"
#include "lm-error.h"
#include "lm-io.h"
#include "lm-paths.h"
#include "lm-sgio.h"
#include "lm-uevent.h"

#define RESCAN_DELAY_MS 500
#define RESCAN_SETTLE_MS 3000

/* --- discovery -------------------------------------------------------------- */

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* The kernel filters and the user-space model stop looking at excluded
 * disks, and at what is stacked on them alone (the excluded func). */
void
lm_disks_update_excluded (LmDisks *self)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->disks);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (((LmDisk *) value)->excluded)
      g_ptr_array_add (names, ((LmDisk *) value)->name);
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  if (self->excluded_func == NULL
      || !self->excluded_func ((const char *const *) names->pdata, self->excluded_data))
    return;
  g_autofree char *list = g_strjoinv (", ", (char **) names->pdata);
  g_message ("Disks excluded, not watched: %s", *list ? list : "none");
}

static void
disk_free (LmDisk *d)
{
  g_clear_handle_id (&d->idle_id, g_source_remove);
  g_clear_handle_id (&d->recheck_id, g_source_remove);
  g_clear_pointer (&d->nvme, lm_disk_nvme_free);
  g_clear_pointer (&d->smart, lm_disk_smart_free);
  g_free (d->name);
  g_free (d->id);
  g_free (d->model);
  g_free (d->error);
  g_free (d);
}

/* An NVMe read finished (on the main thread). */
static void
nvme_read (gpointer disk_name, gpointer user_data)
{
  lm_disks_publish (user_data);
}

static LmDisk *
disk_new (LmDisks *self, const char *name)
{
  LmDisk *d = g_new0 (LmDisk, 1);
  g_autofree char *model = lm_blockdev_read (name, "device/model");

  d->owner = self;
  d->name = g_strdup (name);
  d->id = lm_blockdev_stable_id (name);
  d->model = g_utf8_make_valid (model != NULL ? model : "", -1);
  d->rotational = lm_blockdev_flag (name, "queue/rotational");
  d->removable = lm_blockdev_flag (name, "removable");
  d->excluded = lm_disk_policy_excluded (lm_disk_policies_lookup (self->policies, d->id, name));
  d->applied_standby = d->applied_apm = d->applied_readahead = -1;
  d->start_mono = d->since_mono = g_get_monotonic_time ();
  d->since_real = g_get_real_time ();
  lm_blockdev_read_io (name, &d->io);
  d->io_mono = g_get_monotonic_time ();
  d->nvme = lm_disk_nvme_new (name, nvme_read, self);
  lm_disk_watch_begin (d);
  if (d->ata && d->rotational)
    d->smart = lm_disk_smart_new ();
  g_message ("Disk %s (%s%s%s): %s%s", name, d->id, *d->model ? ", " : "", d->model,
             d->ata ? "ATA, " : "",
             d->excluded ? "excluded"
             : d->ata    ? lm_ata_power_to_string (d->power)
                         : "state from I/O activity");
  return d;
}

void
lm_disks_rescan (LmDisks *self)
{
  g_autofree char *block = lm_path ("/sys/block");
  g_autoptr (GDir) dir = g_dir_open (block, 0, NULL);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  const char *name;
  GHashTableIter iter;
  gpointer key, value;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      if (!lm_blockdev_is_listed (name))
        continue;
      LmDisk *d = g_hash_table_lookup (self->disks, name);
      if (d == NULL)
        {
          d = disk_new (self, name);
          g_hash_table_insert (self->disks, d->name, d);
          if (self->active)
            lm_disk_apply (self, d);
        }
      g_hash_table_add (seen, d->name);
    }
  g_hash_table_iter_init (&iter, self->disks);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (!g_hash_table_contains (seen, key))
      {
        g_message ("Disk %s is gone", (const char *) key);
        g_hash_table_iter_remove (&iter);
      }
  lm_disks_update_excluded (self);
  lm_disks_publish (self);
}

static gboolean
rescan_now (gpointer user_data)
{
  LmDisks *self = user_data;

  self->rescan_id = 0;
  lm_disks_rescan (self);
  return G_SOURCE_REMOVE;
}

static gboolean
rescan_settled (gpointer user_data)
{
  LmDisks *self = user_data;

  self->settle_id = 0;
  lm_disks_rescan (self);
  return G_SOURCE_REMOVE;
}

/* A burst of block events (a partition table read) gives one rescan soon,
 * and one more once the burst is over: a loop device detached while udev
 * still has it open is cleared only after its event. */
static void
on_uevent (const char *subsystem, const char *action, gpointer user_data)
{
  LmDisks *self = user_data;

  if (!g_str_equal (subsystem, "block"))
    return;
  if (self->rescan_id == 0)
    self->rescan_id = g_timeout_add (RESCAN_DELAY_MS, rescan_now, self);
  g_clear_handle_id (&self->settle_id, g_source_remove);
  self->settle_id = g_timeout_add (RESCAN_SETTLE_MS, rescan_settled, self);
}

/* --- life cycle ---------------------------------------------------------------- */

LmDisks *
lm_disks_new (LmState *state, LmDisksPublishFunc publish, gpointer user_data)
{
  LmDisks *self = g_new0 (LmDisks, 1);

  self->publish = publish;
  self->publish_data = user_data;
  self->state = state;
  self->disks = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) disk_free);
  self->policies = lm_disk_policies_new ();
  self->idle_s = 20;
  return self;
}

/* A new threshold takes effect at each disk's next timer; new exclusions
 * at once. */
void
lm_disks_configure (LmDisks *self, const LmSettings *settings)
{
  self->idle_s = MAX (1u, settings->spinup_idle);
  self->recheck_s = settings->disk_recheck;
  if (self->active)
    lm_disks_apply (self, settings);
  else
    {
      g_hash_table_unref (self->policies);
      self->policies = lm_disk_policies_copy (settings->disks);
    }
  if (self->started)
    {
      /* Newly excluded disks stop being asked; newly included ones are probed. */
      GHashTableIter iter;
      gpointer d;
      g_hash_table_iter_init (&iter, self->disks);
      while (g_hash_table_iter_next (&iter, NULL, &d))
        {
          LmDisk *disk = d;
          gboolean excluded = lm_disk_policy_excluded (
              lm_disk_policies_lookup (self->policies, disk->id, disk->name));
          lm_disk_set_excluded (disk, excluded);
        }
      lm_disks_update_excluded (self);
      lm_disks_publish (self);
    }
}

void
lm_disks_start (LmDisks *self)
{
  g_autoptr (GError) error = NULL;

  self->started = TRUE;
  self->uevent = lm_uevent_new (on_uevent, self, &error);
  if (self->uevent == NULL)
    g_warning ("%s; disks plugged in later will not be listed", error->message);
  lm_disks_rescan (self);
}

void
lm_disks_free (LmDisks *self)
{
  if (self == NULL)
    return;
  g_clear_handle_id (&self->rescan_id, g_source_remove);
  g_clear_handle_id (&self->settle_id, g_source_remove);
  g_clear_handle_id (&self->power_notes_id, g_source_remove);
  g_clear_pointer (&self->power_notes, g_ptr_array_unref);
  g_clear_pointer (&self->uevent, lm_uevent_free);
  g_hash_table_unref (self->disks);
  g_hash_table_unref (self->policies);
  g_free (self);
}

void
lm_disks_set_power_func (LmDisks *self, LmDisksPowerFunc func, gpointer user_data)
{
  self->power_func = func;
  self->power_data = user_data;
}

void
lm_disks_set_last_io_func (LmDisks *self, LmDisksLastIoFunc func, gpointer user_data)
{
  self->last_io_func = func;
  self->last_io_data = user_data;
}

void
lm_disks_set_own_wake_func (LmDisks *self, LmDisksOwnWakeFunc func, gpointer user_data)
{
  self->own_wake_func = func;
  self->own_wake_data = user_data;
}

void
lm_disks_set_excluded_func (LmDisks *self, LmDisksExcludedFunc func, gpointer user_data)
{
  self->excluded_func = func;
  self->excluded_data = user_data;
}

void
lm_disks_set_wear_func (LmDisks *self, LmDisksWearFunc func, gpointer user_data)
{
  self->wear_func = func;
  self->wear_data = user_data;
}

const char *
lm_disks_find (LmDisks *self, const char *name_or_id)
{
  GHashTableIter iter;
  gpointer value;
  LmDisk *d = g_hash_table_lookup (self->disks, name_or_id);

  if (d == NULL)
    {
      g_hash_table_iter_init (&iter, self->disks);
      while (d == NULL && g_hash_table_iter_next (&iter, NULL, &value))
        if (g_strcmp0 (((LmDisk *) value)->id, name_or_id) == 0)
          d = value;
    }
  return d != NULL && !d->excluded ? d->name : NULL;
}
