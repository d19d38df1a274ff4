/* test-state.c: the durable state file and atomic writes. */
#include <sys/stat.h>

#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "lm-hwpower.h"
#include "lm-io.h"
#include "lm-state.h"
#include "lm-tunables.h"
#include "test-fakeroot.h"

static void
test_round_trip (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->root, "a/b/state", NULL);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (GError) error = NULL;

  g_assert_true (lm_state_load (s, &error)); /* missing file: empty */
  g_assert_true (lm_state_is_empty (s));
  /* Odd bytes survive: mount points may hold anything. */
  lm_state_set (s, "Group", "key", "value with spaces, commas and \xc3\xa9");
  g_assert_true (lm_state_save (s, &error));
  g_assert_no_error (error);

  g_autoptr (LmState) back = lm_state_new (path);
  g_assert_true (lm_state_load (back, &error));
  g_autofree char *v = lm_state_get (back, "Group", "key");
  g_assert_cmpstr (v, ==, "value with spaces, commas and \xc3\xa9");

  /* No temporary files left next to it. */
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_assert_cmpstr (g_dir_read_name (d), ==, "state");
  g_assert_null (g_dir_read_name (d));

  lm_state_remove (back, "Group", "key");
  g_assert_true (lm_state_is_empty (back));
  g_assert_true (lm_state_save (back, &error));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_snapshot_revert (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) s = lm_state_new ("/unused");

  lm_state_set (s, "G", "a", "1");
  g_autofree char *snap = lm_state_snapshot (s);
  lm_state_set (s, "G", "a", "2");
  lm_state_set (s, "G", "b", "3");
  lm_state_revert (s, snap);
  g_autofree char *a = lm_state_get (s, "G", "a");
  g_autofree char *b = lm_state_get (s, "G", "b");
  g_assert_cmpstr (a, ==, "1");
  g_assert_null (b);
}

static void
test_corrupt_state (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->root, "state", NULL);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_set_contents (path, "\x01garbage[[[", -1, NULL));
  g_assert_false (lm_state_load (s, &error));
  g_assert_nonnull (strstr (error->message, path));
}

static void
test_atomic_write_mode (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->root, "conf", NULL);
  g_autoptr (GError) error = NULL;
  struct stat st;

  g_assert_true (lm_io_write_atomic (path, "old", 3, 0644, &error));
  g_assert_true (lm_io_write_atomic (path, "new", 3, 0600, &error));
  g_assert_cmpint (stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "new");
}

static void
test_read_value (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->root, "v", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_set_contents (path, "  30\t500  0\n", -1, NULL));
  g_autofree char *v = lm_io_read_value (path, &error);
  g_assert_cmpstr (v, ==, "30 500 0");
  g_autofree char *missing = lm_io_read_value ("/nonexistent/x", &error);
  g_assert_null (missing);
  g_assert_nonnull (strstr (error->message, "/nonexistent/x"));
}

/* Keys come from outside (disk ids): a key GKeyFile cannot take as it is
 * is still saved, found, listed and removed as given. */
