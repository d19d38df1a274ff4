/* lm-ctl-report.c: laptop-modectl report: reads the daemon's ledger
 * (GetLedgerPage) and hands the model to one writer; writes no format itself. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lm-ctl-report-model.h"

/* GetLedgerPage's largest page (the daemon's LM_LIMIT_LEDGER_ANSWER); a
 * full ledger (2 MiB, about 40,000 records) is about 160 pages. */
#define LEDGER_PAGE 250
#define LEDGER_MAX_PAGES 1024

GVariant *
lm_report_fetch_ledger (LmExportedLaptopMode *proxy, gint64 since_us, gint64 until_us,
                        GError **error)
{
  g_auto (GVariantBuilder) all = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));
  g_autofree char *cursor = g_strdup ("");

  for (guint page = 0; page < LEDGER_MAX_PAGES; page++)
    {
      g_autoptr (GVariant) ret
          = lm_ctl_call (proxy, "GetLedgerPage",
                         g_variant_new ("(ttsu)", (guint64) since_us, (guint64) until_us, cursor,
                                        (guint32) LEDGER_PAGE),
                         error);
      if (ret == NULL)
        return NULL;
      g_autoptr (GVariant) records = g_variant_get_child_value (ret, 0);
      gsize n = g_variant_n_children (records);
      for (gsize i = 0; i < n; i++)
        {
          g_autoptr (GVariant) rec = g_variant_get_child_value (records, i);
          g_variant_builder_add_value (&all, rec);
        }
      g_free (cursor);
      g_variant_get_child (ret, 1, "s", &cursor);
      if (cursor[0] == '\0')
        break;
    }
  return g_variant_ref_sink (g_variant_builder_end (&all));
}

/* Records saved by "report --json --records" or written by hand, for a
 * report away from the machine (and for tests of the writers). */
static GVariant *
load_records (const char *file, GError **error)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents (file, &text, NULL, error))
    return NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, text, -1, error))
    {
      g_prefix_error (error, "%s: ", file);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root != NULL && JSON_NODE_HOLDS_OBJECT (root))
    root = json_object_get_member (json_node_get_object (root), "records");
  if (root == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s: no list of records (or object with \"records\")", file);
      return NULL;
    }
  GVariant *v = json_gvariant_deserialize (root, "aa{sv}", error);
  if (v == NULL)
    g_prefix_error (error, "%s: ", file);
  return v != NULL ? g_variant_ref_sink (v) : NULL;
}

/* Each disk's standby timer from DiskSettings (by stable id or name). */
static GHashTable *
standby_timers (LmExportedLaptopMode *proxy)
{
  GHashTable *idle = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GVariant *disks = lm_exported_laptop_mode_get_disks (proxy);
  GVariant *settings = lm_exported_laptop_mode_get_disk_settings (proxy);
  GVariantIter iter;
  const char *name;
  GVariant *info;

  if (disks == NULL || settings == NULL)
    return idle;
  g_variant_iter_init (&iter, disks);
  while (g_variant_iter_next (&iter, "{&s@a{sv}}", &name, &info))
    {
      const char *id = name;
      guint32 secs = 0;
      g_variant_lookup (info, "Id", "&s", &id);
      g_autoptr (GVariant) ds = g_variant_lookup_value (settings, id, G_VARIANT_TYPE_VARDICT);
      if (ds == NULL)
        ds = g_variant_lookup_value (settings, name, G_VARIANT_TYPE_VARDICT);
      if (ds != NULL && g_variant_lookup (ds, "StandbySeconds", "u", &secs) && secs > 0)
        g_hash_table_insert (idle, g_strdup (name), GUINT_TO_POINTER (secs));
      g_variant_unref (info);
    }
  return idle;
}

