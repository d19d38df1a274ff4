/* lm-tray-item.h: the StatusNotifierItem on the session bus.
 * Owns the item's bus name, object and watcher registration; never talks
 * to laptop-moded and never decides what the icon means. */
#pragma once

#include <glib.h>

#include "lm-tray-view.h"

G_BEGIN_DECLS

#define LM_TRAY_ITEM_PATH "/StatusNotifierItem"

typedef struct _LmTrayItem LmTrayItem;

typedef struct
{
  /* A primary click on the icon (Activate). */
  void (*activate) (gpointer user_data);
  /* The session bus went away: nothing can be shown any more. */
  void (*lost) (gpointer user_data);
} LmTrayItemCallbacks;

LmTrayItem *lm_tray_item_new (const char *menu_path, const char *icon_theme_path,
                              const LmTrayItemCallbacks *callbacks, gpointer user_data);
void lm_tray_item_free (LmTrayItem *item);
void lm_tray_item_set_icon (LmTrayItem *item, const char *icon_name);
void lm_tray_item_set_status (LmTrayItem *item, const char *status);
void lm_tray_item_set_tooltip (LmTrayItem *item, const char *title, const char *description);
/* Icon, status and tooltip from @view. */
void lm_tray_item_apply (LmTrayItem *item, const LmTrayView *view);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmTrayItem, lm_tray_item_free)

G_END_DECLS
