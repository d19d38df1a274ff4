/* lm-ata.c: ATA commands as bytes and the drive's answers back as values.
 * Pure functions over byte arrays, so every layout is unit-tested against
 * recorded bytes; it never touches a device (lm-sgio.c does). */
#include "lm-ata.h"

#include <string.h>

#include "lm-error.h"
#include "lm-limits.h"

/* SAT-4 ATA PASS-THROUGH(16), byte 1: PROTOCOL in bits 4..1. */
#define SAT_OPCODE_ATA16 0x85
#define SAT_PROTO_NON_DATA (3 << 1)
#define SAT_PROTO_PIO_IN (4 << 1)
/* Byte 2: CK_COND (bit 5); for data-in: T_DIR (3), BYT_BLOK (2), length
 * in the count field (T_LENGTH = 2). */
#define SAT_CK_COND 0x20
#define SAT_PIO_IN_FLAGS 0x0E

#define ATA_STATUS_ERR 0x01
#define ATA_STATUS_DF 0x20
#define ATA_ERROR_ABRT 0x04

#define SENSE_KEY_RECOVERED 0x01
#define SENSE_KEY_ILLEGAL_REQUEST 0x05
#define SENSE_KEY_ABORTED 0x0B
#define SENSE_DESC_ATA_STATUS 0x09

const char *
lm_ata_power_to_string (LmAtaPower power)
{
  switch (power)
    {
      case LM_ATA_POWER_ACTIVE:
        return "active";
      case LM_ATA_POWER_STANDBY:
        return "standby";
      case LM_ATA_POWER_SLEEPING:
        return "sleeping";
      default:
        return "unknown";
    }
}

gboolean
lm_ata_command_woke (LmAtaPower before, gint64 took_us)
{
  return before == LM_ATA_POWER_STANDBY || before == LM_ATA_POWER_SLEEPING
         || took_us >= LM_ATA_SPINUP_MIN_US;
}

static void
cdb_non_data (guint8 cdb[LM_ATA_CDB_LEN], guint8 command, guint8 feature, guint8 count)
{
  memset (cdb, 0, LM_ATA_CDB_LEN);
  cdb[0] = SAT_OPCODE_ATA16;
  cdb[1] = SAT_PROTO_NON_DATA;
  cdb[2] = SAT_CK_COND;
  cdb[4] = feature;
  cdb[6] = count;
  cdb[14] = command;
}

void
lm_ata_cdb_check_power_mode (guint8 cdb[LM_ATA_CDB_LEN], gboolean old_opcode)
{
  cdb_non_data (cdb, old_opcode ? LM_ATA_CHECK_POWER_MODE_OLD : LM_ATA_CHECK_POWER_MODE, 0, 0);
}

/* IDLE with the standby timer in the count: the drive idles now and spins
 * down after the timer; this is what hdparm -S sends. */
void
lm_ata_cdb_idle (guint8 cdb[LM_ATA_CDB_LEN], guint8 timer)
{
  cdb_non_data (cdb, LM_ATA_IDLE, 0, timer);
}

void
lm_ata_cdb_apm (guint8 cdb[LM_ATA_CDB_LEN], guint level)
{
  if (level >= LM_ATA_APM_OFF)
    cdb_non_data (cdb, LM_ATA_SET_FEATURES, LM_ATA_FEATURE_APM_DISABLE, 0);
  else
    cdb_non_data (cdb, LM_ATA_SET_FEATURES, LM_ATA_FEATURE_APM_ENABLE, (guint8) level);
}

/* One 512-byte sector in: the drive's identity, for the APM level. */
void
lm_ata_cdb_identify (guint8 cdb[LM_ATA_CDB_LEN])
{
  memset (cdb, 0, LM_ATA_CDB_LEN);
  cdb[0] = SAT_OPCODE_ATA16;
  cdb[1] = SAT_PROTO_PIO_IN;
  cdb[2] = SAT_PIO_IN_FLAGS;
  cdb[6] = 1;
  cdb[14] = LM_ATA_IDENTIFY_DEVICE;
}

/* SMART READ DATA: one 512-byte sector in, with the SMART signature in
 * LBA mid/high that every SMART command carries (as smartctl -A sends). */
