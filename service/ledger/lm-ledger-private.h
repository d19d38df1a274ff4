/* lm-ledger-private.h: what lm-ledger.c (the file and the summary) and lm-ledger-notes.c (what the
 * disks, the engine and the kernel tell it) share. Not for anyone else. */
#pragma once

#include "lm-ledger-index.h"
#include "lm-ledger.h"

G_BEGIN_DECLS

typedef struct
{
  gboolean known; /* state seen at least once */
  gboolean asleep;
  gint64 since_us;
  /* Today, local time: */
  guint spinups;
  gint64 asleep_us; /* in closed intervals */
  gint64 last_wake_us;
  guint activity_today; /* activity records closed on activity_day */
  gint64 activity_day;  /* local midnight of the day they belong to */
  gboolean has_open;    /* an activity record that may still grow */
  LmLedgerRecord open;
  /* A spin-up in the pending records whose Flushed the engine's flush
   * that follows it fills in place: its offset, while pending_gen holds. */
  gboolean has_held;
  gsize held_offset, held_size;
  guint64 held_gen;
  guint held_timer;
  /* Wear: the oldest wear record held, and the local day of the newest. */
  gboolean has_first_wear;
  gint64 first_wear_us;
  guint32 first_load_cycles;
  gint64 wear_day;
  GArray *runs_today; /* LmReplayRun: today's closed activity, for the NVMe keys */
} DiskDay;

struct _LmLedger
{
  char *path;
  LmLedgerChangedFunc changed_func; /* lm-ledger-dbus.c: LedgerSummary */
  gpointer changed_data;
  char *state_disk;
  LmDisks *disks; /* borrowed: asked whether the state disk is awake */
  gboolean defer;
  guint max_wait_s;
  guint timer_id;
  GByteArray *pending; /* encoded records not yet in the file */
  /* The file's records and the pending ones, for GetLedgerPage: kept as
   * each is appended, rebuilt at compaction; the file is never read back. */
  LmLedgerIndex *index;
  guint n_pending;
  gsize file_size;
  gint64 oldest_us; /* of the file's records; G_MAXINT64 when none */
  gint64 start_us;  /* when this ledger started: the first interval's start */
  gint64 day_start_us;
  GHashTable *days;             /* disk → DiskDay */
  guint64 pending_gen;          /* counts each time the pending records are written */
  gboolean expect_flush;        /* the user-space engine runs: flushes are reported */
  gboolean holding;             /* the record being appended waits for its flush */
  gboolean batching;            /* activity: written with the next record, not alone */
  LmLedgerDrainFunc drain_func; /* collects the kernel's activity first */
  gpointer drain_data;
  gboolean draining;
  /* Suspends today, [start, end) pairs in µs, at most LM_LEDGER_MAX_PAUSES
   * (then the last one grows): left out of the NVMe estimates. */
  GArray *paused;
  gint64 paused_since; /* the machine is suspending since; 0: it runs */
  /* The latest end of a record the file held when this ledger started:
   * the daemon was stopped from there to start_us (none if not before). */
  gint64 stopped_from_us;
  /* When the oldest record that waits in memory was appended; 0: none
   * waits (LedgerSummary's UnwrittenSince, for the state disk). */
  gint64 unwritten_since_us;
};

#define LM_LEDGER_MAX_PAUSES 64

void lm_ledger_disk_day_free (gpointer data);
gint64 lm_ledger_local_midnight_us (gint64 now_us);
DiskDay *lm_ledger_day_of (LmLedger *self, const char *disk);
void lm_ledger_roll_day (LmLedger *self, gint64 now_us);
void lm_ledger_publish (LmLedger *self);
/* Collects what the kernel holds (activity), once at a time. */
void lm_ledger_drain (LmLedger *self);
void lm_ledger_flush_or_warn (LmLedger *self, gboolean closing);
/* @r was counted in today's summary already. */
void lm_ledger_append_counted (LmLedger *self, const LmLedgerRecord *r);
void lm_ledger_close_intervals (LmLedger *self);
void lm_ledger_close_activity (LmLedger *self, gboolean all);
/* A wear record read back or appended (lm-ledger-wear.c). */
void lm_ledger_count_wear (LmLedger *self, DiskDay *d, const LmLedgerRecord *r);
/* Today's activity kept for, and LedgerSummary's NVMe keys (lm-ledger-nvme.c). */
void lm_ledger_nvme_note_run (LmLedger *self, DiskDay *d, const LmLedgerRecord *r);
void lm_ledger_nvme_summary (LmLedger *self, const char *disk, DiskDay *d, gint64 now_us,
                             guint delay_s, GVariant *disks, guint max_lost_work,
                             GVariantBuilder *e);

G_END_DECLS
