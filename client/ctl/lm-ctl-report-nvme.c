/* lm-ctl-report-nvme.c: the report's NVMe section: each NVMe disk's time
 * per power state and energy, with laptop mode and under stock writeback,
 * from its own tables (Disks) and the ledger's activity; and each writer's
 * view of it. Every number says where it comes from: all of them come from
 * the replay and the APST walk, estimates named in lm-estimates.h. */
#include "config.h"

#include "lm-ctl-report-model.h"
#include "lm-estimates.h"

#define LIMITS                                                                                     \
  "estimates from a replay of the recorded activity: APST timers are the drive's as read (the "    \
  "kernel may change them); an I/O second counts as a full second of active power; held-back "     \
  "data is written LaptopModeSeconds after the read that woke the disk; time suspended or with "   \
  "the daemon stopped is left out; maximum power is an upper bound"

static double
idle_power (const LmResidencyState *s)
{
  return s->idle_power_w >= 0 ? s->idle_power_w : s->max_power_w;
}

static void
walk (LmReportNvme *n, GArray *spans, GArray *io, LmResidency *r)
{
  lm_residency_walk_spans (&n->table, (gint64 *) io->data, io->len, (const gint64 *) spans->data,
                           spans->len / 2, r);
}

/* The seconds the ledger watched the disk in [@since_s, @until_s): its
 * asleep and awake intervals, merged. Between them the daemon was stopped
 * or the machine suspended: no idle time to estimate. */
static GArray *
watched_spans (const LmReportDisk *d, gint64 since_s, gint64 until_s)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 a = 0, b = G_MININT64;

  for (guint k = 0; k <= d->spans->len; k++)
    {
      gint64 s = G_MAXINT64, e = G_MAXINT64;
      if (k < d->spans->len)
        {
          const LmReportSpan *span = &g_array_index (d->spans, LmReportSpan, k);
          s = MAX (span->start_us / G_USEC_PER_SEC, since_s);
          e = MIN (span->end_us / G_USEC_PER_SEC + (span->end_us % G_USEC_PER_SEC != 0), until_s);
          if (e <= s)
            continue;
        }
      if (b != G_MININT64 && s <= b)
        {
          b = MAX (b, e);
          continue;
        }
      if (b != G_MININT64)
        {
          gint64 pair[2] = { a, b };
          g_array_append_vals (out, pair, 2);
        }
      a = s, b = e;
    }
  return out;
}

void
lm_report_add_nvme (LmReport *report, GVariant *disks, guint max_lost_work_s, guint laptop_mode_s)
{
  if (disks == NULL || !g_variant_is_of_type (disks, G_VARIANT_TYPE ("a{sa{sv}}")))
    return;
  for (guint i = 0; i < report->disks->len; i++)
    {
      LmReportDisk *d = g_ptr_array_index (report->disks, i);
      g_autoptr (GVariant) info = g_variant_lookup_value (disks, d->name, G_VARIANT_TYPE_VARDICT);
      LmReportNvme n = { 0 };

      if (info == NULL || !lm_residency_table_from_disk (info, &n.table))
        continue;
      /* The ledger watched the disk from its first record on, not before. */
      gint64 first_us = report->until_us;
      for (guint k = 0; k < d->spans->len; k++)
        first_us = MIN (first_us, g_array_index (d->spans, LmReportSpan, k).start_us);
      for (guint k = 0; k < d->runs->len; k++)
        first_us = MIN (first_us, g_array_index (d->runs, LmReplayRun, k).start_us);
      gint64 since_us = MAX (report->since_us, first_us);
      gint64 since_s = since_us / G_USEC_PER_SEC, until_s = report->until_us / G_USEC_PER_SEC;
      n.window_s = MAX (0, until_s - since_s);
      n.floor_w = -1;
      for (guint s = 0; s < n.table.n_states; s++)
        if (!n.table.states[s].operational
            && (n.floor_w < 0 || idle_power (&n.table.states[s]) < n.floor_w))
          n.floor_w = idle_power (&n.table.states[s]);
      g_autoptr (GArray) spans = watched_spans (d, since_s, until_s);
      n.estimated = d->runs->len > 0 && spans->len > 0;
      if (n.estimated)
        {
          const LmReplayRun *runs = (const LmReplayRun *) d->runs->data;
          g_autoptr (GArray) laptop = lm_replay_laptop_io (
              runs, d->runs->len, since_us, report->until_us, max_lost_work_s, laptop_mode_s);
          g_autoptr (GArray) stock
              = lm_replay_stock_io (runs, d->runs->len, since_us, report->until_us);
          walk (&n, spans, laptop, &n.laptop);
          walk (&n, spans, stock, &n.stock);
          n.window_s = n.laptop.window_s;
        }
      d->nvme = g_memdup2 (&n, sizeof n);
    }
}

double
lm_report_nvme_deep_share (const LmReportNvme *n, const LmResidency *r)
{
  guint deep = lm_residency_deepest (&n->table);

  return n->window_s > 0 ? r->state_s[deep] / (double) n->window_s : 0;
}

