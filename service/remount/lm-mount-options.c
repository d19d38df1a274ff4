/* lm-mount-options.c: splitting and rewriting mount-option strings, and
 * escaping mount points; pure functions, no mount table and no state. */
#include "lm-mount-options.h"

#include <string.h>

/* Split at commas outside double quotes: SELinux contexts and some
 * filesystems' values are quoted and hold commas. Empty items are dropped. */
char **
lm_remount_options_split (const char *options)
{
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_free);
  const char *start = options != NULL ? options : "";
  const char *open_quote = NULL; /* of the quoted part we are in */
  gboolean quotes = TRUE;

  for (const char *p = start;; p++)
    {
      /* A quote never closed is a literal (libmount refuses the string):
       * go back to it and split at every comma from there on, so nothing
       * appended after it (commit=) can vanish into it. */
      if (*p == '\0' && open_quote != NULL)
        {
          p = open_quote;
          open_quote = NULL;
          quotes = FALSE;
          continue;
        }
      if (*p == '"' && quotes)
        open_quote = open_quote == NULL ? p : NULL;
      else if ((*p == ',' && open_quote == NULL) || *p == '\0')
        {
          if (p > start)
            g_ptr_array_add (items, g_strndup (start, (gsize) (p - start)));
          if (*p == '\0')
            break;
          start = p + 1;
        }
    }
  g_ptr_array_add (items, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&items), FALSE);
}

static gboolean
option_has_name (const char *item, const char *name)
{
  gsize len = strlen (name);
  return strncmp (item, name, len) == 0 && (item[len] == '\0' || item[len] == '=');
}

/* The value of @name ("" for a flag without one), or NULL when absent. */
char *
lm_remount_options_get (const char *options, const char *name)
{
  g_auto (GStrv) items = lm_remount_options_split (options);

  for (guint i = 0; items[i] != NULL; i++)
    if (option_has_name (items[i], name))
      return g_strdup (items[i][strlen (name)] == '=' ? items[i] + strlen (name) + 1 : "");
  return NULL;
}

/* @options with @name set to @value ("" for a flag) in place of its first
 * occurrence, later duplicates dropped, appended when absent; a NULL @value
 * removes it. The order of everything else is kept. */
char *
lm_remount_options_set (const char *options, const char *name, const char *value)
{
  g_auto (GStrv) items = lm_remount_options_split (options);
  g_autoptr (GString) out = g_string_new (NULL);
  gboolean done = FALSE;

  for (guint i = 0; items[i] != NULL; i++)
    {
      const char *item = items[i];
      g_autofree char *replacement = NULL;

      if (option_has_name (item, name))
        {
          if (done || value == NULL)
            continue;
          replacement = *value ? g_strdup_printf ("%s=%s", name, value) : g_strdup (name);
          item = replacement;
          done = TRUE;
        }
      g_string_append_printf (out, "%s%s", out->len ? "," : "", item);
    }
  if (!done && value != NULL)
    g_string_append_printf (out, "%s%s%s%s", out->len ? "," : "", name, *value ? "=" : "", value);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The leading part of @options that the kernel writes itself: rw/ro, the
 * generic flags, the LSM's and the driver's own options. btrfs writes
 * subvol= last, its name unescaped but for whitespace and backslashes, so
 * everything from the first ",subvol=" on may be the owner's text. */
static char *
kernel_part (const char *fstype, const char *options)
{
  const char *text = options != NULL ? options : "";

  if (g_strcmp0 (fstype, "btrfs") == 0)
    {
      const char *subvol = g_str_has_prefix (text, "subvol=") ? text : strstr (text, ",subvol=");
      if (subvol != NULL)
        return g_strndup (text, (gsize) (subvol - text));
    }
  return g_strdup (text);
}

/* Whether the superblock is writable: the kernel writes rw or ro first. */
gboolean
lm_remount_options_writable (const char *options)
{
  g_auto (GStrv) items = lm_remount_options_split (options);
  return items[0] != NULL && g_str_equal (items[0], "rw");
}

/* The journal commit interval shown (decimal seconds), or NULL where the
 * driver shows none (its default) or something that is not a number. */
char *
lm_remount_options_commit (const char *fstype, const char *options)
{
  g_autofree char *own = kernel_part (fstype, options);
  g_autofree char *value = lm_remount_options_get (own, "commit");
  guint64 n;

  if (value == NULL || !g_ascii_string_to_unsigned (value, 10, 0, G_MAXUINT32, &n, NULL))
    return NULL;
  return g_strdup_printf ("%" G_GUINT64_FORMAT, n);
}

/* The commit= that brings the superblock saved as @original back: its own
 * value, or 0 where it showed none, which ext3/ext4 (jbd2), btrfs and
 * reiserfs all take as "back to the default" (a remount keeps any option
 * it is not given, so the default has to be asked for). */
char *
lm_remount_options_commit_restore (const char *fstype, const char *original)
{
  char *commit = lm_remount_options_commit (fstype, original);
  return commit != NULL ? commit : g_strdup ("0");
}

/* @options as the kernel will likely show them with commit=@commit: a
 * guess, for the journal until the table is read again. */
char *
lm_remount_options_with_commit (const char *fstype, const char *options, const char *commit)
{
  g_autofree char *own = kernel_part (fstype, options);
  g_autofree char *set = lm_remount_options_set (own, "commit", commit);
  const char *rest = (options != NULL ? options : "") + strlen (own);

  return g_strconcat (set, *rest != '\0' && *rest != ',' ? "," : "", rest, NULL);
}

/* lazytime is a superblock flag that mount(2)'s remount resets unless it
 * is passed again, and statvfs() does not show it. */
gboolean
lm_remount_options_lazytime (const char *fstype, const char *options)
{
  g_autofree char *own = kernel_part (fstype, options);
  return lm_remount_options_has (own, "lazytime");
}

/* Whether @name is among @options, as a flag or with a value. */
gboolean
lm_remount_options_has (const char *options, const char *name)
{
  g_autofree char *value = lm_remount_options_get (options, name);
  return value != NULL;
}

/* --- Escaping ---------------------------------------------------------- */

/* Mount points are bytes; D-Bus strings, key files and messages need UTF-8.
 * Valid UTF-8 stays readable; other bytes, control characters and the
 * backslash become \xNN, so the mapping is reversible. */
char *
lm_remount_escape (const char *bytes)
{
  g_autoptr (GString) out = g_string_new (NULL);
  const char *p = bytes;

  while (*p)
    {
      gunichar c = g_utf8_get_char_validated (p, -1);
      if (c == (gunichar) -1 || c == (gunichar) -2 || c < 0x20 || c == 0x7f || c == '\\')
        {
          g_string_append_printf (out, "\\x%02x", (guchar) *p);
          p++;
          continue;
        }
      const char *next = g_utf8_next_char (p);
      g_string_append_len (out, p, next - p);
      p = next;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

char *
lm_remount_unescape (const char *text)
{
  g_autoptr (GString) out = g_string_new (NULL);

  for (const char *p = text; *p; p++)
    {
      if (p[0] == '\\' && p[1] == 'x' && g_ascii_isxdigit (p[2]) && g_ascii_isxdigit (p[3]))
        {
          g_string_append_c (
              out, (char) (g_ascii_xdigit_value (p[2]) * 16 + g_ascii_xdigit_value (p[3])));
          p += 3;
        }
      else
        g_string_append_c (out, *p);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}
