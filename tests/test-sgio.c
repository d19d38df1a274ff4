/* test-sgio.c: the whole path through lm-sgio.c with its scripted fake
 * drive (tests/lm-fake-ata.c): IDENTIFY and SMART transfers through each
 * ioctl, and commands sent only to a drive that is awake. The bytes
 * themselves are test-ata.c's. */
#include <string.h>

#include <glib/gstdio.h>

#include "lm-ata.h"
#include "lm-error.h"
#include "lm-fake-ata.h"
#include "lm-sgio.h"
#include "lm-smart.h"

/* The whole path through lm-sgio.c with its scripted fake drive: a
 * bridge that transfers less IDENTIFY data than asked (and says "good")
 * must not have the rest of the buffer read as an APM level. */
static char *
fake_drive (const char *dir, const char *extra)
{
  g_autofree char *path = g_build_filename (dir, "sda", NULL);
  g_autofree char *text = g_strdup_printf ("# laptop-moded fake ATA device\n[FakeAta]\n"
                                           "Power=active\nAPM=128\n%s",
                                           extra);

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return g_steal_pointer (&path);
}

static void
test_identify_transfer (void)
{
  g_autofree char *dir = g_dir_make_tmp ("lm-test-ata-XXXXXX", NULL);
  static const char *const interfaces[] = { "Interface=sgio\n", "Interface=drive_cmd\n" };

  /* Complete answers, through either ioctl. */
  for (gsize i = 0; i < G_N_ELEMENTS (interfaces); i++)
    {
      g_autofree char *path = fake_drive (dir, interfaces[i]);
      g_autoptr (GError) error = NULL;
      g_autoptr (LmSgio) dev = lm_sgio_open (path, &error);
      guint level = 0;

      g_assert_no_error (error);
      g_assert_true (lm_sgio_read_apm (dev, &level, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (level, ==, 128);
    }

  /* Short: word 83 (bytes 166-167) or word 91 never arrived. */
  static const guint lengths[] = { 0, 100, 167, 183, 511 };
  for (gsize i = 0; i < G_N_ELEMENTS (lengths); i++)
    {
      g_autofree char *extra = g_strdup_printf ("IdentifyLength=%u\n", lengths[i]);
      g_autofree char *path = fake_drive (dir, extra);
      g_autoptr (GError) error = NULL;
      g_autoptr (LmSgio) dev = lm_sgio_open (path, &error);
      guint level = 0;

      g_assert_false (lm_sgio_read_apm (dev, &level, &error));
      g_assert_error (error, LM_ERROR, LM_ERROR_KERNEL);
      g_autofree char *want = g_strdup_printf ("transferred %u of 512 bytes", lengths[i]);
      g_assert_nonnull (strstr (error->message, want));
    }

  g_autofree char *path = g_build_filename (dir, "sda", NULL);
  g_autofree char *log = g_build_filename (dir, "sda.log", NULL);
  g_unlink (path);
  g_unlink (log);
  g_rmdir (dir);
}

/* The page the fake drive builds, read back through each ioctl; a drive
 * without SMART aborts and that is an error, not zeros. */
static void
test_smart_transfer (void)
{
  g_autofree char *dir = g_dir_make_tmp ("lm-test-ata-XXXXXX", NULL);
  static const char *const interfaces[] = { "Interface=sgio\n", "Interface=drive_cmd\n" };
  /* CHECK POWER MODE right before, in the same step. */
  static const char *const logged[]
      = { "sgio E5 00 00\nsgio B0 D0 01\n", "drive_cmd E5 00 00\ndrive_cmd B0 D0 00\n" };

  for (gsize i = 0; i < G_N_ELEMENTS (interfaces); i++)
    {
      g_autofree char *extra
          = g_strdup_printf ("%sSmart=4:1021;9:17520;12:990;193:4294967295\n", interfaces[i]);
      g_autofree char *path = fake_drive (dir, extra);
      g_autofree char *log = g_strconcat (path, ".log", NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (LmSgio) dev = lm_sgio_open (path, &error);
      guint8 page[LM_ATA_SMART_LEN];
      LmSmartWear wear;
      g_autofree char *text = NULL;

      LmAtaPower before;
      gint64 took_us;

      g_unlink (log);
      g_assert_true (lm_sgio_read_smart (dev, page, &before, &took_us, &error));
      g_assert_no_error (error);
      g_assert_true (lm_smart_parse (page, sizeof page, &wear, &error));
      g_assert_true (wear.have_start_stop && wear.have_power_on_hours && wear.have_power_cycles
                     && wear.have_load_cycles);
      g_assert_cmpuint (wear.start_stop, ==, 1021);
      g_assert_cmpuint (wear.power_on_hours, ==, 17520);
      g_assert_cmpuint (wear.power_cycles, ==, 990);
      g_assert_cmpuint (wear.load_cycles, ==, G_MAXUINT32);
      g_assert_true (g_file_get_contents (log, &text, NULL, NULL));
      g_assert_cmpstr (text, ==, logged[i]);
    }

  g_autofree char *path = fake_drive (dir, "");
  g_autoptr (GError) error = NULL;
  g_autoptr (LmSgio) dev = lm_sgio_open (path, &error);
  guint8 page[LM_ATA_SMART_LEN];
  LmAtaPower before;
  gint64 took_us;
  g_assert_false (lm_sgio_read_smart (dev, page, &before, &took_us, &error));
  g_assert_nonnull (error);

  g_autofree char *log = g_build_filename (dir, "sda.log", NULL);
  g_unlink (path);
  g_unlink (log);
  g_rmdir (dir);
}

static char *
read_log (const char *path)
{
  g_autofree char *log = g_strconcat (path, ".log", NULL);
  char *text = NULL;

  if (!g_file_get_contents (log, &text, NULL, NULL))
    return g_strdup ("");
  g_unlink (log);
  return text;
}

/* lm_sgio_command_awake(): a drive in standby is sent nothing after CHECK
 * POWER MODE; one whose timer runs out between the check and the command
 * is sent the command, which spins it up, and how long it took says so. */
static void
test_command_awake (void)
{
  g_autofree char *dir = g_dir_make_tmp ("lm-test-ata-XXXXXX", NULL);
  guint8 cdb[LM_ATA_CDB_LEN];
  LmAtaRegs regs;
  LmAtaPower before;
  gint64 took_us;

  lm_ata_cdb_idle (cdb, 4);
  {
    g_autofree char *path = fake_drive (dir, "SpinUpMs=1100\n");
    g_autoptr (GError) error = NULL;
    g_autoptr (LmSgio) dev = lm_sgio_open (path, &error);
    g_autofree char *text = NULL;

    g_assert_true (
        lm_sgio_command_awake (dev, cdb, NULL, 0, FALSE, &regs, &before, &took_us, &error));
    g_assert_no_error (error);
    g_assert_cmpint (before, ==, LM_ATA_POWER_ACTIVE);
    g_assert_false (lm_ata_command_woke (before, took_us));
    text = read_log (path);
    g_assert_cmpstr (text, ==, "sgio E5 00 00\nsgio E3 00 04\n");
    g_unlink (path);
  }
  {
    g_autofree char *path = fake_drive (dir, "SpinUpMs=1100\n");
    g_autofree char *standby = g_strdup_printf ("# laptop-moded fake ATA device\n[FakeAta]\n"
                                                "Power=standby\nSpinUpMs=1100\n");
    g_autoptr (GError) error = NULL;
    g_autofree char *text = NULL;

    g_assert_true (g_file_set_contents (path, standby, -1, NULL));
    g_autoptr (LmSgio) dev = lm_sgio_open (path, &error);
    g_assert_false (
        lm_sgio_command_awake (dev, cdb, NULL, 0, FALSE, &regs, &before, &took_us, &error));
    g_assert_error (error, LM_ERROR, LM_ERROR_BUSY);
    g_assert_cmpint (before, ==, LM_ATA_POWER_STANDBY);
    g_assert_cmpint (took_us, ==, 0);
    text = read_log (path);
    g_assert_cmpstr (text, ==, "sgio E5 00 00\n");
    g_unlink (path);
  }
  {
    g_autofree char *path = fake_drive (dir, "SpinUpMs=1100\nStandbyBefore=E3\n");
    g_autoptr (GError) error = NULL;
    g_autoptr (LmSgio) dev = lm_sgio_open (path, &error);
    g_autofree char *text = NULL;
    g_autofree char *after = NULL;

    g_assert_true (
        lm_sgio_command_awake (dev, cdb, NULL, 0, FALSE, &regs, &before, &took_us, &error));
    g_assert_no_error (error);
    g_assert_cmpint (before, ==, LM_ATA_POWER_ACTIVE);
    g_assert_cmpint (took_us, >=, 1100 * 1000);
    g_assert_true (lm_ata_command_woke (before, took_us));
    text = read_log (path);
    g_assert_cmpstr (text, ==, "sgio E5 00 00\nsgio E3 00 04\n");
    g_assert_true (g_file_get_contents (path, &after, NULL, NULL));
    g_assert_nonnull (strstr (after, "Power=active"));
    g_unlink (path);
  }
  {
    /* SMART only to a drive that said it is awake: one that cannot say
     * (this one aborts everything) is not read; IDLE and SET FEATURES are
     * sent as before the check. */
    g_autofree char *path = fake_drive (dir, "Smart=193:5\nRefuse=true\n");
    g_autoptr (GError) error = NULL;
    g_autoptr (LmSgio) dev = lm_sgio_open (path, &error);
    guint8 page[LM_ATA_SMART_LEN];
    g_autofree char *text = NULL;

    g_assert_false (lm_sgio_read_smart (dev, page, &before, &took_us, &error));
    g_assert_nonnull (error);
    g_assert_cmpint (took_us, ==, 0);
    text = read_log (path);
    g_assert_null (strstr (text, "B0"));
    g_clear_error (&error);
    g_assert_false (
        lm_sgio_command_awake (dev, cdb, NULL, 0, FALSE, &regs, &before, &took_us, &error));
    g_assert_nonnull (error);
    g_assert_cmpint (before, ==, LM_ATA_POWER_UNKNOWN);
    g_free (text);
    text = read_log (path);
    g_assert_nonnull (strstr (text, "sgio E3 00 04"));
    g_unlink (path);
  }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  lm_fake_ata_install ();
  g_test_add_func ("/ata/identify/transfer", test_identify_transfer);
  g_test_add_func ("/ata/smart/transfer", test_smart_transfer);
  g_test_add_func ("/ata/command/awake", test_command_awake);
  return g_test_run ();
}