static void
test_odd_keys (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->root, "state", NULL);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (GError) error = NULL;
  static const char *const ids[] = {
    "usb-Gen=ric_Flash_Disk-0:0",
    "[bracketed]",
    " leading and trailing ",
    "#not-a-comment",
    "100%25-literal",
    "line\nbreak\x01",
    "caf\xc3\xa9",
    "",
  };
  const char *odd[G_N_ELEMENTS (ids)];

  /* Real bytes, not the C escapes above (kept readable there). */
  g_autoptr (GPtrArray) owned = g_ptr_array_new_with_free_func (g_free);
  for (gsize i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      char *c = g_strcompress (ids[i]);
      g_ptr_array_add (owned, c);
      odd[i] = c;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (odd); i++)
    {
      g_autofree char *device = g_strconcat (odd[i], ".Device", NULL);
      g_autofree char *apm = g_strconcat (odd[i], ".APM", NULL);
      lm_state_set (s, "Disks", device, "sda");
      lm_state_set (s, "Disks", apm, "128");
    }
  g_assert_true (lm_state_save (s, &error));
  g_assert_no_error (error);

  /* What lm_disks_restore does: find the disks by their ".Device" keys. */
  g_autoptr (LmState) back = lm_state_new (path);
  g_assert_true (lm_state_load (back, &error));
  g_auto (GStrv) keys = lm_state_get_keys (back, "Disks");
  g_assert_cmpuint (g_strv_length (keys), ==, 2 * G_N_ELEMENTS (odd));
  for (gsize i = 0; i < G_N_ELEMENTS (odd); i++)
    {
      g_autofree char *device = g_strconcat (odd[i], ".Device", NULL);
      g_autofree char *apm = g_strconcat (odd[i], ".APM", NULL);
      g_assert_true (g_strv_contains ((const char *const *) keys, device));
      g_autofree char *v = lm_state_get (back, "Disks", apm);
      g_assert_cmpstr (v, ==, "128");
      lm_state_remove (back, "Disks", device);
      lm_state_remove (back, "Disks", apm);
    }
  g_assert_true (lm_state_is_empty (back));
}

/* A state file written before keys were encoded still reads back. */
static void
test_legacy_keys (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->root, "state", NULL);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_set_contents (
      path, "[Disks]\nata-Old Disk.APM=200\nata-WDC_WD5000LPVX_WX11A12345.APM=254\n", -1, NULL));
  g_assert_true (lm_state_load (s, &error));
  g_autofree char *a = lm_state_get (s, "Disks", "ata-Old Disk.APM");
  g_autofree char *b = lm_state_get (s, "Disks", "ata-WDC_WD5000LPVX_WX11A12345.APM");
  g_assert_cmpstr (a, ==, "200");
  g_assert_cmpstr (b, ==, "254");
  g_auto (GStrv) keys = lm_state_get_keys (s, "Disks");
  g_assert_true (g_strv_contains ((const char *const *) keys, "ata-Old Disk.APM"));
  lm_state_remove (s, "Disks", "ata-Old Disk.APM");
  lm_state_remove (s, "Disks", "ata-WDC_WD5000LPVX_WX11A12345.APM");
  g_assert_true (lm_state_is_empty (s));
}

/* Found by fuzz-state: a key "Encoding" in the first group made GKeyFile
 * refuse the whole file on the next load. */
static void
test_encoding_key (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->root, "state", NULL);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (LmState) back = lm_state_new (path);
  g_autoptr (GError) error = NULL;

  lm_state_set (s, "First", "Encoding", "latin1");
  g_assert_true (lm_state_save (s, &error));
  g_assert_true (lm_state_load (back, &error));
  g_assert_no_error (error);
  g_autofree char *v = lm_state_get (back, "First", "Encoding");
  g_assert_cmpstr (v, ==, "latin1");
  g_auto (GStrv) keys = lm_state_get_keys (back, "First");
  g_assert_cmpstr (keys[0], ==, "Encoding");
}

/* The exact bytes written and read, the same on every GLib: GLib 2.80 made
 * g_key_file_get_string() return NULL for an escape it does not know
 * ("\x" in a pre-journal remount record), which dropped that record
 * ("Incomplete remount record") where 2.74 kept the text as written. */
