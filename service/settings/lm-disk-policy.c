/* lm-disk-policy.c: per-disk settings, from [Disk ID] sections of the config
 * file and from Configure's DiskSettings. Every check lives in the key table
 * below, so the file and D-Bus cannot disagree; nothing here is applied. */
#include "lm-disk-policy.h"

#include <string.h>

#include "lm-error.h"
#include "lm-limits.h"

typedef struct
{
  const char *key;
  char type; /* 'u' or 'b' */
  guint min;
  guint max;
  gboolean (*check) (guint value, GError **error);
  gsize offset;
} LmDiskKey;

#define DISK_KEY(name, type, lo, hi, check, field)                                                 \
  {                                                                                                \
    name, type, lo, hi, check, G_STRUCT_OFFSET (LmDiskPolicy, field)                               \
  }

static const LmDiskKey disk_keys[] = {
  DISK_KEY ("StandbySeconds", 'u', 0, 19800, lm_limits_check_standby, standby_seconds),
  DISK_KEY ("ACStandbySeconds", 'u', 0, 19800, lm_limits_check_standby, ac_standby_seconds),
  DISK_KEY ("APM", 'u', 1, 255, NULL, apm),
  DISK_KEY ("ReadaheadKiB", 'u', 0, 1048576, NULL, readahead_kib),
  DISK_KEY ("Exclude", 'b', 0, 1, NULL, exclude),
  DISK_KEY ("RuntimePM", 'b', 0, 1, NULL, runtime_pm),
  DISK_KEY ("LoadCycleRating", 'u', 1000, 10000000, NULL, load_cycle_rating),
};

static LmDiskPolicy *
policy_new (void)
{
  LmDiskPolicy *p = g_new (LmDiskPolicy, 1);

  p->standby_seconds = p->ac_standby_seconds = p->apm = p->readahead_kib = p->exclude = -1;
  p->runtime_pm = p->load_cycle_rating = -1;
  return p;
}

GHashTable *
lm_disk_policies_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

GHashTable *
lm_disk_policies_copy (GHashTable *policies)
{
  GHashTable *copy = lm_disk_policies_new ();
  GHashTableIter iter;
  gpointer id, p;

  g_hash_table_iter_init (&iter, policies);
  while (g_hash_table_iter_next (&iter, &id, &p))
    g_hash_table_insert (copy, g_strdup (id), g_memdup2 (p, sizeof (LmDiskPolicy)));
  return copy;
}

gboolean
lm_disk_policies_equal (GHashTable *a, GHashTable *b)
{
  GHashTableIter iter;
  gpointer id, p;

  if (g_hash_table_size (a) != g_hash_table_size (b))
    return FALSE;
  g_hash_table_iter_init (&iter, a);
  while (g_hash_table_iter_next (&iter, &id, &p))
    {
      LmDiskPolicy *q = g_hash_table_lookup (b, id);
      if (q == NULL || memcmp (p, q, sizeof (LmDiskPolicy)) != 0)
        return FALSE;
    }
  return TRUE;
}

gboolean
lm_disk_policy_excluded (const LmDiskPolicy *policy)
{
  return policy != NULL && policy->exclude == 1;
}

gboolean
lm_disk_policy_is_empty (const LmDiskPolicy *policy)
{
  for (gsize i = 0; i < G_N_ELEMENTS (disk_keys); i++)
    if (G_STRUCT_MEMBER (gint, policy, disk_keys[i].offset) >= 0)
      return FALSE;
  return TRUE;
}

/* A stable id names the disk; the kernel name serves where /dev/disk/by-id
 * has nothing. */
const LmDiskPolicy *
lm_disk_policies_lookup (GHashTable *policies, const char *id, const char *name)
{
  const LmDiskPolicy *p = id != NULL ? g_hash_table_lookup (policies, id) : NULL;

  return p != NULL ? p : g_hash_table_lookup (policies, name);
}

/* Ids become config section names and state file keys: printable, no
 * brackets, no "/", at most 255 bytes. */
static gboolean
valid_id (const char *id, const char *origin, GError **error)
{
  gboolean ok = *id != '\0' && strlen (id) <= 255 && g_utf8_validate (id, -1, NULL);

  for (const char *p = id; ok && *p; p++)
    ok = (guchar) *p > 0x20 && *p != 0x7f && *p != '[' && *p != ']' && *p != '/' && *p != '=';
  if (!ok)
    {
      g_autofree char *escaped = lm_limits_escape (id);
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "Disk id “%s”%s%s is not valid: use a name from /dev/disk/by-id (such as "
                   "ata-WDC_WD5000LPVX_WX11A12345) or a kernel name (sda), without spaces, "
                   "brackets or “/”",
                   escaped, origin ? " in " : "", origin ? origin : "");
    }
  return ok;
}

