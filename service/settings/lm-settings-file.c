/* lm-settings-file.c: the config file's side of the settings: loading a
 * key file through the key table's checks, and saving keeping its comments. */
#include "lm-settings.h"

#include <gio/gio.h>

#include "lm-disk-policy.h"
#include "lm-error.h"
#include "lm-io.h"
#include "lm-keyfile.h"
#include "lm-limits.h"
#include "lm-settings-private.h"

/* Settings are exported on the bus as strings, which must be UTF-8. */
static gboolean
check_text (const LmSettingKey *k, const char *text, const char *origin, GError **error)
{
  if (g_utf8_validate (text, -1, NULL))
    return TRUE;
  g_autofree char *got = lm_limits_quote (text);
  lm_settings_set_range_error (error, k, origin, got);
  return FALSE;
}

/* Only [LaptopMode] and [Disk ID] sections: the disks' are read here. */
static gboolean
load_groups (LmSettings *s, GKeyFile *key_file, const char *origin, GError **error)
{
  g_auto (GStrv) groups = g_key_file_get_groups (key_file, NULL);

  for (guint g = 0; groups[g] != NULL; g++)
    {
      if (g_str_has_prefix (groups[g], LM_DISK_GROUP_PREFIX))
        {
          if (!lm_disk_policies_load_group (s->disks, key_file, groups[g], origin, error))
            return FALSE;
          continue;
        }
      if (!g_str_equal (groups[g], LM_SETTINGS_GROUP))
        {
          g_autofree char *escaped = lm_limits_escape (groups[g]);
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       "Unknown section [%s] in %s; known sections: [%s], [" LM_DISK_GROUP_PREFIX
                       "ID]",
                       escaped, origin, LM_SETTINGS_GROUP);
          return FALSE;
        }
    }
  return TRUE;
}

/* One key of [LaptopMode] (@raw: its value as written), through @k's type. */
static gboolean
load_key (LmSettings *s, const LmSettingKey *k, GKeyFile *key_file, const char *name,
          const char *raw, const char *origin, GError **error)
{
  g_autofree char *value = g_strstrip (g_strdup (raw));

  if (k->type == 'u')
    {
      guint64 n;
      /* Strict: "600s", "-1" or "0x10" are mistakes worth reporting. */
      if (!g_ascii_string_to_unsigned (value, 10, 0, G_MAXUINT32, &n, NULL))
        {
          g_autofree char *got = lm_limits_quote (value);
          lm_settings_set_range_error (error, k, origin, got);
          return FALSE;
        }
      return lm_settings_set_uint (s, k, n, origin, error);
    }
  if (k->type == 'b')
    {
      g_autoptr (GError) bool_error = NULL;
      gboolean b = g_key_file_get_boolean (key_file, LM_SETTINGS_GROUP, name, &bool_error);
      if (bool_error != NULL)
        {
          g_autofree char *got = lm_limits_quote (value);
          lm_settings_set_range_error (error, k, origin, got);
          return FALSE;
        }
      G_STRUCT_MEMBER (gboolean, s, k->offset) = b;
      return TRUE;
    }
  if (k->type == 'a')
    {
      /* The key file's list form: each item followed by ";", a ";" inside
       * an item written "\;"; an empty value is an empty list. Read by
       * lm-keyfile.c, so the items are the same on every GLib. */
      g_auto (GStrv) list = lm_keyfile_unescape_list (raw);
      for (guint j = 0; list[j] != NULL; j++)
        if (!check_text (k, list[j], origin, error))
          return FALSE;
      return lm_settings_set_strv (s, k, (const char *const *) list, origin, error);
    }
  g_autofree char *text = lm_keyfile_unescape (raw, TRUE);
  return check_text (k, text, origin, error) && lm_settings_set_string (s, k, text, origin, error);
}

gboolean
lm_settings_load_key_file (LmSettings *settings, GKeyFile *key_file, const char *origin,
                           GError **error)
{
  g_autoptr (LmSettings) s = lm_settings_copy (settings);

  if (!load_groups (s, key_file, origin, error))
    return FALSE;
  g_auto (GStrv) keys = g_key_file_get_keys (key_file, LM_SETTINGS_GROUP, NULL, NULL);
  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      const LmSettingKey *k = lm_settings_find_key (keys[i]);
      g_autofree char *raw = g_key_file_get_value (key_file, LM_SETTINGS_GROUP, keys[i], NULL);

      if (k == NULL)
        {
          g_autofree char *quoted = lm_limits_quote (keys[i]);
          g_autofree char *known = lm_settings_known_keys ();
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       "Unknown setting %s in %s; known settings: %s", quoted, origin, known);
          return FALSE;
        }
      if (!load_key (s, k, key_file, keys[i], raw != NULL ? raw : "", origin, error))
        return FALSE;
    }
  if (!lm_settings_check_consistency (s, origin, error))
    return FALSE;

  lm_settings_swap (settings, s);
  return TRUE;
}

/* A missing file means the defaults; a broken one is an error, so a typo is
 * never silently replaced by a default. */
LmSettings *
lm_settings_load (const char *path, GError **error)
{
  g_autoptr (LmSettings) s = lm_settings_new ();
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) local_error = NULL;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return g_steal_pointer (&s);
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS, "Cannot load %s: %s", path,
                   local_error->message);
      return NULL;
    }
  if (!lm_settings_load_key_file (s, kf, path, error))
    return NULL;
  return g_steal_pointer (&s);
}

/* Rewrite the file keeping the user's comments and layout; only our keys
 * change. */
gboolean
lm_settings_save (const LmSettings *settings, const char *path, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) local_error = NULL;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_KEEP_COMMENTS, &local_error)
      && !g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot load %s: %s", path,
                   local_error->message);
      return FALSE;
    }
  gsize n_keys;
  const LmSettingKey *keys = lm_settings_keys (&n_keys);

  for (gsize i = 0; i < n_keys; i++)
    {
      const LmSettingKey *k = &keys[i];
      if (k->type == 'u')
        g_key_file_set_uint64 (kf, LM_SETTINGS_GROUP, k->key,
                               G_STRUCT_MEMBER (guint, settings, k->offset));
      else if (k->type == 'b')
        g_key_file_set_boolean (kf, LM_SETTINGS_GROUP, k->key,
                                G_STRUCT_MEMBER (gboolean, settings, k->offset));
      else if (k->type == 'a')
        {
          /* Escaped by lm-keyfile.c, not GKeyFile: its list writer leaves
           * trailing blanks that the reader strips. */
          g_autofree char *text = lm_keyfile_escape_list (
              (const char *const *) G_STRUCT_MEMBER (char **, settings, k->offset));
          g_key_file_set_value (kf, LM_SETTINGS_GROUP, k->key, text);
        }
      else
        lm_keyfile_set (kf, LM_SETTINGS_GROUP, k->key,
                        G_STRUCT_MEMBER (char *, settings, k->offset));
    }
  lm_disk_policies_save (settings->disks, kf);
  gsize length;
  g_autofree char *data = g_key_file_to_data (kf, &length, NULL);
  return lm_io_write_atomic (path, data, length, 0644, error);
}
