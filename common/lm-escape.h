/* lm-escape.h: making outside text safe to print on a terminal or a desktop.
 * Process, file and disk names come from other users; printed raw, their
 * control bytes would drive the administrator's terminal. */
#pragma once

#include <glib.h>

typedef enum
{
  LM_ESCAPE_DEFAULT = 0,
  /* The text is escaped already (the daemon's Remounted, or its error
   * messages): leave backslashes alone so that it is not escaped twice. */
  LM_ESCAPE_KEEP_BACKSLASH = 1 << 0,
} LmEscapeFlags;

gboolean lm_escape_is_unsafe (gunichar c);
gboolean lm_escape_needed (const char *text, gssize len, LmEscapeFlags flags);
char *lm_escape (const char *text, gssize len, LmEscapeFlags flags);
char *lm_unescape (const char *text, gsize *len);
