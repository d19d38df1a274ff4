/* fuzz-smart.c: what a drive sends back for SMART READ DATA (lm-smart.c):
 * the page of any length and content, and the projection over the
 * counters it yields. */
#include "lm-ata.h"
#include "lm-fuzz.h"
#include "lm-smart.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* Exactly the bytes given, so AddressSanitizer sees a read past them. */
  g_autofree guint8 *exact = size > 0 ? g_memdup2 (data, size) : NULL;
  g_autoptr (GError) error = NULL;
  LmSmartWear w;
  guint8 sum = 0;

  for (size_t i = 0; i < MIN (size, (size_t) LM_ATA_SMART_LEN); i++)
    sum += data[i];
  gboolean ok = lm_smart_parse (exact, size, &w, &error);
  LM_FUZZ_CHECK (ok == (error == NULL));
  LM_FUZZ_CHECK (ok == (size >= LM_ATA_SMART_LEN && sum == 0));
  if (!ok)
    {
      LM_FUZZ_CHECK (!w.have_load_cycles && !w.have_start_stop && !w.have_power_cycles
                     && !w.have_power_on_hours);
      return 0;
    }
  /* A counter found is in one of the 30 entries, under its id. */
  if (w.have_load_cycles)
    {
      gboolean found = FALSE;
      for (guint i = 0; i < 30 && !found; i++)
        found = data[2 + i * 12] == LM_SMART_LOAD_CYCLES;
      LM_FUZZ_CHECK (found);
      /* The projection stays finite and never negative where it exists. */
      double rate = lm_smart_cycles_per_day (w.power_cycles, w.load_cycles,
                                             w.have_power_on_hours ? w.power_on_hours / 24.0 : 1);
      double days
          = lm_smart_days_to_rating (w.load_cycles, rate, LM_SMART_DEFAULT_LOAD_CYCLE_RATING);
      LM_FUZZ_CHECK (rate == -1 || rate >= 0);
      LM_FUZZ_CHECK (days == -1 || days >= 0);
    }
  return 0;
}
