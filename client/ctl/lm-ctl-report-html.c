/* lm-ctl-report-html.c: laptop-modectl report --html: one self-contained
 * page (inline SVG and CSS, no script, nothing fetched); every name escaped. */
#include "config.h"

#include "lm-ctl-report-model.h"
#include "lm-estimates.h"

#define TL_WIDTH 960
#define TL_BAND_Y 46
#define TL_BAND_H 26

/* Outside text for HTML: terminal-safe first (control bytes as \xNN, which
 * no markup parser acts on), then the five HTML specials. */
static char *
h (const char *text)
{
  g_autofree char *safe = lm_escape (text != NULL ? text : "", -1, LM_ESCAPE_DEFAULT);

  return g_markup_escape_text (safe, -1);
}

static double
x_of (const LmReport *report, gint64 t)
{
  double span = (double) MAX (1, report->until_us - report->since_us);

  return CLAMP ((double) (t - report->since_us) / span, 0.0, 1.0) * TL_WIDTH;
}

/* Labels: 9 px text, a character about 5.5 px wide at most in the sans
 * fonts browsers pick; three rows above the band. */
#define TL_LABEL_ROWS 3
#define TL_LABEL_CHAR_W 5.5
#define TL_LABEL_GAP 4

/* @label's width in the timeline (escaped text: an entity is one character). */
static double
label_width (const char *label)
{
  glong n = 0;

  for (const char *p = label; *p != '\0'; p = g_utf8_next_char (p))
    {
      if (*p == '&')
        {
          const char *semi = strchr (p, ';');
          if (semi != NULL)
            p = semi;
        }
      n++;
    }
  return (double) n * TL_LABEL_CHAR_W;
}

/* How many marks from @i on, of the same program, lie under the label the
 * cluster would get ("name ×N"): they share it. */
static guint
cluster_size (const LmReport *report, const LmReportDisk *d, guint i)
{
  const LmReportSpinUp *first = g_ptr_array_index (d->spinups, i);
  double x = x_of (report, first->time_us);
  g_autofree char *name = h (first->comm);
  guint n = 1;

  while (i + n < d->spinups->len)
    {
      const LmReportSpinUp *s = g_ptr_array_index (d->spinups, i + n);
      g_autofree char *label = g_strdup_printf ("%s ×%u", name, n + 1);
      if (!g_str_equal (s->comm, first->comm)
          || x_of (report, s->time_us) > x + 2 + label_width (label))
        break;
      n++;
    }
  return n;
}

static void
timeline (GString *out, const LmReport *report, const LmReportDisk *d, guint index)
{
  g_string_append_printf (out,
                          "<svg class=\"timeline\" id=\"timeline-%u\" viewBox=\"0 0 %d 96\" "
                          "width=\"%d\" height=\"96\" role=\"img\">\n"
                          "<rect class=\"unknown\" x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n",
                          index, TL_WIDTH, TL_WIDTH, TL_BAND_Y, TL_WIDTH, TL_BAND_H);
  for (guint i = 0; i < d->spans->len; i++)
    {
      const LmReportSpan *s = &g_array_index (d->spans, LmReportSpan, i);
      double x0 = x_of (report, s->start_us), x1 = x_of (report, s->end_us);
      g_string_append_printf (out,
                              "<rect class=\"band %s\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
                              "height=\"%d\"/>\n",
                              s->asleep ? "asleep" : "awake", x0, TL_BAND_Y, MAX (0.5, x1 - x0),
                              TL_BAND_H);
    }
  /* Nearby marks of one program share one label with a count ("firefox
   * ×5"); a label goes on the first of three rows where it overlaps none,
   * else it is left out (each mark's title names it in full). */
  double row_end[TL_LABEL_ROWS] = { -1e9, -1e9, -1e9 };
  guint label_of = 0, cluster = 0;
  for (guint i = 0; i < d->spinups->len; i++)
    {
      const LmReportSpinUp *s = g_ptr_array_index (d->spinups, i);
      double x = x_of (report, s->time_us);
      g_autofree char *label = NULL;
      int row = -1;
      if (i == label_of)
        {
          cluster = cluster_size (report, d, i);
          label_of = i + cluster;
          g_autofree char *name = h (s->comm);
          label = cluster > 1 ? g_strdup_printf ("%s ×%u", name, cluster) : g_steal_pointer (&name);
          double w = label_width (label);
          for (int r = 0; r < TL_LABEL_ROWS && row < 0; r++)
            if (row_end[r] <= x)
              row = r;
          if (row >= 0)
            row_end[row] = x + 2 + w + TL_LABEL_GAP;
        }
      g_autofree char *comm = h (s->comm), *via = h (s->via);
      g_autofree char *path = s->path != NULL ? h (s->path) : NULL;
      g_autofree char *when = lm_ctl_format_time (s->time_us);
      g_autofree char *thread = s->thread != NULL ? h (s->thread) : NULL;
      g_autofree char *who
          = thread != NULL ? g_strdup_printf ("%s, thread %s", comm, thread) : g_strdup (comm);
      int y = 12 + MAX (row, 0) * 11;
      g_string_append_printf (out,
                              "<g class=\"spinup\"><title>%s: %s (%s)%s%s</title>"
                              "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\"/>"
                              "<circle cx=\"%.2f\" cy=\"%d\" r=\"3\"/>",
                              when, who, via, path != NULL ? " " : "", path != NULL ? path : "", x,
                              y, x, TL_BAND_Y + TL_BAND_H, x, TL_BAND_Y - 2);
      if (row >= 0)
        g_string_append_printf (out, "<text x=\"%.2f\" y=\"%d\">%s</text>", x + 2, 10 + row * 11,
                                label);
      g_string_append (out, "</g>\n");
    }
  g_autofree char *from = lm_ctl_format_time (report->since_us);
  g_autofree char *to = lm_ctl_format_time (report->until_us);
  g_string_append_printf (out,
                          "<text class=\"axis\" x=\"0\" y=\"92\">%s</text>"
                          "<text class=\"axis\" x=\"%d\" y=\"92\" text-anchor=\"end\">%s</text>\n"
                          "</svg>\n",
                          from, TL_WIDTH, to);
}

