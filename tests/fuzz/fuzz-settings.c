/* fuzz-settings.c: the config file (lm-settings.c, lm-disk-policy.c).
 * Whatever loads must save and load again to the same settings, and a
 * second save must write the same bytes as the first. */
#include <glib/gstdio.h>

#include "lm-fuzz.h"
#include "lm-settings.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *path = g_build_filename (lm_fuzz_scratch_dir (), "laptop-moded.conf", NULL);
  g_autoptr (GError) error = NULL;

  LM_FUZZ_CHECK (g_file_set_contents (path, (const char *) data, (gssize) size, NULL));
  g_autoptr (LmSettings) first = lm_settings_load (path, &error);
  if (first == NULL)
    {
      LM_FUZZ_CHECK (error != NULL);
      g_unlink (path);
      return 0;
    }
  LM_FUZZ_CHECK (lm_settings_save (first, path, &error));
  g_autofree char *saved = NULL;
  LM_FUZZ_CHECK (g_file_get_contents (path, &saved, NULL, NULL));

  g_autoptr (LmSettings) second = lm_settings_load (path, &error);
  if (second == NULL)
    {
      fprintf (stderr, "Saved settings do not load again: %s\n--- saved:\n%s\n", error->message,
               saved);
      abort ();
    }
  LM_FUZZ_CHECK (lm_settings_equal (first, second));

  LM_FUZZ_CHECK (lm_settings_save (second, path, &error));
  g_autofree char *again = NULL;
  LM_FUZZ_CHECK (g_file_get_contents (path, &again, NULL, NULL));
  LM_FUZZ_CHECK (g_str_equal (saved, again));
  g_unlink (path);
  return 0;
}
