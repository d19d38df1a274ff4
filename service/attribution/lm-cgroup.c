/* lm-cgroup.c: a blamed process's unit from its cgroup (see lm-cgroup.h).
 * Owns the unit naming rules, the walk of the cgroup2 tree for an id and
 * the memory of ids found; the BPF map of removed cgroups is read by the
 * bpf backend (lm-attrib-bpf.c). */
#include "config.h"

#include "lm-cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lm-mounts.h"
#include "lm-paths.h"

/* A walk reads at most this many directories: a machine's tree holds a
 * few hundred; a hostile or runaway one is not walked whole per spin-up. */
#define WALK_MAX_DIRS 8192
#define WALK_MAX_DEPTH 32
/* Ids remembered (a spin-up's unit is usually one seen before). */
#define REMEMBERED_MAX 512

static GHashTable *remembered; /* id (guint64 *) -> path */

static gboolean
has_suffix (const char *s, gsize n, const char *suffix)
{
  gsize k = strlen (suffix);
  return n > k && memcmp (s + n - k, suffix, k) == 0;
}

/* app[-<launcher>]-<ApplicationID>[-<RANDOM>].scope or
 * app[-<launcher>]-<ApplicationID>[@<RANDOM>].service (systemd's desktop
 * application naming): the application's id. */
static char *
app_name (const char *c, gsize n)
{
  static const char *const launchers[] = { "gnome-", "kde-", "flatpak-", "snap-", "xfce-" };
  gboolean scope = has_suffix (c, n, ".scope");
  g_autofree char *raw = g_strndup (c + 4, n - 4 - (scope ? 6 : 8));
  /* systemd writes a '-' inside a name part as \x2d. */
  g_auto (GStrv) parts = g_strsplit (raw, "\\x2d", -1);
  g_autofree char *s = g_strjoinv ("-", parts);
  char *at = strchr (s, '@');

  if (at != NULL)
    *at = '\0';
  else if (scope)
    {
      /* The random part: a pid or a hex string after the last '-'. */
      char *dash = strrchr (s, '-');
      if (dash != NULL && dash[1] != '\0'
          && strspn (dash + 1, "0123456789abcdef") == strlen (dash + 1))
        *dash = '\0';
    }
  const char *id = s;
  for (gsize i = 0; i < G_N_ELEMENTS (launchers); i++)
    if (g_str_has_prefix (id, launchers[i]) && id[strlen (launchers[i])] != '\0')
      {
        id += strlen (launchers[i]);
        break;
      }
  if (g_str_has_prefix (id, "dbus-:"))
    {
      const char *dash = strchr (id + 6, '-');
      if (dash != NULL && dash[1] != '\0')
        id = dash + 1;
    }
  return *id != '\0' ? g_strdup (id) : NULL;
}

gint64
lm_cgroup_user_of_path (const char *path)
{
  const char *u;
  guint64 uid;
  char *end;

  if (path == NULL || !g_str_has_prefix (path, "/user.slice/user-"))
    return -1;
  u = path + strlen ("/user.slice/user-");
  if (!g_ascii_isdigit (*u))
    return -1;
  uid = g_ascii_strtoull (u, &end, 10);
  return g_str_has_prefix (end, ".slice/") && uid <= G_MAXUINT32 ? (gint64) uid : -1;
}

/* The user whose manager runs @path ("/user.slice/user-1000.slice/
 * user@1000.service/..."), or -1. */
static gint64
user_manager_of (const char *path)
{
  gint64 uid = lm_cgroup_user_of_path (path);

  if (uid < 0)
    return -1;
  g_autofree char *manager = g_strdup_printf (
      "/user.slice/user-%" G_GINT64_FORMAT ".slice/user@%" G_GINT64_FORMAT ".service/", uid, uid);
  return g_str_has_prefix (path, manager) ? uid : -1;
}

static gboolean
plain (const char *name)
{
  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isgraph (*p))
      return FALSE;
  return *name != '\0';
}

char *
lm_cgroup_unit_of_path (const char *path)
{
  if (path == NULL || strlen (path) >= 4096)
    return NULL;
  g_auto (GStrv) parts = g_strsplit (path, "/", -1);
  guint n = g_strv_length (parts);

  /* From the leaf up: the innermost unit, but past systemd's own
   * init.scope to the manager it belongs to ("user@1000.service"). */
  for (guint i = n; i-- > 0;)
    {
      const char *c = parts[i];
      gsize len = strlen (c);
      if (len == 0)
        continue;
      if (g_str_equal (c, "init.scope") && i > 1)
        continue;
      if (!has_suffix (c, len, ".service") && !has_suffix (c, len, ".scope")
          && !has_suffix (c, len, ".slice"))
        continue;
      gboolean app = g_str_has_prefix (c, "app-") && !has_suffix (c, len, ".slice");
      char *unit = app ? app_name (c, len) : g_strdup (c);
      /* Inside another unit's delegated tree (a container's scope): its
       * units are the container's, not the host's. A user's manager is
       * said below. */
      for (guint o = 0; o < i && unit != NULL; o++)
        {
          gsize olen = strlen (parts[o]);
          if ((has_suffix (parts[o], olen, ".service") || has_suffix (parts[o], olen, ".scope"))
              && !g_str_has_prefix (parts[o], "user@"))
            {
              char *inside = g_strdup_printf ("%s in %s", unit, parts[o]);
              g_free (unit);
              unit = plain (parts[o]) ? inside : (g_free (inside), NULL);
              break;
            }
        }
      gint64 uid = user_manager_of (path);
      /* A user's manager may run a unit of any name ("cron.service" in
       * ~/.config/systemd/user): never passed off as the system's. */
      if (unit != NULL && !app && uid >= 0 && !g_str_has_prefix (c, "user@"))
        {
          char *named = g_strdup_printf ("%s of user %" G_GINT64_FORMAT, unit, uid);
          g_free (unit);
          unit = named;
        }
      if (unit != NULL && (strlen (unit) >= LM_UNIT_LEN || !plain (app ? unit : c)))
        g_clear_pointer (&unit, g_free);
      return unit;
    }
  return NULL;
}

