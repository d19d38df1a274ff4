/* test-settings.c: validation of settings from D-Bus and from the config
 * file, and the config file's round trip. */
#include <unistd.h>
#include <glib/gstdio.h>

#include "lm-error.h"
#include "lm-settings.h"

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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/settings/defaults", test_defaults);
  g_test_add_func ("/settings/update-good", test_update_good);
  g_test_add_func ("/settings/update-bad", test_update_bad);
  g_test_add_func ("/settings/load-good", test_load_good);
  g_test_add_func ("/settings/load-missing", test_load_missing);
  g_test_add_func ("/settings/load-bad", test_load_bad);
  g_test_add_func ("/settings/save-round-trip", test_save_round_trip);
  return g_test_run ();
}
