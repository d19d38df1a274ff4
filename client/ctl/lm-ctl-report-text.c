/* lm-ctl-report-text.c: laptop-modectl report in the terminal: per disk a
 * one-line timeline, spin-ups per hour and the top wakers, names escaped. */
#include "config.h"

#include <stdio.h>

#include "lm-ctl-report-model.h"
#include "lm-estimates.h"

#define TIMELINE_CELLS 48

/* One cell: mostly awake, mostly asleep, both, or nothing recorded. */
static const char *
cell (double asleep, double known, gboolean utf8)
{
  if (asleep < 0 || known < 0.05)
    return utf8 ? "·" : " ";
  if (asleep >= 0.9)
    return utf8 ? "░" : ".";
  if (asleep <= 0.1)
    return utf8 ? "█" : "#";
  return utf8 ? "▒" : "+";
}

static void
print_timeline (const LmReport *report, const LmReportDisk *d, gboolean utf8)
{
  gint64 span = report->until_us - report->since_us;
  g_autoptr (GString) line = g_string_new (NULL);

  for (int i = 0; i < TIMELINE_CELLS; i++)
    {
      gint64 a = report->since_us + span * i / TIMELINE_CELLS;
      gint64 b = report->since_us + span * (i + 1) / TIMELINE_CELLS;
      double known = 0, asleep = lm_report_asleep_share (d, a, b, &known);
      /* A spin-up in the cell shows even where the disk slept around it. */
      gboolean woke = FALSE;
      for (guint k = 0; k < d->spinups->len && !woke; k++)
        {
          const LmReportSpinUp *s = g_ptr_array_index (d->spinups, k);
          woke = s->time_us >= a && s->time_us < b;
        }
      g_string_append (line,
                       woke && asleep > 0.9 ? (utf8 ? "▒" : "+") : cell (asleep, known, utf8));
    }
  g_autofree char *from = lm_ctl_format_time (report->since_us);
  g_autofree char *to = lm_ctl_format_time (report->until_us);
  g_print ("  %s |%s| %s\n", from + 11, line->str, to + 11);
  g_print ("  %s awake, %s asleep, %s both, %s not recorded\n", utf8 ? "█" : "#", utf8 ? "░" : ".",
           utf8 ? "▒" : "+", utf8 ? "·" : "' '");
}

static void
print_hourly (const LmReportDisk *d, gboolean utf8)
{
  static const char *const bars[] = { " ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
  static const char ascii[] = " .:-=+*#%";
  guint max = 0;

  for (int h = 0; h < 24; h++)
    max = MAX (max, d->hourly[h]);
  g_autoptr (GString) line = g_string_new (NULL);
  for (int h = 0; h < 24; h++)
    {
      guint level = max > 0 ? (d->hourly[h] * 8 + max - 1) / max : 0;
      if (utf8)
        g_string_append (line, bars[level]);
      else
        g_string_append_c (line, ascii[level]);
    }
  g_print ("  spin-ups by hour |%s| 00-23, most %u in an hour\n", line->str, max);
}

static void
print_disk (const LmReport *report, const LmReportDisk *d, gboolean utf8)
{
  g_autofree char *name = lm_ctl_safe (d->name);
  gint64 total = d->asleep_s + d->awake_s;

  g_print ("%s: %u spin-ups, asleep %s", name, d->spinups->len, total > 0 ? "" : "?");
  if (total > 0)
    g_print ("%.0f %%", 100.0 * (double) d->asleep_s / (double) total);
  g_print (" (%" G_GINT64_FORMAT " s asleep, %" G_GINT64_FORMAT " s awake)\n", d->asleep_s,
           d->awake_s);
  print_timeline (report, d, utf8);
  print_hourly (d, utf8);
  if (d->wakers->len == 0)
    g_print ("  no spin-ups recorded\n");
  else
    g_print ("  %-16s %-10s %s\n", "top wakers", "how", "spin-ups");
  for (guint i = 0; i < d->wakers->len && i < LM_REPORT_TOP_WAKERS; i++)
    {
      const LmReportWaker *w = g_ptr_array_index (d->wakers, i);
      g_autofree char *comm = lm_ctl_safe (w->comm);
      /* Said in full: cut, it would read as a process name. */
      g_autofree char *fit
          = g_str_equal (w->comm, LM_OTHER_USER_TEXT) ? g_strdup (comm) : lm_ctl_fit (comm, 16);
      g_autofree char *via = lm_ctl_safe (w->via);
      g_print ("  %-16s %-10s %u", fit, via, w->count);
      if (w->rhythm != NULL)
        g_print (", %s", w->rhythm);
      /* The program's named threads that did it: a detail. */
      for (guint k = 0; k < w->threads->len; k++)
        {
          g_autofree char *thread = lm_ctl_safe (w->threads->pdata[k]);
          g_print ("%s%s", k == 0 ? "  (threads: " : ", ", thread);
        }
      g_print ("%s", w->threads->len > 0 ? ")" : "");
      if (w->unit != NULL)
        {
          g_autofree char *unit = lm_ctl_safe (w->unit);
          g_print ("  [%s]", unit);
        }
      g_print ("\n");
    }
  if (d->runs->len == 0)
    g_print ("  no activity recorded, no estimate\n");
  else
    {
      g_print (LM_EST_TEXT_STOCK, d->stock.spinups, d->stock.awake_s, d->recorded.spinups,
               d->recorded.awake_s);
      if (d->stock_unsure != 0)
        g_print ("  (less sure: %s)\n", lm_replay_unsure_to_string (d->stock_unsure));
    }
  lm_report_nvme_text (d);
  lm_report_wear_text (d);
  lm_report_deferred_text (d);
}

void
lm_report_print_text (const LmReport *report, gboolean utf8)
{
  g_autofree char *from = lm_ctl_format_time (report->since_us);
  g_autofree char *to = lm_ctl_format_time (report->until_us);

  g_print ("Spin-up ledger from %s to %s\n", from, to);
  if (report->unwritten_since_us > 0)
    {
      g_autofree char *since = lm_ctl_format_time (report->unwritten_since_us);
      g_autofree char *disk = lm_ctl_safe (report->unwritten_disk);
      /* They are shown above all the same; a crash is what loses them. */
      g_print ("Records since %s wait in memory until %s is awake anyway (written then, at a "
               "stop and before suspend; a crash would lose them)\n",
               since, disk);
    }
  if (report->disks->len == 0)
    g_print ("Nothing recorded.\n");
  for (guint i = 0; i < report->disks->len; i++)
    {
      g_print ("\n");
      print_disk (report, g_ptr_array_index (report->disks, i), utf8);
    }
  lm_report_measurement_text (report);
  if (report->conflicts != NULL && g_variant_n_children (report->conflicts) > 0)
    {
      g_print ("\n");
      lm_ctl_print_conflicts (report->conflicts, report->conflict_writers);
    }
}
