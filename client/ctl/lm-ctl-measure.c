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

#include "lm-ctl.h"
#include "lm-paths.h"

#define UPOWER_NAME "org.freedesktop.UPower"
#define UPOWER_PATH "/org/freedesktop/UPower"
#define UPOWER_DISPLAY "/org/freedesktop/UPower/devices/DisplayDevice"
#define LOGIND_NAME "org.freedesktop.login1"
#define LOGIND_PATH "/org/freedesktop/login1"

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

typedef enum
{
  SOURCE_UPOWER,
  SOURCE_POWER_NOW,
  SOURCE_CURRENT_VOLTAGE,
  SOURCE_ENERGY_NOW,
} Source;

static const char *const source_names[] = {
  [SOURCE_UPOWER] = "UPower EnergyRate",
  [SOURCE_POWER_NOW] = "sysfs power_now",
  [SOURCE_CURRENT_VOLTAGE] = "sysfs current_now × voltage_now",
  [SOURCE_ENERGY_NOW] = "sysfs energy_now differences",
};

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

static void window_free (Window *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Window, window_free)

static void
window_free (Window *w)
{
  g_array_unref (w->samples);
  g_free (w);
}

static double
now_s (Measure *m)
{
  return (double) (g_get_monotonic_time () - m->t0) / G_USEC_PER_SEC;
}

/* --- statistics ---------------------------------------------------------- */

/* Student's t, two-sided 95 %, for @df degrees of freedom (fractional for
 * Welch's), interpolated in 1/df between the table's rows. */
double
lm_ctl_measure_t95 (double df)
{
  static const struct
  {
    double df, t;
  } table[] = {
    { 1, 12.706 }, { 2, 4.303 },  { 3, 3.182 },  { 4, 2.776 },  { 5, 2.571 },  { 6, 2.447 },
    { 7, 2.365 },  { 8, 2.306 },  { 9, 2.262 },  { 10, 2.228 }, { 12, 2.179 }, { 15, 2.131 },
    { 20, 2.086 }, { 25, 2.060 }, { 30, 2.042 }, { 40, 2.021 }, { 60, 2.000 }, { 120, 1.980 },
  };

  if (!(df >= 1.0))
    return table[0].t;
  for (gsize i = 1; i < G_N_ELEMENTS (table); i++)
    if (df <= table[i].df)
      {
        double x0 = 1.0 / table[i - 1].df, x1 = 1.0 / table[i].df, x = 1.0 / df;
        return table[i].t + (table[i - 1].t - table[i].t) * (x - x1) / (x0 - x1);
      }
  /* Past 120: towards the normal's 1.960 at infinity. */
  return 1.960 + (1.980 - 1.960) * 120.0 / df;
}

static void
arm_stats (const double *x, guint n, LmCtlMeasureArm *a)
{
  *a = (LmCtlMeasureArm){ n, 0, 0, NAN };
  for (guint i = 0; i < n; i++)
    a->mean += x[i] / n;
  if (n < 2)
    return;
  for (guint i = 0; i < n; i++)
    a->var += (x[i] - a->mean) * (x[i] - a->mean) / (n - 1);
  a->half = lm_ctl_measure_t95 (n - 1) * sqrt (a->var / n);
}

/* Each arm's mean of its window means with a t interval, and B − A with
 * Welch's (the arms' variances need not be equal). Measurable only when
 * that interval excludes zero; pure, for tests/test-ctl-measure.c. */
void
lm_ctl_measure_compare (const double *a, guint na, const double *b, guint nb,
                        LmCtlMeasureStats *out)
{
  arm_stats (a, na, &out->a);
  arm_stats (b, nb, &out->b);
  out->diff = out->b.mean - out->a.mean;
  out->half = NAN;
  out->measurable = FALSE;
  if (na < 2 || nb < 2)
    return;
  double va = out->a.var / na, vb = out->b.var / nb, se = sqrt (va + vb);
  double df = se > 0 ? (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1))
                     : (double) (na + nb - 2);
  out->half = lm_ctl_measure_t95 (df) * se;
  out->measurable = fabs (out->diff) > out->half;
}

/* --- the battery ------------------------------------------------------- */

static char *
read_supply (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  return g_strstrip (text);
}

