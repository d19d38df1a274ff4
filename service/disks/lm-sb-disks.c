/* lm-sb-disks.c: the physical whole disks under a superblock. sysfs says
 * what each stacked device (dm, md) sits on in slaves/, and btrfs lists its
 * devices per filesystem; nothing here guesses from names. */
#include "lm-sb-disks.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "lm-blockdev.h"
#include "lm-error.h"
#include "lm-io.h"
#include "lm-mounts.h"
#include "lm-paths.h"

/* dm on dm on md is the deepest real stack; a loop in sysfs must end. */
#define MAX_STACK_DEPTH 8

static gint
dev_compare (gconstpointer a, gconstpointer b)
{
  dev_t x = *(const dev_t *) a, y = *(const dev_t *) b;
  return x < y ? -1 : x > y;
}

gboolean
lm_sb_disks_has (GArray *disks, dev_t disk)
{
  for (guint i = 0; disks != NULL && i < disks->len; i++)
    if (g_array_index (disks, dev_t, i) == disk)
      return TRUE;
  return FALSE;
}

/* The whole disk @name's own number, from /sys/class/block/NAME/dev. */
static gboolean
disk_devnum (const char *disk, dev_t *out)
{
  g_autofree char *sys = g_build_filename ("/sys/class/block", disk, "dev", NULL);
  g_autofree char *path = lm_path (sys);
  g_autofree char *dev = lm_io_read_value (path, NULL);
  guint maj, min;

  if (dev == NULL || sscanf (dev, "%u:%u", &maj, &min) != 2)
    return FALSE;
  *out = makedev (maj, min);
  return TRUE;
}

/* Add the disks at the bottom of the stack under block device @name (a
 * whole disk or a partition): those with no slaves. */
static void
add_bottom (GArray *out, const char *name, guint depth)
{
  g_autofree char *disk = lm_blockdev_disk_for_name (name);
  gboolean stacked = FALSE;
  dev_t devnum;

  if (disk == NULL)
    return;
  if (depth < MAX_STACK_DEPTH)
    {
      g_autofree char *sys = g_build_filename ("/sys/class/block", disk, "slaves", NULL);
      g_autofree char *path = lm_path (sys);
      g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
      const char *slave;

      while (dir != NULL && (slave = g_dir_read_name (dir)) != NULL)
        {
          add_bottom (out, slave, depth + 1);
          stacked = TRUE;
        }
    }
  if (!stacked && disk_devnum (disk, &devnum) && !lm_sb_disks_has (out, devnum))
    g_array_append_val (out, devnum);
}

/* The kernel's name of block device @devno, from /sys/dev/block's link. */
static char *
block_name_of_devno (dev_t devno)
{
  g_autofree char *sys = g_strdup_printf ("/sys/dev/block/%u:%u", major (devno), minor (devno));
  g_autofree char *link = lm_path (sys);
  g_autofree char *target = g_file_read_link (link, NULL);

  return target != NULL ? g_path_get_basename (target) : NULL;
}

/* The kernel's name of the device node @source ("/dev/mapper/root" →
 * "dm-0"): the node's own number, else /dev's links or, where /dev/mapper
 * holds nodes that are not this root's (a test's), dm/name. */
static char *
block_name_of_source (const char *source)
{
  struct stat st;

  if (source == NULL || !g_str_has_prefix (source, "/dev/"))
    return NULL;
  g_autofree char *node = lm_path (source);
  if (stat (node, &st) == 0 && S_ISBLK (st.st_mode))
    {
      char *name = block_name_of_devno (st.st_rdev);
      if (name != NULL)
        return name;
    }
  g_autofree char *resolved = lm_path_resolve (source, "/dev");
  g_autofree char *base = g_path_get_basename (resolved != NULL ? resolved : source);
  g_autofree char *sys = g_build_filename ("/sys/class/block", base, NULL);
  g_autofree char *path = lm_path (sys);

  if (g_file_test (path, G_FILE_TEST_EXISTS))
    return g_steal_pointer (&base);
  if (!g_str_has_prefix (source, "/dev/mapper/"))
    return NULL;

  g_autofree char *block = lm_path ("/sys/class/block");
  g_autoptr (GDir) dir = g_dir_open (block, 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *file = g_build_filename (block, name, "dm", "name", NULL);
      g_autofree char *dm_name = lm_io_read_value (file, NULL);
      if (dm_name != NULL && g_str_equal (dm_name, source + strlen ("/dev/mapper/")))
        return g_strdup (name);
    }
  return NULL;
}