static gboolean
write_file (const char *file, const char *text, GError **error)
{
  if (g_str_equal (file, "-"))
    {
      fputs (text, stdout);
      return fflush (stdout) == 0;
    }
  /* Other users' process and file names: the caller's eyes only (0600,
   * also when it replaces a file that was readable by others). GLib 2.84
   * keeps an existing file's mode over the one asked for, so the mode is
   * set on the written file itself, through its descriptor. */
  if (!g_file_set_contents_full (file, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600, error))
    return FALSE;
  int fd = open (file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fchmod (fd, 0600) != 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "Cannot make %s readable by its owner only: %s", file, g_strerror (saved));
      return FALSE;
    }
  close (fd);
  return TRUE;
}

LmReport *
lm_report_load (const char *from_json, gint64 since_us, gint64 until_us, guint idle_s,
                const char *disk, LmExportedLaptopMode **proxy_out, GVariant **records_out)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) records = NULL;
  g_autoptr (GHashTable) idle = NULL;
  g_autoptr (LmExportedLaptopMode) proxy = NULL;

  if (from_json != NULL)
    {
      records = load_records (from_json, &error);
      if (records == NULL)
        {
          lm_ctl_print_error ("Could not read the records", error);
          return NULL;
        }
    }
  else
    {
      proxy = lm_ctl_get_proxy ();
      if (proxy == NULL)
        return NULL;
      records = lm_report_fetch_ledger (proxy, since_us, until_us, &error);
      if (records == NULL)
        {
          lm_ctl_print_error ("Could not read the ledger", error);
          return NULL;
        }
      if (idle_s == 0)
        idle = standby_timers (proxy);
    }

  LmReport *report = lm_report_build (records, since_us, until_us, idle,
                                      idle_s > 0 ? idle_s : LM_REPLAY_DEFAULT_IDLE_S, disk);
  if (proxy != NULL)
    {
      lm_report_add_nvme (report, lm_exported_laptop_mode_get_disks (proxy),
                          lm_exported_laptop_mode_get_max_lost_work (proxy),
                          lm_exported_laptop_mode_get_laptop_mode_seconds (proxy));
      lm_report_add_wear (report, lm_exported_laptop_mode_get_disks (proxy));
      lm_report_add_measurement (report, lm_exported_laptop_mode_get_measurement (proxy));
      lm_report_add_unwritten (report, lm_exported_laptop_mode_get_ledger_summary (proxy));
      GVariant *conflicts = lm_exported_laptop_mode_get_conflicts (proxy);
      GVariant *writers = lm_exported_laptop_mode_get_conflict_writers (proxy);
      report->conflicts = conflicts != NULL ? g_variant_ref (conflicts) : NULL;
      report->conflict_writers = writers != NULL ? g_variant_ref (writers) : NULL;
    }
  *proxy_out = g_steal_pointer (&proxy);
  *records_out = g_steal_pointer (&records);
  return report;
}

/* @report as asked: JSON (with @records), OpenMetrics, HTML into @html, or
 * text; the exit code. */
static int
print_report (LmReport *report, GVariant *records, gboolean json, gboolean with_records,
              gboolean openmetrics, const char *html)
{
  g_autoptr (GError) error = NULL;

  if (json)
    {
      g_autoptr (JsonNode) node = lm_report_json (report);
      if (with_records)
        json_object_set_member (json_node_get_object (node), "records",
                                json_gvariant_serialize (records));
      lm_ctl_print_json (node);
      return EXIT_SUCCESS;
    }
  if (openmetrics || html != NULL)
    {
      g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (LmAdvice) advice = html != NULL ? lm_advice_load (warnings) : NULL;
      for (guint i = 0; i < warnings->len; i++)
        {
          g_autofree char *w = lm_ctl_safe (warnings->pdata[i]);
          g_printerr ("%s: table of causes: %s\n", lm_ctl_prog, w);
        }
      g_autofree char *text
          = openmetrics ? lm_report_openmetrics (report) : lm_report_html (report, advice);
      if (!write_file (openmetrics ? "-" : html, text, &error))
        {
          g_autofree char *what
              = g_strdup_printf ("Could not write %s", openmetrics ? "the metrics" : "the report");
          lm_ctl_print_error (what, error);
          return EXIT_FAILURE;
        }
      return EXIT_SUCCESS;
    }
  lm_report_print_text (report, g_str_equal (nl_langinfo (CODESET), "UTF-8"));
  return EXIT_SUCCESS;
}

