/* lm-profile.c: power-profiles-daemon's ActiveProfile under both of its
 * names (net.hadess.PowerProfiles, org.freedesktop.UPower.PowerProfiles).
 * Event driven only: PropertiesChanged and name owner changes, never a poll. */
#include "lm-profile.h"

#include "lm-limits.h"

/* Either name may be owned (power-profiles-daemon 0.20 owns both): the
 * profile is power-saver when any owner says so. */
static const struct
{
  const char *name, *path;
} services[] = {
  { "net.hadess.PowerProfiles", "/net/hadess/PowerProfiles" },
  { "org.freedesktop.UPower.PowerProfiles", "/org/freedesktop/UPower/PowerProfiles" },
};
#define N_SERVICES G_N_ELEMENTS (services)

typedef struct
{
  struct _LmProfile *profile;
  guint index;
  guint watch;
  char *owner;       /* the unique name that owns services[index] now */
  GDBusProxy *proxy; /* for that unique name only */
} LmProfileService;

struct _LmProfile
{
  GDBusConnection *bus;
  GCancellable *cancellable;
  LmProfileService services[N_SERVICES];
  LmProfileFunc func;
  gpointer user_data;
  gboolean power_saver;
};

/* A profile is a short word; anything else (another type, a megabyte of
 * text) is refused as no profile, once in the log. */
static gboolean
proxy_says_power_saver (GDBusProxy *proxy)
{
  g_autofree char *owner = g_dbus_proxy_get_name_owner (proxy);
  g_autoptr (GVariant) value = NULL;
  const char *profile;
  gsize len;

  if (owner == NULL)
    return FALSE;
  value = g_dbus_proxy_get_cached_property (proxy, "ActiveProfile");
  if (value == NULL)
    return FALSE;
  if (!g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    {
      g_warning ("%s sent ActiveProfile of type %s, not a string; ignored",
                 g_dbus_proxy_get_interface_name (proxy), g_variant_get_type_string (value));
      return FALSE;
    }
  profile = g_variant_get_string (value, &len);
  if (len > LM_LIMIT_NAME)
    {
      g_warning ("%s sent an ActiveProfile of %zu bytes (at most %d); ignored",
                 g_dbus_proxy_get_interface_name (proxy), len, LM_LIMIT_NAME);
      return FALSE;
    }
  return g_str_equal (profile, "power-saver");
}

static void
refresh (LmProfile *self)
{
  gboolean power_saver = FALSE;

  for (guint i = 0; i < N_SERVICES; i++)
    if (self->services[i].proxy != NULL && proxy_says_power_saver (self->services[i].proxy))
      power_saver = TRUE;
  if (power_saver == self->power_saver)
    return;
  self->power_saver = power_saver;
  g_debug ("Power profile: %s", power_saver ? "power-saver" : "not power-saver");
  self->func (self, self->user_data);
}

static void
on_properties_changed (GDBusProxy *proxy, GVariant *changed, GStrv invalidated, gpointer user_data)
{
  refresh (user_data);
}

static void
proxy_ready (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  GDBusProxy *proxy = g_dbus_proxy_new_finish (result, &error);
  LmProfileService *service;

  if (proxy == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_warning ("Cannot follow the power profile: %s", error->message);
      return;
    }
  service = user_data; /* not cancelled: still alive */
  if (g_strcmp0 (g_dbus_proxy_get_name (proxy), service->owner) != 0)
    {
      g_object_unref (proxy); /* an owner that has left since */
      return;
    }
  g_clear_object (&service->proxy);
  service->proxy = proxy;
  g_signal_connect (proxy, "g-properties-changed", G_CALLBACK (on_properties_changed),
                    service->profile);
  refresh (service->profile);
}

/* A proxy for the unique name takes PropertiesChanged only from that
 * sender (its match rule and GLib's dispatch), never from a process that
 * sends a signal looking like power-profiles-daemon's. */
static void
service_appeared (GDBusConnection *bus, const char *name, const char *owner, gpointer user_data)
{
  LmProfileService *service = user_data;

  g_free (service->owner);
  service->owner = g_strdup (owner);
  g_dbus_proxy_new (bus, G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START, NULL, owner,
                    services[service->index].path, services[service->index].name,
                    service->profile->cancellable, proxy_ready, service);
}

static void
service_vanished (GDBusConnection *bus, const char *name, gpointer user_data)
{
  LmProfileService *service = user_data;

  g_clear_pointer (&service->owner, g_free);
  if (service->proxy != NULL)
    {
      g_signal_handlers_disconnect_by_data (service->proxy, service->profile);
      g_clear_object (&service->proxy);
    }
  refresh (service->profile);
}

LmProfile *
lm_profile_new (GDBusConnection *bus, LmProfileFunc func, gpointer user_data)
{
  LmProfile *self = g_new0 (LmProfile, 1);

  self->bus = g_object_ref (bus);
  self->cancellable = g_cancellable_new ();
  self->func = func;
  self->user_data = user_data;
  /* Never activate it: following a profile must not start the service. */
  for (guint i = 0; i < N_SERVICES; i++)
    {
      self->services[i].profile = self;
      self->services[i].index = i;
      self->services[i].watch = g_bus_watch_name_on_connection (
          bus, services[i].name, G_BUS_NAME_WATCHER_FLAGS_NONE, service_appeared, service_vanished,
          &self->services[i], NULL);
    }
  return self;
}

gboolean
lm_profile_get_power_saver (LmProfile *self)
{
  return self->power_saver;
}

void
lm_profile_free (LmProfile *self)
{
  if (self == NULL)
    return;
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  for (guint i = 0; i < N_SERVICES; i++)
    {
      LmProfileService *service = &self->services[i];
      g_clear_handle_id (&service->watch, g_bus_unwatch_name);
      if (service->proxy != NULL)
        g_signal_handlers_disconnect_by_data (service->proxy, self);
      g_clear_object (&service->proxy);
      g_free (service->owner);
    }
  g_clear_object (&self->bus);
  g_free (self);
}
