/* test-remount.c: reading commit= back, mount flags, escaping and the remount settings.
 * Pure functions only: never mounts anything (test_remount.py does that). */
#define _GNU_SOURCE /* ST_NODEV and the other per-mount statvfs flags */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

#include "lm-error.h"
#include "lm-journal-private.h"
#include "lm-mountfd.h"
#include "lm-remount.h"
#include "lm-settings.h"

static void
check_split (const char *options, const char *const *want)
{
  g_auto (GStrv) got = lm_remount_options_split (options);
  g_assert_true (g_strv_equal ((const char *const *) got, want));
}

static void
test_split (void)
{
  check_split ("rw,relatime", (const char *const[]){ "rw", "relatime", NULL });
  check_split ("", (const char *const[]){ NULL });
  check_split (NULL, (const char *const[]){ NULL });
  check_split (",rw,,data=ordered,", (const char *const[]){ "rw", "data=ordered", NULL });
  /* A quoted value keeps its commas (SELinux contexts are written so). */
  check_split (
      "rw,context=\"system_u:object_r:a_t:s0:c1,c2\",noatime",
      (const char *const[]){ "rw", "context=\"system_u:object_r:a_t:s0:c1,c2\"", "noatime", NULL });
  /* A quote never closed is a literal; found by fuzz-remount: commit=
   * appended after it was swallowed into the "quoted" rest. */
  check_split ("wrck,x\",a=\"\",commit=600",
               (const char *const[]){ "wrck", "x\",a=\"\"", "commit=600", NULL });
  check_split ("a,\"b,c", (const char *const[]){ "a", "\"b", "c", NULL });
  g_autofree char *set = lm_remount_options_set ("rw,x\",a", "commit", "600");
  g_autofree char *got = lm_remount_options_get (set, "commit");
  g_assert_cmpstr (got, ==, "600");
}

static void
test_get (void)
{
  g_autofree char *commit = lm_remount_options_get ("rw,commit=17,data=ordered", "commit");
  g_autofree char *flag = lm_remount_options_get ("rw,commit=17", "rw");
  g_autofree char *absent = lm_remount_options_get ("rw,commitx=3", "commit");
  g_autofree char *prefix = lm_remount_options_get ("rw,commit", "comm");

  g_assert_cmpstr (commit, ==, "17");
  g_assert_cmpstr (flag, ==, "");
  g_assert_null (absent);
  g_assert_null (prefix);
}

static void
check_set (const char *options, const char *name, const char *value, const char *want)
{
  g_autofree char *got = lm_remount_options_set (options, name, value);
  g_assert_cmpstr (got, ==, want);
}

static void
test_set (void)
{
  /* Add at the end, keeping everything else in order. */
  check_set ("rw,noatime,data=ordered", "commit", "600", "rw,noatime,data=ordered,commit=600");
  check_set ("", "commit", "600", "commit=600");
  /* Replace in place. */
  check_set ("rw,commit=17,data=ordered", "commit", "600", "rw,commit=600,data=ordered");
  /* Duplicates (the last one won in the kernel) collapse into one. */
  check_set ("commit=5,rw,commit=17", "commit", "600", "commit=600,rw");
  /* Remove every occurrence. */
  check_set ("rw,commit=17,data=ordered,commit=3", "commit", NULL, "rw,data=ordered");
  check_set ("rw", "commit", NULL, "rw");
  check_set ("rw,relatime", "rw", NULL, "relatime");
  /* A name that merely starts like ours is another option. */
  check_set ("commitx=1,rw", "commit", "9", "commitx=1,rw,commit=9");
  /* Flags. */
  check_set ("rw", "noatime", "", "rw,noatime");
  /* Quoted values come out as they went in. */
  check_set ("context=\"a,b\",commit=5", "commit", "600", "context=\"a,b\",commit=600");
  /* Mount options from mountinfo are bytes: odd ones pass through. */
  check_set ("subvol=/a b,c\xff", "commit", "600", "subvol=/a b,c\xff,commit=600");
}

/* A remount sets commit= and nothing else: what is read back from the
 * options is only the kernel's own part, never a btrfs subvolume's name. */
static void
check_commit (const char *fstype, const char *options, const char *want, const char *restore)
{
  g_autofree char *got = lm_remount_options_commit (fstype, options);
  g_autofree char *back = lm_remount_options_commit_restore (fstype, options);

  g_assert_cmpstr (got, ==, want);
  g_assert_cmpstr (back, ==, restore);
}

