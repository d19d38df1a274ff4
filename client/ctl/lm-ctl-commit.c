/* lm-ctl-commit.c: for explain, whether laptop mode's commit= applies to
 * the filesystem a journal thread names ("jbd2/sda1-8"), and why it does
 * not: from the mount table and the daemon's Remount settings. The
 * sentence is pure (lm_ctl_commit_fact); only lm_ctl_commit_fact_live
 * reads the machine, through lm-paths. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lm-ctl-report-model.h"
#include "lm-paths.h"

static gboolean
in_list (const char *const *list, const char *item)
{
  return list != NULL && item != NULL && g_strv_contains (list, item);
}

/* commit=N among the superblock's options, 0: none. */
static guint
commit_of (const char *options)
{
  g_auto (GStrv) opts = g_strsplit (options != NULL ? options : "", ",", -1);

  for (guint i = 0; opts[i] != NULL; i++)
    if (g_str_has_prefix (opts[i], "commit="))
      {
        guint64 n = g_ascii_strtoull (opts[i] + 7, NULL, 10);
        return (guint) MIN (n, G_MAXUINT);
      }
  return 0;
}

char *
lm_ctl_commit_fact (const char *device, const char *target, const char *fstype, const char *options,
                    const LmCommitSettings *s)
{
  /* Only the types whose drivers take commit= (RemountTypes' choices). */
  static const char *const takes[] = { "ext3", "ext4", "reiserfs", "btrfs", NULL };

  if (device == NULL || target == NULL || fstype == NULL || !in_list (takes, fstype))
    return NULL;
  guint commit = commit_of (options);
  gboolean ours = s->active && in_list (s->remounted, target);
  if (commit > 0 && ours)
    return g_strdup_printf ("%s (%s) is remounted by laptop mode with commit=%u: each commit "
                            "that woke the disk carried changes other programs made there.",
                            device, target, commit);
  g_autofree char *reason = NULL;
  if (!s->active)
    reason = g_strdup ("laptop mode is off");
  else if (!s->remount)
    reason = g_strdup ("Remount is off");
  else if (!in_list (s->types, fstype))
    reason = g_strdup_printf ("%s is not in RemountTypes", fstype);
  else if (in_list (s->no_remount, target))
    reason = g_strdup_printf ("%s is in NoRemount", target);
  else
    reason = g_strdup ("it was not remounted (laptop-moded's journal says why)");
  if (commit > 0)
    return g_strdup_printf ("%s (%s) commits every %u s (commit=%u, its own mount option); "
                            "laptop mode's does not apply: %s.",
                            device, target, commit, commit, reason);
  return g_strdup_printf ("%s (%s) commits every 5 s, the default: laptop mode's commit= does "
                          "not apply: %s.",
                          device, target, reason);
}

/* mountinfo's escapes (\040 for a space) undone. */
static char *
unescape (const char *field)
{
  GString *out = g_string_new (NULL);

  for (const char *p = field; *p != '\0'; p++)
    {
      if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0'
          && p[3] <= '7')
        {
          g_string_append_c (out,
                             (char) (((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0')));
          p += 3;
        }
      else
        g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

char *
lm_ctl_commit_fact_live (LmExportedLaptopMode *proxy, const char *device)
{
  if (proxy == NULL || device == NULL || strchr (device, '/') != NULL || *device == '.')
    return NULL;
  g_autofree char *sys = g_strdup_printf ("/sys/class/block/%s/dev", device);
  g_autofree char *sys_path = lm_path (sys);
  g_autofree char *mountinfo = lm_path ("/proc/self/mountinfo");
  g_autofree char *devno = NULL, *table = NULL;

  if (!g_file_get_contents (sys_path, &devno, NULL, NULL)
      || !g_file_get_contents (mountinfo, &table, NULL, NULL))
    return NULL;
  g_strstrip (devno);
  g_auto (GStrv) lines = g_strsplit (table, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *sep = strstr (lines[i], " - ");
      g_auto (GStrv) left = g_strsplit (lines[i], " ", 7);
      if (sep == NULL || g_strv_length (left) < 6 || !g_str_equal (left[2], devno)
          || !g_str_equal (left[3], "/"))
        continue;
      g_auto (GStrv) right = g_strsplit (sep + 3, " ", 4);
      if (g_strv_length (right) < 3)
        continue;
      g_autofree char *target = unescape (left[4]);
      GVariant *remounted = lm_exported_laptop_mode_get_remounted (proxy);
      g_autoptr (GPtrArray) points = g_ptr_array_new_with_free_func (g_free);
      GVariantIter iter;
      const char *mp, *opts;
      if (remounted != NULL && g_variant_is_of_type (remounted, G_VARIANT_TYPE ("a(ss)")))
        {
          g_variant_iter_init (&iter, remounted);
          while (g_variant_iter_next (&iter, "(&s&s)", &mp, &opts))
            g_ptr_array_add (points, g_strdup (mp));
        }
      g_ptr_array_add (points, NULL);
      LmCommitSettings s = {
        .active = lm_exported_laptop_mode_get_active (proxy),
        .remount = lm_exported_laptop_mode_get_remount (proxy),
        .types = lm_exported_laptop_mode_get_remount_types (proxy),
        .no_remount = lm_exported_laptop_mode_get_no_remount (proxy),
        .remounted = (const char *const *) points->pdata,
      };
      return lm_ctl_commit_fact (device, target, right[0], right[2], &s);
    }
  return NULL;
}
