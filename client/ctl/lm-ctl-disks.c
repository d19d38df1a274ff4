/* lm-ctl-disks.c: laptop-modectl disks and monitor (the old dslm).
 * Owns how disks, their power state and time asleep are shown; disk names,
 * models and errors come from the hardware and are printed escaped. */
#include "config.h"

#include <glib-unix.h>
#include <stdio.h>
#include <stdlib.h>

#include "lm-ctl.h"

static char *
format_duration (guint64 s)
{
  if (s >= 3600)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " h %02" G_GUINT64_FORMAT " min", s / 3600,
                            (s % 3600) / 60);
  if (s >= 60)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " min %02" G_GUINT64_FORMAT " s", s / 60, s % 60);
  return g_strdup_printf ("%" G_GUINT64_FORMAT " s", s);
}

/* The daemon counts up to CountedUntil (Since, from a daemon that did not
 * say); the current state has lasted since then. */
static void
disk_times (GVariant *disk, guint64 *active, guint64 *standby)
{
  gint64 since = 0;
  gboolean asleep = FALSE;

  *active = *standby = 0;
  g_variant_lookup (disk, "ActiveSeconds", "t", active);
  g_variant_lookup (disk, "StandbySeconds", "t", standby);
  if (!g_variant_lookup (disk, "CountedUntil", "x", &since))
    g_variant_lookup (disk, "Since", "x", &since);
  g_variant_lookup (disk, "Asleep", "b", &asleep);
  gint64 extra = MAX (0, g_get_real_time () - since) / G_USEC_PER_SEC;
  if (since > 0)
    *(asleep ? standby : active) += (guint64) extra;
}

/* Escaped: State is the daemon's word, but it reaches the terminal. */
static char *
disk_state_text (GVariant *disk)
{
  const char *state = "unknown";
  gboolean asleep = FALSE, inferred = FALSE, excluded = FALSE;

  g_variant_lookup (disk, "State", "&s", &state);
  g_variant_lookup (disk, "Asleep", "b", &asleep);
  g_variant_lookup (disk, "Inferred", "b", &inferred);
  g_variant_lookup (disk, "Excluded", "b", &excluded);
  if (excluded)
    return g_strdup ("excluded");
  g_autofree char *safe = lm_ctl_safe (state);
  if (inferred)
    return g_strdup_printf ("%s (%s)", safe, asleep ? "quiet" : "busy");
  return g_steal_pointer (&safe);
}

static GVariant *
get_disks (LmExportedLaptopMode *proxy)
{
  GVariant *disks = lm_exported_laptop_mode_get_disks (proxy);

  if (disks == NULL || !g_variant_is_of_type (disks, G_VARIANT_TYPE ("a{sa{sv}}")))
    return NULL;
  return disks;
}

/* One line of what the hardware's own power settings are now (issue 18):
 * link policy, runtime PM of the disk and its controller, NVMe tolerance.
 * Every value is sysfs text, so it is printed escaped. */
static void
print_hw_power (GVariant *d)
{
  static const struct
  {
    const char *key, *label;
  } fields[] = {
    { "SataHost", "host" },
    { "LinkPolicy", "link" },
    { "RuntimePM", "runtime-pm" },
    { "AutosuspendMs", "autosuspend-ms" },
    { "Controller", "controller" },
    { "ControllerRuntimePM", "controller-runtime-pm" },
    { "NvmeLatencyToleranceUs", "nvme-latency-us" },
  };
  g_autoptr (GString) line = g_string_new (NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      const char *v = NULL;
      if (!g_variant_lookup (d, fields[i].key, "&s", &v))
        continue;
      g_autofree char *safe = lm_ctl_safe (v);
      g_string_append_printf (line, "%s%s=%s", line->len ? " " : "", fields[i].label, safe);
    }
  if (line->len > 0)
    g_print ("           power: %s\n", line->str);
}

/* NVMe: where the controller is, its power states and where APST takes
 * each one, and the state last read (the daemon reads only while awake). */
