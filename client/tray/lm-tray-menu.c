/* lm-tray-menu.c: the tray item's menu, served with libdbusmenu-glib.
 * Owns the menu items and their checkmarks; never calls laptop-moded itself,
 * every click goes to a callback of the caller. */
#include "lm-tray-menu.h"

#include <libdbusmenu-glib/dbusmenu-glib.h>

#include "lm-tray-view.h"

static const struct
{
  const char *mode;
  const char *label;
} modes[] = {
  { "auto", "_Auto (on while on battery)" },
  { "on", "_On" },
  { "off", "O_ff" },
};

struct _LmTrayMenu
{
  DbusmenuServer *server;
  DbusmenuMenuitem *root;
  DbusmenuMenuitem *toggle;
  DbusmenuMenuitem *mode;
  DbusmenuMenuitem *modes[G_N_ELEMENTS (modes)];
  DbusmenuMenuitem *spinups;
  DbusmenuMenuitem *notify;
  DbusmenuMenuitem *report;
  /* What the spin-ups submenu shows, so it is rebuilt only when that changes. */
  char **spinup_lines;
  char *spinups_empty;
  LmTrayMenuCallbacks callbacks;
  gpointer user_data;
};

static void set_spinups (LmTrayMenu *menu, const char *const *lines, const char *empty_text);

static DbusmenuMenuitem *
add_item (DbusmenuMenuitem *parent, const char *label)
{
  DbusmenuMenuitem *item = dbusmenu_menuitem_new ();

  if (label != NULL)
    dbusmenu_menuitem_property_set (item, DBUSMENU_MENUITEM_PROP_LABEL, label);
  else
    dbusmenu_menuitem_property_set (item, DBUSMENU_MENUITEM_PROP_TYPE,
                                    DBUSMENU_CLIENT_TYPES_SEPARATOR);
  dbusmenu_menuitem_child_append (parent, item);
  /* The parent holds the only reference the menu needs. */
  g_object_unref (item);
  return item;
}

static void
set_toggle (DbusmenuMenuitem *item, const char *type, gboolean on)
{
  dbusmenu_menuitem_property_set (item, DBUSMENU_MENUITEM_PROP_TOGGLE_TYPE, type);
  dbusmenu_menuitem_property_set_int (item, DBUSMENU_MENUITEM_PROP_TOGGLE_STATE,
                                      on ? DBUSMENU_MENUITEM_TOGGLE_STATE_CHECKED
                                         : DBUSMENU_MENUITEM_TOGGLE_STATE_UNCHECKED);
}

static void
toggle_activated (DbusmenuMenuitem *item, guint timestamp, gpointer user_data)
{
  LmTrayMenu *menu = user_data;

  menu->callbacks.toggle (menu->user_data);
}

static void
mode_activated (DbusmenuMenuitem *item, guint timestamp, gpointer user_data)
{
  LmTrayMenu *menu = user_data;

  menu->callbacks.set_mode (g_object_get_data (G_OBJECT (item), "lm-mode"), menu->user_data);
}

static void
notify_activated (DbusmenuMenuitem *item, guint timestamp, gpointer user_data)
{
  LmTrayMenu *menu = user_data;
  gboolean on = dbusmenu_menuitem_property_get_int (item, DBUSMENU_MENUITEM_PROP_TOGGLE_STATE)
                == DBUSMENU_MENUITEM_TOGGLE_STATE_CHECKED;

  menu->callbacks.set_notify (!on, menu->user_data);
}

static gboolean
spinups_about_to_show (DbusmenuMenuitem *item, gpointer user_data)
{
  LmTrayMenu *menu = user_data;

  menu->callbacks.refresh_spinups (menu->user_data);
  return FALSE;
}

static void
report_activated (DbusmenuMenuitem *item, guint timestamp, gpointer user_data)
{
  LmTrayMenu *menu = user_data;

  menu->callbacks.open_report (menu->user_data);
}

