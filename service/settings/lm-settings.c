/* lm-settings.c: the user's settings, their defaults, ranges and validation.
 * Every check lives in the key table below, so Configure() and the config
 * file cannot disagree about what is valid. */
#include "lm-settings.h"
#include "lm-settings-private.h"

#include <errno.h>
#include <string.h>
#include <gio/gio.h>

#include "lm-disk-policy.h"
#include "lm-error.h"
#include "lm-io.h"
#include "lm-limits.h"

static const char *const mode_choices[] = { "off", "on", "auto", NULL };
static const char *const engine_choices[] = { "auto", "kernel", "userspace", NULL };
static const char *const attribution_choices[]
    = { "auto", "bpf", "tracefs", "block_dump", "none", NULL };
/* Types whose drivers take commit=<seconds> on remount: xfs and others
 * would refuse it, so they cannot be listed. */
static const char *const remount_type_choices[] = { "ext3", "ext4", "reiserfs", "btrfs", NULL };
/* What link_power_management_policy takes (ata_scsi_lpm_store); "keep" and ""
 * leave it alone. keep_firmware_settings can be read but not written. */
static const char *const sata_link_choices[] = { "med_power_with_dipm",
                                                 "max_performance",
                                                 "medium_power",
                                                 "min_power",
                                                 "min_power_with_partial",
                                                 "keep",
                                                 "",
                                                 NULL };

/* One table row per line reads better than clang-format's layout of
 * brace-initialiser macros. The size bounds (lm-limits.h) are columns of
 * the same table, so a key cannot be added without them. */
/* clang-format off */
#define UINT_KEY(name, field, lo, hi) { name, 'u', lo, hi, NULL, G_STRUCT_OFFSET (LmSettings, field), 0, 0 }
#define STR_KEY(name, field, list) { name, 's', 0, 0, list, G_STRUCT_OFFSET (LmSettings, field), LM_LIMIT_NAME, 0 }
#define BOOL_KEY(name, field) { name, 'b', 0, 0, NULL, G_STRUCT_OFFSET (LmSettings, field), 0, 0 }
#define STRV_KEY(name, field, list, bytes) { name, 'a', 0, 0, list, G_STRUCT_OFFSET (LmSettings, field), bytes, LM_LIMIT_LIST }
/* clang-format on */

static const LmSettingKey setting_keys[] = {
  STR_KEY ("Mode", mode, mode_choices),
  STR_KEY ("Engine", engine, engine_choices),
  UINT_KEY ("MaxLostWork", max_lost_work, 1, 86400),
  UINT_KEY ("LaptopModeSeconds", laptop_mode_seconds, 1, 600),
  UINT_KEY ("DirtyRatio", dirty_ratio, 1, 100),
  UINT_KEY ("DirtyBackgroundRatio", dirty_background_ratio, 0, 99),
  UINT_KEY ("LowBatteryPercent", low_battery_percent, 1, 99),
  BOOL_KEY ("Remount", remount),
  STRV_KEY ("RemountTypes", remount_types, remount_type_choices, LM_LIMIT_NAME),
  STRV_KEY ("NoRemount", no_remount, NULL, LM_LIMIT_PATH),
  STR_KEY ("Attribution", attribution, attribution_choices),
  UINT_KEY ("SpinUpIdle", spinup_idle, 1, 86400),
  BOOL_KEY ("SpinUpHistory", spinup_history),
  UINT_KEY ("DiskRecheck", disk_recheck, 0, 86400),
  STR_KEY ("SataLinkPolicy", sata_link_policy, sata_link_choices),
  BOOL_KEY ("RuntimePM", runtime_pm),
  UINT_KEY ("RuntimePMAutosuspendMs", runtime_pm_autosuspend_ms, 0, 3600000),
  STR_KEY ("NvmeLatencyToleranceUs", nvme_latency_tolerance, NULL),
  BOOL_KEY ("FollowPowerProfile", follow_power_profile),
  BOOL_KEY ("DeferMaintenance", defer_maintenance),
};

const LmSettingKey *
lm_settings_keys (gsize *n_keys)
{
  *n_keys = G_N_ELEMENTS (setting_keys);
  return setting_keys;
}

