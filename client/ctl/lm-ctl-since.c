/* lm-ctl-since.c: what "laptop-modectl report --since" and "--until" take: an
 * age (12h, 7d, 2w) or a local date or date and time; pure: the clock and
 * zone come in. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lm-ctl-report-model.h"

static gboolean
all_digits (const char *text, gsize n)
{
  for (gsize i = 0; i < n; i++)
    if (!g_ascii_isdigit (text[i]))
      return FALSE;
  return TRUE;
}

/* "12h", "7d", "2w": its seconds (a day is 24 hours); FALSE for anything
 * else. Digits past any age within the bound give G_MAXINT64, so that a
 * huge number is "too far back", never an overflow. */
static gboolean
parse_age (const char *text, gint64 *seconds)
{
  static const struct
  {
    char unit;
    gint64 seconds;
  } units[] = { { 'h', 3600 }, { 'd', 86400 }, { 'w', 7 * 86400 } };
  gsize n = strlen (text);

  if (n < 2 || !all_digits (text, n - 1))
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (units); i++)
    {
      if (text[n - 1] != units[i].unit)
        continue;
      *seconds = n - 1 > 6 ? G_MAXINT64 : g_ascii_strtoll (text, NULL, 10) * units[i].seconds;
      return TRUE;
    }
  return FALSE;
}

/* "YYYY-MM-DD" (its midnight), "YYYY-MM-DDTHH:MM" or "YYYY-MM-DDTHH:MM:SS"
 * (a space for the T as well) in @tz; NULL for anything else, an impossible
 * date or time included (g_date_time_new checks the ranges). */
static GDateTime *
parse_date (const char *text, GTimeZone *tz)
{
  gsize n = strlen (text);
  int hour = 0, minute = 0, second = 0;

  if (n < 10 || !all_digits (text, 4) || text[4] != '-' || !all_digits (text + 5, 2)
      || text[7] != '-' || !all_digits (text + 8, 2))
    return NULL;
  if (n > 10)
    {
      const char *t = text + 11;
      if ((text[10] != 'T' && text[10] != ' ') || (n != 16 && n != 19) || !all_digits (t, 2)
          || t[2] != ':' || !all_digits (t + 3, 2)
          || (n == 19 && (t[5] != ':' || !all_digits (t + 6, 2))))
        return NULL;
      hour = atoi (t);
      minute = atoi (t + 3);
      second = n == 19 ? atoi (t + 6) : 0;
    }
  return g_date_time_new (tz, atoi (text), atoi (text + 5), atoi (text + 8), hour, minute, second);
}

gboolean
lm_ctl_parse_when (const char *option, const char *text, gint64 now_us, GTimeZone *tz,
                   gint64 *at_out, GError **error)
{
  const gint64 max_us = (gint64) LM_REPORT_SINCE_MAX_DAYS * 86400 * G_USEC_PER_SEC;
  g_autofree char *got = lm_ctl_safe (text);
  gint64 age_s, at_us;

  if (parse_age (text, &age_s))
    {
      if (age_s == 0)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "%s takes an age above zero, got “%s”", option, got);
          return FALSE;
        }
      at_us = age_s > max_us / G_USEC_PER_SEC ? G_MININT64 : now_us - age_s * G_USEC_PER_SEC;
    }
  else
    {
      g_autoptr (GDateTime) date = parse_date (text, tz);
      if (date == NULL)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "%s takes an age (12h, 7d, 2w) or a date (2026-12-01, "
                       "2026-12-01T08:30), got “%s”",
                       option, got);
          return FALSE;
        }
      at_us = g_date_time_to_unix (date) * G_USEC_PER_SEC;
      if (at_us >= now_us)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "%s takes a time in the past, got “%s”", option, got);
          return FALSE;
        }
    }
  if (at_us < now_us - max_us)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "%s goes back at most %d days, got “%s”", option, LM_REPORT_SINCE_MAX_DAYS, got);
      return FALSE;
    }
  *at_out = at_us;
  return TRUE;
}

gboolean
lm_ctl_parse_since (const char *text, gint64 now_us, GTimeZone *tz, gint64 *since_us,
                    GError **error)
{
  return lm_ctl_parse_when ("--since", text, now_us, tz, since_us, error);
}

gboolean
lm_ctl_parse_window (const char *since, const char *until, gint64 now_us, GTimeZone *tz,
                     gint64 *since_us, gint64 *until_us, GError **error)
{
  *until_us = now_us;
  if (until != NULL && !lm_ctl_parse_when ("--until", until, now_us, tz, until_us, error))
    return FALSE;
  if (!lm_ctl_parse_since (since != NULL ? since : "1d", now_us, tz, since_us, error))
    return FALSE;
  if (*since_us >= *until_us)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--since must come before --until");
      return FALSE;
    }
  return TRUE;
}