static void
test_commit (void)
{
  check_commit ("ext4", "rw,relatime,commit=17,data=ordered", "17", "17");
  check_commit ("ext4", "rw,relatime,data=ordered", NULL, "0");
  check_commit ("ext4", "rw,commit=abc", NULL, "0");
  check_commit ("ext4", "rw,commit=", NULL, "0");
  check_commit ("ext4", "rw,commit=99999999999", NULL, "0");
  check_commit ("btrfs", "rw,relatime,space_cache=v2,subvolid=5,subvol=/", NULL, "0");
  check_commit ("btrfs", "rw,commit=600,space_cache=v2,subvolid=256,subvol=/a", "600", "600");
  /* The owner of a btrfs names its subvolume: none of that counts. */
  check_commit ("btrfs", "rw,relatime,subvolid=256,subvol=/x,commit=5", NULL, "0");
  check_commit ("btrfs", "rw,subvol=/x,commit=5,subvol=/y", NULL, "0");
  check_commit ("btrfs", "subvol=/commit=5,commit=5", NULL, "0");
  check_commit ("btrfs", "rw,commit=30,subvolid=257,subvol=/x,commit=5", "30", "30");
  /* Other types have no such option: the first commit= is the kernel's. */
  check_commit ("ext4", "rw,commit=30,usrjquota=a,commit=5", "30", "30");
}

static void
test_writable (void)
{
  g_assert_true (lm_remount_options_writable ("rw,relatime"));
  g_assert_true (lm_remount_options_writable ("rw"));
  g_assert_false (lm_remount_options_writable ("ro,relatime"));
  g_assert_false (lm_remount_options_writable ("ro,subvolid=256,subvol=/x,rw"));
  g_assert_false (lm_remount_options_writable ("relatime,rw"));
  g_assert_false (lm_remount_options_writable (""));
  g_assert_false (lm_remount_options_writable (NULL));
}

static void
test_lazytime (void)
{
  g_assert_true (lm_remount_options_lazytime ("ext4", "rw,lazytime,relatime"));
  g_assert_false (lm_remount_options_lazytime ("ext4", "rw,relatime"));
  g_assert_true (lm_remount_options_lazytime ("btrfs", "rw,lazytime,subvolid=5,subvol=/"));
  g_assert_false (lm_remount_options_lazytime ("btrfs", "rw,subvolid=256,subvol=/x,lazytime"));
}

static void
check_with_commit (const char *fstype, const char *options, const char *want)
{
  g_autofree char *got = lm_remount_options_with_commit (fstype, options, "600");
  g_autofree char *commit = lm_remount_options_commit (fstype, got);

  g_assert_cmpstr (got, ==, want);
  g_assert_cmpstr (commit, ==, "600");
}

static void
test_with_commit (void)
{
  check_with_commit ("ext4", "rw,relatime", "rw,relatime,commit=600");
  check_with_commit ("ext4", "rw,commit=17,data=ordered", "rw,commit=600,data=ordered");
  check_with_commit ("btrfs", "rw,space_cache=v2,subvolid=256,subvol=/x,suid,dev",
                     "rw,space_cache=v2,subvolid=256,commit=600,subvol=/x,suid,dev");
  check_with_commit ("btrfs", "subvol=/x", "commit=600,subvol=/x");
}

/* mount(2)'s fallback passes the held mount's own flags back as MS_*. */
static void
test_ms_flags (void)
{
  g_autofree char *words = NULL;

  g_assert_cmphex (lm_mountfd_ms_flags (ST_NOSUID | ST_NODEV | ST_RELATIME), ==,
                   MS_NOSUID | MS_NODEV | MS_RELATIME);
  g_assert_cmphex (lm_mountfd_ms_flags (ST_NOEXEC | ST_NOATIME | ST_NODIRATIME), ==,
                   MS_NOEXEC | MS_NOATIME | MS_NODIRATIME);
  g_assert_cmphex (lm_mountfd_ms_flags (ST_RDONLY | ST_SYNCHRONOUS | ST_RELATIME), ==,
                   MS_RDONLY | MS_SYNCHRONOUS | MS_RELATIME);
  /* Neither noatime nor relatime: strictatime, said out loud. */
  g_assert_cmphex (lm_mountfd_ms_flags (0), ==, MS_STRICTATIME);
  /* nosymfollow (Linux 5.10): ST_NOSYMFOLLOW 0x2000, MS_NOSYMFOLLOW 256. */
  g_assert_cmphex (lm_mountfd_ms_flags (0x2000 | ST_RELATIME), ==, 256 | MS_RELATIME);
  /* ST_VALID (0x20), the kernel's "f_flag is filled in", is no mount flag. */
  g_assert_cmphex (lm_mountfd_ms_flags (0x20 | ST_RELATIME), ==, MS_RELATIME);
  words = lm_mountfd_describe_flags (ST_NOSUID | ST_NODEV | ST_NOEXEC | ST_RELATIME | 0x2000);
  g_assert_cmpstr (words, ==, "rw,nosuid,nodev,noexec,relatime,nosymfollow");
}

