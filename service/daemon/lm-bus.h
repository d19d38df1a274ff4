/* lm-bus.h: the daemon's connection to the bus, read through a guard that
 * discards oversized messages unparsed; never used for file descriptors. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

GDBusConnection *lm_bus_connect (GBusType type, GError **error);

/* The address lm_bus_connect() connected @connection to; NULL for any
 * other connection. For a short-lived connection of one's own. */
const char *lm_bus_get_address (GDBusConnection *connection);

G_END_DECLS
