/* lm-lines.c: reassembles newline-terminated lines from a byte stream.
 * Trace pipes and FIFOs hand out arbitrary pieces; a line longer than the
 * cap is dropped whole rather than split into two lines that could parse. */
#include "lm-lines.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "lm-error.h"

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

/* Read a non-blocking @fd until it has nothing more for now. FALSE with
 * @error at end of file or on an error that will not go away. */
gboolean
lm_lines_drain (LmLines *lines, int fd, const char *what, GError **error)
{
  char buf[16384];

  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);
      if (n > 0)
        {
          lm_lines_feed (lines, buf, (gsize) n);
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      /* /dev/kmsg: records were overwritten before we read them; the next
       * read goes on with the oldest one left. */
      if (n < 0 && errno == EPIPE)
        {
          g_debug ("Missed records of %s (its ring buffer wrapped)", what);
          continue;
        }
      if (n < 0 && errno == EAGAIN)
        return TRUE;
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Reading %s failed: %s", what,
                   n == 0 ? "end of file" : g_strerror (errno));
      return FALSE;
    }
}
