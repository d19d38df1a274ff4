/* lm-ledger.h: the spin-up ledger: per disk, asleep and awake intervals and
 * each spin-up with its blame, kept 30 days in the state directory. */
#pragma once

#include <gio/gio.h>

#include "lm-attrib.h"
#include "lm-disks.h"
#include "lm-ledger-record.h"
#include "lm-smart.h"

G_BEGIN_DECLS

#define LM_LEDGER_MAX_BYTES (2 * 1024 * 1024)
#define LM_LEDGER_MAX_AGE_US ((gint64) 30 * 24 * 3600 * G_USEC_PER_SEC)
#define LM_LEDGER_MAX_PENDING 4096
/* Compaction by age waits until the oldest record is this much past 30
 * days: once a day, not at every write of a month-old ledger. */
#define LM_LEDGER_COMPACT_SLACK_US ((gint64) 24 * 3600 * G_USEC_PER_SEC)
#define LM_LEDGER_MAX_QUERY 100000
/* Activity records per disk and local day, at most (one more may carry
 * over midnight): about 33 KB a day per disk. */
#define LM_LEDGER_ACTIVITY_PER_DAY 480
/* A direct spin-up's record waits this long, at most, for the count of
 * the flush that follows it. */
#define LM_LEDGER_HOLD_S 15

typedef struct _LmLedger LmLedger;

/* Its D-Bus members (GetLedger, LedgerSummary) are lm-ledger-dbus.c's. */
LmLedger *lm_ledger_new (const char *path);
void lm_ledger_free (LmLedger *ledger);

/* The disk whose waking lets pending records be written; NULL: write at
 * once (no disk under the state directory, as on tmpfs). */
void lm_ledger_set_state_disk (LmLedger *ledger, const char *disk);
/* Whether the state disk counts asleep now: as the disks say (@disks,
 * borrowed, which the daemon frees after the ledger), else as
 * lm_ledger_note_power was last told. */
void lm_ledger_set_disks (LmLedger *ledger, LmDisks *disks);
gboolean lm_ledger_state_disk_asleep (LmLedger *ledger);
/* While laptop mode is on, records wait for the state disk to be awake
 * anyway: its wake for someone else, or @max_wait_s seconds on a disk that
 * stayed awake; never a write to a sleeping state disk (but at Stop,
 * suspend, shutdown or LM_LEDGER_MAX_PENDING records). While off they are
 * written at once. */
void lm_ledger_set_deferring (LmLedger *ledger, gboolean defer, guint max_wait_s);

/* An LmSpinUpFunc. */
void lm_ledger_note_spinup (const LmSpinUp *spinup, gpointer user_data);
/* A disk went to sleep or woke (lm-disks.c). */
void lm_ledger_note_power (const char *disk, gboolean asleep, gint64 time_us, gpointer user_data);
/* An LmDisksWearFunc: a spinning disk's SMART wear read now; written at
 * most once a local day per disk. */
gboolean lm_ledger_note_wear (const char *disk, const LmSmartWear *wear, gint64 now_us,
                              gint64 *first_us, guint32 *first_load_cycles, gpointer ledger);
/* An LmActivityFunc: a run of activity the kernel collected. */
void lm_ledger_note_activity (const LmActivity *activity, gpointer ledger);
/* The user-space engine flushed @kib KiB to @disk after its spin-up; with
 * @disk NULL: the engine started (@kib 1) or stopped (0). */
void lm_ledger_note_flushed (const char *disk, guint32 kib, gpointer ledger);
/* A WaitAwake caller's wait ended with @reason (its reply's word); @comm
 * and @unit name the caller ("" when not known). */
void lm_ledger_note_deferred (LmLedger *ledger, const char *disk, gint64 start_us, gint64 end_us,
                              guint32 pid, guint32 uid, const char *comm, const char *unit,
                              const char *reason);
/* Called before each write and query, to collect what the kernel holds. */
typedef void (*LmLedgerDrainFunc) (gpointer user_data);
void lm_ledger_set_drain_func (LmLedger *ledger, LmLedgerDrainFunc func, gpointer user_data);
void lm_ledger_append (LmLedger *ledger, const LmLedgerRecord *record);

/* Write what waits in memory; closes open intervals first if @closing. */
gboolean lm_ledger_flush (LmLedger *ledger, gboolean closing, GError **error);
guint lm_ledger_pending (LmLedger *ledger);
/* Records in [@since_us, @until_us], oldest first, at most @max: aa{sv}
 * (the first page of lm_ledger_page()). A new reference. */
GVariant *lm_ledger_query (LmLedger *ledger, gint64 since_us, gint64 until_us, guint max);
/* One page of the records overlapping [@since_us, @until_us], in the order
 * written (records still growing last), at most @limit, from @cursor on
 * ("" for the first page), served from memory: the file is not read. The
 * records' encoded bytes (cheap to copy on the main loop: turn them into
 * GetLedger's aa{sv} with lm_ledger_records_to_variant() anywhere);
 * *@next_cursor gets the cursor of the next page, "" when this was the
 * last, *@count the number of records. Fails (LM_ERROR_INVALID_ARGS) on a cursor this ledger did
 * not hand out, or one made stale by a rewrite. */
GBytes *lm_ledger_page (LmLedger *ledger, gint64 since_us, gint64 until_us, const char *cursor,
                        guint limit, char **next_cursor, guint *count, GError **error);
/* aa{sv} of encoded records; pure, safe in any thread. A new reference. */
GVariant *lm_ledger_records_to_variant (GBytes *records);
/* Whether lm_ledger_page() would take @cursor now; does no work. */
gboolean lm_ledger_check_cursor (LmLedger *ledger, const char *cursor, GError **error);
/* Per disk, today: a{sa{sv}} with SpinUpsToday, AsleepShareToday, LastWake,
 * and for an NVMe disk that @disks (the Disks property, may be NULL) shows
 * with an APST table, estimates of its idle share and energy with laptop
 * mode (with @max_lost_work and @laptop_mode_seconds) and under stock
 * writeback. A floating reference. */
GVariant *lm_ledger_summary (LmLedger *ledger, GVariant *disks, guint max_lost_work,
                             guint laptop_mode_seconds);
/* The machine suspends (@suspended) or has resumed: the ledger's intervals
 * stop at the suspend and start again at the resume, so that neither the
 * asleep intervals nor the NVMe estimates count suspended time. */
void lm_ledger_note_sleep (LmLedger *ledger, gboolean suspended);
/* Told whenever the summary may have changed. */
typedef void (*LmLedgerChangedFunc) (gpointer user_data);
void lm_ledger_set_changed_func (LmLedger *ledger, LmLedgerChangedFunc func, gpointer user_data);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmLedger, lm_ledger_free)

/* The ledger file in the state directory, held while the disk under it
 * sleeps (none on tmpfs). */
LmLedger *lm_ledger_new_in_state_dir (void);

G_END_DECLS
