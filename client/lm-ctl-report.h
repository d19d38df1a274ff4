/* lm-ctl-report.h: laptop-modectl report's model of the ledger, shared by
 * its terminal, HTML, JSON and OpenMetrics writers; no output lives here. */
#pragma once

#include "lm-ctl.h"
#include "lm-replay.h"

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
} LmReportSpinUp;

/* Per program (and how), whichever of its threads did the I/O. */
typedef struct
{
  char *comm;
  char *via;
  guint count;
  GPtrArray *threads; /* the thread names seen, first seen first, at most LM_REPORT_THREADS */
} LmReportWaker;

#define LM_REPORT_THREADS 4

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
} LmReportDisk;

typedef struct
{
  gint64 since_us, until_us;
  GPtrArray *disks; /* LmReportDisk, by name */
} LmReport;

void lm_report_free (LmReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmReport, lm_report_free)

/* Builds the model from GetLedger's records (aa{sv}); pure. */
/* @idle maps disk names to their standby timers in seconds (may be NULL);
 * others get @default_idle_s. */
LmReport *lm_report_build (GVariant *records, gint64 since_us, gint64 until_us, GHashTable *idle,
                           guint default_idle_s, const char *only_disk);
/* "YYYY-MM-DD HH:MM" in local time. */
char *lm_report_time (gint64 time_us);
/* The share of [a, b) that was asleep (0..1), or -1 where nothing is known. */
double lm_report_asleep_share (const LmReportDisk *disk, gint64 a, gint64 b, double *known);

/* lm-ctl-report-text.c */
void lm_report_print_text (const LmReport *report, gboolean utf8);
/* lm-ctl-report-html.c */
char *lm_report_html (const LmReport *report);
/* lm-ctl-report-metrics.c */
JsonNode *lm_report_json (const LmReport *report);
char *lm_report_openmetrics (const LmReport *report);
