/* fuzz-nvme.c: what an NVMe controller sends back (lm-nvme.c): the first
 * four bytes as the completion's dword 0, the rest as Identify Controller
 * data and as the APST table, of any length. */
#include "lm-fuzz.h"
#include "lm-nvme.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  guint32 result = 0;
  LmNvmeIdentify id;
  LmNvmeApst apst;
  guint ps, wh;

  if (size >= 4)
    memcpy (&result, data, 4);
  const uint8_t *body = size >= 4 ? data + 4 : NULL;
  size_t len = size >= 4 ? size - 4 : 0;
  /* Exactly the bytes given, so AddressSanitizer sees a read past them. */
  g_autofree guint8 *exact = len > 0 ? g_memdup2 (body, len) : NULL;

  g_autoptr (GError) error = NULL;
  gboolean ok = lm_nvme_parse_identify (exact, len, &id, &error);
  LM_FUZZ_CHECK (ok == (error == NULL));
  LM_FUZZ_CHECK (ok == (len >= LM_NVME_IDENTIFY_LEN && exact[263] < LM_NVME_MAX_STATES));
  if (ok)
    {
      LM_FUZZ_CHECK (id.n_states >= 1 && id.n_states <= LM_NVME_MAX_STATES);
      LM_FUZZ_CHECK (g_utf8_validate (id.model, -1, NULL) && g_utf8_validate (id.serial, -1, NULL)
                     && g_utf8_validate (id.firmware, -1, NULL));
      for (guint i = 0; i < id.n_states; i++)
        {
          LM_FUZZ_CHECK (id.states[i].max_power_uw <= 65535u * 10000u);
          g_autofree char *text = lm_nvme_power_describe (id.states[i].max_power_uw);
          LM_FUZZ_CHECK (g_str_has_suffix (text, " W"));
        }
      for (guint i = id.n_states; i < LM_NVME_MAX_STATES; i++)
        LM_FUZZ_CHECK (id.states[i].max_power_uw == 0 && id.states[i].exit_lat_us == 0);
    }
  else
    LM_FUZZ_CHECK (error->message != NULL && *error->message != '\0');

  g_autoptr (GError) apst_error = NULL;
  ok = lm_nvme_parse_apst (result, exact, len, &apst, &apst_error);
  LM_FUZZ_CHECK (ok == (len >= LM_NVME_APST_LEN));
  LM_FUZZ_CHECK (ok == (apst_error == NULL));
  if (ok)
    {
      LM_FUZZ_CHECK (apst.enabled == ((result & 1) != 0));
      for (guint i = 0; i < LM_NVME_MAX_STATES; i++)
        LM_FUZZ_CHECK (apst.entries[i].target <= 31 && apst.entries[i].idle_ms <= 0xFFFFFF);
    }

  lm_nvme_parse_power_mgmt (result, &ps, &wh);
  LM_FUZZ_CHECK (ps <= 31 && wh <= 7);
  return 0;
}
