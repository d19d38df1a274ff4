/* lm-remount.c: the save-remount-restore transaction over the mount table.
 * Owns remounting through a held, checked mount point (lm-mountfd.c; never a
 * mount command or a shell), one superblock at a time; must never change a
 * mount it has not saved first, nor fight over one that someone else
 * remounted meanwhile, nor follow a mount point that was replaced. */
#include "config.h"

#include "lm-remount.h"

#include <errno.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gio/gio.h>
#include <libmount.h>

#include "lm-error.h"
#include "lm-mountfd.h"
#include "lm-paths.h"

/* One group per kind of record, keyed by the superblock's "major:minor":
 * a mount point may be any bytes, which a key file key cannot hold. */
#define GROUP_MOUNTS "Remounts"           /* mount point used to remount */
#define GROUP_ORIGINAL "RemountsOriginal" /* superblock options before */
#define GROUP_APPLIED "RemountsApplied"   /* superblock options after ours */

typedef struct libmnt_table LmMntTable;
typedef struct libmnt_iter LmMntIter;
typedef struct libmnt_context LmMntContext;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmMntTable, mnt_unref_table)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmMntIter, mnt_free_iter)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmMntContext, mnt_free_context)

/* --- Option strings ---------------------------------------------------- */

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

/* Remount keeps an option that is not given, so "no commit= before" has to
 * be said out loud: commit=0 is the driver's default for ext3/4, btrfs and
 * reiserfs, which then show no commit= again. */
char *
lm_remount_options_for_restore (const char *options)
{
  g_autofree char *commit = lm_remount_options_get (options, "commit");

  if (commit != NULL)
    return g_strdup (options);
  return lm_remount_options_set (options, "commit", "0");
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

/* --- The mount table --------------------------------------------------- */

typedef struct
{
  char *key; /* "major:minor" of the superblock */
  int id;    /* the mount's id, mountinfo's first field */
  char *target;
  char *fstype;
  char *root;        /* of the mount within its filesystem */
  char *vfs_options; /* this mount point's flags */
  char *fs_options;  /* the superblock's, with rw or ro */
} LmMount;

static void
lm_mount_free (LmMount *m)
{
  if (m == NULL)
    return;
  g_free (m->key);
  g_free (m->target);
  g_free (m->fstype);
  g_free (m->root);
  g_free (m->vfs_options);
  g_free (m->fs_options);
  g_free (m);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmMount, lm_mount_free)

static LmMount *
lm_mount_new (struct libmnt_fs *fs)
{
  LmMount *m = g_new0 (LmMount, 1);
  dev_t dev = mnt_fs_get_devno (fs);

  m->key = g_strdup_printf ("%u:%u", major (dev), minor (dev));
  m->id = mnt_fs_get_id (fs);
  m->target = g_strdup (mnt_fs_get_target (fs));
  m->fstype = g_strdup (mnt_fs_get_fstype (fs));
  m->root = g_strdup (mnt_fs_get_root (fs) ? mnt_fs_get_root (fs) : "/");
  m->vfs_options = g_strdup (mnt_fs_get_vfs_options (fs) ? mnt_fs_get_vfs_options (fs) : "");
  m->fs_options = g_strdup (mnt_fs_get_fs_options (fs) ? mnt_fs_get_fs_options (fs) : "");
  return m;
}

static gboolean
has_flag (const char *options, const char *flag)
{
  g_autofree char *value = lm_remount_options_get (options, flag);
  return value != NULL;
}

/* Every mount, in mount table order; NULL with @error unset when a fake
 * root has no mount table (tests of tier 2: remounting is off there). */
static GPtrArray *
read_mounts (GError **error)
{
  g_autofree char *path = lm_path (LM_MOUNTINFO);
  g_autoptr (LmMntTable) table = NULL;
  g_autoptr (LmMntIter) iter = NULL;
  g_autoptr (GPtrArray) mounts = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_mount_free);
  struct libmnt_fs *fs;

  if (!g_str_equal (lm_root (), "/") && !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_debug ("No %s under the fake root %s; not remounting anything", LM_MOUNTINFO, lm_root ());
      return NULL;
    }
  table = mnt_new_table ();
  iter = mnt_new_iter (MNT_ITER_FORWARD);
  if (table == NULL || iter == NULL)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot read %s: out of memory", path);
      return NULL;
    }
  int rc = mnt_table_parse_file (table, path);
  if (rc != 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot read the mount table %s: %s", path,
                   g_strerror (rc < 0 ? -rc : EINVAL));
      return NULL;
    }
  while (mnt_table_next_fs (table, iter, &fs) == 0)
    if (mnt_fs_get_target (fs) != NULL && mnt_fs_get_fstype (fs) != NULL)
      g_ptr_array_add (mounts, lm_mount_new (fs));
  return g_steal_pointer (&mounts);
}

