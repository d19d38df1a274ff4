/* test-estimate-words.c: no estimate without its word. Every figure that
 * comes from the replay or the APST walk is listed once, in
 * common/lm-estimates.h; this checks that each name there says "estimate"
 * (the tray: "about"), that each bound says so, and that what the report's
 * JSON, OpenMetrics, text and HTML and the tray's tooltip really print has
 * no model figure outside that table: a new one without its word fails. */
#include <json-glib/json-glib.h>
#include <string.h>

#include "lm-ctl-report-model.h"
#include "lm-estimates.h"
#include "test-tray-common.h"

#define T0 G_GINT64_CONSTANT (1796290000)
#define S G_USEC_PER_SEC

static void
test_table (void)
{
  guint n = 0;

  for (const LmFigure *f = lm_model_figures; f->name != NULL; f++, n++)
    {
      if (!lm_figure_says_estimate (f->name))
        g_error ("%s figure \"%s\" does not say it is an estimate", f->where, f->name);
      if (f->kind == LM_FIGURE_BOUND && !lm_figure_says_bound (f->name))
        g_error ("%s figure \"%s\" is a bound and does not say so", f->where, f->name);
    }
  g_assert_cmpuint (n, >, 10);
  /* The words themselves: a measured-sounding name fails. */
  g_assert_false (lm_figure_says_estimate ("DeepIdleShareToday"));
  g_assert_false (lm_figure_says_estimate ("laptop_mode"));
  g_assert_false (lm_figure_says_bound ("no_apst_cost_wh_estimate"));
  g_assert_true (lm_figure_says_estimate ("PS4 ≈ 41 %"));
}

static gboolean
in_table (const char *where, const char *name)
{
  for (const LmFigure *f = lm_model_figures; f->name != NULL; f++)
    if (g_str_equal (f->where, where) && g_str_equal (f->name, name))
      return TRUE;
  return FALSE;
}

/* A day of an NVMe disk with an APST table and one without, watched from
 * T0 with a 600 s suspend in the middle. */
static LmReport *
nvme_report (void)
{
  g_autoptr (GVariant) records = g_variant_ref_sink (g_variant_new_parsed (
      "[{'Kind': <'awake'>, 'Disk': <'nvme0n1'>, 'Time': <%x>, 'End': <%x>},"
      " {'Kind': <'awake'>, 'Disk': <'nvme0n1'>, 'Time': <%x>, 'End': <%x>},"
      " {'Kind': <'activity'>, 'Disk': <'nvme0n1'>, 'Time': <%x>, 'End': <%x>,"
      "  'Reads': <uint32 1>, 'Dirtied': <uint32 1>},"
      " {'Kind': <'awake'>, 'Disk': <'nvme1n1'>, 'Time': <%x>, 'End': <%x>},"
      " {'Kind': <'activity'>, 'Disk': <'nvme1n1'>, 'Time': <%x>, 'End': <%x>,"
      "  'Writes': <uint32 1>}]",
      T0 * S, (T0 + 1000) * S, (T0 + 1600) * S, (T0 + 3600) * S, (T0 + 100) * S, (T0 + 101) * S,
      T0 * S, (T0 + 3600) * S, (T0 + 100) * S, (T0 + 101) * S));
  /* nvme0n1: PS0 working, PS1 non-operational with IDLP, APST on;
   * nvme1n1: APST absent, its lowest state without IDLP. */
  g_autoptr (GVariant) disks = g_variant_ref_sink (g_variant_new_parsed (
      "{'nvme0n1': {'NvmePowerStates': <[{'MaxPowerW': <5.0>, 'IdlePowerW': <1.0>,"
      "   'ActivePowerW': <4.0>, 'Operational': <true>},"
      "  {'MaxPowerW': <0.5>, 'IdlePowerW': <0.005>, 'Operational': <false>}]>,"
      "  'NvmeApstSupported': <true>, 'NvmeApst': <true>,"
      "  'NvmeApstTable': <[(uint32 100, uint32 1), (uint32 0, uint32 0)]>,"
      "  'NvmePowerState': <uint32 0>},"
      " 'nvme1n1': {'NvmePowerStates': <[{'MaxPowerW': <5.0>, 'Operational': <true>},"
      "  {'MaxPowerW': <0.5>, 'Operational': <false>}]>,"
      "  'NvmeApstSupported': <false>, 'NvmePowerState': <uint32 0>}}"));
  LmReport *report = lm_report_build (records, T0 * S, (T0 + 3600) * S, NULL, 5, NULL);

  lm_report_add_nvme (report, disks, 600, 2);
  return report;
}

