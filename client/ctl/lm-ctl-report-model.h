/* lm-ctl-report-model.h: laptop-modectl report's model of the ledger, shared by
 * its terminal, HTML, JSON and OpenMetrics writers; no output lives here. */
#pragma once

#include "lm-ctl.h"
#include "lm-nvme-residency.h"
#include "lm-replay.h"
#include "lm-advice.h"

#define LM_REPORT_TOP_WAKERS 8

typedef struct
{
  gint64 start_us, end_us;
  gboolean asleep;
} LmReportSpan;

typedef struct
{
  gint64 time_us;
  char *comm;   /* the program, raw, from outside: escape for every output */
  char *thread; /* its thread that did the I/O, where named apart; else NULL */
  char *via;
  char *path; /* NULL where not known */
  char *unit; /* its systemd unit or application; NULL where not known */
} LmReportSpinUp;

/* A WaitAwake caller's wait (laptop-modectl defer, a maintenance unit's
 * wait-awake) and the spin-up it rode (lm-ctl-report-defer.c). */
typedef struct
{
  gint64 start_us, end_us;
  char *name;   /* its systemd unit, else its process; raw; NULL: another user's */
  char *reason; /* awake, timeout, inactive, ac, disabled */
  char *rode;   /* the program whose spin-up it ran in; NULL: none found */
} LmReportDeferred;

/* Per program (and how), whichever of its threads did the I/O. */
typedef struct
{
  char *comm;
  char *via;
  char *unit; /* grouped by unit too (lm_report_group_by_unit): the unit, NULL: none */
  guint count;
  GPtrArray *threads; /* the thread names seen, first seen first, at most LM_REPORT_THREADS */
  GArray *times;      /* its spin-ups' times (µs), for its rhythm */
  char *rhythm;       /* "every 30 s", "at 06:25 daily", "irregular"; NULL: too few */
} LmReportWaker;

#define LM_REPORT_THREADS 4

/* An NVMe disk's power states over the report's range (lm-ctl-report-nvme.c). */
typedef struct
{
  LmResidencyTable table;
  gint64 window_s;    /* the seconds walked: the ledger's watched spans from its first record */
  gboolean estimated; /* activity was recorded: laptop and stock are walked */
  LmResidency laptop; /* the recorded activity, laptop mode's writeback */
  LmResidency stock;  /* the same activity under the stock policy */
  double floor_w;     /* the lowest idle power of a non-operational state, -1: none */
} LmReportNvme;

typedef struct
{
  char *name;         /* raw disk name */
  GArray *spans;      /* LmReportSpan, by start */
  GPtrArray *spinups; /* LmReportSpinUp, by time */
  GPtrArray *wakers;  /* LmReportWaker, most first */
  GArray *runs;       /* LmReplayRun: the activity records */
  guint hourly[24];   /* spin-ups by local hour of the day */
  guint idle_s;       /* the idle gap replayed: its standby timer, else the default */
  gint64 asleep_s, awake_s;
  LmReplayResult recorded; /* spin-ups and awake seconds as recorded */
  LmReplayResult stock;    /* the same activity under the stock policy */
  guint stock_unsure;      /* LmReplayUnsure: what its replay had to assume */
  LmReportNvme *nvme;      /* NULL: not NVMe, or its power states not read */
  /* A spinning disk's head parking (Disks' SMART keys; lm-ctl-report-wear.c). */
  gboolean have_wear;
  guint32 load_cycles, load_cycle_rating;
  double load_cycles_per_day, load_cycle_days_left; /* -1: not known yet */
  gboolean load_cycle_warning;
  GPtrArray *deferred; /* LmReportDeferred, by end */
  gboolean by_unit;    /* its wakers are per unit too (lm_report_group_by_unit) */
} LmReportDisk;

