/* lm-tray-menu.h: the tray item's menu, served with libdbusmenu-glib.
 * Owns the menu items and their checkmarks; never calls laptop-moded itself,
 * every click goes to a callback of the caller. */
#pragma once

#include <glib.h>

#include "lm-tray-view.h"

G_BEGIN_DECLS

#define LM_TRAY_MENU_PATH "/MenuBar"

typedef struct _LmTrayMenu LmTrayMenu;

typedef struct
{
  void (*toggle) (gpointer user_data);
  void (*set_mode) (const char *mode, gpointer user_data);
  void (*set_notify) (gboolean notify, gpointer user_data);
  /* The recent spin-ups submenu is about to open: a moment to refresh it. */
  void (*refresh_spinups) (gpointer user_data);
  void (*open_report) (gpointer user_data);
  void (*quit) (gpointer user_data);
} LmTrayMenuCallbacks;

LmTrayMenu *lm_tray_menu_new (const LmTrayMenuCallbacks *callbacks, gpointer user_data);
void lm_tray_menu_free (LmTrayMenu *menu);
/* Shows @view: switching, the mode, the recent spin-ups, the report item. */
void lm_tray_menu_apply (LmTrayMenu *menu, const LmTrayView *view);
void lm_tray_menu_set_notify (LmTrayMenu *menu, gboolean notify);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmTrayMenu, lm_tray_menu_free)

G_END_DECLS
