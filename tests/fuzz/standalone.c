/* standalone.c: runs a fuzz target over files without libFuzzer, for the
 * ordinary build's unit tests. Each argument is a file or a directory of
 * files (a seed corpus); every file is fed once; prints TAP. */
#include <string.h>

#include "lm-fuzz.h"

static int count;

/* g_ptr_array_sort hands over pointers to the elements. */
static int
compare_paths (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static gboolean
run_file (const char *path)
{
  g_autofree char *data = NULL;
  gsize length;
  g_autoptr (GError) error = NULL;

  if (!g_file_get_contents (path, &data, &length, &error))
    {
      printf ("not ok %d - %s: %s\n", ++count, path, error->message);
      return FALSE;
    }
  /* An exact-size copy: g_file_get_contents adds a NUL the fuzzer does not. */
  g_autofree uint8_t *copy = g_memdup2 (data, length);
  LLVMFuzzerTestOneInput (copy, length);
  printf ("ok %d - %s (%zu bytes)\n", ++count, path, length);
  return TRUE;
}

int
main (int argc, char **argv)
{
  gboolean ok = TRUE;
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);

  for (int i = 1; i < argc; i++)
    {
      if (!g_file_test (argv[i], G_FILE_TEST_IS_DIR))
        {
          g_ptr_array_add (files, g_strdup (argv[i]));
          continue;
        }
      g_autoptr (GDir) dir = g_dir_open (argv[i], 0, NULL);
      const char *name;
      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        g_ptr_array_add (files, g_build_filename (argv[i], name, NULL));
    }
  g_ptr_array_sort (files, compare_paths);
  if (files->len == 0)
    {
      printf ("1..0 # no corpus files given\nBail out! empty corpus\n");
      return 1;
    }
  printf ("1..%u\n", files->len);
  for (guint i = 0; i < files->len; i++)
    ok = run_file (files->pdata[i]) && ok;
  return ok ? 0 : 1;
}
