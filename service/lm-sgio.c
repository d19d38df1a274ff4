/* lm-sgio.c: ATA commands to a disk through SG_IO ATA PASS-THROUGH(16),
 * falling back to HDIO_DRIVE_CMD, and the scripted fake device for tests.
 * Opens devices O_RDONLY|O_NONBLOCK and only for a command; it never
 * sends anything it was not asked to, and never runs a program. */
#include "lm-sgio.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/hdreg.h>
#include <scsi/sg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lm-error.h"
#include "lm-devfd.h"

#define SENSE_LEN 32
#define SG_TIMEOUT_MS 15000
#define FAKE_MAGIC "# laptop-moded fake ATA device"
#define FAKE_GROUP "FakeAta"

struct _LmSgio
{
  const LmSgioOps *ops;
  gpointer handle;
  char *path;
};

/* --- the real ioctl layer ------------------------------------------------ */

static int
real_sg_io (gpointer handle, const guint8 cdb[LM_ATA_CDB_LEN], guint8 *data, gsize data_len,
            gsize *data_got, guint8 *sense, gsize *sense_len)
{
  sg_io_hdr_t io = { 0 };

  io.interface_id = 'S';
  io.cmd_len = LM_ATA_CDB_LEN;
  io.cmdp = (unsigned char *) cdb;
  io.mx_sb_len = (unsigned char) *sense_len;
  io.sbp = sense;
  io.dxfer_direction = data_len > 0 ? SG_DXFER_FROM_DEV : SG_DXFER_NONE;
  io.dxferp = data;
  io.dxfer_len = (unsigned int) data_len;
  io.timeout = SG_TIMEOUT_MS;
  if (ioctl (lm_devfd_fd (handle), SG_IO, &io) < 0)
    return -errno;
  *sense_len = io.sb_len_wr;
  /* resid is what the HBA did not transfer; a value out of range is
   * nonsense, and then nothing is trusted. */
  if (io.resid < 0 || (gsize) io.resid > data_len)
    *data_got = 0;
  else
    *data_got = data_len - (gsize) io.resid;
  /* The transport failed, or a CHECK CONDITION without sense: nothing
   * readable came from the drive. */
  if (io.sb_len_wr == 0
      && (io.status != 0 || io.host_status != 0 || (io.driver_status & 0x0F) != 0))
    return -EIO;
  return 0;
}

static int
real_drive_cmd (gpointer handle, guint8 *args, gsize args_len)
{
  if (ioctl (lm_devfd_fd (handle), HDIO_DRIVE_CMD, args) < 0)
    return -errno;
  return 0;
}

const LmSgioOps lm_sgio_real = {
  .name = "ioctl",
  .open = lm_devfd_open,
  .sg_io = real_sg_io,
  .drive_cmd = real_drive_cmd,
  .close = lm_devfd_close,
};

/* --- the fake device ------------------------------------------------------
 * A regular file standing in for /dev/sdX under a fake LAPTOP_MODED_ROOT:
 *
 *   # laptop-moded fake ATA device
 *   [FakeAta]
 *   Power=active          active, idle, standby or sleeping
 *   APM=128               level IDENTIFY reports; absent: APM not supported
 *   Interface=sgio        sgio, or drive_cmd (SG_IO says ENOTTY)
 *   AbortCheckPowerMode=false   true: abort 0xE5 as an ATA-1 drive, answer 0x98
 *   Refuse=false          true: abort every command
 *   IdentifyLength=512    bytes of IDENTIFY data the "bridge" transfers; the
 *                         rest of the buffer is left as it was (filled with
 *                         0xFF first, as stale memory would be)
 *
 * The file is read again for each command, so a test changes the drive's
 * answers by rewriting it. Each command received is appended to
 * "<path>.log" as "<interface> <command> <feature> <count>" in hex, e.g.
 * "sgio E3 00 04"; SET FEATURES APM also sets APM= in the file, as the
 * drive would remember it. */

typedef struct
{
  char *path;
} FakeDevice;

gboolean
lm_sgio_is_fake (const char *path)
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
  FakeDevice *dev = g_new0 (FakeDevice, 1);

  dev->path = g_strdup (path);
  return dev;
}

