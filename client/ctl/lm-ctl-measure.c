/* lm-ctl-measure.c: laptop-modectl measure, an A/B run of watts from the battery.
 * Owns the experiment (ABBA windows through the daemon's own methods, the
 * battery's readings while it runs, the statistics and their wording);
 * never states a saving its interval does not support, never leaves the
 * setting changed, and reads the battery only while the run lasts. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <glib-unix.h>

#include "lm-ctl-measure-private.h"

/* Bounds of the options, as the man page gives them. */
#define MIN_WINDOW_S 1.0
#define MAX_WINDOW_S 3600.0
#define MIN_WINDOWS 4
#define MAX_WINDOWS 200
#define MIN_INTERVAL_S 0.05
#define DEFAULT_WINDOW_S 300.0
#define DEFAULT_WINDOWS 8
#define DEFAULT_INTERVAL_S 5.0
#define MAX_DISCARD_S 60.0

/* --- options ------------------------------------------------------------- */

/* "300", "300s", "5m", "1h", "1.5s": seconds. */
static gboolean
parse_duration (const char *text, double *out)
{
  char *end;
  double v = g_ascii_strtod (text, &end);

  if (end == text || !isfinite (v) || v < 0)
    return FALSE;
  if (g_str_equal (end, "") || g_str_equal (end, "s"))
    *out = v;
  else if (g_str_equal (end, "m") || g_str_equal (end, "min"))
    *out = v * 60;
  else if (g_str_equal (end, "h"))
    *out = v * 3600;
  else
    return FALSE;
  return TRUE;
}

static int
bad_duration (const char *option, const char *text)
{
  g_autofree char *got = lm_ctl_safe (text);
  return lm_ctl_usage_error ("%s takes a duration such as 300, 300s, 5m or 1h, not “%s”", option,
                             got);
}

static const char summary[]
    = "Measure how many watts laptop mode (or, with --compare, another setting) saves on\n"
      "this laptop: on battery, it switches laptop mode on and off in windows (ABBA…),\n"
      "discards the first part of each (--discard; a minute by default), reads the\n"
      "discharge rate from UPower's EnergyRate, else /sys/class/power_supply (power_now,\n"
      "current_now × voltage_now, or energy_now differences), and reports each arm's mean\n"
      "watts with a 95 % interval, the difference and what it means in battery time.\n"
      "When the interval of the difference includes zero it says so and states no saving.\n"
      "Ctrl-C, AC power, suspend or a closed lid end the run early (a partial result);\n"
      "the mode and the setting are put back as they were in every case. The result is\n"
      "saved in the daemon's state (laptop-modectl report shows it).\n"
      "What it cannot see: other load changing during the run (keep the laptop idle),\n"
      "the firmware's and UPower's own smoothing of the rate, and batteries that report\n"
      "only energy_now in 1 % steps (long windows are needed there).";

/* The windows' options into @m: EXIT_SUCCESS, or the usage error's code. */
static int
parse_windows (Measure *m, const char *window, int windows, const char *duration,
               const char *discard, const char *interval)
{
  m->window_s = DEFAULT_WINDOW_S;
  m->windows = DEFAULT_WINDOWS;
  m->interval_s = DEFAULT_INTERVAL_S;
  if (window != NULL && !parse_duration (window, &m->window_s))
    return bad_duration ("--window", window);
  if (m->window_s < MIN_WINDOW_S || m->window_s > MAX_WINDOW_S)
    return lm_ctl_usage_error ("--window must be from 1s to 1h");
  if (windows != 0 && duration != NULL)
    return lm_ctl_usage_error ("--windows and --duration say the same; give one");
  if (duration != NULL)
    {
      double d;
      if (!parse_duration (duration, &d))
        return bad_duration ("--duration", duration);
      windows = (int) (d / m->window_s) / 4 * 4;
      if (windows < MIN_WINDOWS)
        return lm_ctl_usage_error ("--duration must hold at least 4 windows");
    }
  if (windows != 0)
    {
      if (windows < MIN_WINDOWS || windows > MAX_WINDOWS || windows % 4 != 0)
        return lm_ctl_usage_error ("--windows must be a multiple of 4 from 4 to 200 (ABBA)");
      m->windows = (guint) windows;
    }
  m->discard_s = MIN (MAX_DISCARD_S, m->window_s / 5);
  if (discard != NULL)
    {
      if (!parse_duration (discard, &m->discard_s))
        return bad_duration ("--discard", discard);
      if (m->discard_s >= m->window_s)
        return lm_ctl_usage_error ("--discard must be shorter than a window");
    }
  if (interval != NULL)
    {
      if (!parse_duration (interval, &m->interval_s))
        return bad_duration ("--interval", interval);
      if (m->interval_s < MIN_INTERVAL_S)
        return lm_ctl_usage_error ("--interval must be at least 0.05s");
    }
  return EXIT_SUCCESS;
}

