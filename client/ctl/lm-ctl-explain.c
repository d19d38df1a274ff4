/* lm-ctl-explain.c: laptop-modectl explain: each disk's causes of
 * wake-ups over a period, biggest first, each in a sentence (what it is,
 * how often and how regular, what it cost, what would avoid it) from the
 * table of known causes (common/lm-advice.h). Reads the model report
 * builds; owns the grouping into causes, their cost and the sentences. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm-advice.h"
#include "lm-ctl-report-model.h"

#define LM_REPORT_CAUSE_FILES_SHOWN 3

/* "12 spin-ups, every 5–6 min, awake 48 min in all" */
static char *
cost_text (const LmReportCause *c)
{
  g_autofree char *rhythm = lm_rhythm_to_string (&c->rhythm);
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, "%u spin-up%s", c->spinups, c->spinups == 1 ? "" : "s");
  if (rhythm != NULL)
    g_string_append_printf (s, ", %s", rhythm);
  if (c->awake_s >= 120)
    g_string_append_printf (s, ", awake %" G_GINT64_FORMAT " min in all", c->awake_s / 60);
  else
    g_string_append_printf (s, ", awake %" G_GINT64_FORMAT " s in all", c->awake_s);
  return g_string_free (s, FALSE);
}

/* "places.sqlite, sessionstore.jsonlz4 and 3 more" (escaped) */
static char *
files_text (const LmReportCause *c)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < c->files->len && i < LM_REPORT_CAUSE_FILES_SHOWN; i++)
    {
      g_autofree char *f = lm_ctl_safe (c->files->pdata[i]);
      g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", f);
    }
  guint more
      = c->more_files
        + (c->files->len > LM_REPORT_CAUSE_FILES_SHOWN ? c->files->len - LM_REPORT_CAUSE_FILES_SHOWN
                                                       : 0);
  if (more > 0)
    g_string_append_printf (s, " and %u more", more);
  return g_string_free (s, FALSE);
}

/* What is known of a cause the table does not hold: never a guess. */
static char *
unknown_text (const LmReportCause *c)
{
  g_autofree char *comm = lm_ctl_safe (c->waker->comm);

  if (g_str_equal (c->waker->comm, LM_OTHER_USER_TEXT))
    return g_strdup ("Another user's process: its name is theirs to see (the monitor-all "
                     "authorization shows it). No advice.");
  g_autofree char *unit = c->waker->unit != NULL ? lm_ctl_safe (c->waker->unit) : NULL;
  g_autofree char *who = unit != NULL ? g_strdup_printf ("%s of %s", comm, unit) : g_strdup (comm);
  if (c->files->len > 0)
    {
      g_autofree char *files = files_text (c);
      return g_strdup_printf ("%s (%s) touched %s. Not a known cause: no advice.", who,
                              lm_report_how_text (c->waker->via), files);
    }
  return g_strdup_printf ("%s (%s), no file known. Not a known cause: no advice.", who,
                          lm_report_how_text (c->waker->via));
}

/* For a journal's commits (jbd2/sda1-8): whether laptop mode's commit=
 * applies to that filesystem here, and why not. Only from the daemon: a
 * file of records says nothing of this machine. */
static char *
commit_fact (const LmReportCause *c, LmExportedLaptopMode *proxy)
{
  if (proxy == NULL || !c->matched || !g_str_equal (c->advice.id, "ext4-journal"))
    return NULL;
  g_autofree char *device = lm_advice_device_of (c->waker->comm);
  return lm_ctl_commit_fact_live (proxy, device);
}

static void
print_disk (const LmReportDisk *d, GPtrArray *causes, LmExportedLaptopMode *proxy)
{
  g_autofree char *name = lm_ctl_safe (d->name);
  gint64 total = d->asleep_s + d->awake_s;

  g_print ("%s: %u spin-up%s", name, d->spinups->len, d->spinups->len == 1 ? "" : "s");
  if (total > 0)
    g_print (", asleep %.0f %% of the time recorded",
             100.0 * (double) d->asleep_s / (double) total);
  g_print (".\n");
  for (guint i = 0; i < causes->len; i++)
    {
      const LmReportCause *c = g_ptr_array_index (causes, i);
      g_autofree char *comm = lm_ctl_safe (c->waker->comm);
      g_autofree char *cost = cost_text (c);
      g_autofree char *unit = c->waker->unit != NULL ? lm_ctl_safe (c->waker->unit) : NULL;
      g_print ("%2u. %s (%s%s%s): %s.\n", i + 1, comm, unit != NULL ? unit : "",
               unit != NULL ? ", " : "", lm_report_how_text (c->waker->via), cost);
      if (c->matched)
        {
          g_autofree char *what = lm_ctl_safe (c->advice.what);
          g_autofree char *avoid = lm_ctl_safe (c->advice.avoid);
          g_print ("    %s\n    To avoid it: %s\n", what, avoid);
          g_autofree char *here = commit_fact (c, proxy);
          if (here != NULL)
            {
              g_autofree char *safe = lm_ctl_safe (here);
              g_print ("    Here: %s\n", safe);
            }
        }
      else
        {
          g_autofree char *unknown = unknown_text (c);
          g_print ("    %s\n", unknown);
        }
    }
  if (causes->len == 0)
    g_print ("    No spin-ups recorded.\n");
  for (guint i = 0; i < d->deferred->len; i++)
    {
      g_autofree char *raw = lm_report_deferred_sentence (d->deferred->pdata[i]);
      g_autofree char *sentence = lm_ctl_safe (raw);
      g_print ("    Deferred: %s.\n", sentence);
    }
}