static void
print_nvme (GVariant *d)
{
  const char *controller = NULL, *error = NULL;
  g_autoptr (GVariant) states = NULL, table = NULL;
  gboolean apst = FALSE, apst_supported = FALSE;
  guint32 current = 0;
  gint64 read = 0;

  if (!g_variant_lookup (d, "NvmeController", "&s", &controller))
    return;
  g_autofree char *safe = lm_ctl_safe (controller);
  g_autoptr (GString) line = g_string_new (NULL);
  g_string_append_printf (line, "           nvme: %s", safe);
  if (g_variant_lookup (d, "NvmePowerState", "u", &current)
      && g_variant_lookup (d, "NvmePowerStateRead", "x", &read))
    {
      g_autoptr (GDateTime) when = g_date_time_new_from_unix_local (read / G_USEC_PER_SEC);
      g_autofree char *clock = when != NULL ? g_date_time_format (when, "%F %T") : g_strdup ("?");
      g_string_append_printf (line, ", power state %u (read %s)", current, clock);
    }
  g_variant_lookup (d, "NvmeApstSupported", "b", &apst_supported);
  g_variant_lookup (d, "NvmePowerStates", "@aa{sv}", &states);
  if (g_variant_lookup (d, "NvmeApst", "b", &apst))
    g_string_append_printf (line, ", APST %s", apst ? "on" : "off");
  else if (states != NULL)
    g_string_append (line, apst_supported ? ", APST unread" : ", no APST");
  g_print ("%s\n", line->str);
  if (g_variant_lookup (d, "NvmeError", "&s", &error))
    {
      g_autofree char *safe_error = lm_ctl_safe (error);
      g_print ("           nvme error: %s\n", safe_error);
    }
  if (states == NULL)
    return;
  g_variant_lookup (d, "NvmeApstTable", "@a(uu)", &table);
  for (gsize i = 0; i < g_variant_n_children (states); i++)
    {
      g_autoptr (GVariant) ps = g_variant_get_child_value (states, i);
      guint32 index = (guint32) i, entry = 0, exit = 0;
      double watts = 0;
      gboolean operational = TRUE;
      g_variant_lookup (ps, "State", "u", &index);
      g_variant_lookup (ps, "MaxPowerW", "d", &watts);
      g_variant_lookup (ps, "EntryLatencyUs", "u", &entry);
      g_variant_lookup (ps, "ExitLatencyUs", "u", &exit);
      g_variant_lookup (ps, "Operational", "b", &operational);
      g_print ("           ps%-2u %9.4g W  %-15s  entry %7u µs  exit %7u µs", index, watts,
               operational ? "operational" : "non-operational", entry, exit);
      if (table != NULL && i < g_variant_n_children (table))
        {
          guint32 idle_ms, target;
          g_variant_get_child (table, i, "(uu)", &idle_ms, &target);
          if (idle_ms > 0)
            g_print ("  → ps%u after %u ms idle", target, idle_ms);
        }
      g_print ("%s\n", index == current && read != 0 ? "  (current)" : "");
    }
}

/* A spinning disk's SMART wear, and the projection against its rating. */
static void
print_wear (GVariant *d)
{
  guint32 cycles, rating = 0;
  double per_day, days_left;
  gboolean warning = FALSE;
  gint64 span = 0;

  if (!g_variant_lookup (d, "LoadCycles", "u", &cycles))
    return;
  g_variant_lookup (d, "LoadCycleRating", "u", &rating);
  g_print ("           wear: load cycles %u", cycles);
  if (g_variant_lookup (d, "LoadCyclesPerDay", "d", &per_day))
    {
      g_variant_lookup (d, "LoadCycleSpanSeconds", "x", &span);
      g_print (", %.1f/day over %.1f days (SMART 193)", per_day, span / 86400.0);
      if (g_variant_lookup (d, "LoadCycleDaysLeft", "d", &days_left))
        g_print (", rating %u in %.0f days", rating, days_left);
      g_variant_lookup (d, "LoadCycleWarning", "b", &warning);
    }
  else
    g_print (" (rating %u; a rate needs readings a day apart)", rating);
  g_print ("\n");
  if (warning)
    g_print ("           parks often: a higher APM level (DiskSettings APM, e.g. 254) or a "
             "longer firmware idle timer would help\n");
}

