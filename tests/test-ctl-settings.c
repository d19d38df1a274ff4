/* test-ctl-settings.c: laptop-modectl's reading of KEY=VALUE and its JSON (and of defer's --max).
 * Every key of the daemon's settings table (read from service/settings/lm-settings.c)
 * must be a property of the interface, typed alike, and parse to that type. */
#include <glib.h>
#include <string.h>

#include "lm-ctl.h"

/* The table's type letters, as lm-settings.c's key macros declare them. */
static const struct
{
  const char *macro;
  const char *signature;
} macro_types[] = {
  { "UINT_KEY", "u" },
  { "STR_KEY", "s" },
  { "BOOL_KEY", "b" },
  { "STRV_KEY", "as" },
};

typedef struct
{
  char *name;
  const char *signature;
} TableKey;

static GPtrArray *
settings_table (void)
{
  const char *srcdir = g_getenv ("LM_SRCDIR");
  g_autofree char *path
      = g_build_filename (srcdir ? srcdir : ".", "service", "settings", "lm-settings.c", NULL);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  GPtrArray *keys = g_ptr_array_new ();

  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (GRegex) row
      = g_regex_new ("^\\s*([A-Z]+_KEY) \\(\"([A-Za-z]+)\"", G_REGEX_MULTILINE, 0, &error);
  g_assert_no_error (error);
  g_autoptr (GMatchInfo) match = NULL;
  g_regex_match (row, text, 0, &match);
  while (g_match_info_matches (match))
    {
      g_autofree char *macro = g_match_info_fetch (match, 1);
      TableKey *k = g_new0 (TableKey, 1);

      k->name = g_match_info_fetch (match, 2);
      for (gsize i = 0; i < G_N_ELEMENTS (macro_types); i++)
        if (g_str_equal (macro_types[i].macro, macro))
          k->signature = macro_types[i].signature;
      g_assert_nonnull (k->signature);
      g_ptr_array_add (keys, k);
      g_match_info_next (match, NULL);
    }
  /* Configure's per-disk key is checked in lm-disk-policy.c, not in the table. */
  g_assert_nonnull (strstr (text, "#define DISK_SETTINGS_KEY \"DiskSettings\""));
  TableKey *disks = g_new0 (TableKey, 1);
  disks->name = g_strdup ("DiskSettings");
  disks->signature = "a{sa{sv}}";
  g_ptr_array_add (keys, disks);
  return keys;
}

static void
test_every_key_is_a_property (void)
{
  g_autoptr (GPtrArray) keys = settings_table ();
  GDBusInterfaceInfo *info = lm_exported_laptop_mode_interface_info ();

  /* 14 rows today; fewer means the parse above broke, not the table. */
  g_assert_cmpuint (keys->len, >=, 15);
  for (guint i = 0; i < keys->len; i++)
    {
      TableKey *k = keys->pdata[i];
      GDBusPropertyInfo *p = g_dbus_interface_info_lookup_property (info, k->name);

      if (p == NULL)
        g_error ("Configure key %s has no property of that name in the interface: laptop-modectl "
                 "set cannot know its type",
                 k->name);
      g_assert_cmpstr (p->signature, ==, k->signature);
      g_free (k->name);
      g_free (k);
    }
}

static GVariant *
parse_ok (const char *key, const char *text, const char *want_key, const char *want_text)
{
  g_autoptr (GError) error = NULL;
  const char *canonical = NULL;
  GVariant *v = lm_ctl_parse_setting (key, text, &canonical, &error);

  g_assert_no_error (error);
  g_assert_nonnull (v);
  g_variant_ref_sink (v);
  g_assert_cmpstr (canonical, ==, want_key);
  g_autofree char *printed = g_variant_print (v, TRUE);
  g_assert_cmpstr (printed, ==, want_text);
  return v;
}

static void
parse_fails (const char *key, const char *text, const char *in_message)
{
  g_autoptr (GError) error = NULL;
  const char *canonical = NULL;
  GVariant *v = lm_ctl_parse_setting (key, text, &canonical, &error);

  g_assert_null (v);
  g_assert_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
  g_assert_nonnull (strstr (error->message, in_message));
}