/* Configure's per-disk key; its checks live in lm-disk-policy.c. */
#define DISK_SETTINGS_KEY "DiskSettings"

LmSettings *
lm_settings_new (void)
{
  LmSettings *s = g_new0 (LmSettings, 1);

  s->mode = g_strdup ("auto");
  s->engine = g_strdup ("auto");
  s->attribution = g_strdup ("auto");
  s->spinup_idle = 20; /* hdparm -S 4 */
  s->max_lost_work = 600;
  s->laptop_mode_seconds = 2;
  s->dirty_ratio = 60;
  s->dirty_background_ratio = 1;
  s->low_battery_percent = 10;
  s->remount = TRUE;
  s->follow_power_profile = TRUE;
  s->defer_maintenance = TRUE;
  s->remount_types = g_strdupv ((char **) remount_type_choices);
  s->no_remount = g_new0 (char *, 1);
  s->disks = lm_disk_policies_new ();
  s->sata_link_policy = g_strdup ("med_power_with_dipm");
  s->runtime_pm = TRUE;
  s->nvme_latency_tolerance = g_strdup ("keep");
  return s;
}

LmSettings *
lm_settings_copy (const LmSettings *settings)
{
  LmSettings *s = g_memdup2 (settings, sizeof *settings);

  s->mode = g_strdup (settings->mode);
  s->engine = g_strdup (settings->engine);
  s->attribution = g_strdup (settings->attribution);
  s->remount_types = g_strdupv (settings->remount_types);
  s->no_remount = g_strdupv (settings->no_remount);
  s->disks = lm_disk_policies_copy (settings->disks);
  s->sata_link_policy = g_strdup (settings->sata_link_policy);
  s->nvme_latency_tolerance = g_strdup (settings->nvme_latency_tolerance);
  return s;
}

void
lm_settings_free (LmSettings *settings)
{
  if (settings == NULL)
    return;
  g_free (settings->mode);
  g_free (settings->engine);
  g_free (settings->attribution);
  g_strfreev (settings->remount_types);
  g_strfreev (settings->no_remount);
  g_clear_pointer (&settings->disks, g_hash_table_unref);
  g_free (settings->sata_link_policy);
  g_free (settings->nvme_latency_tolerance);
  g_free (settings);
}

gboolean
lm_settings_equal (const LmSettings *a, const LmSettings *b)
{
  return g_str_equal (a->mode, b->mode) && g_str_equal (a->engine, b->engine)
         && g_str_equal (a->attribution, b->attribution) && a->spinup_idle == b->spinup_idle
         && a->spinup_history == b->spinup_history && a->disk_recheck == b->disk_recheck
         && lm_disk_policies_equal (a->disks, b->disks) && a->max_lost_work == b->max_lost_work
         && a->laptop_mode_seconds == b->laptop_mode_seconds && a->dirty_ratio == b->dirty_ratio
         && a->dirty_background_ratio == b->dirty_background_ratio
         && a->low_battery_percent == b->low_battery_percent && a->remount == b->remount
         && a->follow_power_profile == b->follow_power_profile
         && a->defer_maintenance == b->defer_maintenance
         && g_strv_equal ((const char *const *) a->remount_types,
                          (const char *const *) b->remount_types)
         && g_strv_equal ((const char *const *) a->no_remount, (const char *const *) b->no_remount)
         && g_str_equal (a->sata_link_policy, b->sata_link_policy) && a->runtime_pm == b->runtime_pm
         && a->runtime_pm_autosuspend_ms == b->runtime_pm_autosuspend_ms
         && g_str_equal (a->nvme_latency_tolerance, b->nvme_latency_tolerance);
}

gboolean
lm_settings_valid_mode (const char *mode)
{
  return mode != NULL && g_strv_contains (mode_choices, mode);
}

const LmSettingKey *
lm_settings_find_key (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (setting_keys); i++)
    if (g_str_equal (setting_keys[i].key, name))
      return &setting_keys[i];
  return NULL;
}

char *
lm_settings_known_keys (void)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (setting_keys); i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", setting_keys[i].key);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* What @k accepts, in the words of its error message; built from the key's
 * own row, so a key of any type gets a true sentence. */
