/* scratch.c: what every fuzz target links beside its own code: a private
 * scratch directory, made once per process and removed at exit (never a
 * shared, predictable path), and GLib criticals turned into abort(). */
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "lm-fuzz.h"

static char *scratch;

/* A GLib critical (a g_return_if_fail that failed) or error is a crash.
 * G_DEBUG=fatal-criticals would raise SIGTRAP, which libFuzzer does not
 * catch: it would write no input and print no statistics. abort() is a
 * signal it handles like any crash. Warnings stay warnings: the parsers
 * log hostile input on purpose. */
static gboolean
fatal_level (GLogLevelFlags level)
{
  return (level & (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR)) != 0;
}

static void
abort_on_critical (const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  if (fatal_level (level))
    {
      fprintf (stderr, "%s-CRITICAL (a crash for the fuzzer): %s\n", domain ? domain : "**",
               message);
      abort ();
    }
  g_log_default_handler (domain, level, message, data);
}

static GLogWriterOutput
abort_on_critical_structured (GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                              gpointer data)
{
  if (fatal_level (level))
    {
      for (gsize i = 0; i < n_fields; i++)
        if (g_str_equal (fields[i].key, "MESSAGE") && fields[i].length < 0)
          fprintf (stderr, "CRITICAL (a crash for the fuzzer): %s\n",
                   (const char *) fields[i].value);
      abort ();
    }
  return g_log_writer_default (level, fields, n_fields, data);
}

__attribute__ ((constructor)) static void
install_log_trap (void)
{
  g_log_set_default_handler (abort_on_critical, NULL);
  g_log_set_writer_func (abort_on_critical_structured, NULL, NULL);
}

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
