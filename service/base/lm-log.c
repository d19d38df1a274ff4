/* lm-log.c: every log message through lm_escape() on its way out.
 * Log lines quote names from other users (comm, paths, mount points, D-Bus
 * strings); escaping each at its call is easy to forget, so it is done here once. */
#include "lm-log.h"

#include "lm-escape.h"

GLogWriterOutput
lm_log_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
  g_autofree GLogField *copy = g_new (GLogField, n_fields);
  g_autofree char *escaped = NULL;

  for (gsize i = 0; i < n_fields; i++)
    {
      copy[i] = fields[i];
      /* Backslashes kept: text escaped already (lm_remount_escape, \xNN)
       * is not escaped twice, and a backslash cannot end a line. */
      if (escaped == NULL && g_str_equal (fields[i].key, "MESSAGE") && fields[i].value != NULL
          && lm_escape_needed (fields[i].value, fields[i].length, LM_ESCAPE_KEEP_BACKSLASH))
        {
          escaped = lm_escape (fields[i].value, fields[i].length, LM_ESCAPE_KEEP_BACKSLASH);
          copy[i].value = escaped;
          copy[i].length = -1;
        }
    }
  return g_log_writer_default (level, copy, n_fields, user_data);
}
