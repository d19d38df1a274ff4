/* lm-ata.h: ATA commands as bytes: SAT ATA PASS-THROUGH(16) CDBs, sense
 * parsing, hdparm -S timer encoding. Pure: it must never open or send anything. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define LM_ATA_CDB_LEN 16
#define LM_ATA_IDENTIFY_LEN 512

/* ATA opcodes this project sends. */
#define LM_ATA_CHECK_POWER_MODE 0xE5
#define LM_ATA_CHECK_POWER_MODE_OLD 0x98 /* ATA-1 drives abort 0xE5 */
#define LM_ATA_IDLE 0xE3                 /* with a standby timer in the count */
#define LM_ATA_SET_FEATURES 0xEF
#define LM_ATA_IDENTIFY_DEVICE 0xEC
#define LM_ATA_SMART 0xB0
#define LM_ATA_SMART_READ_DATA 0xD0 /* the feature: attribute values, 512 bytes */
#define LM_ATA_SMART_LEN 512

#define LM_ATA_FEATURE_APM_ENABLE 0x05
#define LM_ATA_FEATURE_APM_DISABLE 0x85

/* APM level 255 means "APM off" (SET FEATURES 0x85), as hdparm -B 255. */
#define LM_ATA_APM_OFF 255

typedef enum
{
  LM_ATA_POWER_UNKNOWN,
  LM_ATA_POWER_ACTIVE,   /* active or idle (0xFF, 0x80–0x83, and old 0x80) */
  LM_ATA_POWER_STANDBY,  /* spun down (0x00, 0x01) */
  LM_ATA_POWER_SLEEPING, /* SLEEP: answers nothing until reset */
} LmAtaPower;

/* The registers a completed command hands back. */
typedef struct
{
  guint8 status;
  guint8 error;
  guint8 count;
  guint8 device;
  guint32 lba; /* 28-bit part */
} LmAtaRegs;

const char *lm_ata_power_to_string (LmAtaPower power);

/* A command that takes this long was answered by a drive that spun up for
 * it: a drive that is awake answers SMART READ DATA, IDLE or SET FEATURES
 * in milliseconds, and the fastest laptop disks need well over a second
 * to spin up from standby. */
#define LM_ATA_SPINUP_MIN_US (G_USEC_PER_SEC)

/* Whether a command sent to a drive that was @before (what CHECK POWER
 * MODE said just before it, or LM_ATA_POWER_UNKNOWN) and answered in
 * @took_us woke it: sent in standby or sleeping, or as slow as a spin-up. */
gboolean lm_ata_command_woke (LmAtaPower before, gint64 took_us);

/* CDBs; all non-data commands set CK_COND so the drive's registers come
 * back in the sense data even on success. */
void lm_ata_cdb_check_power_mode (guint8 cdb[LM_ATA_CDB_LEN], gboolean old_opcode);
void lm_ata_cdb_idle (guint8 cdb[LM_ATA_CDB_LEN], guint8 timer);
void lm_ata_cdb_apm (guint8 cdb[LM_ATA_CDB_LEN], guint level);
void lm_ata_cdb_identify (guint8 cdb[LM_ATA_CDB_LEN]);
void lm_ata_cdb_smart_read_data (guint8 cdb[LM_ATA_CDB_LEN]);

/* The same commands for HDIO_DRIVE_CMD: {command, count, feature, sectors}. */
void lm_ata_drive_cmd_args (guint8 args[4], const guint8 cdb[LM_ATA_CDB_LEN]);
void lm_ata_regs_from_drive_cmd (const guint8 args[4], LmAtaRegs *regs);

gboolean lm_ata_parse_sense (const guint8 *sense, gsize len, LmAtaRegs *regs, GError **error);
gboolean lm_ata_check_regs (const LmAtaRegs *regs, guint8 command, GError **error);
LmAtaPower lm_ata_power_from_count (guint8 count);

/* hdparm -S encoding of a standby timer. */
gboolean lm_ata_standby_encode (guint seconds, guint8 *value, GError **error);
gboolean lm_ata_standby_decode (guint8 value, guint *seconds);
char *lm_ata_standby_describe (guint8 value);

/* IDENTIFY DEVICE word 83/86 bit 3 and word 91: FALSE when APM is not
 * supported; @level is 255 when supported but off. */
gboolean lm_ata_identify_apm (const guint8 data[LM_ATA_IDENTIFY_LEN], guint *level);

G_END_DECLS