typedef struct
{
  gint64 since_us, until_us;
  GPtrArray *disks;      /* LmReportDisk, by name */
  GVariant *measurement; /* the daemon's Measurement (a{sv}), NULL: none saved */
  /* Records that wait in memory for the state disk (LedgerSummary's
   * UnwrittenSince): since when, 0 when none; on which disk. */
  gint64 unwritten_since_us;
  char *unwritten_disk;
  /* Values laptop mode set that others changed (Conflicts, ConflictWriters);
   * NULL from a file. */
  GVariant *conflicts, *conflict_writers;
} LmReport;

void lm_report_free (LmReport *report);
/* From LedgerSummary (a{sa{sv}}, may be NULL): records not yet written. */
void lm_report_add_unwritten (LmReport *report, GVariant *summary);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmReport, lm_report_free)

/* How far back --since reaches: a year, leap day included. The ledger
 * (2 MiB at most) holds less than that; a date further back is a typo. */
#define LM_REPORT_SINCE_MAX_DAYS 366

/* lm-ctl-since.c: --since @text as the start of the range, in µs since the
 * epoch: an age back from @now_us ("12h", "7d", "2w") or a date in @tz
 * ("2026-12-01" from its midnight, "2026-12-01T08:30[:00]", a space for the
 * T too), before @now_us and at most LM_REPORT_SINCE_MAX_DAYS days before
 * it. FALSE with @error (G_OPTION_ERROR_BAD_VALUE) for anything else. */
gboolean lm_ctl_parse_since (const char *text, gint64 now_us, GTimeZone *tz, gint64 *since_us,
                             GError **error);
/* The same for the option named @option ("--until"), into @at_us. */
gboolean lm_ctl_parse_when (const char *option, const char *text, gint64 now_us, GTimeZone *tz,
                            gint64 *at_us, GError **error);
/* --since @since (NULL: "1d") and --until @until (NULL: @now_us), the
 * first before the second; both back from @now_us, not from --until. */
gboolean lm_ctl_parse_window (const char *since, const char *until, gint64 now_us, GTimeZone *tz,
                              gint64 *since_us, gint64 *until_us, GError **error);

/* Every record in [@since_us, @until_us], page by page (GetLedgerPage). */
GVariant *lm_report_fetch_ledger (LmExportedLaptopMode *proxy, gint64 since_us, gint64 until_us,
                                  GError **error);
/* The model report and explain share: from the daemon's ledger (with its
 * disks' power states, wear and measurement) or from a JSON file of
 * records. @idle_s 0: each disk's standby timer. NULL after printing why;
 * else *@proxy_out (NULL for a file) and the *@records_out read. */
LmReport *lm_report_load (const char *from_json, gint64 since_us, gint64 until_us, guint idle_s,
                          const char *disk, LmExportedLaptopMode **proxy_out,
                          GVariant **records_out);
/* Builds the model from GetLedger's records (aa{sv}); pure. */
/* @idle maps disk names to their standby timers in seconds (may be NULL);
 * others get @default_idle_s. */
LmReport *lm_report_build (GVariant *records, gint64 since_us, gint64 until_us, GHashTable *idle,
                           guint default_idle_s, const char *only_disk);
/* Each disk's wakers again, per program, how and unit: two programs of
 * one name in two units are two wakers. */
void lm_report_group_by_unit (LmReport *report);
/* The share of [a, b) that was asleep (0..1), or -1 where nothing is known. */
double lm_report_asleep_share (const LmReportDisk *disk, gint64 a, gint64 b, double *known);

/* lm-ctl-report-nvme.c: @disks is the Disks property (a{sa{sv}});
 * @max_lost_work_s laptop mode's MaxLostWork, @laptop_mode_s its
 * LaptopModeSeconds: the replay's estimates. */
void lm_report_add_nvme (LmReport *report, GVariant *disks, guint max_lost_work_s,
                         guint laptop_mode_s);
void lm_report_nvme_text (const LmReportDisk *d);
void lm_report_nvme_json (JsonBuilder *b, const LmReportDisk *d);
void lm_report_nvme_openmetrics (GString *out, const LmReport *report);
void lm_report_nvme_html (GString *out, const LmReportDisk *d);
/* The share (0..1) of the walked window in the deepest state APST reaches. */
double lm_report_nvme_deep_share (const LmReportNvme *n, const LmResidency *r);