static void
hourly_chart (GString *out, const LmReportDisk *d, guint index)
{
  guint max = 1;

  for (int i = 0; i < 24; i++)
    max = MAX (max, d->hourly[i]);
  g_string_append_printf (out,
                          "<svg class=\"chart\" id=\"chart-%u\" viewBox=\"0 0 480 150\" "
                          "width=\"480\" height=\"150\" role=\"img\">\n",
                          index);
  for (int i = 0; i < 24; i++)
    {
      double bh = 100.0 * d->hourly[i] / max;
      g_string_append_printf (out,
                              "<g class=\"bar\"><title>%02d:00: %u spin-ups</title>"
                              "<rect x=\"%d\" y=\"%.2f\" width=\"16\" height=\"%.2f\"/>",
                              i, d->hourly[i], 8 + i * 19, 120 - bh, bh);
      if (d->hourly[i] > 0)
        g_string_append_printf (out, "<text x=\"%d\" y=\"%.2f\">%u</text>", 16 + i * 19, 116 - bh,
                                d->hourly[i]);
      if (i % 3 == 0)
        g_string_append_printf (out, "<text class=\"axis\" x=\"%d\" y=\"136\">%02d</text>",
                                16 + i * 19, i);
      g_string_append (out, "</g>\n");
    }
  g_string_append (out, "<line x1=\"4\" y1=\"120\" x2=\"466\" y2=\"120\"/></svg>\n");
}

static void
wakers_table (GString *out, const LmReport *report)
{
  g_string_append (out, "<table class=\"wakers\" id=\"wakers\">\n<thead><tr><th>Disk</th>"
                        "<th>Process</th><th>How</th><th>Spin-ups</th><th>Last file</th>"
                        "</tr></thead>\n<tbody>\n");
  for (guint i = 0; i < report->disks->len; i++)
    {
      const LmReportDisk *d = g_ptr_array_index (report->disks, i);
      g_autofree char *disk = h (d->name);
      for (guint k = 0; k < d->wakers->len && k < LM_REPORT_TOP_WAKERS; k++)
        {
          const LmReportWaker *w = g_ptr_array_index (d->wakers, k);
          const char *path = NULL;
          for (guint j = 0; j < d->spinups->len; j++)
            {
              const LmReportSpinUp *s = g_ptr_array_index (d->spinups, j);
              if (s->path != NULL && g_str_equal (s->comm, w->comm) && g_str_equal (s->via, w->via))
                path = s->path;
            }
          g_autofree char *comm = h (w->comm), *via = h (w->via), *p = h (path);
          g_autoptr (GString) threads = g_string_new (NULL);
          for (guint t = 0; t < w->threads->len; t++)
            {
              g_autofree char *name = h (w->threads->pdata[t]);
              g_string_append_printf (threads, "%s%s", t == 0 ? "" : ", ", name);
            }
          g_string_append_printf (out,
                                  "<tr><td>%s</td><td>%s%s%s%s</td><td>%s</td>"
                                  "<td class=\"n\">%u</td><td class=\"path\">%s</td></tr>\n",
                                  disk, comm,
                                  threads->len ? " <span class=\"threads\">(threads: " : "",
                                  threads->str, threads->len ? ")</span>" : "", via, w->count, p);
        }
    }
  g_string_append (out, "</tbody></table>\n");
}

