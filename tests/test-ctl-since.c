/* test-ctl-since.c: what laptop-modectl report --since takes (issue 38).
 * Ages in hours, days and weeks; local dates and date-times in a zone that
 * is not UTC's; zero, signs, garbage, the 366-day bound and the future refused. */
#include <glib.h>
#include <string.h>

#include "lm-ctl-report-model.h"

#define HOUR_US (G_GINT64_CONSTANT (3600) * G_USEC_PER_SEC)
#define DAY_US (24 * HOUR_US)

/* "Now": 2026-12-06 20:30:15.5 at +05:30, 15:00:15.5 UTC. */
static GTimeZone *
zone (void)
{
  return g_time_zone_new_identifier ("+05:30");
}

static gint64
at_us (GTimeZone *tz, int y, int mo, int d, int h, int mi, double s)
{
  g_autoptr (GDateTime) t = g_date_time_new (tz, y, mo, d, h, mi, s);

  g_assert_nonnull (t);
  return g_date_time_to_unix (t) * G_USEC_PER_SEC + g_date_time_get_microsecond (t);
}

static gint64
now_us (void)
{
  g_autoptr (GTimeZone) tz = zone ();

  return at_us (tz, 2026, 12, 6, 20, 30, 15.5);
}

/* --since @text at now_us () in zone (). */
static gboolean
parse (const char *text, gint64 *since, GError **error)
{
  g_autoptr (GTimeZone) tz = zone ();
  g_autofree char *shown = g_strescape (text, NULL);

  g_test_message ("--since %s", shown);
  return lm_ctl_parse_since (text, now_us (), tz, since, error);
}

static gint64
since_ok (const char *text)
{
  g_autoptr (GError) error = NULL;
  gint64 since = 0;

  g_assert_true (parse (text, &since, &error));
  g_assert_no_error (error);
  return since;
}

/* Refused with BAD_VALUE and a message holding @words, *since untouched. */
static void
since_refused (const char *text, const char *words)
{
  g_autoptr (GError) error = NULL;
  gint64 since = 42;

  g_assert_false (parse (text, &since, &error));
  g_assert_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
  g_assert_nonnull (strstr (error->message, words));
  g_assert_cmpint (since, ==, 42);
}

static void
test_ages (void)
{
  gint64 now = now_us ();

  g_assert_cmpint (since_ok ("12h"), ==, now - 12 * HOUR_US);
  g_assert_cmpint (since_ok ("1h"), ==, now - HOUR_US);
  /* The three the report took before. */
  g_assert_cmpint (since_ok ("1d"), ==, now - DAY_US);
  g_assert_cmpint (since_ok ("7d"), ==, now - 7 * DAY_US);
  g_assert_cmpint (since_ok ("30d"), ==, now - 30 * DAY_US);
  g_assert_cmpint (since_ok ("2w"), ==, now - 14 * DAY_US);
  g_assert_cmpint (since_ok ("007d"), ==, now - 7 * DAY_US);
  /* The bound itself, in each unit. */
  g_assert_cmpint (since_ok ("366d"), ==, now - 366 * DAY_US);
  g_assert_cmpint (since_ok ("8784h"), ==, now - 366 * DAY_US);
  g_assert_cmpint (since_ok ("52w"), ==, now - 364 * DAY_US);
}

static void
test_dates (void)
{
  g_autoptr (GTimeZone) tz = zone ();
  g_autoptr (GTimeZone) utc = g_time_zone_new_utc ();

  /* Local midnight: 18:30 UTC the day before. */
  g_assert_cmpint (since_ok ("2026-12-01"), ==, at_us (utc, 2026, 11, 30, 18, 30, 0));
  g_assert_cmpint (since_ok ("2026-12-06"), ==, at_us (tz, 2026, 12, 6, 0, 0, 0));
  g_assert_cmpint (since_ok ("2026-12-06T08:30"), ==, at_us (tz, 2026, 12, 6, 8, 30, 0));
  g_assert_cmpint (since_ok ("2026-12-06 08:30"), ==, at_us (tz, 2026, 12, 6, 8, 30, 0));
  g_assert_cmpint (since_ok ("2026-12-06T20:30:15"), ==, at_us (tz, 2026, 12, 6, 20, 30, 15));
  /* 365 days and 20.5 hours back: within the bound. */
  g_assert_cmpint (since_ok ("2025-12-06"), ==, at_us (tz, 2025, 12, 6, 0, 0, 0));
}