static void
print_disk (const char *name, GVariant *d)
{
  const char *model = "", *error = NULL;
  guint32 spinups = 0;
  double per_hour = 0;
  guint64 active, standby;

  g_variant_lookup (d, "Model", "&s", &model);
  g_variant_lookup (d, "SpinUps", "u", &spinups);
  g_variant_lookup (d, "SpinUpsPerHour", "d", &per_hour);
  g_variant_lookup (d, "Error", "&s", &error);
  disk_times (d, &active, &standby);
  g_autofree char *state = disk_state_text (d);
  g_autofree char *a = format_duration (active);
  g_autofree char *s = format_duration (standby);
  g_autofree char *safe_name = lm_ctl_safe (name);
  g_autofree char *safe_model = lm_ctl_safe (*model ? model : "-");
  /* Cut by characters, not bytes: "%-24.24s" could split a UTF-8 sequence. */
  g_autofree char *fitted = lm_ctl_fit (safe_model, 24);
  int pad = 24 - (int) g_utf8_strlen (fitted, -1);
  g_print ("%-10s %s%*s %-16s %14s %14s %8u %8.1f\n", safe_name, fitted, MAX (pad, 0), "", state, a,
           s, spinups, per_hour);
  if (error != NULL)
    {
      g_autofree char *safe_error = lm_ctl_safe (error);
      g_print ("           error: %s\n", safe_error);
    }
  print_hw_power (d);
  print_nvme (d);
  print_wear (d);
}

