/* lm-disk-smart.h: a spinning ATA disk's SMART wear counters, read only
 * while it is awake anyway and at most hourly, their daily values kept in
 * the ledger, and the load-cycle projection; owns the disk's wear keys. */
#pragma once

#include <glib.h>

#include "lm-smart.h"

G_BEGIN_DECLS

/* At most one SMART READ DATA per disk in this many seconds. */
#define LM_DISK_SMART_INTERVAL_S 3600

typedef struct _LmDiskSmart LmDiskSmart;

/* The ledger keeps one wear record per disk and day and hands back the
 * oldest it holds (FALSE: none, or only one from today). */
typedef gboolean (*LmDisksWearFunc) (const char *disk, const LmSmartWear *wear, gint64 now_us,
                                     gint64 *first_us, guint32 *first_load_cycles,
                                     gpointer user_data);

/* Whether a read is due now: never read (@last_mono 0), or an interval ago. */
gboolean lm_disk_smart_due (gint64 last_mono, gint64 now_mono);

LmDiskSmart *lm_disk_smart_new (void);
void lm_disk_smart_free (LmDiskSmart *smart);

/* The disk @name (device node @path) was seen doing I/O: if due, ask its
 * power mode and, only when it answers active or idle, read SMART at once.
 * TRUE when something new is to be published. @rating: its
 * LoadCycleRating. *@woke_us: how long the SMART read took when that was
 * as long as a spin-up (it went to standby between the two commands, and
 * the read woke it), else 0. */
gboolean lm_disk_smart_io_seen (LmDiskSmart *smart, const char *name, const char *path,
                                guint rating, LmDisksWearFunc func, gpointer user_data,
                                gint64 *woke_us);

/* Appends the wear keys (a{sv}) for the Disks property. */
void lm_disk_smart_add_props (LmDiskSmart *smart, GVariantBuilder *builder);

G_END_DECLS
