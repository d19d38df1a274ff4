/* lm-ctl-report-measure.c: the report's measured-watts section: the last
 * result of laptop-modectl measure as the daemon keeps it (Measurement),
 * in one wording for text and HTML, and as JSON and OpenMetrics. A saving
 * is stated only where the saved result says it was measurable. */
#include "config.h"

#include <math.h>

#include "lm-ctl-report-model.h"

void
lm_report_add_measurement (LmReport *report, GVariant *measurement)
{
  g_clear_pointer (&report->measurement, g_variant_unref);
  if (measurement != NULL && g_variant_is_of_type (measurement, G_VARIANT_TYPE_VARDICT)
      && g_variant_lookup (measurement, "Time", "x", NULL))
    report->measurement = g_variant_ref (measurement);
}

/* "measured on this laptop on 2026-12-06: laptop mode saves 0.41 W ± 0.12 W,
 * about 38 min of this battery", or that no difference was measurable;
 * raw (escape for the output). */
char *
lm_report_measurement_sentence (GVariant *m)
{
  gint64 time_us = 0;
  double diff = 0, half = 0, minutes = 0, mins;
  gboolean measurable = FALSE, partial = FALSE;
  const char *setting = "LaptopMode", *arm_a = "laptop mode on", *arm_b = "";
  g_autoptr (GString) out = g_string_new (NULL);

  g_variant_lookup (m, "Time", "x", &time_us);
  g_variant_lookup (m, "Measurable", "b", &measurable);
  g_variant_lookup (m, "Partial", "b", &partial);
  g_variant_lookup (m, "Minutes", "d", &minutes);
  g_variant_lookup (m, "Setting", "&s", &setting);
  g_variant_lookup (m, "ArmA", "&s", &arm_a);
  g_variant_lookup (m, "ArmB", "&s", &arm_b);
  g_autoptr (GDateTime) when = g_date_time_new_from_unix_local (time_us / G_USEC_PER_SEC);
  g_autofree char *date = when ? g_date_time_format (when, "%Y-%m-%d") : g_strdup ("?");
  gboolean laptop_mode = g_str_equal (setting, "LaptopMode");

  g_string_append_printf (out, "measured on this laptop on %s: ", date);
  if (measurable && g_variant_lookup (m, "DifferenceW", "d", &diff)
      && g_variant_lookup (m, "IntervalW", "d", &half))
    {
      g_string_append_printf (out, "%s %s %.2f W ± %.2f W", laptop_mode ? "laptop mode" : arm_a,
                              diff > 0 ? "saves" : "costs", fabs (diff), half);
      if (!laptop_mode)
        g_string_append_printf (out, " compared with %s", arm_b);
      if (g_variant_lookup (m, "BatteryMinutes", "d", &mins))
        g_string_append_printf (out, ", about %.0f min %sof this battery", fabs (mins),
                                diff > 0 ? "" : "less ");
    }
  else
    g_string_append_printf (out, "no difference measurable in %.0f min (%s against %s)",
                            ceil (minutes), arm_a, arm_b);
  if (partial)
    g_string_append (out, " (partial: the run ended early)");
  return g_string_free (g_steal_pointer (&out), FALSE);
}

void
lm_report_measurement_text (const LmReport *report)
{
  if (report->measurement == NULL)
    return;
  g_autofree char *sentence = lm_report_measurement_sentence (report->measurement);
  g_autofree char *safe = lm_ctl_safe (sentence);
  g_print ("\nWatts, %s.\n", safe);
}

void
lm_report_measurement_json (JsonBuilder *b, const LmReport *report)
{
  if (report->measurement == NULL)
    return;
  json_builder_set_member_name (b, "measurement");
  json_builder_add_value (b, json_gvariant_serialize (report->measurement));
}

void
lm_report_measurement_openmetrics (GString *out, const LmReport *report)
{
  double diff, half;
  gboolean measurable = FALSE;

  if (report->measurement == NULL)
    return;
  g_variant_lookup (report->measurement, "Measurable", "b", &measurable);
  if (!measurable || !g_variant_lookup (report->measurement, "DifferenceW", "d", &diff)
      || !g_variant_lookup (report->measurement, "IntervalW", "d", &half))
    return;
  /* Only a measurable result: a gauge must not show a saving the interval
   * does not support. */
  g_string_append_printf (out,
                          "# HELP laptop_mode_measured_saving_watts What laptop-modectl measure "
                          "found the compared setting saves on this laptop (negative: costs), "
                          "from the battery.\n# TYPE laptop_mode_measured_saving_watts gauge\n"
                          "laptop_mode_measured_saving_watts %.4f\n"
                          "# HELP laptop_mode_measured_saving_interval_watts The 95 %% "
                          "half-interval of that saving.\n"
                          "# TYPE laptop_mode_measured_saving_interval_watts gauge\n"
                          "laptop_mode_measured_saving_interval_watts %.4f\n",
                          diff, half);
}
