/* lm-ctl-report-model.c: laptop-modectl report's model, built from
 * GetLedger's records. Pure: no bus and no output; names stay raw here. */
#include "config.h"

#include <string.h>

#include "lm-ctl-report-model.h"
#include "lm-rhythm.h"
#include "lm-names.h"

static void
spinup_free (gpointer p)
{
  LmReportSpinUp *s = p;

  g_free (s->comm);
  g_free (s->thread);
  g_free (s->via);
  g_free (s->path);
  g_free (s->unit);
  g_free (s);
}

static void
waker_free (gpointer p)
{
  LmReportWaker *w = p;

  g_free (w->comm);
  g_free (w->via);
  g_free (w->unit);
  g_ptr_array_unref (w->threads);
  g_array_unref (w->times);
  g_free (w->rhythm);
  g_free (w);
}

static void
disk_free (gpointer p)
{
  LmReportDisk *d = p;

  g_free (d->name);
  g_array_unref (d->spans);
  g_ptr_array_unref (d->spinups);
  g_ptr_array_unref (d->wakers);
  g_array_unref (d->runs);
  g_ptr_array_unref (d->deferred);
  g_free (d->nvme);
  g_free (d);
}

void
lm_report_free (LmReport *report)
{
  if (report == NULL)
    return;
  g_ptr_array_unref (report->disks);
  g_clear_pointer (&report->measurement, g_variant_unref);
  g_clear_pointer (&report->conflicts, g_variant_unref);
  g_clear_pointer (&report->conflict_writers, g_variant_unref);
  g_free (report->unwritten_disk);
  g_free (report);
}

void
lm_report_add_unwritten (LmReport *report, GVariant *summary)
{
  GVariantIter iter;
  const char *disk;
  GVariant *entry;
  guint64 since;

  if (summary == NULL || !g_variant_is_of_type (summary, G_VARIANT_TYPE ("a{sa{sv}}")))
    return;
  g_variant_iter_init (&iter, summary);
  while (g_variant_iter_next (&iter, "{&s@a{sv}}", &disk, &entry))
    {
      if (g_variant_lookup (entry, "UnwrittenSince", "t", &since) && since > 0
          && since <= G_MAXINT64)
        {
          report->unwritten_since_us = (gint64) since;
          g_free (report->unwritten_disk);
          report->unwritten_disk = g_strdup (disk);
        }
      g_variant_unref (entry);
    }
}

/* Any integer type: GetLedger sends t and u, a JSON file brings x. */
static gboolean
lookup_int (GVariant *dict, const char *key, gint64 *out)
{
  g_autoptr (GVariant) v = g_variant_lookup_value (dict, key, NULL);

  if (v == NULL)
    return FALSE;
  if (g_variant_is_of_type (v, G_VARIANT_TYPE_UINT64))
    *out = (gint64) MIN (g_variant_get_uint64 (v), (guint64) G_MAXINT64);
  else if (g_variant_is_of_type (v, G_VARIANT_TYPE_INT64))
    *out = g_variant_get_int64 (v);
  else if (g_variant_is_of_type (v, G_VARIANT_TYPE_UINT32))
    *out = g_variant_get_uint32 (v);
  else if (g_variant_is_of_type (v, G_VARIANT_TYPE_INT32))
    *out = g_variant_get_int32 (v);
  else if (g_variant_is_of_type (v, G_VARIANT_TYPE_DOUBLE))
    *out = (gint64) g_variant_get_double (v);
  else
    return FALSE;
  return TRUE;
}

static const char *
lookup_str (GVariant *dict, const char *key)
{
  const char *s = NULL;

  return g_variant_lookup (dict, key, "&s", &s) ? s : NULL;
}

static LmReportDisk *
get_disk (LmReport *report, GHashTable *by_name, const char *name)
{
  LmReportDisk *d = g_hash_table_lookup (by_name, name);

  if (d != NULL)
    return d;
  d = g_new0 (LmReportDisk, 1);
  d->name = g_strdup (name);
  d->spans = g_array_new (FALSE, FALSE, sizeof (LmReportSpan));
  d->spinups = g_ptr_array_new_with_free_func (spinup_free);
  d->wakers = g_ptr_array_new_with_free_func (waker_free);
  d->runs = g_array_new (FALSE, FALSE, sizeof (LmReplayRun));
  d->deferred = g_ptr_array_new_with_free_func (lm_report_deferred_free);
  g_hash_table_insert (by_name, d->name, d);
  g_ptr_array_add (report->disks, d);
  return d;
}

static int
cmp_span (gconstpointer a, gconstpointer b)
{
  const LmReportSpan *x = a, *y = b;

  return x->start_us < y->start_us ? -1 : x->start_us > y->start_us;
}

static int
cmp_spinup (gconstpointer a, gconstpointer b)
{
  const LmReportSpinUp *x = *(LmReportSpinUp *const *) a, *y = *(LmReportSpinUp *const *) b;

  return x->time_us < y->time_us ? -1 : x->time_us > y->time_us;
}

