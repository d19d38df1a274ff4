/* lm-test-bus.c: see lm-test-bus.h. */
#include "lm-test-bus.h"

void
lm_test_bus_up (LmTestBus *t)
{
  g_autoptr (GError) error = NULL;
  GDBusConnectionFlags flags = G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT
                               | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION;

  t->bus = g_test_dbus_new (G_TEST_DBUS_NONE);
  g_test_dbus_up (t->bus);
  const char *address = g_test_dbus_get_bus_address (t->bus);
  t->server = g_dbus_connection_new_for_address_sync (address, flags, NULL, NULL, &error);
  g_assert_no_error (error);
  t->client = g_dbus_connection_new_for_address_sync (address, flags, NULL, NULL, &error);
  g_assert_no_error (error);
}

void
lm_test_bus_down (LmTestBus *t)
{
  g_dbus_connection_close_sync (t->client, NULL, NULL);
  g_dbus_connection_close_sync (t->server, NULL, NULL);
  g_clear_object (&t->client);
  g_clear_object (&t->server);
  g_test_dbus_down (t->bus);
  g_clear_object (&t->bus);
}

gboolean
lm_test_handle_get_spin_ups (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation,
                             gpointer user_data)
{
  guint *handled = user_data;

  (*handled)++;
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(aa{sv})", NULL));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}