/* Each key of an NVMe disk's JSON object: a measured fact the daemon or
 * the drive gave (listed here, with where it comes from), or a model
 * figure from the table. */
static void
test_json (void)
{
  static const char *const measured[] = {
    "apst",          /* Disks: the drive's APST, as read */
    "work_state",    /* Disks: the power state the host set */
    "deepest_state", /* the APST table, as read */
    "window_s",      /* the ledger's watched seconds */
    "limits",        /* words, no figure */
    NULL,
  };
  g_autoptr (LmReport) report = nvme_report ();
  g_autoptr (JsonNode) root = lm_report_json (report);
  JsonObject *disks = json_object_get_object_member (json_node_get_object (root), "disks");
  guint seen = 0;

  g_assert_nonnull (disks);
  for (const char *const *disk = (const char *const[]){ "nvme0n1", "nvme1n1", NULL }; *disk; disk++)
    {
      JsonObject *d = json_object_get_object_member (disks, *disk);
      g_assert_nonnull (d);
      g_assert_true (json_object_has_member (d, LM_EST_JSON_STOCK));
      JsonObject *nvme = json_object_get_object_member (d, "nvme");
      g_assert_nonnull (nvme);
      g_autoptr (GList) keys = json_object_get_members (nvme);
      for (GList *k = keys; k != NULL; k = k->next)
        {
          if (g_strv_contains (measured, k->data))
            continue;
          if (!in_table ("json", k->data))
            g_error ("JSON key nvme.%s is neither measured nor a named estimate",
                     (const char *) k->data);
          seen++;
        }
    }
  /* nvme1n1 has no APST: its cost without APST is there, and a bound. */
  JsonObject *n1
      = json_object_get_object_member (json_object_get_object_member (disks, "nvme1n1"), "nvme");
  g_assert_false (json_object_get_null_member (n1, LM_EST_JSON_NO_APST));
  g_assert_cmpuint (seen, ==, 6);
}

static void
test_openmetrics (void)
{
  g_autoptr (LmReport) report = nvme_report ();
  g_autofree char *text = lm_report_openmetrics (report);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint seen = 0;

  for (char **l = lines; *l != NULL; l++)
    {
      if (**l == '#' || !g_str_has_prefix (*l, "laptop_mode_nvme_"))
        continue;
      g_autofree char *name = g_strndup (*l, strcspn (*l, "{ "));
      if (!in_table ("metric", name))
        g_error ("metric %s comes from the model and is not a named estimate", name);
      seen++;
    }
  g_assert_cmpuint (seen, >, 0);
  assert_contains (text, "# HELP " LM_EST_METRIC_ENERGY " Estimated");
}

static GString *printed;

static void
capture (const char *text)
{
  g_string_append (printed, text);
}

/* The terminal report: each line with a stock-writeback figure, a power
 * state's share or an energy says it is estimated, and the cost without
 * APST that it is at most. */
