/* lm-ctl-measure-result.c: measure's statistics (Student's t, Welch's
 * interval; pure) and the result: its variant, its words, and what is saved
 * through the daemon. Never states a saving its interval does not support. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <glib-unix.h>

#include "lm-ctl-measure-private.h"
#include "lm-paths.h"

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

/* --- the result ---------------------------------------------------------- */

GVariant *
lm_measure_result_of (Measure *m)
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
  g_variant_builder_add (&b, "{sv}", "Source",
                         g_variant_new_string (lm_measure_source_names[m->source]));
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

void
lm_measure_print_result (Measure *m, GVariant *r)
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
           m->window_s >= 60 ? "min" : "s", minutes, lm_measure_source_names[m->source],
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

gboolean
lm_measure_save_result (Measure *m, GVariant *r)
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