static const LmDiskKey *
find_key (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (disk_keys); i++)
    if (g_str_equal (disk_keys[i].key, name))
      return &disk_keys[i];
  return NULL;
}

static void
set_unknown_key_error (GError **error, const char *id, const char *name, const char *origin)
{
  g_autoptr (GString) known = g_string_new (NULL);
  g_autofree char *escaped = lm_limits_escape (name);

  for (gsize i = 0; i < G_N_ELEMENTS (disk_keys); i++)
    g_string_append_printf (known, "%s%s", i ? ", " : "", disk_keys[i].key);
  g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
               "Unknown disk setting “%s” for disk %s%s%s; known disk settings: %s", escaped, id,
               origin ? " in " : "", origin ? origin : "", known->str);
}

static gboolean
set_value (LmDiskPolicy *p, const LmDiskKey *k, const char *id, guint64 value, const char *origin,
           GError **error)
{
  g_autoptr (GError) check_error = NULL;

  if (k->type == 'u' && (value < k->min || value > k->max))
    {
      g_set_error (
          error, LM_ERROR, LM_ERROR_INVALID_ARGS,
          "%s for disk %s%s%s must be a whole number from %u to %u, not %" G_GUINT64_FORMAT, k->key,
          id, origin ? " in " : "", origin ? origin : "", k->min, k->max, value);
      return FALSE;
    }
  if (k->check != NULL && !k->check ((guint) value, &check_error))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS, "%s for disk %s%s%s: %s", k->key, id,
                   origin ? " in " : "", origin ? origin : "", check_error->message);
      return FALSE;
    }
  G_STRUCT_MEMBER (gint, p, k->offset) = (gint) value;
  return TRUE;
}

gboolean
lm_disk_policies_load_group (GHashTable *policies, GKeyFile *key_file, const char *group,
                             const char *origin, GError **error)
{
  const char *id = group + strlen (LM_DISK_GROUP_PREFIX);
  g_autofree LmDiskPolicy *p = policy_new ();
  g_auto (GStrv) keys = g_key_file_get_keys (key_file, group, NULL, NULL);

  if (!valid_id (id, origin, error))
    return FALSE;
  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      const LmDiskKey *k = find_key (keys[i]);
      g_autofree char *raw = g_key_file_get_value (key_file, group, keys[i], NULL);
      g_autofree char *value = g_strstrip (g_strdup (raw != NULL ? raw : ""));
      guint64 n;

      if (k == NULL)
        {
          set_unknown_key_error (error, id, keys[i], origin);
          return FALSE;
        }
      if (k->type == 'b')
        {
          if (g_str_equal (value, "true") || g_str_equal (value, "false"))
            n = g_str_equal (value, "true");
          else
            {
              g_autofree char *escaped = lm_limits_escape (value);
              g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                           "%s for disk %s in %s must be true or false, not “%s”", k->key, id,
                           origin, escaped);
              return FALSE;
            }
        }
      else if (!g_ascii_string_to_unsigned (value, 10, 0, G_MAXUINT32, &n, NULL))
        {
          g_autofree char *escaped = lm_limits_escape (value);
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       "%s for disk %s in %s must be a whole number from %u to %u, not “%s”",
                       k->key, id, origin, k->min, k->max, escaped);
          return FALSE;
        }
      if (!set_value (p, k, id, n, origin, error))
        return FALSE;
    }
  g_hash_table_replace (policies, g_strdup (id), g_steal_pointer (&p));
  return TRUE;
}

