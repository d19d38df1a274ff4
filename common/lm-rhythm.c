/* lm-rhythm.c: a cause's rhythm from the times of its wake-ups: periodic
 * when most gaps between them are alike, daily when they fall at one time
 * of day, else irregular. Pure arithmetic. */
#include "lm-rhythm.h"

#include <stdlib.h>

/* Share of gaps (or times of day) that must agree, and how closely. */
#define AGREE_SHARE 0.75
#define GAP_TOLERANCE 0.1     /* of the median gap, at least 1 s */
#define DAILY_TOLERANCE_S 900 /* a quarter of an hour either side */

static int
cmp_i64 (const void *a, const void *b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

static gboolean
find_periodic (const gint64 *gaps, gsize n, LmRhythm *out)
{
  g_autofree gint64 *sorted = g_memdup2 (gaps, n * sizeof *gaps);

  qsort (sorted, n, sizeof *sorted, cmp_i64);
  gint64 median = sorted[n / 2];
  gint64 tol = MAX (1, (gint64) (median * GAP_TOLERANCE));
  gsize alike = 0;
  gint64 lo = G_MAXINT64, hi = 0;

  if (median <= 0)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    if (ABS (gaps[i] - median) <= tol)
      {
        alike++;
        lo = MIN (lo, gaps[i]);
        hi = MAX (hi, gaps[i]);
      }
  if (alike < AGREE_SHARE * n)
    return FALSE;
  out->kind = LM_RHYTHM_PERIODIC;
  out->period_lo_s = lo;
  out->period_hi_s = hi;
  return TRUE;
}

/* Once a day or so, at about one time of day. */
static gboolean
find_daily (const gint64 *times_s, gsize n, GTimeZone *tz, LmRhythm *out)
{
  g_autofree gint64 *minutes = g_new (gint64, n);
  gint64 span = times_s[n - 1] - times_s[0];

  if (span < 36 * 3600 || (gint64) n > span / (12 * 3600) + 1)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr (GDateTime) dt = g_date_time_new_from_unix_utc (times_s[i]);
      g_autoptr (GDateTime) local = dt != NULL ? g_date_time_to_timezone (dt, tz) : NULL;
      if (local == NULL)
        return FALSE;
      minutes[i] = g_date_time_get_hour (local) * 60 + g_date_time_get_minute (local);
    }
  /* The median time of day, then how many lie near it (across midnight). */
  g_autofree gint64 *sorted = g_memdup2 (minutes, n * sizeof *minutes);
  qsort (sorted, n, sizeof *sorted, cmp_i64);
  gint64 median = sorted[n / 2];
  gsize near = 0;
  for (gsize i = 0; i < n; i++)
    {
      gint64 d = ABS (minutes[i] - median);
      near += MIN (d, 1440 - d) * 60 <= DAILY_TOLERANCE_S;
    }
  if (near < AGREE_SHARE * n)
    return FALSE;
  out->kind = LM_RHYTHM_DAILY;
  out->minute_of_day = (guint) median;
  return TRUE;
}

void
lm_rhythm_find (const gint64 *times_us, gsize n, GTimeZone *tz, LmRhythm *out)
{
  *out = (LmRhythm){ .kind = LM_RHYTHM_TOO_FEW };
  if (times_us == NULL || n < LM_RHYTHM_MIN_EVENTS)
    return;
  g_autoptr (GTimeZone) local = tz != NULL ? g_time_zone_ref (tz) : g_time_zone_new_local ();
  g_autofree gint64 *s = g_new (gint64, n);
  for (gsize i = 0; i < n; i++)
    s[i] = times_us[i] / G_USEC_PER_SEC;
  qsort (s, n, sizeof *s, cmp_i64);
  g_autofree gint64 *gaps = g_new (gint64, n - 1);
  for (gsize i = 0; i + 1 < n; i++)
    gaps[i] = s[i + 1] - s[i];
  if (find_daily (s, n, local, out) || find_periodic (gaps, n - 1, out))
    return;
  out->kind = LM_RHYTHM_IRREGULAR;
}

/* One bound in the unit that suits the period: s under 2 min, min under
 * 2 h, h beyond. */
static void
append_range (GString *s, gint64 lo, gint64 hi)
{
  gint64 div = hi < 120 ? 1 : hi < 7200 ? 60 : 3600;
  const char *unit = div == 1 ? "s" : div == 60 ? "min" : "h";
  gint64 a = (lo + div / 2) / div, b = (hi + div / 2) / div;

  if (a == b)
    g_string_append_printf (s, "every %" G_GINT64_FORMAT " %s", a, unit);
  else
    g_string_append_printf (s, "every %" G_GINT64_FORMAT "–%" G_GINT64_FORMAT " %s", a, b, unit);
}

char *
lm_rhythm_to_string (const LmRhythm *r)
{
  GString *s;

  switch (r->kind)
    {
      case LM_RHYTHM_PERIODIC:
        s = g_string_new (NULL);
        append_range (s, r->period_lo_s, r->period_hi_s);
        return g_string_free (s, FALSE);
      case LM_RHYTHM_DAILY:
        return g_strdup_printf ("at %02u:%02u daily", r->minute_of_day / 60, r->minute_of_day % 60);
      case LM_RHYTHM_IRREGULAR:
        return g_strdup ("irregular");
      case LM_RHYTHM_TOO_FEW:
      default:
        return NULL;
    }
}