static void
saved (GString *out, const LmReport *report)
{
  gboolean any = FALSE;

  g_string_append (out, "<section id=\"saved\">" LM_EST_HTML_SAVED);
  g_string_append (out, "<table class=\"saved\"><thead><tr><th>Disk</th><th>Spin-ups</th>"
                        "<th>Stock writeback (estimate)</th><th>Awake</th>"
                        "<th>Stock awake (estimate)</th></tr></thead>\n<tbody>\n");
  for (guint i = 0; i < report->disks->len; i++)
    {
      const LmReportDisk *d = g_ptr_array_index (report->disks, i);
      g_autofree char *disk = h (d->name);
      if (d->runs->len == 0)
        {
          g_string_append_printf (out,
                                  "<tr><td>%s</td><td class=\"n\">%u</td><td colspan=\"3\">"
                                  "no activity recorded, no estimate</td></tr>\n",
                                  disk, d->recorded.spinups);
          continue;
        }
      any = TRUE;
      g_string_append_printf (out,
                              "<tr><td>%s</td><td class=\"n\">%u</td><td class=\"n\">%u</td>"
                              "<td class=\"n\">%" G_GINT64_FORMAT
                              " s</td><td class=\"n\">%" G_GINT64_FORMAT " s</td></tr>\n",
                              disk, d->recorded.spinups, d->stock.spinups, d->recorded.awake_s,
                              d->stock.awake_s);
      if (d->stock_unsure != 0)
        {
          g_autofree char *why = h (lm_replay_unsure_to_string (d->stock_unsure));
          g_string_append_printf (out, "<tr><td></td><td colspan=\"4\">less sure: %s</td></tr>\n",
                                  why);
        }
    }
  g_string_append (out, "</tbody></table>\n");
  g_string_append_printf (
      out,
      "<p class=\"method\">How the estimate is made: the daemon records, per disk, runs of "
      "seconds in which processes read from the disk, wrote to it directly, or dirtied data on "
      "its filesystems. These are replayed against the kernel's stock policy: reads and direct "
      "writes reach the disk when they were recorded; dirty data is written at the first %d s "
      "writeback tick after it expires, %d s after the file was first dirtied since its "
      "last write-back (where the records do not say which file, each filesystem's data as "
      "one), with all dirtied in it meanwhile; and a metadata change (on ext4 also the "
      "allocation at write-back) commits on "
      "the clock of the filesystem it was made on: ext4's journal %d s after it opens a "
      "transaction, btrfs's transaction %d s, xfs's log %d s, nothing more without a journal. "
      "The disk is taken as asleep at the "
      "start and spins up for any I/O after an idle gap of its standby timer (else %d s, as "
      "bench/engine_bench.py counts a spin-up), staying awake that long after each I/O. The "
      "spin-ups and awake seconds of that replay are shown next to those recorded with laptop "
      "mode.%s</p>\n</section>\n",
      LM_REPLAY_WRITEBACK_S, LM_REPLAY_DIRTY_EXPIRE_S, LM_REPLAY_COMMIT_S, LM_REPLAY_BTRFS_COMMIT_S,
      LM_REPLAY_XFS_LOG_S, LM_REPLAY_DEFAULT_IDLE_S,
      any ? ""
          : " This ledger has no activity records (an older daemon), so there is nothing to "
            "replay.");
}

static const char css[]
    = "body{font:14px/1.4 sans-serif;margin:24px;color:#222;background:#fff;max-width:1000px}"
      "h1{font-size:22px}h2{font-size:17px;margin-top:28px}"
      ".band.awake{fill:#e4572e}.band.asleep{fill:#4a90c2}.unknown{fill:#eee}"
      ".spinup line{stroke:#222;stroke-width:1}.spinup circle{fill:#222}"
      ".spinup text{font-size:9px;fill:#333}.axis{font-size:10px;fill:#666}"
      ".chart rect{fill:#e4572e}.chart text{font-size:9px;text-anchor:middle}"
      ".chart line{stroke:#999}"
      "table{border-collapse:collapse;margin:8px 0}th,td{border-bottom:1px solid #ddd;"
      "padding:3px 10px;text-align:left}td.n{text-align:right}"
      "td.path{font-family:monospace;font-size:12px;word-break:break-all}"
      ".legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;"
      "vertical-align:middle}.method{max-width:760px;color:#444}";