/* The mount of superblock @key at @target, or failing that any writable
 * mount of it (the one we used may have been unmounted, a bind remains). */
static LmMount *
find_mount (GPtrArray *mounts, const char *key, const char *target)
{
  LmMount *other = NULL;

  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      if (!g_str_equal (m->key, key))
        continue;
      if (g_str_equal (m->target, target))
        return m;
      if (other == NULL && has_flag (m->vfs_options, "rw"))
        other = m;
    }
  return other;
}

static gboolean
in_list (char *const *list, const char *item)
{
  return list != NULL && g_strv_contains ((const char *const *) list, item);
}

static gboolean
excluded_by_user (const LmSettings *settings, const char *target)
{
  g_autofree char *trimmed = g_strdup (target);
  gsize len = strlen (trimmed);

  if (len > 1 && trimmed[len - 1] == '/')
    trimmed[len - 1] = '\0';
  for (guint i = 0; settings->no_remount != NULL && settings->no_remount[i] != NULL; i++)
    {
      g_autofree char *want = g_strdup (settings->no_remount[i]);
      gsize wlen = strlen (want);
      if (wlen > 1 && want[wlen - 1] == '/')
        want[wlen - 1] = '\0';
      if (g_str_equal (want, trimmed))
        return TRUE;
    }
  return FALSE;
}

/* One mount per superblock to remount, in mount table order: commit= is a
 * superblock option, so bind mounts and further mount points of the same
 * filesystem share it. A NoRemount mount point opts its whole superblock
 * out. Each entry is borrowed from @mounts. */
static GPtrArray *
pick_superblocks (GPtrArray *mounts, const LmSettings *settings)
{
  g_autoptr (GPtrArray) picked = g_ptr_array_new ();
  g_autoptr (GHashTable) by_key = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) opted_out = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      if (in_list (settings->remount_types, m->fstype) && excluded_by_user (settings, m->target))
        g_hash_table_add (opted_out, m->key);
    }

  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      if (!in_list (settings->remount_types, m->fstype)
          || g_hash_table_contains (opted_out, m->key))
        continue;
      /* A read-only superblock has no journal commits to stretch; a
       * read-only mount of a writable one cannot carry the remount (its
       * "ro" would make the whole filesystem read-only). */
      if (!has_flag (m->fs_options, "rw") || !has_flag (m->vfs_options, "rw"))
        continue;
      LmMount *seen = g_hash_table_lookup (by_key, m->key);
      if (seen == NULL)
        {
          g_hash_table_insert (by_key, m->key, m);
          g_ptr_array_add (picked, m);
        }
      else if (!g_str_equal (seen->root, "/") && g_str_equal (m->root, "/"))
        {
          /* Prefer the filesystem's own root over a bind of a subtree. */
          guint index;
          if (g_ptr_array_find (picked, seen, &index))
            picked->pdata[index] = m;
          g_hash_table_insert (by_key, m->key, m);
        }
    }
  return g_steal_pointer (&picked);
}

/* --- Holding mount points ---------------------------------------------- */

/* A mount point held open (lm-mountfd.c) and what the kernel's table says
 * about the held mount, read while it was held: every decision (what to
 * save as original, whether someone else remounted it) is taken on that,
 * and the remount goes through the same descriptor. */
typedef struct
{
  LmMount *mount; /* owned; NULL when skipped */
  int fd;
  char *skip; /* why it is not the mount that was read */
} LmHeld;

static void
lm_held_free (LmHeld *held)
{
  lm_mount_free (held->mount);
  if (held->fd >= 0)
    close (held->fd);
  g_free (held->skip);
  g_free (held);
}

static LmMount *
lm_mount_copy (const LmMount *m)
{
  LmMount *copy = g_new0 (LmMount, 1);

  copy->key = g_strdup (m->key);
  copy->id = m->id;
  copy->target = g_strdup (m->target);
  copy->fstype = g_strdup (m->fstype);
  copy->root = g_strdup (m->root);
  copy->vfs_options = g_strdup (m->vfs_options);
  copy->fs_options = g_strdup (m->fs_options);
  return copy;
}

#ifdef LM_REMOUNT_TEST_HOOKS
static LmRemountTestHook test_hook;
static gpointer test_hook_data;

void
lm_remount_test_set_hook (LmRemountTestHook hook, gpointer user_data)
{
  test_hook = hook;
  test_hook_data = user_data;
}
#endif