int
lm_ctl_disks (int argc, char **argv)
{
  gboolean json = FALSE;
  const GOptionEntry entries[]
      = { { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print machine-readable JSON", NULL },
          { NULL } };

  if (!lm_ctl_parse_options (&argc, &argv, NULL,
                             "Show the disks, their power state, time active and in standby, "
                             "and spin-ups.\nState is “unknown” for disks that take no ATA "
                             "commands (NVMe, virtio, loop); their time is inferred from I/O "
                             "activity.",
                             entries))
    return LM_CTL_EXIT_USAGE;
  if (argc > 1)
    return lm_ctl_no_arguments (argc, argv);

  g_autoptr (LmExportedLaptopMode) p = lm_ctl_get_proxy ();
  if (p == NULL)
    return EXIT_FAILURE;
  GVariant *disks = get_disks (p);
  if (disks == NULL)
    {
      g_printerr ("%s: laptop-moded did not answer with its Disks property\n", lm_ctl_prog);
      return EXIT_FAILURE;
    }
  if (json)
    {
      lm_ctl_print_variant_json (disks);
      return EXIT_SUCCESS;
    }

  GVariantIter iter;
  const char *name;
  GVariant *disk;
  g_print ("%-10s %-24s %-16s %14s %14s %8s %8s\n", "DISK", "MODEL", "STATE", "ACTIVE", "STANDBY",
           "SPIN-UPS", "PER HOUR");
  g_variant_iter_init (&iter, disks);
  while (g_variant_iter_next (&iter, "{&s@a{sv}}", &name, &disk))
    {
      g_autoptr (GVariant) d = disk;
      print_disk (name, d);
    }
  return EXIT_SUCCESS;
}

typedef struct
{
  GMainLoop *loop;
  char *disk;                /* escaped, for printing */
  char *name;                /* as the daemon spells it */
  gint64 start, last_change; /* µs since the epoch */
  gboolean asleep;
  char *state;
  guint64 active_us, standby_us;
  guint32 spinups_at_start, spinups;
  int status;
} LmMonitor;

static GVariant *
lookup_disk (LmExportedLaptopMode *proxy, const char *name)
{
  GVariant *disks = get_disks (proxy);
  return disks != NULL ? g_variant_lookup_value (disks, name, G_VARIANT_TYPE_VARDICT) : NULL;
}

static void
print_change (LmMonitor *m, const char *what, gint64 when, guint64 lasted_us)
{
  g_autoptr (GDateTime) dt = g_date_time_new_from_unix_local (when / G_USEC_PER_SEC);
  g_autofree char *clock = dt != NULL ? g_date_time_format (dt, "%T") : g_strdup ("?");
  g_autofree char *lasted = format_duration (lasted_us / G_USEC_PER_SEC);

  g_print ("%s  %s  %s (after %s)\n", clock, m->disk, what, lasted);
  fflush (stdout);
}

static void
on_disks_changed (GDBusProxy *proxy, GVariant *changed, GStrv invalidated, gpointer user_data)
{
  LmMonitor *m = user_data;
  g_autoptr (GVariant) disk = NULL;
  gboolean asleep = FALSE;
  gint64 since = 0;

  g_autoptr (GVariant) disks = g_variant_lookup_value (changed, "Disks", NULL);

  if (disks == NULL)
    return;
  disk = lookup_disk (LM_EXPORTED_LAPTOP_MODE (proxy), m->name);
  if (disk == NULL)
    {
      g_printerr ("%s: %s is gone\n", lm_ctl_prog, m->disk);
      g_main_loop_quit (m->loop);
      return;
    }
  g_autofree char *state = disk_state_text (disk);
  g_variant_lookup (disk, "Asleep", "b", &asleep);
  g_variant_lookup (disk, "Since", "x", &since);
  g_variant_lookup (disk, "SpinUps", "u", &m->spinups);
  if (asleep == m->asleep && g_str_equal (state, m->state))
    return;
  gint64 when = MAX (since, m->last_change);
  if (asleep != m->asleep)
    {
      guint64 lasted = (guint64) (when - m->last_change);
      *(m->asleep ? &m->standby_us : &m->active_us) += lasted;
      print_change (m, state, when, lasted);
      m->last_change = when;
      m->asleep = asleep;
    }
  else
    {
      print_change (m, state, g_get_real_time (), (guint64) (g_get_real_time () - m->last_change));
    }
  g_free (m->state);
  m->state = g_steal_pointer (&state);
}

static gboolean
on_monitor_quit (gpointer user_data)
{
  LmMonitor *m = user_data;

  /* Kept: lm_ctl_monitor removes it after the loop. */
  g_main_loop_quit (m->loop);
  return G_SOURCE_CONTINUE;
}

static void
print_monitor_summary (LmMonitor *m)
{
  gint64 now = g_get_real_time ();
  guint64 total;

  *(m->asleep ? &m->standby_us : &m->active_us) += (guint64) MAX (0, now - m->last_change);
  total = m->active_us + m->standby_us;
  g_autofree char *t = format_duration (total / G_USEC_PER_SEC);
  g_autofree char *a = format_duration (m->active_us / G_USEC_PER_SEC);
  g_autofree char *s = format_duration (m->standby_us / G_USEC_PER_SEC);
  double pa = total > 0 ? 100.0 * (double) m->active_us / (double) total : 0.0;
  g_print ("\n%s monitored for %s: active %s (%.1f %%), standby %s (%.1f %%), %u spin-ups\n",
           m->disk, t, a, pa, s, total > 0 ? 100.0 - pa : 0.0, m->spinups - m->spinups_at_start);
}

int
lm_ctl_monitor (int argc, char **argv)
{
  LmMonitor m = { 0 };

  if (!lm_ctl_parse_options (&argc, &argv, " DISK",
                             "Print DISK's power state changes as they happen (the old dslm), "
                             "and on Ctrl+C how long it was active and in standby.\nDISK is a "
                             "kernel name (sda) or its /dev path.",
                             NULL))
    return LM_CTL_EXIT_USAGE;
  if (argc != 2)
    return lm_ctl_usage_error ("%s", "monitor needs exactly one disk, e.g. “monitor sda”");

  g_autoptr (LmExportedLaptopMode) proxy = lm_ctl_get_proxy ();
  if (proxy == NULL)
    return EXIT_FAILURE;
  g_autofree char *disk_name = g_path_get_basename (argv[1]);
  g_autofree char *safe_name = lm_ctl_safe (disk_name);
  g_autoptr (GVariant) disk = lookup_disk (proxy, disk_name);
  if (disk == NULL)
    {
      g_printerr ("%s: laptop-moded lists no disk “%s”; see “%s disks”\n", lm_ctl_prog, safe_name,
                  lm_ctl_prog);
      return EXIT_FAILURE;
    }

  m.disk = safe_name;
  m.name = disk_name;
  m.start = m.last_change = g_get_real_time ();
  m.state = disk_state_text (disk);
  g_variant_lookup (disk, "Asleep", "b", &m.asleep);
  g_variant_lookup (disk, "SpinUps", "u", &m.spinups_at_start);
  m.spinups = m.spinups_at_start;
  m.loop = g_main_loop_new (NULL, FALSE);
  g_print ("Monitoring %s: %s; Ctrl+C prints a summary\n", safe_name, m.state);
  fflush (stdout);
  gulong handler
      = g_signal_connect (proxy, "g-properties-changed", G_CALLBACK (on_disks_changed), &m);
  guint sigint = g_unix_signal_add (SIGINT, on_monitor_quit, &m);
  guint sigterm = g_unix_signal_add (SIGTERM, on_monitor_quit, &m);
  g_main_loop_run (m.loop);
  g_source_remove (sigint);
  g_source_remove (sigterm);
  g_signal_handler_disconnect (proxy, handler);
  print_monitor_summary (&m);
  g_main_loop_unref (m.loop);
  g_free (m.state);
  return m.status;
}
