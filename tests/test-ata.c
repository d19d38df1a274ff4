/* test-ata.c: ATA PASS-THROUGH(16) CDBs, sense parsing and the hdparm -S
 * encoding, against byte sequences written out in full. */
#include <string.h>

#include "lm-ata.h"
#include "lm-error.h"
#include "lm-smart.h"

static void
assert_bytes (const guint8 *got, const guint8 *want, gsize len)
{
  for (gsize i = 0; i < len; i++)
    if (got[i] != want[i])
      g_error ("byte %zu: got 0x%02x, want 0x%02x", i, got[i], want[i]);
}

static void
test_cdb_check_power_mode (void)
{
  /* What hdparm -C sends through SG_IO on a SATA disk. */
  static const guint8 want[] = { 0x85, 0x06, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xE5, 0x00 };
  static const guint8 want_old[] = { 0x85, 0x06, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00,
                                     0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x98, 0x00 };
  guint8 cdb[LM_ATA_CDB_LEN], args[4];

  lm_ata_cdb_check_power_mode (cdb, FALSE);
  assert_bytes (cdb, want, sizeof want);
  lm_ata_cdb_check_power_mode (cdb, TRUE);
  assert_bytes (cdb, want_old, sizeof want_old);

  static const guint8 want_args[] = { 0x98, 0x00, 0x00, 0x00 };
  lm_ata_drive_cmd_args (args, cdb);
  assert_bytes (args, want_args, 4);
}

