/* lm-state.c: what the daemon changed on the system and what was there before.
 * A GKeyFile, one group per kind of change; an empty state means "nothing to
 * restore" and is stored as no file at all. */
#include "lm-state.h"

#include <errno.h>
#include <string.h>
#include <glib/gstdio.h>

#include "lm-error.h"
#include "lm-io.h"
#include "lm-keyfile.h"

struct _LmState
{
  char *path;
  GKeyFile *key_file;
  guint save_id; /* lm_state_save_soon() pending */
};

LmState *
lm_state_new (const char *path)
{
  LmState *state = g_new0 (LmState, 1);

  state->path = g_strdup (path);
  state->key_file = g_key_file_new ();
  return state;
}

void
lm_state_free (LmState *state)
{
  if (state == NULL)
    return;
  if (state->save_id != 0)
    {
      g_autoptr (GError) error = NULL;
      if (!lm_state_save (state, &error))
        g_warning ("%s", error->message);
    }
  g_key_file_unref (state->key_file);
  g_free (state->path);
  g_free (state);
}

/* Keys are names from outside (disk ids, sysctl names, device numbers);
 * GKeyFile takes no '=', brackets, control bytes or surrounding spaces in
 * a key, and a leading '#' would read back as a comment. Every byte but
 * plain printable ASCII becomes %XX, '%' included, so the mapping is
 * reversible, and keys without '%' (all the files written before) read
 * back unchanged. */
static gboolean
key_byte_plain (guchar c)
{
  return c > 0x20 && c < 0x7f && c != '=' && c != '[' && c != ']' && c != '%' && c != '#';
}

static char *
encode_key (const char *key)
{
  g_autoptr (GString) out = g_string_sized_new (strlen (key));

  for (const guchar *p = (const guchar *) key; *p; p++)
    if (key_byte_plain (*p))
      g_string_append_c (out, (char) *p);
    else
      g_string_append_printf (out, "%%%02X", *p);
  if (out->len == 0)
    g_string_append (out, "%00"); /* the empty key: GKeyFile takes none */
  /* GKeyFile reads "Encoding" in the first group as the file's charset and
   * refuses to load a file where it is not UTF-8. */
  if (g_str_equal (out->str, "Encoding"))
    g_string_replace (out, "E", "%45", 1);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static char *
decode_key (const char *text)
{
  g_autoptr (GString) out = g_string_sized_new (strlen (text));

  if (g_str_equal (text, "%00"))
    return g_strdup ("");
  for (const char *p = text; *p; p++)
    if (p[0] == '%' && g_ascii_isxdigit (p[1]) && g_ascii_isxdigit (p[2])
        && (p[1] != '0' || p[2] != '0'))
      {
        g_string_append_c (out,
                           (char) (g_ascii_xdigit_value (p[1]) * 16 + g_ascii_xdigit_value (p[2])));
        p += 2;
      }
    else
      g_string_append_c (out, *p);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

const char *
lm_state_get_path (LmState *state)
{
  return state->path;
}

gboolean
lm_state_load (LmState *state, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) local_error = NULL;
  g_autofree char *contents = NULL;
  gsize length = 0;

  /* What it says is written back to the kernel as root: only a file the
   * daemon itself could have written is believed (lm-io.c). */
  if (!lm_io_read_private (state->path, &contents, &length, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        {
          g_key_file_unref (state->key_file);
          state->key_file = g_steal_pointer (&kf);
          return TRUE;
        }
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Not restoring from saved state: %s",
                   local_error->message);
      return FALSE;
    }
  if (!g_key_file_load_from_data (kf, contents, length, G_KEY_FILE_NONE, &local_error))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot read saved state %s: %s", state->path,
                   local_error->message);
      return FALSE;
    }
  g_key_file_unref (state->key_file);
  state->key_file = g_steal_pointer (&kf);
  return TRUE;
}

gboolean
lm_state_is_empty (LmState *state)
{
  g_auto (GStrv) groups = g_key_file_get_groups (state->key_file, NULL);

  for (guint i = 0; groups[i] != NULL; i++)
    {
      g_auto (GStrv) keys = g_key_file_get_keys (state->key_file, groups[i], NULL, NULL);
      if (keys != NULL && keys[0] != NULL)
        return FALSE;
    }
  return TRUE;
}

gboolean
lm_state_save (LmState *state, GError **error)
{
  g_clear_handle_id (&state->save_id, g_source_remove);
  if (lm_state_is_empty (state))
    {
      if (g_unlink (state->path) < 0 && errno != ENOENT)
        {
          int saved = errno;
          g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot remove %s: %s", state->path,
                       g_strerror (saved));
          return FALSE;
        }
      return TRUE;
    }
  gsize length;
  g_autofree char *data = g_key_file_to_data (state->key_file, &length, NULL);
  return lm_io_write_atomic (state->path, data, length, 0600, error);
}

static gboolean
save_idle (gpointer data)
{
  LmState *state = data;
  g_autoptr (GError) error = NULL;

  state->save_id = 0;
  if (!lm_state_save (state, &error))
    g_debug ("Could not record the applied values: %s", error->message);
  return G_SOURCE_REMOVE;
}

void
lm_state_save_soon (LmState *state)
{
  if (state->save_id == 0)
    state->save_id = g_idle_add_full (G_PRIORITY_LOW, save_idle, state, NULL);
}

char *
lm_state_get (LmState *state, const char *group, const char *key)
{
  g_autofree char *encoded = encode_key (key);
  char *value = lm_keyfile_get (state->key_file, group, encoded, FALSE);

  /* A key written verbatim by an older version (a space inside, say). */
  if (value == NULL && !g_str_equal (encoded, key))
    value = lm_keyfile_get (state->key_file, group, key, FALSE);
  /* Values are text (lm-state.h); GKeyFile refused other bytes, too. */
  if (value != NULL && !g_utf8_validate (value, -1, NULL))
    g_clear_pointer (&value, g_free);
  return value;
}

void
lm_state_set (LmState *state, const char *group, const char *key, const char *value)
{
  g_autofree char *encoded = encode_key (key);

  lm_keyfile_set (state->key_file, group, encoded, value);
}

void
lm_state_remove (LmState *state, const char *group, const char *key)
{
  g_autofree char *encoded = encode_key (key);

  g_key_file_remove_key (state->key_file, group, encoded, NULL);
  if (!g_str_equal (encoded, key))
    g_key_file_remove_key (state->key_file, group, key, NULL);
  g_auto (GStrv) keys = g_key_file_get_keys (state->key_file, group, NULL, NULL);
  if (keys != NULL && keys[0] == NULL)
    g_key_file_remove_group (state->key_file, group, NULL);
}

char **
lm_state_get_keys (LmState *state, const char *group)
{
  g_auto (GStrv) keys = g_key_file_get_keys (state->key_file, group, NULL, NULL);
  guint n = keys != NULL ? g_strv_length (keys) : 0;
  char **decoded = g_new0 (char *, n + 1);

  for (guint i = 0; i < n; i++)
    decoded[i] = decode_key (keys[i]);
  return decoded;
}

/* For rolling back a failed change: the in-memory state as it was. */
char *
lm_state_snapshot (LmState *state)
{
  return g_key_file_to_data (state->key_file, NULL, NULL);
}

void
lm_state_revert (LmState *state, const char *snapshot)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();

  if (g_key_file_load_from_data (kf, snapshot, (gsize) -1, G_KEY_FILE_NONE, NULL))
    {
      g_key_file_unref (state->key_file);
      state->key_file = g_steal_pointer (&kf);
    }
}