/* Sections of disks no longer configured go; the others are rewritten. */
void
lm_disk_policies_save (GHashTable *policies, GKeyFile *key_file)
{
  g_auto (GStrv) groups = g_key_file_get_groups (key_file, NULL);
  GHashTableIter iter;
  gpointer id, value;

  for (guint i = 0; groups[i] != NULL; i++)
    if (g_str_has_prefix (groups[i], LM_DISK_GROUP_PREFIX)
        && !g_hash_table_contains (policies, groups[i] + strlen (LM_DISK_GROUP_PREFIX)))
      g_key_file_remove_group (key_file, groups[i], NULL);
  g_hash_table_iter_init (&iter, policies);
  while (g_hash_table_iter_next (&iter, &id, &value))
    {
      g_autofree char *group = g_strconcat (LM_DISK_GROUP_PREFIX, id, NULL);
      for (gsize i = 0; i < G_N_ELEMENTS (disk_keys); i++)
        {
          const LmDiskKey *k = &disk_keys[i];
          gint v = G_STRUCT_MEMBER (gint, value, k->offset);

          if (v < 0)
            g_key_file_remove_key (key_file, group, k->key, NULL);
          else if (k->type == 'b')
            g_key_file_set_boolean (key_file, group, k->key, v != 0);
          else
            g_key_file_set_uint64 (key_file, group, k->key, (guint) v);
        }
    }
}

/* DiskSettings a{sa{sv}}: each id given gets exactly the keys given (an
 * empty dictionary removes the disk's section); ids not given stay. */
gboolean
lm_disk_policies_update (GHashTable *policies, GVariant *value, GError **error)
{
  g_autoptr (GHashTable) next = lm_disk_policies_copy (policies);
  GVariantIter iter;
  const char *id;
  GVariant *dict;

  if (!g_variant_is_of_type (value, G_VARIANT_TYPE ("a{sa{sv}}")))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "DiskSettings must be of type “a{sa{sv}}”, not “%s”",
                   g_variant_get_type_string (value));
      return FALSE;
    }
  g_variant_iter_init (&iter, value);
  while (g_variant_iter_next (&iter, "{&s@a{sv}}", &id, &dict))
    {
      g_autoptr (GVariant) d = dict;
      g_autofree LmDiskPolicy *p = policy_new ();
      GVariantIter keys;
      const char *name;
      GVariant *v;

      if (!valid_id (id, NULL, error))
        return FALSE;
      g_variant_iter_init (&keys, d);
      while (g_variant_iter_next (&keys, "{&sv}", &name, &v))
        {
          g_autoptr (GVariant) owned = v;
          const LmDiskKey *k = find_key (name);
          guint64 n;

          if (k == NULL)
            {
              set_unknown_key_error (error, id, name, NULL);
              return FALSE;
            }
          const GVariantType *want
              = k->type == 'b' ? G_VARIANT_TYPE_BOOLEAN : G_VARIANT_TYPE_UINT32;
          if (!g_variant_is_of_type (v, want))
            {
              g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                           "%s for disk %s must be of type “%s”, not “%s”", k->key, id,
                           k->type == 'b' ? "b" : "u", g_variant_get_type_string (v));
              return FALSE;
            }
          n = k->type == 'b' ? (guint64) g_variant_get_boolean (v) : g_variant_get_uint32 (v);
          if (!set_value (p, k, id, n, NULL, error))
            return FALSE;
        }
      if (lm_disk_policy_is_empty (p))
        g_hash_table_remove (next, id);
      else
        g_hash_table_replace (next, g_strdup (id), g_steal_pointer (&p));
    }
  g_hash_table_remove_all (policies);
  GHashTableIter it;
  gpointer k, p;
  g_hash_table_iter_init (&it, next);
  while (g_hash_table_iter_next (&it, &k, &p))
    {
      g_hash_table_iter_steal (&it);
      g_hash_table_insert (policies, k, p);
    }
  return TRUE;
}

GVariant *
lm_disk_policies_to_variant (GHashTable *policies)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a{sa{sv}}"));
  g_autoptr (GList) ids = g_list_sort (g_hash_table_get_keys (policies), (GCompareFunc) strcmp);

  for (GList *l = ids; l != NULL; l = l->next)
    {
      const LmDiskPolicy *p = g_hash_table_lookup (policies, l->data);
      g_auto (GVariantBuilder) d = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

      for (gsize i = 0; i < G_N_ELEMENTS (disk_keys); i++)
        {
          gint v = G_STRUCT_MEMBER (gint, p, disk_keys[i].offset);
          if (v < 0)
            continue;
          g_variant_builder_add (&d, "{sv}", disk_keys[i].key,
                                 disk_keys[i].type == 'b' ? g_variant_new_boolean (v != 0)
                                                          : g_variant_new_uint32 ((guint) v));
        }
      g_variant_builder_add (&b, "{s@a{sv}}", (const char *) l->data, g_variant_builder_end (&d));
    }
  return g_variant_builder_end (&b);
}