/* Open @was's mount point without following any symlink and check that
 * the mount reached is the one read: same mount id, and its root. */
static void
hold_open (LmHeld *held, const LmMount *was)
{
  g_autoptr (GError) error = NULL;
  int id = -1;
  gboolean is_root = TRUE;

  held->fd = lm_mountfd_open (was->target, &error);
  if (held->fd < 0)
    held->skip
        = g_strdup_printf ("it cannot be opened without following a symlink: %s", error->message);
  else if (!lm_mountfd_identify (held->fd, &id, &is_root, &error))
    held->skip = g_strdup (error->message);
  else if (id != was->id)
    held->skip
        = g_strdup_printf ("it leads to mount %d now, not to mount %d that was read", id, was->id);
  else if (!is_root)
    held->skip = g_strdup ("it leads into that mount, not to its root");
}

/* Hold the mount point of each of @wanted (entries of a table read before,
 * borrowed), in order. A descriptor pins its mount, so the id cannot go to
 * another mount while held; but an id is reused as soon as its mount is
 * gone, so it may already name a newer mount (another disk on the same
 * directory). The table read now, with every mount held, says what each
 * held mount is: the same device, type, subtree and mount point as read,
 * or it is skipped. Devices come from the table, not fstat(): btrfs gives
 * an st_dev of its own (0:41 where mountinfo says 0:40). */
static GPtrArray *
hold_mounts (GPtrArray *wanted, const char *phase)
{
  g_autoptr (GPtrArray) held = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_held_free);
  g_autoptr (GPtrArray) now = NULL;
  g_autoptr (GHashTable) by_id = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr (GError) error = NULL;
  gboolean any = FALSE;

#ifdef LM_REMOUNT_TEST_HOOKS
  if (test_hook != NULL && wanted->len > 0)
    test_hook (phase, test_hook_data);
#endif
  for (guint i = 0; i < wanted->len; i++)
    {
      LmHeld *h = g_new0 (LmHeld, 1);
      hold_open (h, g_ptr_array_index (wanted, i));
      any = any || h->skip == NULL;
      g_ptr_array_add (held, h);
    }
  if (!any)
    return g_steal_pointer (&held);

  now = read_mounts (&error);
  for (guint i = 0; now != NULL && i < now->len; i++)
    {
      LmMount *m = g_ptr_array_index (now, i);
      g_hash_table_insert (by_id, GINT_TO_POINTER (m->id), m);
    }
  for (guint i = 0; i < held->len; i++)
    {
      LmHeld *h = g_ptr_array_index (held, i);
      const LmMount *was = g_ptr_array_index (wanted, i);
      LmMount *is = g_hash_table_lookup (by_id, GINT_TO_POINTER (was->id));

      if (h->skip != NULL)
        continue;
      if (now == NULL)
        h->skip = g_strdup_printf ("the mount table cannot be read again: %s",
                                   error != NULL ? error->message : "no mount table");
      else if (is == NULL)
        h->skip = g_strdup ("it was unmounted");
      else if (!g_str_equal (is->key, was->key) || !g_str_equal (is->fstype, was->fstype)
               || !g_str_equal (is->root, was->root) || !g_str_equal (is->target, was->target))
        {
          g_autofree char *is_target = lm_remount_escape (is->target);
          g_autofree char *is_root = lm_remount_escape (is->root);
          g_autofree char *was_root = lm_remount_escape (was->root);
          h->skip = g_strdup_printf ("mount %d is device %s (%s, %s) on %s now, not device %s "
                                     "(%s, %s) as read",
                                     was->id, is->key, is->fstype, is_root, is_target, was->key,
                                     was->fstype, was_root);
        }
      else
        h->mount = lm_mount_copy (is);
    }
  return g_steal_pointer (&held);
}

/* Logged with the mount point escaped: it may hold any bytes, terminal
 * escapes included. */
static void
log_skip (const LmMount *was, const LmHeld *held)
{
  g_autofree char *shown = lm_remount_escape (was->target);

  g_message ("Not remounting %s (device %s, mount %d): %s; it is no longer the filesystem read "
             "from the mount table, and is not followed",
             shown, was->key, was->id, held->skip);
}

/* --- Remounting -------------------------------------------------------- */

/* One remount, through a held mount point. Each costs a journal commit and
 * a cache flush (8 to 25 ms on a loop device, the same order on a disk), so
 * the remounts of different superblocks run side by side: 20 filesystems
 * then take about as long as one. Everything else (holding and checking,
 * a libmount context where one is needed) is done on the main thread. */
