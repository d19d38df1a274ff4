/* lm-mountfd.c: mount points held as O_PATH descriptors, opened without
 * following any symlink, identified by mount id, and their superblocks
 * reconfigured through the descriptor (fspick/fsconfig, or mount(2) on
 * /proc/self/fd/N). Must never look a mount point's path up twice. */
#define _GNU_SOURCE /* O_PATH, statx() */
#include "config.h"

#include "lm-mountfd.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lm-error.h"
#include "lm-remount.h"

#ifndef HAVE_FSPICK
/* glibc before 2.36 has neither the wrappers nor these constants. */
#include <linux/mount.h>
static int
fspick (int dfd, const char *path, unsigned int flags)
{
#ifdef SYS_fspick
  return (int) syscall (SYS_fspick, dfd, path, flags);
#else
  errno = ENOSYS;
  return -1;
#endif
}

static int
fsconfig (int fd, unsigned int cmd, const char *key, const void *value, int aux)
{
#ifdef SYS_fsconfig
  return (int) syscall (SYS_fsconfig, fd, cmd, key, value, aux);
#else
  errno = ENOSYS;
  return -1;
#endif
}
#endif

#ifdef LM_REMOUNT_TEST_HOOKS
static gboolean force_fallback;

void
lm_mountfd_test_force_fallback (gboolean force)
{
  force_fallback = force;
}
#define FORCE_FALLBACK force_fallback
#else
#define FORCE_FALLBACK FALSE
#endif

/* A seccomp filter (a container's, or an older systemd's that does not know
 * the call) answers EPERM or ENOSYS for a system call it refuses; a real
 * lack of privilege gives EPERM too, and then the fallback fails the same
 * way, so falling back on either costs nothing. */
static gboolean
not_available (int err)
{
  return err == ENOSYS || err == EPERM;
}

static const char *
open_reason (int err)
{
  switch (err)
    {
      case ELOOP:
        return "a component of the path is a symbolic link now";
      case ENOTDIR:
        return "a component of the path is a symbolic link or not a directory now";
      case ENOENT:
        return "the path no longer exists";
      default:
        return g_strerror (err);
    }
}

/* Kernels before 5.6 have no openat2(): the same guarantee, one component
 * at a time. O_PATH|O_NOFOLLOW opens a symlink itself, which O_DIRECTORY
 * then refuses with ENOTDIR, so no component is ever followed. */
static int
open_walk (const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, "/", -1);
  int dir = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

  for (guint i = 0; dir >= 0 && parts[i] != NULL; i++)
    {
      if (*parts[i] == '\0')
        continue;
      if (g_str_equal (parts[i], ".") || g_str_equal (parts[i], ".."))
        {
          /* The kernel writes mount points canonical; these never occur. */
          close (dir);
          errno = EINVAL;
          return -1;
        }
      int next = openat (dir, parts[i], O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
      int saved = errno;
      close (dir);
      errno = saved;
      dir = next;
    }
  return dir;
}

/* @path, a mount point as the mount table gives it (absolute, canonical),
 * opened as O_PATH without following a symlink in any component: the
 * kernel writes mount points with every symlink resolved, so a symlink on
 * the way means the tree changed since, possibly by a user who owns a
 * directory on it. The descriptor pins the mount it reached (its id cannot
 * be reused while held), so what is checked on it is what gets remounted. */
int
lm_mountfd_open (const char *path, GError **error)
{
  int fd = -1;

  if (path[0] != '/')
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS, "not an absolute path");
      return -1;
    }
#ifdef SYS_openat2
  if (!FORCE_FALLBACK)
    {
      struct open_how how = {
        .flags = O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC,
        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
      };
      fd = (int) syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
      if (fd >= 0)
        return fd;
      if (!not_available (errno))
        {
          int err = errno;
          g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "%s", open_reason (err));
          errno = err;
          return -1;
        }
    }
#endif
  fd = open_walk (path);
  if (fd < 0)
    {
      int err = errno;
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "%s", open_reason (err));
      errno = err;
    }
  return fd;
}

/* From /proc/self/fdinfo/N ("mnt_id:", Linux 3.15), for kernels before
 * 5.8 whose statx() has no STATX_MNT_ID. This names our own descriptor, so
 * it is the real /proc even under a fake root. */
static gboolean
fdinfo_mount_id (int fd, int *mount_id)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/fdinfo/%d", fd);
  g_autofree char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  for (char *line = text; line != NULL && *line; line = strchr (line, '\n'))
    {
      if (*line == '\n')
        line++;
      if (g_str_has_prefix (line, "mnt_id:"))
        {
          char *end = NULL;
          gint64 id = g_ascii_strtoll (line + strlen ("mnt_id:"), &end, 10);
          if (end == line + strlen ("mnt_id:") || id < 0 || id > G_MAXINT)
            return FALSE;
          *mount_id = (int) id;
          return TRUE;
        }
    }
  return FALSE;
}

/* The mount id of the mount @fd is on (the first field of mountinfo), and
 * whether @fd is that mount's root (TRUE where the kernel cannot say,
 * before 5.8: the remount itself then refuses anything else). */
