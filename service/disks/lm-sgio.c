/* lm-sgio.c: ATA commands to a disk through SG_IO ATA PASS-THROUGH(16),
 * falling back to HDIO_DRIVE_CMD. Tests may put another backend behind
 * LmSgioOps (lm_sgio_set_chooser); the daemon has no other.
 * Opens devices O_RDONLY|O_NONBLOCK and only for a command; it never
 * sends anything it was not asked to, and never runs a program. */
#include "lm-sgio.h"

#include <errno.h>
#include <linux/hdreg.h>
#include <scsi/sg.h>
#include <string.h>
#include <sys/ioctl.h>

#include "lm-error.h"
#include "lm-devfd.h"

#define SENSE_LEN 32
#define SG_TIMEOUT_MS 15000

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

/* Tests choose a backend per device (tests/lm-fake-ata.c); the daemon
 * itself only ever has the real ioctls. */
static LmSgioChooser chooser;

void
lm_sgio_set_chooser (LmSgioChooser choose)
{
  chooser = choose;
}

/* --- commands ------------------------------------------------------------- */

LmSgio *
lm_sgio_open (const char *path, GError **error)
{
  const LmSgioOps *ops = chooser != NULL ? chooser (path) : NULL;

  if (ops == NULL)
    ops = &lm_sgio_real;
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

gboolean
lm_sgio_read_smart (LmSgio *dev, guint8 data[LM_ATA_SMART_LEN], LmAtaPower *before, gint64 *took_us,
                    GError **error)
{
  guint8 cdb[LM_ATA_CDB_LEN];
  LmAtaRegs regs;

  memset (data, 0, LM_ATA_SMART_LEN);
  lm_ata_cdb_smart_read_data (cdb);
  /* Only to a drive that said it is awake: never blindly, hourly. */
  return lm_sgio_command_awake (dev, cdb, data, LM_ATA_SMART_LEN, TRUE, &regs, before, took_us,
                                error);
}

gboolean
lm_sgio_command_awake (LmSgio *dev, const guint8 cdb[LM_ATA_CDB_LEN], guint8 *data, gsize data_len,
                       gboolean need_answer, LmAtaRegs *regs, LmAtaPower *before, gint64 *took_us,
                       GError **error)
{
  g_autoptr (GError) check_error = NULL;

  *took_us = 0;
  if (!lm_sgio_check_power (dev, before, &check_error))
    {
      if (need_answer)
        {
          memset (regs, 0, sizeof *regs);
          g_propagate_error (error, g_steal_pointer (&check_error));
          return FALSE;
        }
      g_debug ("%s: cannot ask its power state before command 0x%02X: %s", dev->path, cdb[14],
               check_error->message);
      *before = LM_ATA_POWER_UNKNOWN;
    }
  if (*before == LM_ATA_POWER_STANDBY || *before == LM_ATA_POWER_SLEEPING)
    {
      memset (regs, 0, sizeof *regs);
      g_set_error (error, LM_ERROR, LM_ERROR_BUSY,
                   "%s is %s: command 0x%02X not sent (it would spin it up)", dev->path,
                   lm_ata_power_to_string (*before), cdb[14]);
      return FALSE;
    }
  gint64 start = g_get_monotonic_time ();
  gboolean ok = lm_sgio_command (dev, cdb, data, data_len, regs, error);
  *took_us = g_get_monotonic_time () - start;
  return ok;
}
