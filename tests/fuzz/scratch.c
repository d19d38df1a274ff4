/* scratch.c: the fuzz targets' private scratch directory, made once per
 * process and removed at exit; never a shared, predictable path. */
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "lm-fuzz.h"

static char *scratch;

static void
remove_scratch (void)
{
  g_autoptr (GDir) dir = g_dir_open (scratch, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (scratch, name, NULL);
      g_unlink (path);
    }
  g_rmdir (scratch);
}

const char *
lm_fuzz_scratch_dir (void)
{
  if (scratch != NULL)
    return scratch;
  /* tests/fuzz/run gives one it removes itself: libFuzzer ends a run with
   * _exit() or abort(), where no atexit handler runs. */
  const char *given = g_getenv ("LM_FUZZ_SCRATCH");
  if (given != NULL && g_mkdir_with_parents (given, 0700) == 0)
    return scratch = g_strdup (given);
  const char *base = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) && access ("/dev/shm", W_OK) == 0
                         ? "/dev/shm"
                         : g_get_tmp_dir ();
  g_autofree char *tmpl = g_build_filename (base, "lm-fuzz-XXXXXX", NULL);
  scratch = g_mkdtemp (tmpl) != NULL ? g_steal_pointer (&tmpl) : NULL;
  if (scratch == NULL)
    {
      fprintf (stderr, "Cannot make a scratch directory in %s\n", base);
      abort ();
    }
  atexit (remove_scratch);
  return scratch;
}