char *
lm_settings_key_accepts (const LmSettingKey *k)
{
  g_autofree char *list = NULL;

  if (k->choices != NULL)
    list = g_strjoinv ("”, “", (char **) k->choices);
  switch (k->type)
    {
      case 'u':
        return g_strdup_printf ("a whole number from %u to %u", k->min, k->max);
      case 'b':
        return g_strdup ("true or false");
      case 'a':
        return list != NULL ? g_strdup_printf ("a list of “%s”", list)
                            : g_strdup ("a list of absolute paths");
      default:
        if (list != NULL)
          return g_strdup_printf ("one of “%s”", list);
        /* Without choices: the syntax lm_settings_set_string checks. */
        return g_strdup (LM_LIMIT_LATENCY_SYNTAX);
    }
}

void
lm_settings_set_range_error (GError **error, const LmSettingKey *k, const char *origin,
                             const char *got)
{
  g_autofree char *accepts = lm_settings_key_accepts (k);

  g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS, "%s%s%s must be %s, not %s", k->key,
               origin ? " in " : "", origin ? origin : "", accepts, got);
}

gboolean
lm_settings_set_uint (LmSettings *s, const LmSettingKey *k, guint64 value, const char *origin,
                      GError **error)
{
  if (value < k->min || value > k->max)
    {
      g_autofree char *got = g_strdup_printf ("%" G_GUINT64_FORMAT, value);
      lm_settings_set_range_error (error, k, origin, got);
      return FALSE;
    }
  G_STRUCT_MEMBER (guint, s, k->offset) = (guint) value;
  return TRUE;
}

gboolean
lm_settings_set_string (LmSettings *s, const LmSettingKey *k, const char *value, const char *origin,
                        GError **error)
{
  /* A key without choices has a syntax of its own. */
  if (k->choices == NULL)
    {
      g_autoptr (GError) check_error = NULL;
      if (!lm_limits_check_latency (value, &check_error))
        {
          g_autofree char *got = lm_limits_quote (value);
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS, "%s%s%s, not %s",
                       check_error->message, origin ? " in " : "", origin ? origin : "", got);
          return FALSE;
        }
    }
  else if (!g_strv_contains (k->choices, value))
    {
      g_autofree char *got = lm_limits_quote (value);
      lm_settings_set_range_error (error, k, origin, got);
      return FALSE;
    }
  char **field = &G_STRUCT_MEMBER (char *, s, k->offset);
  g_free (*field);
  *field = g_strdup (value);
  return TRUE;
}

/* The size bounds of one list, checked before its items are looked at. */
static gboolean
check_list_size (const LmSettingKey *k, gsize n_items, const char *origin, GError **error)
{
  if (n_items > k->max_items)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "%s%s%s lists at most %u entries, not %" G_GSIZE_FORMAT, k->key,
                   origin ? " in " : "", origin ? origin : "", k->max_items, n_items);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_item_size (const LmSettingKey *k, gsize index, gsize length, const char *origin,
                 GError **error)
{
  if (length > k->max_bytes)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "%s%s%s entry %" G_GSIZE_FORMAT " is %" G_GSIZE_FORMAT
                   " bytes long; an entry is at most %" G_GSIZE_FORMAT " bytes%s",
                   k->key, origin ? " in " : "", origin ? origin : "", index + 1, length,
                   k->max_bytes, k->max_bytes == LM_LIMIT_PATH ? " (PATH_MAX less its NUL)" : "");
      return FALSE;
    }
  return TRUE;
}

/* A list: each item one of the key's choices, or an absolute path when it
 * has none; duplicates are dropped (a hash set: linear, not quadratic),
 * order kept. */
