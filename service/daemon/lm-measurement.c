/* lm-measurement.c: the last result of laptop-modectl measure, kept by the daemon.
 * Owns the table of its keys, their bounds and the file "measurement" in
 * the state directory; never reads a battery nor switches anything. */
#include "config.h"

#include "lm-measurement.h"

#include <math.h>
#include <string.h>

#include "lm-error.h"
#include "lm-io.h"

/* The keys laptop-modectl measure sends (see its --json and the XML). */
static const struct
{
  const char *key;
  const char *type;
  gboolean required;
} keys[] = {
  { "Time", "x", TRUE },     { "Setting", "s", TRUE }, { "ArmA", "s", TRUE },
  { "ArmB", "s", TRUE },     { "Source", "s", TRUE },  { "WindowSeconds", "d" },
  { "DiscardSeconds", "d" }, { "Windows", "u" },       { "WindowsA", "u" },
  { "WindowsB", "u" },       { "Minutes", "d" },       { "MeanAW", "d" },
  { "MeanBW", "d" },         { "IntervalAW", "d" },    { "IntervalBW", "d" },
  { "DifferenceW", "d" },    { "IntervalW", "d" },     { "Measurable", "b", TRUE },
  { "Partial", "b", TRUE },  { "Ended", "s", TRUE },   { "BatteryWh", "d" },
  { "BatteryMinutes", "d" },
};

/* Watts, minutes and watt-hours of a laptop: far inside this. */
#define MAX_ABS 1e7

gboolean
lm_measurement_validate (GVariant *asv, GError **error)
{
  GVariantIter iter;
  const char *key;
  GVariant *value;

  if (!g_variant_is_of_type (asv, G_VARIANT_TYPE_VARDICT))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS, "A measurement is an a{sv}");
      return FALSE;
    }
  if (g_variant_n_children (asv) > LM_MEASUREMENT_MAX_KEYS)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "A measurement has at most %d keys, not %" G_GSIZE_FORMAT,
                   LM_MEASUREMENT_MAX_KEYS, g_variant_n_children (asv));
      return FALSE;
    }
  g_variant_iter_init (&iter, asv);
  while (g_variant_iter_loop (&iter, "{&sv}", &key, &value))
    {
      gsize i;
      for (i = 0; i < G_N_ELEMENTS (keys); i++)
        if (g_str_equal (keys[i].key, key))
          break;
      if (i == G_N_ELEMENTS (keys))
        {
          g_autofree char *quoted = g_strescape (key, NULL);
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS, "Unknown measurement key “%.64s”",
                       quoted);
          g_variant_unref (value);
          return FALSE;
        }
      if (!g_variant_is_of_type (value, G_VARIANT_TYPE (keys[i].type)))
        {
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       "Measurement key %s takes type %s, not %s", key, keys[i].type,
                       g_variant_get_type_string (value));
          g_variant_unref (value);
          return FALSE;
        }
      if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING)
          && g_variant_get_size (value) > LM_MEASUREMENT_MAX_STRING + 1)
        {
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       "Measurement key %s: at most %d bytes", key, LM_MEASUREMENT_MAX_STRING);
          g_variant_unref (value);
          return FALSE;
        }
      if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE)
          && !(fabs (g_variant_get_double (value)) <= MAX_ABS))
        {
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       "Measurement key %s: a finite number within ±%g", key, MAX_ABS);
          g_variant_unref (value);
          return FALSE;
        }
    }
  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    if (keys[i].required && !g_variant_lookup (asv, keys[i].key, "*", NULL))
      {
        g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS, "Measurement key %s is missing",
                     keys[i].key);
        return FALSE;
      }
  return TRUE;
}

static char *
file_in (const char *state_dir)
{
  return g_build_filename (state_dir, "measurement", NULL);
}

GVariant *
lm_measurement_load (const char *state_dir)
{
  g_autofree char *path = file_in (state_dir);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  gsize length;

  if (!lm_io_read_private (path, &text, &length, &error))
    {
      if (!g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        g_warning ("Not using the saved measurement: %s", error->message);
      return g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
    }
  /* GLib's text parser hands a string literal's bytes to
   * g_variant_new_string unchecked: a file that is not UTF-8 is refused
   * before it. */
  if (memchr (text, '\0', length) != NULL || !g_utf8_validate (text, (gssize) length, NULL))
    {
      g_warning ("Not using the saved measurement in %s: not UTF-8 text", path);
      return g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
    }
  g_autoptr (GVariant) v = g_variant_parse (G_VARIANT_TYPE_VARDICT, text, NULL, NULL, &error);
  if (v == NULL || !lm_measurement_validate (v, &error))
    {
      g_warning ("Not using the saved measurement in %s: %s", path, error->message);
      return g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
    }
  return g_steal_pointer (&v); /* g_variant_parse gives a full reference */
}

/* Text, as GVariant prints it: an administrator can read it. */
gboolean
lm_measurement_save (const char *state_dir, GVariant *asv, GError **error)
{
  g_autofree char *path = file_in (state_dir);
  g_autofree char *text = g_variant_print (asv, TRUE);
  g_autofree char *line = g_strconcat (text, "\n", NULL);

  return lm_io_write_atomic (path, line, strlen (line), 0644, error);
}
