/* lm-nvme.h: NVMe admin commands as bytes and their answers as values:
 * Identify Controller's power states, APST and Power Management features.
 * Pure: it must never open a device or send anything (lm-nvme-admin.c does). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define LM_NVME_IDENTIFY_LEN 4096
#define LM_NVME_APST_LEN 256
#define LM_NVME_MAX_STATES 32

/* Admin opcodes and feature ids this project sends; all only read. */
#define LM_NVME_ADMIN_IDENTIFY 0x06
#define LM_NVME_ADMIN_GET_FEATURES 0x0A
#define LM_NVME_CNS_CTRL 0x01
#define LM_NVME_FEAT_POWER_MGMT 0x02
#define LM_NVME_FEAT_APST 0x0C

typedef struct
{
  guint32 max_power_uw; /* MP in microwatts (MPS picks 0.01 W or 0.0001 W units) */
  guint32 entry_lat_us; /* ENLAT */
  guint32 exit_lat_us;  /* EXLAT */
  gboolean operational; /* NOPS clear */
  /* IDLP and ACTP where the drive reports them (their scale not 0). */
  gboolean have_idle_power, have_active_power;
  guint32 idle_power_uw, active_power_uw;
} LmNvmePowerState;

typedef struct
{
  char model[41]; /* MN, trimmed, valid UTF-8 not guaranteed */
  char serial[21];
  char firmware[9];
  guint n_states; /* NPSS + 1 */
  gboolean apst_supported;
  LmNvmePowerState states[LM_NVME_MAX_STATES];
} LmNvmeIdentify;

typedef struct
{
  guint32 idle_ms; /* ITPT; 0: no transition from this state */
  guint target;    /* ITPS */
} LmNvmeApstEntry;

typedef struct
{
  gboolean enabled; /* APSTE, dword 0 bit 0 */
  LmNvmeApstEntry entries[LM_NVME_MAX_STATES];
} LmNvmeApst;

/* One admin command, as the kernel's struct nvme_passthru_cmd has it. */
typedef struct
{
  guint8 opcode;
  guint32 nsid;
  guint32 cdw10;
  guint32 data_len;
} LmNvmeCommand;

void lm_nvme_command_identify (LmNvmeCommand *cmd);
void lm_nvme_command_get_features (LmNvmeCommand *cmd, guint8 feature);

/* @len is what the controller transferred; anything short of 4096 bytes is
 * refused, as is an NPSS the power state array cannot hold. */
gboolean lm_nvme_parse_identify (const guint8 *data, gsize len, LmNvmeIdentify *id, GError **error);
/* Dword 0 of Get Features APST and the 256-byte table it transferred. */
gboolean lm_nvme_parse_apst (guint32 result, const guint8 *data, gsize len, LmNvmeApst *apst,
                             GError **error);
/* Dword 0 of Get Features Power Management: PS (bits 4:0), WH (7:5). */
void lm_nvme_parse_power_mgmt (guint32 result, guint *state, guint *workload_hint);

/* "0.0450 W" or "25.00 W", as nvme-cli prints MP. */
char *lm_nvme_power_describe (guint32 max_power_uw);

G_END_DECLS
