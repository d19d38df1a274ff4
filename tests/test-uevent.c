/* test-uevent.c: device events are taken only from the kernel.
 * A real netlink datagram sent from user space to the daemon's socket is dropped. */
#define _GNU_SOURCE /* setresuid */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "lm-paths.h"
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

/* 0 when sent, else the errno of the child's socket() or sendto(). */
static int
send_forged (LmUevent *uevent, uid_t as_uid)
{
  static const char forged[] = "change@/devices/LNXSYSTM:00/AC\0ACTION=change\0"
                               "SUBSYSTEM=power_supply\0POWER_SUPPLY_ONLINE=0";
  struct sockaddr_nl self = { 0 };
  socklen_t len = sizeof self;

  g_assert_cmpint (getsockname (lm_uevent_get_fd (uevent), (struct sockaddr *) &self, &len), ==, 0);
  g_assert_cmpuint (self.nl_pid, !=, 0);
  /* In a child, so that the sender's credentials can be another user's. */
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      if (as_uid != 0 && setresuid (as_uid, as_uid, as_uid) < 0)
        _exit (2);
      int sender = socket (AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
      struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = self.nl_pid };
      _exit (
          sender >= 0
                  && sendto (sender, forged, sizeof forged, 0, (struct sockaddr *) &to, sizeof to)
                         == (ssize_t) sizeof forged
              ? 0
              : 1);
    }
  int status;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

static gboolean
power_supply_seen (GPtrArray *seen)
{
  for (guint i = 0; i < seen->len; i++)
    if (g_str_equal (seen->pdata[i], "power_supply change"))
      return TRUE;
  return FALSE;
}

/* Root's made-up events count only in a fake root (the tests' sysfs, with
 * no kernel device behind it: test_power.py drives it so). */
static void
test_fake_root_takes_root_only (void)
{
  g_autoptr (GPtrArray) seen = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;
  g_autofree char *root = g_dir_make_tmp ("lm-uevent-XXXXXX", NULL);

  g_setenv ("LAPTOP_MODED_ROOT", root, TRUE);
  lm_paths_reset ();
  g_autoptr (LmUevent) uevent = lm_uevent_new (on_event, seen, &error);
  g_assert_no_error (error);

  /* Another user cannot send on this protocol at all (the kernel says
   * EPERM), so the credentials check meets root or nobody. */
  g_assert_cmpint (send_forged (uevent, 65534), ==, EPERM);

  g_assert_cmpint (send_forged (uevent, 0), ==, 0);
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (!power_supply_seen (seen) && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (1000);
  g_assert_true (power_supply_seen (seen));
  g_assert_cmpuint (lm_uevent_get_refused (uevent), ==, 0);

  g_unsetenv ("LAPTOP_MODED_ROOT");
  lm_paths_reset ();
  g_rmdir (root);
}

/* A user-space process (root) unicasts a well-formed "power_supply change"
 * event to the daemon's port: it arrives on the socket and is refused. */
static void
test_forged_event (void)
{
  g_autoptr (GPtrArray) seen = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;
  g_autoptr (LmUevent) uevent = lm_uevent_new (on_event, seen, &error);

  g_assert_no_error (error);
  g_assert_cmpint (send_forged (uevent, 0), ==, 0);
  /* Kernel events may come too; wait for the forged one to be handled. */
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (lm_uevent_get_refused (uevent) == 0 && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (1000);
  g_assert_cmpuint (lm_uevent_get_refused (uevent), ==, 1);
  g_assert_false (power_supply_seen (seen));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/uevent/sender-address", test_sender_address);
  g_test_add_func ("/uevent/forged-event", test_forged_event);
  g_test_add_func ("/uevent/fake-root-takes-root-only", test_fake_root_takes_root_only);
  return g_test_run ();
}
