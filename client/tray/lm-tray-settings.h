/* lm-tray-settings.h: the tray's own per-user settings file.
 * Owns $XDG_CONFIG_HOME/laptop-mode-tray/settings.ini; never holds anything
 * of laptop-moded's configuration, which is the daemon's. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether spin-ups pop up; TRUE when the file or the key is missing. */
gboolean lm_tray_settings_get_notify (void);
gboolean lm_tray_settings_set_notify (gboolean notify, GError **error);

G_END_DECLS
