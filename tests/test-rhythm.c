/* test-rhythm.c: a cause's rhythm (common/lm-rhythm.c) from its wake-ups'
 * times: periodic at several scales, with jitter and a missed beat, daily,
 * irregular, and too few to tell. */
#include <glib.h>

#include "lm-rhythm.h"

#define S G_USEC_PER_SEC
#define T0 ((gint64) 1780000000) /* 2026-05-28 20:26:40 UTC */

static char *
rhythm_of (const gint64 *times_s, gsize n, LmRhythm *r)
{
  g_autofree gint64 *us = g_new (gint64, n);
  g_autoptr (GTimeZone) utc = g_time_zone_new_utc ();

  for (gsize i = 0; i < n; i++)
    us[i] = times_s[i] * S;
  lm_rhythm_find (us, n, utc, r);
  return lm_rhythm_to_string (r);
}

static void
test_too_few (void)
{
  gint64 t[] = { T0, T0 + 30 };
  LmRhythm r;
  g_autofree char *text = rhythm_of (t, G_N_ELEMENTS (t), &r);

  g_assert_cmpint (r.kind, ==, LM_RHYTHM_TOO_FEW);
  g_assert_null (text);
  lm_rhythm_find (NULL, 0, NULL, &r);
  g_assert_cmpint (r.kind, ==, LM_RHYTHM_TOO_FEW);
}

/* A writer on a 5 s period, and one on 45 s with a second of jitter. */
static void
test_periodic_seconds (void)
{
  gint64 t[21];
  LmRhythm r;

  for (guint i = 0; i < G_N_ELEMENTS (t); i++)
    t[i] = T0 + 5 * i;
  g_autofree char *five = rhythm_of (t, G_N_ELEMENTS (t), &r);
  g_assert_cmpint (r.kind, ==, LM_RHYTHM_PERIODIC);
  g_assert_cmpstr (five, ==, "every 5 s");
  for (guint i = 0; i < G_N_ELEMENTS (t); i++)
    t[i] = T0 + 45 * i + (i % 3 == 0 ? 1 : i % 3 == 1 ? 0 : -1);
  g_autofree char *forty_five = rhythm_of (t, G_N_ELEMENTS (t), &r);
  g_assert_cmpstr (forty_five, ==, "every 44–47 s");
}

/* Every 15 or 16 minutes; and hours. */
static void
test_periodic_minutes_and_hours (void)
{
  gint64 t[9];
  LmRhythm r;

  t[0] = T0;
  for (guint i = 1; i < G_N_ELEMENTS (t); i++)
    t[i] = t[i - 1] + (i % 2 ? 900 : 960);
  g_autofree char *minutes = rhythm_of (t, G_N_ELEMENTS (t), &r);
  g_assert_cmpstr (minutes, ==, "every 15–16 min");
  for (guint i = 0; i < G_N_ELEMENTS (t); i++)
    t[i] = T0 + 3 * 3600 * i;
  g_autofree char *hours = rhythm_of (t, G_N_ELEMENTS (t), &r);
  g_assert_cmpstr (hours, ==, "every 3 h");
}

/* A 30 s writer whose one wake-up merged into another's: still periodic;
 * the input's order does not matter. */
static void
test_missed_beat_and_order (void)
{
  gint64 t[] = { T0 + 300, T0,       T0 + 30,  T0 + 60,  T0 + 90,
                 T0 + 150, T0 + 180, T0 + 210, T0 + 240, T0 + 270 };
  LmRhythm r;
  g_autofree char *text = rhythm_of (t, G_N_ELEMENTS (t), &r);

  g_assert_cmpint (r.kind, ==, LM_RHYTHM_PERIODIC);
  g_assert_cmpstr (text, ==, "every 30 s");
}

/* updatedb at about 06:25 each day for six days. */
static void
test_daily (void)
{
  g_autoptr (GDateTime) first = g_date_time_new_utc (2026, 12, 1, 6, 25, 0);
  gint64 base = g_date_time_to_unix (first);
  gint64 jitter[] = { 0, 120, -60, 60, -120, 0 };
  gint64 t[G_N_ELEMENTS (jitter)];
  LmRhythm r;

  for (guint i = 0; i < G_N_ELEMENTS (t); i++)
    t[i] = base + 86400 * i + jitter[i];
  g_autofree char *text = rhythm_of (t, G_N_ELEMENTS (t), &r);
  g_assert_cmpint (r.kind, ==, LM_RHYTHM_DAILY);
  g_assert_cmpstr (text, ==, "at 06:25 daily");
}

static void
test_irregular (void)
{
  gint64 gaps[] = { 3, 70, 400, 9, 1200, 33, 610, 5 };
  gint64 t[G_N_ELEMENTS (gaps) + 1];
  LmRhythm r;

  t[0] = T0;
  for (guint i = 0; i < G_N_ELEMENTS (gaps); i++)
    t[i + 1] = t[i] + gaps[i];
  g_autofree char *text = rhythm_of (t, G_N_ELEMENTS (t), &r);
  g_assert_cmpint (r.kind, ==, LM_RHYTHM_IRREGULAR);
  g_assert_cmpstr (text, ==, "irregular");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/rhythm/too-few", test_too_few);
  g_test_add_func ("/rhythm/periodic-seconds", test_periodic_seconds);
  g_test_add_func ("/rhythm/periodic-minutes-and-hours", test_periodic_minutes_and_hours);
  g_test_add_func ("/rhythm/missed-beat-and-order", test_missed_beat_and_order);
  g_test_add_func ("/rhythm/daily", test_daily);
  g_test_add_func ("/rhythm/irregular", test_irregular);
  return g_test_run ();
}
