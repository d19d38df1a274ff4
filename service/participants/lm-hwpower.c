/* lm-hwpower.c: SATA link power, runtime PM and NVMe latency tolerance, over
 * the journal. Writes only files under /sys/devices reached inside the root,
 * never a disk that is excluded, and never a value someone else changed. */
#include "lm-hwpower.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "lm-blockdev.h"
#include "lm-disk-policy.h"
#include "lm-error.h"
#include "lm-escape.h"
#include "lm-io.h"
#include "lm-journal.h"
#include "lm-participants.h"
#include "lm-paths.h"
#include "lm-removable.h"

#define DEVICES "/sys/devices"
#define LINK_POLICY "link_power_management_policy"
#define LATENCY "power/pm_qos_latency_tolerance_us"
/* The kernel shows these for "not managed by the OS" and takes no write of
 * them (ata_scsi_lpm_store starts at max_performance): the nearest it
 * takes is max_performance, what kernels before 6.9 showed for the same. */
#define LPM_UNWRITABLE_1 "keep_firmware_settings"
#define LPM_UNWRITABLE_2 "keep_firmware"
#define LPM_NEAREST "max_performance"

static gboolean
is_keep (const char *value)
{
  return value == NULL || *value == '\0' || g_str_equal (value, "keep");
}

static char *
read_value (const char *system_path)
{
  g_autofree char *path = lm_path (system_path);
  return lm_io_read_value (path, NULL);
}

/* --- topology ------------------------------------------------------------ */

/* The disk's own device ("/sys/devices/…/0:0:0:0", "…/nvme/nvme0"). */
static char *
disk_device (const char *disk)
{
  g_autofree char *link = g_strdup_printf ("/sys/block/%s/device", disk);
  return lm_path_resolve (link, DEVICES);
}

/* The nearest ancestor on the PCI bus: the AHCI, NVMe or virtio function. */
static char *
controller_of (const char *device)
{
  g_autofree char *dir = g_strdup (device);

  while (g_str_has_prefix (dir, DEVICES "/"))
    {
      g_autofree char *sub = g_build_filename (dir, "subsystem", NULL);
      g_autofree char *bus = lm_path_resolve (sub, "/sys/bus");
      if (bus != NULL && g_str_equal (bus, "/sys/bus/pci"))
        return g_steal_pointer (&dir);
      char *up = g_path_get_dirname (dir);
      g_free (dir);
      dir = up;
    }
  return NULL;
}

static gboolean
is_under (const char *path, const char *dir)
{
  return g_str_has_prefix (path, dir) && (path[strlen (dir)] == '/' || path[strlen (dir)] == '\0');
}

/* The device a class entry belongs to: /sys/class/scsi_host/host0 is
 * …/ata1/host0/scsi_host/host0, its device …/ata1/host0. */
static char *
class_device (const char *cls, const char *name, guint up)
{
  g_autofree char *link = g_strdup_printf ("/sys/class/%s/%s", cls, name);
  g_autofree char *dir = lm_path_resolve (link, DEVICES);

  for (guint i = 0; dir != NULL && i < up; i++)
    {
      char *parent = g_path_get_dirname (dir);
      g_free (dir);
      dir = parent;
    }
  return g_steal_pointer (&dir);
}

static gboolean
disk_excluded (const LmSettings *settings, const char *disk)
{
  g_autofree char *id = lm_blockdev_stable_id (disk);
  return lm_disk_policy_excluded (lm_disk_policies_lookup (settings->disks, id, disk));
}

static gboolean
disk_runtime_pm (const LmSettings *settings, const char *disk)
{
  g_autofree char *id = lm_blockdev_stable_id (disk);
  const LmDiskPolicy *p = lm_disk_policies_lookup (settings->disks, id, disk);
  return p != NULL && p->runtime_pm >= 0 ? p->runtime_pm == 1 : settings->runtime_pm;
}

/* name → its device, for every listed disk with one. */
static GHashTable *
disks_with_devices (void)
{
  g_autofree char *block = lm_path ("/sys/block");
  g_autoptr (GDir) dir = g_dir_open (block, 0, NULL);
  GHashTable *disks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      char *dev = lm_blockdev_is_listed (name) ? disk_device (name) : NULL;
      if (dev != NULL)
        g_hash_table_insert (disks, g_strdup (name), dev);
    }
  return disks;
}

/* Whether any disk on @device (or below it) is excluded. */
static gboolean
any_excluded_under (const LmSettings *settings, GHashTable *disks, const char *device)
{
  GHashTableIter iter;
  gpointer name, dev;

  g_hash_table_iter_init (&iter, disks);
  while (g_hash_table_iter_next (&iter, &name, &dev))
    if (is_under (dev, device) && disk_excluded (settings, name))
      return TRUE;
  return FALSE;
}