/* The devices/ directory of the btrfs that holds block device @name. */
static char *
btrfs_devices_dir (const char *name)
{
  g_autofree char *fs = lm_path ("/sys/fs/btrfs");
  g_autoptr (GDir) dir = g_dir_open (fs, 0, NULL);
  const char *fsid;

  while (dir != NULL && (fsid = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *devices = g_build_filename (fs, fsid, "devices", NULL);
      g_autofree char *member = g_build_filename (devices, name, NULL);
      if (g_file_test (member, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
        return g_steal_pointer (&devices);
    }
  return NULL;
}

static void
add_source_device (GArray *out, const char *fstype, const char *source)
{
  g_autofree char *name = block_name_of_source (source);
  g_autofree char *devices = NULL;

  if (name == NULL)
    return;
  if (g_strcmp0 (fstype, "btrfs") == 0)
    devices = btrfs_devices_dir (name);
  if (devices == NULL)
    {
      add_bottom (out, name, 0);
      return;
    }
  /* Every device of the filesystem: data and metadata may be on any. */
  g_autoptr (GDir) dir = g_dir_open (devices, 0, NULL);
  const char *member;
  while (dir != NULL && (member = g_dir_read_name (dir)) != NULL)
    add_bottom (out, member, 0);
}

/* A superblock without a block device of its own: its mount source says
 * which device(s) it was mounted from, for btrfs and bcachefs, which the
 * kernel mounted from devices it opened itself and which no user can
 * mount. Any other source is a name someone chose: a user's FUSE mount
 * with -o fsname=/dev/sda is no part of sda (its I/O is not sda's, and
 * root's flush never opens it). */
static void
add_sources (GArray *out, const char *fstype, const char *source)
{
  if (source == NULL || (g_strcmp0 (fstype, "btrfs") != 0 && g_strcmp0 (fstype, "bcachefs") != 0))
    return;
  /* bcachefs names all its devices, colon-separated. */
  g_auto (GStrv) sources = g_strcmp0 (fstype, "bcachefs") == 0 ? g_strsplit (source, ":", -1)
                                                               : g_strsplit (source, "\n", 1);
  for (guint j = 0; sources[j] != NULL; j++)
    add_source_device (out, fstype, sources[j]);
}

/* The mount of anonymous device @sb_dev in the mount table: its type and
 * source (the first: subvolumes mounted several times are one superblock). */
static gboolean
find_mount (dev_t sb_dev, char **fstype, char **source, GError **error)
{
  g_autoptr (GPtrArray) mounts = lm_mounts_read (error);

  if (mounts == NULL)
    return FALSE;
  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      if (m->devno != sb_dev)
        continue;
      *fstype = g_strdup (m->fstype);
      *source = g_strdup (m->source);
      return TRUE;
    }
  g_set_error (error, LM_ERROR, LM_ERROR_FAILED,
               "Filesystem %u:%u is not mounted here, so its disks are unknown", major (sb_dev),
               minor (sb_dev));
  return FALSE;
}

static GArray *
disks_for (dev_t sb_dev, const char *fstype, const char *source, GError **error)
{
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (dev_t));

  if (major (sb_dev) == 0)
    add_sources (out, fstype, source);
  else
    {
      g_autofree char *name = block_name_of_devno (sb_dev);
      if (name == NULL)
        {
          g_set_error (error, LM_ERROR, LM_ERROR_FAILED,
                       "Block device %u:%u is not in %s; was it removed?", major (sb_dev),
                       minor (sb_dev), "/sys/dev/block");
          return NULL;
        }
      add_bottom (out, name, 0);
    }
  g_array_sort (out, dev_compare);
  return g_steal_pointer (&out);
}

GArray *
lm_sb_disks_for_mount (dev_t sb_dev, const char *fstype, const char *source, GError **error)
{
  return disks_for (sb_dev, fstype, source, error);
}

GArray *
lm_sb_disks_for_dev (dev_t sb_dev, GError **error)
{
  g_autofree char *fstype = NULL;
  g_autofree char *source = NULL;

  if (major (sb_dev) == 0 && !find_mount (sb_dev, &fstype, &source, error))
    return NULL;
  return disks_for (sb_dev, fstype, source, error);
}

/* The btrfs whose own bdi is @bdi ("btrfs-3"): /sys/fs/btrfs/FSID/bdi
 * links to it, beside devices/. */
static gboolean
add_btrfs_bdi (GArray *out, const char *bdi)
{
  g_autofree char *root = lm_path ("/sys/fs/btrfs");
  g_autoptr (GDir) dir = g_dir_open (root, 0, NULL);
  const char *fsid;

  while (dir != NULL && (fsid = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *link = g_build_filename (root, fsid, "bdi", NULL);
      g_autofree char *target = g_file_read_link (link, NULL);
      g_autofree char *base = target != NULL ? g_path_get_basename (target) : NULL;
      if (g_strcmp0 (base, bdi) != 0)
        continue;
      g_autofree char *devices = g_build_filename (root, fsid, "devices", NULL);
      g_autoptr (GDir) devs = g_dir_open (devices, 0, NULL);
      const char *member;
      while (devs != NULL && (member = g_dir_read_name (devs)) != NULL)
        add_bottom (out, member, 0);
      return TRUE;
    }
  return FALSE;
}

GArray *
lm_sb_disks_for_bdi (const char *bdi, GError **error)
{
  guint maj, min;
  char end;

  if (sscanf (bdi, "%u:%u%c", &maj, &min, &end) == 2)
    return disks_for (makedev (maj, min), NULL, NULL, error);
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (dev_t));
  if (strchr (bdi, '/') != NULL || bdi[0] == '.' || !add_btrfs_bdi (out, bdi))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "No filesystem in %s has the bdi %s",
                   "/sys/fs/btrfs", bdi);
      return NULL;
    }
  g_array_sort (out, dev_compare);
  return g_steal_pointer (&out);
}
