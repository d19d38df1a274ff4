/* lm-uevent.h: the kernel's device events (uevents), delivered on the main loop.
 * Owns the netlink socket; never interprets an event beyond its subsystem. */
#pragma once

#include <glib.h>
#include <linux/netlink.h>
#include <sys/socket.h>

G_BEGIN_DECLS

typedef struct _LmUevent LmUevent;

/* @subsystem and @action are from the event ("power_supply", "change"). */
typedef void (*LmUeventFunc) (const char *subsystem, const char *action, gpointer user_data);

LmUevent *lm_uevent_new (LmUeventFunc func, gpointer user_data, GError **error);
void lm_uevent_free (LmUevent *uevent);

/* Whether a datagram from @addr came from the kernel (port 0). */
gboolean lm_uevent_from_kernel (const struct sockaddr_nl *addr, socklen_t len);
/* For tests: datagrams dropped as not the kernel's, and the socket. */
guint lm_uevent_get_refused (LmUevent *uevent);
int lm_uevent_get_fd (LmUevent *uevent);

gboolean lm_uevent_parse (const char *buf, gsize len, char **subsystem, char **action);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmUevent, lm_uevent_free)

G_END_DECLS
