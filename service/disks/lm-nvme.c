/* lm-nvme.c: NVMe admin commands as bytes and the controller's answers back
 * as values. Pure functions over byte arrays, unit-tested on recorded bytes
 * (tests/data/nvme); it never touches a device (lm-nvme-admin.c does). */
#include "lm-nvme.h"

#include <string.h>

#include "lm-error.h"

/* Identify Controller (NVMe base spec, Figure "Identify Controller Data
 * Structure"; the kernel's struct nvme_id_ctrl). */
#define ID_SN 4
#define ID_MN 24
#define ID_FR 64
#define ID_NPSS 263
#define ID_APSTA 265
#define ID_PSD 2048
#define PSD_LEN 32
/* Power State Descriptor (struct nvme_id_power_state). */
#define PSD_MP 0
#define PSD_FLAGS 3
#define PSD_ENLAT 4
#define PSD_EXLAT 8
#define PSD_IDLP 16
#define PSD_IPS 18
#define PSD_ACTP 20
#define PSD_APS 22
#define PSD_FLAG_MPS 0x01
#define PSD_FLAG_NOPS 0x02
/* APST table entry: ITPS in bits 7:3, ITPT in bits 31:8. */
#define APST_ENTRY_LEN 8

static guint16
le16 (const guint8 *p)
{
  return (guint16) (p[0] | (p[1] << 8));
}

static guint32
le32 (const guint8 *p)
{
  return (guint32) p[0] | ((guint32) p[1] << 8) | ((guint32) p[2] << 16) | ((guint32) p[3] << 24);
}

void
lm_nvme_command_identify (LmNvmeCommand *cmd)
{
  memset (cmd, 0, sizeof *cmd);
  cmd->opcode = LM_NVME_ADMIN_IDENTIFY;
  cmd->cdw10 = LM_NVME_CNS_CTRL;
  cmd->data_len = LM_NVME_IDENTIFY_LEN;
}

/* SEL 0 (current value). Only APST transfers data. */
void
lm_nvme_command_get_features (LmNvmeCommand *cmd, guint8 feature)
{
  memset (cmd, 0, sizeof *cmd);
  cmd->opcode = LM_NVME_ADMIN_GET_FEATURES;
  cmd->cdw10 = feature;
  cmd->data_len = feature == LM_NVME_FEAT_APST ? LM_NVME_APST_LEN : 0;
}

/* ASCII fields are space-padded; anything unprintable is shown as '?', so
 * the D-Bus layer never meets invalid UTF-8 from a controller. */
static void
copy_ascii (char *out, const guint8 *in, gsize len)
{
  gsize end = len;

  while (end > 0 && (in[end - 1] == ' ' || in[end - 1] == '\0'))
    end--;
  for (gsize i = 0; i < end; i++)
    out[i] = (in[i] >= 0x20 && in[i] < 0x7F) ? (char) in[i] : '?';
  out[end] = '\0';
}

/* IDLP and ACTP carry their scale in bits 7:6 of the byte after them:
 * 0 not reported, 1 units of 0.0001 W, 2 of 0.01 W, 3 reserved. */
static gboolean
scaled_power (guint32 value, guint8 scale_byte, guint32 *uw)
{
  switch (scale_byte >> 6)
    {
      case 1:
        *uw = value * 100;
        return TRUE;
      case 2:
        *uw = value * 10000;
        return TRUE;
      default:
        *uw = 0;
        return FALSE;
    }
}

gboolean
lm_nvme_parse_identify (const guint8 *data, gsize len, LmNvmeIdentify *id, GError **error)
{
  memset (id, 0, sizeof *id);
  if (data == NULL || len < LM_NVME_IDENTIFY_LEN)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL,
                   "Identify Controller data is %zu bytes, expected %d", data ? len : 0,
                   LM_NVME_IDENTIFY_LEN);
      return FALSE;
    }
  /* NPSS is a 0-based count: 31 is the most the descriptor array holds. */
  guint npss = data[ID_NPSS];
  if (npss >= LM_NVME_MAX_STATES)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL,
                   "Identify Controller reports %u power states, at most %d exist", npss + 1,
                   LM_NVME_MAX_STATES);
      return FALSE;
    }
  copy_ascii (id->serial, data + ID_SN, 20);
  copy_ascii (id->model, data + ID_MN, 40);
  copy_ascii (id->firmware, data + ID_FR, 8);
  id->n_states = npss + 1;
  id->apst_supported = (data[ID_APSTA] & 0x01) != 0;
  for (guint i = 0; i < id->n_states; i++)
    {
      const guint8 *psd = data + ID_PSD + i * PSD_LEN;
      LmNvmePowerState *ps = &id->states[i];
      guint32 mp = le16 (psd + PSD_MP);

      /* MPS set: units of 0.0001 W, else 0.01 W. */
      ps->max_power_uw = (psd[PSD_FLAGS] & PSD_FLAG_MPS) ? mp * 100 : mp * 10000;
      ps->operational = (psd[PSD_FLAGS] & PSD_FLAG_NOPS) == 0;
      ps->entry_lat_us = le32 (psd + PSD_ENLAT);
      ps->exit_lat_us = le32 (psd + PSD_EXLAT);
      ps->have_idle_power = scaled_power (le16 (psd + PSD_IDLP), psd[PSD_IPS], &ps->idle_power_uw);
      ps->have_active_power
          = scaled_power (le16 (psd + PSD_ACTP), psd[PSD_APS], &ps->active_power_uw);
    }
  return TRUE;
}

gboolean
lm_nvme_parse_apst (guint32 result, const guint8 *data, gsize len, LmNvmeApst *apst, GError **error)
{
  memset (apst, 0, sizeof *apst);
  if (data == NULL || len < LM_NVME_APST_LEN)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "The APST table is %zu bytes, expected %d",
                   data ? len : 0, LM_NVME_APST_LEN);
      return FALSE;
    }
  apst->enabled = (result & 0x01) != 0;
  for (guint i = 0; i < LM_NVME_MAX_STATES; i++)
    {
      guint32 entry = le32 (data + i * APST_ENTRY_LEN);
      apst->entries[i].target = (entry >> 3) & 0x1F;
      apst->entries[i].idle_ms = entry >> 8;
    }
  return TRUE;
}

void
lm_nvme_parse_power_mgmt (guint32 result, guint *state, guint *workload_hint)
{
  *state = result & 0x1F;
  if (workload_hint != NULL)
    *workload_hint = (result >> 5) & 0x07;
}

char *
lm_nvme_power_describe (guint32 max_power_uw)
{
  /* Both scales print exactly: 0.01 W units as two decimals, finer as four. */
  if (max_power_uw % 10000 == 0)
    return g_strdup_printf ("%u.%02u W", max_power_uw / 1000000, (max_power_uw / 10000) % 100);
  return g_strdup_printf ("%u.%04u W", max_power_uw / 1000000, (max_power_uw / 100) % 10000);
}
