/* lm-tray-item.c: the StatusNotifierItem on the session bus.
 * Owns the item's bus name, object and watcher registration; never talks
 * to laptop-moded and never decides what the icon means. */
#include "lm-tray-item.h"

#include <unistd.h>

#include <gio/gio.h>

#include "lm-sni-generated.h"
#include "lm-tray-view.h"

#define WATCHER_NAME "org.kde.StatusNotifierWatcher"
#define WATCHER_PATH "/StatusNotifierWatcher"

struct _LmTrayItem
{
  LmSni *skeleton;
  LmTrayItemCallbacks callbacks;
  gpointer user_data;
  char *bus_name;
  guint own_id;
  guint watcher_id;
  GDBusConnection *connection;
};

static void
registered (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply
      = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  /* Not fatal: the host may come back, and the watcher is followed. */
  if (reply == NULL)
    g_warning ("The tray host refused the item: %s", error->message);
  else
    g_debug ("Registered with %s", WATCHER_NAME);
}

/* Called for the first watcher and again for every new one, so that a
 * restarted panel shows the item without our restarting. */
static void
watcher_appeared (GDBusConnection *connection, const char *name, const char *owner,
                  gpointer user_data)
{
  LmTrayItem *item = user_data;

  g_debug ("%s appeared (%s), registering %s", name, owner, item->bus_name);
  g_dbus_connection_call (connection, WATCHER_NAME, WATCHER_PATH, WATCHER_NAME,
                          "RegisterStatusNotifierItem", g_variant_new ("(s)", item->bus_name), NULL,
                          G_DBUS_CALL_FLAGS_NONE, -1, NULL, registered, item);
}

static void
watcher_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  if (connection != NULL)
    g_debug ("No %s on the session bus; waiting for a tray host", name);
}