static void
test_text (void)
{
  g_autoptr (LmReport) report = nvme_report ();
  GPrintFunc old;

  printed = g_string_new (NULL);
  old = g_set_print_handler (capture);
  lm_report_print_text (report, TRUE);
  g_set_print_handler (old);
  g_auto (GStrv) lines = g_strsplit (printed->str, "\n", -1);
  guint figures = 0;
  for (char **l = lines; *l != NULL; l++)
    {
      if (strstr (*l, "stock") == NULL && strstr (*l, " Wh") == NULL && strstr (*l, "PS") == NULL)
        continue;
      figures++;
      if (!lm_figure_says_estimate (*l))
        g_error ("report line without its word: %s", *l);
      if (strstr (*l, "APST") != NULL && strstr (*l, " Wh") != NULL && !lm_figure_says_bound (*l))
        g_error ("report bound without its word: %s", *l);
    }
  g_assert_cmpuint (figures, >=, 4);
  g_string_free (printed, TRUE);
}

/* The HTML report: the NVMe heading and each bar's label. */
static void
test_html (void)
{
  g_autoptr (LmReport) report = nvme_report ();
  g_autofree char *html = lm_report_html (report, NULL);
  const char *p = html;

  assert_contains (html, LM_EST_HTML_HEADING);
  assert_contains (html, LM_EST_HTML_SAVED);
  /* Headings over model figures: the NVMe section and what was saved. */
  while ((p = strstr (p, "<h")) != NULL)
    {
      g_autofree char *h = g_strndup (p, strcspn (p, "\n"));
      if ((strstr (h, "NVMe") != NULL || strstr (h, "saved") != NULL)
          && !lm_figure_says_estimate (h))
        g_error ("HTML heading without its word: %s", h);
      p += 2;
    }
  for (p = html; (p = strstr (p, " Wh</text>")) != NULL; p++)
    {
      const char *start = p;
      while (start > html && *start != '>')
        start--;
      g_autofree char *label = g_strndup (start + 1, p - start - 1);
      if (!lm_figure_says_estimate (label))
        g_error ("HTML label without its word: %s", label);
    }
}

/* The tray's tooltip line for an NVMe disk, from the daemon's keys. */
static void
test_tray (void)
{
  LmTrayState s = on_battery ();
  g_autoptr (GVariant) summary = g_variant_ref_sink (g_variant_new_parsed (
      "{'nvme0n1': {'SpinUpsToday': <uint32 3>, 'AsleepShareToday': <0.9>, "
      "'Apst': <'enabled'>, 'DeepestState': <uint32 4>, %s: <0.414>, %s: <0.12>, %s: <1.9>, "
      "%s: <2.6>, 'EnergySource': <'mixed'>}}",
      LM_EST_DBUS_DEEP_SHARE, LM_EST_DBUS_DEEP_SHARE_STOCK, LM_EST_DBUS_ENERGY,
      LM_EST_DBUS_ENERGY_STOCK));
  g_autoptr (GArray) days = lm_tray_disk_days_from_variant (summary, NULL);
  g_auto (LmTrayView) v = { 0 };

  s.days = (const LmTrayDiskDay *) days->data;
  s.n_days = days->len;
  lm_tray_view_build (&s, &v);
  g_auto (GStrv) lines = g_strsplit (v.body, "\n", -1);
  guint deep = 0;
  for (char **l = lines; *l != NULL; l++)
    if (strstr (*l, "PS4") != NULL)
      {
        deep++;
        /* Every number on it: a share and two energies, each "about". */
        g_assert_nonnull (strstr (*l, "about 41 %"));
        g_assert_nonnull (strstr (*l, "about 12 %"));
        g_assert_nonnull (strstr (*l, "about 1.90 Wh"));
        assert_contains (*l, "estimated");
      }
  g_assert_cmpuint (deep, ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/estimate-words/table", test_table);
  g_test_add_func ("/estimate-words/json", test_json);
  g_test_add_func ("/estimate-words/openmetrics", test_openmetrics);
  g_test_add_func ("/estimate-words/text", test_text);
  g_test_add_func ("/estimate-words/html", test_html);
  g_test_add_func ("/estimate-words/tray", test_tray);
  return g_test_run ();
}
