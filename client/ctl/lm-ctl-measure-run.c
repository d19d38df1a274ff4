/* lm-ctl-measure-run.c: measure's run: ABBA windows through the daemon's
 * own methods, the battery read while it lasts, and the setting put back
 * however the run ends (a signal, sleep, the charger, the daemon gone). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <glib-unix.h>

#include "lm-ctl-measure-private.h"
#include "lm-paths.h"

void
lm_measure_window_free (Window *w)
{
  g_array_unref (w->samples);
  g_free (w);
}

double
lm_measure_now_s (Measure *m)
{
  return (double) (g_get_monotonic_time () - m->t0) / G_USEC_PER_SEC;
}

/* --- the run ------------------------------------------------------------- */

static void add_sample (Measure *m, double value);

static void
display_changed (GDBusProxy *proxy, GVariant *changed, GStrv invalidated, gpointer user_data)
{
  Measure *m = user_data;
  double rate;

  /* UPower sends EnergyRate when it changes and UpdateTime at each
   * refresh: either is a reading at the battery's own rate. */
  if (g_variant_lookup (changed, "EnergyRate", "d", &rate))
    {
      m->last_rate = fabs (rate);
      m->have_rate = TRUE;
      add_sample (m, m->last_rate);
    }
  else if (g_variant_lookup (changed, "UpdateTime", "t", NULL) && m->have_rate)
    add_sample (m, m->last_rate);
}

static void
add_sample (Measure *m, double value)
{
  if (m->current == NULL)
    return;
  Sample s = { lm_measure_now_s (m), value, TRUE };
  g_array_append_val (m->current->samples, s);
}

static void finish (Measure *m, const char *why);

/* A battery that charges (or is full) has AC behind it: seen at the next
 * reading, before the daemon's OnBattery settles. */
static gboolean
sysfs_charging (Measure *m)
{
  for (guint i = 0; i < m->batteries->len; i++)
    {
      g_autofree char *status = lm_measure_read_supply (m->batteries->pdata[i], "status");
      if (g_strcmp0 (status, "Charging") == 0 || g_strcmp0 (status, "Full") == 0)
        return TRUE;
    }
  return FALSE;
}

static gboolean
sample_tick (gpointer user_data)
{
  Measure *m = user_data;
  double v;

  if (sysfs_charging (m))
    {
      finish (m, "ac");
      return G_SOURCE_CONTINUE;
    }
  if (lm_measure_read_sysfs (m, &v))
    add_sample (m, v);
  return G_SOURCE_CONTINUE;
}

/* UPower's EnergyRate holds between readings: a time-weighted mean over
 * the kept part, counted only if a reading came after the switch. */
static void
window_close_upower (Window *w)
{
  GArray *s = w->samples;
  double value = NAN, area = 0;
  gboolean fresh = FALSE;
  double t = w->kept_from;

  for (guint i = 0; i < s->len; i++)
    {
      Sample *p = &g_array_index (s, Sample, i);
      fresh = fresh || p->fresh;
      if (p->t <= w->kept_from)
        {
          value = p->value;
          continue;
        }
      if (!isnan (value))
        area += value * (p->t - t);
      t = p->t;
      value = p->value;
    }
  if (!fresh || isnan (value))
    {
      w->dropped = "UPower gave no reading in it";
      return;
    }
  area += value * (w->end - t);
  w->watts = area / (w->end - w->kept_from);
  w->counted = TRUE;
}

/* Between the first and the last step seen in the kept part: the
 * battery's energy_now moves in steps, and only a step's moment is known
 * (to one reading interval). */
static void
window_close_energy_now (Window *w)
{
  GArray *s = w->samples;
  double t1 = NAN, e1 = 0, t2 = NAN, e2 = 0, prev = NAN;

  for (guint i = 0; i < s->len; i++)
    {
      Sample *p = &g_array_index (s, Sample, i);
      if (p->t < w->kept_from)
        continue;
      if (!isnan (prev) && p->value != prev)
        {
          if (isnan (t1))
            t1 = p->t, e1 = p->value;
          t2 = p->t, e2 = p->value;
        }
      prev = p->value;
    }
  if (isnan (t1) || t2 <= t1)
    {
      w->dropped = "energy_now did not step twice in it (use longer windows)";
      return;
    }
  w->watts = (e1 - e2) * 3600.0 / 1e6 / (t2 - t1);
  w->counted = TRUE;
}

