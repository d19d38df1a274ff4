/* lm-fake-nvme.c: the scripted fake NVMe controller, behind LmNvmeAdminOps;
 * linked only into laptop-moded-test.
 *
 * A regular file standing in for /dev/nvmeN under a fake LAPTOP_MODED_ROOT:
 *
 *   # laptop-moded fake NVMe controller
 *   [FakeNvme]
 *   Identify=/path/identify.bin   Identify Controller's 4096 bytes
 *   Apst=/path/apst.bin           the APST table; absent: Get Features 0x0C
 *                                 is refused as qemu 7.2 does (0x4002)
 *   ApstEnabled=true              dword 0 bit 0
 *   PowerState=0                  Get Features 0x02's dword 0
 *
 * Each command is appended to "<path>.log" as "<opcode> <cdw10>" in hex. */
#include "lm-fake-nvme.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAKE_MAGIC "# laptop-moded fake NVMe controller"
#define FAKE_GROUP "FakeNvme"

typedef struct
{
  char *path;      /* the fake's file, NULL: a real device */
  gpointer handle; /* the real device's */
} FakeHandle;

static gboolean
is_fake (const char *path)
{
  struct stat st;
  char head[sizeof FAKE_MAGIC - 1];
  gboolean fake = FALSE;

  if (stat (path, &st) < 0 || !S_ISREG (st.st_mode))
    return FALSE;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return FALSE;
  fake = read (fd, head, sizeof head) == (ssize_t) sizeof head
         && memcmp (head, FAKE_MAGIC, sizeof head) == 0;
  close (fd);
  return fake;
}

static gpointer
fake_open (const char *path, GError **error)
{
  FakeHandle *h = g_new0 (FakeHandle, 1);

  if (is_fake (path))
    {
      h->path = g_strdup (path);
      return h;
    }
  h->handle = lm_nvme_admin_real.open (path, error);
  if (h->handle == NULL)
    {
      g_free (h);
      return NULL;
    }
  return h;
}

static void
fake_log (const char *path, const LmNvmeCommand *cmd)
{
  g_autofree char *log = g_strconcat (path, ".log", NULL);
  g_autofree char *line = g_strdup_printf ("%02X %X\n", cmd->opcode, cmd->cdw10);
  int fd = open (log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

  if (fd < 0)
    return;
  if (write (fd, line, strlen (line)) < 0)
    g_debug ("Cannot log to %s: %s", log, g_strerror (errno));
  close (fd);
}

static int
copy_file (GKeyFile *kf, const char *key, guint8 *data, guint32 len)
{
  g_autofree char *file = g_key_file_get_string (kf, FAKE_GROUP, key, NULL);
  g_autofree char *bytes = NULL;
  gsize got = 0;

  if (file == NULL || !g_file_get_contents (file, &bytes, &got, NULL))
    return 0x4002; /* Invalid Field, DNR */
  if (data != NULL)
    memcpy (data, bytes, MIN (got, (gsize) len));
  return 0;
}

static int
fake_admin (gpointer handle, const LmNvmeCommand *cmd, guint8 *data, guint32 *result)
{
  FakeHandle *h = handle;
  g_autoptr (GKeyFile) kf = g_key_file_new ();

  if (h->path == NULL)
    return lm_nvme_admin_real.admin (h->handle, cmd, data, result);
  fake_log (h->path, cmd);
  if (!g_key_file_load_from_file (kf, h->path, G_KEY_FILE_NONE, NULL))
    return -EIO;
  if (cmd->opcode == LM_NVME_ADMIN_IDENTIFY)
    return copy_file (kf, "Identify", data, cmd->data_len);
  if (cmd->opcode != LM_NVME_ADMIN_GET_FEATURES)
    return 0x4001; /* Invalid Opcode */
  switch (cmd->cdw10 & 0xFF)
    {
      case LM_NVME_FEAT_APST:
        *result = g_key_file_get_boolean (kf, FAKE_GROUP, "ApstEnabled", NULL) ? 1 : 0;
        return copy_file (kf, "Apst", data, cmd->data_len);
      case LM_NVME_FEAT_POWER_MGMT:
        *result = (guint32) g_key_file_get_integer (kf, FAKE_GROUP, "PowerState", NULL);
        return 0;
      default:
        return 0x4002;
    }
}

static void
fake_close (gpointer handle)
{
  FakeHandle *h = handle;

  if (h->handle != NULL)
    lm_nvme_admin_real.close (h->handle);
  g_free (h->path);
  g_free (h);
}

static const LmNvmeAdminOps fake_ops = {
  .name = "fake",
  .open = fake_open,
  .admin = fake_admin,
  .close = fake_close,
};

void
lm_fake_nvme_install (void)
{
  lm_nvme_admin_set_ops (&fake_ops);
}
