/* test-uevent.c: device events are taken only from the kernel.
 * A real netlink datagram sent from user space to the daemon's socket is dropped. */
#include <errno.h>
#include <unistd.h>

#include "lm-uevent.h"

static void
on_event (const char *subsystem, const char *action, gpointer user_data)
{
  GPtrArray *seen = user_data;

  g_ptr_array_add (seen, g_strdup_printf ("%s %s", subsystem, action));
}

static void
test_sender_address (void)
{
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK, .nl_pid = 0 };
  struct sockaddr_nl process = { .nl_family = AF_NETLINK, .nl_pid = 4242 };

  g_assert_true (lm_uevent_from_kernel (&kernel, sizeof kernel));
  g_assert_false (lm_uevent_from_kernel (&process, sizeof process));
  g_assert_false (lm_uevent_from_kernel (&kernel, 0)); /* no address at all */
}

/* A user-space process unicasts a well-formed "power_supply change" event
 * to the daemon's port: it arrives on the socket and is refused. */
static void
test_forged_event (void)
{
  g_autoptr (GPtrArray) seen = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;
  g_autoptr (LmUevent) uevent = lm_uevent_new (on_event, seen, &error);
  struct sockaddr_nl self = { 0 };
  socklen_t len = sizeof self;
  static const char forged[] = "change@/devices/LNXSYSTM:00/AC\0ACTION=change\0"
                               "SUBSYSTEM=power_supply\0POWER_SUPPLY_ONLINE=0";

  g_assert_no_error (error);
  int fd = lm_uevent_get_fd (uevent);
  g_assert_cmpint (getsockname (fd, (struct sockaddr *) &self, &len), ==, 0);
  g_assert_cmpuint (self.nl_pid, !=, 0);

  int sender = socket (AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
  g_assert_cmpint (sender, >=, 0);
  struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = self.nl_pid };
  g_assert_cmpint (sendto (sender, forged, sizeof forged, 0, (struct sockaddr *) &to, sizeof to),
                   ==, (ssize_t) sizeof forged);
  close (sender);

  /* Kernel events may come too; wait for the forged one to be handled. */
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (lm_uevent_get_refused (uevent) == 0 && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (1000);
  g_assert_cmpuint (lm_uevent_get_refused (uevent), ==, 1);
  for (guint i = 0; i < seen->len; i++)
    g_assert_cmpstr (seen->pdata[i], !=, "power_supply change");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/uevent/sender-address", test_sender_address);
  g_test_add_func ("/uevent/forged-event", test_forged_event);
  return g_test_run ();
}