static char **
class_entries (const char *cls)
{
  g_autofree char *sys = g_strdup_printf ("/sys/class/%s", cls);
  g_autofree char *path = lm_path (sys);
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&names), FALSE);
}

/* --- what to write --------------------------------------------------------- */

/* Canonical path → value, for the settings as they stand. */
static void
add_target (GHashTable *targets, const char *device, const char *file, const char *value)
{
  g_autofree char *sys = g_build_filename (device, file, NULL);
  char *path = lm_path_resolve (sys, DEVICES);

  if (path == NULL)
    return; /* the kernel offers no such file here */
  g_hash_table_replace (targets, path, g_strdup (value));
}

static void
add_runtime_pm (GHashTable *targets, const LmSettings *settings, const char *device)
{
  add_target (targets, device, "power/control", "auto");
  if (settings->runtime_pm_autosuspend_ms > 0)
    {
      g_autofree char *file = g_build_filename (device, "power/autosuspend_delay_ms", NULL);
      g_autofree char *now = read_value (file);
      g_autofree char *v = g_strdup_printf ("%u", settings->runtime_pm_autosuspend_ms);
      /* Unreadable (EIO) where the device does not use autosuspend. */
      if (now != NULL)
        add_target (targets, device, "power/autosuspend_delay_ms", v);
    }
}

static GHashTable *
targets_for (const LmSettings *settings)
{
  GHashTable *targets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) disks = disks_with_devices ();
  GHashTableIter iter;
  gpointer name, dev;

  if (!is_keep (settings->sata_link_policy))
    {
      g_auto (GStrv) hosts = class_entries ("scsi_host");
      for (guint i = 0; hosts[i] != NULL; i++)
        {
          g_autofree char *device = class_device ("scsi_host", hosts[i], 2);
          g_autofree char *cls = class_device ("scsi_host", hosts[i], 0);
          if (device == NULL || cls == NULL || any_excluded_under (settings, disks, device))
            continue;
          /* Link power management there stops the controller seeing a
           * drive pulled out. */
          if (lm_removable_host_hotplug (hosts[i]))
            {
              g_message ("SATA host %s is a hot-plug or external port: link power left alone",
                         hosts[i]);
              continue;
            }
          add_target (targets, cls, LINK_POLICY, settings->sata_link_policy);
        }
    }
  if (!is_keep (settings->nvme_latency_tolerance))
    {
      g_auto (GStrv) ctrls = class_entries ("nvme");
      for (guint i = 0; ctrls[i] != NULL; i++)
        {
          g_autofree char *device = class_device ("nvme", ctrls[i], 0);
          if (device != NULL && !any_excluded_under (settings, disks, device))
            add_target (targets, device, LATENCY, settings->nvme_latency_tolerance);
        }
    }
  g_hash_table_iter_init (&iter, disks);
  while (g_hash_table_iter_next (&iter, &name, &dev))
    {
      if (disk_excluded (settings, name) || !disk_runtime_pm (settings, name))
        continue;
      g_autofree char *controller = controller_of (dev);
      add_runtime_pm (targets, settings, dev);
      /* A controller shared with an excluded disk is left alone. */
      if (controller != NULL && !any_excluded_under (settings, disks, controller))
        add_runtime_pm (targets, settings, controller);
    }
  return targets;
}

/* --- restore --------------------------------------------------------------- */

/* Only a file this daemon writes, at the canonical place it wrote it: the
 * path resolved again under /sys/devices must be the key itself (no "..",
 * no symbolic link leading elsewhere, e.g. in a fake or tampered root). */
static gboolean
valid_key (const char *key)
{
  static const char *const files[]
      = { "/" LINK_POLICY, "/" LATENCY, "/power/control", "/power/autosuspend_delay_ms", NULL };
  gboolean known = FALSE;

  if (!g_str_has_prefix (key, DEVICES "/") || strstr (key, "/../") != NULL
      || strstr (key, "/./") != NULL || strstr (key, "//") != NULL)
    return FALSE;
  for (guint i = 0; files[i] != NULL; i++)
    known = known || g_str_has_suffix (key, files[i]);
  if (!known)
    return FALSE;
  g_autofree char *resolved = lm_path_resolve (key, DEVICES);
  if (resolved != NULL)
    return g_str_equal (resolved, key);
  /* Not there (yet): at boot the daemon may start before the disk's host
   * is probed, and a device may be unplugged. That is no tampering (the
   * restore finds nothing to write back; the kernel starts it afresh)
   * if what is there of the path is where it says: its deepest existing
   * directory resolves to itself, not through a link elsewhere. */
  g_autofree char *path = lm_path (key);
  struct stat st;
  if (lstat (path, &st) == 0 || errno != ENOENT)
    return FALSE;
  g_autofree char *dir = g_path_get_dirname (key);
  while (strlen (dir) > strlen (DEVICES))
    {
      g_autofree char *dir_path = lm_path (dir);
      if (lstat (dir_path, &st) == 0)
        {
          g_autofree char *real = lm_path_resolve (dir, DEVICES);
          return real != NULL && g_str_equal (real, dir);
        }
      if (errno != ENOENT)
        return FALSE;
      char *up = g_path_get_dirname (dir);
      g_free (dir);
      dir = up;
    }
  return TRUE;
}

