/* lm-io.c: small, careful file operations shared by the daemon.
 * Kernel files are written with one write() and no buffering (a sysctl takes
 * the value in one go); state files are replaced atomically and durably. */
#define _GNU_SOURCE /* syncfs */
#include "lm-io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>

#include "lm-error.h"
#include "lm-paths.h"

/* The contents of a one-value kernel file, without the trailing newline;
 * inner whitespace is normalised to single spaces (bdflush has several). */
char *
lm_io_read_value (const char *path, GError **error)
{
  g_autofree char *contents = NULL;
  g_autoptr (GError) local_error = NULL;

  if (!g_file_get_contents (path, &contents, NULL, &local_error))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "Cannot read %s: %s", path,
                   local_error->message);
      return NULL;
    }
  g_auto (GStrv) words = g_strsplit_set (g_strstrip (contents), " \t\n", -1);
  g_autoptr (GString) out = g_string_new (NULL);
  for (guint i = 0; words[i] != NULL; i++)
    {
      if (words[i][0] == '\0')
        continue;
      if (out->len > 0)
        g_string_append_c (out, ' ');
      g_string_append (out, words[i]);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

gboolean
lm_io_write_value (const char *path, const char *value, GError **error)
{
  int fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "Cannot open %s: %s", path,
                   g_strerror (saved));
      errno = saved;
      return FALSE;
    }
  g_autofree char *line = g_strdup_printf ("%s\n", value);
  gsize len = strlen (line);
  ssize_t n;
  do
    n = write (fd, line, len);
  while (n < 0 && errno == EINTR);
  int saved = errno;
  close (fd);
  if (n < 0 || (gsize) n != len)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "Cannot write “%s” to %s: %s", value, path,
                   n < 0 ? g_strerror (saved) : "short write");
      errno = n < 0 ? saved : EIO;
      return FALSE;
    }
  return TRUE;
}

static gboolean
write_all (int fd, const char *buf, gsize len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, buf, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      buf += n;
      len -= (gsize) n;
    }
  return TRUE;
}

/* Write to a temporary file, fsync it, rename it over the target and fsync
 * the directory: after a crash the file is either the old or the new one,
 * never empty or half written. */
gboolean
lm_io_write_atomic (const char *path, const char *contents, gsize length, int mode, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *tmp = g_strdup_printf ("%s.XXXXXX", path);

  if (g_mkdir_with_parents (dir, 0755) < 0)
    {
      int saved = errno;
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot create directory %s: %s", dir,
                   g_strerror (saved));
      return FALSE;
    }

  /* O_EXCL already refuses a link in its place; O_NOFOLLOW says so. */
  int fd = g_mkstemp_full (tmp, O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot create a file in %s: %s", dir,
                   g_strerror (saved));
      return FALSE;
    }
  if (!write_all (fd, contents, length) || fchmod (fd, mode) < 0 || fsync (fd) < 0)
    {
      int saved = errno;
      close (fd);
      unlink (tmp);
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot write %s: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  close (fd);
  if (rename (tmp, path) < 0)
    {
      int saved = errno;
      unlink (tmp);
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot replace %s: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0)
    {
      /* The rename is only durable once the directory is on disk. */
      fsync (dfd);
      close (dfd);
    }
  return TRUE;
}

/* Who may have written what the daemon reads back: only itself. */
static gboolean
check_private (const char *path, const struct stat *st, gboolean dir, GError **error)
{
  const char *what = dir ? "directory" : "file";

  if (dir ? !S_ISDIR (st->st_mode) : !S_ISREG (st->st_mode))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Refusing %s: not a %s%s", path, what,
                   S_ISLNK (st->st_mode) ? " but a symbolic link" : "");
      return FALSE;
    }
  if (st->st_uid != geteuid () || (st->st_mode & (S_IWGRP | S_IWOTH)) != 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED,
                   "Refusing %s %s: it is owned by uid %u with mode %04o, but laptop-moded trusts "
                   "only a %s owned by uid %u and writable by no one else (chown %u %s; chmod "
                   "go-w %s)",
                   what, path, (guint) st->st_uid, (guint) (st->st_mode & 07777), what,
                   (guint) geteuid (), (guint) geteuid (), path, path);
      return FALSE;
    }
  return TRUE;
}

/* The state directory, created (0755) when missing; refused when it is a
 * symbolic link or someone else could have put files in it. */
gboolean
lm_io_check_private_dir (const char *dir, GError **error)
{
  struct stat st;

  if (lstat (dir, &st) < 0 && errno == ENOENT)
    {
      if (g_mkdir_with_parents (dir, 0755) < 0)
        {
          int saved = errno;
          g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot create directory %s: %s", dir,
                       g_strerror (saved));
          return FALSE;
        }
    }
  if (lstat (dir, &st) < 0)
    {
      int saved = errno;
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot use directory %s: %s", dir,
                   g_strerror (saved));
      return FALSE;
    }
  return check_private (dir, &st, TRUE, error);
}

/* A file of the daemon's own (state, ledger), read without following a
 * symbolic link and only when owned by the daemon's user and writable by
 * no one else. A missing file is G_FILE_ERROR_NOENT. */
gboolean
lm_io_read_private (const char *path, char **contents, gsize *length, GError **error)
{
  int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;

  if (fd < 0)
    {
      int saved = errno;
      if (saved == ELOOP)
        g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Refusing %s: a symbolic link", path);
      else
        g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "Cannot open %s: %s",
                     path, g_strerror (saved));
      return FALSE;
    }
  if (fstat (fd, &st) < 0 || !check_private (path, &st, FALSE, error))
    {
      if (error != NULL && *error == NULL)
        g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot stat %s", path);
      close (fd);
      return FALSE;
    }
  GString *out = g_string_sized_new ((gsize) st.st_size + 1);
  char buf[8192];
  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          close (fd);
          g_string_free (out, TRUE);
          g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot read %s: %s", path,
                       g_strerror (saved));
          return FALSE;
        }
      if (n == 0)
        break;
      g_string_append_len (out, buf, n);
    }
  close (fd);
  if (length != NULL)
    *length = out->len;
  *contents = g_string_free (out, FALSE);
  return TRUE;
}

void
lm_io_sync_all (void)
{
  if (!lm_sync_root_only ())
    {
      sync ();
      return;
    }
  int fd = open (lm_root (), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || syncfs (fd) < 0)
    sync (); /* the root cannot be synced alone: the machine, as without it */
  if (fd >= 0)
    close (fd);
}
