/* fuzz-measurement.c: the saved result of laptop-modectl measure
 * (lm-measurement.c), read back from the state directory at start. Load:
 * what comes back passes validation (or is empty); save it, load again:
 * the same value. */
#include <glib/gstdio.h>

#include "lm-fuzz.h"
#include "lm-measurement.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *dir = lm_fuzz_scratch_dir ();
  g_autofree char *path = g_build_filename (dir, "measurement", NULL);
  g_autoptr (GError) error = NULL;

  LM_FUZZ_CHECK (g_file_set_contents (path, (const char *) data, (gssize) size, NULL));
  /* The daemon's own file: written 0644 by it (lm_io_read_private). */
  LM_FUZZ_CHECK (g_chmod (path, 0644) == 0);
  g_autoptr (GVariant) first = lm_measurement_load (dir);
  LM_FUZZ_CHECK (first != NULL && g_variant_is_of_type (first, G_VARIANT_TYPE_VARDICT));
  if (g_variant_n_children (first) == 0)
    return 0;
  LM_FUZZ_CHECK (lm_measurement_validate (first, NULL));
  LM_FUZZ_CHECK (lm_measurement_save (dir, first, &error));
  g_autoptr (GVariant) second = lm_measurement_load (dir);
  LM_FUZZ_CHECK (g_variant_equal (first, second));
  return 0;
}
