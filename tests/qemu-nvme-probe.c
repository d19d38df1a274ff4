/* qemu-nvme-probe.c: runs in a qemu guest against an emulated NVMe drive
 * (-device nvme), through the daemon's own lm-nvme/lm-nvme-admin code and
 * the real NVME_IOCTL_ADMIN_CMD; prints the raw answers as hex (the
 * recordings in tests/data/nvme) and the parsed values as key=value facts. */
#include <stdio.h>

#include "lm-error.h"
#include "lm-nvme-admin.h"
#include "lm-nvme.h"

/* Linked without GIO and lm-paths.c: only the quark and the root "/". */
GQuark lm_error_quark (void);
char *lm_path (const char *system_path);

GQuark
lm_error_quark (void)
{
  return g_quark_from_static_string ("lm-error-quark");
}

char *
lm_path (const char *system_path)
{
  return g_strdup (system_path);
}

static void
hex (const char *key, guint32 result, const guint8 *data, gsize len)
{
  printf ("%s.result=0x%08x\n", key, result);
  for (gsize off = 0; off < len; off += 32)
    {
      printf ("%s.hex=", key);
      for (gsize i = off; i < off + 32 && i < len; i++)
        printf ("%02x", data[i]);
      printf ("\n");
    }
  fflush (stdout);
}

/* The raw command, outside lm_nvme_admin_read, so the recording is the
 * controller's bytes and nothing the parser did. */
static void
raw (gpointer handle, const char *key, const LmNvmeCommand *cmd)
{
  g_autofree guint8 *data = g_malloc0 (MAX (cmd->data_len, 1));
  guint32 result = 0;
  int rc = lm_nvme_admin_real.admin (handle, cmd, cmd->data_len ? data : NULL, &result);

  printf ("%s.rc=%d\n", key, rc);
  if (rc == 0)
    hex (key, result, data, cmd->data_len);
}

int
main (int argc, char **argv)
{
  const char *disk = argc > 1 ? argv[1] : "nvme0n1";
  g_autofree char *ctrl = lm_nvme_admin_controller (disk);
  g_autoptr (GError) error = NULL;
  LmNvmeReading reading = { 0 };
  LmNvmeCommand cmd;

  printf ("controller=%s\n", ctrl != NULL ? ctrl : "(none)");
  if (ctrl == NULL)
    return 1;
  gpointer handle = lm_nvme_admin_real.open (ctrl, &error);
  if (handle == NULL)
    {
      printf ("open=%s\n", error->message);
      return 1;
    }
  lm_nvme_command_identify (&cmd);
  raw (handle, "identify", &cmd);
  lm_nvme_command_get_features (&cmd, LM_NVME_FEAT_APST);
  raw (handle, "apst", &cmd);
  lm_nvme_command_get_features (&cmd, LM_NVME_FEAT_POWER_MGMT);
  raw (handle, "power_mgmt", &cmd);
  lm_nvme_admin_real.close (handle);

  if (!lm_nvme_admin_read (ctrl, &reading, &error))
    printf ("read=%s\n", error->message);
  else
    printf ("read=ok\n");
  printf ("model=%s\nserial=%s\nfirmware=%s\n", reading.identify.model, reading.identify.serial,
          reading.identify.firmware);
  printf ("states=%u\napst_supported=%d\n", reading.identify.n_states,
          reading.identify.apst_supported);
  for (guint i = 0; i < reading.identify.n_states; i++)
    {
      const LmNvmePowerState *ps = &reading.identify.states[i];
      printf ("ps%u=mp_uw:%u enlat:%u exlat:%u operational:%d\n", i, ps->max_power_uw,
              ps->entry_lat_us, ps->exit_lat_us, ps->operational);
    }
  printf ("have_apst=%d apst_enabled=%d\n", reading.have_apst, reading.apst.enabled);
  printf ("have_state=%d state=%u workload_hint=%u\n", reading.have_state, reading.state,
          reading.workload_hint);
  fflush (stdout);
  return 0;
}