static void
test_parse_by_property_type (void)
{
  /* The bug this replaced: SpinUpHistory went as a string. */
  g_variant_unref (parse_ok ("SpinUpHistory", "true", "SpinUpHistory", "true"));
  g_variant_unref (parse_ok ("spinuphistory", "no", "SpinUpHistory", "false"));
  g_variant_unref (parse_ok ("Remount", "0", "Remount", "false"));
  g_variant_unref (parse_ok ("Remount", "YES", "Remount", "true"));
  g_variant_unref (parse_ok ("MaxLostWork", "300", "MaxLostWork", "uint32 300"));
  g_variant_unref (parse_ok ("SpinUpIdle", "7", "SpinUpIdle", "uint32 7"));
  g_variant_unref (parse_ok ("DiskRecheck", "0", "DiskRecheck", "uint32 0"));
  g_variant_unref (parse_ok ("Attribution", "bpf", "Attribution", "'bpf'"));
  g_variant_unref (parse_ok ("Engine", "1", "Engine", "'1'"));
  g_variant_unref (
      parse_ok ("RemountTypes", " ext4, btrfs,,", "RemountTypes", "['ext4', 'btrfs']"));
  g_variant_unref (parse_ok ("NoRemount", "", "NoRemount", "@as []"));
  g_variant_unref (parse_ok ("DiskSettings", "{'sda': {'APM': <uint32 128>}}", "DiskSettings",
                             "{'sda': {'APM': <uint32 128>}}"));
  /* No such property: the daemon names the mistake and its keys. */
  g_variant_unref (parse_ok ("Bogus", "12", "Bogus", "'12'"));

  parse_fails ("SpinUpHistory", "maybe", "takes true or false");
  parse_fails ("MaxLostWork", "300s", "takes a whole number");
  parse_fails ("MaxLostWork", "-1", "takes a whole number");
  parse_fails ("MaxLostWork", "4294967296", "takes a whole number");
  parse_fails ("DiskSettings", "{'sda': 3}", "a{sa{sv}}");
  /* Outside text in a message is escaped like any other. */
  parse_fails ("Remount", "\033[2J", "\\x1b[2J");
}

static void
test_json_keeps_real_characters (void)
{
  const char *name = "evil\033]0;x\007\177\302\233 \"q\" \\";
  g_autoptr (GVariant) dict = g_variant_ref_sink (
      g_variant_new_parsed ("{'Comm': <%s>, 'Pid': <uint32 7>, 'Time': <int64 -1>}", name));
  g_autoptr (JsonNode) node = json_gvariant_serialize (dict);
  g_autofree char *text = lm_ctl_json_text (node);
  g_autoptr (GError) error = NULL;

  for (const char *p = text; *p; p = g_utf8_next_char (p))
    g_assert_false (lm_escape_is_unsafe (g_utf8_get_char (p)));
  g_autoptr (JsonNode) back = json_from_string (text, &error);
  g_assert_no_error (error);
  JsonObject *o = json_node_get_object (back);
  g_assert_cmpstr (json_object_get_string_member (o, "Comm"), ==, name);
  g_assert_cmpint (json_object_get_int_member (o, "Pid"), ==, 7);
  g_assert_cmpint (json_object_get_int_member (o, "Time"), ==, -1);
}

/* defer's and wait-awake's --max. */
static void
test_parse_duration (void)
{
  g_assert_cmpint (lm_ctl_parse_duration ("90s"), ==, 90);
  g_assert_cmpint (lm_ctl_parse_duration ("90"), ==, 90);
  g_assert_cmpint (lm_ctl_parse_duration ("30m"), ==, 1800);
  g_assert_cmpint (lm_ctl_parse_duration ("30min"), ==, 1800);
  g_assert_cmpint (lm_ctl_parse_duration ("4h"), ==, 14400);
  g_assert_cmpint (lm_ctl_parse_duration ("1d"), ==, 86400);
  g_assert_cmpint (lm_ctl_parse_duration ("24h"), ==, 86400);
  g_assert_cmpint (lm_ctl_parse_duration ("0"), ==, 0);
  g_assert_cmpint (lm_ctl_parse_duration ("25h"), ==, -1);
  g_assert_cmpint (lm_ctl_parse_duration ("86401"), ==, -1);
  g_assert_cmpint (lm_ctl_parse_duration ("2d"), ==, -1);
  g_assert_cmpint (lm_ctl_parse_duration ("99999999999999999999h"), ==, -1);
  g_assert_cmpint (lm_ctl_parse_duration ("-1h"), ==, -1);
  g_assert_cmpint (lm_ctl_parse_duration (" 1h"), ==, -1);
  g_assert_cmpint (lm_ctl_parse_duration ("1 h"), ==, -1);
  g_assert_cmpint (lm_ctl_parse_duration ("4x"), ==, -1);
  g_assert_cmpint (lm_ctl_parse_duration ("h"), ==, -1);
  g_assert_cmpint (lm_ctl_parse_duration (""), ==, -1);
  g_assert_cmpint (lm_ctl_parse_duration (NULL), ==, -1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ctl/every-key-is-a-property", test_every_key_is_a_property);
  g_test_add_func ("/ctl/parse-by-property-type", test_parse_by_property_type);
  g_test_add_func ("/ctl/json", test_json_keeps_real_characters);
  g_test_add_func ("/ctl/parse-duration", test_parse_duration);
  return g_test_run ();
}