typedef struct
{
  const LmMount *mount; /* borrowed, as read while held */
  int fd;               /* borrowed from its LmHeld */
  char *options;        /* the equivalent mount(8) options, "remount,..." */
  char **sb_options;    /* the superblock's part, for fsconfig() */
  gboolean applying;
  LmMountfdMethod method;
  LmMntContext *cxt; /* for mount(2) on /proc/self/fd/N */
  int err;
  char *why; /* the failure in words, when more than strerror(err) */
} LmRemountJob;

static void
lm_remount_job_free (LmRemountJob *job)
{
  g_free (job->options);
  g_strfreev (job->sb_options);
  g_clear_pointer (&job->cxt, mnt_free_context);
  g_free (job->why);
  g_free (job);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmRemountJob, lm_remount_job_free)

/* Remount @m's superblock with @fs_options through @fd. The mount point's
 * own flags (nosuid, noatime...) are passed as they are where mount(2) is
 * used, since its remount otherwise resets them; rw/ro come from there too.
 * fspick() changes the superblock only and needs neither. */
static LmRemountJob *
job_new (const LmMount *m, int fd, const char *fs_options, gboolean applying)
{
  g_autoptr (LmRemountJob) job = g_new0 (LmRemountJob, 1);
  g_autofree char *no_rw = lm_remount_options_set (fs_options, "rw", NULL);
  g_autofree char *data = lm_remount_options_set (no_rw, "ro", NULL);

  job->mount = m;
  job->fd = fd;
  job->applying = applying;
  job->options = g_strdup_printf ("remount,%s%s%s", m->vfs_options, *data ? "," : "", data);
  job->sb_options = lm_remount_options_split (data);
  return g_steal_pointer (&job);
}

/* mount(2) through the magic link of the held descriptor: the kernel
 * resolves /proc/self/fd/N to exactly the held mount. Exactly these options
 * on exactly this path: no fstab or mtab merging, no canonicalization (it
 * would turn the link into a path again), no /sbin/mount.<type> helper. */
static void
job_prepare_libmount (LmRemountJob *job)
{
  g_autofree char *target = lm_mountfd_proc_path (job->fd);

  job->cxt = mnt_new_context ();
  if (job->cxt == NULL)
    {
      job->err = ENOMEM;
      return;
    }
  mnt_context_set_optsmode (job->cxt, MNT_OMODE_NOTAB);
  mnt_context_disable_canonicalize (job->cxt, TRUE);
  mnt_context_disable_helpers (job->cxt, TRUE);
  mnt_context_disable_mtab (job->cxt, TRUE);
  mnt_context_set_target (job->cxt, target);
  mnt_context_set_options (job->cxt, job->options);
}

static void
job_run (gpointer data, gpointer user_data)
{
  LmRemountJob *job = data;

  if (job->err != 0)
    return;
  if (job->method == LM_MOUNTFD_FSPICK)
    {
      g_autoptr (GError) error = NULL;
      if (!lm_mountfd_reconfigure (job->fd, job->sb_options, &error))
        {
          job->err = errno != 0 ? errno : EINVAL;
          job->why = g_strdup (error->message);
        }
      return;
    }
  int rc = mnt_context_mount (job->cxt);
  if (rc == 0)
    return;
  if (mnt_context_syscall_called (job->cxt))
    job->err = mnt_context_get_syscall_errno (job->cxt);
  else
    job->err = rc < 0 ? -rc : EINVAL;
  if (job->err == 0)
    job->err = EINVAL;
}

static void
run_jobs (GPtrArray *jobs)
{
  g_autoptr (GError) error = NULL;
  LmMountfdMethod method = lm_mountfd_method ();
  GThreadPool *pool;

  for (guint i = 0; i < jobs->len; i++)
    {
      LmRemountJob *job = g_ptr_array_index (jobs, i);
      job->method = method;
      if (job->err == 0 && method == LM_MOUNTFD_PROC_FD)
        job_prepare_libmount (job);
    }
  if (jobs->len <= 1)
    {
      g_ptr_array_foreach (jobs, (GFunc) job_run, NULL);
      return;
    }
  pool = g_thread_pool_new (job_run, NULL, (int) MIN (jobs->len, 32), TRUE, &error);
  if (pool == NULL)
    {
      g_debug ("No threads for the remounts (%s); one after the other", error->message);
      g_ptr_array_foreach (jobs, (GFunc) job_run, NULL);
      return;
    }
  for (guint i = 0; i < jobs->len; i++)
    g_thread_pool_push (pool, g_ptr_array_index (jobs, i), NULL);
  g_thread_pool_free (pool, FALSE, TRUE); /* waits for every job */
}

