/* test-gate.c: calls that come before start-up (lm-gate.c), on a real
 * dbus-daemon (GTestDBus): held while closed, each answered once open,
 * none lost, whichever GDBus thread they came through. */
#include <string.h>

#include "lm-gate.h"
#include "lm-generated.h"
#include "lm-test-bus.h"

#define WELL_KNOWN "org.laptopmode.GateTest"
#define PATH "/org/laptopmode/LaptopMode1"
#define IFACE "org.laptopmode.LaptopMode1"
#define CALLS 64

typedef struct
{
  guint ok, failed;
  char *last_error;
} Answers;

static void
answered (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Answers *a = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply
      = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (reply != NULL)
    a->ok++;
  else
    {
      a->failed++;
      g_free (a->last_error);
      a->last_error = g_strdup (error->message);
    }
}

static void
spin (guint ms)
{
  gint64 until = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < until)
    g_main_context_iteration (NULL, FALSE);
}

static void
test_held_until_open (void)
{
  LmTestBus t;
  g_autoptr (GError) error = NULL;
  guint handled = 0;
  Answers a = { 0 }, early = { 0 };

  lm_test_bus_up (&t);
  GDBusConnection *server = t.server, *client = t.client;

  g_autoptr (LmExportedLaptopMode) skeleton = lm_exported_laptop_mode_skeleton_new ();
  g_signal_connect (skeleton, "handle-get-spin-ups", G_CALLBACK (lm_test_handle_get_spin_ups),
                    &handled);
  LmGate *gate = lm_gate_new (G_DBUS_INTERFACE_SKELETON (skeleton));
  g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (skeleton), server, PATH, &error);
  g_assert_no_error (error);
  g_autoptr (GVariant) owned = g_dbus_connection_call_sync (
      server, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
      "RequestName", g_variant_new ("(su)", WELL_KNOWN, 0), G_VARIANT_TYPE ("(u)"),
      G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
  g_assert_no_error (error);

  /* Addressed to the well-known name: they wait. */
  for (guint i = 0; i < CALLS; i++)
    g_dbus_connection_call (client, WELL_KNOWN, PATH, IFACE, "GetSpinUps", NULL, NULL,
                            G_DBUS_CALL_FLAGS_NONE, 30000, NULL, answered, &a);
  /* Addressed to the unique name while closed: refused (another daemon
   * may be in charge). */
  g_dbus_connection_call (client, g_dbus_connection_get_unique_name (server), PATH, IFACE,
                          "GetSpinUps", NULL, NULL, G_DBUS_CALL_FLAGS_NONE, 30000, NULL, answered,
                          &early);
  while (early.ok + early.failed == 0)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (early.failed, ==, 1);
  g_assert_nonnull (strstr (early.last_error, "still starting"));
  spin (300);
  g_assert_cmpuint (handled, ==, 0);
  g_assert_cmpuint (a.ok + a.failed, ==, 0);

  lm_gate_open (gate);
  while (a.ok + a.failed < CALLS)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (a.ok, ==, CALLS);
  g_assert_cmpuint (handled, ==, CALLS);

  /* Open: straight through, the unique name too. */
  for (guint i = 0; i < CALLS; i++)
    g_dbus_connection_call (client, g_dbus_connection_get_unique_name (server), PATH, IFACE,
                            "GetSpinUps", NULL, NULL, G_DBUS_CALL_FLAGS_NONE, 30000, NULL, answered,
                            &a);
  while (a.ok + a.failed < 2 * CALLS)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (a.ok, ==, 2 * CALLS);

  lm_gate_free (gate);
  g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (skeleton));
  g_free (a.last_error);
  g_free (early.last_error);
  lm_test_bus_down (&t);
}

/* Freed while calls wait: each is refused, none left unanswered. */
static void
test_free_refuses_waiting (void)
{
  LmTestBus t;
  g_autoptr (GError) error = NULL;
  Answers a = { 0 };

  lm_test_bus_up (&t);
  GDBusConnection *server = t.server, *client = t.client;
  g_autoptr (LmExportedLaptopMode) skeleton = lm_exported_laptop_mode_skeleton_new ();
  LmGate *gate = lm_gate_new (G_DBUS_INTERFACE_SKELETON (skeleton));
  g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (skeleton), server, PATH, &error);
  g_autoptr (GVariant) owned = g_dbus_connection_call_sync (
      server, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
      "RequestName", g_variant_new ("(su)", WELL_KNOWN, 0), G_VARIANT_TYPE ("(u)"),
      G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 8; i++)
    g_dbus_connection_call (client, WELL_KNOWN, PATH, IFACE, "GetSpinUps", NULL, NULL,
                            G_DBUS_CALL_FLAGS_NONE, 30000, NULL, answered, &a);
  spin (300);
  g_assert_cmpuint (a.ok + a.failed, ==, 0);
  lm_gate_free (gate);
  while (a.ok + a.failed < 8)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (a.failed, ==, 8);
  g_assert_nonnull (strstr (a.last_error, "stopping"));
  g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (skeleton));
  g_free (a.last_error);
  lm_test_bus_down (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gate/held-until-open", test_held_until_open);
  g_test_add_func ("/gate/free-refuses-waiting", test_free_refuses_waiting);
  return g_test_run ();
}
