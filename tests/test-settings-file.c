/* test-settings-file.c: the config file: loaded (good, missing, bad,
 * hand-written), saved and read back byte for byte whatever Configure
 * accepted, and held to the same bounds as D-Bus. */
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "lm-disk-policy.h"
#include "lm-error.h"
#include "lm-settings.h"
#include "lm-settings-private.h"

static char *
write_temp (const char *contents)
{
  g_autoptr (GError) error = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp ("lm-settings-XXXXXX.conf", &path, &error);

  g_assert_no_error (error);
  close (fd);
  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
  return path;
}

static void
test_load_good (void)
{
  g_autofree char *path = write_temp ("# comment\n[LaptopMode]\nMaxLostWork = 300 \nMode=on\n");
  g_autoptr (GError) error = NULL;
  g_autoptr (LmSettings) s = lm_settings_load (path, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (s->max_lost_work, ==, 300);
  g_assert_cmpstr (s->mode, ==, "on");
  g_assert_cmpuint (s->dirty_ratio, ==, 60);
  g_unlink (path);
}

static void
test_load_missing (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LmSettings) s = lm_settings_load ("/nonexistent/laptop-moded.conf", &error);

  g_assert_no_error (error);
  g_assert_cmpuint (s->max_lost_work, ==, 600);
}

static void
test_load_bad (void)
{
  static const struct
  {
    const char *contents;
    const char *must_name;
  } cases[] = {
    { "[LaptopMode]\nMaxLostWork=600s\n", "MaxLostWork" },
    { "[LaptopMode]\nMaxLostWork=-1\n", "MaxLostWork" },
    { "[LaptopMode]\nMaxLostWork=0x10\n", "MaxLostWork" },
    { "[LaptopMode]\nMaxLostWork=\n", "MaxLostWork" },
    { "[LaptopMode]\nMaxLostWork=99999999999999999999\n", "MaxLostWork" },
    { "[LaptopMode]\nDirtyRatio=101\n", "DirtyRatio" },
    { "[LaptopMode]\nDirtyBackgroundRatio=70\n", "DirtyBackgroundRatio" },
    { "[LaptopMode]\nTurbo=1\n", "Turbo" },
    { "[Other]\nx=1\n", "[Other]" },
    { "[LaptopMode]\nEngine=Kernel\n", "Engine" },
    { "not a key file\n", "Cannot load" },
    { "[LaptopMode]\nMode=\xff\xfe\n", "Mode" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = write_temp (cases[i].contents);
      g_autoptr (GError) error = NULL;
      g_autoptr (LmSettings) s = lm_settings_load (path, &error);

      g_assert_null (s);
      g_assert_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS);
      if (strstr (error->message, cases[i].must_name) == NULL)
        g_error ("%s: message “%s” does not name %s", cases[i].contents, error->message,
                 cases[i].must_name);
      /* The file is named, so the user knows where to look. */
      g_assert_nonnull (strstr (error->message, path));
      g_unlink (path);
    }
}

static void
test_save_round_trip (void)
{
  g_autofree char *path = write_temp ("# keep me\n[LaptopMode]\n# and me\nMaxLostWork=120\n");
  g_autoptr (LmSettings) s = lm_settings_new ();
  g_autoptr (GError) error = NULL;

  s->max_lost_work = 45;
  s->dirty_ratio = 33;
  g_free (s->engine);
  s->engine = g_strdup ("kernel");
  g_assert_true (lm_settings_save (s, path, &error));
  g_assert_no_error (error);

  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "# keep me"));
  g_assert_nonnull (strstr (text, "# and me"));

  g_autoptr (LmSettings) back = lm_settings_load (path, &error);
  g_assert_no_error (error);
  g_assert_true (lm_settings_equal (s, back));
  g_unlink (path);
}

/* Every value Configure accepts comes back from the file byte for byte,
 * and the file holds exactly the escapes every GLib reads the same way
 * (lm-keyfile.c): an empty list stays empty, blanks at the ends, tabs,
 * ";", "\" and non-ASCII survive. */
