/* lm-ctl-report-metrics.c: laptop-modectl report as JSON and as counters
 * for node_exporter's textfile collector, with bounded, escaped labels. */
#include "config.h"

#include "lm-ctl-report-model.h"

/* One member of the object being built. */
static void
member_string (JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_string_value (b, value);
}

static void
member_int (JsonBuilder *b, const char *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}

static JsonNode *
result_json (const LmReplayResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  member_int (b, "spinups", r->spinups);
  member_int (b, "awake_s", r->awake_s);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

static JsonNode *
disk_json (const LmReportDisk *d)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  member_int (b, "asleep_s", d->asleep_s);
  member_int (b, "awake_s", d->awake_s);
  json_builder_set_member_name (b, "spinups_by_hour");
  json_builder_begin_array (b);
  for (int h = 0; h < 24; h++)
    json_builder_add_int_value (b, d->hourly[h]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "wakers");
  json_builder_begin_array (b);
  for (guint i = 0; i < d->wakers->len; i++)
    {
      const LmReportWaker *w = g_ptr_array_index (d->wakers, i);
      json_builder_begin_object (b);
      member_string (b, "comm", w->comm);
      member_string (b, "via", w->via);
      /* Only with --by-unit: the unit its spin-ups share. */
      if (w->unit != NULL)
        member_string (b, "unit", w->unit);
      member_int (b, "count", w->count);
      /* How regular its spin-ups were; null with fewer than three. */
      json_builder_set_member_name (b, "rhythm");
      if (w->rhythm != NULL)
        json_builder_add_string_value (b, w->rhythm);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "threads");
      json_builder_begin_array (b);
      for (guint k = 0; k < w->threads->len; k++)
        json_builder_add_string_value (b, w->threads->pdata[k]);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "spinups");
  json_builder_begin_array (b);
  for (guint i = 0; i < d->spinups->len; i++)
    {
      const LmReportSpinUp *s = g_ptr_array_index (d->spinups, i);
      json_builder_begin_object (b);
      member_int (b, "time_us", s->time_us);
      member_string (b, "comm", s->comm);
      if (s->unit != NULL)
        member_string (b, "unit", s->unit);
      if (s->thread != NULL)
        member_string (b, "thread", s->thread);
      member_string (b, "via", s->via);
      if (s->path != NULL)
        {
          member_string (b, "path", s->path);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  member_int (b, "activity_runs", d->runs->len);
  member_int (b, "idle_s", d->idle_s);
  json_builder_set_member_name (b, "recorded");
  json_builder_add_value (b, result_json (&d->recorded));
  /* null where no activity was recorded: no estimate, rather than zero. */
  json_builder_set_member_name (b, "stock_estimate");
  if (d->runs->len > 0)
    json_builder_add_value (b, result_json (&d->stock));
  else
    json_builder_add_null_value (b);
  /* Why the estimate is less sure than it looks, or null. */
  json_builder_set_member_name (b, "stock_estimate_unsure");
  if (d->stock_unsure != 0)
    json_builder_add_string_value (b, lm_replay_unsure_to_string (d->stock_unsure));
  else
    json_builder_add_null_value (b);
  lm_report_nvme_json (b, d);
  lm_report_wear_json (b, d);
  lm_report_deferred_json (b, d);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/* "changed_by_others": each value laptop mode set that another program
 * changed, and who (where the daemon could see it). */
static void
conflicts_json (JsonBuilder *b, const LmReport *report)
{
  GVariantIter iter;
  const char *what, *expected, *found;
  gint64 when;

  if (report->conflicts == NULL
      || !g_variant_is_of_type (report->conflicts, G_VARIANT_TYPE ("a(sxss)")))
    return;
  json_builder_set_member_name (b, "changed_by_others");
  json_builder_begin_array (b);
  g_variant_iter_init (&iter, report->conflicts);
  while (g_variant_iter_next (&iter, "(&sx&s&s)", &what, &when, &expected, &found))
    {
      const char *by = NULL;
      if (report->conflict_writers != NULL
          && g_variant_is_of_type (report->conflict_writers, G_VARIANT_TYPE ("a{ss}")))
        g_variant_lookup (report->conflict_writers, what, "&s", &by);
      json_builder_begin_object (b);
      member_string (b, "what", what);
      member_int (b, "when_us", when);
      member_string (b, "set", expected);
      member_string (b, "found", found);
      json_builder_set_member_name (b, "by");
      if (by != NULL)
        json_builder_add_string_value (b, by);
      else
        json_builder_add_null_value (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

JsonNode *
lm_report_json (const LmReport *report)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  member_int (b, "since_us", report->since_us);
  member_int (b, "until_us", report->until_us);
  json_builder_set_member_name (b, "disks");
  json_builder_begin_object (b);
  for (guint i = 0; i < report->disks->len; i++)
    {
      const LmReportDisk *d = g_ptr_array_index (report->disks, i);
      json_builder_set_member_name (b, d->name);
      json_builder_add_value (b, disk_json (d));
    }
  json_builder_end_object (b);
  if (report->unwritten_since_us > 0)
    {
      member_int (b, "unwritten_since_us", report->unwritten_since_us);
      json_builder_set_member_name (b, "unwritten_disk");
      json_builder_add_string_value (b, report->unwritten_disk);
    }
  lm_report_measurement_json (b, report);
  conflicts_json (b, report);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/* A label value: terminal-safe first (control bytes become \xNN), at most
 * 64 characters, then the exposition format's own escapes. */
static void
append_label (GString *out, const char *name, const char *value)
{
  g_autofree char *safe = lm_escape (value, -1, LM_ESCAPE_DEFAULT);
  g_autofree char *fit = lm_ctl_fit (safe, 64);

  g_string_append_printf (out, "%s=\"", name);
  for (const char *p = fit; *p != '\0'; p++)
    {
      if (*p == '\\')
        g_string_append (out, "\\\\");
      else if (*p == '"')
        g_string_append (out, "\\\"");
      else if (*p == '\n')
        g_string_append (out, "\\n");
      else
        g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

static void
spinup_lines (GString *out, const LmReportDisk *d)
{
  guint other = 0;

  for (guint i = 0; i < d->wakers->len; i++)
    {
      const LmReportWaker *w = g_ptr_array_index (d->wakers, i);
      if (i >= LM_REPORT_TOP_WAKERS)
        {
          other += w->count;
          continue;
        }
      g_string_append (out, "laptop_mode_spinups_total{");
      append_label (out, "disk", d->name);
      g_string_append_c (out, ',');
      append_label (out, "comm", w->comm);
      g_string_append_c (out, ',');
      append_label (out, "via", w->via);
      g_string_append_printf (out, "} %u\n", w->count);
    }
  if (other > 0)
    {
      g_string_append (out, "laptop_mode_spinups_total{");
      append_label (out, "disk", d->name);
      g_string_append_printf (out, ",comm=\"other\",via=\"other\"} %u\n", other);
    }
}

static void
seconds_lines (GString *out, const LmReport *report, const char *name, gboolean asleep)
{
  for (guint i = 0; i < report->disks->len; i++)
    {
      const LmReportDisk *d = g_ptr_array_index (report->disks, i);
      g_string_append_printf (out, "%s{", name);
      append_label (out, "disk", d->name);
      g_string_append_printf (out, "} %" G_GINT64_FORMAT "\n", asleep ? d->asleep_s : d->awake_s);
    }
}

/* The names carry _total and TYPE says counter: the textfile collector
 * reads the Prometheus text format, where the TYPE line names the sample. */
char *
lm_report_openmetrics (const LmReport *report)
{
  GString *out = g_string_new (NULL);

  g_string_append (out, "# HELP laptop_mode_spinups_total Disk spin-ups in the ledger's range, "
                        "by disk and the process that caused them (top wakers; the rest as "
                        "other).\n# TYPE laptop_mode_spinups_total counter\n");
  for (guint i = 0; i < report->disks->len; i++)
    spinup_lines (out, g_ptr_array_index (report->disks, i));
  g_string_append (out, "# HELP laptop_mode_asleep_seconds_total Seconds the disk was asleep "
                        "in the ledger's range.\n"
                        "# TYPE laptop_mode_asleep_seconds_total counter\n");
  seconds_lines (out, report, "laptop_mode_asleep_seconds_total", TRUE);
  g_string_append (out, "# HELP laptop_mode_awake_seconds_total Seconds the disk was awake "
                        "in the ledger's range.\n"
                        "# TYPE laptop_mode_awake_seconds_total counter\n");
  seconds_lines (out, report, "laptop_mode_awake_seconds_total", FALSE);
  lm_report_nvme_openmetrics (out, report);
  lm_report_wear_openmetrics (out, report);
  lm_report_measurement_openmetrics (out, report);
  g_string_append (out, "# EOF\n");
  return g_string_free (out, FALSE);
}
