/* lm-blockdev.h: block-device topology from sysfs: the whole disk of a
 * partition or device number, stacked devices, stable ids, I/O counters.
 * Reads sysfs only; never opens a device or sends it a command. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A value from /sys/block/NAME/FILE, trimmed; NULL when absent. */
char *lm_blockdev_read (const char *name, const char *file);
gboolean lm_blockdev_flag (const char *name, const char *file);
/* Reads, writes and discards completed plus in flight, summed. */
gboolean lm_blockdev_read_io (const char *name, guint64 *io);

/* The whole disk holding @dev ("sda1" → "sda"); NULL when @dev is no block
 * device name (as "proc" or "tmpfs" in a block_dump inode line). */
char *lm_blockdev_disk_for_name (const char *dev);
/* As above by device number; a device gone since still gets "MAJ:MIN". */
char *lm_blockdev_disk_for_devnum (guint major, guint minor);
/* TRUE when whole disk @name is @disk or stacked on it (dm, md). */
gboolean lm_blockdev_is_on (const char *name, const char *disk);

/* Whether @name is a disk worth listing: not a RAM disk, an unbound loop
 * device or a stacked device whose I/O lands on listed disks. */
gboolean lm_blockdev_is_listed (const char *name);

/* The most telling /dev/disk/by-id name, or @name itself. */
char *lm_blockdev_stable_id (const char *name);
char *lm_blockdev_devnode (const char *name);

G_END_DECLS