/* The disk's deferred runs, as report's text says them; nothing without. */
static void
deferred_list (GString *out, const GPtrArray *deferred)
{
  if (deferred->len == 0)
    return;
  g_string_append (out, "<h3>Deferred runs</h3>\n<ul class=\"deferred\">\n");
  for (guint k = 0; k < deferred->len; k++)
    {
      const LmReportDeferred *r = g_ptr_array_index (deferred, k);
      g_autofree char *when = lm_ctl_format_time (r->end_us);
      g_autofree char *sentence = lm_report_deferred_sentence (r);
      g_autofree char *text = h (sentence);
      g_string_append_printf (out, "<li>%s: %s</li>\n", when, text);
    }
  g_string_append (out, "</ul>\n");
}

/* Beside the chart: each cause, biggest first, with the table of known
 * causes' sentences, or what is known where it has none. */
static void
causes_table (GString *out, const LmReportDisk *d, const LmAdvice *advice)
{
  g_autoptr (GPtrArray) causes = lm_report_causes (d, advice);

  if (causes->len == 0)
    return;
  g_string_append (out, "<h3>Why it woke</h3>\n<table class=\"causes\"><thead><tr><th>program</th>"
                        "<th>how</th><th>spin-ups</th><th>rhythm</th><th>awake</th>"
                        "<th>what it is; what would avoid it</th></tr></thead><tbody>\n");
  for (guint i = 0; i < causes->len && i < LM_REPORT_TOP_WAKERS; i++)
    {
      const LmReportCause *c = g_ptr_array_index (causes, i);
      g_autofree char *raw = c->waker->unit != NULL
                                 ? g_strdup_printf ("%s (%s)", c->waker->comm, c->waker->unit)
                                 : g_strdup (c->waker->comm);
      g_autofree char *comm = h (raw);
      g_autofree char *rhythm = lm_rhythm_to_string (&c->rhythm);
      g_autofree char *rhythm_h = h (rhythm != NULL ? rhythm : "");
      g_autofree char *what = h (c->matched ? c->advice.what : "Not a known cause: no advice.");
      g_autofree char *avoid = c->matched ? h (c->advice.avoid) : NULL;
      g_string_append_printf (out,
                              "<tr><td>%s</td><td>%s</td><td class=\"n\">%u</td><td>%s</td>"
                              "<td class=\"n\">%" G_GINT64_FORMAT " s</td><td>%s%s%s</td></tr>\n",
                              comm, lm_report_how_text (c->waker->via), c->spinups, rhythm_h,
                              c->awake_s, what, avoid != NULL ? "<br/><em>To avoid it:</em> " : "",
                              avoid != NULL ? avoid : "");
    }
  g_string_append (out, "</tbody></table>\n");
}

char *
lm_report_html (const LmReport *report, const LmAdvice *advice)
{
  GString *out = g_string_new (NULL);
  g_autofree char *from = lm_ctl_format_time (report->since_us);
  g_autofree char *to = lm_ctl_format_time (report->until_us);

  g_string_append_printf (out,
                          "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>"
                          "<title>laptop-moded report</title>\n<style>%s</style></head>\n<body>\n"
                          "<h1>What woke the disks, %s – %s</h1>\n"
                          "<p class=\"legend\"><span style=\"background:#e4572e\"></span>awake"
                          "<span style=\"background:#4a90c2\"></span>asleep"
                          "<span style=\"background:#eee\"></span>not recorded; a mark is a "
                          "spin-up, labelled by the process that caused it.</p>\n",
                          css, from, to);
  if (report->disks->len == 0)
    g_string_append (out, "<p>Nothing recorded in this range.</p>\n");
  for (guint i = 0; i < report->disks->len; i++)
    {
      const LmReportDisk *d = g_ptr_array_index (report->disks, i);
      g_autofree char *name = h (d->name);
      gint64 total = d->asleep_s + d->awake_s;
      g_string_append_printf (out, "<section class=\"disk\"><h2>%s: %u spin-ups", name,
                              d->spinups->len);
      if (total > 0)
        g_string_append_printf (out, ", asleep %.0f %%",
                                100.0 * (double) d->asleep_s / (double) total);
      g_string_append (out, "</h2>\n");
      timeline (out, report, d, i);
      causes_table (out, d, advice);
      g_string_append (out, "<h3>Spin-ups per hour of the day</h3>\n");
      hourly_chart (out, d, i);
      lm_report_nvme_html (out, d);
      deferred_list (out, d->deferred);
      g_string_append (out, "</section>\n");
    }
  g_string_append (out, "<h2>Top wakers</h2>\n");
  wakers_table (out, report);
  saved (out, report);
  if (report->measurement != NULL)
    {
      g_autofree char *sentence = lm_report_measurement_sentence (report->measurement);
      g_autofree char *text = h (sentence);
      g_string_append_printf (out, "<h2>Watts</h2>\n<p class=\"measured\">%c%s.</p>\n",
                              g_ascii_toupper (text[0]), text + 1);
    }
  g_string_append (out, "</body></html>\n");
  return g_string_free (out, FALSE);
}