static gboolean
read_number (const char *dir, const char *name, double *out)
{
  g_autofree char *text = read_supply (dir, name);
  char *end;

  if (text == NULL || *text == '\0')
    return FALSE;
  double v = g_ascii_strtod (text, &end);
  if (*end != '\0')
    return FALSE;
  *out = v;
  return TRUE;
}

/* The system's batteries (scope other than "Device": not a mouse's), and
 * the best reading all of them give. */
static gboolean
probe_sysfs (Measure *m, GError **error)
{
  g_autofree char *class_dir = lm_path ("/sys/class/power_supply");
  g_autoptr (GDir) dir = g_dir_open (class_dir, 0, NULL);
  const char *name;
  gboolean power = TRUE, current = TRUE, energy = TRUE;

  m->batteries = g_ptr_array_new_with_free_func (g_free);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *supply = g_build_filename (class_dir, name, NULL);
      g_autofree char *type = read_supply (supply, "type");
      g_autofree char *scope = read_supply (supply, "scope");
      double v;

      if (g_strcmp0 (type, "Battery") != 0 || g_strcmp0 (scope, "Device") == 0)
        continue;
      power = power && read_number (supply, "power_now", &v);
      current = current && read_number (supply, "current_now", &v)
                && read_number (supply, "voltage_now", &v);
      energy = energy && read_number (supply, "energy_now", &v);
      g_ptr_array_add (m->batteries, g_steal_pointer (&supply));
    }
  if (m->batteries->len == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "no battery in %s and no UPower on the bus: nothing to measure with", class_dir);
      return FALSE;
    }
  if (power)
    m->source = SOURCE_POWER_NOW;
  else if (current)
    m->source = SOURCE_CURRENT_VOLTAGE;
  else if (energy)
    m->source = SOURCE_ENERGY_NOW;
  else
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "the batteries in %s report neither power_now, current_now and "
                   "voltage_now, nor energy_now",
                   class_dir);
      return FALSE;
    }
  return TRUE;
}

/* Now, summed over the batteries: W (or µWh for energy_now). */
static gboolean
read_sysfs (Measure *m, double *out)
{
  double sum = 0;

  for (guint i = 0; i < m->batteries->len; i++)
    {
      const char *dir = m->batteries->pdata[i];
      double a, b;

      switch (m->source)
        {
          case SOURCE_POWER_NOW:
            if (!read_number (dir, "power_now", &a))
              return FALSE;
            sum += fabs (a) / 1e6;
            break;
          case SOURCE_CURRENT_VOLTAGE:
            /* Some drivers sign the current: discharge is what it is. */
            if (!read_number (dir, "current_now", &a) || !read_number (dir, "voltage_now", &b))
              return FALSE;
            sum += fabs (a) / 1e6 * (b / 1e6);
            break;
          case SOURCE_ENERGY_NOW:
            if (!read_number (dir, "energy_now", &a))
              return FALSE;
            sum += a;
            break;
          case SOURCE_UPOWER:
          default:
            return FALSE;
        }
    }
  *out = sum;
  return TRUE;
}

/* The energy in the batteries now, Wh; 0 when unknown. */
static double
battery_wh (Measure *m)
{
  if (m->source == SOURCE_UPOWER)
    {
      g_autoptr (GVariant) v = g_dbus_proxy_get_cached_property (m->display, "Energy");
      return v != NULL && g_variant_is_of_type (v, G_VARIANT_TYPE_DOUBLE) ? g_variant_get_double (v)
                                                                          : 0;
    }
  double sum = 0;
  for (guint i = 0; i < m->batteries->len; i++)
    {
      double e, c, u;
      if (read_number (m->batteries->pdata[i], "energy_now", &e))
        sum += e / 1e6;
      else if (read_number (m->batteries->pdata[i], "charge_now", &c)
               && read_number (m->batteries->pdata[i], "voltage_now", &u))
        sum += c / 1e6 * (u / 1e6);
    }
  return sum;
}

