/* test-cgroup.c: a blamed process's unit from its cgroup v2 path
 * (service/attribution/lm-cgroup.c): systemd's services, scopes and
 * desktop applications, the manager behind init.scope, what names none;
 * the path of a live pid only while it is still that process; the path of
 * an id found by walking a cgroup2 mount under a fake root. */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <sys/stat.h>

#include "lm-cgroup.h"
#include "lm-paths.h"

static void
test_unit_of_path (void)
{
  const char *const pairs[][2] = {
    { "/system.slice/cron.service", "cron.service" },
    { "/system.slice/smartmontools.service", "smartmontools.service" },
    { "/system.slice/system-getty.slice/getty@tty1.service", "getty@tty1.service" },
    { "/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox-esr-4242.scope",
      "firefox-esr" },
    { "/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal.slice/"
      "vte-spawn-1b2c.scope",
      "vte-spawn-1b2c.scope of user 1000" },
    /* A user's unit of a system unit's name is said to be the user's. */
    { "/user.slice/user-1000.slice/user@1000.service/app.slice/cron.service",
      "cron.service of user 1000" },
    { "/user.slice/user-1000.slice/user@1001.service/app.slice/cron.service", "cron.service" },
    { "/system.slice/bad\tname.service", NULL },
    /* A container's own units are the container's. */
    { "/system.slice/docker-4f2a.scope/system.slice/cron.service",
      "cron.service in docker-4f2a.scope" },
    { "/machine.slice/machine-deb.scope/payload/system.slice/smartd.service",
      "smartd.service in machine-deb.scope" },
    { "/system.slice/with space.service", NULL },
    { "/user.slice/user-1000.slice/user@1000.service/app.slice/"
      "app-flatpak-org.mozilla.Thunderbird-1234.scope",
      "org.mozilla.Thunderbird" },
    { "/user.slice/user-1000.slice/user@1000.service/app.slice/"
      "app-dbus\\x2d:1.2\\x2dorg.gnome.Nautilus@1.service",
      "org.gnome.Nautilus" },
    { "/user.slice/user-1000.slice/user@1000.service/app.slice/app-kde-org.kde.kate-9f3a.scope",
      "org.kde.kate" },
    { "/user.slice/user-1000.slice/user@1000.service/init.scope", "user@1000.service" },
    { "/user.slice/user-1000.slice/session-2.scope", "session-2.scope" },
    { "/init.scope", "init.scope" },
    { "/lmtest-77/writer.service", "writer.service" },
    { "/lmtest-77/writer.service/inner", "writer.service" },
    { "/", NULL },
    { "", NULL },
    { "/docker/0123abcd", NULL },
    { "/app-.scope", NULL },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (pairs); i++)
    {
      g_autofree char *unit = lm_cgroup_unit_of_path (pairs[i][0]);
      g_test_message ("%s -> %s", pairs[i][0], unit);
      g_assert_cmpstr (unit, ==, pairs[i][1]);
    }
  g_autofree char *none = lm_cgroup_unit_of_path (NULL);
  g_assert_null (none);
  /* A name too long to keep names no unit rather than a cut one. */
  g_autofree char *name = g_strnfill (LM_UNIT_LEN, 'a');
  g_autofree char *path = g_strdup_printf ("/system.slice/%s.service", name);
  g_autofree char *long_unit = lm_cgroup_unit_of_path (path);
  g_assert_null (long_unit);
}

static char *
fake_root (void)
{
  char *root = g_dir_make_tmp ("lm-cgroup-XXXXXX", NULL);
  g_setenv ("LAPTOP_MODED_ROOT", root, TRUE);
  lm_paths_reset ();
  lm_cgroup_reset ();
  return root;
}

static void
drop_root (const char *root)
{
  g_autofree char *argv0 = g_find_program_in_path ("rm");
  const char *argv[] = { argv0, "-rf", root, NULL };
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL));
  g_unsetenv ("LAPTOP_MODED_ROOT");
  lm_paths_reset ();
  lm_cgroup_reset ();
}

static void
put (const char *root, const char *rel, const char *text)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

/* The v2 line, only while the pid is the same process. */
static void
test_path_of_pid (void)
{
  g_autofree char *root = fake_root ();

  put (root, "proc/321/comm", "cron\n");
  put (root, "proc/321/cgroup",
       "12:pids:/system.slice/cron.service\n1:name=systemd:/x\n"
       "0::/system.slice/cron.service\n");
  put (root, "proc/322/comm", "bash\n");
  put (root, "proc/322/cgroup", "3:cpu:/\n");
  g_autofree char *path = lm_cgroup_path_of_pid (321, "cron");
  g_assert_cmpstr (path, ==, "/system.slice/cron.service");
  g_autofree char *reused = lm_cgroup_path_of_pid (321, "smartd");
  g_assert_null (reused);
  g_autofree char *v1_only = lm_cgroup_path_of_pid (322, "bash");
  g_assert_null (v1_only);
  g_autofree char *gone = lm_cgroup_path_of_pid (323, "bash");
  g_assert_null (gone);
  drop_root (root);
}

/* An id is a cgroup directory's inode number in the cgroup2 mount that the
 * mount table names; found by walking it, remembered afterwards. */
static void
test_path_of_id (void)
{
  g_autofree char *root = fake_root ();
  g_autofree char *tree = g_build_filename (root, "cg", NULL);
  g_autofree char *leaf = g_build_filename (tree, "system.slice", "cron.service", NULL);
  g_autofree char *mountinfo = g_strdup_printf ("25 1 0:22 / /sys rw - sysfs sysfs rw\n"
                                                "30 25 0:26 / %s rw,nosuid - cgroup2 cgroup2 rw\n",
                                                tree);
  struct stat st;

  g_assert_cmpint (g_mkdir_with_parents (leaf, 0755), ==, 0);
  g_autofree char *other = g_build_filename (tree, "user.slice", "a", "b", NULL);
  g_assert_cmpint (g_mkdir_with_parents (other, 0755), ==, 0);
  put (root, "proc/self/mountinfo", mountinfo);
  g_assert_cmpint (g_stat (leaf, &st), ==, 0);
  g_autofree char *path = lm_cgroup_path_of_id ((guint64) st.st_ino);
  g_assert_cmpstr (path, ==, "/system.slice/cron.service");
  g_assert_cmpint (g_stat (tree, &st), ==, 0);
  g_autofree char *top = lm_cgroup_path_of_id ((guint64) st.st_ino);
  g_assert_cmpstr (top, ==, "/");
  g_autofree char *none = lm_cgroup_path_of_id (1);
  g_assert_null (none);
  g_autofree char *zero = lm_cgroup_path_of_id (0);
  g_assert_null (zero);
  /* Remembered: found again after the directory went. */
  g_assert_cmpint (g_stat (leaf, &st), ==, 0);
  g_assert_cmpint (g_rmdir (leaf), ==, 0);
  g_autofree char *again = lm_cgroup_path_of_id ((guint64) st.st_ino);
  g_assert_cmpstr (again, ==, "/system.slice/cron.service");
  drop_root (root);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cgroup/unit-of-path", test_unit_of_path);
  g_test_add_func ("/cgroup/path-of-pid", test_path_of_pid);
  g_test_add_func ("/cgroup/path-of-id", test_path_of_id);
  return g_test_run ();
}
