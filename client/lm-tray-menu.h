/* lm-tray-menu.h: the tray item's menu, served with libdbusmenu-glib.
 * Owns the menu items and their checkmarks; never calls laptop-moded itself,
 * every click goes to a callback of the caller. */
#pragma once

#include <glib.h>

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
  void (*quit) (gpointer user_data);
} LmTrayMenuCallbacks;

LmTrayMenu *lm_tray_menu_new (const LmTrayMenuCallbacks *callbacks, gpointer user_data);
void lm_tray_menu_free (LmTrayMenu *menu);
/* @mode NULL: laptop-moded is not there; switching is disabled. */
void lm_tray_menu_set_state (LmTrayMenu *menu, const char *mode, gboolean active);
void lm_tray_menu_set_notify (LmTrayMenu *menu, gboolean notify);
/* @lines: newest first; empty or NULL shows @empty_text instead. */
void lm_tray_menu_set_spinups (LmTrayMenu *menu, const char *const *lines, const char *empty_text);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmTrayMenu, lm_tray_menu_free)

G_END_DECLS