/* Watts read directly (power_now, current × voltage): their mean. */
static void
window_close_mean (Window *w)
{
  GArray *s = w->samples;
  double sum = 0;
  guint n = 0;

  for (guint i = 0; i < s->len; i++)
    {
      Sample *p = &g_array_index (s, Sample, i);
      if (p->t >= w->kept_from)
        sum += p->value, n++;
    }
  if (n == 0)
    {
      w->dropped = "no reading in it";
      return;
    }
  w->watts = sum / n;
  w->counted = TRUE;
}

/* The window's watts from its kept part, or why it has none. */
static void
window_close (Measure *m, Window *w)
{
  w->counted = FALSE;
  if (w->end - w->kept_from <= 0)
    w->dropped = "ended before its first part was over";
  else if (m->source == SOURCE_UPOWER)
    window_close_upower (w);
  else if (m->source == SOURCE_ENERGY_NOW)
    window_close_energy_now (w);
  else
    window_close_mean (w);
}

/* ABBA BAAB…: window i's arm; balanced against a steady drift. */
static guint
arm_of (guint i)
{
  return ((i + 1) / 2) % 2;
}

static gboolean
apply_arm (Measure *m, guint arm, GError **error)
{
  g_autoptr (GVariant) r = NULL;

  if (m->compare_key == NULL)
    r = lm_ctl_call (m->proxy, "SetMode", g_variant_new ("(s)", arm == 0 ? "on" : "off"), error);
  else
    {
      g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
      /* An override, never the config file: whatever ends this process
       * (SIGKILL, a crash, an empty battery), the daemon drops it when
       * the connection closes. */
      g_variant_builder_add (&b, "{sv}", m->compare_key,
                             arm == 0 ? m->compare_value : m->compare_original);
      r = lm_ctl_call (m->proxy, "Override", g_variant_new ("(a{sv})", &b), error);
    }
  m->changed = m->changed || r != NULL;
  return r != NULL;
}

static void
progress (Measure *m)
{
  if (!m->tty || m->ended != NULL)
    return;
  double total = m->window_s * m->windows, t = lm_measure_now_s (m);
  guint width = 30, filled = (guint) MIN (width, width * t / total);
  g_autofree char *bar = g_strnfill (filled, '#');
  g_autofree char *rest = g_strnfill (width - filled, '.');
  guint left = (guint) MAX (0, total - t);

  fprintf (stderr, "\r[%s%s] window %u/%u (%s), %u:%02u left ", bar, rest, m->index + 1, m->windows,
           m->arm_names[arm_of (m->index)], left / 60, left % 60);
  fflush (stderr);
}

static gboolean
progress_tick (gpointer user_data)
{
  progress (user_data);
  return G_SOURCE_CONTINUE;
}

static gboolean
window_start (Measure *m)
{
  g_autoptr (GError) error = NULL;
  guint arm = arm_of (m->index);

  if (!apply_arm (m, arm, &error))
    {
      m->error = g_steal_pointer (&error);
      finish (m, "error");
      return FALSE;
    }
  Window *w = g_new0 (Window, 1);
  w->arm = arm;
  w->start = lm_measure_now_s (m);
  w->kept_from = w->start + m->discard_s;
  w->samples = g_array_new (FALSE, FALSE, sizeof (Sample));
  /* The reading in force carries over; it is not this arm's until a new
   * one comes (UPower), and the discarded part covers the change. */
  if (m->source == SOURCE_UPOWER && m->have_rate)
    {
      Sample s = { w->start, m->last_rate, FALSE };
      g_array_append_val (w->samples, s);
    }
  m->current = w;
  if (m->source != SOURCE_UPOWER)
    sample_tick (m);
  progress (m);
  return TRUE;
}