void
lm_ata_cdb_smart_read_data (guint8 cdb[LM_ATA_CDB_LEN])
{
  lm_ata_cdb_identify (cdb);
  cdb[4] = LM_ATA_SMART_READ_DATA;
  cdb[10] = 0x4F;
  cdb[12] = 0xC2;
  cdb[14] = LM_ATA_SMART;
}

/* HDIO_DRIVE_CMD's argument block, as libata reads it: command, sector
 * count (for SMART: the LBA low byte; libata adds the signature itself),
 * feature, number of 512-byte sectors of data to read back. */
void
lm_ata_drive_cmd_args (guint8 args[4], const guint8 cdb[LM_ATA_CDB_LEN])
{
  gboolean smart = cdb[14] == LM_ATA_SMART;

  args[0] = cdb[14];
  args[1] = smart ? cdb[8] : cdb[6];
  args[2] = cdb[4];
  args[3] = cdb[14] == LM_ATA_IDENTIFY_DEVICE || smart ? 1 : 0;
}

/* On return the kernel overwrites it with status, error and count. */
void
lm_ata_regs_from_drive_cmd (const guint8 args[4], LmAtaRegs *regs)
{
  memset (regs, 0, sizeof *regs);
  regs->status = args[0];
  regs->error = args[1];
  regs->count = args[2];
}

static gboolean
parse_descriptor_sense (const guint8 *sense, gsize len, LmAtaRegs *regs, GError **error)
{
  gsize end = MIN (len, (gsize) 8 + sense[7]);

  for (gsize p = 8; p + 2 <= end; p += 2 + sense[p + 1])
    {
      const guint8 *d = sense + p;

      if (d[0] != SENSE_DESC_ATA_STATUS)
        continue;
      if (d[1] < 12 || p + 14 > end)
        {
          g_set_error (error, LM_ERROR, LM_ERROR_FAILED,
                       "Truncated ATA status descriptor in the sense data (%u bytes)", d[1]);
          return FALSE;
        }
      regs->error = d[3];
      regs->count = d[5];
      regs->lba = d[7] | (d[9] << 8) | (d[11] << 16);
      regs->device = d[12];
      regs->status = d[13];
      return TRUE;
    }
  g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
               "No ATA registers in the answer (sense key 0x%x, ASC/ASCQ 0x%02x/0x%02x): the "
               "device does not pass ATA commands through",
               sense[1] & 0x0F, sense[2], sense[3]);
  return FALSE;
}

static gboolean
parse_fixed_sense (const guint8 *sense, gsize len, LmAtaRegs *regs, GError **error)
{
  guint8 key = sense[2] & 0x0F;

  if (len < 14)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED,
                   "Truncated fixed-format sense data (%zu bytes)", len);
      return FALSE;
    }
  /* SAT: the registers are in INFORMATION and COMMAND-SPECIFIC INFORMATION
   * when the answer is "ATA pass-through information available" or the
   * ATA command failed; anything else came from the SCSI layer. */
  if (!((sense[12] == 0x00 && sense[13] == 0x1D) || key == SENSE_KEY_ABORTED))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                   "No ATA registers in the answer (sense key 0x%x, ASC/ASCQ 0x%02x/0x%02x): the "
                   "device does not pass ATA commands through",
                   key, sense[12], sense[13]);
      return FALSE;
    }
  regs->error = sense[3];
  regs->status = sense[4];
  regs->device = sense[5];
  regs->count = sense[6];
  regs->lba = sense[9] | (sense[10] << 8) | (sense[11] << 16);
  return TRUE;
}

gboolean
lm_ata_parse_sense (const guint8 *sense, gsize len, LmAtaRegs *regs, GError **error)
{
  memset (regs, 0, sizeof *regs);
  if (len < 8)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED,
                   "No sense data came back (%zu bytes): cannot read the drive's answer", len);
      return FALSE;
    }
  switch (sense[0] & 0x7F)
    {
      case 0x72:
      case 0x73:
        return parse_descriptor_sense (sense, len, regs, error);
      case 0x70:
      case 0x71:
        return parse_fixed_sense (sense, len, regs, error);
      default:
        g_set_error (error, LM_ERROR, LM_ERROR_FAILED,
                     "Unknown sense data format 0x%02x: cannot read the drive's answer", sense[0]);
        return FALSE;
    }
}

