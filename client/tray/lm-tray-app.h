/* lm-tray-app.h: laptop-mode-tray's link between laptop-moded and the desktop.
 * Owns the daemon connection and what each daemon state looks like; never
 * speaks the tray or notification protocols itself. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _LmTrayApp LmTrayApp;

LmTrayApp *lm_tray_app_new (guint notify_interval);
void lm_tray_app_free (LmTrayApp *app);
/* Runs until Quit, a signal or the loss of the session bus; the exit status. */
int lm_tray_app_run (LmTrayApp *app);
void lm_tray_app_quit (LmTrayApp *app);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmTrayApp, lm_tray_app_free)

G_END_DECLS
