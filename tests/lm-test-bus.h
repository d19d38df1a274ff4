/* lm-test-bus.h: a private dbus-daemon (GTestDBus) and two connections to
 * it, one exporting and one calling, for the unit tests of what stands
 * between the bus and a method's handler (test-gate.c, test-dispatch.c). */
#pragma once

#include <gio/gio.h>

#include "lm-generated.h"

typedef struct
{
  GTestDBus *bus;
  GDBusConnection *server; /* exports the object under test */
  GDBusConnection *client; /* calls it */
} LmTestBus;

void lm_test_bus_up (LmTestBus *t);
/* Closes both connections and stops the bus. */
void lm_test_bus_down (LmTestBus *t);

/* A handle-get-spin-ups handler: counts its calls in *(guint *) @user_data
 * and answers an empty list. */
gboolean lm_test_handle_get_spin_ups (LmExportedLaptopMode *skeleton,
                                      GDBusMethodInvocation *invocation, gpointer user_data);