static void
check_escape (const char *raw, const char *want)
{
  g_autofree char *escaped = lm_remount_escape (raw);
  g_autofree char *back = lm_remount_unescape (escaped);

  g_assert_cmpstr (escaped, ==, want);
  g_assert_true (g_utf8_validate (escaped, -1, NULL));
  g_assert_cmpstr (back, ==, raw);
}

static void
test_escape (void)
{
  check_escape ("/mnt/plain", "/mnt/plain");
  check_escape ("/mnt/sp ace,comma", "/mnt/sp ace,comma");
  check_escape ("/mnt/caf\xc3\xa9", "/mnt/caf\xc3\xa9");
  check_escape ("/mnt/latin1-\xe9-\xff", "/mnt/latin1-\\xe9-\\xff");
  check_escape ("/mnt/back\\slash", "/mnt/back\\x5cslash");
  check_escape ("/mnt/new\nline\ttab", "/mnt/new\\x0aline\\x09tab");
  /* A literal "\x41" in a name survives because the backslash is escaped. */
  check_escape ("/mnt/\\x41", "/mnt/\\x5cx41");
  /* A truncated UTF-8 sequence is bytes, not a character. */
  check_escape ("/mnt/\xc3", "/mnt/\\xc3");
}

/* A state file left by a daemon from before remounts went through the
 * journal (three groups, \xNN-escaped values) is still recovered, exactly. */
static void
test_old_state_file (void)
{
  g_autofree char *dir = g_dir_make_tmp ("lm-remount-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "state", NULL);
  const char *old = "[Remounts]\n8:1=/mnt/sp ace,comma-\\xff\n9:2=/mnt/half\n"
                    "[RemountsOriginal]\n8:1=rw,commit=5,errors=remount-ro\n"
                    "[RemountsApplied]\n8:1=rw,commit=600,errors=remount-ro\n9:2=rw\n";
  g_autoptr (LmState) state = lm_state_new (path);
  g_autoptr (GVariant) list = NULL;
  g_autofree char *original = NULL;
  g_autofree char *applied = NULL;
  g_autofree char *printed = NULL;
  g_auto (GStrv) keys = NULL;

  g_assert_true (g_file_set_contents (path, old, -1, NULL));
  g_assert_true (lm_state_load (state, NULL));
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_WARNING, "*Incomplete remount record 9:2*");
  g_assert_true (lm_remount_saved (state));
  g_test_assert_expected_messages ();

  keys = lm_journal_pending (state, "Remount");
  g_assert_cmpuint (g_strv_length (keys), ==, 1);
  g_assert_cmpstr (keys[0], ==, "8:1 /mnt/sp ace,comma-\xff");
  original = lm_journal_original (state, "Remount", keys[0]);
  applied = lm_journal_applied (state, "Remount", keys[0]);
  g_assert_cmpstr (original, ==, "rw,commit=5,errors=remount-ro");
  g_assert_cmpstr (applied, ==, "rw,commit=600,errors=remount-ro");
  g_assert_null (lm_state_get (state, "Remounts", "8:1"));
  g_assert_null (lm_state_get (state, "RemountsApplied", "9:2"));

  list = lm_remount_list (state);
  printed = g_variant_print (list, FALSE);
  g_assert_cmpstr (printed, ==, "[('/mnt/sp ace,comma-\\\\xff', 'rw,commit=5,errors=remount-ro')]");

  /* The journal's own file round-trips the record, any bytes in the path. */
  g_assert_true (lm_state_save (state, NULL));
  g_autoptr (LmState) back = lm_state_new (path);
  g_assert_true (lm_state_load (back, NULL));
  g_autoptr (GVariant) list2 = lm_remount_list (back);
  g_assert_true (g_variant_equal (list, list2));
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* --- the settings keys this feature adds ------------------------------ */

static void
test_settings_defaults (void)
{
  g_autoptr (LmSettings) s = lm_settings_new ();

  g_assert_true (s->remount);
  g_assert_true (g_strv_equal ((const char *const *) s->remount_types,
                               (const char *const[]){ "ext3", "ext4", "reiserfs", "btrfs", NULL }));
  g_assert_cmpuint (g_strv_length (s->no_remount), ==, 0);
}

static void
test_settings_key_file (void)
{
  g_autoptr (LmSettings) s = lm_settings_new ();
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  const char *text = "[LaptopMode]\n"
                     "Remount=false\n"
                     "RemountTypes=ext4;btrfs;ext4;\n"
                     "NoRemount=/home;/mnt/a\\;b;/mnt/sp ace,comma;\n";

  g_assert_true (g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, NULL));
  g_assert_true (lm_settings_load_key_file (s, kf, "test.conf", &error));
  g_assert_no_error (error);
  g_assert_false (s->remount);
  g_assert_true (g_strv_equal ((const char *const *) s->remount_types,
                               (const char *const[]){ "ext4", "btrfs", NULL }));
  g_assert_true (
      g_strv_equal ((const char *const *) s->no_remount,
                    (const char *const[]){ "/home", "/mnt/a;b", "/mnt/sp ace,comma", NULL }));

  /* Save and load again: the list form round-trips. */
  g_autofree char *dir = g_dir_make_tmp ("lm-remount-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "conf", NULL);
  g_assert_true (lm_settings_save (s, path, &error));
  g_autoptr (LmSettings) back = lm_settings_load (path, &error);
  g_assert_no_error (error);
  g_assert_true (lm_settings_equal (s, back));
  g_unlink (path);
  g_rmdir (dir);
}

static void
check_key_file_error (const char *text, const char *needle)
{
  g_autoptr (LmSettings) s = lm_settings_new ();
  g_autoptr (LmSettings) before = lm_settings_new ();
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, NULL));
  g_assert_false (lm_settings_load_key_file (s, kf, "test.conf", &error));
  g_assert_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS);
  g_assert_nonnull (strstr (error->message, needle));
  g_assert_true (lm_settings_equal (s, before));
}