static void
quit_activated (DbusmenuMenuitem *item, guint timestamp, gpointer user_data)
{
  LmTrayMenu *menu = user_data;

  menu->callbacks.quit (menu->user_data);
}

LmTrayMenu *
lm_tray_menu_new (const LmTrayMenuCallbacks *callbacks, gpointer user_data)
{
  LmTrayMenu *menu = g_new0 (LmTrayMenu, 1);
  DbusmenuMenuitem *item;

  menu->callbacks = *callbacks;
  menu->user_data = user_data;
  menu->root = dbusmenu_menuitem_new ();

  menu->toggle = add_item (menu->root, "_Laptop mode");
  set_toggle (menu->toggle, DBUSMENU_MENUITEM_TOGGLE_CHECK, FALSE);
  g_signal_connect (menu->toggle, DBUSMENU_MENUITEM_SIGNAL_ITEM_ACTIVATED,
                    G_CALLBACK (toggle_activated), menu);

  menu->mode = add_item (menu->root, "_Mode");
  dbusmenu_menuitem_property_set (menu->mode, DBUSMENU_MENUITEM_PROP_CHILD_DISPLAY,
                                  DBUSMENU_MENUITEM_CHILD_DISPLAY_SUBMENU);
  for (gsize i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      item = add_item (menu->mode, modes[i].label);
      set_toggle (item, DBUSMENU_MENUITEM_TOGGLE_RADIO, FALSE);
      g_object_set_data (G_OBJECT (item), "lm-mode", (gpointer) modes[i].mode);
      g_signal_connect (item, DBUSMENU_MENUITEM_SIGNAL_ITEM_ACTIVATED, G_CALLBACK (mode_activated),
                        menu);
      menu->modes[i] = item;
    }

  menu->spinups = add_item (menu->root, "_Recent spin-ups");
  dbusmenu_menuitem_property_set (menu->spinups, DBUSMENU_MENUITEM_PROP_CHILD_DISPLAY,
                                  DBUSMENU_MENUITEM_CHILD_DISPLAY_SUBMENU);
  g_signal_connect (menu->spinups, DBUSMENU_MENUITEM_SIGNAL_ABOUT_TO_SHOW,
                    G_CALLBACK (spinups_about_to_show), menu);
  set_spinups (menu, NULL, "None yet");

  menu->notify = add_item (menu->root, "_Notify me of spin-ups");
  set_toggle (menu->notify, DBUSMENU_MENUITEM_TOGGLE_CHECK, FALSE);
  g_signal_connect (menu->notify, DBUSMENU_MENUITEM_SIGNAL_ITEM_ACTIVATED,
                    G_CALLBACK (notify_activated), menu);

  menu->report = add_item (menu->root, LM_TRAY_REPORT_LABEL);
  dbusmenu_menuitem_property_set_bool (menu->report, DBUSMENU_MENUITEM_PROP_ENABLED, FALSE);
  g_signal_connect (menu->report, DBUSMENU_MENUITEM_SIGNAL_ITEM_ACTIVATED,
                    G_CALLBACK (report_activated), menu);

  add_item (menu->root, NULL);
  item = add_item (menu->root, "_Quit");
  g_signal_connect (item, DBUSMENU_MENUITEM_SIGNAL_ITEM_ACTIVATED, G_CALLBACK (quit_activated),
                    menu);

  /* Exports on the session bus as soon as the server has its connection. */
  menu->server = dbusmenu_server_new (LM_TRAY_MENU_PATH);
  dbusmenu_server_set_root (menu->server, menu->root);
  return menu;
}

void
lm_tray_menu_free (LmTrayMenu *menu)
{
  if (menu == NULL)
    return;
  g_clear_object (&menu->server);
  g_clear_object (&menu->root);
  g_strfreev (menu->spinup_lines);
  g_free (menu->spinups_empty);
  g_free (menu);
}

