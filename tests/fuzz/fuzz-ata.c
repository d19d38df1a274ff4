/* fuzz-ata.c: what a drive or bridge sends back (lm-ata.c): sense data of
 * any length and format, IDENTIFY data, the standby timer byte. */
#include "lm-ata.h"
#include "lm-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree guint8 *sense = g_memdup2 (data, size);
  g_autoptr (GError) error = NULL;
  LmAtaRegs regs;

  if (lm_ata_parse_sense (sense, size, &regs, &error))
    {
      LM_FUZZ_CHECK (error == NULL);
      g_autoptr (GError) check_error = NULL;
      gboolean ok = lm_ata_check_regs (&regs, LM_ATA_CHECK_POWER_MODE, &check_error);
      LM_FUZZ_CHECK (ok == (check_error == NULL));
      lm_ata_power_from_count (regs.count);
    }
  else
    LM_FUZZ_CHECK (error != NULL && error->message != NULL);

  /* IDENTIFY: the input, zero-padded as lm-sgio.c zeroes its buffer. */
  g_autofree guint8 *identify = g_malloc0 (LM_ATA_IDENTIFY_LEN);
  if (size > 0) /* an empty input may come as NULL */
    memcpy (identify, data, MIN (size, (size_t) LM_ATA_IDENTIFY_LEN));
  guint level = 0;
  if (lm_ata_identify_apm (identify, &level))
    LM_FUZZ_CHECK (level >= 1 && level <= LM_ATA_APM_OFF);

  /* The standby byte: decode and encode are inverse where both exist. */
  if (size > 0)
    {
      guint seconds;
      guint8 again;
      g_autofree char *text = lm_ata_standby_describe (data[0]);
      LM_FUZZ_CHECK (text != NULL && *text != '\0');
      if (lm_ata_standby_decode (data[0], &seconds))
        {
          LM_FUZZ_CHECK (lm_ata_standby_encode (seconds, &again, NULL));
          LM_FUZZ_CHECK (again == data[0]);
        }
    }
  if (size >= 4)
    {
      guint32 seconds;
      guint8 value;
      guint back;
      memcpy (&seconds, data, sizeof seconds);
      seconds %= 40000;
      if (lm_ata_standby_encode (seconds, &value, NULL))
        {
          LM_FUZZ_CHECK (lm_ata_standby_decode (value, &back));
          LM_FUZZ_CHECK (back == seconds);
        }
    }
  return 0;
}