static gboolean
upower_usable (Measure *m)
{
  g_autoptr (GVariant) owner = g_dbus_connection_call_sync (
      m->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
      "NameHasOwner", g_variant_new ("(s)", UPOWER_NAME), G_VARIANT_TYPE ("(b)"),
      G_DBUS_CALL_FLAGS_NONE, 5000, NULL, NULL);
  gboolean has = FALSE;

  if (owner != NULL)
    g_variant_get (owner, "(b)", &has);
  if (!has)
    return FALSE;
  m->display
      = g_dbus_proxy_new_sync (m->bus, G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START, NULL, UPOWER_NAME,
                               UPOWER_DISPLAY, "org.freedesktop.UPower.Device", NULL, NULL);
  if (m->display == NULL)
    return FALSE;
  g_autoptr (GVariant) present = g_dbus_proxy_get_cached_property (m->display, "IsPresent");
  g_autoptr (GVariant) rate = g_dbus_proxy_get_cached_property (m->display, "EnergyRate");
  if (present == NULL || !g_variant_get_boolean (present) || rate == NULL)
    {
      g_clear_object (&m->display);
      return FALSE;
    }
  return TRUE;
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
  Sample s = { now_s (m), value, TRUE };
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
      g_autofree char *status = read_supply (m->batteries->pdata[i], "status");
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
  if (read_sysfs (m, &v))
    add_sample (m, v);
  return G_SOURCE_CONTINUE;
}

/* The window's watts from its kept part, or why it has none. */
static void
window_close (Measure *m, Window *w)
{
  GArray *s = w->samples;

  w->counted = FALSE;
  if (w->end - w->kept_from <= 0)
    {
      w->dropped = "ended before its first part was over";
      return;
    }
  if (m->source == SOURCE_UPOWER)
    {
      /* EnergyRate holds between readings: a time-weighted mean over the
       * kept part, counted only if a reading came after the switch. */
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
      return;
    }
  if (m->source == SOURCE_ENERGY_NOW)
    {
      /* Between the first and the last step seen in the kept part: the
       * battery's energy_now moves in steps, and only a step's moment is
       * known (to one reading interval). */
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
      return;
    }
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
      g_variant_builder_add (&b, "{sv}", m->compare_key,
                             arm == 0 ? m->compare_value : m->compare_original);
      r = lm_ctl_call (m->proxy, "Configure", g_variant_new ("(a{sv})", &b), error);
    }
  m->changed = m->changed || r != NULL;
  return r != NULL;
}

static void
progress (Measure *m)
{
  if (!m->tty || m->ended != NULL)
    return;
  double total = m->window_s * m->windows, t = now_s (m);
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
  w->start = now_s (m);
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

  w->end = now_s (m);
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
      g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
      g_variant_builder_add (&b, "{sv}", m->compare_key, m->compare_original);
      g_autoptr (GVariant) r
          = lm_ctl_call (m->proxy, "Configure", g_variant_new ("(a{sv})", &b), &error);
      if (r == NULL)
        lm_ctl_print_error ("could not put the setting back", error);
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
      m->current->end = now_s (m);
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
  m->battery_wh = battery_wh (m);
  restore (m);
  g_main_loop_quit (m->loop);
}

/* --- the result ---------------------------------------------------------- */

