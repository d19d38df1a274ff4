/* lm-ledger-record.h: one record of the spin-up ledger on disk: a magic, a
 * length and a CRC32 around it. Pure encoding and parsing; never does I/O. */
#pragma once

#include <gio/gio.h>

#include "lm-attrib.h"

G_BEGIN_DECLS

typedef enum
{
  LM_LEDGER_SPINUP = 1, /* time_us == end_us: the spin-up and its blame */
  LM_LEDGER_ASLEEP = 2, /* the disk was asleep from time_us to end_us */
  LM_LEDGER_AWAKE = 3,  /* the disk was awake from time_us to end_us */
  /* Activity from time_us to end_us (a run of consecutive seconds with I/O
   * that processes issued, or data dirtied, on that disk), with how many
   * of its seconds had each; written in the record's extension. */
  LM_LEDGER_ACTIVITY = 4,
  /* A spinning disk's SMART wear counters at time_us (== end_us), at most
   * one a day; in the extension. */
  LM_LEDGER_WEAR = 5,
  /* A WaitAwake caller's wait from time_us to end_us for the disk, and
   * why it ended (the extension): comm and pid are the caller's, path
   * its systemd unit where it ran in one ("man-db.service"). */
  LM_LEDGER_DEFERRED = 6,
} LmLedgerKind;

/* Why a deferred run's wait ended: WaitAwake's reply, as stored. */
typedef enum
{
  LM_LEDGER_REASON_AWAKE = 0,
  LM_LEDGER_REASON_TIMEOUT = 1,
  LM_LEDGER_REASON_INACTIVE = 2,
  LM_LEDGER_REASON_AC = 3,
  LM_LEDGER_REASON_DISABLED = 4,
} LmLedgerReason;

/* At most: a spin-up's unit, after its thread's name and a NUL. */
#define LM_LEDGER_UNIT_EXT 127

typedef struct
{
  LmLedgerKind kind;
  char disk[32];
  gint64 time_us; /* realtime, µs since the epoch */
  gint64 end_us;
  /* Spin-ups only; zero elsewhere. */
  guint32 pid;
  gint64 uid; /* -1 when not known */
  LmVia via;
  char comm[16];                     /* the process (its thread group leader's name) */
  char thread[16];                   /* the thread's own name where it differs, else "" */
  char unit[LM_LEDGER_UNIT_EXT + 1]; /* its systemd unit or application, else "" */
  char path[256];
  guint32 flushed; /* KiB held back and flushed at this spin-up */
  /* Activity only; zero elsewhere: seconds of the run with process reads
   * that reached the disk, with direct writes, with data dirtied. */
  guint32 reads, writes, dirtied;
  /* Activity only: the filesystems its data was dirtied on (LmReplayFs
   * bits); 0 in records from before the field, or where not seen. */
  guint32 fs;
  /* Activity only: seconds in which a process made a clean file dirty (a
   * dirty spell began, from which stock write-back expires that file);
   * spells_known is FALSE in records from before the field. */
  guint32 spells;
  gboolean spells_known;
  /* Wear only: SMART 193, 4, 12, 9; LM_LEDGER_NO_WEAR where not reported. */
  guint32 load_cycles, start_stop, power_cycles, power_on_hours;
  /* Deferred runs only. */
  LmLedgerReason reason;
} LmLedgerRecord;

#define LM_LEDGER_NO_WEAR G_MAXUINT32

#define LM_LEDGER_MAGIC "LMr1"
#define LM_LEDGER_HEADER_SIZE 12         /* magic, payload length, CRC32 of the payload */
#define LM_LEDGER_FIXED_SIZE 40          /* the payload before its extension and strings */
#define LM_LEDGER_ACTIVITY_EXT_SPELLS 20 /* the same and dirty spells: activity now */
#define LM_LEDGER_ACTIVITY_EXT 16        /* reads, writes, dirtied, filesystems: activity only */
#define LM_LEDGER_ACTIVITY_EXT_V1 12     /* the same without filesystems: older files */
#define LM_LEDGER_THREAD_EXT 15          /* at most: a spin-up's thread name, when it has one */
#define LM_LEDGER_SPINUP_EXT (LM_LEDGER_THREAD_EXT + 1 + LM_LEDGER_UNIT_EXT)
#define LM_LEDGER_WEAR_EXT 16    /* the four wear counters: wear records only */
#define LM_LEDGER_DEFERRED_EXT 4 /* why the wait ended: deferred runs only */
#define LM_LEDGER_MAX_RECORD                                                                       \
  (LM_LEDGER_HEADER_SIZE + LM_LEDGER_FIXED_SIZE + LM_LEDGER_SPINUP_EXT + 32 + 16 + 256)

guint32 lm_ledger_crc32 (const guint8 *data, gsize length);
void lm_ledger_record_encode (const LmLedgerRecord *record, GByteArray *out);
/* Bytes taken by the record at @data, 0 when @data ends inside it (a torn
 * tail), -1 when it is no valid record. */
gssize lm_ledger_record_decode (const guint8 *data, gsize length, LmLedgerRecord *out);

/* Called for each valid record with its offset and size in the buffer. */
typedef void (*LmLedgerRecordFunc) (const LmLedgerRecord *record, gsize offset, gsize size,
                                    gpointer user_data);
/* Every valid record in @data, in order; corrupt bytes are skipped up to
 * the next record's magic. Returns the number of records; *skipped (may
 * be NULL) gets the number of bytes that were not part of one. */
guint lm_ledger_parse (const guint8 *data, gsize length, LmLedgerRecordFunc func,
                       gpointer user_data, gsize *skipped);

GVariant *lm_ledger_record_to_variant (const LmLedgerRecord *record);
const char *lm_ledger_kind_to_string (LmLedgerKind kind);
/* WaitAwake's reason words and their stored codes; FALSE: not one. */
gboolean lm_ledger_reason_from_string (const char *word, LmLedgerReason *reason);
const char *lm_ledger_reason_to_string (LmLedgerReason reason);

G_END_DECLS
