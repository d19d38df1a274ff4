/* lm-keyfile.c: the text of key-file values, escaped and read by the daemon itself.
 * GKeyFile's own string readers changed with GLib 2.80 (an unknown escape such as
 * "\x" now loses the whole value), so values go through g_key_file_{get,set}_value. */
#include "lm-keyfile.h"

#include <string.h>

/* The escapes GKeyFile writes and every GLib reads alike: \s \t \n \r \\,
 * and \; inside a list. Spaces and tabs are escaped only where a reader
 * would strip them (ends of a value or list item); other bytes go as is. */
static void
append_escaped (GString *out, const char *text, gboolean list_item)
{
  gsize len = strlen (text);
  gsize lead = 0, trail = len;

  while (lead < len && (text[lead] == ' ' || text[lead] == '\t'))
    lead++;
  while (trail > lead && (text[trail - 1] == ' ' || text[trail - 1] == '\t'))
    trail--;
  for (gsize i = 0; i < len; i++)
    {
      char c = text[i];
      gboolean edge = i < lead || i >= trail;

      if (c == '\\')
        g_string_append (out, "\\\\");
      else if (c == '\n')
        g_string_append (out, "\\n");
      else if (c == '\r')
        g_string_append (out, "\\r");
      else if (c == '\t')
        g_string_append (out, "\\t");
      else if (c == ' ' && edge)
        g_string_append (out, "\\s");
      else if (c == ';' && list_item)
        g_string_append (out, "\\;");
      else
        g_string_append_c (out, c);
    }
}

char *
lm_keyfile_escape (const char *text)
{
  GString *out = g_string_sized_new (strlen (text) + 8);

  append_escaped (out, text, FALSE);
  return g_string_free (out, FALSE);
}

/* Each item followed by ";", as GKeyFile writes lists: [] is "", [""] is ";". */
char *
lm_keyfile_escape_list (const char *const *items)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; items != NULL && items[i] != NULL; i++)
    {
      append_escaped (out, items[i], TRUE);
      g_string_append_c (out, ';');
    }
  return g_string_free (out, FALSE);
}

/* Decodes @raw[0..len): the escapes above; an unknown one ("\x41", a
 * hand-edited file, or a pre-journal state file) is kept as written, which
 * is what GLib up to 2.78 returned. With @strip, unescaped spaces and tabs
 * at either end are dropped (a hand-written "a ; b"). */
static char *
unescape_piece (const char *raw, gsize len, gboolean strip, gboolean list)
{
  GString *out = g_string_sized_new (len);
  gsize keep = 0; /* out's length up to the last escaped or non-blank byte */
  gsize i = 0;

  while (strip && i < len && (raw[i] == ' ' || raw[i] == '\t'))
    i++;
  for (; i < len; i++)
    {
      char c = raw[i];

      if (c == '\\' && i + 1 < len)
        {
          char e = raw[++i];
          switch (e)
            {
              case 's':
                g_string_append_c (out, ' ');
                break;
              case 't':
                g_string_append_c (out, '\t');
                break;
              case 'n':
                g_string_append_c (out, '\n');
                break;
              case 'r':
                g_string_append_c (out, '\r');
                break;
              case '\\':
                g_string_append_c (out, e);
                break;
              case ';':
                /* Outside a list GLib never knew "\;" either. */
                if (!list)
                  g_string_append_c (out, '\\');
                g_string_append_c (out, e);
                break;
              default:
                g_string_append_c (out, '\\');
                g_string_append_c (out, e);
                break;
            }
          keep = out->len;
          continue;
        }
      g_string_append_c (out, c);
      if (!strip || (c != ' ' && c != '\t'))
        keep = out->len;
    }
  g_string_truncate (out, keep);
  return g_string_free (out, FALSE);
}

char *
lm_keyfile_unescape (const char *raw, gboolean strip)
{
  return unescape_piece (raw, strlen (raw), strip, FALSE);
}

char **
lm_keyfile_unescape_list (const char *raw)
{
  GPtrArray *items = g_ptr_array_new ();
  gsize len = strlen (raw);
  gsize start = 0;

  for (gsize i = 0; i < len; i++)
    {
      if (raw[i] == '\\' && i + 1 < len)
        i++;
      else if (raw[i] == ';')
        {
          g_ptr_array_add (items, unescape_piece (raw + start, i - start, TRUE, TRUE));
          start = i + 1;
        }
    }
  /* The last item needs no ";" after it; blanks after the last ";" are none. */
  if (start < len)
    {
      char *last = unescape_piece (raw + start, len - start, TRUE, TRUE);
      if (last[0] != '\0' || strspn (raw + start, " \t") != len - start)
        g_ptr_array_add (items, last);
      else
        g_free (last);
    }
  g_ptr_array_add (items, NULL);
  return (char **) g_ptr_array_free (items, FALSE);
}

char *
lm_keyfile_get (GKeyFile *key_file, const char *group, const char *key, gboolean strip)
{
  g_autofree char *raw = g_key_file_get_value (key_file, group, key, NULL);

  return raw != NULL ? lm_keyfile_unescape (raw, strip) : NULL;
}

void
lm_keyfile_set (GKeyFile *key_file, const char *group, const char *key, const char *text)
{
  g_autofree char *escaped = lm_keyfile_escape (text);

  g_key_file_set_value (key_file, group, key, escaped);
}
