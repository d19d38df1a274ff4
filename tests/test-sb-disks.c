/* test-sb-disks.c: the physical disks under a superblock (lm-sb-disks.c)
 * on a fake sysfs laid out as the kernel's: btrfs over two disks, dm-crypt
 * over a partition, LVM over dm-crypt, md over two disks; the removable
 * test's disks of a filesystem (lm-removable.c) are the same mapping. */
#include <sys/sysmacros.h>

#include "lm-attrib-stack.h"
#include "lm-blockdev.h"
#include "lm-error.h"
#include "lm-removable.h"
#include "lm-sb-disks.h"
#include "test-fakeroot.h"

#define DEVICES "/sys/devices/virtual/block"

/* A whole disk: its device directory and the three links sysfs has to it. */
static void
disk (LmFakeRoot *f, const char *name, guint maj, guint min)
{
  g_autofree char *dev = g_strdup_printf (DEVICES "/%s/dev", name);
  g_autofree char *value = g_strdup_printf ("%u:%u\n", maj, min);
  g_autofree char *block = g_strdup_printf ("/sys/block/%s", name);
  g_autofree char *block_target = g_strdup_printf ("../devices/virtual/block/%s", name);
  g_autofree char *cls = g_strdup_printf ("/sys/class/block/%s", name);
  g_autofree char *cls_target = g_strdup_printf ("../../devices/virtual/block/%s", name);
  g_autofree char *num = g_strdup_printf ("/sys/dev/block/%u:%u", maj, min);

  lm_fake_root_put (f, dev, value);
  lm_fake_root_link (f, block, block_target);
  lm_fake_root_link (f, cls, cls_target);
  lm_fake_root_link (f, num, cls_target);
}

static void
partition (LmFakeRoot *f, const char *disk_name, const char *name, guint maj, guint min)
{
  g_autofree char *dir = g_strdup_printf (DEVICES "/%s/%s", disk_name, name);
  g_autofree char *dev = g_build_filename (dir, "dev", NULL);
  g_autofree char *part = g_build_filename (dir, "partition", NULL);
  g_autofree char *value = g_strdup_printf ("%u:%u\n", maj, min);
  g_autofree char *cls = g_strdup_printf ("/sys/class/block/%s", name);
  g_autofree char *target = g_strdup_printf ("../../devices/virtual/block/%s/%s", disk_name, name);
  g_autofree char *num = g_strdup_printf ("/sys/dev/block/%u:%u", maj, min);

  lm_fake_root_put (f, dev, value);
  lm_fake_root_put (f, part, "2\n");
  lm_fake_root_link (f, cls, target);
  lm_fake_root_link (f, num, target);
}

/* @name's slaves/ entry for @below, a link to its device as sysfs has. */
static void
stacked_on (LmFakeRoot *f, const char *name, const char *below)
{
  g_autofree char *link = g_strdup_printf (DEVICES "/%s/slaves/%s", name, below);
  g_autofree char *target = g_strdup_printf ("../../%s", below);
  lm_fake_root_link (f, link, target);
}

static void
dm_name (LmFakeRoot *f, const char *name, const char *mapped)
{
  g_autofree char *file = g_strdup_printf (DEVICES "/%s/dm/name", name);
  g_autofree char *value = g_strdup_printf ("%s\n", mapped);
  lm_fake_root_put (f, file, value);
}

/* sda: sda1 (md0 with sdb1), sda2 (dm-0: LUKS; dm-1: LVM on it; a btrfs on
 * dm-2, LUKS on sda3); loop0 and loop1: one btrfs; sdc: a plain xfs. */