/* ERR or device fault: the drive refused. ABRT is NOT_SUPPORTED so that
 * callers can try an older opcode. */
gboolean
lm_ata_check_regs (const LmAtaRegs *regs, guint8 command, GError **error)
{
  if ((regs->status & (ATA_STATUS_ERR | ATA_STATUS_DF)) == 0)
    return TRUE;
  g_set_error (
      error, LM_ERROR, (regs->error & ATA_ERROR_ABRT) ? LM_ERROR_NOT_SUPPORTED : LM_ERROR_KERNEL,
      "The drive refused ATA command 0x%02X (status 0x%02x, error 0x%02x%s)", command, regs->status,
      regs->error, (regs->error & ATA_ERROR_ABRT) ? ": aborted, not supported by this drive" : "");
  return FALSE;
}

LmAtaPower
lm_ata_power_from_count (guint8 count)
{
  switch (count)
    {
      case 0x00: /* standby */
      case 0x01: /* standby_y (ATA-8 power-up in standby) */
        return LM_ATA_POWER_STANDBY;
      case 0x80: /* idle (also what ATA-1 drives say for "idle") */
      case 0x81: /* idle_a */
      case 0x82: /* idle_b */
      case 0x83: /* idle_c */
      case 0xFF: /* active or idle */
        return LM_ATA_POWER_ACTIVE;
      default:
        return LM_ATA_POWER_UNKNOWN;
    }
}

/* --- standby timer (hdparm -S) ------------------------------------------ */

#define STANDBY_252_SECONDS LM_LIMIT_STANDBY_252_SECONDS
#define STANDBY_255_SECONDS LM_LIMIT_STANDBY_255_SECONDS

/* Which timers can be given is a bound (lm_limits_check_standby, what
 * settings/ checks); here only how they are written. */
gboolean
lm_ata_standby_encode (guint seconds, guint8 *value, GError **error)
{
  if (!lm_limits_check_standby (seconds, error))
    return FALSE;
  if (seconds <= 240 * 5)
    *value = (guint8) (seconds / 5);
  else if (seconds == STANDBY_252_SECONDS)
    *value = 252;
  else if (seconds == STANDBY_255_SECONDS)
    *value = 255;
  else
    *value = (guint8) (240 + seconds / 1800);
  return TRUE;
}

/* FALSE for 253 (vendor-specific) and 254 (reserved): no fixed time. */
gboolean
lm_ata_standby_decode (guint8 value, guint *seconds)
{
  if (value <= 240)
    *seconds = value * 5u;
  else if (value <= 251)
    *seconds = (value - 240u) * 1800u;
  else if (value == 252)
    *seconds = STANDBY_252_SECONDS;
  else if (value == 255)
    *seconds = STANDBY_255_SECONDS;
  else
    return FALSE;
  return TRUE;
}

char *
lm_ata_standby_describe (guint8 value)
{
  guint s;

  if (value == 0)
    return g_strdup ("off");
  if (!lm_ata_standby_decode (value, &s))
    return g_strdup (value == 253 ? "vendor-defined" : "reserved");
  if (s % 3600 == 0)
    return g_strdup_printf ("%u h", s / 3600);
  if (s % 60 == 0)
    return g_strdup_printf ("%u min", s / 60);
  if (s > 60)
    return g_strdup_printf ("%u min %u s", s / 60, s % 60);
  return g_strdup_printf ("%u s", s);
}

/* --- IDENTIFY ------------------------------------------------------------ */

static guint16
identify_word (const guint8 data[LM_ATA_IDENTIFY_LEN], guint word)
{
  return (guint16) (data[2 * word] | (data[2 * word + 1] << 8));
}

gboolean
lm_ata_identify_apm (const guint8 data[LM_ATA_IDENTIFY_LEN], guint *level)
{
  guint16 supported = identify_word (data, 83);
  guint16 enabled = identify_word (data, 86);

  /* Word 83 is valid only when bits 15:14 are 01. */
  if ((supported & 0xC000) != 0x4000 || (supported & 0x0008) == 0)
    return FALSE;
  *level = (enabled & 0x0008) ? (identify_word (data, 91) & 0xFF) : LM_ATA_APM_OFF;
  if (*level == 0)
    *level = LM_ATA_APM_OFF; /* reserved; treat as off rather than send 0 */
  return TRUE;
}