/* The kernel's words for these files: a policy name, "auto"/"on", a number. */
static gboolean
valid_value (const char *value)
{
  if (value == NULL || value[0] == '\0' || strlen (value) > 64)
    return FALSE;
  for (const char *p = value; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '-' && *p != ' ')
      return FALSE;
  return TRUE;
}

static char *
read_entry (const char *key, gpointer data, GError **error)
{
  return read_value (key);
}

/* Linux 7.2 answers EOPNOTSUPP for a SATA port without link power
 * management (an empty port, an emulated controller): nothing to save
 * there, and nothing the user must act on (refused, no error). */
static gboolean
write_entry (const char *key, const char *value, gpointer data, GError **error)
{
  g_autofree char *path = lm_path (key);
  g_autoptr (GError) local_error = NULL;

  if (lm_io_write_value (path, value, &local_error))
    return TRUE;
  if (errno == EOPNOTSUPP && g_str_has_suffix (key, LINK_POLICY))
    {
      g_debug ("%s", local_error->message);
      g_set_error_literal (error, LM_ERROR, LM_ERROR_REFUSED, local_error->message);
    }
  else
    g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

static gboolean
put_back_entry (const char *key, const char *original, gpointer data, GError **error)
{
  g_autofree char *path = lm_path (key);

  if (g_str_equal (original, LPM_UNWRITABLE_1) || g_str_equal (original, LPM_UNWRITABLE_2))
    {
      g_message ("%s was %s, which the kernel takes no write of; writing %s", key, original,
                 LPM_NEAREST);
      original = LPM_NEAREST;
    }
  return lm_io_write_value (path, original, error);
}

static gboolean
valid_entry (const char *key, const char *original)
{
  return valid_key (key) && valid_value (original);
}

/* Best effort: a file the kernel refuses is taken back out of the journal
 * alone; a failed restore is not retried (sysfs forgets at reboot). */
static const LmJournalPart journal_part = {
  .part = LM_HWPOWER_PART,
  .what = "hardware power setting",
  .mode = LM_JOURNAL_EACH,
  .keep_failed = FALSE,
  .theirs = LM_JOURNAL_LEAVE_ANY, /* even back to the original: theirs */
  .write = write_entry,
  .put_back = put_back_entry,
  .read = read_entry,
  .valid = valid_entry,
};

gboolean
lm_hwpower_restore (LmState *state, GError **error)
{
  gboolean ok;

  if (!lm_journal_saved (state, &journal_part))
    return TRUE;
  ok = lm_journal_restore (state, &journal_part, NULL, error);
  g_message ("Restored SATA link power, runtime PM and NVMe latency tolerance");
  return ok;
}

/* --- apply ----------------------------------------------------------------- */

/* What an earlier apply wrote and @targets no longer want: put back. */
static void
restore_unwanted (LmState *state, GHashTable *targets, GString *failures)
{
  g_autoptr (GPtrArray) pending = lm_journal_entries (state, &journal_part);
  g_autoptr (GPtrArray) unwanted = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < pending->len; i++)
    {
      LmJournalEntry *e = g_ptr_array_index (pending, i);
      if (!g_hash_table_contains (targets, e->key))
        g_ptr_array_add (unwanted, e->key);
    }
  g_ptr_array_add (unwanted, NULL);
  if (!lm_journal_restore_keys (state, &journal_part, (const char *const *) unwanted->pdata, NULL,
                                &error))
    lm_journal_add_failure (failures, error->message);
}

/* The values to change: not already so (one someone else changed since
 * an earlier apply the journal leaves as they wrote it). */
static GPtrArray *
changes_for (GHashTable *targets)
{
  GPtrArray *changes = lm_journal_changes_new ();
  g_autoptr (GList) keys = g_list_sort (g_hash_table_get_keys (targets), (GCompareFunc) strcmp);

  for (GList *l = keys; l != NULL; l = l->next)
    {
      const char *key = l->data;
      const char *value = g_hash_table_lookup (targets, key);
      g_autofree char *now = read_value (key);

      if (now == NULL || g_str_equal (now, value))
        continue;
      g_ptr_array_add (changes, lm_journal_change_new (key, now, value));
    }
  return changes;
}