/* lm-ctl-report-wear.c */
void lm_report_add_wear (LmReport *report, GVariant *disks);
void lm_report_wear_text (const LmReportDisk *d);
void lm_report_wear_json (JsonBuilder *b, const LmReportDisk *d);
void lm_report_wear_openmetrics (GString *out, const LmReport *report);

/* lm-ctl-report-defer.c: @rec is a "deferred" record of @d. */
void lm_report_add_deferred (LmReportDisk *d, GVariant *rec, gint64 start_us, gint64 end_us);
void lm_report_deferred_free (gpointer p);
/* Once @d's spin-ups are sorted: the one each wait rode. */
void lm_report_link_deferred (LmReportDisk *d);
/* "man-db.service waited 47 min and ran in firefox's spin-up" (raw names:
 * escape it for the output). */
char *lm_report_deferred_sentence (const LmReportDeferred *r);
void lm_report_deferred_text (const LmReportDisk *d);
void lm_report_deferred_json (JsonBuilder *b, const LmReportDisk *d);

/* lm-ctl-report-measure.c */
void lm_report_add_measurement (LmReport *report, GVariant *measurement);
char *lm_report_measurement_sentence (GVariant *measurement);
void lm_report_measurement_text (const LmReport *report);
void lm_report_measurement_json (JsonBuilder *b, const LmReport *report);
void lm_report_measurement_openmetrics (GString *out, const LmReport *report);

/* lm-ctl-causes.c: one cause of wake-ups on a disk (explain, report --html). */
#define LM_REPORT_CAUSE_FILES 16 /* distinct files kept per cause */

typedef struct
{
  const LmReportWaker *waker; /* its program, how and unit (after group-by-unit) */
  guint spinups;
  gint64 awake_s;   /* the awake spells its spin-ups began */
  GPtrArray *files; /* distinct paths, first seen first, at most LM_REPORT_CAUSE_FILES */
  guint more_files; /* distinct paths past those */
  LmRhythm rhythm;
  gboolean matched; /* the table had an entry: advice is filled in */
  LmAdviceMatch advice;
} LmReportCause;

/* @d's causes (LmReportCause), biggest first (awake time, then spin-ups),
 * matched against @advice (may be NULL). */
GPtrArray *lm_report_causes (const LmReportDisk *d, const LmAdvice *advice);
/* "its own I/O", "its data written back later", "kernel work", "a command
 * sent to the disk". */
const char *lm_report_how_text (const char *via);

/* lm-ctl-commit.c: whether laptop mode's commit= applies to a journal's
 * filesystem, for explain. */
typedef struct
{
  gboolean active, remount;      /* Active, Remount */
  const char *const *types;      /* RemountTypes */
  const char *const *no_remount; /* NoRemount */
  const char *const *remounted;  /* Remounted's mount points */
} LmCommitSettings;

/* Pure: "sda1 (/home) commits every 5 s, the default: laptop mode's
 * commit= does not apply: Remount is off." for @device mounted at @target
 * with type @fstype and superblock options @options; NULL where it does not
 * apply (no mount, a type without commit=). Raw: escape it. */
char *lm_ctl_commit_fact (const char *device, const char *target, const char *fstype,
                          const char *options, const LmCommitSettings *settings);
/* The same for @device's mount as this machine has it (by its device
 * number) and the daemon's settings; NULL where not known. */
char *lm_ctl_commit_fact_live (LmExportedLaptopMode *proxy, const char *device);

/* lm-ctl-report-text.c */
void lm_report_print_text (const LmReport *report, gboolean utf8);
/* lm-ctl-report-html.c */
/* @advice: the table of known causes for "Why it woke" (may be NULL). */
char *lm_report_html (const LmReport *report, const LmAdvice *advice);
/* lm-ctl-report-metrics.c */
JsonNode *lm_report_json (const LmReport *report);
char *lm_report_openmetrics (const LmReport *report);
