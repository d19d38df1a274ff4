/* lm-power.c: AC or battery, and a low battery, from UPower when it is on the
 * bus, else from /sys/class/power_supply followed through kernel uevents.
 * Event driven only: nothing here wakes up on a timer. */
#include "lm-power.h"
#include "lm-names.h"

#include "lm-io.h"
#include "lm-paths.h"
#include "lm-uevent.h"

#define UPOWER_PATH "/org/freedesktop/UPower"
#define UPOWER_DISPLAY_PATH "/org/freedesktop/UPower/devices/DisplayDevice"
/* UPower's WarningLevel: 3 low, 4 critical, 5 action. */
#define UPOWER_WARNING_LOW 3

struct _LmPower
{
  GDBusConnection *bus;
  guint low_percent;
  guint watch;
  char *upower_owner; /* UPower's unique name: the proxies talk only to it */
  GCancellable *cancellable;
  GDBusProxy *upower;
  GDBusProxy *display;
  LmUevent *uevent;

  gboolean on_battery;
  gboolean low; /* latched: stays until the machine is back on AC */

  LmPowerFunc func;
  gpointer user_data;
};

static void
changed (LmPower *self)
{
  if (self->func != NULL)
    self->func (self, self->user_data);
}

/* A low battery holds laptop mode off until the machine is charging again,
 * so a reading that hovers around the threshold cannot toggle it. */
static void
update (LmPower *self, gboolean on_battery, gboolean low_seen)
{
  gboolean low = self->low;

  if (!on_battery)
    low = FALSE;
  else if (low_seen)
    low = TRUE;

  if (on_battery == self->on_battery && low == self->low)
    return;
  self->on_battery = on_battery;
  self->low = low;
  g_debug ("Power: %s%s", on_battery ? "battery" : "AC", low ? ", battery low" : "");
  changed (self);
}

/* --- sysfs ------------------------------------------------------------- */

static char *
supply_attr (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  return lm_io_read_value (path, NULL);
}

/* Batteries of peripherals (mice, phones) report scope "Device": they say
 * nothing about what powers the laptop. */
void
lm_power_read_sysfs (LmPowerSysfs *out)
{
  g_autofree char *class_dir = lm_path ("/sys/class/power_supply");
  g_autoptr (GDir) dir = g_dir_open (class_dir, 0, NULL);
  gboolean ac_online = FALSE, discharging = FALSE;
  gint sum = 0, batteries = 0;
  const char *name;

  out->on_battery = FALSE;
  out->battery_present = FALSE;
  out->percentage = -1;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *supply = g_build_filename (class_dir, name, NULL);
      g_autofree char *type = supply_attr (supply, "type");
      g_autofree char *scope = supply_attr (supply, "scope");

      if (type == NULL || g_strcmp0 (scope, "Device") == 0)
        continue;
      if (g_str_equal (type, "Battery"))
        {
          g_autofree char *present = supply_attr (supply, "present");
          g_autofree char *status = supply_attr (supply, "status");
          g_autofree char *capacity = supply_attr (supply, "capacity");
          guint64 pct;

          if (g_strcmp0 (present, "0") == 0)
            continue;
          out->battery_present = TRUE;
          if (g_strcmp0 (status, "Discharging") == 0)
            discharging = TRUE;
          if (capacity != NULL && g_ascii_string_to_unsigned (capacity, 10, 0, 100, &pct, NULL))
            {
              sum += (gint) pct;
              batteries++;
            }
        }
      else
        {
          /* Mains, USB, USB_PD...: any external supply that is online. */
          g_autofree char *online = supply_attr (supply, "online");
          if (g_strcmp0 (online, "1") == 0)
            ac_online = TRUE;
        }
    }
  out->on_battery = !ac_online && discharging;
  if (batteries > 0)
    out->percentage = sum / batteries;
}

static void
refresh_sysfs (LmPower *self)
{
  LmPowerSysfs s;

  lm_power_read_sysfs (&s);
  update (self, s.on_battery,
          s.on_battery && s.percentage >= 0 && (guint) s.percentage <= self->low_percent);
}

static void
on_uevent (const char *subsystem, const char *action, gpointer user_data)
{
  LmPower *self = user_data;

  if (g_str_equal (subsystem, "power_supply") && self->upower == NULL)
    refresh_sysfs (self);
}

static void
use_sysfs (LmPower *self)
{
  g_autoptr (GError) error = NULL;

  if (self->uevent == NULL)
    {
      self->uevent = lm_uevent_new (on_uevent, self, &error);
      if (self->uevent == NULL)
        g_warning ("%s; power source changes will not be noticed", error->message);
    }
  refresh_sysfs (self);
}

/* --- UPower ------------------------------------------------------------ */

static void
refresh_upower (LmPower *self)
{
  g_autoptr (GVariant) on_battery = NULL;
  g_autoptr (GVariant) level = NULL;

  if (self->upower == NULL)
    return;
  on_battery = g_dbus_proxy_get_cached_property (self->upower, "OnBattery");
  if (self->display != NULL)
    level = g_dbus_proxy_get_cached_property (self->display, "WarningLevel");

  gboolean battery = on_battery != NULL && g_variant_is_of_type (on_battery, G_VARIANT_TYPE_BOOLEAN)
                     && g_variant_get_boolean (on_battery);
  gboolean low = level != NULL && g_variant_is_of_type (level, G_VARIANT_TYPE_UINT32)
                 && g_variant_get_uint32 (level) >= UPOWER_WARNING_LOW;
  update (self, battery, low);
}