gboolean
lm_settings_set_strv (LmSettings *s, const LmSettingKey *k, const char *const *value,
                      const char *origin, GError **error)
{
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  guint n = g_strv_length ((char **) value);

  if (!check_list_size (k, n, origin, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      if (!check_item_size (k, i, strnlen (value[i], k->max_bytes + 1), origin, error))
        return FALSE;
      gboolean ok = k->choices != NULL ? g_strv_contains (k->choices, value[i])
                                       : g_path_is_absolute (value[i]);
      if (!ok)
        {
          g_autofree char *got = lm_limits_quote (value[i]);
          lm_settings_set_range_error (error, k, origin, got);
          return FALSE;
        }
      if (g_hash_table_add (seen, (gpointer) value[i]))
        g_ptr_array_add (items, g_strdup (value[i]));
    }
  g_ptr_array_add (items, NULL);
  char ***field = &G_STRUCT_MEMBER (char **, s, k->offset);
  g_strfreev (*field);
  *field = (char **) g_ptr_array_free (g_steal_pointer (&items), FALSE);
  return TRUE;
}

static const GVariantType *
key_variant_type (const LmSettingKey *k)
{
  switch (k->type)
    {
      case 'u':
        return G_VARIANT_TYPE_UINT32;
      case 'b':
        return G_VARIANT_TYPE_BOOLEAN;
      case 'a':
        return G_VARIANT_TYPE_STRING_ARRAY;
      default:
        return G_VARIANT_TYPE_STRING;
    }
}

/* Give @a the contents of @b and @b the old ones of @a (freed by its owner). */
void
lm_settings_swap (LmSettings *a, LmSettings *b)
{
  LmSettings tmp = *a;
  *a = *b;
  *b = tmp;
}

/* Rules that involve more than one key. */
gboolean
lm_settings_check_consistency (const LmSettings *s, const char *origin, GError **error)
{
  if (s->dirty_background_ratio >= s->dirty_ratio)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "DirtyBackgroundRatio%s%s (%u) must be below DirtyRatio (%u): the kernel "
                   "would halve it silently",
                   origin ? " in " : "", origin ? origin : "", s->dirty_background_ratio,
                   s->dirty_ratio);
      return FALSE;
    }
  return TRUE;
}

/* A string's length from its serialised size: constant time, where
 * strlen() or g_variant_get_string() on an untrusted value would read it. */
static gsize
string_size (GVariant *string)
{
  return g_variant_get_size (string) - 1;
}

static gboolean
check_name_size (GVariant *name, const char *what, GError **error)
{
  if (string_size (name) > LM_LIMIT_NAME)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "%s is %" G_GSIZE_FORMAT " bytes long; a name is at most %d bytes", what,
                   string_size (name), LM_LIMIT_NAME);
      return FALSE;
    }
  return TRUE;
}

/* DiskSettings a{sa{sv}}: its shape only; lm-disk-policy.c checks values. */
static gboolean
check_disk_bounds (GVariant *disks, GError **error)
{
  gsize n = g_variant_n_children (disks);

  if (n > LM_LIMIT_DISKS)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   DISK_SETTINGS_KEY " lists at most %d disks, not %" G_GSIZE_FORMAT,
                   LM_LIMIT_DISKS, n);
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr (GVariant) entry = g_variant_get_child_value (disks, i);
      g_autoptr (GVariant) id = g_variant_get_child_value (entry, 0);
      g_autoptr (GVariant) dict = g_variant_get_child_value (entry, 1);
      gsize n_keys = g_variant_n_children (dict);

      if (string_size (id) > LM_LIMIT_DISK_ID)
        {
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       "A disk id in " DISK_SETTINGS_KEY " is %" G_GSIZE_FORMAT
                       " bytes long; an id is at most %d bytes",
                       string_size (id), LM_LIMIT_DISK_ID);
          return FALSE;
        }
      if (n_keys > LM_LIMIT_DISK_KEYS)
        {
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       DISK_SETTINGS_KEY
                       " takes at most %d settings per disk, not %" G_GSIZE_FORMAT,
                       LM_LIMIT_DISK_KEYS, n_keys);
          return FALSE;
        }
      for (gsize j = 0; j < n_keys; j++)
        {
          g_autoptr (GVariant) item = g_variant_get_child_value (dict, j);
          g_autoptr (GVariant) name = g_variant_get_child_value (item, 0);
          if (!check_name_size (name, "A disk setting's name", error))
            return FALSE;
        }
    }
  return TRUE;
}

/* The bounds of lm-limits.h, by size alone and before anything else reads
 * the values: a million entries or a 30 MiB string are refused at the cost
 * of a few lookups. Wrong types pass here; the checks after name them. */
