/* lm-waiters-unit.c: which systemd unit a WaitAwake caller runs in, read
 * from its cgroup file: pure text in, a plain name out; never a unit a
 * user's manager runs passed off as the system's. */
#include "config.h"

#include <string.h>

#include "lm-cgroup.h"
#include "lm-waiters.h"

/* A plain name from a cgroup path: graphic ASCII only, shorter than @size. */
static gboolean
plain_name (const char *start, gsize len, gsize size)
{
  if (len == 0 || len >= size)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isgraph (start[i]))
      return FALSE;
  return TRUE;
}

void
lm_waiters_unit_from_cgroup (const char *text, char *unit, gsize size)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

  unit[0] = '\0';
  /* cgroup v2 ("0::/path"); under v1, systemd's own hierarchy. */
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *p = g_str_has_prefix (lines[i], "0::") ? lines[i] + 3
                      : strstr (lines[i], ":name=systemd:") != NULL
                          ? strstr (lines[i], ":name=systemd:") + 14
                          : NULL;
      const char *last = p != NULL ? strrchr (p, '/') : NULL;
      if (last == NULL || !g_str_has_suffix (last + 1, ".service")
          || !plain_name (last + 1, strlen (last + 1), size))
        continue;
      /* The system's own service only under system.slice: a user's unit
       * may take any name ("man-db.service" in ~/.config/systemd/user). */
      if (g_str_has_prefix (p, "/system.slice/"))
        {
          g_strlcpy (unit, last + 1, size);
          return;
        }
      gint64 uid = lm_cgroup_user_of_path (p);
      if (uid >= 0)
        {
          g_autofree char *named = g_strdup_printf ("%s of user %" G_GINT64_FORMAT, last + 1, uid);
          if (strlen (named) < size)
            g_strlcpy (unit, named, size);
        }
      return;
    }
}