static GVariant *
result_of (Measure *m)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr (GArray) xa = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) xb = g_array_new (FALSE, FALSE, sizeof (double));
  GArray *xs[2] = { xa, xb };
  double minutes = 0;

  for (guint i = 0; i < m->done->len; i++)
    {
      Window *w = m->done->pdata[i];
      minutes += (w->end - w->start) / 60.0;
      if (w->counted)
        g_array_append_val (xs[w->arm], w->watts);
    }
  LmCtlMeasureStats st;
  lm_ctl_measure_compare ((double *) xs[0]->data, xs[0]->len, (double *) xs[1]->data, xs[1]->len,
                          &st);
  const LmCtlMeasureArm *a = &st.a, *bb = &st.b;
  double diff = st.diff, half = st.half;
  gboolean measurable = st.measurable;

  g_variant_builder_add (&b, "{sv}", "Time", g_variant_new_int64 (g_get_real_time ()));
  g_variant_builder_add (&b, "{sv}", "Setting",
                         g_variant_new_string (m->compare_key ? m->compare_key : "LaptopMode"));
  g_variant_builder_add (&b, "{sv}", "ArmA", g_variant_new_string (m->arm_names[0]));
  g_variant_builder_add (&b, "{sv}", "ArmB", g_variant_new_string (m->arm_names[1]));
  g_variant_builder_add (&b, "{sv}", "Source", g_variant_new_string (source_names[m->source]));
  g_variant_builder_add (&b, "{sv}", "WindowSeconds", g_variant_new_double (m->window_s));
  g_variant_builder_add (&b, "{sv}", "DiscardSeconds", g_variant_new_double (m->discard_s));
  g_variant_builder_add (&b, "{sv}", "Windows", g_variant_new_uint32 (m->done->len));
  g_variant_builder_add (&b, "{sv}", "WindowsA", g_variant_new_uint32 (a->n));
  g_variant_builder_add (&b, "{sv}", "WindowsB", g_variant_new_uint32 (bb->n));
  g_variant_builder_add (&b, "{sv}", "Minutes", g_variant_new_double (minutes));
  if (a->n > 0)
    g_variant_builder_add (&b, "{sv}", "MeanAW", g_variant_new_double (a->mean));
  if (bb->n > 0)
    g_variant_builder_add (&b, "{sv}", "MeanBW", g_variant_new_double (bb->mean));
  if (!isnan (a->half))
    g_variant_builder_add (&b, "{sv}", "IntervalAW", g_variant_new_double (a->half));
  if (!isnan (bb->half))
    g_variant_builder_add (&b, "{sv}", "IntervalBW", g_variant_new_double (bb->half));
  if (a->n > 0 && bb->n > 0)
    g_variant_builder_add (&b, "{sv}", "DifferenceW", g_variant_new_double (diff));
  if (!isnan (half))
    g_variant_builder_add (&b, "{sv}", "IntervalW", g_variant_new_double (half));
  g_variant_builder_add (&b, "{sv}", "Measurable", g_variant_new_boolean (measurable));
  g_variant_builder_add (&b, "{sv}", "Partial",
                         g_variant_new_boolean (!g_str_equal (m->ended, "done")));
  g_variant_builder_add (&b, "{sv}", "Ended", g_variant_new_string (m->ended));
  if (m->battery_wh > 0)
    g_variant_builder_add (&b, "{sv}", "BatteryWh", g_variant_new_double (m->battery_wh));
  if (measurable && m->battery_wh > 0 && a->mean > 0 && bb->mean > 0)
    g_variant_builder_add (
        &b, "{sv}", "BatteryMinutes",
        g_variant_new_double (60.0 * m->battery_wh * (1.0 / a->mean - 1.0 / bb->mean)));
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static const char *const ended_words[][2] = {
  { "interrupted", "interrupted (Ctrl-C)" },    { "ac", "AC power came" },
  { "suspend", "the laptop went to sleep" },    { "lid", "the lid was closed" },
  { "error", "a call to laptop-moded failed" },
};