/* At most what running without APST costs: the idle seconds at the
 * working state's idle power rather than the lowest non-operational
 * one's. An upper bound: the working state's power is its IDLP or, not
 * reported, its MP (more than it draws), and the lowest state's is its
 * IDLP or, not reported, 0 (less): never an MP subtracted. */
static double
no_apst_cost_wh (const LmReportNvme *n)
{
  const LmResidencyState *work = &n->table.states[n->table.work_state];
  double idle_s = 0, floor_w = -1;

  if (n->floor_w < 0 || !n->estimated)
    return -1;
  for (guint s = 0; s < n->table.n_states; s++)
    {
      const LmResidencyState *st = &n->table.states[s];
      idle_s += n->laptop.state_s[s];
      if (!st->operational && (floor_w < 0 || MAX (0, st->idle_power_w) < floor_w))
        floor_w = MAX (0, st->idle_power_w);
    }
  return MAX (0, idle_s * (idle_power (work) - floor_w) / 3600.0);
}

static const char *
source_words (const char *source)
{
  if (g_str_equal (source, "idlp_actp"))
    return "from the drive's idle and active power (IDLP/ACTP)";
  if (g_str_equal (source, "max_power"))
    return "from each state's maximum power: an upper bound";
  return "from IDLP/ACTP where the drive reports them, else maximum power (an upper bound)";
}

void
lm_report_nvme_text (const LmReportDisk *d)
{
  const LmReportNvme *n = d->nvme;

  if (n == NULL)
    return;
  if (n->table.apst != LM_APST_ENABLED)
    {
      double cost = no_apst_cost_wh (n);
      g_print ("  APST %s: the drive stays in PS%u whenever idle",
               lm_apst_mode_to_string (n->table.apst), n->table.work_state);
      if (n->floor_w < 0)
        g_print (" (it has no non-operational state to go to)\n");
      else if (cost >= 0)
        g_print (LM_EST_TEXT_NO_APST " (%.4f W)\n", cost, n->floor_w);
      else
        g_print ("\n");
    }
  if (!n->estimated)
    {
      g_print ("  no activity recorded, no deep-idle estimate\n");
      return;
    }
  guint deep = lm_residency_deepest (&n->table);
  g_print (LM_EST_TEXT_DEEP, deep, 100 * lm_report_nvme_deep_share (n, &n->laptop),
           100 * lm_report_nvme_deep_share (n, &n->stock), n->laptop.energy_wh, n->stock.energy_wh);
  g_print ("  energy %s; %s\n", source_words (lm_residency_energy_source (&n->laptop)), LIMITS);
}

static void
residency_json (JsonBuilder *b, const LmReportNvme *n, const LmResidency *r)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "deep_idle");
  json_builder_begin_array (b);
  for (guint s = 0; s < n->table.n_states; s++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "state");
      json_builder_add_int_value (b, s);
      json_builder_set_member_name (b, "seconds");
      json_builder_add_double_value (b, r->state_s[s]);
      json_builder_set_member_name (b, "share");
      json_builder_add_double_value (b, n->window_s > 0 ? r->state_s[s] / n->window_s : 0);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "active_s");
  json_builder_add_double_value (b, r->active_s);
  json_builder_set_member_name (b, "energy_wh");
  json_builder_add_double_value (b, r->energy_wh);
  json_builder_set_member_name (b, "energy_source");
  json_builder_add_string_value (b, lm_residency_energy_source (r));
  json_builder_end_object (b);
}

void
lm_report_nvme_json (JsonBuilder *b, const LmReportDisk *d)
{
  const LmReportNvme *n = d->nvme;

  if (n == NULL)
    return;
  json_builder_set_member_name (b, "nvme");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "apst");
  json_builder_add_string_value (b, lm_apst_mode_to_string (n->table.apst));
  json_builder_set_member_name (b, "work_state");
  json_builder_add_int_value (b, n->table.work_state);
  json_builder_set_member_name (b, "deepest_state");
  json_builder_add_int_value (b, lm_residency_deepest (&n->table));
  json_builder_set_member_name (b, "window_s");
  json_builder_add_int_value (b, n->window_s);
  json_builder_set_member_name (b, LM_EST_JSON_NO_APST);
  double cost = n->table.apst != LM_APST_ENABLED ? no_apst_cost_wh (n) : -1;
  if (cost >= 0)
    json_builder_add_double_value (b, cost);
  else
    json_builder_add_null_value (b);
  /* null where no activity was recorded: no estimate, rather than zero. */
  json_builder_set_member_name (b, LM_EST_JSON_LAPTOP);
  if (n->estimated)
    residency_json (b, n, &n->laptop);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, LM_EST_JSON_STOCK);
  if (n->estimated)
    residency_json (b, n, &n->stock);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "limits");
  json_builder_add_string_value (b, LIMITS);
  json_builder_end_object (b);
}