static gboolean
job_result (const LmRemountJob *job, GError **error)
{
  g_autofree char *shown = lm_remount_escape (job->mount->target);

  if (job->err != 0)
    {
      g_autofree char *shown_options = lm_remount_escape (job->options);
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "Cannot remount %s (%s) with %s: %s", shown,
                   job->mount->fstype, shown_options + strlen ("remount,"),
                   job->why != NULL ? job->why : g_strerror (job->err));
      return FALSE;
    }
  g_debug ("Remounted %s with %s (through %s)", shown, job->options,
           lm_mountfd_method_name (job->method));
  return TRUE;
}

static char *
state_get (LmState *state, const char *group, const char *key)
{
  g_autofree char *text = lm_state_get (state, group, key);
  return text != NULL ? lm_remount_unescape (text) : NULL;
}

static void
state_set (LmState *state, const char *group, const char *key, const char *bytes)
{
  g_autofree char *text = lm_remount_escape (bytes);
  lm_state_set (state, group, key, text);
}

static void
state_forget (LmState *state, const char *key)
{
  lm_state_remove (state, GROUP_MOUNTS, key);
  lm_state_remove (state, GROUP_ORIGINAL, key);
  lm_state_remove (state, GROUP_APPLIED, key);
}

gboolean
lm_remount_saved (LmState *state)
{
  g_auto (GStrv) keys = lm_state_get_keys (state, GROUP_MOUNTS);
  return keys[0] != NULL;
}

/* Whether saved superblock @key may be put back through mount @m: never
 * fight over a mount that someone else remounted or made read-only (the
 * record is dropped, with a message). */
static gboolean
restore_check (const LmMount *m, LmState *state, const char *key)
{
  g_autofree char *original = state_get (state, GROUP_ORIGINAL, key);
  g_autofree char *applied = state_get (state, GROUP_APPLIED, key);
  g_autofree char *shown = lm_remount_escape (m->target);

  if (applied != NULL && !g_str_equal (m->fs_options, applied))
    {
      g_autofree char *now = lm_remount_escape (m->fs_options);
      g_autofree char *was = lm_remount_escape (original);
      g_message ("%s was remounted by someone else while laptop mode was on (now %s); "
                 "leaving it (original options were %s)",
                 shown, now, was);
      state_forget (state, key);
      return FALSE;
    }
  if (!has_flag (m->vfs_options, "rw"))
    {
      g_message ("%s is now mounted read-only; leaving it", shown);
      state_forget (state, key);
      return FALSE;
    }
  return TRUE;
}

/* The mount through which to put saved superblock @key back, or NULL when
 * there is nothing to do there (the record is dropped, with a message). */
static LmMount *
restore_target (GPtrArray *mounts, LmState *state, const char *key)
{
  g_autofree char *target = state_get (state, GROUP_MOUNTS, key);
  g_autofree char *original = state_get (state, GROUP_ORIGINAL, key);
  g_autofree char *shown = lm_remount_escape (target != NULL ? target : "");
  LmMount *m;

  if (target == NULL || original == NULL)
    {
      g_warning ("Incomplete remount record %s in the state file; dropping it", key);
      state_forget (state, key);
      return NULL;
    }
  m = find_mount (mounts, key, target);
  if (m == NULL)
    {
      g_message ("%s (device %s) is no longer mounted; nothing to restore there", shown, key);
      state_forget (state, key);
      return NULL;
    }
  return restore_check (m, state, key) ? m : NULL;
}

/* Whether superblock @key is mounted anywhere, in a table read now. */
static gboolean
superblock_mounted (const char *key)
{
  g_autoptr (GPtrArray) mounts = read_mounts (NULL);

  for (guint i = 0; mounts != NULL && i < mounts->len; i++)
    if (g_str_equal (((LmMount *) g_ptr_array_index (mounts, i))->key, key))
      return TRUE;
  return FALSE;
}

/* Put the saved superblocks @keys back, side by side. Failures are
 * appended to @failures and their records kept, so a later Stop or start-up
 * tries again; @restored gets key -> original for each one done. */