static void
on_upower_changed (GDBusProxy *proxy, GVariant *changed, GStrv invalidated, gpointer user_data)
{
  refresh_upower (user_data);
}

/* The proxy of @result, or NULL when it failed (logged as @what at @level
 * unless cancelled) or is for an owner that has left the bus since.
 * @user_data is the LmPower, read only once the proxy exists: a cancelled
 * call may come after it was freed. */
static GDBusProxy *
upower_proxy_finish (GAsyncResult *result, gpointer user_data, GLogLevelFlags level,
                     const char *what)
{
  g_autoptr (GError) error = NULL;
  GDBusProxy *proxy = g_dbus_proxy_new_finish (result, &error);
  LmPower *self;

  if (proxy == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_log (G_LOG_DOMAIN, level, "%s: %s", what, error->message);
      return NULL;
    }
  self = user_data;
  if (g_strcmp0 (g_dbus_proxy_get_name (proxy), self->upower_owner) != 0)
    {
      g_object_unref (proxy);
      return NULL;
    }
  return proxy;
}

static void
display_ready (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GDBusProxy *proxy
      = upower_proxy_finish (result, user_data, G_LOG_LEVEL_DEBUG, "No UPower display device");
  LmPower *self = user_data;

  if (proxy == NULL)
    return;
  g_clear_object (&self->display);
  self->display = proxy;
  g_signal_connect (proxy, "g-properties-changed", G_CALLBACK (on_upower_changed), self);
  refresh_upower (self);
}

static void
upower_ready (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GDBusProxy *proxy
      = upower_proxy_finish (result, user_data, G_LOG_LEVEL_WARNING, "Cannot talk to UPower");
  LmPower *self = user_data;

  if (proxy == NULL)
    return;
  g_clear_object (&self->upower);
  self->upower = proxy;
  /* UPower announces changes; the sysfs watch is not needed meanwhile. */
  g_clear_pointer (&self->uevent, lm_uevent_free);
  g_signal_connect (proxy, "g-properties-changed", G_CALLBACK (on_upower_changed), self);
  g_dbus_proxy_new (self->bus, G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START, NULL, self->upower_owner,
                    UPOWER_DISPLAY_PATH, "org.freedesktop.UPower.Device", self->cancellable,
                    display_ready, self);
  g_message ("Power source: UPower");
  refresh_upower (self);
  changed (self);
}

static void
upower_appeared (GDBusConnection *bus, const char *name, const char *owner, gpointer user_data)
{
  LmPower *self = user_data;

  /* A proxy for the unique name takes PropertiesChanged only from it (its
   * match rule and GLib's dispatch both use that sender), never from a
   * process that merely sends a signal that looks like UPower's. */
  g_free (self->upower_owner);
  self->upower_owner = g_strdup (owner);
  g_dbus_proxy_new (bus, G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START, NULL, owner, UPOWER_PATH,
                    LM_UPOWER_NAME, self->cancellable, upower_ready, self);
}

static void
upower_vanished (GDBusConnection *bus, const char *name, gpointer user_data)
{
  LmPower *self = user_data;

  g_clear_pointer (&self->upower_owner, g_free);
  if (self->upower != NULL)
    g_message ("UPower left the bus; following /sys/class/power_supply");
  g_clear_object (&self->upower);
  g_clear_object (&self->display);
  use_sysfs (self);
  changed (self);
}

LmPower *
lm_power_new (GDBusConnection *bus, guint low_percent, LmPowerFunc func, gpointer user_data)
{
  LmPower *self = g_new0 (LmPower, 1);

  self->bus = g_object_ref (bus);
  self->low_percent = low_percent;
  self->cancellable = g_cancellable_new ();
  /* Start from sysfs so the first answer does not wait for the bus. */
  use_sysfs (self);
  /* Told from here on: the first reading is the caller's to ask for. */
  self->func = func;
  self->user_data = user_data;
  self->watch = g_bus_watch_name_on_connection (bus, LM_UPOWER_NAME, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                upower_appeared, upower_vanished, self, NULL);
  return self;
}

gboolean
lm_power_get_on_battery (LmPower *self)
{
  return self->on_battery;
}

gboolean
lm_power_get_low_battery (LmPower *self)
{
  return self->low;
}

const char *
lm_power_get_source (LmPower *self)
{
  return self->upower != NULL ? "upower" : "sysfs";
}

void
lm_power_set_low_percent (LmPower *self, guint low_percent)
{
  self->low_percent = low_percent;
  if (self->upower == NULL)
    refresh_sysfs (self);
}

void
lm_power_free (LmPower *self)
{
  if (self == NULL)
    return;
  /* Calls still in flight end as cancelled and never read @self
   * (upower_proxy_finish). */
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_handle_id (&self->watch, g_bus_unwatch_name);
  if (self->upower != NULL)
    g_signal_handlers_disconnect_by_data (self->upower, self);
  if (self->display != NULL)
    g_signal_handlers_disconnect_by_data (self->display, self);
  g_clear_object (&self->upower);
  g_clear_object (&self->display);
  g_clear_pointer (&self->uevent, lm_uevent_free);
  g_clear_object (&self->bus);
  g_free (self->upower_owner);
  g_free (self);
}
