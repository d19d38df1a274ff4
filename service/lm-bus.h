/* lm-bus.h: the daemon's connection to the bus, read through a guard that
 * discards oversized messages unparsed; never used for file descriptors. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

GDBusConnection *lm_bus_connect (GBusType type, GError **error);

G_END_DECLS
