/* test-remount-removable.c: which disks can be pulled out (lm-removable.c) and
 * that their filesystems are never remounted, over a fake root's sysfs. */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "lm-remount.h"
#include "lm-removable.h"
#include "lm-settings.h"
#include "lm-state.h"
#include "test-fakeroot.h"

#define PCI "/sys/devices/pci0000:00"
#define SATA PCI "/0000:00:17.0"
#define USB PCI "/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block"
#define TBT PCI "/0000:00:07.0/0000:05:00.0"

/* A symlink to @target, both system paths inside the fake root. */
static void
link_to (LmFakeRoot *f, const char *rel, const char *target)
{
  g_autofree char *abs = g_build_filename (f->root, target, NULL);
  lm_fake_root_link (f, rel, abs);
}

/* A block device at @dir (a /sys/devices path) named by sysfs. */
static void
add_block (LmFakeRoot *f, const char *dir, const char *devnum, const char *removable)
{
  g_autofree char *name = g_path_get_basename (dir);
  g_autofree char *cls = g_strdup_printf ("/sys/class/block/%s", name);
  g_autofree char *dev = g_strdup_printf ("/sys/dev/block/%s", devnum);
  g_autofree char *dev_file = g_strdup_printf ("%s/dev", dir);

  lm_fake_root_put (f, dev_file, devnum);
  if (removable != NULL)
    {
      g_autofree char *file = g_strdup_printf ("%s/removable", dir);
      lm_fake_root_put (f, file, removable);
    }
  else
    {
      g_autofree char *file = g_strdup_printf ("%s/partition", dir);
      lm_fake_root_put (f, file, "1");
    }
  link_to (f, cls, dir);
  link_to (f, dev, dir);
}

static void
add_slave (LmFakeRoot *f, const char *upper, const char *lower_dir)
{
  g_autofree char *name = g_path_get_basename (lower_dir);
  g_autofree char *rel = g_strdup_printf ("/sys/devices/virtual/block/%s/slaves/%s", upper, name);
  link_to (f, rel, lower_dir);
}

/* A laptop: sda on a fixed SATA port, sdb with removable media, sdc on USB,
 * sdd on a SATA hot-plug port, nvme0n1 inside, nvme1n1 behind a Thunderbolt
 * port, an SD card and eMMC; LUKS and LVM on sda2, dm on the USB disk, md
 * over both. */
