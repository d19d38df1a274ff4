/* fuzz-configure.c: Configure's a{sv} from any caller (lm-settings.c,
 * lm-disk-policy.c), as GVariant's untrusted wire data. Whatever is
 * accepted must survive the config file: save, load, the same settings,
 * and saving those writes the same bytes again. */
#include <glib/gstdio.h>

#include "lm-fuzz.h"
#include "lm-settings.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (GBytes) bytes = g_bytes_new (data, size);
  g_autoptr (GVariant) asv
      = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE_VARDICT, bytes, FALSE));
  g_autoptr (LmSettings) settings = lm_settings_new ();
  g_autoptr (GError) error = NULL;

  if (!lm_settings_update (settings, asv, &error))
    {
      LM_FUZZ_CHECK (error != NULL && g_utf8_validate (error->message, -1, NULL));
      return 0;
    }
  g_autofree char *path = g_build_filename (lm_fuzz_scratch_dir (), "configure.conf", NULL);
  g_unlink (path);
  LM_FUZZ_CHECK (lm_settings_save (settings, path, &error));
  g_autoptr (LmSettings) back = lm_settings_load (path, &error);
  if (back == NULL || !lm_settings_equal (settings, back))
    {
      g_autofree char *text = NULL;
      g_autofree char *shown = g_variant_print (asv, TRUE);
      g_file_get_contents (path, &text, NULL, NULL);
      fprintf (stderr, "Configure %s was accepted but does not come back from the file (%s):\n%s\n",
               shown, back == NULL ? error->message : "different settings", text);
      abort ();
    }
  /* After that restart, saving again writes the same bytes: nothing drifts
   * from one Configure and restart to the next. */
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *again = g_build_filename (lm_fuzz_scratch_dir (), "configure2.conf", NULL);
  g_unlink (again);
  LM_FUZZ_CHECK (g_file_get_contents (path, &first, NULL, NULL));
  LM_FUZZ_CHECK (lm_settings_save (back, again, &error));
  LM_FUZZ_CHECK (g_file_get_contents (again, &second, NULL, NULL));
  LM_FUZZ_CHECK (g_str_equal (first, second));
  g_unlink (again);
  g_unlink (path);
  return 0;
}
