/* lm-ctl-causes.c: a disk's causes of wake-ups from the report's model
 * (explain, report --html): per program, how and unit, what each cost in
 * spin-ups and awake time, its files and rhythm, and the table of known
 * causes' entry for it. Pure: no bus, no output. */
#include "config.h"

#include <string.h>

#include "lm-ctl-report-model.h"

static void
cause_free (gpointer p)
{
  LmReportCause *c = p;

  g_ptr_array_unref (c->files);
  lm_advice_match_clear (&c->advice);
  g_free (c);
}

/* The awake spell holding @t_us (its index), -1: none recorded. */
static gint
awake_span_at (const LmReportDisk *d, gint64 t_us)
{
  guint lo = 0, hi = d->spans->len;

  /* The spans are by start (the model sorts them): past the last that
   * starts by @t_us, found by halving, a month of them being thousands.
   * A spin-up is stamped at its I/O, which may come just before the awake
   * spell's record begins. */
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (d->spans, LmReportSpan, mid).start_us - G_USEC_PER_SEC <= t_us)
        lo = mid + 1;
      else
        hi = mid;
    }
  /* The spells before it; recorded spans may touch or overlap a little. */
  for (guint k = lo; k > 0 && k + 4 > lo; k--)
    {
      const LmReportSpan *s = &g_array_index (d->spans, LmReportSpan, k - 1);
      if (!s->asleep && t_us >= s->start_us - G_USEC_PER_SEC && t_us < s->end_us)
        return (gint) (k - 1);
    }
  return -1;
}

static gint
cmp_cause (gconstpointer a, gconstpointer b)
{
  const LmReportCause *x = *(LmReportCause *const *) a, *y = *(LmReportCause *const *) b;

  if (x->awake_s != y->awake_s)
    return x->awake_s > y->awake_s ? -1 : 1;
  if (x->spinups != y->spinups)
    return x->spinups > y->spinups ? -1 : 1;
  return strcmp (x->waker->comm, y->waker->comm);
}

/* One cause per program and how (the report's wakers), its cost and
 * files, matched against @advice; biggest first. */
GPtrArray *
lm_report_causes (const LmReportDisk *d, const LmAdvice *advice)
{
  GPtrArray *causes = g_ptr_array_new_with_free_func (cause_free);
  g_autoptr (GHashTable) by_waker = g_hash_table_new (NULL, NULL);
  gint last_span = -1;

  for (guint i = 0; i < d->wakers->len; i++)
    {
      LmReportCause *c = g_new0 (LmReportCause, 1);
      c->waker = g_ptr_array_index (d->wakers, i);
      c->files = g_ptr_array_new_with_free_func (g_free);
      lm_rhythm_find ((const gint64 *) c->waker->times->data, c->waker->times->len, NULL,
                      &c->rhythm);
      g_ptr_array_add (causes, c);
    }
  for (guint i = 0; i < d->spinups->len; i++)
    {
      const LmReportSpinUp *s = g_ptr_array_index (d->spinups, i);
      LmReportCause *c = NULL;
      for (guint k = 0; k < causes->len && c == NULL; k++)
        {
          LmReportCause *t = g_ptr_array_index (causes, k);
          if (g_str_equal (t->waker->comm, s->comm) && g_str_equal (t->waker->via, s->via)
              && (!d->by_unit || g_strcmp0 (t->waker->unit, s->unit) == 0))
            c = t;
        }
      if (c == NULL)
        continue;
      c->spinups++;
      /* An awake spell is the cost of the first spin-up in it only. */
      gint span = awake_span_at (d, s->time_us);
      if (span >= 0 && span != last_span)
        {
          const LmReportSpan *sp = &g_array_index (d->spans, LmReportSpan, span);
          c->awake_s += (sp->end_us - MAX (sp->start_us, s->time_us)) / G_USEC_PER_SEC;
          last_span = span;
        }
      if (s->path != NULL && *s->path != '\0'
          && !g_ptr_array_find_with_equal_func (c->files, s->path, g_str_equal, NULL))
        {
          if (c->files->len < LM_REPORT_CAUSE_FILES)
            g_ptr_array_add (c->files, g_strdup (s->path));
          else
            c->more_files++;
        }
    }
  for (guint i = 0; i < causes->len; i++)
    {
      LmReportCause *c = g_ptr_array_index (causes, i);
      /* Another user's process is named by nothing: no advice to match. */
      if (g_str_equal (c->waker->comm, LM_OTHER_USER_TEXT) || advice == NULL)
        continue;
      g_ptr_array_add (c->files, NULL);
      LmAdviceCause q = {
        .comm = c->waker->comm,
        .thread = c->waker->threads->len > 0 ? c->waker->threads->pdata[0] : NULL,
        .unit = c->waker->unit,
        .via = c->waker->via,
        .files = (const char *const *) c->files->pdata,
        .disk = d->name,
        .rhythm = c->rhythm.kind == LM_RHYTHM_TOO_FEW ? NULL : &c->rhythm,
      };
      c->matched = lm_advice_match (advice, &q, &c->advice);
      g_ptr_array_set_size (c->files, c->files->len - 1);
    }
  g_ptr_array_sort (causes, cmp_cause);
  return causes;
}

const char *
lm_report_how_text (const char *via)
{
  if (g_str_equal (via, "writeback"))
    return "its data written back later";
  if (g_str_equal (via, "kernel"))
    return "kernel work";
  if (g_str_equal (via, "passthrough"))
    return "a command sent to the disk";
  return "its own I/O";
}
