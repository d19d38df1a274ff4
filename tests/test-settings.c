/* test-settings.c: validation of settings from D-Bus, and the bounds
 * (lm-limits.h) they are held to; the config file is test-settings-file.c's. */
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "lm-disk-policy.h"
#include "lm-error.h"
#include "lm-settings.h"
#include "lm-settings-private.h"

static GVariant *
parse_asv (const char *text)
{
  g_autoptr (GError) error = NULL;
  GVariant *v = g_variant_parse (G_VARIANT_TYPE_VARDICT, text, NULL, NULL, &error);
  g_assert_no_error (error);
  return v;
}

static void
test_defaults (void)
{
  g_autoptr (LmSettings) s = lm_settings_new ();

  g_assert_cmpstr (s->mode, ==, "auto");
  g_assert_cmpstr (s->engine, ==, "auto");
  g_assert_cmpuint (s->max_lost_work, ==, 600);
  g_assert_cmpuint (s->laptop_mode_seconds, ==, 2);
  g_assert_cmpuint (s->dirty_ratio, ==, 60);
  g_assert_cmpuint (s->dirty_background_ratio, ==, 1);
}

static void
test_update_good (void)
{
  g_autoptr (LmSettings) s = lm_settings_new ();
  g_autoptr (GVariant) v = g_variant_ref_sink (
      parse_asv ("{'MaxLostWork': <uint32 86400>, 'DirtyRatio': <uint32 100>, "
                 "'DirtyBackgroundRatio': <uint32 99>, 'Engine': <'userspace'>, 'Mode': <'on'>, "
                 "'LaptopModeSeconds': <uint32 600>}"));
  g_autoptr (GError) error = NULL;

  g_assert_true (lm_settings_update (s, v, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (s->max_lost_work, ==, 86400);
  g_assert_cmpuint (s->dirty_ratio, ==, 100);
  g_assert_cmpuint (s->dirty_background_ratio, ==, 99);
  g_assert_cmpstr (s->engine, ==, "userspace");
  g_assert_cmpstr (s->mode, ==, "on");
}

static void
test_update_bad (void)
{
  static const struct
  {
    const char *asv;
    const char *must_name;
  } cases[] = {
    { "{'Bogus': <uint32 1>}", "Bogus" },
    { "{'MaxLostWork': <'600'>}", "MaxLostWork" },
    { "{'MaxLostWork': <int32 600>}", "MaxLostWork" },
    { "{'MaxLostWork': <uint64 600>}", "MaxLostWork" },
    { "{'MaxLostWork': <uint32 0>}", "1 to 86400" },
    { "{'MaxLostWork': <uint32 86401>}", "MaxLostWork" },
    { "{'DirtyRatio': <uint32 101>}", "DirtyRatio" },
    { "{'DirtyRatio': <uint32 0>}", "DirtyRatio" },
    { "{'DirtyBackgroundRatio': <uint32 60>}", "DirtyBackgroundRatio" },
    { "{'DirtyRatio': <uint32 5>, 'DirtyBackgroundRatio': <uint32 6>}", "DirtyBackgroundRatio" },
    { "{'Engine': <'fast'>}", "Engine" },
    { "{'Mode': <'sideways'>}", "Mode" },
    { "{'LowBatteryPercent': <uint32 0>}", "LowBatteryPercent" },
    { "{'Mode': <uint32 1>}", "Mode" },
    { "{'LaptopModeSeconds': <uint32 601>}", "LaptopModeSeconds" },
    { "{'MaxLostWork': <uint32 5>, 'Engine': <'warp'>}", "Engine" },
    { "@a{sv} {}", "No settings" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (LmSettings) s = lm_settings_new ();
      g_autoptr (LmSettings) before = lm_settings_copy (s);
      g_autoptr (GVariant) v = g_variant_ref_sink (parse_asv (cases[i].asv));
      g_autoptr (GError) error = NULL;

      g_assert_false (lm_settings_update (s, v, &error));
      g_assert_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS);
      if (strstr (error->message, cases[i].must_name) == NULL)
        g_error ("%s: message “%s” does not name %s", cases[i].asv, error->message,
                 cases[i].must_name);
      /* All or nothing: a good key before the bad one did not stick. */
      g_assert_true (lm_settings_equal (s, before));
    }
}

/* --- The bounds table (lm-limits.h) ----------------------------------- */

static GVariant *
one_setting (const char *key, GVariant *value)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", key, value);
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static GVariant *
paths (guint n, gsize length, char fill)
{
  GVariantBuilder b;
  g_autofree char *item = g_malloc (length + 1);

  memset (item, fill, length);
  item[0] = '/';
  item[length] = '\0';
  g_variant_builder_init (&b, G_VARIANT_TYPE_STRING_ARRAY);
  for (guint i = 0; i < n; i++)
    g_variant_builder_add (&b, "s", item);
  return g_variant_builder_end (&b);
}

/* Refused with InvalidArgs, a message containing @expected, short and with
 * no control byte in it; @settings unchanged. */
static void
assert_refused (GVariant *asv, const char *expected)
{
  g_autoptr (LmSettings) s = lm_settings_new ();
  g_autoptr (LmSettings) before = lm_settings_copy (s);
  g_autoptr (GError) error = NULL;

  g_assert_false (lm_settings_update (s, asv, &error));
  g_assert_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS);
  if (strstr (error->message, expected) == NULL)
    g_error ("message “%s” does not say “%s”", error->message, expected);
  g_assert_cmpuint (strlen (error->message), <, 400);
  for (const char *p = error->message; *p; p++)
    g_assert_false ((guchar) *p < 0x20 || *p == 0x7f);
  g_assert_true (lm_settings_equal (s, before));
}

static void
assert_accepted (GVariant *asv)
{
  g_autoptr (LmSettings) s = lm_settings_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (lm_settings_update (s, asv, &error));
  g_assert_no_error (error);
}

static void
test_bounds_lists (void)
{
  g_autoptr (GVariant) at_limit = one_setting ("NoRemount", paths (256, 10, 'a'));
  g_autoptr (GVariant) over = one_setting ("NoRemount", paths (257, 10, 'a'));
  g_autoptr (GVariant) types = one_setting ("RemountTypes", paths (300, 4, 'x'));

  assert_accepted (at_limit);
  assert_refused (over, "NoRemount lists at most 256 entries, not 257");
  assert_refused (types, "RemountTypes lists at most 256 entries, not 300");
}

static void
test_bounds_path (void)
{
  g_autoptr (GVariant) at_limit = one_setting ("NoRemount", paths (1, 4095, 'p'));
  g_autoptr (GVariant) over = one_setting ("NoRemount", paths (1, 4096, '\x01'));

  assert_accepted (at_limit);
  assert_refused (over, "NoRemount entry 1 is 4096 bytes long; an entry is at most 4095 bytes");
}

/* A value that is refused for what it is, not its size, is quoted in at
 * most 64 bytes, escaped. */
static void
test_bounds_quote (void)
{
  g_autofree char *long_mode = g_strnfill (64, '\a');
  g_autoptr (GVariant) mode = one_setting ("Mode", g_variant_new_string (long_mode));

  g_autofree char *item = g_strnfill (4000, '\x1b');
  const char *items[] = { item, NULL };
  g_autoptr (GVariant) rel = one_setting ("NoRemount", g_variant_new_strv (items, -1));

  assert_refused (rel, "NoRemount must be a list of absolute paths, not “\\x1b\\x1b");
  assert_refused (rel, "…”");
  assert_refused (mode, "Mode must be one of");
}

static void
test_bounds_strings_and_keys (void)
{
  g_autofree char *big = g_strnfill (1 << 20, 'o');
  g_autoptr (GVariant) mode = one_setting ("Mode", g_variant_new_string (big));
  g_autoptr (GVariant) name = one_setting (big, g_variant_new_uint32 (1));
  GVariantBuilder b;

  assert_refused (mode, "Mode is 1048576 bytes long; it is at most 64 bytes");
  assert_refused (name, "A setting's name is 1048576 bytes long; a name is at most 64 bytes");
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  for (guint i = 0; i < 33; i++)
    {
      g_autofree char *key = g_strdup_printf ("Key%u", i);
      g_variant_builder_add (&b, "{sv}", key, g_variant_new_uint32 (1));
    }
  g_autoptr (GVariant) many = g_variant_ref_sink (g_variant_builder_end (&b));
  assert_refused (many, "Configure takes at most 32 settings in one call, not 33");
}

static void
test_bounds_disks (void)
{
  GVariantBuilder disks, keys;

  g_variant_builder_init (&disks, G_VARIANT_TYPE ("a{sa{sv}}"));
  for (guint i = 0; i < 65; i++)
    {
      g_autofree char *id = g_strdup_printf ("sd%u", i);
      g_variant_builder_add (&disks, "{s@a{sv}}", id,
                             g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
    }
  g_autoptr (GVariant) too_many = one_setting ("DiskSettings", g_variant_builder_end (&disks));
  assert_refused (too_many, "DiskSettings lists at most 64 disks, not 65");

  g_variant_builder_init (&keys, G_VARIANT_TYPE_VARDICT);
  for (guint i = 0; i < 17; i++)
    g_variant_builder_add (&keys, "{sv}", "APM", g_variant_new_uint32 (128));
  g_variant_builder_init (&disks, G_VARIANT_TYPE ("a{sa{sv}}"));
  g_variant_builder_add (&disks, "{s@a{sv}}", "sda", g_variant_builder_end (&keys));
  g_autoptr (GVariant) wide = one_setting ("DiskSettings", g_variant_builder_end (&disks));
  assert_refused (wide, "DiskSettings takes at most 16 settings per disk, not 17");

  g_autofree char *id = g_strnfill (256, 'i');
  g_variant_builder_init (&disks, G_VARIANT_TYPE ("a{sa{sv}}"));
  g_variant_builder_add (&disks, "{s@a{sv}}", id,
                         g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));
  g_autoptr (GVariant) long_id = one_setting ("DiskSettings", g_variant_builder_end (&disks));
  assert_refused (long_id, "is 256 bytes long; an id is at most 255 bytes");
}

/* Refusing a million entries costs what refusing 257 does: sizes only. */
static void
test_bounds_constant_time (void)
{
  g_autoptr (GVariant) huge = one_setting ("NoRemount", paths (1000000, 2, 'm'));
  g_autoptr (LmSettings) s = lm_settings_new ();
  gint64 best = G_MAXINT64;

  /* The best of five: one sample on a busy machine may be preempted. */
  for (int i = 0; i < 5; i++)
    {
      g_autoptr (GError) error = NULL;
      gint64 t = g_get_monotonic_time ();

      g_assert_false (lm_settings_update (s, huge, &error));
      best = MIN (best, g_get_monotonic_time () - t);
      g_assert_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS);
      g_assert_nonnull (strstr (error->message, "at most 256 entries, not 1000000"));
    }
  /* Reading every entry takes tens of milliseconds; a look at the size,
   * microseconds. 20 ms leaves room for a loaded machine. */
  g_assert_cmpint (best, <, 20000);
}