/* --compare KEY=VALUE (or NULL: laptop mode on against off) into @m's
 * arms: EXIT_SUCCESS, or the usage error's code with @m's compare_*
 * fields cleared. */
static int
parse_compare (Measure *m, LmExportedLaptopMode *proxy, const char *compare)
{
  if (compare == NULL)
    {
      m->arm_names[0] = g_strdup ("laptop mode on");
      m->arm_names[1] = g_strdup ("laptop mode off");
      return EXIT_SUCCESS;
    }
  const char *eq = strchr (compare, '=');
  g_autoptr (GError) error = NULL;
  const char *canonical;
  if (eq == NULL || eq == compare)
    {
      g_autofree char *got = lm_ctl_safe (compare);
      return lm_ctl_usage_error ("--compare takes KEY=VALUE, not “%s”", got);
    }
  g_autofree char *key = g_strndup (compare, (gsize) (eq - compare));
  g_autoptr (GVariant) value = lm_ctl_parse_setting (key, eq + 1, &canonical, &error);
  if (value == NULL)
    return lm_ctl_usage_error ("%s", error->message);
  g_variant_ref_sink (value);
  /* The run switches the mode itself; the engine is no power setting. */
  if (g_str_equal (canonical, "Mode") || g_str_equal (canonical, "Engine"))
    return lm_ctl_usage_error ("--compare takes a power setting (SataLinkPolicy, "
                               "NvmeLatencyToleranceUs, MaxLostWork…), not %s",
                               canonical);
  g_autoptr (GVariant) original
      = g_dbus_proxy_get_cached_property (G_DBUS_PROXY (proxy), canonical);
  if (original == NULL || !g_variant_is_of_type (original, g_variant_get_type (value)))
    {
      g_autofree char *got = lm_ctl_safe (key);
      return lm_ctl_usage_error ("--compare: “%s” is not a setting laptop-moded has", got);
    }
  g_autofree char *was = g_variant_is_of_type (original, G_VARIANT_TYPE_STRING)
                             ? g_variant_dup_string (original, NULL)
                             : g_variant_print (original, FALSE);
  g_autofree char *now = lm_ctl_safe (eq + 1);
  g_autofree char *was_safe = lm_ctl_safe (was);
  m->arm_names[0] = g_strdup_printf ("%s=%s", canonical, now);
  m->arm_names[1] = g_strdup_printf ("%s=%s", canonical, was_safe);
  m->compare_key = g_strdup (canonical);
  m->compare_value = g_steal_pointer (&value);
  m->compare_original = g_steal_pointer (&original);
  return EXIT_SUCCESS;
}

/* Where the watts come from: UPower unless --source sysfs (or it has no
 * battery), else sysfs; FALSE with the reason printed. */
static gboolean
pick_source (Measure *m, const char *source)
{
  g_autoptr (GError) error = NULL;

  if (source == NULL || !g_str_equal (source, "sysfs"))
    {
      if (lm_measure_upower_usable (m))
        m->source = SOURCE_UPOWER;
      else if (source != NULL && g_str_equal (source, "upower"))
        {
          g_printerr ("%s: UPower has no battery on the bus\n", lm_ctl_prog);
          return FALSE;
        }
    }
  if (m->display == NULL && !lm_measure_probe_sysfs (m, &error))
    {
      g_printerr ("%s: %s\n", lm_ctl_prog, error->message);
      return FALSE;
    }
  return TRUE;
}

/* On battery, the run and its result (printed, saved): the exit code. */
static int
measure (Measure *m, LmExportedLaptopMode *proxy, const char *source)
{
  g_autoptr (GVariant) on_battery
      = g_dbus_proxy_get_cached_property (G_DBUS_PROXY (proxy), "OnBattery");
  g_autoptr (GVariant) mode = g_dbus_proxy_get_cached_property (G_DBUS_PROXY (proxy), "Mode");

  if (on_battery == NULL || !g_variant_get_boolean (on_battery))
    {
      g_printerr ("%s: measure runs on battery only (the battery's discharge is what it "
                  "reads); unplug the laptop and try again\n",
                  lm_ctl_prog);
      return EXIT_FAILURE;
    }
  m->original_mode = g_variant_dup_string (mode, NULL);
  if (!pick_source (m, source) || !lm_measure_run (m, proxy))
    return EXIT_FAILURE;
  if (m->error != NULL)
    {
      lm_ctl_print_error ("the run stopped", m->error);
      return EXIT_FAILURE;
    }
  g_autoptr (GVariant) result = lm_measure_result_of (m);
  if (m->save)
    lm_measure_save_result (m, result);
  if (m->json)
    lm_ctl_print_variant_json (result);
  else
    lm_measure_print_result (m, result);
  return EXIT_SUCCESS;
}

