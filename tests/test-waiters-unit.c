/* test-waiters-unit.c: which systemd unit a WaitAwake caller runs in, from
 * its cgroup file: a system service only in system.slice; a user's unit of
 * the same name is named with its user (issue 48), never as the system's. */
#include "config.h"

#include "lm-waiters.h"

static void
check (const char *cgroup, const char *want)
{
  char unit[256];

  lm_waiters_unit_from_cgroup (cgroup, unit, sizeof unit);
  g_assert_cmpstr (unit, ==, want);
}

static void
test_units (void)
{
  check ("0::/system.slice/man-db.service\n", "man-db.service");
  check ("0::/system.slice/cron.service\n", "cron.service");
  /* A user's own man-db.service is not the system's man-db. */
  check ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/man-db.service\n",
         "man-db.service of user 1000");
  /* A login session's scope, a slice: no service. */
  check ("0::/user.slice/user-1000.slice/session-3.scope\n", "");
  check ("0::/init.scope\n", "");
  /* Outside both slices, or a path that only looks like one: nothing. */
  check ("0::/machine.slice/man-db.service\n", "");
  check ("0::/user.slice/user-x.slice/man-db.service\n", "");
  check ("0::/lm/system.slice/man-db.service\n", "");
  /* cgroup v1: systemd's own hierarchy. */
  check ("12:cpu:/\n1:name=systemd:/system.slice/updatedb.service\n", "updatedb.service");
  /* Control bytes and spaces: no name at all. */
  check ("0::/system.slice/a\tb.service\n", "");
  check ("", "");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/waiters/unit-from-cgroup", test_units);
  return g_test_run ();
}
