/* lm-sb-disks.h: the physical whole disks under a superblock, from the
 * kernel's own view (sysfs and the mount table); reads only, opens no device. */
#pragma once

#include <sys/types.h>

#include <glib.h>

G_BEGIN_DECLS

/* The whole disks (dev_t, sorted, each once) that @sb_dev's I/O lands on:
 * a block device's whole disk, or what dm and md stack it on (slaves/); for
 * an anonymous device number (btrfs, bcachefs, …) the devices of its mount
 * source, every device of a btrfs from /sys/fs/btrfs/<fsid>/devices/. An
 * empty array for a superblock without a disk (tmpfs, proc, nfs); NULL with
 * @error set when the mount table or sysfs cannot say. */
GArray *lm_sb_disks_for_dev (dev_t sb_dev, GError **error);
/* The same for a mount the caller has read already: @fstype and @source
 * stand in for the mount table's (used for an anonymous @sb_dev only).
 * The one place a superblock is mapped to disks: the flush engine, the
 * attribution of writeback and the removable-disk test all come here. */
GArray *lm_sb_disks_for_mount (dev_t sb_dev, const char *fstype, const char *source,
                               GError **error);

/* The disks a bdi's writeback lands on: @bdi is a device's ("253:1"), or a
 * filesystem's own (btrfs's "btrfs-3", found through /sys/fs/btrfs/FSID/bdi). */
GArray *lm_sb_disks_for_bdi (const char *bdi, GError **error);

/* Whether @disks (from lm_sb_disks_for_dev) holds @disk. */
gboolean lm_sb_disks_has (GArray *disks, dev_t disk);

G_END_DECLS
