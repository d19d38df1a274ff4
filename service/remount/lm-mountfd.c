/* lm-mountfd.c: mount points held as O_PATH descriptors, opened without
 * following any symlink, identified by mount id, and their commit= set
 * through the descriptor (fspick/fsconfig, or mount(2) on /proc/self/fd/N
 * with the mount's own flags). Never looks a mount point's path up twice. */
#define _GNU_SOURCE /* O_PATH, statx() */
#include "config.h"

#include "lm-mountfd.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lm-error.h"
#include "lm-mount-options.h"

/* glibc before 2.34 names neither; the kernel has had them since 5.10. */
#ifdef ST_NOSYMFOLLOW
#define LM_ST_NOSYMFOLLOW ST_NOSYMFOLLOW
#else
#define LM_ST_NOSYMFOLLOW 0x2000
#endif
#ifdef MS_NOSYMFOLLOW
#define LM_MS_NOSYMFOLLOW MS_NOSYMFOLLOW
#else
#define LM_MS_NOSYMFOLLOW 256
#endif

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

/* Set the journal commit interval of the superblock of the mount held by
 * @fd, and nothing else: fsconfig() takes the one parameter by name, so no
 * option string is built or parsed, and the reconfiguration keeps every
 * other superblock option and leaves the mount's own flags alone. @commit
 * is decimal seconds, "0" for the driver's default. errno is left set on
 * failure. */
gboolean
lm_mountfd_set_commit (int fd, const char *commit, GError **error)
{
  int fs = fspick (fd, "", FSPICK_EMPTY_PATH | FSPICK_NO_AUTOMOUNT | FSPICK_CLOEXEC);
  gboolean ok = TRUE;

  if (fs < 0)
    return fsconfig_failed (-1, NULL, error);
  if (fsconfig (fs, FSCONFIG_SET_STRING, "commit", commit, 0) != 0)
    {
      g_autofree char *what = g_strdup_printf ("commit=%s", commit);
      ok = fsconfig_failed (fs, what, error);
    }
  if (ok && fsconfig (fs, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) != 0)
    ok = fsconfig_failed (fs, NULL, error);
  int err = errno;
  close (fs);
  errno = err;
  return ok;
}

gboolean
lm_mountfd_not_available (int err)
{
  return not_available (err);
}

/* statvfs()'s per-mount (and generic superblock) flags as the MS_* flags
 * that make mount(2)'s MS_REMOUNT keep them: it sets exactly what it is
 * given. Without an atime flag the kernel keeps the mount's atime mode,
 * so strictatime is said out loud only to be explicit. */
unsigned long
lm_mountfd_ms_flags (unsigned long f_flag)
{
  static const struct
  {
    unsigned long st, ms;
  } map[] = {
    { ST_RDONLY, MS_RDONLY },
    { ST_NOSUID, MS_NOSUID },
    { ST_NODEV, MS_NODEV },
    { ST_NOEXEC, MS_NOEXEC },
    { ST_SYNCHRONOUS, MS_SYNCHRONOUS },
    { ST_MANDLOCK, MS_MANDLOCK },
    { ST_NOATIME, MS_NOATIME },
    { ST_NODIRATIME, MS_NODIRATIME },
    { ST_RELATIME, MS_RELATIME },
    { LM_ST_NOSYMFOLLOW, LM_MS_NOSYMFOLLOW },
  };
  unsigned long ms = 0;

  for (gsize i = 0; i < G_N_ELEMENTS (map); i++)
    if (f_flag & map[i].st)
      ms |= map[i].ms;
  if (!(f_flag & (ST_NOATIME | ST_RELATIME)))
    ms |= MS_STRICTATIME;
  return ms;
}

/* The flags of @f_flag in mount(8)'s words, for messages. */
char *
lm_mountfd_describe_flags (unsigned long f_flag)
{
  g_autoptr (GString) out = g_string_new (f_flag & ST_RDONLY ? "ro" : "rw");

  if (f_flag & ST_NOSUID)
    g_string_append (out, ",nosuid");
  if (f_flag & ST_NODEV)
    g_string_append (out, ",nodev");
  if (f_flag & ST_NOEXEC)
    g_string_append (out, ",noexec");
  if (f_flag & ST_SYNCHRONOUS)
    g_string_append (out, ",sync");
  if (f_flag & ST_MANDLOCK)
    g_string_append (out, ",mand");
  if (f_flag & ST_NOATIME)
    g_string_append (out, ",noatime");
  if (f_flag & ST_NODIRATIME)
    g_string_append (out, ",nodiratime");
  if (f_flag & ST_RELATIME)
    g_string_append (out, ",relatime");
  if (!(f_flag & (ST_NOATIME | ST_RELATIME)))
    g_string_append (out, ",strictatime");
  if (f_flag & LM_ST_NOSYMFOLLOW)
    g_string_append (out, ",nosymfollow");
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static gboolean
remount_flags (const char *target, unsigned long flags, const char *commit)
{
  g_autofree char *data = g_strdup_printf ("commit=%s", commit);
  return mount (NULL, target, NULL, MS_REMOUNT | flags, data) == 0;
}

/* Where fspick() is refused: mount(2) MS_REMOUNT through the magic link of
 * @fd with the held mount's own flags, read with fstatvfs() on the
 * descriptor (such a remount sets the mount's flags to exactly those
 * given), and "commit=N" as its only data. Afterwards the flags must be
 * exactly as before; otherwise they are put back, with commit=@undo_commit,
 * and this fails. errno is left set on failure. */
gboolean
lm_mountfd_remount_commit (int fd, const char *commit, const char *undo_commit, gboolean lazytime,
                           GError **error)
{
  g_autofree char *target = lm_mountfd_proc_path (fd);
  struct statvfs before, after;
  unsigned long flags;

  if (fstatvfs (fd, &before) != 0)
    {
      int err = errno;
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "cannot read its mount flags: %s",
                   g_strerror (err));
      errno = err;
      return FALSE;
    }
  flags = lm_mountfd_ms_flags (before.f_flag) | (lazytime ? MS_LAZYTIME : 0);
  if (!remount_flags (target, flags, commit))
    {
      int err = errno;
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "%s", g_strerror (err));
      errno = err;
      return FALSE;
    }
  if (fstatvfs (fd, &after) == 0 && after.f_flag == before.f_flag)
    return TRUE;

  /* Never leave a mount with other flags (nosuid gone): put back both. */
  g_autofree char *was = lm_mountfd_describe_flags (before.f_flag);
  g_autofree char *is = lm_mountfd_describe_flags (after.f_flag);
  gboolean undone = remount_flags (target, flags, undo_commit) && fstatvfs (fd, &after) == 0
                    && after.f_flag == before.f_flag;
  g_set_error (error, LM_ERROR, LM_ERROR_KERNEL,
               "mount(2) changed the mount's own flags from %s to %s; %s", was, is,
               undone ? "they were put back" : "putting them back failed too");
  errno = EPERM;
  return FALSE;
}

/* The magic link to @fd itself: mount(2) given it acts on exactly the
 * mount and directory the descriptor holds, resolving nothing else. It is
 * this process's own descriptor, so always the real /proc. */
char *
lm_mountfd_proc_path (int fd)
{
  return g_strdup_printf ("/proc/self/fd/%d", fd);
}
