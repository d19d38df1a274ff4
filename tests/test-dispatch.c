/* test-dispatch.c: deny by default at dispatch (lm-dispatch.c), on a real
 * dbus-daemon (GTestDBus). A method with no row in the authorization table
 * (here: a table that leaves GetSpinUps out, as a method newly added to
 * the interface would be) is refused before its handler runs; a method
 * with a row reaches it; the daemon's own table has a row for every method
 * of the interface. */
#include <string.h>

#include "lm-auth.h"
#include "lm-dispatch.h"
#include "lm-names.h"
#include "lm-test-bus.h"

#define PATH "/org/laptopmode/LaptopMode1"
#define IFACE "org.laptopmode.LaptopMode1"

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static gboolean
handle_unsubscribe (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation,
                    gpointer user_data)
{
  guint *handled = user_data;

  (*handled)++;
  g_dbus_method_invocation_return_value (invocation, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* A call from @client, its reply or error, with the main context (where
 * @server's objects are dispatched) running meanwhile. */
static GVariant *
call (GDBusConnection *client, const char *name, const char *iface, const char *method,
      GVariant *args, GError **error)
{
  g_autoptr (GAsyncResult) result = NULL;

  g_dbus_connection_call (client, name, PATH, iface, method, args, NULL, G_DBUS_CALL_FLAGS_NONE,
                          30000, NULL, store_result, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return g_dbus_connection_call_finish (client, result, error);
}

/* The daemon's table, less GetSpinUps. */
static const char *
rule_without_get_spin_ups (const char *method)
{
  return g_strcmp0 (method, "GetSpinUps") == 0 ? NULL : lm_auth_action_for_method (method);
}

static void
test_no_row_refused (void)
{
  LmTestBus t;
  g_autoptr (GError) error = NULL;
  guint spin_ups = 0, unsubscribe = 0;

  lm_test_bus_up (&t);
  GDBusConnection *server = t.server, *client = t.client;
  g_autoptr (LmExportedLaptopMode) skeleton = lm_dispatch_skeleton_new (rule_without_get_spin_ups);
  g_signal_connect (skeleton, "handle-get-spin-ups", G_CALLBACK (lm_test_handle_get_spin_ups),
                    &spin_ups);
  g_signal_connect (skeleton, "handle-unsubscribe", G_CALLBACK (handle_unsubscribe), &unsubscribe);
  g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (skeleton), server, PATH, &error);
  g_assert_no_error (error);
  const char *name = g_dbus_connection_get_unique_name (server);

  /* Without a row: AccessDenied, and the handler never ran. */
  g_test_expect_message ("laptop-moded", G_LOG_LEVEL_WARNING, "Refused GetSpinUps*authorization*");
  g_autoptr (GVariant) refused = call (client, name, IFACE, "GetSpinUps", NULL, &error);
  g_test_assert_expected_messages ();
  g_assert_null (refused);
  g_assert_nonnull (error);
  g_autofree char *remote = g_dbus_error_get_remote_error (error);
  g_assert_cmpstr (remote, ==, LM_ERROR_NAME_ACCESS_DENIED);
  g_assert_nonnull (strstr (error->message, "no authorization rule"));
  g_assert_cmpuint (spin_ups, ==, 0);
  g_clear_error (&error);

  /* With a row: the handler runs (polkit is the handler's business). */
  g_autoptr (GVariant) ok = call (client, name, IFACE, "Unsubscribe", NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (ok);
  g_assert_cmpuint (unsubscribe, ==, 1);

  /* Properties go through the generated code as before. */
  lm_exported_laptop_mode_set_version (skeleton, "9.9");
  g_autoptr (GVariant) version = call (client, name, "org.freedesktop.DBus.Properties", "Get",
                                       g_variant_new ("(ss)", IFACE, "Version"), &error);
  g_assert_no_error (error);
  g_autoptr (GVariant) v = NULL;
  g_variant_get (version, "(v)", &v);
  g_assert_cmpstr (g_variant_get_string (v, NULL), ==, "9.9");

  g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (skeleton));
  lm_test_bus_down (&t);
}

/* With the daemon's table every method of the interface is let through to
 * its handler: none is refused for want of a row. */
static void
test_every_method_has_a_row (void)
{
  GDBusInterfaceInfo *info = lm_exported_laptop_mode_interface_info ();

  for (GDBusMethodInfo **m = info->methods; *m != NULL; m++)
    g_assert_nonnull (lm_auth_action_for_method ((*m)->name));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/dispatch/no-row-refused", test_no_row_refused);
  g_test_add_func ("/dispatch/every-method-has-a-row", test_every_method_has_a_row);
  return g_test_run ();
}
