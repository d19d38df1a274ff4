/* lm-lines.c: reassembles newline-terminated lines from a byte stream.
 * Trace pipes and FIFOs hand out arbitrary pieces; a line longer than the
 * cap is dropped whole rather than split into two lines that could parse. */
#include "lm-lines.h"

#include <string.h>

void
lm_lines_init (LmLines *lines, gsize max, LmLineFunc func, gpointer user_data)
{
  lines->line = g_string_new (NULL);
  lines->overlong = FALSE;
  lines->max = max;
  lines->func = func;
  lines->user_data = user_data;
}

void
lm_lines_feed (LmLines *lines, const char *buf, gsize n)
{
  const char *p = buf, *end = buf + n;

  while (p < end)
    {
      const char *nl = memchr (p, '\n', (gsize) (end - p));
      const char *stop = nl != NULL ? nl : end;

      if (!lines->overlong && lines->line->len + (gsize) (stop - p) > lines->max)
        {
          lines->overlong = TRUE;
          g_string_truncate (lines->line, 0);
        }
      if (!lines->overlong)
        g_string_append_len (lines->line, p, stop - p);
      if (nl == NULL)
        break;
      if (!lines->overlong)
        lines->func (lines->line->str, lines->line->len, lines->user_data);
      g_string_truncate (lines->line, 0);
      lines->overlong = FALSE;
      p = nl + 1;
    }
}

void
lm_lines_clear (LmLines *lines)
{
  if (lines->line != NULL)
    g_string_free (lines->line, TRUE);
  lines->line = NULL;
}
