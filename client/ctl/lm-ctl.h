/* lm-ctl.h: what laptop-modectl's command files share.
 * The command table's shape, the bus and error helpers and the output
 * rules (outside text escaped, JSON from json-glib); no command lives here. */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "lm-escape.h"
#include "lm-generated.h"
#include "lm-names.h"

#define LM_CTL_EXIT_USAGE 2

typedef enum
{
  LM_CTL_COMMAND_DEFAULT = 0,
  /* Also answered as the historical "laptop_mode start|stop|status". */
  LM_CTL_COMMAND_HISTORICAL = 1 << 0,
} LmCtlCommandFlags;

typedef struct
{
  const char *name;
  const char *args;
  const char *summary;
  int (*run) (int argc, char **argv);
  LmCtlCommandFlags flags;
} LmCtlCommand;

/* "laptop-modectl" or "laptop_mode", for messages. */
extern const char *lm_ctl_prog;

/* lm-ctl-common.c */
void lm_ctl_print_error (const char *what, GError *error);
LmExportedLaptopMode *lm_ctl_get_proxy (void);
GDBusCallFlags lm_ctl_call_flags (void);
GVariant *lm_ctl_call (LmExportedLaptopMode *proxy, const char *method, GVariant *params,
                       GError **error);
int lm_ctl_call_and_report (const char *method, GVariant *params);
gboolean lm_ctl_parse_options (int *argc, char ***argv, const char *args, const char *summary,
                               const GOptionEntry *entries);
int lm_ctl_usage_error (const char *fmt, ...) G_GNUC_PRINTF (1, 2);
int lm_ctl_no_arguments (int argc, char **argv);
char *lm_ctl_safe (const char *text);
char *lm_ctl_fit (const char *text, guint width);
/* "YYYY-MM-DD HH:MM" in local time ("?" out of range). */
char *lm_ctl_format_time (gint64 time_us);
/* "Changed by others:" lines from Conflicts and ConflictWriters. */
void lm_ctl_print_conflicts (GVariant *conflicts, GVariant *writers);
char *lm_ctl_json_text (JsonNode *node);
void lm_ctl_print_json (JsonNode *node);
void lm_ctl_print_variant_json (GVariant *value);

/* lm-ctl-settings.c */
GVariant *lm_ctl_parse_setting (const char *key, const char *text, const char **canonical,
                                GError **error);

/* lm-ctl-defer.c: "90s", "30m", "4h", "1d" or bare seconds, at most a
 * day, in seconds; -1 for anything else. */
gint64 lm_ctl_parse_duration (const char *text);

/* The commands, one file per group. */
int lm_ctl_status (int argc, char **argv);
int lm_ctl_start (int argc, char **argv);
int lm_ctl_stop (int argc, char **argv);
int lm_ctl_mode (int argc, char **argv);
int lm_ctl_sync (int argc, char **argv);
int lm_ctl_set (int argc, char **argv);
int lm_ctl_inhibit (int argc, char **argv);
int lm_ctl_defer (int argc, char **argv);
int lm_ctl_wait_awake (int argc, char **argv);
int lm_ctl_watch (int argc, char **argv);
int lm_ctl_spinups (int argc, char **argv);
int lm_ctl_disks (int argc, char **argv);
int lm_ctl_monitor (int argc, char **argv);
int lm_ctl_report (int argc, char **argv);
int lm_ctl_explain (int argc, char **argv);
int lm_ctl_measure (int argc, char **argv);

/* lm-ctl-measure-result.c: its statistics, pure. */
typedef struct
{
  guint n;
  double mean, var, half; /* var: sample variance; half: 95 % half-interval, NAN below 2 */
} LmCtlMeasureArm;

typedef struct
{
  LmCtlMeasureArm a, b;
  double diff, half;   /* B − A and its 95 % half-interval (Welch), NAN below 2 a side */
  gboolean measurable; /* the interval of the difference excludes zero */
} LmCtlMeasureStats;

/* Student's t for a two-sided 95 % interval, @df fractional (Welch's). */
double lm_ctl_measure_t95 (double df);
void lm_ctl_measure_compare (const double *a, guint na, const double *b, guint nb,
                             LmCtlMeasureStats *out);