static void
test_hostile_round_trip (void)
{
  static const struct
  {
    const char *item;
    const char *line;
  } cases[] = {
    { "/mnt/a;b", "NoRemount=/mnt/a\\;b;\n" },
    { "/mnt/tab\there\t", "NoRemount=/mnt/tab\\there\\t;\n" },
    { "/mnt/back\\slash\\", "NoRemount=/mnt/back\\\\slash\\\\;\n" },
    { "/mnt/trailing  ", "NoRemount=/mnt/trailing\\s\\s;\n" },
    { "/mnt/in side", "NoRemount=/mnt/in side;\n" },
    { "/mnt/caf\xc3\xa9 \xe2\x80\xae", "NoRemount=/mnt/caf\xc3\xa9 \xe2\x80\xae;\n" },
    { "/mnt/x\\x41\\s", "NoRemount=/mnt/x\\\\x41\\\\s;\n" },
    { "/mnt/nl\nand\rcr", "NoRemount=/mnt/nl\\nand\\rcr;\n" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = write_temp ("");
      g_autoptr (LmSettings) s = lm_settings_new ();
      g_autoptr (GError) error = NULL;
      const char *items[] = { cases[i].item, "/srv", NULL };
      g_autoptr (GVariant) asv = g_variant_ref_sink (
          g_variant_new_parsed ("{'NoRemount': <%^as>, 'RemountTypes': <@as []>}", items));

      g_assert_true (lm_settings_update (s, asv, &error));
      g_assert_no_error (error);
      g_assert_true (lm_settings_save (s, path, &error));
      g_autofree char *text = NULL;
      g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
      g_autofree char *want
          = g_strdup_printf ("%.*s/srv;\n", (int) strlen (cases[i].line) - 1, cases[i].line);
      g_assert_nonnull (strstr (text, want));
      g_assert_nonnull (strstr (text, "\nRemountTypes=\n"));

      g_autoptr (LmSettings) back = lm_settings_load (path, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (g_strv_length (back->remount_types), ==, 0);
      g_assert_cmpstrv (back->no_remount, items);
      g_assert_true (lm_settings_equal (s, back));
      g_unlink (path);
    }
}

/* Every string a setting holds, hostile or not, either comes back from
 * the config file exactly or is refused by Configure with the settings
 * as they were: each string key's accepted values, and DiskSettings ids
 * with ';', '\', '#', quotes and non-ASCII (kept), or tabs, blanks at the
 * ends, newlines, brackets and '=' (refused: a section name cannot hold
 * them). */
static void
test_hostile_strings_round_trip (void)
{
  static const char *const hostile[] = {
    "a;b",
    "back\\slash\\",
    "caf\xc3\xa9\xe2\x80\xae",
    "#not-a-comment",
    "x\\x41\\s",
    "\"quoted\"",
    "semi;",
    ";lead",
    "tab\there",
    " lead",
    "trail ",
    "nl\nx",
    "cr\rx",
    "br[ack]et",
    "a=b",
    "",
    "sl/ash",
  };
  static const char *const string_values[][6] = {
    { "Mode", "off", "on", "auto", NULL },
    { "Engine", "auto", "kernel", "userspace", NULL },
    { "Attribution", "auto", "bpf", "tracefs", "block_dump", "none" },
    { "SataLinkPolicy", "min_power", "keep", "", "med_power_with_dipm", NULL },
    { "NvmeLatencyToleranceUs", "keep", "auto", "any", "0", "2147483647" },
  };

  /* String keys: what is accepted comes back; hostile variants of it are
   * refused and change nothing. */
  for (gsize i = 0; i < G_N_ELEMENTS (string_values); i++)
    for (gsize j = 1; j < G_N_ELEMENTS (string_values[i]) && string_values[i][j] != NULL; j++)
      {
        const char *key = string_values[i][0], *value = string_values[i][j];
        g_autofree char *path = write_temp ("");
        g_autoptr (LmSettings) s = lm_settings_new ();
        g_autoptr (GError) error = NULL;
        g_autoptr (GVariant) asv
            = g_variant_ref_sink (g_variant_new_parsed ("{%s: <%s>}", key, value));

        g_assert_true (lm_settings_update (s, asv, &error));
        g_assert_no_error (error);
        g_assert_true (lm_settings_save (s, path, &error));
        g_autoptr (LmSettings) back = lm_settings_load (path, &error);
        g_assert_no_error (error);
        g_assert_true (lm_settings_equal (s, back));
        g_unlink (path);
        for (gsize h = 0; h < G_N_ELEMENTS (hostile); h++)
          {
            g_autofree char *bad = g_strconcat (value, hostile[h], NULL);
            g_autoptr (LmSettings) before = lm_settings_copy (s);
            g_autoptr (GVariant) bad_asv
                = g_variant_ref_sink (g_variant_new_parsed ("{%s: <%s>}", key, bad));
            g_autoptr (GError) bad_error = NULL;
            if (*hostile[h] == '\0')
              continue;
            g_assert_false (lm_settings_update (s, bad_asv, &bad_error));
            g_assert_error (bad_error, LM_ERROR, LM_ERROR_INVALID_ARGS);
            g_assert_true (lm_settings_equal (s, before));
          }
      }

  /* DiskSettings ids. */
  for (gsize h = 0; h < G_N_ELEMENTS (hostile); h++)
    {
      g_autofree char *id = g_strconcat ("ata-", hostile[h], NULL);
      g_autofree char *path = write_temp ("");
      g_autoptr (LmSettings) s = lm_settings_new ();
      g_autoptr (LmSettings) before = lm_settings_new ();
      g_autoptr (GError) error = NULL;
      GVariantBuilder disk, disks, all;

      g_variant_builder_init (&disk, G_VARIANT_TYPE_VARDICT);
      g_variant_builder_add (&disk, "{sv}", "APM", g_variant_new_uint32 (128));
      g_variant_builder_init (&disks, G_VARIANT_TYPE ("a{sa{sv}}"));
      g_variant_builder_add (&disks, "{sa{sv}}", id, &disk);
      g_variant_builder_init (&all, G_VARIANT_TYPE_VARDICT);
      g_variant_builder_add (&all, "{sv}", "DiskSettings", g_variant_builder_end (&disks));
      g_autoptr (GVariant) asv = g_variant_ref_sink (g_variant_builder_end (&all));
      gboolean valid = strpbrk (hostile[h], " \t\n\r[]=/") == NULL;

      g_test_message ("id %s: %s", id, valid ? "kept" : "refused");
      if (!valid)
        {
          g_assert_false (lm_settings_update (s, asv, &error));
          g_assert_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS);
          g_assert_nonnull (strstr (error->message, "is not valid"));
          g_assert_true (lm_settings_equal (s, before));
          g_unlink (path);
          continue;
        }
      g_assert_true (lm_settings_update (s, asv, &error));
      g_assert_no_error (error);
      g_assert_true (lm_settings_save (s, path, &error));
      g_assert_no_error (error);
      g_autoptr (LmSettings) back = lm_settings_load (path, &error);
      g_assert_no_error (error);
      g_assert_true (lm_settings_equal (s, back));
      const LmDiskPolicy *p = lm_disk_policies_lookup (back->disks, id, NULL);
      g_assert_nonnull (p);
      g_assert_cmpint (p->apm, ==, 128);
      g_assert_cmpuint (g_hash_table_size (back->disks), ==, 1);
      /* Saved again: the same bytes (no escaping that grows). */
      g_autofree char *first = NULL, *second = NULL;
      g_assert_true (g_file_get_contents (path, &first, NULL, NULL));
      g_assert_true (lm_settings_save (back, path, &error));
      g_assert_true (g_file_get_contents (path, &second, NULL, NULL));
      g_assert_cmpstr (first, ==, second);
      g_unlink (path);
    }
}

/* Hand-written files: blanks around items go, unknown escapes stay as
 * written on every GLib (2.80 made g_key_file_get_string_list fail on
 * them, which read as an empty list), and bytes that are not UTF-8 are an
 * error rather than a silently different list. */
static void
test_hand_written_lists (void)
{
  g_autofree char *path = write_temp ("[LaptopMode]\nRemountTypes= ext4 ; btrfs\t; \n"
                                      "NoRemount=/a\\x41 ;/b\\;c;  /d\\s;/e\\\n");
  g_autoptr (GError) error = NULL;
  g_autoptr (LmSettings) s = lm_settings_load (path, &error);
  const char *types[] = { "ext4", "btrfs", NULL };
  const char *paths[] = { "/a\\x41", "/b;c", "/d ", "/e\\", NULL };

  g_assert_no_error (error);
  g_assert_cmpstrv (s->remount_types, types);
  g_assert_cmpstrv (s->no_remount, paths);
  g_unlink (path);

  g_autofree char *bad = write_temp ("[LaptopMode]\nNoRemount=/a\xff;\n");
  g_autoptr (LmSettings) none = lm_settings_load (bad, &error);
  g_assert_null (none);
  g_assert_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS);
  g_unlink (bad);
}