static void
set_state (LmTrayMenu *menu, const LmTrayView *view)
{
  dbusmenu_menuitem_property_set_bool (menu->toggle, DBUSMENU_MENUITEM_PROP_ENABLED,
                                       view->can_switch);
  dbusmenu_menuitem_property_set_int (menu->toggle, DBUSMENU_MENUITEM_PROP_TOGGLE_STATE,
                                      view->toggle_checked
                                          ? DBUSMENU_MENUITEM_TOGGLE_STATE_CHECKED
                                          : DBUSMENU_MENUITEM_TOGGLE_STATE_UNCHECKED);
  dbusmenu_menuitem_property_set_bool (menu->mode, DBUSMENU_MENUITEM_PROP_ENABLED,
                                       view->can_switch);
  for (gsize i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      dbusmenu_menuitem_property_set_bool (menu->modes[i], DBUSMENU_MENUITEM_PROP_ENABLED,
                                           view->can_switch);
      dbusmenu_menuitem_property_set_int (menu->modes[i], DBUSMENU_MENUITEM_PROP_TOGGLE_STATE,
                                          g_strcmp0 (view->mode_checked, modes[i].mode) == 0
                                              ? DBUSMENU_MENUITEM_TOGGLE_STATE_CHECKED
                                              : DBUSMENU_MENUITEM_TOGGLE_STATE_UNCHECKED);
    }
  dbusmenu_menuitem_property_set (menu->report, DBUSMENU_MENUITEM_PROP_LABEL, view->report_label);
  dbusmenu_menuitem_property_set_bool (menu->report, DBUSMENU_MENUITEM_PROP_ENABLED,
                                       view->report_sensitive);
}

void
lm_tray_menu_set_notify (LmTrayMenu *menu, gboolean notify)
{
  dbusmenu_menuitem_property_set_int (menu->notify, DBUSMENU_MENUITEM_PROP_TOGGLE_STATE,
                                      notify ? DBUSMENU_MENUITEM_TOGGLE_STATE_CHECKED
                                             : DBUSMENU_MENUITEM_TOGGLE_STATE_UNCHECKED);
}

static void
set_spinups (LmTrayMenu *menu, const char *const *lines, const char *empty_text)
{
  const char *const none[] = { NULL };
  GList *old;

  if (lines == NULL)
    lines = none;
  if (menu->spinup_lines != NULL && g_strv_equal ((const char *const *) menu->spinup_lines, lines)
      && g_strcmp0 (menu->spinups_empty, empty_text) == 0)
    return;
  g_strfreev (menu->spinup_lines);
  menu->spinup_lines = g_strdupv ((char **) lines);
  g_free (menu->spinups_empty);
  menu->spinups_empty = g_strdup (empty_text);

  old = dbusmenu_menuitem_take_children (menu->spinups);
  g_list_free_full (old, g_object_unref);
  if (lines[0] == NULL)
    {
      DbusmenuMenuitem *item = add_item (menu->spinups, empty_text);
      dbusmenu_menuitem_property_set_bool (item, DBUSMENU_MENUITEM_PROP_ENABLED, FALSE);
      return;
    }
  /* Labels are shown as given: an underscore in a process name is not a
   * mnemonic. */
  for (gsize i = 0; lines[i] != NULL; i++)
    {
      g_autoptr (GString) label = g_string_new (lines[i]);
      g_string_replace (label, "_", "__", 0);
      DbusmenuMenuitem *item = add_item (menu->spinups, label->str);
      dbusmenu_menuitem_property_set_bool (item, DBUSMENU_MENUITEM_PROP_ENABLED, FALSE);
    }
}

void
lm_tray_menu_apply (LmTrayMenu *menu, const LmTrayView *view)
{
  set_state (menu, view);
  set_spinups (menu, (const char *const *) view->spinup_lines, view->spinups_empty);
}