gboolean
lm_mountfd_identify (int fd, int *mount_id, gboolean *is_root, GError **error)
{
  struct statx stx = { 0 };

  *is_root = TRUE;
  if (statx (fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) == 0)
    {
      if (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
        *is_root = (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
      if (stx.stx_mask & STATX_MNT_ID)
        {
          *mount_id = (int) stx.stx_mnt_id;
          return TRUE;
        }
    }
  if (fdinfo_mount_id (fd, mount_id))
    return TRUE;
  g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
               "the kernel tells neither statx(STATX_MNT_ID) nor /proc/self/fdinfo which mount "
               "this is");
  return FALSE;
}

static gpointer
probe_method (gpointer data)
{
  /* A context for "/" is created and dropped unused: no change. */
  int fs = fspick (AT_FDCWD, "/", FSPICK_CLOEXEC | FSPICK_NO_AUTOMOUNT);
  int err = errno;

  if (fs >= 0)
    {
      close (fs);
      return GINT_TO_POINTER (LM_MOUNTFD_FSPICK + 1);
    }
  if (not_available (err))
    {
      g_debug ("No fspick() here (%s): remounting through /proc/self/fd with mount(2)",
               g_strerror (err));
      return GINT_TO_POINTER (LM_MOUNTFD_PROC_FD + 1);
    }
  return GINT_TO_POINTER (LM_MOUNTFD_FSPICK + 1);
}

/* fspick() where the kernel has it (5.2): it reconfigures only the
 * superblock, so the mount point's own flags and a superblock that went
 * read-only meanwhile stay as they are. Probed once. */
LmMountfdMethod
lm_mountfd_method (void)
{
  static GOnce once = G_ONCE_INIT;

  if (FORCE_FALLBACK)
    return LM_MOUNTFD_PROC_FD;
  return (LmMountfdMethod) (GPOINTER_TO_INT (g_once (&once, probe_method, NULL)) - 1);
}

const char *
lm_mountfd_method_name (LmMountfdMethod method)
{
  return method == LM_MOUNTFD_FSPICK ? "fspick" : "mount(2) on /proc/self/fd";
}

/* The messages the kernel queued on the filesystem context ("e ext4:
 * ..."), which say more than the errno; escaped, as they quote options. */
static char *
kernel_messages (int fs)
{
  g_autoptr (GString) out = g_string_new (NULL);
  char buf[512];

  for (int i = 0; i < 8; i++)
    {
      ssize_t n = read (fs, buf, sizeof buf - 1);
      if (n <= 0)
        break;
      buf[n] = '\0';
      g_strchomp (buf);
      g_autofree char *shown = lm_remount_escape (buf[0] && buf[1] == ' ' ? buf + 2 : buf);
      g_string_append_printf (out, "%s%s", out->len ? "; " : "", shown);
    }
  return out->len ? g_string_free (g_steal_pointer (&out), FALSE) : NULL;
}

static gboolean
fsconfig_failed (int fs, const char *what, GError **error)
{
  int err = errno;
  g_autofree char *said = kernel_messages (fs);
  /* @what is NULL for fspick() and the reconfigure itself. */
  g_autofree char *shown = what != NULL ? lm_remount_escape (what) : NULL;

  g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "%s%s%s%s%s", g_strerror (err), what ? " at " : "",
               what ? shown : "", said ? "; the kernel says: " : "", said ? said : "");
  errno = err;
  return FALSE;
}

/* Reconfigure the superblock of the mount held by @fd with @options
 * (superblock options as mountinfo shows them, without rw/ro): each one as
 * the kernel's own parser of a mount(2) data string would pass it, a
 * "key=value" as a string, a "flag" as a flag. A quoted value (mountinfo
 * quotes SELinux contexts holding commas) goes without its quotes, as the
 * LSMs strip them from a data string. errno is left set on failure. */
gboolean
lm_mountfd_reconfigure (int fd, char *const *options, GError **error)
{
  int fs = fspick (fd, "", FSPICK_EMPTY_PATH | FSPICK_NO_AUTOMOUNT | FSPICK_CLOEXEC);
  gboolean ok = TRUE;

  if (fs < 0)
    return fsconfig_failed (-1, NULL, error);
  for (guint i = 0; ok && options[i] != NULL; i++)
    {
      g_autofree char *key = g_strdup (options[i]);
      char *value = strchr (key, '=');
      int rc;

      if (value != NULL)
        {
          *value++ = '\0';
          gsize len = strlen (value);
          if (len >= 2 && value[0] == '"' && value[len - 1] == '"')
            {
              value[len - 1] = '\0';
              value++;
            }
          rc = fsconfig (fs, FSCONFIG_SET_STRING, key, value, 0);
        }
      else
        rc = fsconfig (fs, FSCONFIG_SET_FLAG, key, NULL, 0);
      if (rc != 0)
        ok = fsconfig_failed (fs, options[i], error);
    }
  if (ok && fsconfig (fs, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) != 0)
    ok = fsconfig_failed (fs, NULL, error);
  int err = errno;
  close (fs);
  errno = err;
  return ok;
}

/* The magic link to @fd itself: mount(2) given it acts on exactly the
 * mount and directory the descriptor holds, resolving nothing else. It is
 * this process's own descriptor, so always the real /proc. */
char *
lm_mountfd_proc_path (int fd)
{
  return g_strdup_printf ("/proc/self/fd/%d", fd);
}
