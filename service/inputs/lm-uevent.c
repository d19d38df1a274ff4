/* lm-uevent.c: the kernel's device events, from a NETLINK_KOBJECT_UEVENT socket.
 * The kernel's own multicast group is used rather than udev's, so events
 * arrive on machines without udevd (containers, initramfs). An event is only
 * a hint to re-read sysfs; its contents are never trusted as state. */
#define _GNU_SOURCE /* struct ucred */
#include "lm-uevent.h"

#include <errno.h>
#include <string.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "lm-error.h"
#include "lm-paths.h"

#define UEVENT_KERNEL_GROUP 1

struct _LmUevent
{
  int fd;
  guint source;
  LmUeventFunc func;
  gpointer user_data;
  guint refused;      /* datagrams not from the kernel */
  gboolean fake_root; /* LAPTOP_MODED_ROOT: see sender_taken() */
};

/* Any process may send to this socket (unicast to its port, or to the
 * multicast group with CAP_NET_ADMIN, as udevd does on group 2); only the
 * kernel sends from port 0. */
gboolean
lm_uevent_from_kernel (const struct sockaddr_nl *addr, socklen_t len)
{
  return len >= sizeof *addr && addr->nl_family == AF_NETLINK && addr->nl_pid == 0;
}

/* A uevent is "action@devpath\0KEY=VALUE\0...". */
gboolean
lm_uevent_parse (const char *buf, gsize len, char **subsystem, char **action)
{
  const char *found_subsystem = NULL, *found_action = NULL;

  *subsystem = NULL;
  *action = NULL;
  if (buf == NULL || len == 0 || memchr (buf, '@', strnlen (buf, len)) == NULL)
    return FALSE;
  const char *end = buf + len;
  const char *p = buf;
  while (p < end)
    {
      gsize n = strnlen (p, (gsize) (end - p));
      if (n > 10 && strncmp (p, "SUBSYSTEM=", 10) == 0)
        found_subsystem = p + 10;
      else if (n > 7 && strncmp (p, "ACTION=", 7) == 0)
        found_action = p + 7;
      p += n + 1;
      if (found_subsystem != NULL && found_action != NULL && p <= end)
        break;
    }
  if (found_subsystem == NULL || found_action == NULL)
    return FALSE;
  *subsystem
      = g_strndup (found_subsystem, strnlen (found_subsystem, (gsize) (end - found_subsystem)));
  *action = g_strndup (found_action, strnlen (found_action, (gsize) (end - found_action)));
  return TRUE;
}

/* In a fake root (LAPTOP_MODED_ROOT, the tests' sysfs) there is no kernel
 * device behind the events either: the test makes them up, as root, and
 * they are taken from root only. With the real root, only the kernel's. */
static gboolean
sender_taken (LmUevent *self, const struct sockaddr_nl *from, struct msghdr *msg)
{
  if (lm_uevent_from_kernel (from, msg->msg_namelen))
    return TRUE;
  if (!self->fake_root)
    return FALSE;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (msg); c != NULL; c = CMSG_NXTHDR (msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS
        && c->cmsg_len >= CMSG_LEN (sizeof (struct ucred)))
      {
        struct ucred cred;
        memcpy (&cred, CMSG_DATA (c), sizeof cred);
        return cred.uid == 0;
      }
  return FALSE;
}

static gboolean
on_readable (int fd, GIOCondition condition, gpointer user_data)
{
  LmUevent *self = user_data;
  char buf[8192];

  /* Drain everything queued: one wake-up per burst of events. */
  for (;;)
    {
      struct sockaddr_nl from = { 0 };
      struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf - 1 };
      union
      {
        char buf[CMSG_SPACE (sizeof (struct ucred))];
        struct cmsghdr align;
      } control;
      struct msghdr msg = { .msg_name = &from,
                            .msg_namelen = sizeof from,
                            .msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = &control,
                            .msg_controllen = sizeof control };
      ssize_t n = recvmsg (fd, &msg, MSG_DONTWAIT);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          if (errno != EAGAIN && errno != ENOBUFS)
            g_debug ("uevent socket: %s", g_strerror (errno));
          break;
        }
      if (!sender_taken (self, &from, &msg))
        {
          self->refused++;
          g_debug ("Ignoring a device event from netlink port %u, not the kernel",
                   (guint) from.nl_pid);
          continue;
        }
      buf[n] = '\0';
      g_autofree char *subsystem = NULL;
      g_autofree char *action = NULL;
      if (lm_uevent_parse (buf, (gsize) n, &subsystem, &action))
        self->func (subsystem, action, self->user_data);
    }
  return G_SOURCE_CONTINUE;
}

LmUevent *
lm_uevent_new (LmUeventFunc func, gpointer user_data, GError **error)
{
  struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = UEVENT_KERNEL_GROUP };
  int fd = socket (AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);

  if (fd < 0 || bind (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot listen to kernel device events: %s",
                   g_strerror (saved));
      return NULL;
    }

  LmUevent *self = g_new0 (LmUevent, 1);
  self->fake_root = !g_str_equal (lm_root (), "/");
  if (self->fake_root)
    {
      int on = 1;
      setsockopt (fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
    }
  self->fd = fd;
  self->func = func;
  self->user_data = user_data;
  self->source = g_unix_fd_add (fd, G_IO_IN, on_readable, self);
  return self;
}

guint
lm_uevent_get_refused (LmUevent *self)
{
  return self->refused;
}

int
lm_uevent_get_fd (LmUevent *self)
{
  return self->fd;
}

void
lm_uevent_free (LmUevent *self)
{
  if (self == NULL)
    return;
  g_clear_handle_id (&self->source, g_source_remove);
  close (self->fd);
  g_free (self);
}
