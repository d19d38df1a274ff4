/* lm-daemon.h: the org.laptopmode.LaptopMode1 object.
 * Owns the daemon's state machine (mode, settings, what is applied) and its
 * D-Bus surface (lm-daemon-*.c); never touches a kernel file directly. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define LM_TYPE_DAEMON (lm_daemon_get_type ())
G_DECLARE_FINAL_TYPE (LmDaemon, lm_daemon, LM, DAEMON, GObject)

LmDaemon *lm_daemon_new (GError **error);
void lm_daemon_start (LmDaemon *daemon, GDBusConnection *bus);
gboolean lm_daemon_export (LmDaemon *daemon, GDBusConnection *connection, GError **error);
void lm_daemon_unexport (LmDaemon *daemon);
gboolean lm_daemon_shutdown (LmDaemon *daemon, GError **error);

G_END_DECLS