void
lm_report_nvme_openmetrics (GString *out, const LmReport *report)
{
  static const char *const help[]
      = { "# HELP " LM_EST_METRIC_STATE " Estimated seconds an NVMe disk would spend idle in "
          "each power state over the ledger's watched range, the recorded activity replayed "
          "(policy: laptop_mode or stock) and walked through its APST table.\n"
          "# TYPE " LM_EST_METRIC_STATE " gauge\n",
          "# HELP " LM_EST_METRIC_ENERGY " Estimated energy of an NVMe disk over the ledger's "
          "watched range (source: idlp_actp, max_power as an upper bound, or mixed).\n"
          "# TYPE " LM_EST_METRIC_ENERGY " gauge\n" };
  gboolean any = FALSE;

  for (guint i = 0; i < report->disks->len; i++)
    {
      const LmReportDisk *d = g_ptr_array_index (report->disks, i);
      any = any || (d->nvme != NULL && d->nvme->estimated);
    }
  if (!any)
    return;
  for (guint what = 0; what < 2; what++)
    {
      g_string_append (out, help[what]);
      for (guint i = 0; i < report->disks->len; i++)
        {
          const LmReportDisk *d = g_ptr_array_index (report->disks, i);
          const LmReportNvme *n = d->nvme;
          if (n == NULL || !n->estimated)
            continue;
          /* Disk names are kernel names the daemon checked; escaped anyway. */
          g_autofree char *disk = lm_escape (d->name, -1, LM_ESCAPE_DEFAULT);
          g_autofree char *fit = lm_ctl_fit (disk, 64);
          for (guint p = 0; p < 2; p++)
            {
              const LmResidency *r = p == 0 ? &n->laptop : &n->stock;
              const char *policy = p == 0 ? "laptop_mode" : "stock";
              if (what == 1)
                {
                  g_string_append_printf (out,
                                          LM_EST_METRIC_ENERGY "{disk=\"%s\",policy=\"%s\","
                                                               "source=\"%s\"} %.6f\n",
                                          fit, policy, lm_residency_energy_source (r),
                                          r->energy_wh);
                  continue;
                }
              for (guint s = 0; s < n->table.n_states; s++)
                g_string_append_printf (out,
                                        LM_EST_METRIC_STATE "{disk=\"%s\",policy=\"%s\","
                                                            "state=\"ps%u\"} %.3f\n",
                                        fit, policy, s, r->state_s[s]);
            }
        }
    }
}

void
lm_report_nvme_html (GString *out, const LmReportDisk *d)
{
  const LmReportNvme *n = d->nvme;
  static const char *const colours[]
      = { "#e4572e", "#f3a712", "#f6d55c", "#7fb7be", "#4a90c2", "#2a5d8f" };

  if (n == NULL)
    return;
  g_string_append (out, LM_EST_HTML_HEADING);
  if (n->table.apst != LM_APST_ENABLED)
    g_string_append_printf (out,
                            "<p class=\"apst\">APST %s: the drive stays in PS%u whenever "
                            "idle.</p>\n",
                            lm_apst_mode_to_string (n->table.apst), n->table.work_state);
  if (!n->estimated)
    {
      g_string_append (out, "<p>No activity recorded, no deep-idle estimate.</p>\n");
      return;
    }
  /* One bar per policy, a segment per state (and one for I/O seconds). */
  g_string_append (out, "<svg class=\"nvme\" viewBox=\"0 0 960 70\" width=\"960\" height=\"70\" "
                        "role=\"img\">\n");
  for (guint p = 0; p < 2; p++)
    {
      const LmResidency *r = p == 0 ? &n->laptop : &n->stock;
      double x = 140, total = MAX (1, n->window_s);
      int y = 8 + 30 * (int) p;
      g_string_append_printf (out, "<text x=\"0\" y=\"%d\">%s %.2f Wh</text>\n", y + 14,
                              p == 0 ? LM_EST_HTML_BAR_LAPTOP : LM_EST_HTML_BAR_STOCK,
                              r->energy_wh);
      double w = r->active_s / total * 800;
      g_string_append_printf (out,
                              "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"20\" "
                              "fill=\"#222\"><title>I/O %.0f s</title></rect>\n",
                              x, y, w, r->active_s);
      x += w;
      for (guint s = 0; s < n->table.n_states; s++)
        {
          w = r->state_s[s] / total * 800;
          g_string_append_printf (out,
                                  "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"20\" "
                                  "fill=\"%s\"><title>PS%u idle %.0f s (%.1f %%)</title></rect>\n",
                                  x, y, w, colours[MIN (s, G_N_ELEMENTS (colours) - 1)], s,
                                  r->state_s[s], 100 * r->state_s[s] / total);
          x += w;
        }
    }
  g_string_append (out, "</svg>\n");
  g_string_append_printf (out, "<p class=\"method\">Energy %s. %s.</p>\n",
                          source_words (lm_residency_energy_source (&n->laptop)), LIMITS);
}
