/* lm-nvme-admin.h: reading an NVMe controller's power states, APST and
 * current power state through NVME_IOCTL_ADMIN_CMD, and the ioctl seam for
 * tests. Owns the controller handle; never decides when to ask. */
#pragma once

#include <glib.h>

#include "lm-nvme.h"

G_BEGIN_DECLS

/* Each admin call returns 0, a negative errno, or the controller's NVMe
 * status (positive); @data holds cmd->data_len bytes, zeroed beforehand. */
typedef struct
{
  const char *name;
  gpointer (*open) (const char *path, GError **error);
  int (*admin) (gpointer handle, const LmNvmeCommand *cmd, guint8 *data, guint32 *result);
  void (*close) (gpointer handle);
} LmNvmeAdminOps;

extern const LmNvmeAdminOps lm_nvme_admin_real;
/* Tests replace the ioctl layer (NULL: the real one again). */
void lm_nvme_admin_set_ops (const LmNvmeAdminOps *ops);

typedef struct
{
  gboolean have_identify;
  LmNvmeIdentify identify;
  gboolean have_apst;
  LmNvmeApst apst;
  gboolean have_state;
  guint state;
  guint workload_hint;
} LmNvmeReading;

/* The controller character device (/dev/nvmeN, under the root) of NVMe
 * namespace disk @disk ("nvme0n1"), from sysfs: the namespace's controller,
 * or with native multipath the first live controller of its subsystem.
 * NULL when @disk is no NVMe namespace. */
char *lm_nvme_admin_controller (const char *disk);

/* Sends Identify Controller only when @reading has none yet, then Get
 * Features APST (when supported) and Power Management. Blocking, bounded by
 * the command timeout: call it from a worker thread. TRUE when the current
 * power state was read; what could not be read is in @error. */
gboolean lm_nvme_admin_read (const char *path, LmNvmeReading *reading, GError **error);

G_END_DECLS