static void
test_cdb_idle (void)
{
  static const struct
  {
    guint seconds;
    guint8 value;
  } cases[] = {
    { 0, 0 },      { 5, 1 },       { 20, 4 },     { 1200, 240 }, { 1800, 241 },
    { 3600, 242 }, { 19800, 251 }, { 1260, 252 }, { 1275, 255 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      guint8 value = 0xAA, cdb[LM_ATA_CDB_LEN], args[4];
      guint back;

      g_assert_true (lm_ata_standby_encode (cases[i].seconds, &value, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (value, ==, cases[i].value);
      g_assert_true (lm_ata_standby_decode (value, &back));
      g_assert_cmpuint (back, ==, cases[i].seconds);

      guint8 want[] = { 0x85, 0x06, 0x20, 0x00, 0x00, 0x00, value, 0x00,
                        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xE3,  0x00 };
      lm_ata_cdb_idle (cdb, value);
      assert_bytes (cdb, want, sizeof want);
      guint8 want_args[] = { 0xE3, value, 0x00, 0x00 };
      lm_ata_drive_cmd_args (args, cdb);
      assert_bytes (args, want_args, 4);
    }
}

static void
test_standby_invalid (void)
{
  static const guint bad[] = { 1, 4, 7, 1201, 1205, 1799, 2000, 19801, 21600, 1270 };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      guint8 value = 0xAA;

      g_assert_false (lm_ata_standby_encode (bad[i], &value, &error));
      g_assert_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS);
      g_assert_nonnull (strstr (error->message, "multiple of 5"));
      g_assert_cmpuint (value, ==, 0xAA);
    }
}

static void
test_standby_describe (void)
{
  static const struct
  {
    guint8 value;
    const char *text;
  } cases[] = {
    { 0, "off" },
    { 1, "5 s" },
    { 4, "20 s" },
    { 12, "1 min" },
    { 13, "1 min 5 s" },
    { 240, "20 min" },
    { 241, "30 min" },
    { 242, "1 h" },
    { 251, "330 min" },
    { 252, "21 min" },
    { 253, "vendor-defined" },
    { 254, "reserved" },
    { 255, "21 min 15 s" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = lm_ata_standby_describe (cases[i].value);
      g_assert_cmpstr (text, ==, cases[i].text);
    }
  guint s;
  g_assert_false (lm_ata_standby_decode (253, &s));
  g_assert_false (lm_ata_standby_decode (254, &s));
}

static void
test_cdb_apm (void)
{
  static const guint8 want_1[] = { 0x85, 0x06, 0x20, 0x00, 0x05, 0x00, 0x01, 0x00,
                                   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xEF, 0x00 };
  static const guint8 want_254[] = { 0x85, 0x06, 0x20, 0x00, 0x05, 0x00, 0xFE, 0x00,
                                     0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xEF, 0x00 };
  static const guint8 want_off[] = { 0x85, 0x06, 0x20, 0x00, 0x85, 0x00, 0x00, 0x00,
                                     0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xEF, 0x00 };
  guint8 cdb[LM_ATA_CDB_LEN], args[4];

  lm_ata_cdb_apm (cdb, 1);
  assert_bytes (cdb, want_1, sizeof want_1);
  static const guint8 want_args_1[] = { 0xEF, 0x01, 0x05, 0x00 };
  lm_ata_drive_cmd_args (args, cdb);
  assert_bytes (args, want_args_1, 4);
  lm_ata_cdb_apm (cdb, 254);
  assert_bytes (cdb, want_254, sizeof want_254);
  lm_ata_cdb_apm (cdb, 255);
  assert_bytes (cdb, want_off, sizeof want_off);
  static const guint8 want_args_off[] = { 0xEF, 0x00, 0x85, 0x00 };
  lm_ata_drive_cmd_args (args, cdb);
  assert_bytes (args, want_args_off, 4);
}

static void
test_cdb_identify (void)
{
  static const guint8 want[] = { 0x85, 0x08, 0x0E, 0x00, 0x00, 0x00, 0x01, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xEC, 0x00 };
  guint8 cdb[LM_ATA_CDB_LEN], args[4];

  lm_ata_cdb_identify (cdb);
  assert_bytes (cdb, want, sizeof want);
  static const guint8 want_args[] = { 0xEC, 0x01, 0x00, 0x01 };
  lm_ata_drive_cmd_args (args, cdb);
  assert_bytes (args, want_args, 4);
}

/* Descriptor sense as libata returns it for CHECK POWER MODE with CK_COND:
 * RECOVERED ERROR, "ATA pass-through information available" (00/1D), one
 * ATA Status Return descriptor with the count at byte 5, status at 13. */
static void
descriptor_sense (guint8 sense[22], guint8 count, guint8 status, guint8 error)
{
  const guint8 bytes[22] = { 0x72,  0x01, 0x00,  0x1D, 0x00, 0x00, 0x00, 0x0E, 0x09, 0x0C, 0x00,
                             error, 0x00, count, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, status };
  memcpy (sense, bytes, sizeof bytes);
}

static void
test_sense_states (void)
{
  static const struct
  {
    guint8 count;
    LmAtaPower power;
  } cases[] = {
    { 0xFF, LM_ATA_POWER_ACTIVE },  { 0x80, LM_ATA_POWER_ACTIVE },  { 0x81, LM_ATA_POWER_ACTIVE },
    { 0x82, LM_ATA_POWER_ACTIVE },  { 0x83, LM_ATA_POWER_ACTIVE },  { 0x00, LM_ATA_POWER_STANDBY },
    { 0x01, LM_ATA_POWER_STANDBY }, { 0x42, LM_ATA_POWER_UNKNOWN },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      guint8 sense[22];
      LmAtaRegs regs;
      g_autoptr (GError) error = NULL;

      descriptor_sense (sense, cases[i].count, 0x50, 0x00);
      g_assert_true (lm_ata_parse_sense (sense, sizeof sense, &regs, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (regs.status, ==, 0x50);
      g_assert_cmpuint (regs.count, ==, cases[i].count);
      g_assert_cmpuint (regs.device, ==, 0x40);
      g_assert_true (lm_ata_check_regs (&regs, 0xE5, &error));
      g_assert_cmpint (lm_ata_power_from_count (regs.count), ==, cases[i].power);
    }
  g_assert_cmpstr (lm_ata_power_to_string (LM_ATA_POWER_SLEEPING), ==, "sleeping");
}

/* Fixed format (D_SENSE off): registers in INFORMATION (error, status,
 * device, count) and COMMAND-SPECIFIC INFORMATION (LBA). */
static void
test_sense_fixed (void)
{
  static const guint8 standby[18] = { 0x70, 0x00, 0x01, 0x00, 0x50, 0x40, 0x00, 0x0A, 0x00,
                                      0x00, 0x00, 0x00, 0x00, 0x1D, 0x00, 0x00, 0x00, 0x00 };
  static const guint8 active[18] = { 0x70, 0x00, 0x01, 0x00, 0x50, 0x40, 0xFF, 0x0A, 0x00,
                                     0x00, 0x00, 0x00, 0x00, 0x1D, 0x00, 0x00, 0x00, 0x00 };
  LmAtaRegs regs;
  g_autoptr (GError) error = NULL;

  g_assert_true (lm_ata_parse_sense (standby, sizeof standby, &regs, &error));
  g_assert_cmpuint (regs.status, ==, 0x50);
  g_assert_cmpint (lm_ata_power_from_count (regs.count), ==, LM_ATA_POWER_STANDBY);
  g_assert_true (lm_ata_parse_sense (active, sizeof active, &regs, &error));
  g_assert_cmpint (lm_ata_power_from_count (regs.count), ==, LM_ATA_POWER_ACTIVE);
  g_assert_no_error (error);
}

static void
test_sense_failures (void)
{
  LmAtaRegs regs;

  /* The drive aborted 0xE5 (an ATA-1 drive): ERR in status, ABRT in error. */
  {
    guint8 sense[22];
    g_autoptr (GError) error = NULL;

    descriptor_sense (sense, 0x00, 0x51, 0x04);
    sense[1] = 0x0B; /* ABORTED COMMAND */
    sense[3] = 0x00;
    g_assert_true (lm_ata_parse_sense (sense, sizeof sense, &regs, &error));
    g_assert_false (lm_ata_check_regs (&regs, 0xE5, &error));
    g_assert_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED);
    g_assert_nonnull (strstr (error->message, "0xE5"));
  }
  /* Device fault without ABRT: a real failure. */
  {
    guint8 sense[22];
    g_autoptr (GError) error = NULL;

    descriptor_sense (sense, 0x00, 0x71, 0x00);
    g_assert_true (lm_ata_parse_sense (sense, sizeof sense, &regs, &error));
    g_assert_false (lm_ata_check_regs (&regs, 0xEF, &error));
    g_assert_error (error, LM_ERROR, LM_ERROR_KERNEL);
  }
  /* A SCSI disk or a USB bridge without SAT: ILLEGAL REQUEST, invalid
   * opcode (20/00), fixed format, no registers. */
  {
    static const guint8 sense[18] = { 0x70, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x0A, 0x00,
                                      0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00 };
    g_autoptr (GError) error = NULL;
    g_assert_false (lm_ata_parse_sense (sense, sizeof sense, &regs, &error));
    g_assert_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED);
    g_assert_nonnull (strstr (error->message, "0x20/0x00"));
  }
  /* The same in descriptor format: no 0x09 descriptor. */
  {
    static const guint8 sense[8] = { 0x72, 0x05, 0x24, 0x00, 0x00, 0x00, 0x00, 0x00 };
    g_autoptr (GError) error = NULL;
    g_assert_false (lm_ata_parse_sense (sense, sizeof sense, &regs, &error));
    g_assert_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED);
  }
  /* Truncated descriptor, empty, short, unknown format. */
  {
    static const guint8 sense[12]
        = { 0x72, 0x01, 0x00, 0x1D, 0x00, 0x00, 0x00, 0x0E, 0x09, 0x0C, 0x00, 0x00 };
    g_autoptr (GError) error = NULL;
    g_assert_false (lm_ata_parse_sense (sense, sizeof sense, &regs, &error));
    g_assert_error (error, LM_ERROR, LM_ERROR_FAILED);
  }
  {
    static const guint8 sense[4] = { 0x72, 0x01, 0x00, 0x1D };
    g_autoptr (GError) error = NULL;
    g_assert_false (lm_ata_parse_sense (sense, 0, &regs, &error));
    g_assert_error (error, LM_ERROR, LM_ERROR_FAILED);
    g_clear_error (&error);
    g_assert_false (lm_ata_parse_sense (sense, sizeof sense, &regs, &error));
    g_assert_error (error, LM_ERROR, LM_ERROR_FAILED);
  }
  {
    static const guint8 sense[8] = { 0x7F, 0, 0, 0, 0, 0, 0, 0 };
    g_autoptr (GError) error = NULL;
    g_assert_false (lm_ata_parse_sense (sense, sizeof sense, &regs, &error));
    g_assert_error (error, LM_ERROR, LM_ERROR_FAILED);
  }
  /* A descriptor length that points past the buffer is not read. */
  {
    static const guint8 sense[10] = { 0x72, 0x01, 0x00, 0x1D, 0x00, 0x00, 0x00, 0xFF, 0x09, 0xFF };
    g_autoptr (GError) error = NULL;
    g_assert_false (lm_ata_parse_sense (sense, sizeof sense, &regs, &error));
  }
}

static void
test_drive_cmd_result (void)
{
  /* HDIO_DRIVE_CMD hands back status, error, count in args[0..2]. */
  static const guint8 args[4] = { 0x50, 0x00, 0x00, 0x00 };
  LmAtaRegs regs;

  lm_ata_regs_from_drive_cmd (args, &regs);
  g_assert_cmpuint (regs.status, ==, 0x50);
  g_assert_true (lm_ata_check_regs (&regs, 0xE5, NULL));
  g_assert_cmpint (lm_ata_power_from_count (regs.count), ==, LM_ATA_POWER_STANDBY);
}

static void
test_identify_apm (void)
{
  guint8 data[LM_ATA_IDENTIFY_LEN] = { 0 };
  guint level = 0;

  g_assert_false (lm_ata_identify_apm (data, &level)); /* word 83 not valid */
  data[83 * 2] = 0x08;                                 /* APM supported */
  data[83 * 2 + 1] = 0x40;
  g_assert_true (lm_ata_identify_apm (data, &level));
  g_assert_cmpuint (level, ==, 255); /* supported, not enabled */
  data[86 * 2] = 0x08;
  data[91 * 2] = 0x80;
  data[91 * 2 + 1] = 0x40; /* high byte: vendor, ignored */
  g_assert_true (lm_ata_identify_apm (data, &level));
  g_assert_cmpuint (level, ==, 128);
  data[83 * 2] = 0x00;
  g_assert_false (lm_ata_identify_apm (data, &level));
}

/* SMART READ DATA: what smartctl -A sends through SG_IO (PIO in, one
 * sector, feature 0xD0, the 0x4F/0xC2 signature), and its HDIO_DRIVE_CMD
 * block (libata puts the signature in itself). */
static void
test_cdb_smart (void)
{
  static const guint8 want[] = { 0x85, 0x08, 0x0E, 0x00, 0xD0, 0x00, 0x01, 0x00,
                                 0x00, 0x00, 0x4F, 0x00, 0xC2, 0x00, 0xB0, 0x00 };
  static const guint8 want_args[] = { 0xB0, 0x00, 0xD0, 0x01 };
  guint8 cdb[LM_ATA_CDB_LEN], args[4];

  lm_ata_cdb_smart_read_data (cdb);
  assert_bytes (cdb, want, sizeof want);
  lm_ata_drive_cmd_args (args, cdb);
  assert_bytes (args, want_args, sizeof want_args);
}

/* A command woke the drive when it was sent in standby, or took as long
 * as a spin-up (a spin-down between CHECK POWER MODE and it). */
static void
test_command_woke (void)
{
  g_assert_true (lm_ata_command_woke (LM_ATA_POWER_STANDBY, 0));
  g_assert_true (lm_ata_command_woke (LM_ATA_POWER_SLEEPING, 5000));
  g_assert_false (lm_ata_command_woke (LM_ATA_POWER_ACTIVE, 0));
  g_assert_false (lm_ata_command_woke (LM_ATA_POWER_ACTIVE, LM_ATA_SPINUP_MIN_US - 1));
  g_assert_false (lm_ata_command_woke (LM_ATA_POWER_UNKNOWN, 200 * 1000));
  g_assert_true (lm_ata_command_woke (LM_ATA_POWER_ACTIVE, LM_ATA_SPINUP_MIN_US));
  g_assert_true (lm_ata_command_woke (LM_ATA_POWER_UNKNOWN, 4 * G_USEC_PER_SEC));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ata/cdb/smart", test_cdb_smart);
  g_test_add_func ("/ata/cdb/check-power-mode", test_cdb_check_power_mode);
  g_test_add_func ("/ata/cdb/idle", test_cdb_idle);
  g_test_add_func ("/ata/cdb/apm", test_cdb_apm);
  g_test_add_func ("/ata/cdb/identify", test_cdb_identify);
  g_test_add_func ("/ata/standby/invalid", test_standby_invalid);
  g_test_add_func ("/ata/standby/describe", test_standby_describe);
  g_test_add_func ("/ata/sense/states", test_sense_states);
  g_test_add_func ("/ata/sense/fixed", test_sense_fixed);
  g_test_add_func ("/ata/sense/failures", test_sense_failures);
  g_test_add_func ("/ata/drive-cmd", test_drive_cmd_result);
  g_test_add_func ("/ata/identify/apm", test_identify_apm);
  g_test_add_func ("/ata/command/woke", test_command_woke);
  return g_test_run ();
}
