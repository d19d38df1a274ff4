/* test-mounts.c: the mount-table snapshot (lm-mounts.c) over a mountinfo
 * file written under a fake root: fields, escapes, and finding a mount. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "lm-error.h"
#include "lm-mounts.h"

static char *root;

static const char mountinfo[]
    = "21 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
      "30 21 0:40 / /home rw,noatime shared:2 - btrfs /dev/sda2 rw,space_cache=v2\n"
      "31 21 8:1 /srv /mnt/my\\040srv ro,relatime shared:1 - ext4 /dev/sda1 rw,commit=600\n"
      "32 21 8:1 /data /data rw,relatime shared:1 - ext4 /dev/sda1 rw,commit=600\n";

static void
write_mountinfo (const char *text)
{
  g_autofree char *dir = g_build_filename (root, "proc", "self", NULL);
  g_autofree char *path = g_build_filename (dir, "mountinfo", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, text, -1, &error));
  g_assert_no_error (error);
}

static void
test_read (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) mounts = NULL;
  LmMount *m;

  write_mountinfo (mountinfo);
  mounts = lm_mounts_read (&error);
  g_assert_no_error (error);
  g_assert_nonnull (mounts);
  g_assert_cmpuint (mounts->len, ==, 4);

  m = g_ptr_array_index (mounts, 1);
  g_assert_cmpstr (m->key, ==, "0:40");
  g_assert_cmpint (m->id, ==, 30);
  g_assert_cmpstr (m->target, ==, "/home");
  g_assert_cmpstr (m->fstype, ==, "btrfs");
  g_assert_cmpstr (m->source, ==, "/dev/sda2");
  g_assert_cmpstr (m->vfs_options, ==, "rw,noatime");
  g_assert_cmpstr (m->fs_options, ==, "rw,space_cache=v2");

  /* mountinfo's \040 is a space: the target is the real path. */
  m = g_ptr_array_index (mounts, 2);
  g_assert_cmpstr (m->target, ==, "/mnt/my srv");
  g_assert_cmpstr (m->root, ==, "/srv");

  g_autoptr (LmMount) copy = lm_mount_copy (m);
  g_assert_cmpstr (copy->target, ==, m->target);
  g_assert_cmpstr (copy->fs_options, ==, m->fs_options);
  g_assert_true (copy->devno == m->devno);
}

static void
test_find (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) mounts = NULL;
  LmMount *m;

  write_mountinfo (mountinfo);
  mounts = lm_mounts_read (&error);
  g_assert_no_error (error);

  /* The exact mount point wins, even a read-only one. */
  m = lm_mounts_find (mounts, "8:1", "/mnt/my srv");
  g_assert_nonnull (m);
  g_assert_cmpint (m->id, ==, 31);
  /* Gone from there: the first writable mount of the superblock. */
  m = lm_mounts_find (mounts, "8:1", "/gone");
  g_assert_nonnull (m);
  g_assert_cmpint (m->id, ==, 21);
  g_assert_null (lm_mounts_find (mounts, "9:9", "/"));
}

static void
test_unreadable (void)
{
  g_autofree char *path = g_build_filename (root, "proc", "self", "mountinfo", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (g_remove (path), ==, 0);
  g_autoptr (GPtrArray) mounts = lm_mounts_read (&error);
  g_assert_null (mounts);
  g_assert_error (error, LM_ERROR, LM_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "mountinfo"));
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;

  root = g_dir_make_tmp ("lm-test-mounts-XXXXXX", &error);
  g_assert_no_error (error);
  g_setenv ("LAPTOP_MODED_ROOT", root, TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/mounts/read", test_read);
  g_test_add_func ("/mounts/find", test_find);
  g_test_add_func ("/mounts/unreadable", test_unreadable);
  int rc = g_test_run ();

  g_autofree char *dir = g_build_filename (root, "proc", "self", NULL);
  g_autofree char *proc = g_build_filename (root, "proc", NULL);
  g_rmdir (dir);
  g_rmdir (proc);
  g_rmdir (root);
  g_free (root);
  return rc;
}