static void
fake_log (FakeDevice *dev, const char *interface, guint8 command, guint8 feature, guint8 count)
{
  g_autofree char *log = g_strconcat (dev->path, ".log", NULL);
  g_autofree char *line
      = g_strdup_printf ("%s %02X %02X %02X\n", interface, command, feature, count);
  int fd = open (log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

  if (fd < 0)
    return;
  if (write (fd, line, strlen (line)) < 0)
    g_debug ("Cannot log to %s: %s", log, g_strerror (errno));
  close (fd);
}

/* Run one command against the scripted drive: fills @regs, returns 0 or
 * -EIO when the drive does not answer at all (SLEEP). */
static int
fake_execute (FakeDevice *dev, const char *interface, guint8 command, guint8 feature, guint8 count,
              guint8 *data, gsize data_len, gsize *data_got, LmAtaRegs *regs)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  memset (regs, 0, sizeof *regs);
  *data_got = data_len;

  fake_log (dev, interface, command, feature, count);
  if (!g_key_file_load_from_file (kf, dev->path, G_KEY_FILE_KEEP_COMMENTS, NULL))
    return -EIO;
  g_autofree char *power = g_key_file_get_string (kf, FAKE_GROUP, "Power", NULL);
  gboolean refuse = g_key_file_get_boolean (kf, FAKE_GROUP, "Refuse", NULL);
  gboolean old = g_key_file_get_boolean (kf, FAKE_GROUP, "AbortCheckPowerMode", NULL);

  if (g_strcmp0 (power, "sleeping") == 0)
    return -EIO;
  regs->status = 0x50; /* DRDY, DSC */
  if (refuse || (old && command == LM_ATA_CHECK_POWER_MODE))
    {
      regs->status = 0x51;
      regs->error = 0x04;
      return 0;
    }
  switch (command)
    {
      case LM_ATA_CHECK_POWER_MODE:
      case LM_ATA_CHECK_POWER_MODE_OLD:
        regs->count = g_strcmp0 (power, "standby") == 0 ? 0x00
                      : g_strcmp0 (power, "idle") == 0  ? 0x80
                                                        : 0xFF;
        break;
      case LM_ATA_SET_FEATURES:
        if (feature == LM_ATA_FEATURE_APM_ENABLE)
          g_key_file_set_integer (kf, FAKE_GROUP, "APM", count);
        else if (feature == LM_ATA_FEATURE_APM_DISABLE)
          g_key_file_set_integer (kf, FAKE_GROUP, "APM", LM_ATA_APM_OFF);
        if (!g_key_file_save_to_file (kf, dev->path, NULL))
          return -EIO;
        break;
      case LM_ATA_IDENTIFY_DEVICE:
        if (data != NULL && data_len >= LM_ATA_IDENTIFY_LEN)
          {
            guint8 answer[LM_ATA_IDENTIFY_LEN] = { 0 };
            gsize length = LM_ATA_IDENTIFY_LEN;

            if (g_key_file_has_key (kf, FAKE_GROUP, "IdentifyLength", NULL))
              length
                  = (gsize) CLAMP (g_key_file_get_integer (kf, FAKE_GROUP, "IdentifyLength", NULL),
                                   0, LM_ATA_IDENTIFY_LEN);
            if (g_key_file_has_key (kf, FAKE_GROUP, "APM", NULL))
              {
                int apm = g_key_file_get_integer (kf, FAKE_GROUP, "APM", NULL);
                answer[83 * 2] = 0x08;
                answer[83 * 2 + 1] = 0x40;
                if (apm > 0 && apm < LM_ATA_APM_OFF)
                  {
                    answer[86 * 2] = 0x08;
                    answer[91 * 2] = (guint8) apm;
                  }
              }
            /* Stale memory past a short transfer, as a real buffer has. */
            memset (data, 0xFF, data_len);
            memcpy (data, answer, length);
            *data_got = length;
          }
        break;
      default:
        break;
    }
  return 0;
}

static gboolean
fake_uses_sgio (FakeDevice *dev)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();

  if (!g_key_file_load_from_file (kf, dev->path, G_KEY_FILE_NONE, NULL))
    return TRUE;
  g_autofree char *interface = g_key_file_get_string (kf, FAKE_GROUP, "Interface", NULL);
  return g_strcmp0 (interface, "drive_cmd") != 0;
}

