/* lm-io.c: small, careful file operations shared by the daemon.
 * Kernel files are written with one write() and no buffering (a sysctl takes
 * the value in one go); state files are replaced atomically and durably. */
#include "lm-io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>

#include "lm-error.h"

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

  int fd = g_mkstemp_full (tmp, O_WRONLY | O_CLOEXEC, mode);
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
