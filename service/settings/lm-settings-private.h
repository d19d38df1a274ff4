/* lm-settings-private.h: private to lm-settings.c and lm-settings-file.c: the
 * key table's rows and the checks both Configure() and the file go through. */
#pragma once

#include "lm-settings.h"

G_BEGIN_DECLS

typedef struct
{
  const char *key;
  char type; /* 'u', 's', 'b' or 'a' (as: each item one of choices, or
              * an absolute path when choices is NULL) */
  guint min;
  guint max;
  const char *const *choices;
  gsize offset;
  gsize max_bytes; /* of a value ('s') or of each item ('a') */
  guint max_items; /* of a list ('a') */
} LmSettingKey;

const LmSettingKey *lm_settings_keys (gsize *n_keys);
const LmSettingKey *lm_settings_find_key (const char *name);
char *lm_settings_known_keys (void);
char *lm_settings_key_accepts (const LmSettingKey *k);
void lm_settings_set_range_error (GError **error, const LmSettingKey *k, const char *origin,
                                  const char *got);
gboolean lm_settings_set_uint (LmSettings *s, const LmSettingKey *k, guint64 value,
                               const char *origin, GError **error);
gboolean lm_settings_set_string (LmSettings *s, const LmSettingKey *k, const char *value,
                                 const char *origin, GError **error);
gboolean lm_settings_set_strv (LmSettings *s, const LmSettingKey *k, const char *const *value,
                               const char *origin, GError **error);
gboolean lm_settings_check_consistency (const LmSettings *s, const char *origin, GError **error);
void lm_settings_swap (LmSettings *a, LmSettings *b);

G_END_DECLS