/* Answers as libata does: descriptor sense with an ATA Status Return
 * descriptor, so the real parser reads the fake's answers. */
static int
fake_sg_io (gpointer handle, const guint8 cdb[LM_ATA_CDB_LEN], guint8 *data, gsize data_len,
            gsize *data_got, guint8 *sense, gsize *sense_len)
{
  FakeDevice *dev = handle;
  LmAtaRegs regs;

  if (!fake_uses_sgio (dev))
    return -ENOTTY;
  int rc = fake_execute (dev, "sgio", cdb[14], cdb[4], cdb[6], data, data_len, data_got, &regs);
  if (rc < 0)
    return rc;
  guint8 answer[22] = { 0x72, (regs.status & 0x01) ? 0x0B : 0x01,
                        0x00, (regs.status & 0x01) ? 0x00 : 0x1D,
                        0x00, 0x00,
                        0x00, 0x0E,
                        0x09, 0x0C,
                        0x00, regs.error,
                        0x00, regs.count,
                        0x00, 0x00,
                        0x00, 0x00,
                        0x00, 0x00,
                        0x40, regs.status };
  *sense_len = MIN (*sense_len, sizeof answer);
  memcpy (sense, answer, *sense_len);
  return 0;
}

static int
fake_drive_cmd (gpointer handle, guint8 *args, gsize args_len)
{
  FakeDevice *dev = handle;
  LmAtaRegs regs;
  gsize got;
  int rc
      = fake_execute (dev, "drive_cmd", args[0], args[2], args[1], args_len > 4 ? args + 4 : NULL,
                      args_len > 4 ? args_len - 4 : 0, &got, &regs);

  if (rc < 0)
    {
      /* As libata: nothing came back, the argument block stays zeroed. */
      memset (args, 0, 4);
      return rc;
    }
  args[0] = regs.status;
  args[1] = regs.error;
  args[2] = regs.count;
  return (regs.status & 0x01) ? -EIO : 0;
}

static void
fake_close (gpointer handle)
{
  FakeDevice *dev = handle;

  g_free (dev->path);
  g_free (dev);
}

const LmSgioOps lm_sgio_fake = {
  .name = "fake",
  .open = fake_open,
  .sg_io = fake_sg_io,
  .drive_cmd = fake_drive_cmd,
  .close = fake_close,
};

/* --- commands ------------------------------------------------------------- */

LmSgio *
lm_sgio_open (const char *path, GError **error)
{
  const LmSgioOps *ops = lm_sgio_is_fake (path) ? &lm_sgio_fake : &lm_sgio_real;
  gpointer handle = ops->open (path, error);

  if (handle == NULL)
    return NULL;
  LmSgio *dev = g_new0 (LmSgio, 1);
  dev->ops = ops;
  dev->handle = handle;
  dev->path = g_strdup (path);
  return dev;
}

void
lm_sgio_close (LmSgio *dev)
{
  if (dev == NULL)
    return;
  dev->ops->close (dev->handle);
  g_free (dev->path);
  g_free (dev);
}

const char *
lm_sgio_backend (LmSgio *dev)
{
  return dev->ops->name;
}

static gboolean
no_ioctl (int rc)
{
  return rc == -ENOTTY || rc == -EINVAL || rc == -ENOSYS || rc == -EOPNOTSUPP;
}

/* A bridge may hand back less than was asked for and still say "good":
 * what it did not transfer must never be read as the drive's answer. */
static gboolean
check_transferred (LmSgio *dev, const guint8 cdb[LM_ATA_CDB_LEN], gsize got, gsize want,
                   GError **error)
{
  if (got >= want)
    return TRUE;
  g_set_error (error, LM_ERROR, LM_ERROR_KERNEL,
               "ATA command 0x%02X to %s transferred %zu of %zu bytes: the answer is incomplete",
               cdb[14], dev->path, got, want);
  return FALSE;
}

/* SG_IO first; HDIO_DRIVE_CMD when SG_IO is not there or brought no ATA
 * registers back (old IDE driver, some bridges). A drive that answered
 * with an error is not asked twice. */
