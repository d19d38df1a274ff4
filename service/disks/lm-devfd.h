/* lm-devfd.h: a device node opened for ioctls, as the opaque handle the
 * ioctl layers of lm-sgio.c and lm-nvme-admin.c pass around. Depends on
 * nothing but GLib, so the qemu probes link it as it is. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A device node opened for ioctls (read only, O_NONBLOCK: a removable
 * drive without a medium still opens) as an opaque handle, never NULL on
 * success; for the ioctl layers of lm-sgio.c and lm-nvme-admin.c. */
gpointer lm_devfd_open (const char *path, GError **error);
int lm_devfd_fd (gpointer handle);
void lm_devfd_close (gpointer handle);

G_END_DECLS