static void
json_disk (JsonBuilder *b, const LmReportDisk *d, GPtrArray *causes, LmExportedLaptopMode *proxy)
{
  json_builder_set_member_name (b, d->name);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "spinups");
  json_builder_add_int_value (b, d->spinups->len);
  json_builder_set_member_name (b, "causes");
  json_builder_begin_array (b);
  for (guint i = 0; i < causes->len; i++)
    {
      const LmReportCause *c = g_ptr_array_index (causes, i);
      g_autofree char *rhythm = lm_rhythm_to_string (&c->rhythm);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "program");
      json_builder_add_string_value (b, c->waker->comm);
      json_builder_set_member_name (b, "via");
      json_builder_add_string_value (b, c->waker->via);
      json_builder_set_member_name (b, "unit");
      if (c->waker->unit != NULL)
        json_builder_add_string_value (b, c->waker->unit);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "spinups");
      json_builder_add_int_value (b, c->spinups);
      json_builder_set_member_name (b, "awake_s");
      json_builder_add_int_value (b, c->awake_s);
      json_builder_set_member_name (b, "rhythm");
      if (rhythm != NULL)
        json_builder_add_string_value (b, rhythm);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "files");
      json_builder_begin_array (b);
      for (guint k = 0; k < c->files->len; k++)
        json_builder_add_string_value (b, c->files->pdata[k]);
      json_builder_end_array (b);
      json_builder_set_member_name (b, "cause");
      if (c->matched)
        json_builder_add_string_value (b, c->advice.id);
      else
        json_builder_add_null_value (b);
      if (c->matched)
        {
          json_builder_set_member_name (b, "what");
          json_builder_add_string_value (b, c->advice.what);
          json_builder_set_member_name (b, "avoid");
          json_builder_add_string_value (b, c->advice.avoid);
          g_autofree char *here = commit_fact (c, proxy);
          if (here != NULL)
            {
              json_builder_set_member_name (b, "here");
              json_builder_add_string_value (b, here);
            }
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

/* Each disk's causes, as text or JSON. */
static void
print_causes (LmReport *report, LmAdvice *advice, LmExportedLaptopMode *proxy, gboolean json)
{
  g_autoptr (JsonBuilder) b = json ? json_builder_new () : NULL;
  if (b != NULL)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "since");
      json_builder_add_int_value (b, report->since_us);
      json_builder_set_member_name (b, "until");
      json_builder_add_int_value (b, report->until_us);
      json_builder_set_member_name (b, "disks");
      json_builder_begin_object (b);
    }
  else
    {
      g_autofree char *from = lm_ctl_format_time (report->since_us);
      g_autofree char *to = lm_ctl_format_time (report->until_us);
      g_print ("What woke the disks from %s to %s, biggest cause first:\n", from, to);
      if (report->disks->len == 0)
        g_print ("Nothing recorded.\n");
    }
  for (guint i = 0; i < report->disks->len; i++)
    {
      const LmReportDisk *d = g_ptr_array_index (report->disks, i);
      g_autoptr (GPtrArray) causes = lm_report_causes (d, advice);
      if (b != NULL)
        json_disk (b, d, causes, proxy);
      else
        {
          g_print ("\n");
          print_disk (d, causes, proxy);
        }
    }
  if (b != NULL)
    {
      json_builder_end_object (b);
      json_builder_end_object (b);
      g_autoptr (JsonNode) root = json_builder_get_root (b);
      lm_ctl_print_json (root);
    }
}

int
lm_ctl_explain (int argc, char **argv)
{
  g_autofree char *since = NULL, *from_json = NULL;
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "since", 0, 0, G_OPTION_ARG_STRING, &since,
      "How far back: an age (12h, 1d: the default, 2w) or a local date (2026-12-01, "
      "2026-12-01T08:30), up to 366 days",
      "AGE|DATE" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the causes as JSON", NULL },
    { "from-json", 0, 0, G_OPTION_ARG_FILENAME, &from_json,
      "Read records from a JSON file (report --json --records) instead of the daemon", "FILE" },
    { NULL },
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) records = NULL;
  g_autoptr (LmExportedLaptopMode) proxy = NULL;
  gint64 until_us = g_get_real_time (), since_us;

  if (!lm_ctl_parse_options (&argc, &argv, "[DISK]",
                             "Explain what woke the disks and what would avoid it", entries))
    return LM_CTL_EXIT_USAGE;
  if (argc > 2)
    {
      g_autofree char *got = lm_ctl_safe (argv[2]);
      return lm_ctl_usage_error ("explain takes one disk at most, got also “%s”", got);
    }
  const char *disk = argc == 2 ? argv[1] : NULL;
  if (disk != NULL && (*disk == '\0' || strlen (disk) > 31 || strchr (disk, '/') != NULL))
    return lm_ctl_usage_error ("explain takes a kernel disk name (\"sda\")");
  g_autoptr (GTimeZone) tz = g_time_zone_new_local ();
  if (!lm_ctl_parse_since (since != NULL ? since : "1d", until_us, tz, &since_us, &error))
    return lm_ctl_usage_error ("%s", error->message);

  g_autoptr (LmReport) report
      = lm_report_load (from_json, since_us, until_us, 0, disk, &proxy, &records);
  if (report == NULL)
    return EXIT_FAILURE;
  /* Two programs of one name in two units are two causes. */
  lm_report_group_by_unit (report);
  g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (LmAdvice) advice = lm_advice_load (warnings);
  /* A bad entry is the administrator's to mend: said, and the rest used. */
  for (guint i = 0; i < warnings->len; i++)
    {
      g_autofree char *w = lm_ctl_safe (warnings->pdata[i]);
      g_printerr ("%s: table of causes: %s\n", lm_ctl_prog, w);
    }

  print_causes (report, advice, proxy, json);
  return EXIT_SUCCESS;
}
