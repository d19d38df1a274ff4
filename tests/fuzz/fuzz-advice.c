/* fuzz-advice.c: a table of known causes (lm-advice.c) as an administrator
 * may write it under /etc/laptop-moded/causes.d: any bytes, then every
 * entry taken matched against causes of every kind, filled in. */
#include "lm-advice.h"
#include "lm-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* Exactly the bytes given, so AddressSanitizer sees a read past them. */
  g_autofree char *exact = size > 0 ? g_memdup2 (data, size) : NULL;
  g_autoptr (LmAdvice) advice = lm_advice_new ();
  g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;

  gint taken = lm_advice_add_data (advice, exact, size, "fuzz.conf", warnings, &error);
  LM_FUZZ_CHECK ((taken < 0) == (error != NULL));
  LM_FUZZ_CHECK (taken < 0 || (guint) taken == lm_advice_size (advice));
  LM_FUZZ_CHECK (lm_advice_size (advice) <= LM_ADVICE_MAX_ENTRIES);
  if (taken <= 0)
    return 0;
  /* The same bytes again add nothing: each name is taken once. */
  g_autoptr (GError) again = NULL;
  LM_FUZZ_CHECK (lm_advice_add_data (advice, exact, size, "again.conf", NULL, &again) == 0);

  static const char *const one[] = { "/home/u/.cache/x", NULL };
  static const char *const two[] = { "/var/log/journal/a/system.journal", "b{file}", NULL };
  const LmRhythm periodic = { LM_RHYTHM_PERIODIC, 30, 31, 0 };
  const LmRhythm daily = { LM_RHYTHM_DAILY, 0, 0, 385 };
  const LmAdviceCause causes[] = {
    { "jbd2/sda1-8", NULL, NULL, "kernel", NULL, "sda", NULL },
    { "firefox-esr", "Cache2 I/O", "app-firefox.scope", "writeback", one, "sda", &periodic },
    { "{program}", "{unit}", "{file}", "direct", two, "{device}", &daily },
    { "x", NULL, NULL, "passthrough", NULL, NULL, NULL },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (causes); i++)
    {
      LmAdviceMatch m;
      if (lm_advice_match (advice, &causes[i], &m))
        {
          LM_FUZZ_CHECK (m.id != NULL && m.what != NULL && m.avoid != NULL);
          /* Filled in once: a name that looks like a placeholder stays as it is. */
          LM_FUZZ_CHECK (strlen (m.what) <= LM_ADVICE_MAX_TEXT * 64);
          lm_advice_match_clear (&m);
        }
      else
        LM_FUZZ_CHECK (m.id == NULL && m.what == NULL);
    }
  return 0;
}
