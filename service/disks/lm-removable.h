/* lm-removable.h: whether a disk, or the disks under a filesystem, can be
 * pulled out (removable media, USB, Thunderbolt, SD, a SATA hot-plug port), from
 * sysfs under the root of lm-paths. Reads sysfs only; decides nothing else. */
#pragma once

#include <sys/types.h>

#include <glib.h>

G_BEGIN_DECLS

/* SCSI host @host ("host2") is an AHCI port marked hot-plug or external. */
gboolean lm_removable_host_hotplug (const char *host);

/* Whole disk @disk ("sdb") is removable or hot-plug; @why (may be NULL)
 * then gets the reason in words. */
gboolean lm_removable_disk (const char *disk, char **why);

/* The physical disks under a superblock, by name, sorted: what
 * lm_sb_disks_for_mount() says for its device @devno, or for one with an
 * anonymous device number (btrfs, bcachefs) its @fstype and @source.
 * Empty where sysfs does not say. */
char **lm_removable_disks_of (dev_t devno, const char *fstype, const char *source);

/* Any disk under the superblock is removable or hot-plug; @why (may be
 * NULL) then names it and says why. */
gboolean lm_removable_superblock (dev_t devno, const char *fstype, const char *source, char **why);

G_END_DECLS
