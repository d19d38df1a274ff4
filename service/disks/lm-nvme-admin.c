/* lm-nvme-admin.c: NVMe admin commands to a controller character device
 * through NVME_IOCTL_ADMIN_CMD (Identify, Get Features; nothing that
 * changes the drive), with a bounded buffer and timeout per command. Runs in
 * worker threads; holds no state between calls but the test seam. */
#include "lm-nvme-admin.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nvme_ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lm-error.h"
#include "lm-devfd.h"
#include "lm-paths.h"

/* The kernel aborts and resets after its own admin timeout (60 s); a drive
 * that does not answer a read-only command in 5 s is not worth waiting for. */
#define ADMIN_TIMEOUT_MS 5000

static const LmNvmeAdminOps *ops_override;

/* --- the real ioctl layer ------------------------------------------------ */

static int
real_admin (gpointer handle, const LmNvmeCommand *cmd, guint8 *data, guint32 *result)
{
  struct nvme_passthru_cmd pt = { 0 };

  pt.opcode = cmd->opcode;
  pt.nsid = cmd->nsid;
  pt.cdw10 = cmd->cdw10;
  pt.addr = (guint64) (guintptr) data;
  pt.data_len = data != NULL ? cmd->data_len : 0;
  pt.timeout_ms = ADMIN_TIMEOUT_MS;
  int rc = ioctl (lm_devfd_fd (handle), NVME_IOCTL_ADMIN_CMD, &pt);
  if (rc < 0)
    return -errno;
  *result = pt.result;
  return rc; /* > 0: the NVMe status field */
}

const LmNvmeAdminOps lm_nvme_admin_real = {
  .name = "ioctl",
  .open = lm_devfd_open,
  .admin = real_admin,
  .close = lm_devfd_close,
};

void
lm_nvme_admin_set_ops (const LmNvmeAdminOps *ops)
{
  ops_override = ops;
}

/* --- the controller of a namespace --------------------------------------- */

static gboolean
is_controller (const char *dir)
{
  g_autofree char *base = g_path_get_basename (dir);
  g_autofree char *dev = g_build_filename (dir, "dev", NULL);
  const char *p = base + strlen ("nvme");

  if (!g_str_has_prefix (base, "nvme") || *p == '\0')
    return FALSE;
  for (; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return g_file_test (dev, G_FILE_TEST_EXISTS);
}

static char *
devnode (const char *dir)
{
  g_autofree char *base = g_path_get_basename (dir);
  g_autofree char *system = g_strconcat ("/dev/", base, NULL);
  return lm_path (system);
}

static gboolean
is_live (const char *dir)
{
  g_autofree char *file = g_build_filename (dir, "state", NULL);
  g_autofree char *state = NULL;

  if (!g_file_get_contents (file, &state, NULL, NULL))
    return TRUE; /* older kernels have no state file */
  return g_str_has_prefix (g_strstrip (state), "live");
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char *const *) a, *(char *const *) b);
}

char *
lm_nvme_admin_controller (const char *disk)
{
  if (!g_str_has_prefix (disk, "nvme") || strchr (disk, '/') != NULL)
    return NULL;
  g_autofree char *system = g_strconcat ("/sys/block/", disk, "/device", NULL);
  g_autofree char *link = lm_path (system);
  /* realpath, not the link text: /sys/block/X is itself a link, so the
   * relative target only means something from the real directory. */
  g_autofree char *dir = realpath (link, NULL);

  if (dir == NULL)
    return NULL;
  if (is_controller (dir))
    return devnode (dir);
  /* Native multipath: the namespace hangs off nvme-subsysN, which lists its
   * controllers as links named nvmeM. */
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr (GPtrArray) found = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *sub = g_build_filename (dir, name, NULL);
      if (is_controller (sub) && is_live (sub))
        g_ptr_array_add (found, g_strdup (name));
    }
  if (found->len == 0)
    return NULL;
  g_ptr_array_sort (found, compare_names);
  g_autofree char *first = g_build_filename (dir, g_ptr_array_index (found, 0), NULL);
  return devnode (first);
}

/* --- commands -------------------------------------------------------------- */

static gboolean
admin (const LmNvmeAdminOps *ops, gpointer handle, const char *path, const LmNvmeCommand *cmd,
       guint8 *data, guint32 *result, GError **error)
{
  *result = 0;
  if (data != NULL)
    memset (data, 0, cmd->data_len);
  int rc = ops->admin (handle, cmd, data, result);
  if (rc < 0)
    {
      g_set_error (error, LM_ERROR, rc == -ENOTTY ? LM_ERROR_NOT_SUPPORTED : LM_ERROR_KERNEL,
                   "NVMe admin command 0x%02X (cdw10 0x%X) to %s failed: %s", cmd->opcode,
                   cmd->cdw10, path, g_strerror (-rc));
      return FALSE;
    }
  if (rc > 0)
    {
      /* Status Code Type in bits 10:8, Status Code in 7:0. */
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                   "%s refused NVMe admin command 0x%02X (cdw10 0x%X): status type %u code 0x%02X",
                   path, cmd->opcode, cmd->cdw10, (rc >> 8) & 0x7, rc & 0xFF);
      return FALSE;
    }
  return TRUE;
}

/* The reads, on an open @handle: lm_nvme_admin_read() closes it after. */
static gboolean
read_open (const LmNvmeAdminOps *ops, gpointer handle, const char *path, LmNvmeReading *reading,
           GError **error)
{
  g_autofree guint8 *data = g_malloc0 (LM_NVME_IDENTIFY_LEN);
  LmNvmeCommand cmd;
  guint32 result;

  if (!reading->have_identify)
    {
      lm_nvme_command_identify (&cmd);
      if (!admin (ops, handle, path, &cmd, data, &result, error)
          || !lm_nvme_parse_identify (data, cmd.data_len, &reading->identify, error))
        return FALSE;
      reading->have_identify = TRUE;
    }
  reading->have_apst = FALSE;
  if (reading->identify.apst_supported)
    {
      g_autoptr (GError) apst_error = NULL;
      lm_nvme_command_get_features (&cmd, LM_NVME_FEAT_APST);
      if (admin (ops, handle, path, &cmd, data, &result, &apst_error)
          && lm_nvme_parse_apst (result, data, cmd.data_len, &reading->apst, &apst_error))
        reading->have_apst = TRUE;
      else
        g_debug ("%s", apst_error->message);
    }
  lm_nvme_command_get_features (&cmd, LM_NVME_FEAT_POWER_MGMT);
  reading->have_state = FALSE;
  if (!admin (ops, handle, path, &cmd, NULL, &result, error))
    return FALSE;
  lm_nvme_parse_power_mgmt (result, &reading->state, &reading->workload_hint);
  reading->have_state = TRUE;
  return TRUE;
}

gboolean
lm_nvme_admin_read (const char *path, LmNvmeReading *reading, GError **error)
{
  const LmNvmeAdminOps *ops = ops_override != NULL ? ops_override : &lm_nvme_admin_real;
  gpointer handle = ops->open (path, error);

  if (handle == NULL)
    return FALSE;
  gboolean ok = read_open (ops, handle, path, reading, error);
  ops->close (handle);
  return ok;
}