static gboolean
window_tick (gpointer user_data)
{
  Measure *m = user_data;
  Window *w = m->current;

  w->end = lm_measure_now_s (m);
  window_close (m, w);
  /* Laptop mode held off (an Inhibit, a low battery): not this arm. */
  g_autoptr (GVariant) active
      = g_dbus_proxy_get_cached_property (G_DBUS_PROXY (m->proxy), "Active");
  gboolean want = m->compare_key != NULL || w->arm == 0;
  if (active != NULL && g_variant_get_boolean (active) != want)
    {
      w->counted = FALSE;
      w->dropped = "laptop mode was not as this arm wants (held off?)";
    }
  g_ptr_array_add (m->done, g_steal_pointer (&m->current));
  m->index++;
  if (m->index >= m->windows)
    {
      m->window_id = 0;
      finish (m, "done");
      return G_SOURCE_REMOVE;
    }
  if (!window_start (m))
    {
      m->window_id = 0;
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

static gboolean
on_signal (gpointer user_data)
{
  finish (user_data, "interrupted");
  return G_SOURCE_CONTINUE;
}

static void
daemon_changed (GDBusProxy *proxy, GVariant *changed, GStrv invalidated, gpointer user_data)
{
  gboolean on_battery;

  if (g_variant_lookup (changed, "OnBattery", "b", &on_battery) && !on_battery)
    finish (user_data, "ac");
}

static void
bus_signal (GDBusConnection *bus, const char *sender, const char *path, const char *iface,
            const char *member, GVariant *params, gpointer user_data)
{
  Measure *m = user_data;

  if (g_str_equal (member, "PrepareForSleep"))
    {
      gboolean start;
      g_variant_get (params, "(b)", &start);
      if (start)
        finish (m, "suspend");
      return;
    }
  /* PropertiesChanged of UPower (OnBattery, LidIsClosed) or logind
   * (LidClosed). */
  g_autoptr (GVariant) changed = g_variant_get_child_value (params, 1);
  gboolean b;
  if (g_variant_lookup (changed, "OnBattery", "b", &b) && !b)
    finish (m, "ac");
  else if ((g_variant_lookup (changed, "LidIsClosed", "b", &b)
            || g_variant_lookup (changed, "LidClosed", "b", &b))
           && b)
    finish (m, "lid");
}

static void
restore (Measure *m)
{
  g_autoptr (GError) error = NULL;

  if (!m->changed)
    return;
  if (m->compare_key != NULL)
    {
      /* Cleared now; were this refused, it ends with the connection. */
      g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
      g_autoptr (GVariant) r
          = lm_ctl_call (m->proxy, "Override", g_variant_new ("(a{sv})", &b), &error);
      if (r == NULL)
        lm_ctl_print_error ("could not clear the override (it ends when this command exits)",
                            error);
      g_clear_error (&error);
    }
  g_autoptr (GVariant) r
      = lm_ctl_call (m->proxy, "SetMode", g_variant_new ("(s)", m->original_mode), &error);
  if (r == NULL)
    lm_ctl_print_error ("could not put the mode back", error);
}

static void
finish (Measure *m, const char *why)
{
  if (m->ended != NULL)
    return;
  m->ended = why;
  if (m->current != NULL)
    {
      m->current->end = lm_measure_now_s (m);
      window_close (m, m->current);
      g_ptr_array_add (m->done, g_steal_pointer (&m->current));
    }
  g_clear_handle_id (&m->window_id, g_source_remove);
  g_clear_handle_id (&m->sample_id, g_source_remove);
  g_clear_handle_id (&m->progress_id, g_source_remove);
  if (m->display != NULL)
    g_signal_handlers_disconnect_by_data (m->display, m);
  if (m->tty)
    fprintf (stderr, "\r%*s\r", 78, "");
  /* The battery's energy before anything else changes. */
  m->battery_wh = lm_measure_battery_wh (m);
  restore (m);
  g_main_loop_quit (m->loop);
}

/* The unique name that owns @name now, or NULL. Signals are matched on
 * it: on a GLib without the fix for CVE-2024-34397 a match on the
 * well-known name also took signals any connection sent "from" it. */
static char *
owner_of (GDBusConnection *bus, const char *name)
{
  g_autoptr (GVariant) r = g_dbus_connection_call_sync (
      bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
      g_variant_new ("(s)", name), G_VARIANT_TYPE ("(s)"), G_DBUS_CALL_FLAGS_NONE, 5000, NULL,
      NULL);
  char *owner = NULL;

  if (r != NULL)
    g_variant_get (r, "(s)", &owner);
  return owner;
}

/* Watches what may end the run (signals, the daemon, logind, UPower), then
 * runs the windows until the last one closes or something ends the run.
 * FALSE when laptop mode could not be turned on for --compare (said). */
gboolean
lm_measure_run (Measure *m, LmExportedLaptopMode *proxy)
{
  g_autoptr (GError) error = NULL;

  m->loop = g_main_loop_new (NULL, FALSE);
  m->done = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_measure_window_free);
  m->tty = isatty (STDERR_FILENO) && !m->json;
  m->signal_ids[0] = g_unix_signal_add (SIGINT, on_signal, m);
  m->signal_ids[1] = g_unix_signal_add (SIGTERM, on_signal, m);
  m->signal_ids[2] = g_unix_signal_add (SIGHUP, on_signal, m);
  m->props_handler
      = g_signal_connect (proxy, "g-properties-changed", G_CALLBACK (daemon_changed), m);
  /* Nobody owning a name now: nothing to hear from it in this run. */
  g_autofree char *logind = owner_of (m->bus, LOGIND_NAME);
  g_autofree char *upower = owner_of (m->bus, UPOWER_NAME);
  if (logind != NULL)
    {
      m->bus_subs[0] = g_dbus_connection_signal_subscribe (
          m->bus, logind, "org.freedesktop.login1.Manager", "PrepareForSleep", LOGIND_PATH, NULL,
          G_DBUS_SIGNAL_FLAGS_NONE, bus_signal, m, NULL);
      m->bus_subs[1] = g_dbus_connection_signal_subscribe (
          m->bus, logind, "org.freedesktop.DBus.Properties", "PropertiesChanged", LOGIND_PATH,
          "org.freedesktop.login1.Manager", G_DBUS_SIGNAL_FLAGS_NONE, bus_signal, m, NULL);
    }
  if (upower != NULL)
    m->bus_subs[2] = g_dbus_connection_signal_subscribe (
        m->bus, upower, "org.freedesktop.DBus.Properties", "PropertiesChanged", UPOWER_PATH,
        "org.freedesktop.UPower", G_DBUS_SIGNAL_FLAGS_NONE, bus_signal, m, NULL);
  if (m->source == SOURCE_UPOWER)
    {
      g_autoptr (GVariant) rate = g_dbus_proxy_get_cached_property (m->display, "EnergyRate");
      m->last_rate = fabs (g_variant_get_double (rate));
      m->have_rate = TRUE;
      g_signal_connect (m->display, "g-properties-changed", G_CALLBACK (display_changed), m);
    }

  /* With --compare laptop mode stays on: the settings it compares apply
   * only while it is. */
  if (m->compare_key != NULL)
    {
      g_autoptr (GVariant) r = lm_ctl_call (proxy, "SetMode", g_variant_new ("(s)", "on"), &error);
      if (r == NULL)
        {
          lm_ctl_print_error ("could not turn laptop mode on", error);
          return FALSE;
        }
      m->changed = TRUE;
    }
  m->t0 = g_get_monotonic_time ();
  /* A first window that cannot start (its error below), or a battery
   * charging already, has finished the run: the loop has nothing to wait
   * for. */
  if (window_start (m) && m->ended == NULL)
    {
      m->window_id = g_timeout_add ((guint) (m->window_s * 1000), window_tick, m);
      if (m->source != SOURCE_UPOWER)
        m->sample_id = g_timeout_add ((guint) (m->interval_s * 1000), sample_tick, m);
      if (m->tty)
        m->progress_id = g_timeout_add_seconds (1, progress_tick, m);
      g_main_loop_run (m->loop);
    }
  return TRUE;
}
