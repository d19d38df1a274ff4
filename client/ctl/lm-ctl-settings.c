/* lm-ctl-settings.c: turning KEY=VALUE into what Configure takes.
 * The type of each key is its property's in the D-Bus interface (every
 * Configure key is a property of the same name), never a copy of its own. */
#include "config.h"

#include "lm-ctl.h"

static GVariant *
parse_boolean (const char *key, const char *text, GError **error)
{
  static const char *const yes[] = { "true", "yes", "on", "1", NULL };
  static const char *const no[] = { "false", "no", "off", "0", NULL };
  g_autofree char *lower = g_ascii_strdown (text, -1);

  if (g_strv_contains (yes, lower) || g_strv_contains (no, lower))
    return g_variant_new_boolean (g_strv_contains (yes, lower));
  g_autofree char *got = lm_ctl_safe (text);
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s takes true or false, not “%s”",
               key, got);
  return NULL;
}

static GVariant *
parse_uint32 (const char *key, const char *text, GError **error)
{
  guint64 n;

  /* Strict, as the config file is: "600s", "-1" and "0x10" are mistakes. */
  if (g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT32, &n, NULL))
    return g_variant_new_uint32 ((guint32) n);
  g_autofree char *got = lm_ctl_safe (text);
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s takes a whole number, not “%s”",
               key, got);
  return NULL;
}

/* Comma-separated; blanks around items go, an empty value is an empty list. */
static GVariant *
parse_strv (const char *text)
{
  g_auto (GStrv) items = g_strsplit (text, ",", -1);
  g_autoptr (GPtrArray) kept = g_ptr_array_new ();

  for (guint i = 0; items[i] != NULL; i++)
    if (*g_strstrip (items[i]) != '\0')
      g_ptr_array_add (kept, items[i]);
  return g_variant_new_strv ((const char *const *) kept->pdata, (gssize) kept->len);
}

/* GVariant text for the other types, e.g. DiskSettings={'sda': {'APM': <uint32 128>}}. */
static GVariant *
parse_text (const char *key, const GVariantType *type, const char *text, GError **error)
{
  g_autoptr (GError) parse_error = NULL;
  GVariant *v = g_variant_parse (type, text, NULL, NULL, &parse_error);

  if (v != NULL)
    return v;
  g_autofree char *message = lm_escape (parse_error->message, -1, LM_ESCAPE_DEFAULT);
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               "%s takes a GVariant of type “%s”: %s", key, g_variant_type_peek_string (type),
               message);
  return NULL;
}

static const GDBusPropertyInfo *
find_property (const char *key)
{
  GDBusInterfaceInfo *info = lm_exported_laptop_mode_interface_info ();

  for (guint i = 0; info->properties != NULL && info->properties[i] != NULL; i++)
    if (g_ascii_strcasecmp (info->properties[i]->name, key) == 0)
      return info->properties[i];
  return NULL;
}

/* @canonical: the key as the interface spells it (keys are matched without
 * regard to case, as the CLI always did). A key that is no property is no
 * setting either: it goes as a string, so that the daemon, which owns the
 * list of keys, names the mistake and the keys it knows. */
GVariant *
lm_ctl_parse_setting (const char *key, const char *text, const char **canonical, GError **error)
{
  const GDBusPropertyInfo *property = find_property (key);

  if (property == NULL)
    {
      *canonical = key;
      return g_variant_new_string (text);
    }
  *canonical = property->name;
  const GVariantType *type = G_VARIANT_TYPE (property->signature);
  if (g_variant_type_equal (type, G_VARIANT_TYPE_BOOLEAN))
    return parse_boolean (property->name, text, error);
  if (g_variant_type_equal (type, G_VARIANT_TYPE_UINT32))
    return parse_uint32 (property->name, text, error);
  if (g_variant_type_equal (type, G_VARIANT_TYPE_STRING))
    return g_variant_new_string (text);
  if (g_variant_type_equal (type, G_VARIANT_TYPE_STRING_ARRAY))
    return parse_strv (text);
  return parse_text (property->name, type, text, error);
}
