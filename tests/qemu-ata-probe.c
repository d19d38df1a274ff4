/* qemu-ata-probe.c: runs in tests/qemu-ata-check's guest against an emulated
 * ATA disk, through the daemon's own lm-sgio/lm-ata code and the real
 * ioctls; prints key=value facts and never decides pass or fail itself. */
#include <stdio.h>

#include "lm-ata.h"
#include "lm-error.h"
#include "lm-sgio.h"

/* The daemon's lm-error.c registers D-Bus names through GIO, which does
 * not link statically here; the probe needs only the quark. */
GQuark lm_error_quark (void);

GQuark
lm_error_quark (void)
{
  return g_quark_from_static_string ("lm-error-quark");
}

static void
fact (const char *key, const char *value)
{
  printf ("%s=%s\n", key, value);
  fflush (stdout);
}

static void
command (LmSgio *dev, const char *key, const guint8 cdb[LM_ATA_CDB_LEN])
{
  g_autoptr (GError) error = NULL;
  LmAtaRegs regs;

  fact (key, lm_sgio_command (dev, cdb, NULL, 0, &regs, &error) ? "ok" : error->message);
}

/* IDENTIFY's APM level as @key=<level>, or the reason there is none;
 * @key_supported=yes|no says which (no: the device does not advertise APM). */
static void
read_apm (LmSgio *dev, const char *key)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *supported = g_strconcat (key, "_supported", NULL);
  guint apm;

  if (lm_sgio_read_apm (dev, &apm, &error))
    {
      g_autofree char *v = g_strdup_printf ("%u", apm);
      fact (key, v);
      fact (supported, "yes");
      return;
    }
  fact (key, error->message);
  fact (supported, g_error_matches (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED) ? "no" : "error");
}

int
main (int argc, char **argv)
{
  const char *path = argc > 1 ? argv[1] : "/dev/sda";
  g_autoptr (GError) error = NULL;
  guint8 cdb[LM_ATA_CDB_LEN];
  LmAtaPower power;

  g_autoptr (LmSgio) dev = lm_sgio_open (path, &error);
  if (dev == NULL)
    {
      fact ("open", error->message);
      return 1;
    }
  fact ("backend", lm_sgio_backend (dev));

  /* SG_IO ATA PASS-THROUGH(16), as the daemon sends it. */
  if (lm_sgio_check_power (dev, &power, &error))
    fact ("check_power", lm_ata_power_to_string (power));
  else
    fact ("check_power", error->message);
  g_clear_error (&error);

  /* HDIO_DRIVE_CMD alone: the fallback path, through libata's ioctl. */
  guint8 args[4];
  LmAtaRegs regs;
  lm_ata_cdb_check_power_mode (cdb, FALSE);
  lm_ata_drive_cmd_args (args, cdb);
  gpointer handle = lm_sgio_real.open (path, NULL);
  int rc = handle != NULL ? lm_sgio_real.drive_cmd (handle, args, sizeof args) : -1;
  if (handle != NULL)
    lm_sgio_real.close (handle);
  lm_ata_regs_from_drive_cmd (args, &regs);
  g_autofree char *dc
      = g_strdup_printf ("rc=%d status=0x%02x count=0x%02x power=%s", rc, regs.status, regs.count,
                         lm_ata_power_to_string (lm_ata_power_from_count (regs.count)));
  fact ("drive_cmd", dc);

  read_apm (dev, "apm");

  lm_ata_cdb_idle (cdb, 4);
  command (dev, "idle_timer_20s", cdb);
  lm_ata_cdb_apm (cdb, 128);
  command (dev, "apm_128", cdb);
  /* What the device says now: 128 where it implements APM. */
  read_apm (dev, "apm_after");

  if (lm_sgio_check_power (dev, &power, &error))
    fact ("check_power_after", lm_ata_power_to_string (power));
  else
    fact ("check_power_after", error->message);
  return 0;
}