static gboolean
handle_activate (LmSni *skeleton, GDBusMethodInvocation *invocation, int x, int y,
                 gpointer user_data)
{
  LmTrayItem *item = user_data;

  lm_sni_complete_activate (skeleton, invocation);
  item->callbacks.activate (item->user_data);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* The menu is served through com.canonical.dbusmenu, and a middle click or
 * scroll has no meaning here; the calls succeed so hosts do not log errors. */
static gboolean
handle_context_menu (LmSni *skeleton, GDBusMethodInvocation *invocation, int x, int y)
{
  lm_sni_complete_context_menu (skeleton, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_secondary_activate (LmSni *skeleton, GDBusMethodInvocation *invocation, int x, int y)
{
  lm_sni_complete_secondary_activate (skeleton, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_scroll (LmSni *skeleton, GDBusMethodInvocation *invocation, int delta,
               const char *orientation)
{
  lm_sni_complete_scroll (skeleton, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
bus_acquired (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmTrayItem *item = user_data;
  g_autoptr (GError) error = NULL;

  if (!g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (item->skeleton), connection,
                                         LM_TRAY_ITEM_PATH, &error))
    {
      g_warning ("Cannot export the tray item: %s", error->message);
      item->callbacks.lost (item->user_data);
      return;
    }
  item->connection = g_object_ref (connection);
}

static void
name_acquired (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmTrayItem *item = user_data;

  /* Register only once the name is ours: the watcher checks its owner. */
  if (item->watcher_id == 0)
    item->watcher_id
        = g_bus_watch_name_on_connection (connection, WATCHER_NAME, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                          watcher_appeared, watcher_vanished, item, NULL);
}

static void
name_lost (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmTrayItem *item = user_data;

  if (connection == NULL)
    g_warning ("Cannot connect to the session bus; nothing to show the item on");
  else
    g_warning ("Lost the bus name %s", name);
  item->callbacks.lost (item->user_data);
}

static GVariant *
no_pixmaps (void)
{
  return g_variant_new_array (G_VARIANT_TYPE ("(iiay)"), NULL, 0);
}

LmTrayItem *
lm_tray_item_new (const char *menu_path, const char *icon_theme_path,
                  const LmTrayItemCallbacks *callbacks, gpointer user_data)
{
  LmTrayItem *item = g_new0 (LmTrayItem, 1);

  item->callbacks = *callbacks;
  item->user_data = user_data;
  item->skeleton = lm_sni_skeleton_new ();
  /* Every property has a value from the start: hosts read them all with
   * GetAll, and a missing one makes some of them drop the item. */
  lm_sni_set_category (item->skeleton, "Hardware");
  lm_sni_set_id (item->skeleton, "laptop-mode-tray");
  lm_sni_set_title (item->skeleton, "Laptop mode");
  lm_sni_set_status (item->skeleton, "Active");
  lm_sni_set_window_id (item->skeleton, 0);
  lm_sni_set_icon_name (item->skeleton, "laptop-mode-unavailable");
  lm_sni_set_icon_theme_path (item->skeleton, icon_theme_path != NULL ? icon_theme_path : "");
  lm_sni_set_icon_pixmap (item->skeleton, no_pixmaps ());
  lm_sni_set_overlay_icon_name (item->skeleton, "");
  lm_sni_set_overlay_icon_pixmap (item->skeleton, no_pixmaps ());
  lm_sni_set_attention_icon_name (item->skeleton, "");
  lm_sni_set_attention_icon_pixmap (item->skeleton, no_pixmaps ());
  lm_sni_set_attention_movie_name (item->skeleton, "");
  lm_sni_set_item_is_menu (item->skeleton, FALSE);
  lm_sni_set_menu (item->skeleton, menu_path);
  lm_tray_item_set_tooltip (item, "Laptop mode", "");

  g_signal_connect (item->skeleton, "handle-activate", G_CALLBACK (handle_activate), item);
  g_signal_connect (item->skeleton, "handle-context-menu", G_CALLBACK (handle_context_menu), NULL);
  g_signal_connect (item->skeleton, "handle-secondary-activate",
                    G_CALLBACK (handle_secondary_activate), NULL);
  g_signal_connect (item->skeleton, "handle-scroll", G_CALLBACK (handle_scroll), NULL);

  /* The name the specification asks for: one item per process. */
  item->bus_name = g_strdup_printf ("org.kde.StatusNotifierItem-%d-1", (int) getpid ());
  item->own_id
      = g_bus_own_name (G_BUS_TYPE_SESSION, item->bus_name, G_BUS_NAME_OWNER_FLAGS_DO_NOT_QUEUE,
                        bus_acquired, name_acquired, name_lost, item, NULL);
  return item;
}

void
lm_tray_item_free (LmTrayItem *item)
{
  if (item == NULL)
    return;
  if (item->watcher_id != 0)
    g_bus_unwatch_name (item->watcher_id);
  if (item->own_id != 0)
    g_bus_unown_name (item->own_id);
  if (item->connection != NULL)
    g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (item->skeleton));
  g_clear_object (&item->connection);
  g_clear_object (&item->skeleton);
  g_free (item->bus_name);
  g_free (item);
}

void
lm_tray_item_set_icon (LmTrayItem *item, const char *icon_name)
{
  if (g_strcmp0 (lm_sni_get_icon_name (item->skeleton), icon_name) == 0)
    return;
  lm_sni_set_icon_name (item->skeleton, icon_name);
  lm_sni_emit_new_icon (item->skeleton);
}

void
lm_tray_item_set_status (LmTrayItem *item, const char *status)
{
  if (g_strcmp0 (lm_sni_get_status (item->skeleton), status) == 0)
    return;
  lm_sni_set_status (item->skeleton, status);
  lm_sni_emit_new_status (item->skeleton, status);
}

void
lm_tray_item_set_tooltip (LmTrayItem *item, const char *title, const char *description)
{
  /* Hosts may render the description as markup (KDE does). */
  g_autofree char *escaped = g_markup_escape_text (description, -1);
  GVariant *old = lm_sni_get_tool_tip (item->skeleton);
  g_autoptr (GVariant) tooltip = g_variant_ref_sink (g_variant_new (
      "(s@a(iiay)ss)", lm_sni_get_icon_name (item->skeleton), no_pixmaps (), title, escaped));

  if (old != NULL && g_variant_equal (old, tooltip))
    return;
  lm_sni_set_tool_tip (item->skeleton, tooltip);
  lm_sni_emit_new_tool_tip (item->skeleton);
}

void
lm_tray_item_apply (LmTrayItem *item, const LmTrayView *view)
{
  lm_tray_item_set_icon (item, view->icon_name);
  lm_tray_item_set_status (item, view->status);
  lm_tray_item_set_tooltip (item, view->title, view->body);
}
