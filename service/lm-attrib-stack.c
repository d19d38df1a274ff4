/* lm-attrib-stack.c: the superblocks stacked on a disk, as the BPF program
 * keys their dirtiers. The program remembers who dirtied a filesystem by
 * the superblock's device (a dm or md device, or btrfs's anonymous
 * number), while the write that wakes the disk comes from a kernel thread
 * (the flusher, dm-crypt's workers) on the physical disk beneath: only
 * user space knows the stack, and asks only at a spin-up. */
#include "lm-attrib-stack.h"

#include <stdio.h>
#include <sys/sysmacros.h>

#include "lm-blockdev.h"
#include "lm-mounts.h"
#include "lm-sb-disks.h"

#define KERNEL_KEY(maj, min) (((guint32) (maj) << 20) | ((guint32) (min) &0xfffff))

/* The key the program gives superblock @dev's dirtiers: its whole disk's
 * number for a block device, the number itself for an anonymous one. */
static gboolean
superblock_key (dev_t dev, guint32 *key)
{
  guint maj, min;

  if (major (dev) == 0)
    {
      *key = KERNEL_KEY (0, minor (dev));
      return TRUE;
    }
  g_autofree char *disk = lm_blockdev_disk_for_devnum (major (dev), minor (dev));
  g_autofree char *num = lm_blockdev_read (disk, "dev");
  if (num == NULL || sscanf (num, "%u:%u", &maj, &min) != 2)
    return FALSE;
  *key = KERNEL_KEY (maj, min);
  return TRUE;
}

GArray *
lm_attrib_stack_keys (guint disk_major, guint disk_minor)
{
  g_autoptr (GArray) keys = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) mounts = lm_mounts_read (&error);
  dev_t disk = makedev (disk_major, disk_minor);
  guint32 own = KERNEL_KEY (disk_major, disk_minor);

  if (mounts == NULL)
    {
      g_debug ("No stacked filesystems for %u:%u: %s", disk_major, disk_minor, error->message);
      return g_steal_pointer (&keys);
    }
  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      gint64 *devno = g_new (gint64, 1);
      guint32 key;

      *devno = (gint64) m->devno;
      /* A superblock mounted many times (subvolumes, binds) is one. */
      if (!g_hash_table_add (seen, devno))
        continue;
      /* Only a filesystem mounted from a device node can sit on a disk. */
      if (m->source == NULL || !g_str_has_prefix (m->source, "/dev/"))
        continue;
      if (!superblock_key (m->devno, &key) || key == own)
        continue;
      g_autoptr (GArray) disks = lm_sb_disks_for_dev (m->devno, NULL);
      if (disks != NULL && lm_sb_disks_has (disks, disk))
        g_array_append_val (keys, key);
    }
  return g_steal_pointer (&keys);
}
