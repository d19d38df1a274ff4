/* lm-escape.c: \xNN escaping of outside text for terminals and desktops.
 * Owns the one rule of what is printable; never decides what is outside
 * text (the callers do) and never touches JSON, which has escapes of its own. */
#include "lm-escape.h"

#include <string.h>

/* Characters that move the cursor, ring, switch character sets or reorder
 * what is shown: C0 and C1 controls, DEL, and Unicode's line separators and
 * bidirectional overrides (a name could otherwise show as another). */
gboolean
lm_escape_is_unsafe (gunichar c)
{
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x2028 || c == 0x2029
         || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x200e
         || c == 0x200f || c == 0x061c;
}

/* Appends @text to @out (when not NULL), unsafe bytes as \xNN. Returns
 * whether any byte needed escaping. */
static gboolean
walk (const char *text, gsize len, LmEscapeFlags flags, GString *out)
{
  gboolean escaped = FALSE;
  gsize i = 0;

  while (i < len)
    {
      const char *p = text + i;
      gunichar c = g_utf8_get_char_validated (p, (gssize) (len - i));
      gsize n;
      gboolean bad;

      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          /* Not UTF-8: one byte at a time, so a valid rest still reads. */
          n = 1;
          bad = TRUE;
        }
      else
        {
          n = (gsize) (g_utf8_next_char (p) - p);
          /* g_utf8_get_char_validated stops at NUL and calls it U+0000. */
          if (c == 0)
            n = 1;
          bad = lm_escape_is_unsafe (c) || (c == '\\' && !(flags & LM_ESCAPE_KEEP_BACKSLASH));
        }
      if (bad)
        {
          escaped = TRUE;
          for (gsize k = 0; out != NULL && k < n; k++)
            g_string_append_printf (out, "\\x%02x", (guchar) p[k]);
        }
      else if (out != NULL)
        g_string_append_len (out, p, (gssize) n);
      i += n;
    }
  return escaped;
}

gboolean
lm_escape_needed (const char *text, gssize len, LmEscapeFlags flags)
{
  if (text == NULL)
    return FALSE;
  return walk (text, len < 0 ? strlen (text) : (gsize) len, flags, NULL);
}

/* Valid UTF-8 with nothing unsafe in it; NULL stays NULL. Without
 * LM_ESCAPE_KEEP_BACKSLASH a backslash is \x5c, so the result reads back
 * unambiguously (lm_unescape). */
char *
lm_escape (const char *text, gssize len, LmEscapeFlags flags)
{
  gsize n;

  if (text == NULL)
    return NULL;
  n = len < 0 ? strlen (text) : (gsize) len;
  g_autoptr (GString) out = g_string_sized_new (n + 1);
  walk (text, n, flags, out);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static int
hex_value (char c)
{
  return g_ascii_isxdigit (c) ? g_ascii_xdigit_value (c) : -1;
}

/* The inverse of lm_escape: \xNN back to its byte; anything else as is. */
char *
lm_unescape (const char *text, gsize *len)
{
  g_autoptr (GString) out = g_string_new (NULL);

  for (const char *p = text; *p != '\0'; p++)
    {
      if (p[0] == '\\' && p[1] == 'x' && hex_value (p[2]) >= 0 && hex_value (p[3]) >= 0)
        {
          g_string_append_c (out, (char) (hex_value (p[2]) * 16 + hex_value (p[3])));
          p += 3;
        }
      else
        g_string_append_c (out, *p);
    }
  if (len != NULL)
    *len = out->len;
  return g_string_free (g_steal_pointer (&out), FALSE);
}