static void
setup_sysfs (LmFakeRoot *f, gconstpointer data)
{
  lm_fake_root_setup (f, data);
  disk (f, "sda", 8, 0);
  partition (f, "sda", "sda1", 8, 1);
  partition (f, "sda", "sda2", 8, 2);
  partition (f, "sda", "sda3", 8, 3);
  disk (f, "sdb", 8, 16);
  partition (f, "sdb", "sdb1", 8, 17);
  disk (f, "sdc", 8, 32);
  disk (f, "md0", 9, 0);
  stacked_on (f, "md0", "sda1");
  stacked_on (f, "md0", "sdb1");
  disk (f, "dm-0", 254, 0);
  dm_name (f, "dm-0", "luks-1234");
  stacked_on (f, "dm-0", "sda2");
  disk (f, "dm-1", 254, 1);
  dm_name (f, "dm-1", "vg-root");
  stacked_on (f, "dm-1", "dm-0");
  disk (f, "dm-2", 254, 2);
  dm_name (f, "dm-2", "luks-home");
  stacked_on (f, "dm-2", "sda3");
  disk (f, "loop0", 7, 0);
  disk (f, "loop1", 7, 1);
  /* /sys/fs/btrfs/<fsid>/devices/ links to each device of the filesystem. */
  lm_fake_root_link (f, "/sys/fs/btrfs/0a1b/devices/loop0",
                     "../../../../devices/virtual/block/loop0");
  lm_fake_root_link (f, "/sys/fs/btrfs/0a1b/devices/loop1",
                     "../../../../devices/virtual/block/loop1");
  lm_fake_root_link (f, "/sys/fs/btrfs/77ff/devices/dm-2",
                     "../../../../devices/virtual/block/dm-2");
  lm_fake_root_put (f, "/dev/loop0", "");
  lm_fake_root_put (f, "/dev/dm-0", "");
  lm_fake_root_link (f, "/dev/mapper/luks-1234", "../dm-0");
  /* Without udev /dev/mapper holds nodes, not links: dm/name says which. */
  lm_fake_root_put (f, "/dev/mapper/luks-home", "");
  lm_fake_root_put (f, "/proc/self/mountinfo",
                    "22 1 0:21 / /proc rw - proc proc rw\n"
                    "30 1 0:30 / /tmp rw - tmpfs tmpfs rw\n"
                    "40 1 0:45 / /mnt/a rw - btrfs /dev/loop0 rw,subvolid=5,subvol=/\n"
                    "41 1 0:45 /sub /mnt/b rw - btrfs /dev/loop0 rw,subvolid=256,subvol=/sub\n"
                    "42 1 0:50 /@home /home rw - btrfs /dev/mapper/luks-home rw,subvol=/@home\n"
                    "43 1 0:51 / /mnt/c rw - btrfs /dev/mapper/luks-1234 rw\n"
                    "44 1 0:52 / /mnt/d rw - bcachefs /dev/sdb1:/dev/sdc rw\n"
                    "45 1 0:53 / /mnt/e rw - overlay overlay rw,lowerdir=/a,upperdir=/b\n"
                    /* A user's FUSE mounts naming real disks (issue 48). */
                    "46 1 0:54 / /home/u/x rw,nosuid,nodev - fuse.sshfs /dev/sda rw,user_id=1000\n"
                    "47 1 0:55 / /home/u/y rw,nosuid,nodev - fuse /dev/loop0 rw,user_id=1000\n");
  lm_fake_root_put (f, "/dev/sdb1", "");
  lm_fake_root_put (f, "/dev/sdc", "");
}

static void
assert_disks (dev_t sb_dev, const dev_t *expected, guint n)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) disks = lm_sb_disks_for_dev (sb_dev, &error);

  g_assert_no_error (error);
  g_assert_nonnull (disks);
  g_assert_cmpuint (disks->len, ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpuint (g_array_index (disks, dev_t, i), ==, expected[i]);
      g_assert_true (lm_sb_disks_has (disks, expected[i]));
    }
}

static void
test_plain_disk_and_partition (LmFakeRoot *f, gconstpointer data)
{
  const dev_t sda[] = { makedev (8, 0) };
  const dev_t sdc[] = { makedev (8, 32) };

  assert_disks (makedev (8, 0), sda, 1);
  assert_disks (makedev (8, 2), sda, 1);
  assert_disks (makedev (8, 32), sdc, 1);
}