/* Where the cgroup2 tree is mounted; NULL: nowhere (a v1-only machine). */
static char *
cgroup2_mount (void)
{
  g_autoptr (GPtrArray) mounts = lm_mounts_read (NULL);

  for (guint i = 0; mounts != NULL && i < mounts->len; i++)
    {
      const LmMount *m = g_ptr_array_index (mounts, i);
      if (g_strcmp0 (m->fstype, "cgroup2") == 0 && g_strcmp0 (m->root, "/") == 0)
        return g_strdup (m->target);
    }
  return NULL;
}

typedef struct
{
  int fd;
  char *rel; /* "" for the root */
  guint depth;
} Dir;

/* Breadth first, by descriptor (no path is built from the tree's names
 * to open the next), until a directory's inode number is @id. */
static char *
walk (const char *top, guint64 id)
{
  g_autoptr (GQueue) queue = g_queue_new ();
  char *found = NULL;
  guint visited = 0;
  int fd = open (top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  if (fd < 0)
    return NULL;
  Dir *first = g_new0 (Dir, 1);
  first->fd = fd;
  first->rel = g_strdup ("");
  g_queue_push_tail (queue, first);
  while (!g_queue_is_empty (queue))
    {
      Dir *d = g_queue_pop_head (queue);
      struct stat st;
      if (found == NULL && fstat (d->fd, &st) == 0 && (guint64) st.st_ino == id)
        found = g_strdup (d->rel[0] != '\0' ? d->rel : "/");
      DIR *dir = found == NULL && ++visited < WALK_MAX_DIRS ? fdopendir (d->fd) : NULL;
      struct dirent *de;
      while (dir != NULL && (de = readdir (dir)) != NULL)
        {
          if (de->d_type != DT_DIR || de->d_name[0] == '.' || d->depth >= WALK_MAX_DEPTH)
            continue;
          int sub
              = openat (dirfd (dir), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub < 0)
            continue;
          Dir *next = g_new0 (Dir, 1);
          next->fd = sub;
          next->rel = g_strconcat (d->rel, "/", de->d_name, NULL);
          next->depth = d->depth + 1;
          g_queue_push_tail (queue, next);
        }
      if (dir != NULL)
        closedir (dir);
      else
        close (d->fd);
      g_free (d->rel);
      g_free (d);
    }
  return found;
}

char *
lm_cgroup_path_of_id (guint64 id)
{
  const char *known;

  if (id == 0)
    return NULL;
  if (remembered == NULL)
    remembered = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  known = g_hash_table_lookup (remembered, &id);
  if (known != NULL)
    return g_strdup (known);
  g_autofree char *top = cgroup2_mount ();
  char *path = top != NULL ? walk (top, id) : NULL;
  if (path == NULL)
    return NULL;
  if (g_hash_table_size (remembered) >= REMEMBERED_MAX)
    g_hash_table_remove_all (remembered);
  g_hash_table_insert (remembered, g_memdup2 (&id, sizeof id), g_strdup (path));
  return path;
}

char *
lm_cgroup_path_of_pid (guint32 pid, const char *comm)
{
  g_autofree char *proc = g_strdup_printf ("/proc/%u", pid);
  g_autofree char *dir = lm_path (proc);
  g_autofree char *comm_file = g_build_filename (dir, "comm", NULL);
  g_autofree char *cgroup_file = g_build_filename (dir, "cgroup", NULL);
  g_autofree char *name = NULL, *text = NULL;

  if (pid == 0 || comm == NULL || !g_file_get_contents (comm_file, &name, NULL, NULL))
    return NULL;
  g_strchomp (name);
  if (!g_str_equal (name, comm) || !g_file_get_contents (cgroup_file, &text, NULL, NULL))
    return NULL;
  /* "0::/user.slice/…": the v2 line; v1 lines name their controllers. */
  g_auto (GStrv) lines = g_strsplit (text, "\n", 64);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "0::/"))
      return g_strdup (lines[i] + 3);
  return NULL;
}

void
lm_cgroup_reset (void)
{
  g_clear_pointer (&remembered, g_hash_table_unref);
}