gboolean
lm_hwpower_apply (const LmSettings *settings, LmState *state, GError **error)
{
  g_autoptr (GHashTable) targets = targets_for (settings);
  g_autoptr (GString) failures = g_string_new (NULL);
  g_autoptr (GPtrArray) changes = NULL;

  restore_unwanted (state, targets, failures);
  changes = changes_for (targets);
  if (!lm_journal_apply (state, &journal_part, changes, NULL, failures, error))
    return FALSE;
  if (changes->len > 0)
    g_message ("Hardware power settings applied: %u written", changes->len);
  if (failures->len == 0)
    return TRUE;
  g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "Hardware power settings: %s", failures->str);
  return FALSE;
}

gboolean
lm_hwpower_saved (LmState *state)
{
  return lm_journal_saved (state, &journal_part);
}

GHashTable *
lm_hwpower_applied (LmState *state)
{
  GHashTable *applied = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GPtrArray) entries = lm_journal_entries (state, &journal_part);

  for (guint i = 0; i < entries->len; i++)
    {
      LmJournalEntry *e = g_ptr_array_index (entries, i);
      if (e->applied != NULL)
        g_hash_table_insert (applied, g_strdup (e->key), g_strdup (e->applied));
    }
  return applied;
}

/* --- the participant ------------------------------------------------------ */

/* Best effort like the disks (a host that refuses ALPM must not keep
 * laptop mode off); the Disks property shows what sysfs holds now, so it
 * is sent again after. */
static gboolean
hwpower_apply (const LmSystem *sys, const LmSettings *settings, LmEngine engine, GError **error)
{
  gboolean ok = lm_hwpower_apply (settings, sys->state, error);
  if (sys->disks != NULL)
    lm_disks_publish (sys->disks);
  return ok;
}

static gboolean
hwpower_restore (const LmSystem *sys, GError **error)
{
  gboolean ok = lm_hwpower_restore (sys->state, error);
  if (sys->disks != NULL)
    lm_disks_publish (sys->disks);
  return ok;
}

const LmParticipant lm_participant_hwpower = {
  .name = "hardware power settings",
  .must_succeed = FALSE,
  .apply = hwpower_apply,
  .restore = hwpower_restore,
  .journal = &journal_part,
};

/* --- the Disks property ------------------------------------------------------ */

static void
add_file (GVariantBuilder *b, const char *name, const char *device, const char *file)
{
  g_autofree char *sys = device != NULL ? g_build_filename (device, file, NULL) : NULL;
  g_autofree char *v = sys != NULL ? read_value (sys) : NULL;

  if (v != NULL && g_utf8_validate (v, -1, NULL))
    g_variant_builder_add (b, "{sv}", name, g_variant_new_string (v));
}

void
lm_hwpower_describe_disk (const char *disk, GVariantBuilder *b)
{
  g_autofree char *dev = disk_device (disk);
  g_autofree char *controller = dev != NULL ? controller_of (dev) : NULL;

  if (dev == NULL)
    return;
  g_auto (GStrv) hosts = class_entries ("scsi_host");
  for (guint i = 0; hosts[i] != NULL; i++)
    {
      g_autofree char *host = class_device ("scsi_host", hosts[i], 2);
      g_autofree char *cls = class_device ("scsi_host", hosts[i], 0);
      if (host != NULL && is_under (dev, host))
        {
          g_variant_builder_add (b, "{sv}", "SataHost", g_variant_new_string (hosts[i]));
          add_file (b, "LinkPolicy", cls, LINK_POLICY);
          break;
        }
    }
  g_auto (GStrv) ctrls = class_entries ("nvme");
  for (guint i = 0; ctrls[i] != NULL; i++)
    {
      g_autofree char *ctrl = class_device ("nvme", ctrls[i], 0);
      if (ctrl != NULL && is_under (dev, ctrl))
        add_file (b, "NvmeLatencyToleranceUs", ctrl, LATENCY);
    }
  add_file (b, "RuntimePM", dev, "power/control");
  add_file (b, "AutosuspendMs", dev, "power/autosuspend_delay_ms");
  if (controller != NULL)
    {
      g_autofree char *base = g_path_get_basename (controller);
      g_variant_builder_add (b, "{sv}", "Controller", g_variant_new_string (base));
      add_file (b, "ControllerRuntimePM", controller, "power/control");
    }
}
