/* test-tunables.c: the save-apply-restore transaction against a fake
 * /proc/sys/vm: exact restore, rollback, the state file, both backends. */
#include <sys/stat.h>
#include <unistd.h>

#include "lm-error.h"
#include "lm-tunables.h"
#include "test-fakeroot.h"

typedef struct
{
  LmFakeRoot fr;
  char *state_path;
  LmState *state;
  LmSettings *settings;
} Fixture;

static void
setup (Fixture *f, gconstpointer data)
{
  lm_fake_root_setup (&f->fr, data);
  f->state_path = g_build_filename (f->fr.root, "var/lib/laptop-moded/state", NULL);
  f->state = lm_state_new (f->state_path);
  f->settings = lm_settings_new ();
  lm_fake_root_put (&f->fr, "proc/sys/kernel/osrelease", "6.18.0\n");
  lm_fake_root_put (&f->fr, "proc/sys/vm/laptop_mode", "0\n");
  lm_fake_root_put (&f->fr, "proc/sys/vm/dirty_ratio", "17\n");
  lm_fake_root_put (&f->fr, "proc/sys/vm/dirty_background_ratio", "3\n");
  lm_fake_root_put (&f->fr, "proc/sys/vm/dirty_writeback_centisecs", "499\n");
  lm_fake_root_put (&f->fr, "proc/sys/vm/dirty_expire_centisecs", "1234\n");
  lm_fake_root_put (&f->fr, "proc/sys/vm/dirty_bytes", "0\n");
  lm_fake_root_put (&f->fr, "proc/sys/vm/dirty_background_bytes", "0\n");
}

static void
teardown (Fixture *f, gconstpointer data)
{
  lm_state_free (f->state);
  lm_settings_free (f->settings);
  g_free (f->state_path);
  lm_fake_root_teardown (&f->fr, data);
}

static void
assert_vm (Fixture *f, const char *name, const char *value)
{
  g_autofree char *rel = g_strdup_printf ("proc/sys/vm/%s", name);
  g_autofree char *got = lm_fake_root_get (&f->fr, rel);
  g_assert_cmpstr (got, ==, value);
}

static void
assert_originals (Fixture *f)
{
  assert_vm (f, "laptop_mode", "0");
  assert_vm (f, "dirty_ratio", "17");
  assert_vm (f, "dirty_background_ratio", "3");
  assert_vm (f, "dirty_writeback_centisecs", "499");
  assert_vm (f, "dirty_expire_centisecs", "1234");
}

