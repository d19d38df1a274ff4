/* lm-ctl-measure-private.h: what the files of laptop-modectl measure share:
 * the run's state (Measure), its windows and samples, and the battery's
 * sources. Only client/ctl/lm-ctl-measure*.c include it. */
#pragma once

#include "lm-ctl.h"

G_BEGIN_DECLS

#define UPOWER_NAME "org.freedesktop.UPower"
#define UPOWER_PATH "/org/freedesktop/UPower"
#define UPOWER_DISPLAY "/org/freedesktop/UPower/devices/DisplayDevice"
#define LOGIND_NAME "org.freedesktop.login1"
#define LOGIND_PATH "/org/freedesktop/login1"

typedef enum
{
  SOURCE_UPOWER,
  SOURCE_POWER_NOW,
  SOURCE_CURRENT_VOLTAGE,
  SOURCE_ENERGY_NOW,
} Source;

/* How each source is named in the output. */
extern const char *const lm_measure_source_names[];

typedef struct
{
  double t;       /* seconds since the run began */
  double value;   /* W, or µWh for energy_now */
  gboolean fresh; /* read in this window (not carried over from the last) */
} Sample;

typedef struct
{
  guint arm; /* 0: A (laptop mode on, or KEY=VALUE), 1: B */
  double start, kept_from, end;
  GArray *samples;
  gboolean counted;
  double watts;
  const char *dropped; /* why it does not count */
} Window;

typedef struct
{
  GMainLoop *loop;
  LmExportedLaptopMode *proxy;
  GDBusConnection *bus;
  /* Options. */
  double window_s, discard_s, interval_s;
  guint windows;
  gboolean json, save;
  char *compare_key; /* canonical name */
  GVariant *compare_value, *compare_original;
  char *arm_names[2];
  /* What was there before. */
  char *original_mode;
  /* The battery. */
  Source source;
  GDBusProxy *display;
  GPtrArray *batteries; /* sysfs directories */
  double battery_wh;
  /* The run. */
  gint64 t0;
  GPtrArray *done; /* Window */
  Window *current;
  guint index;
  double last_rate;
  gboolean have_rate;
  guint window_id, sample_id, progress_id;
  guint signal_ids[3];
  guint bus_subs[3];
  gulong props_handler;
  const char *ended; /* NULL while running */
  gboolean changed;  /* a call of ours went through: the mode or setting needs putting back */
  gboolean tty;
  GError *error;
} Measure;

/* lm-ctl-measure-battery.c: where the watts come from. */
/* A power supply's sysfs attribute, stripped; NULL when it cannot be read. */
char *lm_measure_read_supply (const char *dir, const char *name);
gboolean lm_measure_upower_usable (Measure *m);
gboolean lm_measure_probe_sysfs (Measure *m, GError **error);
gboolean lm_measure_read_sysfs (Measure *m, double *out);
double lm_measure_battery_wh (Measure *m);

/* lm-ctl-measure-run.c: the windows, from the first to the restore. */
double lm_measure_now_s (Measure *m);
void lm_measure_window_free (Window *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Window, lm_measure_window_free)
gboolean lm_measure_run (Measure *m, LmExportedLaptopMode *proxy);

/* lm-ctl-measure-result.c: the statistics and their words. */
GVariant *lm_measure_result_of (Measure *m);
void lm_measure_print_result (Measure *m, GVariant *r);
gboolean lm_measure_save_result (Measure *m, GVariant *r);

G_END_DECLS