gboolean
lm_sgio_command (LmSgio *dev, const guint8 cdb[LM_ATA_CDB_LEN], guint8 *data, gsize data_len,
                 LmAtaRegs *regs, GError **error)
{
  guint8 sense[SENSE_LEN] = { 0 };
  gsize sense_len = sizeof sense;
  gsize got = 0;
  g_autoptr (GError) sg_error = NULL;

  memset (regs, 0, sizeof *regs);
  int rc = dev->ops->sg_io (dev->handle, cdb, data, data_len, &got, sense, &sense_len);

  /* A data-in command carries no CK_COND: a clean completion has no sense. */
  if (rc == 0 && sense_len == 0 && data_len > 0)
    {
      regs->status = 0x50;
      return check_transferred (dev, cdb, got, data_len, error);
    }
  if (rc == 0)
    {
      if (lm_ata_parse_sense (sense, sense_len, regs, &sg_error))
        return lm_ata_check_regs (regs, cdb[14], error)
               && check_transferred (dev, cdb, got, data_len, error);
    }
  else if (!no_ioctl (rc))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "ATA command 0x%02X to %s failed: %s", cdb[14],
                   dev->path, g_strerror (-rc));
      return FALSE;
    }

  g_autofree guint8 *args = g_malloc0 (4 + data_len);
  lm_ata_drive_cmd_args (args, cdb);
  rc = dev->ops->drive_cmd (dev->handle, args, 4 + data_len);
  if (rc == 0 && data_len > 0)
    {
      /* libata hands registers back only for non-data commands. */
      memcpy (data, args + 4, data_len);
      memset (regs, 0, sizeof *regs);
      regs->status = 0x50;
      return TRUE;
    }
  lm_ata_regs_from_drive_cmd (args, regs);
  if (rc == 0)
    return lm_ata_check_regs (regs, cdb[14], error);
  if (no_ioctl (rc))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "%s does not take ATA commands (%s)",
                   dev->path,
                   sg_error != NULL ? sg_error->message : "neither SG_IO nor HDIO_DRIVE_CMD");
      return FALSE;
    }
  /* The drive answered with an error: its registers say which. */
  if (regs->status & 0x01)
    return lm_ata_check_regs (regs, cdb[14], error);
  g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "ATA command 0x%02X to %s failed: %s", cdb[14],
               dev->path, g_strerror (-rc));
  return FALSE;
}

/* Never wakes the drive. 0x98 for drives that abort 0xE5; a drive in SLEEP
 * answers nothing, which hdparm also reports as "sleeping": an I/O error
 * with no status at all. */
gboolean
lm_sgio_check_power (LmSgio *dev, LmAtaPower *power, GError **error)
{
  guint8 cdb[LM_ATA_CDB_LEN];
  LmAtaRegs regs;
  g_autoptr (GError) local_error = NULL;

  *power = LM_ATA_POWER_UNKNOWN;
  lm_ata_cdb_check_power_mode (cdb, FALSE);
  if (!lm_sgio_command (dev, cdb, NULL, 0, &regs, &local_error))
    {
      if (g_error_matches (local_error, LM_ERROR, LM_ERROR_NOT_SUPPORTED) && (regs.status & 0x01))
        {
          g_clear_error (&local_error);
          lm_ata_cdb_check_power_mode (cdb, TRUE);
          if (lm_sgio_command (dev, cdb, NULL, 0, &regs, &local_error))
            {
              *power = lm_ata_power_from_count (regs.count);
              return TRUE;
            }
        }
      if (g_error_matches (local_error, LM_ERROR, LM_ERROR_KERNEL) && regs.status == 0
          && regs.error == 0)
        {
          *power = LM_ATA_POWER_SLEEPING;
          return TRUE;
        }
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  *power = lm_ata_power_from_count (regs.count);
  return TRUE;
}

gboolean
lm_sgio_read_apm (LmSgio *dev, guint *level, GError **error)
{
  guint8 cdb[LM_ATA_CDB_LEN];
  guint8 data[LM_ATA_IDENTIFY_LEN];
  LmAtaRegs regs;

  /* Zeroed: whatever path answers, no byte of it is stale stack. */
  memset (data, 0, sizeof data);
  lm_ata_cdb_identify (cdb);
  if (!lm_sgio_command (dev, cdb, data, sizeof data, &regs, error))
    return FALSE;
  if (!lm_ata_identify_apm (data, level))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                   "%s does not support APM (IDENTIFY word 83 bit 3 is clear)", dev->path);
      return FALSE;
    }
  return TRUE;
}