static void
machine (LmFakeRoot *f)
{
  lm_fake_root_put (f, "/sys/bus/usb/.keep", "");
  lm_fake_root_put (f, "/sys/bus/pci/.keep", "");
  lm_fake_root_put (f, "/sys/bus/scsi/.keep", "");
  link_to (f, PCI "/0000:00:14.0/usb2/subsystem", "/sys/bus/usb");
  link_to (f, PCI "/0000:00:14.0/usb2/2-1/subsystem", "/sys/bus/usb");
  lm_fake_root_put (f, PCI "/0000:00:14.0/usb2/2-1/removable", "removable");
  link_to (f, PCI "/0000:00:14.0/subsystem", "/sys/bus/pci");
  link_to (f, SATA "/subsystem", "/sys/bus/pci");
  link_to (f, SATA "/ata1/host0/subsystem", "/sys/bus/scsi");

  add_block (f, SATA "/ata1/host0/target0:0:0/0:0:0:0/block/sda", "8:0", "0");
  add_block (f, SATA "/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda2", "8:2", NULL);
  add_block (f, SATA "/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda4", "8:4", NULL);
  add_block (f, SATA "/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda5", "8:5", NULL);
  lm_fake_root_put (f, "/sys/class/scsi_host/host0/ahci_port_cmd", "c017");
  add_block (f, SATA "/ata2/host1/target1:0:0/1:0:0:0/block/sdb", "8:16", "1");
  add_block (f, USB "/sdc", "8:32", "0");
  add_block (f, USB "/sdc/sdc1", "8:33", NULL);
  add_block (f, USB "/sdc/sdc2", "8:34", NULL);
  add_block (f, SATA "/ata4/host3/target3:0:0/3:0:0:0/block/sdd", "8:48", "0");
  lm_fake_root_put (f, "/sys/class/scsi_host/host3/ahci_port_cmd", "640017");
  add_block (f, PCI "/0000:00:1d.0/0000:03:00.0/nvme/nvme0/nvme0n1", "259:0", "0");
  lm_fake_root_put (f, PCI "/0000:00:1d.0/0000:03:00.0/removable", "fixed");
  add_block (f, TBT "/nvme/nvme1/nvme1n1", "259:1", "0");
  lm_fake_root_put (f, TBT "/removable", "removable");
  /* An SD card and eMMC, both on the MMC bus, neither flagged removable. */
  lm_fake_root_put (f, "/sys/bus/mmc/.keep", "");
  link_to (f, PCI "/0000:00:1c.0/0000:02:00.0/rtsx_pci_sdmmc.0/mmc_host/mmc0/mmc0:aaaa/subsystem",
           "/sys/bus/mmc");
  lm_fake_root_put (
      f, PCI "/0000:00:1c.0/0000:02:00.0/rtsx_pci_sdmmc.0/mmc_host/mmc0/mmc0:aaaa/type", "SD");
  add_block (
      f, PCI "/0000:00:1c.0/0000:02:00.0/rtsx_pci_sdmmc.0/mmc_host/mmc0/mmc0:aaaa/block/mmcblk0",
      "179:0", "0");
  link_to (f, PCI "/0000:00:1a.0/mmc_host/mmc1/mmc1:0001/subsystem", "/sys/bus/mmc");
  lm_fake_root_put (f, PCI "/0000:00:1a.0/mmc_host/mmc1/mmc1:0001/type", "MMC");
  add_block (f, PCI "/0000:00:1a.0/mmc_host/mmc1/mmc1:0001/block/mmcblk1", "179:8", "0");

  /* LUKS (dm-0) on sda2, LVM (dm-1) on it; dm-2 on the USB disk; md0 over
   * sda5 and sdc2. */
  add_block (f, "/sys/devices/virtual/block/dm-0", "253:0", "0");
  add_slave (f, "dm-0", SATA "/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda2");
  add_block (f, "/sys/devices/virtual/block/dm-1", "253:1", "0");
  add_slave (f, "dm-1", "/sys/devices/virtual/block/dm-0");
  add_block (f, "/sys/devices/virtual/block/dm-2", "253:2", "0");
  add_slave (f, "dm-2", USB "/sdc/sdc1");
  add_block (f, "/sys/devices/virtual/block/md0", "9:0", "0");
  add_slave (f, "md0", SATA "/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda5");
  add_slave (f, "md0", USB "/sdc/sdc2");

  /* A btrfs over sda4 and sdc2, one on sda5 alone. */
  link_to (f, "/sys/fs/btrfs/0c6e-two/devices/sda4",
           SATA "/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda4");
  link_to (f, "/sys/fs/btrfs/0c6e-two/devices/sdc2", USB "/sdc/sdc2");
  link_to (f, "/sys/fs/btrfs/7a1f-one/devices/sda5",
           SATA "/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda5");
}

static void
check_disk (const char *disk, gboolean want, const char *reason)
{
  g_autofree char *why = NULL;

  g_assert_cmpint (lm_removable_disk (disk, &why), ==, want);
  if (want)
    g_assert_nonnull (strstr (why, reason));
  else
    g_assert_null (why);
}

static void
test_disks (LmFakeRoot *f, gconstpointer data)
{
  machine (f);
  check_disk ("sda", FALSE, NULL);
  check_disk ("sdb", TRUE, "removable media");
  check_disk ("sdc", TRUE, "USB");
  check_disk ("sdd", TRUE, "SATA hot-plug");
  check_disk ("nvme0n1", FALSE, NULL);
  check_disk ("nvme1n1", TRUE, "0000:05:00.0 removable");
  check_disk ("mmcblk0", TRUE, "SD card");
  check_disk ("mmcblk1", FALSE, NULL);
  check_disk ("nosuchdisk", FALSE, NULL);
  check_disk ("../sda", FALSE, NULL);
  g_assert_true (lm_removable_host_hotplug ("host3"));
  g_assert_false (lm_removable_host_hotplug ("host0"));
}

static void
check_superblock (const char *devnum, const char *fstype, const char *source,
                  const char *const *disks, const char *reason)
{
  guint maj = 0, min = 0;
  g_assert_cmpint (sscanf (devnum, "%u:%u", &maj, &min), ==, 2);
  g_auto (GStrv) got = lm_removable_disks_of (makedev (maj, min), fstype, source);
  g_autofree char *why = NULL;
  gboolean removable = lm_removable_superblock (makedev (maj, min), fstype, source, &why);

  g_autofree char *got_text = g_strjoinv (",", got);
  g_autofree char *want_text = g_strjoinv (",", (char **) disks);

  g_assert_cmpstr (got_text, ==, want_text);
  g_assert_cmpint (removable, ==, reason != NULL);
  if (reason != NULL)
    g_assert_nonnull (strstr (why, reason));
}