static void
test_refused (void)
{
  static const char *garbage[] = {
    "",
    "h",
    "d",
    "12",
    "12x",
    "12 h",
    " 12h",
    "12h ",
    "12H",
    "1.5d",
    "1e3d",
    "0x10h",
    "-2d",
    "+2d",
    "2026-12",
    "2026-12-1",
    "26-12-01",
    "2026/12/01",
    "2026-12-01x",
    "2026-02-29",
    "2026-13-01",
    "2026-12-00",
    "2026-12-01T",
    "2026-12-01T08",
    "2026-12-01T8:30",
    "2026-12-01T08:3",
    "2026-12-01T24:00",
    "2026-12-01T08:60",
    "2026-12-01T08:30:60",
    "2026-12-01T08:30Z",
    "2026-12-01T08:30+01:00",
    "2026-12-01  08:30",
    "0000-01-01",
    "today",
    "\x1b[31m",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (garbage); i++)
    since_refused (garbage[i], "takes an age (12h, 7d, 2w) or a date");
  since_refused ("0h", "above zero");
  since_refused ("0d", "above zero");
  since_refused ("000w", "above zero");
  since_refused ("367d", "at most 366 days");
  since_refused ("8785h", "at most 366 days");
  since_refused ("53w", "at most 366 days");
  since_refused ("999999w", "at most 366 days");
  /* Past any integer: the bound, not an overflow. */
  since_refused ("99999999999999999999999999h", "at most 366 days");
  since_refused ("9223372036854775807d", "at most 366 days");
  since_refused ("2025-12-05", "at most 366 days");
  since_refused ("1970-01-01", "at most 366 days");
  /* A leap day is a date (the bound, not "no date"), in 2024 and 2028. */
  since_refused ("2024-02-29", "at most 366 days");
  since_refused ("2028-02-29", "in the past");
  /* The future. */
  since_refused ("2026-12-07", "in the past");
  since_refused ("2026-12-06T20:31", "in the past");
  since_refused ("9999-12-31T23:59:59", "in the past");
  /* Outside text in the message is escaped. */
  since_refused ("\x1b[31m", "\\x1b[31m");
}

/* Midnight in a zone with summer time is the local one of that date. */
static void
test_summer_time (void)
{
  g_autoptr (GTimeZone) berlin = g_time_zone_new_identifier ("Europe/Berlin");
  g_autoptr (GTimeZone) utc = g_time_zone_new_utc ();
  g_autoptr (GError) error = NULL;
  gint64 since = 0;

  if (berlin == NULL)
    {
      g_test_skip ("no tzdata for Europe/Berlin");
      return;
    }
  gint64 now = at_us (utc, 2026, 7, 1, 12, 0, 0);
  g_assert_true (lm_ctl_parse_since ("2026-07-01", now, berlin, &since, &error));
  g_assert_no_error (error);
  g_assert_cmpint (since, ==, at_us (utc, 2026, 6, 30, 22, 0, 0));
  g_assert_true (lm_ctl_parse_since ("2026-01-15", now, berlin, &since, &error));
  g_assert_cmpint (since, ==, at_us (utc, 2026, 1, 14, 23, 0, 0));
  /* An age is hours, whatever the clocks did: 1d is 24 h. */
  g_assert_true (lm_ctl_parse_since ("1d", now, berlin, &since, &error));
  g_assert_cmpint (since, ==, now - DAY_US);
}

/* --since with --until: both back from now, the first before the second;
 * the message names the option that was wrong. */
static void
test_window (void)
{
  g_autoptr (GTimeZone) tz = zone ();
  gint64 since = 0, until = 0;

  g_assert_true (lm_ctl_parse_window (NULL, NULL, now_us (), tz, &since, &until, NULL));
  g_assert_cmpint (until, ==, now_us ());
  g_assert_cmpint (since, ==, now_us () - DAY_US);
  g_assert_true (lm_ctl_parse_window ("2026-12-06T20:00:00", "2026-12-06T20:03:00", now_us (), tz,
                                      &since, &until, NULL));
  g_assert_cmpint (until - since, ==, 180 * G_USEC_PER_SEC);
  g_assert_cmpint (until, ==, at_us (tz, 2026, 12, 6, 20, 3, 0));
  g_assert_true (lm_ctl_parse_window ("2d", "1d", now_us (), tz, &since, &until, NULL));
  g_assert_cmpint (until - since, ==, DAY_US);

  static const struct
  {
    const char *since, *until, *words;
  } refused[] = {
    { "1d", "2d", "before --until" },
    { "2026-12-06T20:00", "2026-12-06T20:00", "before --until" },
    { NULL, "2026-12-07", "--until takes a time in the past" },
    { NULL, "yesterday", "--until takes an age" },
    { NULL, "0h", "--until takes an age above zero" },
    { NULL, "400d", "--until goes back at most" },
    { "x", "1h", "--since takes an age" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_false (lm_ctl_parse_window (refused[i].since, refused[i].until, now_us (), tz,
                                           &since, &until, &error));
      g_assert_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
      g_assert_nonnull (strstr (error->message, refused[i].words));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ctl/since/ages", test_ages);
  g_test_add_func ("/ctl/since/dates", test_dates);
  g_test_add_func ("/ctl/since/refused", test_refused);
  g_test_add_func ("/ctl/since/summer-time", test_summer_time);
  g_test_add_func ("/ctl/since/window", test_window);
  return g_test_run ();
}