/* What the run held: its sources, subscriptions and words. */
static void
measure_clear (Measure *m, LmExportedLaptopMode *proxy)
{
  for (gsize i = 0; i < G_N_ELEMENTS (m->signal_ids); i++)
    g_clear_handle_id (&m->signal_ids[i], g_source_remove);
  for (gsize i = 0; i < G_N_ELEMENTS (m->bus_subs); i++)
    if (m->bus_subs[i] != 0)
      g_dbus_connection_signal_unsubscribe (m->bus, m->bus_subs[i]);
  if (proxy != NULL)
    g_clear_signal_handler (&m->props_handler, proxy);
  g_clear_object (&m->display);
  g_clear_pointer (&m->batteries, g_ptr_array_unref);
  g_clear_pointer (&m->done, g_ptr_array_unref);
  g_clear_pointer (&m->loop, g_main_loop_unref);
  g_clear_pointer (&m->compare_value, g_variant_unref);
  g_clear_pointer (&m->compare_original, g_variant_unref);
  g_clear_error (&m->error);
  g_free (m->compare_key);
  g_free (m->original_mode);
  g_free (m->arm_names[0]);
  g_free (m->arm_names[1]);
}

int
lm_ctl_measure (int argc, char **argv)
{
  g_autofree char *window = NULL, *duration = NULL, *discard = NULL, *interval = NULL;
  g_autofree char *compare = NULL, *source = NULL;
  int windows = 0;
  gboolean json = FALSE, no_save = FALSE;
  const GOptionEntry entries[] = {
    { "window", 0, 0, G_OPTION_ARG_STRING, &window, "Length of each window (default 5m; 1s to 1h)",
      "DURATION" },
    { "windows", 0, 0, G_OPTION_ARG_INT, &windows,
      "Number of windows, a multiple of 4 (default 8; 4 to 200)", "N" },
    { "duration", 0, 0, G_OPTION_ARG_STRING, &duration,
      "The whole run instead of --windows (rounded down to a multiple of 4 windows)", "DURATION" },
    { "discard", 0, 0, G_OPTION_ARG_STRING, &discard,
      "Start of each window not counted (default a minute, at most a fifth of a window)",
      "DURATION" },
    { "interval", 0, 0, G_OPTION_ARG_STRING, &interval,
      "Between sysfs readings (default 5s; UPower's own updates are used as they come)",
      "DURATION" },
    { "compare", 0, 0, G_OPTION_ARG_STRING, &compare,
      "Compare a setting's value with its current one (laptop mode on throughout)", "KEY=VALUE" },
    { "source", 0, 0, G_OPTION_ARG_STRING, &source, "auto (default), upower or sysfs", "SOURCE" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the result as JSON", NULL },
    { "no-save", 0, 0, G_OPTION_ARG_NONE, &no_save, "Do not save the result in the daemon", NULL },
    { NULL },
  };

  if (!lm_ctl_parse_options (&argc, &argv, NULL, summary, entries))
    return LM_CTL_EXIT_USAGE;
  if (lm_ctl_no_arguments (argc, argv) != EXIT_SUCCESS)
    return LM_CTL_EXIT_USAGE;

  Measure mm = { 0 }, *m = &mm;
  m->json = json;
  m->save = !no_save;
  int rc = parse_windows (m, window, windows, duration, discard, interval);
  if (rc != EXIT_SUCCESS)
    return rc;
  if (source != NULL && !g_str_equal (source, "auto") && !g_str_equal (source, "upower")
      && !g_str_equal (source, "sysfs"))
    {
      g_autofree char *got = lm_ctl_safe (source);
      return lm_ctl_usage_error ("--source takes auto, upower or sysfs, not “%s”", got);
    }

  g_autoptr (LmExportedLaptopMode) proxy = lm_ctl_get_proxy ();
  if (proxy == NULL)
    return EXIT_FAILURE;
  m->proxy = proxy;
  m->bus = g_dbus_proxy_get_connection (G_DBUS_PROXY (proxy));
  rc = parse_compare (m, proxy, compare);
  if (rc == EXIT_SUCCESS)
    rc = measure (m, proxy, source);
  measure_clear (m, proxy);
  return rc;
}