static void
test_btrfs_over_two_disks (LmFakeRoot *f, gconstpointer data)
{
  const dev_t loops[] = { makedev (7, 0), makedev (7, 1) };

  /* Both mounts (the top and a subvolume) are the one superblock 0:45. */
  assert_disks (makedev (0, 45), loops, 2);
}

static void
test_dm_crypt_over_partition (LmFakeRoot *f, gconstpointer data)
{
  const dev_t sda[] = { makedev (8, 0) };

  assert_disks (makedev (254, 0), sda, 1);
  /* A btrfs on LUKS, mounted from /dev/mapper's link. */
  assert_disks (makedev (0, 51), sda, 1);
  /* And from a /dev/mapper node, found by dm/name; its fsid's devices. */
  assert_disks (makedev (0, 50), sda, 1);
}

static void
test_lvm_over_dm_crypt (LmFakeRoot *f, gconstpointer data)
{
  const dev_t sda[] = { makedev (8, 0) };
  g_autoptr (GArray) disks = lm_sb_disks_for_dev (makedev (254, 1), NULL);

  assert_disks (makedev (254, 1), sda, 1);
  g_assert_false (lm_sb_disks_has (disks, makedev (254, 0)));
  g_assert_false (lm_sb_disks_has (disks, makedev (8, 2)));
}

static void
test_md_over_two_disks (LmFakeRoot *f, gconstpointer data)
{
  const dev_t both[] = { makedev (8, 0), makedev (8, 16) };
  const dev_t bcachefs[] = { makedev (8, 16), makedev (8, 32) };

  assert_disks (makedev (9, 0), both, 2);
  assert_disks (makedev (0, 52), bcachefs, 2);
}

static void
test_no_disk (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) none = NULL;

  assert_disks (makedev (0, 30), NULL, 0); /* tmpfs */
  assert_disks (makedev (0, 53), NULL, 0); /* overlay: no device source */
  none = lm_sb_disks_for_dev (makedev (0, 99), &error);
  g_assert_null (none);
  g_assert_error (error, LM_ERROR, LM_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "0:99"));
  g_clear_error (&error);
  none = lm_sb_disks_for_dev (makedev (8, 99), &error);
  g_assert_null (none);
  g_assert_error (error, LM_ERROR, LM_ERROR_FAILED);
}

/* A slaves/ loop (never in a real kernel) ends instead of hanging. */
static void
test_loop_in_sysfs_ends (LmFakeRoot *f, gconstpointer data)
{
  disk (f, "dm-7", 254, 7);
  disk (f, "dm-8", 254, 8);
  stacked_on (f, "dm-7", "dm-8");
  stacked_on (f, "dm-8", "dm-7");
  g_autoptr (GArray) disks = lm_sb_disks_for_dev (makedev (254, 7), NULL);
  g_assert_nonnull (disks);
}

/* One mapping: told the mount's type and source instead of reading the
 * mount table, the same disks; lm_removable_disks_of() names the same. */