static void
print_result (Measure *m, GVariant *r)
{
  double mean, half, diff, minutes, wh, mins = 0;
  gboolean measurable = FALSE, partial = FALSE;
  guint n;
  const char *ended = "done";
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *date = g_date_time_format (now, "%Y-%m-%d");

  g_variant_lookup (r, "Minutes", "d", &minutes);
  g_variant_lookup (r, "Measurable", "b", &measurable);
  g_variant_lookup (r, "Partial", "b", &partial);
  g_variant_lookup (r, "Ended", "&s", &ended);
  g_print ("Measured on this laptop on %s: %u windows of %g %s (%.1f min in all), from %s%s.\n",
           date, m->done->len, m->window_s >= 60 ? m->window_s / 60 : m->window_s,
           m->window_s >= 60 ? "min" : "s", minutes, source_names[m->source],
           partial ? "; PARTIAL" : "");
  if (partial)
    for (gsize i = 0; i < G_N_ELEMENTS (ended_words); i++)
      if (g_str_equal (ended, ended_words[i][0]))
        g_print ("Partial result: the run ended early: %s.\n", ended_words[i][1]);
  for (guint arm = 0; arm < 2; arm++)
    {
      const char *k_mean = arm == 0 ? "MeanAW" : "MeanBW";
      const char *k_half = arm == 0 ? "IntervalAW" : "IntervalBW";
      g_variant_lookup (r, arm == 0 ? "WindowsA" : "WindowsB", "u", &n);
      if (!g_variant_lookup (r, k_mean, "d", &mean))
        g_print ("  %-28s no window counted\n", m->arm_names[arm]);
      else if (g_variant_lookup (r, k_half, "d", &half))
        g_print ("  %-28s %6.2f W ± %.2f W (%u windows)\n", m->arm_names[arm], mean, half, n);
      else
        g_print ("  %-28s %6.2f W (%u window, no interval)\n", m->arm_names[arm], mean, n);
    }
  for (guint i = 0; i < m->done->len; i++)
    {
      Window *w = m->done->pdata[i];
      if (!w->counted)
        g_print ("  window %u (%s) not counted: %s\n", i + 1, m->arm_names[w->arm], w->dropped);
    }
  if (!measurable)
    {
      g_print ("No difference measurable in %.0f min; run longer", ceil (minutes));
      if (g_variant_lookup (r, "DifferenceW", "d", &diff)
          && g_variant_lookup (r, "IntervalW", "d", &half))
        g_print (" (the difference's 95 %% interval, %+.2f W to %+.2f W, includes zero)",
                 diff - half, diff + half);
      g_print (".\n");
      return;
    }
  g_variant_lookup (r, "DifferenceW", "d", &diff);
  g_variant_lookup (r, "IntervalW", "d", &half);
  gboolean have_mins = g_variant_lookup (r, "BatteryMinutes", "d", &mins);
  g_autofree char *subject = m->compare_key ? g_strdup (m->arm_names[0]) : g_strdup ("laptop mode");
  g_autofree char *against
      = m->compare_key ? g_strdup_printf (" compared with %s", m->arm_names[1]) : g_strdup ("");
  g_print ("%c%s %s %.2f W ± %.2f W (95 %% interval)%s", g_ascii_toupper (subject[0]), subject + 1,
           diff > 0 ? "saves" : "costs", fabs (diff), half, against);
  if (have_mins && g_variant_lookup (r, "BatteryWh", "d", &wh))
    g_print (", about %.0f min %s of this battery (%.1f Wh now)", fabs (mins),
             diff > 0 ? "more" : "less", wh);
  g_print (".\n");
}