gboolean
lm_settings_check_bounds (GVariant *asv, GError **error)
{
  gsize n = g_variant_n_children (asv);

  if (n > LM_LIMIT_SETTINGS)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "Configure takes at most %d settings in one call, not %" G_GSIZE_FORMAT,
                   LM_LIMIT_SETTINGS, n);
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr (GVariant) entry = g_variant_get_child_value (asv, i);
      g_autoptr (GVariant) name = g_variant_get_child_value (entry, 0);
      g_autoptr (GVariant) boxed = g_variant_get_child_value (entry, 1);
      g_autoptr (GVariant) v = g_variant_get_variant (boxed);

      if (!check_name_size (name, "A setting's name", error))
        return FALSE;
      const char *key = g_variant_get_string (name, NULL);
      if (g_str_equal (key, DISK_SETTINGS_KEY))
        {
          if (g_variant_is_of_type (v, G_VARIANT_TYPE ("a{sa{sv}}"))
              && !check_disk_bounds (v, error))
            return FALSE;
          continue;
        }
      const LmSettingKey *k = lm_settings_find_key (key);
      if (k == NULL || !g_variant_is_of_type (v, key_variant_type (k)))
        continue;
      if (k->type == 's' && string_size (v) > k->max_bytes)
        {
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       "%s is %" G_GSIZE_FORMAT " bytes long; it is at most %" G_GSIZE_FORMAT
                       " bytes",
                       k->key, string_size (v), k->max_bytes);
          return FALSE;
        }
      if (k->type != 'a')
        continue;
      gsize n_items = g_variant_n_children (v);
      if (!check_list_size (k, n_items, NULL, error))
        return FALSE;
      for (gsize j = 0; j < n_items; j++)
        {
          g_autoptr (GVariant) item = g_variant_get_child_value (v, j);
          if (!check_item_size (k, j, string_size (item), NULL, error))
            return FALSE;
        }
    }
  return TRUE;
}

/* Apply an a{sv} from Configure() to a copy first, so a bad key anywhere
 * leaves @settings untouched. */
gboolean
lm_settings_update (LmSettings *settings, GVariant *asv, GError **error)
{
  g_autoptr (LmSettings) s = lm_settings_copy (settings);
  GVariantIter iter;
  const char *name;
  GVariant *value;

  if (!g_variant_is_of_type (asv, G_VARIANT_TYPE_VARDICT))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS, "Settings must be of type a{sv}");
      return FALSE;
    }
  if (g_variant_n_children (asv) == 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS, "No settings given");
      return FALSE;
    }
  if (!lm_settings_check_bounds (asv, error))
    return FALSE;

  g_variant_iter_init (&iter, asv);
  while (g_variant_iter_next (&iter, "{&sv}", &name, &value))
    {
      g_autoptr (GVariant) v = value;
      const LmSettingKey *k = lm_settings_find_key (name);

      if (g_str_equal (name, DISK_SETTINGS_KEY))
        {
          if (!lm_disk_policies_update (s->disks, v, error))
            return FALSE;
          continue;
        }
      if (k == NULL)
        {
          g_autofree char *quoted = lm_limits_quote (name);
          g_autofree char *keys = lm_settings_known_keys ();
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       "Unknown setting %s; known settings: %s, " DISK_SETTINGS_KEY, quoted, keys);
          return FALSE;
        }
      const GVariantType *want = key_variant_type (k);
      if (!g_variant_is_of_type (v, want))
        {
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       "%s must be of type “%.*s”, not “%s”", k->key,
                       (int) g_variant_type_get_string_length (want),
                       g_variant_type_peek_string (want), g_variant_get_type_string (v));
          return FALSE;
        }
      gboolean ok;
      if (k->type == 'u')
        ok = lm_settings_set_uint (s, k, g_variant_get_uint32 (v), NULL, error);
      else if (k->type == 'b')
        {
          G_STRUCT_MEMBER (gboolean, s, k->offset) = g_variant_get_boolean (v);
          ok = TRUE;
        }
      else if (k->type == 'a')
        {
          g_autofree const char **strv = g_variant_get_strv (v, NULL);
          ok = lm_settings_set_strv (s, k, strv, NULL, error);
        }
      else
        ok = lm_settings_set_string (s, k, g_variant_get_string (v, NULL), NULL, error);
      if (!ok)
        return FALSE;
    }
  if (!lm_settings_check_consistency (s, NULL, error))
    return FALSE;

  lm_settings_swap (settings, s);
  return TRUE;
}
