/* test-fakeroot.h: a throw-away LAPTOP_MODED_ROOT for unit tests.
 * Owns creating and removing the directory; tests put files in it. */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "lm-paths.h"

typedef struct
{
  char *root;
} LmFakeRoot;

static inline void
lm_fake_root_put (LmFakeRoot *f, const char *rel, const char *value)
{
  g_autofree char *path = g_build_filename (f->root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, value, -1, NULL));
}

/* A symbolic link at @rel (sysfs is made of them), its directories made. */
static inline void
lm_fake_root_link (LmFakeRoot *f, const char *rel, const char *target)
{
  g_autofree char *path = g_build_filename (f->root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_cmpint (symlink (target, path), ==, 0);
}

static inline char *
lm_fake_root_get (LmFakeRoot *f, const char *rel)
{
  g_autofree char *path = g_build_filename (f->root, rel, NULL);
  char *contents = NULL;
  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return NULL;
  return g_strstrip (contents);
}

static inline void
lm_fake_root_rm_rf (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        lm_fake_root_rm_rf (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

static inline void
lm_fake_root_setup (LmFakeRoot *f, gconstpointer data)
{
  f->root = g_dir_make_tmp ("lm-root-XXXXXX", NULL);
  g_assert_nonnull (f->root);
  g_setenv ("LAPTOP_MODED_ROOT", f->root, TRUE);
  lm_paths_reset ();
}

static inline void
lm_fake_root_teardown (LmFakeRoot *f, gconstpointer data)
{
  lm_fake_root_rm_rf (f->root);
  g_free (f->root);
  g_unsetenv ("LAPTOP_MODED_ROOT");
  lm_paths_reset ();
}