static void
test_for_mount (LmFakeRoot *f, gconstpointer data)
{
  static const struct
  {
    guint maj, min;
    const char *fstype, *source, *names;
  } cases[] = {
    { 0, 45, "btrfs", "/dev/loop0", "loop0,loop1" },
    { 0, 50, "btrfs", "/dev/mapper/luks-home", "sda" },
    { 0, 51, "btrfs", "/dev/mapper/luks-1234", "sda" },
    { 0, 52, "bcachefs", "/dev/sdb1:/dev/sdc", "sdb,sdc" },
    { 0, 53, "overlay", "overlay", "" },
    /* A source a user chose names no disk: not sda's, not the btrfs's. */
    { 0, 54, "fuse.sshfs", "/dev/sda", "" },
    { 0, 55, "fuse", "/dev/loop0", "" },
    { 8, 2, "ext4", "/dev/sda2", "sda" },
    { 254, 1, "ext4", "/dev/mapper/vg-root", "sda" },
    { 9, 0, "ext4", "/dev/md0", "sda,sdb" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      dev_t sb = makedev (cases[i].maj, cases[i].min);
      g_autoptr (GArray) by_dev = lm_sb_disks_for_dev (sb, NULL);
      g_autoptr (GArray) by_mount
          = lm_sb_disks_for_mount (sb, cases[i].fstype, cases[i].source, NULL);
      g_auto (GStrv) names = lm_removable_disks_of (sb, cases[i].fstype, cases[i].source);
      g_autofree char *joined = g_strjoinv (",", names);

      g_test_message ("%u:%u %s", cases[i].maj, cases[i].min, cases[i].source);
      g_assert_nonnull (by_dev);
      g_assert_nonnull (by_mount);
      g_assert_cmpuint (by_mount->len, ==, by_dev->len);
      for (guint j = 0; j < by_dev->len; j++)
        g_assert_cmpuint (g_array_index (by_mount, dev_t, j), ==, g_array_index (by_dev, dev_t, j));
      g_assert_cmpstr (joined, ==, cases[i].names);
    }

  /* Not in the mount table (being mounted now): the source says it all. */
  const dev_t loops[] = { makedev (7, 0), makedev (7, 1) };
  g_autoptr (GArray) unlisted
      = lm_sb_disks_for_mount (makedev (0, 77), "btrfs", "/dev/loop1", NULL);
  g_assert_cmpuint (unlisted->len, ==, 2);
  g_assert_cmpuint (g_array_index (unlisted, dev_t, 0), ==, loops[0]);
  g_assert_cmpuint (g_array_index (unlisted, dev_t, 1), ==, loops[1]);
  g_assert_null (lm_sb_disks_for_dev (makedev (0, 77), NULL));
  /* A device gone from sysfs: an error, and no names. */
  g_autoptr (GError) error = NULL;
  g_assert_null (lm_sb_disks_for_mount (makedev (8, 99), "ext4", "/dev/sdz", &error));
  g_assert_error (error, LM_ERROR, LM_ERROR_FAILED);
  g_auto (GStrv) none = lm_removable_disks_of (makedev (8, 99), "ext4", "/dev/sdz");
  g_assert_cmpuint (g_strv_length (none), ==, 0);
}

/* Writeback through a bdi: a device's (its disks under dm), or a btrfs's
 * own, found through /sys/fs/btrfs/FSID/bdi, down through dm-crypt. */
static void
test_for_bdi (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  lm_fake_root_link (f, "/sys/fs/btrfs/0a1b/bdi", "../../../devices/virtual/bdi/btrfs-1");
  lm_fake_root_link (f, "/sys/fs/btrfs/77ff/bdi", "../../../devices/virtual/bdi/btrfs-2");
  g_autoptr (GArray) loops = lm_sb_disks_for_bdi ("btrfs-1", NULL);
  g_autoptr (GArray) luks = lm_sb_disks_for_bdi ("btrfs-2", NULL);
  g_autoptr (GArray) lvm = lm_sb_disks_for_bdi ("254:1", NULL);

  g_assert_cmpuint (loops->len, ==, 2);
  g_assert_true (lm_sb_disks_has (loops, makedev (7, 0)));
  g_assert_true (lm_sb_disks_has (loops, makedev (7, 1)));
  g_assert_cmpuint (luks->len, ==, 1);
  g_assert_true (lm_sb_disks_has (luks, makedev (8, 0)));
  g_assert_cmpuint (lvm->len, ==, 1);
  g_assert_true (lm_sb_disks_has (lvm, makedev (8, 0)));
  g_assert_null (lm_sb_disks_for_bdi ("btrfs-9", &error));
  g_assert_error (error, LM_ERROR, LM_ERROR_FAILED);
  g_assert_null (lm_sb_disks_for_bdi ("../bdi", NULL));
  g_assert_null (lm_sb_disks_for_bdi ("8:99", NULL));
}

/* A disk with its own device at @device (under /sys/devices), linked as
 * /sys/block/NAME/device is. */
static void
disk_at (LmFakeRoot *f, const char *name, const char *device, const char *removable)
{
  g_autofree char *dir = g_strdup_printf ("/sys/devices/%s", device);
  g_autofree char *file = g_build_filename (dir, "block", name, "removable", NULL);
  g_autofree char *block = g_strdup_printf ("/sys/block/%s", name);
  g_autofree char *block_target = g_strdup_printf ("../devices/%s/block/%s", device, name);
  g_autofree char *link = g_strdup_printf ("/sys/devices/%s/block/%s/device", device, name);
  g_autofree char *dev_file = g_build_filename (dir, "vendor", NULL);
  g_autofree char *cls = g_strdup_printf ("/sys/class/block/%s", name);
  g_autofree char *cls_target = g_strdup_printf ("../../devices/%s/block/%s", device, name);

  lm_fake_root_put (f, file, removable);
  lm_fake_root_put (f, dev_file, "ATA\n");
  lm_fake_root_link (f, block, block_target);
  lm_fake_root_link (f, cls, cls_target);
  lm_fake_root_link (f, link, "../..");
}

/* The same test as the hardware power settings' for a disk that can leave:
 * removable, USB, a SATA hot-plug port, Thunderbolt's "removable". */
static void
test_hotplug (LmFakeRoot *f, gconstpointer data)
{
  disk_at (f, "sdd", "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0", "0\n");
  disk_at (f, "sde", "pci0000:00/0000:00:17.0/ata2/host1/target1:0:0/1:0:0:0", "0\n");
  lm_fake_root_put (f, "/sys/class/scsi_host/host1/ahci_port_cmd", "640017\n");
  lm_fake_root_put (f, "/sys/class/scsi_host/host0/ahci_port_cmd", "400017\n");
  disk_at (f, "sdf", "pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0", "0\n");
  /* A USB device is one by its bus, as sysfs links it. */
  lm_fake_root_put (f, "/sys/bus/usb/drivers_autoprobe", "1\n");
  lm_fake_root_link (f, "/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/subsystem",
                     "../../../../../bus/usb");
  disk_at (f, "sdg", "pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0", "1\n");
  disk_at (f, "nvme1n1", "pci0000:00/0000:00:1c.0/0000:05:00.0/nvme/nvme1", "0\n");
  lm_fake_root_put (f, "/sys/devices/pci0000:00/0000:00:1c.0/0000:05:00.0/removable",
                    "removable\n");
  disk_at (f, "nvme0n1", "pci0000:00/0000:00:1d.0/0000:06:00.0/nvme/nvme0", "0\n");
  lm_fake_root_put (f, "/sys/devices/pci0000:00/0000:00:1d.0/0000:06:00.0/removable", "fixed\n");

  g_assert_false (lm_removable_disk ("sdd", NULL)); /* an internal SATA port */
  g_assert_true (lm_removable_disk ("sde", NULL));  /* HPCP set on its port */
  g_assert_true (lm_removable_disk ("sdf", NULL));  /* USB */
  g_assert_true (lm_removable_disk ("sdg", NULL));  /* removable media */
  g_assert_true (lm_removable_disk ("nvme1n1", NULL));
  g_assert_false (lm_removable_disk ("nvme0n1", NULL));
  g_assert_false (lm_removable_disk ("loop0", NULL)); /* no device at all */
  g_assert_false (lm_removable_disk ("nosuch", NULL));
}

/* The dirtier keys stacked on a disk (lm-attrib-stack.c): an ext4 on LVM
 * over LUKS, a btrfs on LUKS (two subvolumes: one superblock), md over two
 * disks; never the disk's own key, never another disk's filesystem. */
static void
assert_keys (guint maj, guint min, const guint32 *expected, guint n)
{
  g_autoptr (GArray) keys = lm_attrib_stack_keys (maj, min);

  /* As a set: sysfs lists holders in no set order. */
  g_assert_cmpuint (keys->len, ==, n);
  for (guint i = 0; i < n; i++)
    {
      gboolean found = FALSE;
      for (guint j = 0; j < keys->len; j++)
        found = found || g_array_index (keys, guint32, j) == expected[i];
      g_assert_true (found);
    }
}

static void
test_stack_keys (LmFakeRoot *f, gconstpointer data)
{
  const guint32 sda[] = { 254 << 20 | 1, 50, 9 << 20, 254 << 20 | 0, 254 << 20 | 2 };
  const guint32 sdb[] = { 9 << 20, 52 };
  const guint32 loop1[] = { 45 };

  /* sysfs's holders/, the other side of slaves/. */
  lm_fake_root_link (f, DEVICES "/sda/sda1/holders/md0", "../../../md0");
  lm_fake_root_link (f, DEVICES "/sda/sda2/holders/dm-0", "../../../dm-0");
  lm_fake_root_link (f, DEVICES "/dm-0/holders/dm-1", "../../dm-1");
  lm_fake_root_link (f, DEVICES "/sda/sda3/holders/dm-2", "../../../dm-2");
  lm_fake_root_link (f, DEVICES "/sdb/sdb1/holders/md0", "../../../md0");
  lm_fake_root_put (f, "/dev/mapper/vg-root", "");
  lm_fake_root_put (f, "/dev/md0", "");
  lm_fake_root_put (f, "/dev/sda2", "");
  lm_fake_root_put (f, "/proc/self/mountinfo",
                    "30 1 0:30 / /tmp rw - tmpfs tmpfs rw\n"
                    "50 1 254:1 / / rw - ext4 /dev/mapper/vg-root rw\n"
                    "51 1 0:50 /@home /home rw - btrfs /dev/mapper/luks-home rw,subvol=/@home\n"
                    "52 1 0:50 /@ /srv rw - btrfs /dev/mapper/luks-home rw,subvol=/@\n"
                    "53 1 9:0 / /raid rw - ext4 /dev/md0 rw\n"
                    "54 1 8:2 / /boot rw - ext4 /dev/sda2 rw\n"
                    "55 1 0:45 / /mnt/a rw - btrfs /dev/loop0 rw,subvolid=5,subvol=/\n"
                    "56 1 0:52 / /mnt/d rw - bcachefs /dev/sdb1:/dev/sdc rw\n"
                    "57 1 8:32 / /mnt/x rw - xfs /dev/sdc rw\n");
  assert_keys (8, 0, sda, G_N_ELEMENTS (sda));
  assert_keys (8, 16, sdb, G_N_ELEMENTS (sdb));
  assert_keys (7, 1, loop1, G_N_ELEMENTS (loop1));
  /* sdc's xfs is its own key: nothing stacked. */
  assert_keys (8, 32, (const guint32[]){ 52 }, 1);
  assert_keys (7, 9, NULL, 0);
}

/* What dm-0 and dm-1 (LUKS, LVM on sda2) carried, handed down to sda: a
 * note of nobody's data is amended by the same pass's next bio within the
 * window, never after it, never over an owner; a full table drops its
 * oldest note only. Times in µs. */
static void
test_uppers (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmAttribUppers) u = lm_attrib_uppers_new ();
  LmAttribTask dd = { .pid = 42, .tid = 42, .uid = 1000, .comm = "dd" };
  LmAttribTask vim = { .pid = 43, .tid = 43, .uid = 1000, .comm = "vim" };
  LmAttribTask got;
  guint64 ino = 0;
  const gint64 s = G_USEC_PER_SEC;

  lm_fake_root_link (f, DEVICES "/sda/sda2/holders/dm-0", "../../../dm-0");
  lm_fake_root_link (f, DEVICES "/dm-0/holders/dm-1", "../../dm-1");
  /* The flusher's first bio on dm-1 at 10 s: a superblock, nobody's. */
  lm_attrib_uppers_note (u, 254 << 20 | 1, 10 * s, NULL, 0);
  g_assert_false (lm_attrib_uppers_owner (u, "sda", 10 * s + 5000, &got, &ino));
  /* Its next, dd's data: amended; sda's write from dm-crypt takes it. */
  lm_attrib_uppers_amend (u, 254 << 20 | 1, 10 * s + 3000, &dd, 77);
  g_assert_true (lm_attrib_uppers_owner (u, "sda", 10 * s + 5000, &got, &ino));
  g_assert_cmpstr (got.comm, ==, "dd");
  g_assert_cmpuint (ino, ==, 77);
  /* An owner stays; past the window nothing is amended or handed down. */
  lm_attrib_uppers_amend (u, 254 << 20 | 1, 10 * s + 4000, &vim, 78);
  g_assert_true (lm_attrib_uppers_owner (u, "sda", 10 * s + 5000, &got, &ino));
  g_assert_cmpstr (got.comm, ==, "dd");
  g_assert_false (lm_attrib_uppers_owner (u, "sda", 13 * s, &got, &ino));
  lm_attrib_uppers_note (u, 254 << 20 | 0, 20 * s, NULL, 0);
  lm_attrib_uppers_amend (u, 254 << 20 | 0, 23 * s, &vim, 78);
  g_assert_false (lm_attrib_uppers_owner (u, "sda", 20 * s + 1000, &got, &ino));
  /* The latest note of the stack counts: dm-0's, nobody's, hides dm-1's. */
  lm_attrib_uppers_note (u, 254 << 20 | 1, 30 * s, &vim, 0);
  lm_attrib_uppers_note (u, 254 << 20 | 0, 30 * s + 100, NULL, 0);
  g_assert_false (lm_attrib_uppers_owner (u, "sda", 30 * s + 1000, &got, &ino));
  /* Full: other devices' notes crowd in; only the oldest go, so dm-1's
   * newer note survives 300 others made before it. */
  for (guint i = 0; i < 300; i++)
    lm_attrib_uppers_note (u, 200 << 20 | i, 40 * s + i, &vim, 0);
  lm_attrib_uppers_note (u, 254 << 20 | 1, 50 * s, &dd, 5);
  for (guint i = 300; i < 600; i++)
    lm_attrib_uppers_note (u, 200 << 20 | i, 50 * s - 1000 + i, &vim, 0);
  g_assert_true (lm_attrib_uppers_owner (u, "sda", 50 * s + 1000, &got, &ino));
  g_assert_cmpstr (got.comm, ==, "dd");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, LmFakeRoot, NULL, setup_sysfs, fn, lm_fake_root_teardown)
  ADD ("/sb-disks/plain-disk-and-partition", test_plain_disk_and_partition);
  ADD ("/sb-disks/btrfs-over-two-disks", test_btrfs_over_two_disks);
  ADD ("/sb-disks/dm-crypt-over-partition", test_dm_crypt_over_partition);
  ADD ("/sb-disks/lvm-over-dm-crypt", test_lvm_over_dm_crypt);
  ADD ("/sb-disks/md-over-two-disks", test_md_over_two_disks);
  ADD ("/sb-disks/no-disk", test_no_disk);
  ADD ("/sb-disks/loop-in-sysfs-ends", test_loop_in_sysfs_ends);
  ADD ("/sb-disks/for-mount", test_for_mount);
  ADD ("/sb-disks/for-bdi", test_for_bdi);
  ADD ("/blockdev/hotplug", test_hotplug);
  ADD ("/attrib-stack/keys", test_stack_keys);
  ADD ("/attrib-stack/uppers", test_uppers);
  return g_test_run ();
}
