/* lm-tunables-bdflush.c: the Linux 2.4 backend, /proc/sys/vm/bdflush.
 * One line of numbers; laptop mode changes only the flush interval and the
 * buffer age (fields 5 and 6) and keeps every other field as it was. */
#include "lm-tunables.h"

#include "lm-error.h"
#include "lm-io.h"

#define BDFLUSH_INTERVAL 4
#define BDFLUSH_AGE_BUFFER 5

static gboolean
bdflush_probe (void)
{
  g_autofree char *path = lm_tunables_path ("bdflush");
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static guint
bdflush_engines (void)
{
  return LM_ENGINE_BDFLUSH;
}

static GPtrArray *
bdflush_plan (const LmSettings *settings, LmEngine engine, GError **error)
{
  g_autofree char *path = lm_tunables_path ("bdflush");
  g_autofree char *line = lm_io_read_value (path, error);

  if (line == NULL)
    return NULL;

  g_auto (GStrv) fields = g_strsplit (line, " ", -1);
  guint n = g_strv_length (fields);
  if (n <= BDFLUSH_AGE_BUFFER)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                   "%s has %u fields, expected at least %u: “%s”", path, n, BDFLUSH_AGE_BUFFER + 1,
                   line);
      return NULL;
    }
  for (guint i = 0; i < n; i++)
    {
      if (!g_ascii_string_to_signed (fields[i], 10, G_MININT32, G_MAXINT32, NULL, NULL))
        {
          g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "%s field %u is not a number: “%s”",
                       path, i + 1, line);
          return NULL;
        }
    }

  /* Both in jiffies, which 2.4 on PCs counts at 100 Hz: centiseconds. */
  g_autofree char *age = g_strdup_printf ("%u", settings->max_lost_work * 100);
  g_free (fields[BDFLUSH_INTERVAL]);
  fields[BDFLUSH_INTERVAL] = g_strdup (age);
  g_free (fields[BDFLUSH_AGE_BUFFER]);
  fields[BDFLUSH_AGE_BUFFER] = g_strdup (age);

  g_autofree char *value = g_strjoinv (" ", fields);
  GPtrArray *plan = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_tunable_free);
  g_ptr_array_add (plan, lm_tunable_new ("bdflush", value));
  return plan;
}

const LmTunablesBackend lm_tunables_bdflush = {
  .name = "bdflush",
  .probe = bdflush_probe,
  .engines = bdflush_engines,
  .plan = bdflush_plan,
  .side_effects = NULL,
};