static void
test_value_bytes (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->root, "state", NULL);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;

  lm_state_set (s, "G", "a", " lead\ttab\\back;semi trail ");
  lm_state_set (s, "G", "b", "line\nbreak\rcr");
  lm_state_set (s, "G", "c", "");
  g_assert_true (lm_state_save (s, &error));
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_cmpstr (text, ==,
                   "[G]\na=\\slead\\ttab\\\\back;semi trail\\s\nb=line\\nbreak\\rcr\nc=\n");

  /* Written by hand or by an older daemon: unknown escapes kept as is, a
   * trailing backslash too, known ones decoded, blanks at the end kept. */
  g_assert_true (g_file_set_contents (
      path, "[G]\nold=/mnt/sp ace,comma-\\xff\\\nknown=\\s\\t\\\\\\n\\r\\;\nend=x  \n", -1, NULL));
  g_autoptr (LmState) back = lm_state_new (path);
  g_assert_true (lm_state_load (back, &error));
  g_autofree char *old = lm_state_get (back, "G", "old");
  g_autofree char *known = lm_state_get (back, "G", "known");
  g_autofree char *end = lm_state_get (back, "G", "end");
  g_assert_cmpstr (old, ==, "/mnt/sp ace,comma-\\xff\\");
  g_assert_cmpstr (known, ==, " \t\\\n\r\\;");
  g_assert_cmpstr (end, ==, "x  ");
}

/* --- nothing read back is trusted --------------------------------------- */

/* A state file that names a file the daemon never writes: the fake
 * core_pattern stays as it was, the log names the refused key, and the
 * entry is dropped; the real tunable next to it is restored. */
static void
test_refused_tunable (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->root, "state", NULL);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (GError) error = NULL;

  lm_fake_root_put (f, "proc/sys/kernel/core_pattern", "core\n");
  lm_fake_root_put (f, "proc/sys/vm/dirty_ratio", "60\n");
  g_assert_true (g_file_set_contents (path,
                                      "[Tunables]\n../kernel/core_pattern=|/tmp/evil %p\n"
                                      "dirty_ratio=20\n",
                                      -1, NULL));
  g_assert_true (lm_state_load (s, &error));
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_WARNING,
                         "*Refusing the saved tunable “../kernel/core_pattern”*");
  g_assert_true (lm_tunables_restore (s, &error));
  g_test_assert_expected_messages ();
  g_assert_no_error (error);

  g_autofree char *core = lm_fake_root_get (f, "proc/sys/kernel/core_pattern");
  g_autofree char *ratio = lm_fake_root_get (f, "proc/sys/vm/dirty_ratio");
  g_assert_cmpstr (core, ==, "core");
  g_assert_cmpstr (ratio, ==, "20");
  g_assert_false (lm_tunables_saved (s));

  /* A known name with a value the kernel never gave: refused too. */
  g_assert_true (g_file_set_contents (path, "[Tunables]\ndirty_ratio=5\\n1\n", -1, NULL));
  g_autoptr (LmState) again = lm_state_new (path);
  g_assert_true (lm_state_load (again, &error));
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_WARNING, "*Refusing the saved tunable*");
  g_assert_true (lm_tunables_restore (again, &error));
  g_test_assert_expected_messages ();
  g_autofree char *still = lm_fake_root_get (f, "proc/sys/vm/dirty_ratio");
  g_assert_cmpstr (still, ==, "20");
}

/* Sysfs keys: only the four files lm-hwpower.c writes, at their canonical
 * place under /sys/devices. */
static void
test_refused_sysfs (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->root, "state", NULL);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (GError) error = NULL;

  lm_fake_root_put (f, "sys/devices/pci0/ata1/power/control", "auto\n");
  lm_fake_root_put (f, "sys/devices/pci0/uevent_helper", "x\n");
  lm_fake_root_put (f, "etc/shadow", "secret\n");
  lm_fake_root_link (f, "sys/devices/pci0/out", "../../etc");
  g_assert_true (g_file_set_contents (path,
                                      "[HwPower]\n/sys/devices/pci0/ata1/power/control=on\n"
                                      "/sys/devices/pci0/uevent_helper=/tmp/evil\n"
                                      "/sys/devices/pci0/../../proc/sys/kernel/core_pattern=|x\n"
                                      "/sys/devices/pci0/out/power/control=owned\n",
                                      -1, NULL));
  g_assert_true (lm_state_load (s, &error));
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_WARNING, "*Refusing*uevent_helper*");
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_WARNING, "*Refusing*core_pattern*");
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_WARNING, "*Refusing*out/power/control*");
  lm_hwpower_restore (s, NULL);
  g_test_assert_expected_messages ();
  g_autofree char *control = lm_fake_root_get (f, "sys/devices/pci0/ata1/power/control");
  g_autofree char *helper = lm_fake_root_get (f, "sys/devices/pci0/uevent_helper");
  g_autofree char *shadow = lm_fake_root_get (f, "etc/shadow");
  g_assert_cmpstr (control, ==, "on");
  g_assert_cmpstr (helper, ==, "x");
  g_assert_cmpstr (shadow, ==, "secret");
}

