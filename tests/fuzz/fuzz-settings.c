/* fuzz-settings.c: the config file (lm-settings.c, lm-disk-policy.c).
 * Whatever loads must save and load again to the same settings, and
 * saving what was saved must write the same bytes again. */
#include <glib/gstdio.h>

#include "lm-fuzz.h"
#include "lm-settings.h"

static void
strip_cr (char *text)
{
  char *out = text;

  for (const char *p = text; *p; p++)
    if (*p != '\r')
      *out++ = *p;
  *out = '\0';
}

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

  /* The first save may normalize the user's comments (GKeyFile ends a
   * line at a NUL); from then on, saving is a fixed point: the same bytes
   * every time, but for carriage returns: GKeyFile reads "\r\n" as "\n",
   * so a line of stray CRs loses one per save. */
  LM_FUZZ_CHECK (lm_settings_save (second, path, &error));
  g_autofree char *again = NULL;
  LM_FUZZ_CHECK (g_file_get_contents (path, &again, NULL, NULL));
  g_autoptr (LmSettings) third = lm_settings_load (path, &error);
  LM_FUZZ_CHECK (third != NULL && lm_settings_equal (first, third));
  LM_FUZZ_CHECK (lm_settings_save (third, path, &error));
  g_autofree char *last = NULL;
  LM_FUZZ_CHECK (g_file_get_contents (path, &last, NULL, NULL));
  strip_cr (again);
  strip_cr (last);
  if (!g_str_equal (again, last))
    {
      fprintf (stderr, "Saving is not a fixed point:\n--- once:\n%s\n--- again:\n%s\n", again,
               last);
      abort ();
    }
  g_unlink (path);
  return 0;
}