static int
cmp_waker (gconstpointer a, gconstpointer b)
{
  const LmReportWaker *x = *(LmReportWaker *const *) a, *y = *(LmReportWaker *const *) b;

  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  int c = strcmp (x->comm, y->comm);
  c = c != 0 ? c : strcmp (x->via, y->via);
  return c != 0 ? c : g_strcmp0 (x->unit, y->unit);
}

static int
cmp_disk (gconstpointer a, gconstpointer b)
{
  const LmReportDisk *x = *(LmReportDisk *const *) a, *y = *(LmReportDisk *const *) b;

  return strcmp (x->name, y->name);
}

static void
add_record (LmReport *report, GHashTable *by_name, GVariant *rec, const char *only_disk)
{
  const char *kind = lookup_str (rec, "Kind"), *name = lookup_str (rec, "Disk");
  gint64 time_us = 0, end_us = 0, n;

  if (kind == NULL || name == NULL || !lookup_int (rec, "Time", &time_us))
    return;
  if (only_disk != NULL && !g_str_equal (only_disk, name))
    return;
  if (!lookup_int (rec, "End", &end_us) || end_us < time_us)
    end_us = time_us;
  /* Clipped to the range asked for: GetLedger returns what overlaps it. */
  gint64 a = MAX (time_us, report->since_us), b = MIN (end_us, report->until_us);
  if (g_str_equal (kind, "spinup"))
    {
      if (time_us < report->since_us || time_us > report->until_us)
        return;
      LmReportDisk *d = get_disk (report, by_name, name);
      LmReportSpinUp *s = g_new0 (LmReportSpinUp, 1);
      const char *comm = lookup_str (rec, "Comm"), *via = lookup_str (rec, "Via");
      gboolean other = FALSE;
      if (g_variant_lookup (rec, "OtherUser", "b", &other) && other)
        comm = LM_OTHER_USER_TEXT;
      const char *path = lookup_str (rec, "Path"), *thread = lookup_str (rec, "Thread");
      const char *unit = lookup_str (rec, "Unit");
      s->time_us = time_us;
      s->comm = g_strdup (comm != NULL ? comm : "?");
      s->thread = thread != NULL && *thread != '\0' ? g_strdup (thread) : NULL;
      s->via = g_strdup (via != NULL ? via : "direct");
      s->path = g_strdup (path);
      s->unit = unit != NULL && *unit != '\0' && !other ? g_strdup (unit) : NULL;
      g_ptr_array_add (d->spinups, s);
    }
  else if (g_str_equal (kind, "asleep") || g_str_equal (kind, "awake"))
    {
      if (b <= a)
        return;
      LmReportDisk *d = get_disk (report, by_name, name);
      LmReportSpan span = { a, b, g_str_equal (kind, "asleep") };
      g_array_append_val (d->spans, span);
    }
  else if (g_str_equal (kind, "activity"))
    {
      LmReportDisk *d = get_disk (report, by_name, name);
      LmReplayRun run = { time_us, end_us, 0, 0, 0 };
      if (lookup_int (rec, "Reads", &n))
        run.reads = (guint32) CLAMP (n, 0, G_MAXUINT32);
      if (lookup_int (rec, "Writes", &n))
        run.writes = (guint32) CLAMP (n, 0, G_MAXUINT32);
      if (lookup_int (rec, "Dirtied", &n))
        run.dirtied = (guint32) CLAMP (n, 0, G_MAXUINT32);
      if (lookup_int (rec, "Filesystems", &n))
        run.fs = (guint32) CLAMP (n, 0, G_MAXUINT32);
      if (lookup_int (rec, "Spells", &n))
        {
          run.spells = (guint32) CLAMP (n, 0, G_MAXUINT32);
          run.spells_known = TRUE;
        }
      g_array_append_val (d->runs, run);
    }
  else if (g_str_equal (kind, "wear"))
    get_disk (report, by_name, name); /* its values come from Disks */
  else if (g_str_equal (kind, "deferred"))
    {
      /* Shown where it ran: the end of its wait. */
      if (end_us < report->since_us || end_us > report->until_us)
        return;
      lm_report_add_deferred (get_disk (report, by_name, name), rec, time_us, end_us);
    }
  /* Kinds this client does not know yet are left out, not an error. */
}

/* @d's spin-ups per program and how (and unit, @by_unit), most first,
 * each with its rhythm. */