static void
test_superblocks (LmFakeRoot *f, gconstpointer data)
{
  machine (f);
  check_superblock ("8:2", "ext4", "/dev/sda2", (const char *const[]){ "sda", NULL }, NULL);
  check_superblock ("8:33", "ext4", "/dev/sdc1", (const char *const[]){ "sdc", NULL },
                    "disk sdc is removable or hot-plug: it is on USB");
  check_superblock ("8:16", "ext4", "/dev/sdb", (const char *const[]){ "sdb", NULL },
                    "removable media");
  /* Stacked: followed down to the physical disks through slaves. */
  check_superblock ("253:1", "ext4", "/dev/mapper/vg-root", (const char *const[]){ "sda", NULL },
                    NULL);
  check_superblock ("253:2", "ext4", "/dev/mapper/usb", (const char *const[]){ "sdc", NULL },
                    "disk sdc");
  check_superblock ("9:0", "ext4", "/dev/md0", (const char *const[]){ "sda", "sdc", NULL },
                    "disk sdc");
  /* btrfs: an anonymous device; its devices from /sys/fs/btrfs. */
  check_superblock ("0:45", "btrfs", "/dev/sda4", (const char *const[]){ "sda", "sdc", NULL },
                    "disk sdc");
  check_superblock ("0:46", "btrfs", "/dev/sda5", (const char *const[]){ "sda", NULL }, NULL);
  check_superblock ("0:47", "btrfs", "/dev/sdc1", (const char *const[]){ "sdc", NULL }, "disk sdc");
  /* Not known to sysfs: nothing to say (tmpfs, a source not under /dev). */
  check_superblock ("0:48", "btrfs", "none", (const char *const[]){ NULL }, NULL);
  check_superblock ("0:49", "btrfs", "/dev/../sys/x", (const char *const[]){ NULL }, NULL);
  check_superblock ("7:9", "ext4", "/dev/loop9", (const char *const[]){ NULL }, NULL);
}

/* The remount transaction itself leaves the USB disk's filesystem alone:
 * it never gets to opening its mount point (the fixed disk's is opened,
 * and since it does not exist, skipped; nothing on the machine is ever
 * touched: the mount table is the fake root's). */
static void
test_not_remounted (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmSettings) settings = lm_settings_new ();
  g_autofree char *state_path = g_build_filename (f->root, "state", NULL);
  g_autoptr (LmState) state = lm_state_new (state_path);
  g_autoptr (GError) error = NULL;

  machine (f);
  lm_fake_root_put (f, "/proc/self/mountinfo",
                    "21 1 8:2 / /nonexistent/lm-test/fixed rw,relatime shared:1 - ext4 "
                    "/dev/sda2 rw\n"
                    "22 1 8:33 / /nonexistent/lm-test/usb rw,nosuid,nodev shared:2 - ext4 "
                    "/dev/sdc1 rw,errors=remount-ro\n"
                    "23 1 0:45 / /nonexistent/lm-test/btrfs rw,relatime shared:3 - btrfs "
                    "/dev/sda4 rw,space_cache=v2,subvolid=5,subvol=/\n");
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE,
                         "Not remounting /nonexistent/lm-test/usb (device 8:33): disk sdc is "
                         "removable or hot-plug: it is on USB");
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE,
                         "Not remounting /nonexistent/lm-test/btrfs (device 0:45): disk sdc is "
                         "removable or hot-plug: it is on USB");
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE,
                         "Not remounting /nonexistent/lm-test/fixed (device 8:2, mount 21): it "
                         "cannot be opened*");
  g_assert_true (lm_remount_apply (settings, state, &error));
  g_assert_no_error (error);
  g_test_assert_expected_messages ();
  g_assert_false (lm_remount_saved (state));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/remount/removable/disks", LmFakeRoot, NULL, lm_fake_root_setup, test_disks,
              lm_fake_root_teardown);
  g_test_add ("/remount/removable/superblocks", LmFakeRoot, NULL, lm_fake_root_setup,
              test_superblocks, lm_fake_root_teardown);
  g_test_add ("/remount/removable/not-remounted", LmFakeRoot, NULL, lm_fake_root_setup,
              test_not_remounted, lm_fake_root_teardown);
  return g_test_run ();
}
