/* lm-ctl-measure-battery.c: where measure's watts come from: UPower's
 * display device, or the batteries' sysfs files (power_now, current_now ×
 * voltage_now, energy_now differences), found once and read per sample. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <glib-unix.h>

#include "lm-ctl-measure-private.h"
#include "lm-paths.h"

const char *const lm_measure_source_names[] = {
  [SOURCE_UPOWER] = "UPower EnergyRate",
  [SOURCE_POWER_NOW] = "sysfs power_now",
  [SOURCE_CURRENT_VOLTAGE] = "sysfs current_now × voltage_now",
  [SOURCE_ENERGY_NOW] = "sysfs energy_now differences",
};

char *
lm_measure_read_supply (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  return g_strstrip (text);
}

static gboolean
read_number (const char *dir, const char *name, double *out)
{
  g_autofree char *text = lm_measure_read_supply (dir, name);
  char *end;

  if (text == NULL || *text == '\0')
    return FALSE;
  double v = g_ascii_strtod (text, &end);
  if (*end != '\0')
    return FALSE;
  *out = v;
  return TRUE;
}

/* The system's batteries (scope other than "Device": not a mouse's), and
 * the best reading all of them give. */
gboolean
lm_measure_probe_sysfs (Measure *m, GError **error)
{
  g_autofree char *class_dir = lm_path ("/sys/class/power_supply");
  g_autoptr (GDir) dir = g_dir_open (class_dir, 0, NULL);
  const char *name;
  gboolean power = TRUE, current = TRUE, energy = TRUE;

  m->batteries = g_ptr_array_new_with_free_func (g_free);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *supply = g_build_filename (class_dir, name, NULL);
      g_autofree char *type = lm_measure_read_supply (supply, "type");
      g_autofree char *scope = lm_measure_read_supply (supply, "scope");
      double v;

      if (g_strcmp0 (type, "Battery") != 0 || g_strcmp0 (scope, "Device") == 0)
        continue;
      power = power && read_number (supply, "power_now", &v);
      current = current && read_number (supply, "current_now", &v)
                && read_number (supply, "voltage_now", &v);
      energy = energy && read_number (supply, "energy_now", &v);
      g_ptr_array_add (m->batteries, g_steal_pointer (&supply));
    }
  if (m->batteries->len == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "no battery in %s and no UPower on the bus: nothing to measure with", class_dir);
      return FALSE;
    }
  if (power)
    m->source = SOURCE_POWER_NOW;
  else if (current)
    m->source = SOURCE_CURRENT_VOLTAGE;
  else if (energy)
    m->source = SOURCE_ENERGY_NOW;
  else
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "the batteries in %s report neither power_now, current_now and "
                   "voltage_now, nor energy_now",
                   class_dir);
      return FALSE;
    }
  return TRUE;
}

/* Now, summed over the batteries: W (or µWh for energy_now). */
gboolean
lm_measure_read_sysfs (Measure *m, double *out)
{
  double sum = 0;

  for (guint i = 0; i < m->batteries->len; i++)
    {
      const char *dir = m->batteries->pdata[i];
      double a, b;

      switch (m->source)
        {
          case SOURCE_POWER_NOW:
            if (!read_number (dir, "power_now", &a))
              return FALSE;
            sum += fabs (a) / 1e6;
            break;
          case SOURCE_CURRENT_VOLTAGE:
            /* Some drivers sign the current: discharge is what it is. */
            if (!read_number (dir, "current_now", &a) || !read_number (dir, "voltage_now", &b))
              return FALSE;
            sum += fabs (a) / 1e6 * (b / 1e6);
            break;
          case SOURCE_ENERGY_NOW:
            if (!read_number (dir, "energy_now", &a))
              return FALSE;
            sum += a;
            break;
          case SOURCE_UPOWER:
          default:
            return FALSE;
        }
    }
  *out = sum;
  return TRUE;
}

/* The energy in the batteries now, Wh; 0 when unknown. */
double
lm_measure_battery_wh (Measure *m)
{
  if (m->source == SOURCE_UPOWER)
    {
      g_autoptr (GVariant) v = g_dbus_proxy_get_cached_property (m->display, "Energy");
      return v != NULL && g_variant_is_of_type (v, G_VARIANT_TYPE_DOUBLE) ? g_variant_get_double (v)
                                                                          : 0;
    }
  double sum = 0;
  for (guint i = 0; i < m->batteries->len; i++)
    {
      double e, c, u;
      if (read_number (m->batteries->pdata[i], "energy_now", &e))
        sum += e / 1e6;
      else if (read_number (m->batteries->pdata[i], "charge_now", &c)
               && read_number (m->batteries->pdata[i], "voltage_now", &u))
        sum += c / 1e6 * (u / 1e6);
    }
  return sum;
}

gboolean
lm_measure_upower_usable (Measure *m)
{
  g_autoptr (GVariant) owner = g_dbus_connection_call_sync (
      m->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
      "NameHasOwner", g_variant_new ("(s)", UPOWER_NAME), G_VARIANT_TYPE ("(b)"),
      G_DBUS_CALL_FLAGS_NONE, 5000, NULL, NULL);
  gboolean has = FALSE;

  if (owner != NULL)
    g_variant_get (owner, "(b)", &has);
  if (!has)
    return FALSE;
  m->display
      = g_dbus_proxy_new_sync (m->bus, G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START, NULL, UPOWER_NAME,
                               UPOWER_DISPLAY, "org.freedesktop.UPower.Device", NULL, NULL);
  if (m->display == NULL)
    return FALSE;
  g_autoptr (GVariant) present = g_dbus_proxy_get_cached_property (m->display, "IsPresent");
  g_autoptr (GVariant) rate = g_dbus_proxy_get_cached_property (m->display, "EnergyRate");
  if (present == NULL || !g_variant_get_boolean (present) || rate == NULL)
    {
      g_clear_object (&m->display);
      return FALSE;
    }
  return TRUE;
}