static void
build_wakers (LmReportDisk *d, gboolean by_unit)
{
  g_autoptr (GHashTable) wakers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  g_ptr_array_set_size (d->wakers, 0);
  for (guint i = 0; i < d->spinups->len; i++)
    {
      LmReportSpinUp *s = g_ptr_array_index (d->spinups, i);
      const char *unit = by_unit ? s->unit : NULL;
      /* Keyed by the name, how and unit, joined by a byte none can hold. */
      g_autofree char *key = g_strconcat (s->comm, "\n", s->via, "\n", unit, NULL);
      LmReportWaker *w = g_hash_table_lookup (wakers, key);
      if (w == NULL)
        {
          w = g_new0 (LmReportWaker, 1);
          w->comm = g_strdup (s->comm);
          w->via = g_strdup (s->via);
          w->unit = g_strdup (unit);
          w->threads = g_ptr_array_new_with_free_func (g_free);
          w->times = g_array_new (FALSE, FALSE, sizeof (gint64));
          g_ptr_array_add (d->wakers, w);
          g_hash_table_insert (wakers, g_steal_pointer (&key), w);
        }
      w->count++;
      g_array_append_val (w->times, s->time_us);
      if (s->thread != NULL && w->threads->len < LM_REPORT_THREADS
          && !g_ptr_array_find_with_equal_func (w->threads, s->thread, g_str_equal, NULL))
        g_ptr_array_add (w->threads, g_strdup (s->thread));
    }
  g_ptr_array_sort (d->wakers, cmp_waker);
  for (guint i = 0; i < d->wakers->len; i++)
    {
      LmReportWaker *w = g_ptr_array_index (d->wakers, i);
      LmRhythm r;
      lm_rhythm_find ((gint64 *) w->times->data, w->times->len, NULL, &r);
      w->rhythm = lm_rhythm_to_string (&r);
    }
}

void
lm_report_group_by_unit (LmReport *report)
{
  for (guint i = 0; i < report->disks->len; i++)
    {
      LmReportDisk *d = g_ptr_array_index (report->disks, i);
      build_wakers (d, TRUE);
      d->by_unit = TRUE;
    }
}

static void
summarise (LmReport *report, LmReportDisk *d)
{

  g_array_sort (d->spans, cmp_span);
  g_ptr_array_sort (d->spinups, cmp_spinup);
  for (guint i = 0; i < d->spans->len; i++)
    {
      LmReportSpan *s = &g_array_index (d->spans, LmReportSpan, i);
      gint64 secs = (s->end_us - s->start_us) / G_USEC_PER_SEC;
      if (s->asleep)
        d->asleep_s += secs;
      else
        d->awake_s += secs;
    }
  for (guint i = 0; i < d->spinups->len; i++)
    {
      LmReportSpinUp *s = g_ptr_array_index (d->spinups, i);
      g_autoptr (GDateTime) dt = g_date_time_new_from_unix_local (s->time_us / G_USEC_PER_SEC);
      if (dt != NULL)
        d->hourly[g_date_time_get_hour (dt)]++;
    }
  build_wakers (d, FALSE);
  lm_report_link_deferred (d);
  d->recorded.spinups = d->spinups->len;
  d->recorded.awake_s = d->awake_s;
  d->stock_unsure = lm_replay_unsure ((LmReplayRun *) d->runs->data, d->runs->len);
  if (d->runs->len > 0)
    lm_replay_stock ((LmReplayRun *) d->runs->data, d->runs->len, report->since_us,
                     report->until_us, d->idle_s, &d->stock);
}

LmReport *
lm_report_build (GVariant *records, gint64 since_us, gint64 until_us, GHashTable *idle,
                 guint default_idle_s, const char *only_disk)
{
  g_autoptr (LmReport) report = g_new0 (LmReport, 1);
  g_autoptr (GHashTable) by_name = g_hash_table_new (g_str_hash, g_str_equal);
  GVariantIter iter;
  GVariant *rec;

  report->since_us = since_us;
  report->until_us = until_us;
  report->disks = g_ptr_array_new_with_free_func (disk_free);
  if (records != NULL && g_variant_is_of_type (records, G_VARIANT_TYPE ("aa{sv}")))
    {
      g_variant_iter_init (&iter, records);
      while ((rec = g_variant_iter_next_value (&iter)) != NULL)
        {
          add_record (report, by_name, rec, only_disk);
          g_variant_unref (rec);
        }
    }
  g_ptr_array_sort (report->disks, cmp_disk);
  for (guint i = 0; i < report->disks->len; i++)
    {
      LmReportDisk *d = g_ptr_array_index (report->disks, i);
      gpointer t = idle != NULL ? g_hash_table_lookup (idle, d->name) : NULL;
      d->idle_s = t != NULL ? GPOINTER_TO_UINT (t) : default_idle_s;
      summarise (report, d);
    }
  return g_steal_pointer (&report);
}

double
lm_report_asleep_share (const LmReportDisk *disk, gint64 a, gint64 b, double *known)
{
  gint64 asleep = 0, total = 0;

  for (guint i = 0; i < disk->spans->len; i++)
    {
      const LmReportSpan *s = &g_array_index (disk->spans, LmReportSpan, i);
      gint64 lo = MAX (a, s->start_us), hi = MIN (b, s->end_us);
      if (hi <= lo)
        continue;
      total += hi - lo;
      if (s->asleep)
        asleep += hi - lo;
    }
  if (known != NULL)
    *known = b > a ? (double) total / (double) (b - a) : 0;
  return total > 0 ? (double) asleep / (double) total : -1;
}
