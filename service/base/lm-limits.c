/* lm-limits.c: quoting a refused value back to its sender, bounded, and the
 * bounds that are a syntax. Must never copy more than LM_LIMIT_ECHO bytes of
 * what a caller sent. */
#include "lm-limits.h"

#include <string.h>

#include "lm-error.h"
#include "lm-escape.h"

gboolean
lm_limits_check_latency (const char *value, GError **error)
{
  guint64 n;

  if (value == NULL || *value == '\0' || g_str_equal (value, "keep") || g_str_equal (value, "auto")
      || g_str_equal (value, "any")
      || g_ascii_string_to_unsigned (value, 10, 0, G_MAXINT32, &n, NULL))
    return TRUE;
  g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
               "NvmeLatencyToleranceUs must be " LM_LIMIT_LATENCY_SYNTAX);
  return FALSE;
}

gboolean
lm_limits_check_standby (guint seconds, GError **error)
{
  if (seconds <= 240 * 5 && seconds % 5 == 0)
    return TRUE;
  if (seconds == LM_LIMIT_STANDBY_252_SECONDS || seconds == LM_LIMIT_STANDBY_255_SECONDS)
    return TRUE;
  if (seconds >= 1800 && seconds <= 11 * 1800 && seconds % 1800 == 0)
    return TRUE;
  g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
               "A standby timer of %u s cannot be set on an ATA drive: use 0 (off), a "
               "multiple of 5 from 5 to 1200, 1260, 1275, or a multiple of 1800 from 1800 "
               "to 19800",
               seconds);
  return FALSE;
}

/* @value cut to LM_LIMIT_ECHO bytes with an ellipsis and escaped as the
 * clients escape everything from outside (common/lm-escape.c: \xNN for
 * control bytes, backslashes and invalid UTF-8, so a cut character is
 * escaped too). strnlen keeps the cost bounded however long @value is. */
char *
lm_limits_escape (const char *value)
{
  gsize n = strnlen (value, LM_LIMIT_ECHO + 1);
  gboolean cut = n > LM_LIMIT_ECHO;
  g_autofree char *escaped = lm_escape (value, cut ? LM_LIMIT_ECHO : n, LM_ESCAPE_DEFAULT);

  return cut ? g_strconcat (escaped, "…", NULL) : g_steal_pointer (&escaped);
}

/* The same, in quotes, for an error message. */
char *
lm_limits_quote (const char *value)
{
  g_autofree char *escaped = lm_limits_escape (value);

  return g_strdup_printf ("“%s”", escaped);
}
