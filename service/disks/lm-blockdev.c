/* lm-blockdev.c: block-device topology from sysfs, in one place for the
 * disks, attribution and the flush engine. sysfs names the whole disk of a
 * partition as the parent directory of the partition's own. */
#include "lm-blockdev.h"

#include <string.h>

#include "lm-io.h"
#include "lm-paths.h"

/* dm on md on dm...: deeper stacks do not happen; a loop in sysfs would. */
#define MAX_STACK_DEPTH 8

char *
lm_blockdev_read (const char *name, const char *file)
{
  g_autofree char *sys = g_strdup_printf ("/sys/block/%s/%s", name, file);
  g_autofree char *path = lm_path (sys);
  return lm_io_read_value (path, NULL);
}

gboolean
lm_blockdev_flag (const char *name, const char *file)
{
  g_autofree char *v = lm_blockdev_read (name, file);
  return v != NULL && g_str_equal (v, "1");
}

/* Any change means the disk did something since the last look. */
gboolean
lm_blockdev_read_io (const char *name, guint64 *io)
{
  g_autofree char *stat = lm_blockdev_read (name, "stat");
  if (stat == NULL)
    return FALSE;
  g_auto (GStrv) f = g_strsplit (stat, " ", -1);
  guint n = g_strv_length (f);
  static const guint fields[] = { 0, 4, 8, 11 };

  *io = 0;
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    if (fields[i] < n)
      *io += g_ascii_strtoull (f[fields[i]], NULL, 10);
  return n >= 9;
}

/* A whole disk has no "partition" file. */
static char *
disk_of_sysfs_link (const char *link)
{
  g_autofree char *partition = g_build_filename (link, "partition", NULL);
  g_autofree char *target = g_file_read_link (link, NULL);

  if (target == NULL)
    return g_file_test (link, G_FILE_TEST_IS_DIR) ? g_path_get_basename (link) : NULL;
  if (!g_file_test (partition, G_FILE_TEST_EXISTS))
    return g_path_get_basename (target);
  g_autofree char *parent = g_path_get_dirname (target);
  return g_path_get_basename (parent);
}

char *
lm_blockdev_disk_for_name (const char *dev)
{
  if (dev == NULL || *dev == '\0' || strchr (dev, '/') != NULL || g_str_equal (dev, ".")
      || g_str_equal (dev, ".."))
    return NULL;
  g_autofree char *sys = g_build_filename ("/sys/class/block", dev, NULL);
  g_autofree char *link = lm_path (sys);
  return disk_of_sysfs_link (link);
}

char *
lm_blockdev_disk_for_devnum (guint major, guint minor)
{
  g_autofree char *sys = g_strdup_printf ("/sys/dev/block/%u:%u", major, minor);
  g_autofree char *link = lm_path (sys);
  char *disk = disk_of_sysfs_link (link);

  /* A disk gone since (a loop device detached): still say which one. */
  return disk != NULL ? disk : g_strdup_printf ("%u:%u", major, minor);
}

static gboolean
is_on (const char *name, const char *disk, guint depth)
{
  if (g_str_equal (name, disk))
    return TRUE;
  if (depth >= MAX_STACK_DEPTH)
    return FALSE;

  g_autofree char *sys = g_build_filename ("/sys/block", name, "slaves", NULL);
  g_autofree char *path = lm_path (sys);
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *slave;

  while (dir != NULL && (slave = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *below = lm_blockdev_disk_for_name (slave);
      if (below != NULL && is_on (below, disk, depth + 1))
        return TRUE;
    }
  return FALSE;
}

gboolean
lm_blockdev_is_on (const char *name, const char *disk)
{
  return is_on (name, disk, 0);
}

gboolean
lm_blockdev_is_listed (const char *name)
{
  if (g_str_has_prefix (name, "ram") || g_str_has_prefix (name, "zram"))
    return FALSE;
  if (g_str_has_prefix (name, "loop"))
    {
      g_autofree char *backing = lm_blockdev_read (name, "loop/backing_file");
      g_autofree char *size = lm_blockdev_read (name, "size");
      if (backing == NULL && (size == NULL || g_str_equal (size, "0")))
        return FALSE;
    }
  g_autofree char *sys = g_strdup_printf ("/sys/block/%s/slaves", name);
  g_autofree char *slaves_path = lm_path (sys);
  g_autoptr (GDir) slaves = g_dir_open (slaves_path, 0, NULL);
  return slaves == NULL || g_dir_read_name (slaves) == NULL;
}

/* The bus and model kinds first (they survive moving the disk to another
 * port), wwn- last; names sort deterministically within a rank. */
char *
lm_blockdev_stable_id (const char *name)
{
  static const char *const order[] = { "ata-", "nvme-", "scsi-", "usb-", "virtio-", "mmc-" };
  g_autofree char *by_id = lm_path ("/dev/disk/by-id");
  g_autoptr (GDir) dir = g_dir_open (by_id, 0, NULL);
  g_autofree char *best = NULL;
  gsize best_rank = G_MAXSIZE;
  const char *entry;

  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *link = g_build_filename (by_id, entry, NULL);
      g_autofree char *target = g_file_read_link (link, NULL);
      g_autofree char *base = target != NULL ? g_path_get_basename (target) : NULL;
      gsize rank = G_N_ELEMENTS (order);

      if (base == NULL || !g_str_equal (base, name) || strstr (entry, "-part") != NULL)
        continue;
      for (gsize i = 0; i < G_N_ELEMENTS (order); i++)
        if (g_str_has_prefix (entry, order[i]))
          rank = i;
      if (rank < best_rank || (rank == best_rank && strcmp (entry, best) < 0))
        {
          g_free (best);
          best = g_strdup (entry);
          best_rank = rank;
        }
    }
  return best != NULL ? g_steal_pointer (&best) : g_strdup (name);
}

char *
lm_blockdev_devnode (const char *name)
{
  g_autofree char *dev = g_build_filename ("/dev", name, NULL);
  return lm_path (dev);
}
