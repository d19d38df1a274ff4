/* lm-disk-nvme.h: an NVMe disk's power states, APST and current power
 * state, read in a worker thread only while the drive is awake anyway, and
 * cached; owns the Nvme* keys of a disk in the Disks property. */
#pragma once

#include <glib.h>

#include "lm-nvme-admin.h"

G_BEGIN_DECLS

typedef struct _LmDiskNvme LmDiskNvme;

/* What decides whether an admin command may be sent now: never to a drive
 * that may be asleep (a command wakes it from a non-operational state),
 * never while one is in flight, and the cached values are refreshed at most
 * every LM_NVME_REFRESH_S (Identify is read once). */
#define LM_NVME_REFRESH_S 60

typedef struct
{
  gboolean io_seen;           /* the disk was seen doing I/O just now */
  gboolean runtime_suspended; /* its PCI function is runtime-suspended */
  gboolean excluded;
  gboolean busy; /* a read is in flight */
  gboolean have_identify;
  gint64 last_mono; /* the last attempt (µs, monotonic), 0: never */
  gint64 now_mono;
} LmNvmeDue;

gboolean lm_nvme_refresh_due (const LmNvmeDue *due);

/* NULL when @disk is no NVMe namespace with a controller device.
 * @publish(@user_data) is called on the main thread after each read. */
LmDiskNvme *lm_disk_nvme_new (const char *disk, GFunc publish, gpointer user_data);
void lm_disk_nvme_free (LmDiskNvme *nvme);

/* The disk monitor saw I/O on the disk now: read if due. @excluded disks
 * are never sent anything. */
void lm_disk_nvme_io_seen (LmDiskNvme *nvme, gboolean excluded);

/* The keys of a reading alone (power states, APST, power state): what
 * lm_residency_table_from_disk() reads back. */
void lm_nvme_reading_add_props (const LmNvmeReading *reading, GVariantBuilder *builder);

/* Appends the Nvme* keys (a{sv}) for the Disks property. */
void lm_disk_nvme_add_props (LmDiskNvme *nvme, GVariantBuilder *builder);

/* Tests: the number of reads started; of those finished after their disk
 * was freed (main thread only). */
guint lm_disk_nvme_reads (LmDiskNvme *nvme);
guint lm_disk_nvme_dropped_reads (void);

G_END_DECLS