static void
restore_keys (GPtrArray *mounts, LmState *state, const char *const *keys, GString *failures,
              GHashTable *restored)
{
  g_autoptr (GPtrArray) wanted = g_ptr_array_new ();
  g_autoptr (GPtrArray) wanted_keys = g_ptr_array_new ();
  g_autoptr (GPtrArray) held = NULL;
  g_autoptr (GPtrArray) jobs
      = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_remount_job_free);
  g_autoptr (GPtrArray) job_keys = g_ptr_array_new ();

  for (guint i = 0; keys[i] != NULL; i++)
    {
      LmMount *m = restore_target (mounts, state, keys[i]);
      if (m == NULL)
        continue;
      g_ptr_array_add (wanted, m);
      g_ptr_array_add (wanted_keys, (gpointer) keys[i]);
    }
  held = hold_mounts (wanted, "restore");
  for (guint i = 0; i < held->len; i++)
    {
      LmHeld *h = g_ptr_array_index (held, i);
      const char *key = g_ptr_array_index (wanted_keys, i);

      if (h->skip != NULL)
        {
          log_skip (g_ptr_array_index (wanted, i), h);
          if (superblock_mounted (key))
            {
              /* Still mounted somewhere: the record stays, so the next
               * Stop or start-up restores it through a mount that checks. */
              g_autofree char *shown
                  = lm_remount_escape (((LmMount *) g_ptr_array_index (wanted, i))->target);
              g_string_append_printf (failures,
                                      "%s%s (device %s) changed while being restored; it is "
                                      "still mounted elsewhere and will be restored next time",
                                      failures->len ? "; " : "", shown, key);
            }
          else
            {
              g_message ("Device %s is no longer mounted; nothing to restore there", key);
              state_forget (state, key);
            }
          continue;
        }
      if (!restore_check (h->mount, state, key))
        continue;
      g_autofree char *original = state_get (state, GROUP_ORIGINAL, key);
      g_autofree char *options = lm_remount_options_for_restore (original);
      g_ptr_array_add (jobs, job_new (h->mount, h->fd, options, FALSE));
      g_ptr_array_add (job_keys, (gpointer) key);
    }
  run_jobs (jobs);
  for (guint i = 0; i < jobs->len; i++)
    {
      const char *key = g_ptr_array_index (job_keys, i);
      g_autoptr (GError) local_error = NULL;

      if (!job_result (g_ptr_array_index (jobs, i), &local_error))
        {
          g_string_append_printf (failures, "%s%s", failures->len ? "; " : "",
                                  local_error->message);
          continue;
        }
      if (restored != NULL)
        g_hash_table_insert (restored, g_strdup (key), state_get (state, GROUP_ORIGINAL, key));
      state_forget (state, key);
    }
}

/* Log where the kernel shows something else than the saved original (a
 * driver that normalises an option): the restore was still the best one. */
static void
check_restored (GHashTable *expected)
{
  g_autoptr (GPtrArray) mounts = read_mounts (NULL);
  GHashTableIter iter;
  gpointer key, value;

  if (mounts == NULL)
    return;
  g_hash_table_iter_init (&iter, expected);
  while (g_hash_table_iter_next (&iter, &key, &value))
    for (guint i = 0; i < mounts->len; i++)
      {
        LmMount *m = g_ptr_array_index (mounts, i);
        if (g_str_equal (m->key, key) && !g_str_equal (m->fs_options, value))
          {
            g_autofree char *shown = lm_remount_escape (m->target);
            g_warning ("%s shows %s after the restore, not the original %s", shown, m->fs_options,
                       (char *) value);
            break;
          }
      }
}

gboolean
lm_remount_restore (LmState *state, GError **error)
{
  g_auto (GStrv) keys = lm_state_get_keys (state, GROUP_MOUNTS);
  g_autoptr (GString) failures = g_string_new (NULL);
  g_autoptr (GHashTable) expected = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GError) local_error = NULL;

  if (keys[0] == NULL)
    return TRUE;
  g_autoptr (GPtrArray) mounts = read_mounts (&local_error);
  if (mounts == NULL)
    {
      if (local_error == NULL)
        return TRUE; /* a fake root without a mount table */
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  restore_keys (mounts, state, (const char *const *) keys, failures, expected);

  g_autoptr (GError) save_error = NULL;
  if (!lm_state_save (state, &save_error))
    g_string_append_printf (failures, "%s%s", failures->len ? "; " : "", save_error->message);
  check_restored (expected);

  if (failures->len > 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL,
                   "Could not restore every remounted "
                   "filesystem: %s",
                   failures->str);
      return FALSE;
    }
  return TRUE;
}

typedef struct
{
  LmMount *mount;       /* borrowed, as read while held */
  int fd;               /* borrowed: the held mount point */
  char *previous;       /* superblock options before this call */
  char *next;           /* what we ask for */
  gboolean skipped;     /* vanished under us */
  char *applied_before; /* our record from an earlier call, or NULL */
} LmRemountStep;

static void
lm_remount_step_clear (LmRemountStep *step)
{
  g_free (step->previous);
  g_free (step->next);
  g_free (step->applied_before);
}

/* A step not carried out: a superblock first seen now is forgotten; one
 * changed by an earlier call still carries those options, wherever it is
 * mounted now, so its record stays as it was for the restore to find. */