/* The config file has the same bounds. */
static void
test_bounds_key_file (void)
{
  g_autoptr (GString) text = g_string_new ("[LaptopMode]\nNoRemount=");
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < 257; i++)
    g_string_append_printf (text, "/m%u;", i);
  g_string_append (text, "\n");
  g_autofree char *path = write_temp (text->str);
  g_autoptr (LmSettings) s = lm_settings_load (path, &error);
  g_unlink (path);
  g_assert_null (s);
  g_assert_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS);
  g_assert_nonnull (strstr (error->message, "NoRemount in "));
  g_assert_nonnull (strstr (error->message, "lists at most 256 entries, not 257"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/settings/load-good", test_load_good);
  g_test_add_func ("/settings/load-missing", test_load_missing);
  g_test_add_func ("/settings/load-bad", test_load_bad);
  g_test_add_func ("/settings/save-round-trip", test_save_round_trip);
  g_test_add_func ("/settings/hostile-round-trip", test_hostile_round_trip);
  g_test_add_func ("/settings/hostile-strings-round-trip", test_hostile_strings_round_trip);
  g_test_add_func ("/settings/hand-written-lists", test_hand_written_lists);
  g_test_add_func ("/settings/bounds/key-file", test_bounds_key_file);
  return g_test_run ();
}