static void
test_apply_restore_kernel (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (lm_tunables_probe () == &lm_tunables_sysctl);
  g_assert_true (
      lm_tunables_apply (&lm_tunables_sysctl, f->settings, LM_ENGINE_KERNEL, f->state, &error));
  g_assert_no_error (error);
  assert_vm (f, "laptop_mode", "2");
  assert_vm (f, "dirty_ratio", "60");
  assert_vm (f, "dirty_background_ratio", "1");
  assert_vm (f, "dirty_writeback_centisecs", "60000");
  assert_vm (f, "dirty_expire_centisecs", "60000");

  /* The originals are on disk, readable by a fresh start after a crash. */
  g_autoptr (LmState) fresh = lm_state_new (f->state_path);
  g_assert_true (lm_state_load (fresh, &error));
  g_autofree char *saved = lm_state_get (fresh, "Tunables", "dirty_expire_centisecs");
  g_assert_cmpstr (saved, ==, "1234");
  struct stat st;
  g_assert_cmpint (stat (f->state_path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);

  g_assert_true (lm_tunables_restore (fresh, &error));
  g_assert_no_error (error);
  assert_originals (f);
  g_assert_false (g_file_test (f->state_path, G_FILE_TEST_EXISTS));
}

static void
test_userspace_leaves_laptop_mode (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (
      lm_tunables_apply (&lm_tunables_sysctl, f->settings, LM_ENGINE_USERSPACE, f->state, &error));
  assert_vm (f, "laptop_mode", "0");
  assert_vm (f, "dirty_expire_centisecs", "60000");
  /* No background writeback before the dirty limit, as the kernel's laptop mode. */
  assert_vm (f, "dirty_ratio", "60");
  assert_vm (f, "dirty_background_ratio", "54");
  g_assert_true (lm_tunables_restore (f->state, &error));
  assert_originals (f);
}

static void
test_reapply_keeps_first_originals (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (
      lm_tunables_apply (&lm_tunables_sysctl, f->settings, LM_ENGINE_KERNEL, f->state, &error));
  f->settings->max_lost_work = 30;
  f->settings->dirty_ratio = 40;
  g_assert_true (
      lm_tunables_apply (&lm_tunables_sysctl, f->settings, LM_ENGINE_KERNEL, f->state, &error));
  assert_vm (f, "dirty_expire_centisecs", "3000");
  assert_vm (f, "dirty_ratio", "40");
  g_assert_true (lm_tunables_restore (f->state, &error));
  assert_originals (f);
}

static void
test_failure_rolls_back (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *ratio = g_build_filename (f->fr.root, "proc/sys/vm/dirty_ratio", NULL);

  /* Readable but not writable: the kernel's EINVAL, as near as a file gets. */
  g_assert_cmpint (chmod (ratio, 0444), ==, 0);
  if (access (ratio, W_OK) == 0)
    {
      /* root ignores the mode bits: use a directory the write cannot open. */
      g_unlink (ratio);
      g_assert_cmpint (g_mkdir (ratio, 0755), ==, 0);
    }
  g_assert_false (
      lm_tunables_apply (&lm_tunables_sysctl, f->settings, LM_ENGINE_KERNEL, f->state, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "dirty_ratio"));
  assert_vm (f, "laptop_mode", "0");
  assert_vm (f, "dirty_writeback_centisecs", "499");
  assert_vm (f, "dirty_expire_centisecs", "1234");
  assert_vm (f, "dirty_background_ratio", "3");
  g_assert_false (g_file_test (f->state_path, G_FILE_TEST_EXISTS));
  g_assert_false (lm_tunables_saved (f->state));
}

static void
test_state_unwritable_changes_nothing (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *blocker = g_build_filename (f->fr.root, "blocker", NULL);
  g_autofree char *bad_path = g_build_filename (blocker, "state", NULL);
  g_autoptr (LmState) state = lm_state_new (bad_path);

  /* A file where the state directory should be: saving must fail first. */
  g_assert_true (g_file_set_contents (blocker, "", 0, NULL));
  g_assert_false (
      lm_tunables_apply (&lm_tunables_sysctl, f->settings, LM_ENGINE_KERNEL, state, &error));
  g_assert_nonnull (error);
  assert_originals (f);
}

static void
test_changed_by_someone_else (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (
      lm_tunables_apply (&lm_tunables_sysctl, f->settings, LM_ENGINE_KERNEL, f->state, &error));
  lm_fake_root_put (&f->fr, "proc/sys/vm/dirty_ratio", "35\n");
  g_assert_true (lm_tunables_restore (f->state, &error));
  assert_vm (f, "dirty_ratio", "35");
  assert_vm (f, "dirty_expire_centisecs", "1234");
  g_assert_false (lm_tunables_saved (f->state));
}

static void
test_missing_file_fails_before_change (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *p = g_build_filename (f->fr.root, "proc/sys/vm/dirty_background_ratio", NULL);

  g_unlink (p);
  g_assert_false (
      lm_tunables_apply (&lm_tunables_sysctl, f->settings, LM_ENGINE_KERNEL, f->state, &error));
  g_assert_nonnull (strstr (error->message, "dirty_background_ratio"));
  assert_vm (f, "laptop_mode", "0");
  assert_vm (f, "dirty_expire_centisecs", "1234");
}

static void
test_bdflush (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  const char *line = "30\t500\t0\t0\t500\t3000\t60\t20\t0";

  lm_fake_root_rm_rf (f->fr.root);
  lm_fake_root_put (&f->fr, "proc/sys/vm/bdflush", line);
  g_assert_true (lm_tunables_probe () == &lm_tunables_bdflush);
  f->settings->max_lost_work = 300;
  g_assert_true (
      lm_tunables_apply (&lm_tunables_bdflush, f->settings, LM_ENGINE_BDFLUSH, f->state, &error));
  g_assert_no_error (error);
  assert_vm (f, "bdflush", "30 500 0 0 30000 30000 60 20 0");
  g_assert_true (lm_tunables_restore (f->state, &error));
  assert_vm (f, "bdflush", "30 500 0 0 500 3000 60 20 0");
}

static void
test_bdflush_malformed (Fixture *f, gconstpointer data)
{
  static const char *const lines[] = { "30 500 0 0 500", "30 500 x 0 500 3000 60 20 0", "", NULL };

  lm_fake_root_rm_rf (f->fr.root);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr (GError) error = NULL;
      lm_fake_root_put (&f->fr, "proc/sys/vm/bdflush", lines[i]);
      g_assert_false (lm_tunables_apply (&lm_tunables_bdflush, f->settings, LM_ENGINE_BDFLUSH,
                                         f->state, &error));
      g_assert_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED);
      g_autofree char *got = lm_fake_root_get (&f->fr, "proc/sys/vm/bdflush");
      g_assert_cmpstr (got, ==, lines[i]);
      g_assert_false (lm_tunables_saved (f->state));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, setup, fn, teardown)
  ADD ("/tunables/apply-restore-kernel", test_apply_restore_kernel);
  ADD ("/tunables/userspace-leaves-laptop-mode", test_userspace_leaves_laptop_mode);
  ADD ("/tunables/reapply-keeps-first-originals", test_reapply_keeps_first_originals);
  ADD ("/tunables/failure-rolls-back", test_failure_rolls_back);
  ADD ("/tunables/state-unwritable", test_state_unwritable_changes_nothing);
  ADD ("/tunables/changed-by-someone-else", test_changed_by_someone_else);
  ADD ("/tunables/missing-file", test_missing_file_fails_before_change);
  ADD ("/tunables/bdflush", test_bdflush);
  ADD ("/tunables/bdflush-malformed", test_bdflush_malformed);
  return g_test_run ();
}