int
lm_ctl_report (int argc, char **argv)
{
  g_autofree char *since = NULL, *until = NULL, *disk = NULL, *html = NULL, *from_json = NULL;
  gboolean json = FALSE, openmetrics = FALSE, with_records = FALSE, by_unit = FALSE;
  gint idle_s = 0;
  const GOptionEntry entries[] = {
    { "since", 0, 0, G_OPTION_ARG_STRING, &since,
      "How far back: an age (12h, 1d: the default, 2w) or a local date (2026-12-01, "
      "2026-12-01T08:30), up to 366 days",
      "AGE|DATE" },
    { "until", 0, 0, G_OPTION_ARG_STRING, &until,
      "Up to when (default: now), as --since: an age back from now or a local date", "AGE|DATE" },
    { "disk", 0, 0, G_OPTION_ARG_STRING, &disk, "Only this disk", "NAME" },
    { "by-unit", 0, 0, G_OPTION_ARG_NONE, &by_unit,
      "Count the wakers per program and systemd unit (or application)", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the report as JSON", NULL },
    { "records", 0, 0, G_OPTION_ARG_NONE, &with_records,
      "With --json: include the ledger's records", NULL },
    { "html", 0, 0, G_OPTION_ARG_FILENAME, &html, "Write a self-contained HTML report", "FILE" },
    { "openmetrics", 0, 0, G_OPTION_ARG_NONE, &openmetrics,
      "Print counters for node_exporter's textfile collector", NULL },
    { "idle", 0, 0, G_OPTION_ARG_INT, &idle_s,
      "Idle gap replayed for the estimate (default: the disk's standby timer, else 5)", "SECONDS" },
    { "from-json", 0, 0, G_OPTION_ARG_FILENAME, &from_json,
      "Read records from a JSON file instead of the daemon", "FILE" },
    { NULL },
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) records = NULL;
  g_autoptr (LmExportedLaptopMode) proxy = NULL;
  gint64 until_us, since_us;

  if (!lm_ctl_parse_options (&argc, &argv, "", "Show what woke the disks and how long they slept",
                             entries))
    return LM_CTL_EXIT_USAGE;
  int rc = lm_ctl_no_arguments (argc, argv);
  if (rc != EXIT_SUCCESS)
    return rc;
  g_autoptr (GTimeZone) tz = g_time_zone_new_local ();
  if (!lm_ctl_parse_window (since, until, g_get_real_time (), tz, &since_us, &until_us, &error))
    return lm_ctl_usage_error ("%s", error->message);
  if ((json ? 1 : 0) + (openmetrics ? 1 : 0) + (html != NULL ? 1 : 0) > 1)
    return lm_ctl_usage_error ("--json, --html and --openmetrics go one at a time");
  if (idle_s < 0 || idle_s > 86400)
    return lm_ctl_usage_error ("--idle takes 1 to 86400 seconds");
  /* Its counters have no unit label: one program in two units would be
   * two samples of one series. */
  if (by_unit && openmetrics)
    return lm_ctl_usage_error ("--by-unit does not go with --openmetrics");
  if (disk != NULL && (*disk == '\0' || strlen (disk) > 31))
    return lm_ctl_usage_error ("--disk takes a kernel disk name (\"sda\")");

  g_autoptr (LmReport) report = lm_report_load (
      from_json, since_us, until_us, idle_s > 0 ? (guint) idle_s : 0, disk, &proxy, &records);
  if (report == NULL)
    return EXIT_FAILURE;
  if (by_unit)
    lm_report_group_by_unit (report);
  return print_report (report, records, json, with_records, openmetrics, html);
}