/* Duplicates are dropped through a hash set, in order. */
static void
test_bounds_duplicates (void)
{
  g_autoptr (LmSettings) s = lm_settings_new ();
  g_autoptr (GVariant) v
      = g_variant_ref_sink (parse_asv ("{'NoRemount': <['/b', '/a', '/b', '/c', '/a']>}"));
  g_autoptr (GError) error = NULL;

  g_assert_true (lm_settings_update (s, v, &error));
  g_assert_cmpuint (g_strv_length (s->no_remount), ==, 3);
  g_assert_cmpstr (s->no_remount[0], ==, "/b");
  g_assert_cmpstr (s->no_remount[1], ==, "/a");
  g_assert_cmpstr (s->no_remount[2], ==, "/c");
}

/* A value that is not UTF-8 is refused for every key, whatever its type,
 * with a sentence built from what that key accepts. On a string key
 * without choices (NvmeLatencyToleranceUs) this once joined a NULL list:
 * a CRITICAL (fatal here), and "must be one of “(null)”" for the user. */
static void
test_range_error_every_key (void)
{
  gsize n_keys;
  const LmSettingKey *keys = lm_settings_keys (&n_keys);
  guint seen_types = 0;

  /* String keys without choices first: on the old code their CRITICAL
   * aborts before any wording check could fail. */
  for (gsize pass = 0; pass < 2 * n_keys; pass++)
    {
      const LmSettingKey *k = &keys[pass % n_keys];
      if ((pass < n_keys) != (k->type == 's' && k->choices == NULL))
        continue;
      g_autoptr (LmSettings) s = lm_settings_new ();
      g_autoptr (GKeyFile) kf = g_key_file_new ();
      g_autoptr (GError) error = NULL;
      g_autofree char *text = g_strdup_printf ("[LaptopMode]\n%s=\xff\xfe\n", k->key);
      g_autofree char *want = g_strdup_printf ("%s in test.conf must be ", k->key);
      const char *expect;

      g_assert_true (g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_KEEP_COMMENTS, NULL));
      /* Where the CRITICAL came from: a string key with no list of choices. */
      if (k->type == 's' && k->choices == NULL)
        g_test_message ("%s: a string key without choices", k->key);
      g_assert_false (lm_settings_load_key_file (s, kf, "test.conf", &error));
      g_assert_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS);
      g_test_message ("%s: %s", k->key, error->message);
      g_assert_true (g_str_has_prefix (error->message, want));
      g_assert_null (strstr (error->message, "(null)"));
      g_assert_nonnull (strstr (error->message, ", not “\\xff\\xfe”"));
      switch (k->type)
        {
          case 'u':
            expect = "must be a whole number from ";
            seen_types |= 1;
            break;
          case 'b':
            expect = "must be true or false, not";
            seen_types |= 2;
            break;
          case 'a':
            expect
                = k->choices != NULL ? "must be a list of “" : "must be a list of absolute paths";
            seen_types |= k->choices != NULL ? 4 : 8;
            break;
          default:
            expect = k->choices != NULL ? "must be one of “" : "must be “keep”, “auto”, “any” or ";
            seen_types |= k->choices != NULL ? 16 : 32;
            break;
        }
      g_assert_nonnull (strstr (error->message, expect));
    }
  /* Every kind of row is in the table, so each branch above ran. */
  g_assert_cmpuint (seen_types, ==, 63);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/settings/defaults", test_defaults);
  g_test_add_func ("/settings/update-good", test_update_good);
  g_test_add_func ("/settings/update-bad", test_update_bad);
  g_test_add_func ("/settings/range-error-every-key", test_range_error_every_key);
  g_test_add_func ("/settings/bounds/lists", test_bounds_lists);
  g_test_add_func ("/settings/bounds/path", test_bounds_path);
  g_test_add_func ("/settings/bounds/quote", test_bounds_quote);
  g_test_add_func ("/settings/bounds/strings-and-keys", test_bounds_strings_and_keys);
  g_test_add_func ("/settings/bounds/disks", test_bounds_disks);
  g_test_add_func ("/settings/bounds/constant-time", test_bounds_constant_time);
  g_test_add_func ("/settings/bounds/duplicates", test_bounds_duplicates);
  return g_test_run ();
}