/* The state file and its directory: only the daemon's own, never through a
 * symbolic link, never writable by others. */
static void
test_refused_files (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *dir = g_build_filename (f->root, "var/lib/laptop-moded", NULL);
  g_autofree char *path = g_build_filename (dir, "state", NULL);
  g_autofree char *elsewhere = g_build_filename (f->root, "elsewhere", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_true (lm_io_check_private_dir (dir, &error)); /* created */
  g_assert_no_error (error);
  struct stat st;
  g_assert_cmpint (stat (dir, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0755);

  g_assert_cmpint (chmod (dir, 0777), ==, 0);
  g_assert_false (lm_io_check_private_dir (dir, &error));
  g_assert_nonnull (strstr (error->message, dir));
  g_assert_nonnull (strstr (error->message, "0777"));
  g_clear_error (&error);
  g_assert_cmpint (chmod (dir, 0755), ==, 0);

  g_autofree char *link = g_build_filename (f->root, "var/lib/link", NULL);
  g_assert_cmpint (symlink (dir, link), ==, 0);
  g_assert_false (lm_io_check_private_dir (link, &error));
  g_assert_nonnull (strstr (error->message, "symbolic link"));
  g_clear_error (&error);

  /* A state file writable by others, or a link to one elsewhere. */
  g_assert_true (g_file_set_contents (path, "[Tunables]\ndirty_ratio=20\n", -1, NULL));
  g_assert_cmpint (chmod (path, 0666), ==, 0);
  g_autoptr (LmState) s = lm_state_new (path);
  g_assert_false (lm_state_load (s, &error));
  g_assert_nonnull (strstr (error->message, "0666"));
  g_assert_true (lm_state_is_empty (s));
  g_clear_error (&error);

  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_true (g_file_set_contents (elsewhere, "[Tunables]\ndirty_ratio=20\n", -1, NULL));
  g_assert_cmpint (symlink (elsewhere, path), ==, 0);
  g_autoptr (LmState) s2 = lm_state_new (path);
  g_assert_false (lm_state_load (s2, &error));
  g_assert_nonnull (strstr (error->message, "symbolic link"));
  g_assert_true (lm_state_is_empty (s2));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn)                                                                              \
  g_test_add (path, LmFakeRoot, NULL, lm_fake_root_setup, fn, lm_fake_root_teardown)
  ADD ("/state/round-trip", test_round_trip);
  ADD ("/state/snapshot-revert", test_snapshot_revert);
  ADD ("/state/corrupt", test_corrupt_state);
  ADD ("/state/odd-keys", test_odd_keys);
  ADD ("/state/legacy-keys", test_legacy_keys);
  ADD ("/state/encoding-key", test_encoding_key);
  ADD ("/state/value-bytes", test_value_bytes);
  ADD ("/state/refused-tunable", test_refused_tunable);
  ADD ("/state/refused-sysfs", test_refused_sysfs);
  ADD ("/state/refused-files", test_refused_files);
  ADD ("/io/atomic-write-mode", test_atomic_write_mode);
  ADD ("/io/read-value", test_read_value);
  return g_test_run ();
}
