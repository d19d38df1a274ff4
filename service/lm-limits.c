/* lm-limits.c: quoting a refused value back to its sender, bounded.
 * Must never copy more than LM_LIMIT_ECHO bytes of what a caller sent. */
#include "lm-limits.h"

#include <string.h>

/* @value with control bytes, backslashes and non-ASCII bytes escaped
 * (g_strescape's octal), cut to LM_LIMIT_ECHO bytes with an ellipsis; the
 * result is ASCII apart from the ellipsis, so always valid UTF-8. strnlen
 * keeps the cost bounded however long @value is. */
char *
lm_limits_escape (const char *value)
{
  gsize n = strnlen (value, LM_LIMIT_ECHO + 1);
  gboolean cut = n > LM_LIMIT_ECHO;
  g_autofree char *head = g_strndup (value, cut ? LM_LIMIT_ECHO : n);
  g_autofree char *escaped = g_strescape (head, NULL);

  return cut ? g_strconcat (escaped, "…", NULL) : g_steal_pointer (&escaped);
}

/* The same, in quotes, for an error message. */
char *
lm_limits_quote (const char *value)
{
  g_autofree char *escaped = lm_limits_escape (value);

  return g_strdup_printf ("“%s”", escaped);
}
