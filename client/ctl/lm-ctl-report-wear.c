/* lm-ctl-report-wear.c: the report's head-parking section: a spinning
 * disk's load cycles from SMART 193 as the daemon last read them (Disks),
 * the rate over the ledger's days and the days left to its rating. */
#include "config.h"

#include "lm-ctl-report-model.h"

void
lm_report_add_wear (LmReport *report, GVariant *disks)
{
  if (disks == NULL || !g_variant_is_of_type (disks, G_VARIANT_TYPE ("a{sa{sv}}")))
    return;
  for (guint i = 0; i < report->disks->len; i++)
    {
      LmReportDisk *d = g_ptr_array_index (report->disks, i);
      g_autoptr (GVariant) info = g_variant_lookup_value (disks, d->name, G_VARIANT_TYPE_VARDICT);

      if (info == NULL || !g_variant_lookup (info, "LoadCycles", "u", &d->load_cycles))
        continue;
      d->have_wear = TRUE;
      g_variant_lookup (info, "LoadCycleRating", "u", &d->load_cycle_rating);
      if (!g_variant_lookup (info, "LoadCyclesPerDay", "d", &d->load_cycles_per_day))
        d->load_cycles_per_day = -1;
      if (!g_variant_lookup (info, "LoadCycleDaysLeft", "d", &d->load_cycle_days_left))
        d->load_cycle_days_left = -1;
      g_variant_lookup (info, "LoadCycleWarning", "b", &d->load_cycle_warning);
    }
}

void
lm_report_wear_text (const LmReportDisk *d)
{
  if (!d->have_wear)
    return;
  g_print ("  load cycles %u (SMART 193)", d->load_cycles);
  if (d->load_cycles_per_day >= 0)
    g_print (", %.1f a day", d->load_cycles_per_day);
  if (d->load_cycle_days_left >= 0)
    g_print (": rating %u in %.0f days", d->load_cycle_rating, d->load_cycle_days_left);
  g_print ("%s\n", d->load_cycle_warning ? " (within five years: a higher APM level or a longer "
                                           "firmware idle timer would help)"
                                         : "");
}

void
lm_report_wear_json (JsonBuilder *b, const LmReportDisk *d)
{
  if (!d->have_wear)
    return;
  json_builder_set_member_name (b, "wear");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "load_cycles");
  json_builder_add_int_value (b, d->load_cycles);
  json_builder_set_member_name (b, "load_cycle_rating");
  json_builder_add_int_value (b, d->load_cycle_rating);
  json_builder_set_member_name (b, "load_cycles_per_day");
  if (d->load_cycles_per_day >= 0)
    json_builder_add_double_value (b, d->load_cycles_per_day);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "days_to_rating");
  if (d->load_cycle_days_left >= 0)
    json_builder_add_double_value (b, d->load_cycle_days_left);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "warning");
  json_builder_add_boolean_value (b, d->load_cycle_warning);
  json_builder_set_member_name (b, "source");
  json_builder_add_string_value (b, "SMART attribute 193, low 32 bits of its raw value; the rate "
                                    "over the ledger's wear records (one a day, 30 days kept)");
  json_builder_end_object (b);
}

void
lm_report_wear_openmetrics (GString *out, const LmReport *report)
{
  static const char *const names[] = { "laptop_mode_load_cycles", "laptop_mode_load_cycles_per_day",
                                       "laptop_mode_load_cycle_days_to_rating" };
  static const char *const helps[]
      = { "A spinning disk's head load cycles (SMART 193) as last read.",
          "Load cycles a day over the ledger's wear records.",
          "Days until the load-cycle rating (DiskSettings LoadCycleRating) at that rate." };
  gboolean any = FALSE;

  for (guint i = 0; i < report->disks->len; i++)
    any = any || ((const LmReportDisk *) g_ptr_array_index (report->disks, i))->have_wear;
  if (!any)
    return;
  for (guint k = 0; k < G_N_ELEMENTS (names); k++)
    {
      g_string_append_printf (out, "# HELP %s %s\n# TYPE %s gauge\n", names[k], helps[k], names[k]);
      for (guint i = 0; i < report->disks->len; i++)
        {
          const LmReportDisk *d = g_ptr_array_index (report->disks, i);
          double v = k == 0   ? d->load_cycles
                     : k == 1 ? d->load_cycles_per_day
                              : d->load_cycle_days_left;
          if (!d->have_wear || v < 0)
            continue;
          g_autofree char *disk = lm_escape (d->name, -1, LM_ESCAPE_DEFAULT);
          g_autofree char *fit = lm_ctl_fit (disk, 64);
          g_string_append_printf (out, "%s{disk=\"%s\"} %.1f\n", names[k], fit, v);
        }
    }
}