static void
step_skip (LmState *state, LmRemountStep *step)
{
  step->skipped = TRUE;
  if (step->applied_before != NULL)
    state_set (state, GROUP_APPLIED, step->mount->key, step->applied_before);
  else
    state_forget (state, step->mount->key);
}

static gboolean
still_mounted (const LmMount *m)
{
  g_autoptr (GPtrArray) mounts = read_mounts (NULL);

  if (mounts == NULL)
    return TRUE;
  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *now = g_ptr_array_index (mounts, i);
      if (g_str_equal (now->key, m->key) && g_str_equal (now->target, m->target))
        return TRUE;
    }
  return FALSE;
}

/* Best effort: used while already failing, so only log. Through the same
 * held mount points as the remounts being undone. */
static void
roll_back (GArray *steps, GPtrArray *done)
{
  g_autoptr (GPtrArray) jobs
      = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_remount_job_free);

  for (guint i = 0; i < steps->len; i++)
    {
      LmRemountStep *step = &g_array_index (steps, LmRemountStep, i);
      LmRemountJob *job = g_ptr_array_index (done, i);
      if (step->skipped || job->err != 0)
        continue;
      g_autofree char *options = lm_remount_options_for_restore (step->previous);
      g_ptr_array_add (jobs, job_new (step->mount, step->fd, options, FALSE));
    }
  run_jobs (jobs);
  for (guint i = 0; i < jobs->len; i++)
    {
      g_autoptr (GError) error = NULL;
      if (!job_result (g_ptr_array_index (jobs, i), &error))
        g_warning ("Rolling back a remount failed: %s", error->message);
    }
}