static gboolean
save_result (Measure *m, GVariant *r)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply
      = lm_ctl_call (m->proxy, "SaveMeasurement", g_variant_new ("(@a{sv})", r), &error);

  if (reply == NULL)
    {
      lm_ctl_print_error ("the result was not saved", error);
      return FALSE;
    }
  return TRUE;
}

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

  if (compare != NULL)
    {
      const char *eq = strchr (compare, '=');
      g_autoptr (GError) error = NULL;
      const char *canonical;
      if (eq == NULL || eq == compare)
        {
          g_autofree char *got = lm_ctl_safe (compare);
          return lm_ctl_usage_error ("--compare takes KEY=VALUE, not “%s”", got);
        }
      g_autofree char *key = g_strndup (compare, (gsize) (eq - compare));
      GVariant *value = lm_ctl_parse_setting (key, eq + 1, &canonical, &error);
      if (value == NULL)
        return lm_ctl_usage_error ("%s", error->message);
      /* The run switches the mode itself; the engine is no power setting. */
      if (g_str_equal (canonical, "Mode") || g_str_equal (canonical, "Engine"))
        {
          g_variant_unref (g_variant_ref_sink (value));
          return lm_ctl_usage_error ("--compare takes a power setting (SataLinkPolicy, "
                                     "NvmeLatencyToleranceUs, MaxLostWork…), not %s",
                                     canonical);
        }
      g_variant_ref_sink (value);
      m->compare_value = value;
      m->compare_key = g_strdup (canonical);
      m->compare_original = g_dbus_proxy_get_cached_property (G_DBUS_PROXY (proxy), canonical);
      if (m->compare_original == NULL
          || !g_variant_is_of_type (m->compare_original, g_variant_get_type (value)))
        {
          g_autofree char *got = lm_ctl_safe (key);
          g_clear_pointer (&m->compare_value, g_variant_unref);
          g_clear_pointer (&m->compare_original, g_variant_unref);
          g_clear_pointer (&m->compare_key, g_free);
          return lm_ctl_usage_error ("--compare: “%s” is not a setting laptop-moded has", got);
        }
      g_autofree char *was = g_variant_is_of_type (m->compare_original, G_VARIANT_TYPE_STRING)
                                 ? g_variant_dup_string (m->compare_original, NULL)
                                 : g_variant_print (m->compare_original, FALSE);
      g_autofree char *now = lm_ctl_safe (eq + 1);
      g_autofree char *was_safe = lm_ctl_safe (was);
      m->arm_names[0] = g_strdup_printf ("%s=%s", canonical, now);
      m->arm_names[1] = g_strdup_printf ("%s=%s", canonical, was_safe);
    }
  else
    {
      m->arm_names[0] = g_strdup ("laptop mode on");
      m->arm_names[1] = g_strdup ("laptop mode off");
    }

  int rc = EXIT_FAILURE;
  g_autoptr (GVariant) on_battery
      = g_dbus_proxy_get_cached_property (G_DBUS_PROXY (proxy), "OnBattery");
  g_autoptr (GVariant) mode = g_dbus_proxy_get_cached_property (G_DBUS_PROXY (proxy), "Mode");
  g_autoptr (GError) error = NULL;
  if (on_battery == NULL || !g_variant_get_boolean (on_battery))
    {
      g_printerr ("%s: measure runs on battery only (the battery's discharge is what it "
                  "reads); unplug the laptop and try again\n",
                  lm_ctl_prog);
      goto out;
    }
  m->original_mode = g_variant_dup_string (mode, NULL);
  if (source == NULL || !g_str_equal (source, "sysfs"))
    {
      if (upower_usable (m))
        m->source = SOURCE_UPOWER;
      else if (source != NULL && g_str_equal (source, "upower"))
        {
          g_printerr ("%s: UPower has no battery on the bus\n", lm_ctl_prog);
          goto out;
        }
    }
  if (m->display == NULL && !probe_sysfs (m, &error))
    {
      g_printerr ("%s: %s\n", lm_ctl_prog, error->message);
      goto out;
    }

  m->loop = g_main_loop_new (NULL, FALSE);
  m->done = g_ptr_array_new_with_free_func ((GDestroyNotify) window_free);
  m->tty = isatty (STDERR_FILENO) && !json;
  m->signal_ids[0] = g_unix_signal_add (SIGINT, on_signal, m);
  m->signal_ids[1] = g_unix_signal_add (SIGTERM, on_signal, m);
  m->signal_ids[2] = g_unix_signal_add (SIGHUP, on_signal, m);
  m->props_handler
      = g_signal_connect (proxy, "g-properties-changed", G_CALLBACK (daemon_changed), m);
  m->bus_subs[0] = g_dbus_connection_signal_subscribe (
      m->bus, LOGIND_NAME, "org.freedesktop.login1.Manager", "PrepareForSleep", LOGIND_PATH, NULL,
      G_DBUS_SIGNAL_FLAGS_NONE, bus_signal, m, NULL);
  m->bus_subs[1] = g_dbus_connection_signal_subscribe (
      m->bus, LOGIND_NAME, "org.freedesktop.DBus.Properties", "PropertiesChanged", LOGIND_PATH,
      "org.freedesktop.login1.Manager", G_DBUS_SIGNAL_FLAGS_NONE, bus_signal, m, NULL);
  m->bus_subs[2] = g_dbus_connection_signal_subscribe (
      m->bus, UPOWER_NAME, "org.freedesktop.DBus.Properties", "PropertiesChanged", UPOWER_PATH,
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
          goto out;
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

  if (m->error != NULL)
    {
      lm_ctl_print_error ("the run stopped", m->error);
      goto out;
    }
  {
    g_autoptr (GVariant) result = result_of (m);
    if (m->save)
      save_result (m, result);
    if (json)
      lm_ctl_print_variant_json (result);
    else
      print_result (m, result);
    rc = EXIT_SUCCESS;
  }

out:
  for (gsize i = 0; i < G_N_ELEMENTS (m->signal_ids); i++)
    g_clear_handle_id (&m->signal_ids[i], g_source_remove);
  for (gsize i = 0; i < G_N_ELEMENTS (m->bus_subs); i++)
    if (m->bus_subs[i] != 0)
      g_dbus_connection_signal_unsubscribe (m->bus, m->bus_subs[i]);
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
  return rc;
}
