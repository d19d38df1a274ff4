/* lm-lines.h: reassembles newline-terminated lines from a byte stream.
 * Owns the partial line and the length cap; never interprets a line. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* @line is NUL-terminated and may be modified by the callee. */
typedef void (*LmLineFunc) (char *line, gsize length, gpointer user_data);

typedef struct
{
  GString *line;
  gboolean overlong; /* the current line passed @max: skipped whole */
  gsize max;
  LmLineFunc func;
  gpointer user_data;
} LmLines;

void lm_lines_init (LmLines *lines, gsize max, LmLineFunc func, gpointer user_data);
void lm_lines_feed (LmLines *lines, const char *buf, gsize n);
void lm_lines_clear (LmLines *lines);
gboolean lm_lines_drain (LmLines *lines, int fd, const char *what, GError **error);

G_END_DECLS