static void
test_settings_key_file_errors (void)
{
  /* xfs has no commit= option: listing it would fail every Start. */
  check_key_file_error ("[LaptopMode]\nRemountTypes=ext4;xfs\n", "xfs");
  check_key_file_error ("[LaptopMode]\nRemount=maybe\n", "true or false");
  check_key_file_error ("[LaptopMode]\nNoRemount=relative/path\n", "absolute");
}

static void
test_settings_configure (void)
{
  g_autoptr (LmSettings) s = lm_settings_new ();
  g_autoptr (GError) error = NULL;
  const char *types[] = { "btrfs", NULL };
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "RemountTypes", g_variant_new_strv (types, -1));
  g_variant_builder_add (&b, "{sv}", "Remount", g_variant_new_boolean (FALSE));
  g_autoptr (GVariant) ok = g_variant_ref_sink (g_variant_builder_end (&b));
  g_assert_true (lm_settings_update (s, ok, &error));
  g_assert_no_error (error);
  g_assert_false (s->remount);
  g_assert_cmpstr (s->remount_types[0], ==, "btrfs");
  g_assert_null (s->remount_types[1]);

  /* A wrong type names the key and the type wanted; nothing changes. */
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "RemountTypes", g_variant_new_string ("ext4"));
  g_autoptr (GVariant) bad = g_variant_ref_sink (g_variant_builder_end (&b));
  g_assert_false (lm_settings_update (s, bad, &error));
  g_assert_nonnull (strstr (error->message, "RemountTypes"));
  g_assert_nonnull (strstr (error->message, "“as”"));
  g_assert_cmpstr (s->remount_types[0], ==, "btrfs");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/remount/options/split", test_split);
  g_test_add_func ("/remount/options/get", test_get);
  g_test_add_func ("/remount/options/set", test_set);
  g_test_add_func ("/remount/options/commit", test_commit);
  g_test_add_func ("/remount/options/writable", test_writable);
  g_test_add_func ("/remount/options/lazytime", test_lazytime);
  g_test_add_func ("/remount/options/with-commit", test_with_commit);
  g_test_add_func ("/remount/mountfd/ms-flags", test_ms_flags);
  g_test_add_func ("/remount/escape", test_escape);
  g_test_add_func ("/remount/old-state-file", test_old_state_file);
  g_test_add_func ("/remount/settings/defaults", test_settings_defaults);
  g_test_add_func ("/remount/settings/key-file", test_settings_key_file);
  g_test_add_func ("/remount/settings/key-file-errors", test_settings_key_file_errors);
  g_test_add_func ("/remount/settings/configure", test_settings_configure);
  return g_test_run ();
}
