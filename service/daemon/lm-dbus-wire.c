/* lm-dbus-wire.c: reading the D-Bus wire format of a message the guard
 * (lm-bus.c) has not handed to GDBus yet: header fields and a count of the
 * body's values. Pure functions over bytes from any local user: they never
 * read outside the buffer they are given, whatever it holds. */
#include "lm-dbus-wire.h"

#include <gio/gio.h>

guint32
lm_wire_u32 (const guint8 *p, gboolean little)
{
  return little
             ? (guint32) p[0] | (guint32) p[1] << 8 | (guint32) p[2] << 16 | (guint32) p[3] << 24
             : (guint32) p[3] | (guint32) p[2] << 8 | (guint32) p[1] << 16 | (guint32) p[0] << 24;
}

/* A string header field (SENDER: the bus sets it, so it is the caller's
 * unique name; SIGNATURE: the body's types), from the start of the header
 * fields; NULL if it is not within @len or the fields are not as the
 * specification writes them. */
char *
lm_wire_find_field (const guint8 *f, gsize len, gboolean little, guint8 wanted)
{
  gsize p = 0;

  while (p + 4 <= len)
    {
      guint8 code = f[p];
      char type = (char) f[p + 2];
      gsize start, n;

      if (f[p + 1] != 1 || f[p + 3] != 0)
        return NULL;
      p += 4;
      if (type == 's' || type == 'o')
        {
          p = (p + 3) & ~(gsize) 3;
          if (p + 4 > len)
            return NULL;
          n = lm_wire_u32 (f + p, little);
          start = p + 4;
        }
      else if (type == 'g')
        {
          if (p >= len)
            return NULL;
          n = f[p];
          start = p + 1;
        }
      else if (type == 'u')
        {
          p = ((p + 3) & ~(gsize) 3) + 4;
          p = (p + 7) & ~(gsize) 7;
          continue;
        }
      else
        return NULL;
      if (n >= len || start + n + 1 > len || f[start + n] != 0)
        return NULL;
      if (code == wanted)
        return g_strndup ((const char *) f + start, n);
      p = (start + n + 1 + 7) & ~(gsize) 7;
    }
  return NULL;
}

char *
lm_wire_find_sender (const guint8 *f, gsize len, gboolean little)
{
  g_autofree char *name = lm_wire_find_field (f, len, little, DBUS_FIELD_SENDER);

  return name != NULL && g_dbus_is_unique_name (name) ? g_steal_pointer (&name) : NULL;
}

/* --- Counting the values of a body --------------------------------------
 * GDBus builds one GVariant per value, on the thread every connection
 * shares: 400,000 booleans in 1.5 MiB cost it a third of a second. A message
 * larger than WALK_FROM is read whole first and its values counted here,
 * at most a budget of them, however the body is made. */

typedef struct
{
  const guint8 *data;
  gsize len;
  gsize pos;
  gboolean little;
  guint budget;
} Walk;

static gsize
alignment (char type)
{
  switch (type)
    {
      case 'n':
      case 'q':
        return 2;
      case 'b':
      case 'i':
      case 'u':
      case 'h':
      case 's':
      case 'o':
      case 'a':
        return 4;
      case 'x':
      case 't':
      case 'd':
      case '(':
      case '{':
        return 8;
      default:
        return 1;
    }
}

/* The end of the one complete type at @sig, or NULL. */
static const char *
skip_type (const char *sig, int depth)
{
  if (depth > 64)
    return NULL;
  switch (*sig)
    {
      case 'a':
        return skip_type (sig + 1, depth + 1);
      case '(':
      case '{':
        {
          char close = *sig == '(' ? ')' : '}';
          sig++;
          while (*sig != close)
            if (*sig == '\0' || (sig = skip_type (sig, depth + 1)) == NULL)
              return NULL;
          return sig + 1;
        }
      case '\0':
      case ')':
      case '}':
        return NULL;
      default:
        return strchr ("ybnqiuxtdhsogv", *sig) != NULL ? sig + 1 : NULL;
    }
}

static gboolean
walk_align (Walk *w, gsize a)
{
  w->pos = (w->pos + a - 1) & ~(a - 1);
  return w->pos <= w->len;
}

static gboolean
walk_skip (Walk *w, gsize n)
{
  if (n > w->len - w->pos)
    return FALSE;
  w->pos += n;
  return TRUE;
}

/* One value of the type at *@sig; *@sig moves past the type. */
static gboolean
walk_value (Walk *w, const char **sig, int depth)
{
  char type = **sig;
  guint32 n;

  if (depth > 64 || w->budget == 0 || !walk_align (w, alignment (type)))
    return FALSE;
  w->budget--;
  switch (type)
    {
      case 'y':
      case 'n':
      case 'q':
      case 'b':
      case 'i':
      case 'u':
      case 'h':
      case 'x':
      case 't':
      case 'd':
        (*sig)++;
        return walk_skip (w, type == 'y' ? 1 : alignment (type));
      case 's':
      case 'o':
        if (!walk_skip (w, 4))
          return FALSE;
        n = lm_wire_u32 (w->data + w->pos - 4, w->little);
        (*sig)++;
        return n < w->len && walk_skip (w, (gsize) n + 1);
      case 'g':
        if (!walk_skip (w, 1))
          return FALSE;
        (*sig)++;
        return walk_skip (w, (gsize) w->data[w->pos - 1] + 1);
      case 'v':
        {
          if (!walk_skip (w, 1))
            return FALSE;
          gsize sig_len = w->data[w->pos - 1];
          const char *inner = (const char *) w->data + w->pos;
          if (!walk_skip (w, sig_len + 1) || inner[sig_len] != '\0'
              || skip_type (inner, depth + 1) != inner + sig_len)
            return FALSE;
          (*sig)++;
          return walk_value (w, &inner, depth + 1);
        }
      case 'a':
        {
          const char *element = *sig + 1;
          const char *after = skip_type (element, depth + 1);
          if (after == NULL || !walk_skip (w, 4))
            return FALSE;
          n = lm_wire_u32 (w->data + w->pos - 4, w->little);
          if (!walk_align (w, alignment (*element)) || n > w->len - w->pos)
            return FALSE;
          gsize end = w->pos + n;
          while (w->pos < end)
            {
              const char *e = element;
              if (!walk_value (w, &e, depth + 1))
                return FALSE;
            }
          *sig = after;
          return w->pos == end;
        }
      case '(':
      case '{':
        {
          char close = type == '(' ? ')' : '}';
          (*sig)++;
          while (**sig != close)
            if (**sig == '\0' || !walk_value (w, sig, depth + 1))
              return FALSE;
          (*sig)++;
          return TRUE;
        }
      default:
        return FALSE;
    }
}

/* TRUE if the body of @msg holds at most @budget values. */
gboolean
lm_wire_few_values (const guint8 *msg, gsize total, gboolean little, guint budget)
{
  guint32 fields = lm_wire_u32 (msg + 12, little);
  gsize body = FIXED_HEADER + (((gsize) fields + 7) & ~(gsize) 7);
  g_autofree char *sig
      = lm_wire_find_field (msg + FIXED_HEADER, fields, little, DBUS_FIELD_SIGNATURE);
  Walk w = { msg + body, total - body, 0, little, budget };
  const char *p = sig;

  if (sig == NULL)
    return total == body;
  while (*p != '\0')
    if (!walk_value (&w, &p, 0))
      return FALSE;
  return TRUE;
}