gboolean
lm_remount_apply (const LmSettings *settings, LmState *state, GError **error)
{
  g_autofree char *snapshot = lm_state_snapshot (state);
  g_autofree char *commit = g_strdup_printf ("%u", settings->max_lost_work);
  g_autoptr (GError) local_error = NULL;
  g_autoptr (GPtrArray) mounts = read_mounts (&local_error);
  g_autoptr (GPtrArray) picked = NULL;
  g_autoptr (GPtrArray) held = NULL;
  g_autoptr (GArray) steps = g_array_new (FALSE, TRUE, sizeof (LmRemountStep));
  g_autoptr (GString) failures = g_string_new (NULL);

  g_array_set_clear_func (steps, (GDestroyNotify) lm_remount_step_clear);
  if (mounts == NULL)
    {
      if (local_error == NULL)
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  picked = settings->remount ? pick_superblocks (mounts, settings) : g_ptr_array_new ();

  /* 1. Superblocks changed earlier but no longer wanted (Remount turned
   * off, a type dropped from RemountTypes, NoRemount): put them back. */
  g_auto (GStrv) saved = lm_state_get_keys (state, GROUP_MOUNTS);
  g_autoptr (GPtrArray) unwanted = g_ptr_array_new ();
  for (guint i = 0; saved[i] != NULL; i++)
    {
      gboolean wanted = FALSE;
      for (guint j = 0; j < picked->len && !wanted; j++)
        wanted = g_str_equal (((LmMount *) g_ptr_array_index (picked, j))->key, saved[i]);
      if (!wanted)
        g_ptr_array_add (unwanted, saved[i]);
    }
  g_ptr_array_add (unwanted, NULL);
  restore_keys (mounts, state, (const char *const *) unwanted->pdata, failures, NULL);
  if (failures->len > 0)
    {
      if (!lm_state_save (state, NULL))
        g_warning ("Could not rewrite %s", lm_state_get_path (state));
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "%s", failures->str);
      return FALSE;
    }
  g_free (snapshot);
  snapshot = lm_state_snapshot (state);

  /* 2. Hold every mount point to change, then plan from what the table
   * says about the held mounts, and record the originals. A mount point
   * that is not the mount read is left alone, and so is its record. */
  held = hold_mounts (picked, "apply");
  for (guint i = 0; i < picked->len; i++)
    {
      LmHeld *h = g_ptr_array_index (held, i);
      if (h->skip != NULL)
        {
          log_skip (g_ptr_array_index (picked, i), h);
          continue;
        }
      LmMount *m = h->mount;
      g_autofree char *original = state_get (state, GROUP_ORIGINAL, m->key);
      g_autofree char *applied = state_get (state, GROUP_APPLIED, m->key);
      g_autofree char *next = lm_remount_options_set (m->fs_options, "commit", commit);

      if (!has_flag (m->fs_options, "rw") || !has_flag (m->vfs_options, "rw"))
        continue; /* made read-only meanwhile: see pick_superblocks() */
      if (original != NULL && applied != NULL && !g_str_equal (m->fs_options, applied))
        {
          g_autofree char *shown = lm_remount_escape (m->target);
          g_message ("%s was remounted by someone else while laptop mode was on; leaving it",
                     shown);
          state_forget (state, m->key);
          continue;
        }
      if (g_str_equal (next, m->fs_options))
        continue; /* already so, by us or by the user's own fstab */
      if (original == NULL)
        {
          state_set (state, GROUP_MOUNTS, m->key, m->target);
          state_set (state, GROUP_ORIGINAL, m->key, m->fs_options);
        }
      state_set (state, GROUP_APPLIED, m->key, next);
      LmRemountStep step = { m,
                             h->fd,
                             g_strdup (m->fs_options),
                             g_steal_pointer (&next),
                             FALSE,
                             original != NULL ? g_steal_pointer (&applied) : NULL };
      g_array_append_val (steps, step);
    }

  /* 3. Make the originals durable before touching anything. */
  if (!lm_state_save (state, error))
    {
      lm_state_revert (state, snapshot);
      return FALSE;
    }

  /* 4. Remount, side by side; if any fails, undo all the others. */
  g_autoptr (GPtrArray) jobs
      = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_remount_job_free);
  g_autoptr (GError) first_error = NULL;
  for (guint i = 0; i < steps->len; i++)
    {
      LmRemountStep *step = &g_array_index (steps, LmRemountStep, i);
      g_ptr_array_add (jobs, job_new (step->mount, step->fd, step->next, TRUE));
    }
  run_jobs (jobs);
  for (guint i = 0; i < steps->len; i++)
    {
      LmRemountStep *step = &g_array_index (steps, LmRemountStep, i);
      LmRemountJob *job = g_ptr_array_index (jobs, i);

      if (job_result (job, &local_error))
        continue;
      if (!still_mounted (step->mount))
        {
          g_autofree char *shown = lm_remount_escape (step->mount->target);
          g_message ("%s vanished while being remounted; skipping it", shown);
          step_skip (state, step);
        }
      else if (first_error == NULL)
        first_error = g_steal_pointer (&local_error);
      else
        g_warning ("%s", local_error->message);
      g_clear_error (&local_error);
    }
  if (first_error != NULL)
    {
      roll_back (steps, jobs);
      lm_state_revert (state, snapshot);
      if (!lm_state_save (state, NULL))
        g_warning ("Could not rewrite %s after a failed change", lm_state_get_path (state));
      g_propagate_error (error, g_steal_pointer (&first_error));
      return FALSE;
    }

  /* 5. Record what the kernel shows now, for the "remounted by someone
   * else" check at restore: drivers may spell options their own way. */
  if (steps->len > 0)
    {
      g_autoptr (GPtrArray) now = read_mounts (NULL);
      for (guint i = 0; now != NULL && i < steps->len; i++)
        {
          LmRemountStep *step = &g_array_index (steps, LmRemountStep, i);
          LmMount *m
              = step->skipped ? NULL : find_mount (now, step->mount->key, step->mount->target);
          if (m != NULL)
            state_set (state, GROUP_APPLIED, m->key, m->fs_options);
        }
      g_autoptr (GError) save_error = NULL;
      if (!lm_state_save (state, &save_error))
        g_debug ("Could not record the applied options: %s", save_error->message);
    }
  return TRUE;
}

static int
compare_pairs (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (((char *const *) *(char ***) a)[0], ((char *const *) *(char ***) b)[0]);
}

/* (mount point, original superblock options), for the Remounted property;
 * both escaped as lm_remount_escape() does. */
GVariant *
lm_remount_list (LmState *state)
{
  g_auto (GStrv) keys = lm_state_get_keys (state, GROUP_MOUNTS);
  g_autoptr (GPtrArray) pairs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  GVariantBuilder b;

  for (guint i = 0; keys[i] != NULL; i++)
    {
      char **pair = g_new0 (char *, 3);
      pair[0] = lm_state_get (state, GROUP_MOUNTS, keys[i]);
      pair[1] = lm_state_get (state, GROUP_ORIGINAL, keys[i]);
      if (pair[0] == NULL || pair[1] == NULL)
        {
          g_strfreev (pair);
          continue;
        }
      g_ptr_array_add (pairs, pair);
    }
  g_ptr_array_sort (pairs, compare_pairs);
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(ss)"));
  for (guint i = 0; i < pairs->len; i++)
    {
      char **pair = g_ptr_array_index (pairs, i);
      g_variant_builder_add (&b, "(ss)", pair[0], pair[1]);
    }
  return g_variant_builder_end (&b);
}
