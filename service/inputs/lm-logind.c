/* lm-logind.c: session and seat changes from logind, as events: SessionNew,
 * SessionRemoved, SeatNew, SeatRemoved and PropertiesChanged of a session's
 * or seat's Active, State or ActiveSession, taken only from logind's unique
 * name. Never polls; a burst of signals makes one call. */
#include "lm-logind.h"
#include "lm-names.h"

#include "lm-owner-signals.h"

#define PROPERTIES "org.freedesktop.DBus.Properties"

/* A session switch is several signals (the old session inactive, the new
 * one active, the seat's ActiveSession); one call after them is enough. */
#define LM_LOGIND_SETTLE_MS 100

struct _LmLogind
{
  LmOwnerSignals *signals;
  guint settle_id;
  gboolean seen_owner; /* logind came back: sessions may have changed meanwhile */
  LmLogindChangedFunc func;
  gpointer user_data;
};

static gboolean
settled (gpointer user_data)
{
  LmLogind *self = user_data;

  self->settle_id = 0;
  self->func (self->user_data);
  return G_SOURCE_REMOVE;
}

static void
changed (LmLogind *self, const char *what)
{
  g_debug ("logind: %s", what);
  if (self->settle_id == 0)
    self->settle_id = g_timeout_add (LM_LOGIND_SETTLE_MS, settled, self);
}

static void
on_manager_signal (GDBusConnection *bus, const char *sender, const char *path, const char *iface,
                   const char *signal, GVariant *params, gpointer user_data)
{
  changed (user_data, signal);
}

/* Only what polkit decides on; IdleHint and the like change all the time. */
static gboolean
matters (const char *property)
{
  return g_str_equal (property, "Active") || g_str_equal (property, "State")
         || g_str_equal (property, "ActiveSession");
}

static void
on_properties_changed (GDBusConnection *bus, const char *sender, const char *path,
                       const char *iface, const char *signal, GVariant *params, gpointer user_data)
{
  const char *interface;
  g_autoptr (GVariant) props = NULL;
  g_autofree const char **invalidated = NULL;
  gboolean any = FALSE;

  if (!g_variant_is_of_type (params, G_VARIANT_TYPE ("(sa{sv}as)")))
    return;
  g_variant_get (params, "(&s@a{sv}^a&s)", &interface, &props, &invalidated);
  if (!(g_str_equal (interface, LM_LOGIND_SESSION)
        && g_str_has_prefix (path, LM_LOGIND_PATH "/session/"))
      && !(g_str_equal (interface, LM_LOGIND_SEAT)
           && g_str_has_prefix (path, LM_LOGIND_PATH "/seat/")))
    return;

  GVariantIter iter;
  const char *key;
  g_variant_iter_init (&iter, props);
  while (!any && g_variant_iter_next (&iter, "{&sv}", &key, NULL))
    any = matters (key);
  for (gsize i = 0; !any && invalidated[i] != NULL; i++)
    any = matters (invalidated[i]);
  if (any)
    changed (user_data, path);
}

static void
logind_appeared (GDBusConnection *bus, const char *name, const char *owner, gpointer user_data)
{
  LmLogind *self = user_data;

  if (self->seen_owner)
    changed (self, "came back");
  self->seen_owner = TRUE;
}

LmLogind *
lm_logind_new (GDBusConnection *bus, LmLogindChangedFunc func, gpointer user_data)
{
  LmLogind *self = g_new0 (LmLogind, 1);
  static const char *const manager_signals[]
      = { "SessionNew", "SessionRemoved", "SeatNew", "SeatRemoved" };

  self->func = func;
  self->user_data = user_data;
  self->signals = lm_owner_signals_new (bus, LM_LOGIND_NAME, logind_appeared, NULL, self);
  for (gsize i = 0; i < G_N_ELEMENTS (manager_signals); i++)
    lm_owner_signals_add (self->signals, LM_LOGIND_MANAGER, manager_signals[i], LM_LOGIND_PATH,
                          on_manager_signal);
  /* Any object: one subscription for every session and seat, filtered by
   * path and interface; the sender is logind alone, so little arrives. */
  lm_owner_signals_add (self->signals, PROPERTIES, "PropertiesChanged", NULL,
                        on_properties_changed);
  return self;
}

void
lm_logind_free (LmLogind *self)
{
  if (self == NULL)
    return;
  g_clear_handle_id (&self->settle_id, g_source_remove);
  g_clear_pointer (&self->signals, lm_owner_signals_free);
  g_free (self);
}
