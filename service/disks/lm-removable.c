/* lm-removable.c: removable and hot-plug disks, and whether a filesystem
 * sits on one (its disks from lm-sb-disks.c), from sysfs; every path
 * resolved inside the root of lm-paths. */
#include "lm-removable.h"

#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "lm-blockdev.h"
#include "lm-io.h"
#include "lm-paths.h"
#include "lm-sb-disks.h"

#define DEVICES "/sys/devices"
/* PxCMD bits 18 (hot-plug capable) and 21 (external port). */
#define AHCI_PORT_HOTPLUG 0x240000u

static char *
read_value (const char *system_path)
{
  g_autofree char *path = lm_path (system_path);
  return lm_io_read_value (path, NULL);
}

gboolean
lm_removable_host_hotplug (const char *host)
{
  g_autofree char *sys = g_strdup_printf ("/sys/class/scsi_host/%s/ahci_port_cmd", host);
  g_autofree char *cmd = read_value (sys);
  return cmd != NULL && (g_ascii_strtoull (cmd, NULL, 16) & AHCI_PORT_HOTPLUG) != 0;
}

static gboolean
is_scsi_host (const char *name)
{
  if (!g_str_has_prefix (name, "host") || name[4] == '\0')
    return FALSE;
  for (const char *p = name + 4; *p; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

/* What makes the device at @dir (a path under /sys/devices) one that can
 * be unplugged, or NULL: a block device's removable media ("1"), its bus
 * (USB, Thunderbolt; an SD card on the MMC bus),
 * the kernel's verdict on the port a device hangs from ("removable": PCI
 * behind a Thunderbolt or other external port, USB ports), or an AHCI
 * hot-plug port. */
static char *
hotplug_reason (const char *dir)
{
  g_autofree char *sub = g_build_filename (dir, "subsystem", NULL);
  g_autofree char *bus = lm_path_resolve (sub, "/sys/bus");
  g_autofree char *file = g_build_filename (dir, "removable", NULL);
  g_autofree char *removable = read_value (file);
  g_autofree char *name = g_path_get_basename (dir);

  if (g_strcmp0 (removable, "1") == 0)
    return g_strdup ("it has removable media");
  if (g_strcmp0 (bus, "/sys/bus/usb") == 0)
    return g_strdup ("it is on USB");
  if (g_strcmp0 (bus, "/sys/bus/thunderbolt") == 0)
    return g_strdup ("it is on Thunderbolt");
  if (g_strcmp0 (bus, "/sys/bus/mmc") == 0)
    {
      /* The kernel never flags an MMC disk removable; an SD card is, eMMC
       * (type MMC) is soldered in. */
      g_autofree char *type_file = g_build_filename (dir, "type", NULL);
      g_autofree char *type = read_value (type_file);
      if (g_strcmp0 (type, "SD") == 0 || g_strcmp0 (type, "SDcombo") == 0)
        return g_strdup ("it is an SD card");
    }
  if (g_strcmp0 (removable, "removable") == 0)
    return g_strdup_printf ("the kernel marks %s removable", dir);
  if (is_scsi_host (name) && lm_removable_host_hotplug (name))
    return g_strdup_printf ("it is on a SATA hot-plug or external port (%s)", name);
  return NULL;
}

gboolean
lm_removable_disk (const char *disk, char **why)
{
  g_autofree char *block = g_strdup_printf ("/sys/class/block/%s", disk);
  g_autofree char *dir = NULL;

  if (strchr (disk, '/') != NULL || g_str_equal (disk, ".") || g_str_equal (disk, ".."))
    return FALSE;
  /* The disk's own directory, then each device it hangs from. */
  dir = lm_path_resolve (block, DEVICES);
  while (dir != NULL && g_str_has_prefix (dir, DEVICES "/"))
    {
      g_autofree char *reason = hotplug_reason (dir);
      if (reason != NULL)
        {
          if (why != NULL)
            *why = g_steal_pointer (&reason);
          return TRUE;
        }
      char *up = g_path_get_dirname (dir);
      g_free (dir);
      dir = up;
    }
  return FALSE;
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* lm-sb-disks.c's answer, by name: one mapping of a superblock to its disks
 * (btrfs's devices/, dm and md slaves) for the flush engine, writeback's
 * blame and this test. */
char **
lm_removable_disks_of (dev_t devno, const char *fstype, const char *source)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) disks = lm_sb_disks_for_mount (devno, fstype, source, NULL);

  for (guint i = 0; disks != NULL && i < disks->len; i++)
    {
      dev_t d = g_array_index (disks, dev_t, i);
      g_autofree char *name = lm_blockdev_disk_for_devnum (major (d), minor (d));
      /* A disk gone since is "MAJ:MIN": nothing sysfs can say about it. */
      if (strchr (name, ':') == NULL)
        g_ptr_array_add (out, g_steal_pointer (&name));
    }
  g_ptr_array_sort (out, compare_names);
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
}

gboolean
lm_removable_superblock (dev_t devno, const char *fstype, const char *source, char **why)
{
  g_auto (GStrv) disks = lm_removable_disks_of (devno, fstype, source);

  for (guint i = 0; disks[i] != NULL; i++)
    {
      g_autofree char *reason = NULL;
      if (lm_removable_disk (disks[i], &reason))
        {
          if (why != NULL)
            *why = g_strdup_printf ("disk %s is removable or hot-plug: %s", disks[i], reason);
          return TRUE;
        }
    }
  return FALSE;
}
