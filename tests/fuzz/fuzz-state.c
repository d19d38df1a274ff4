/* fuzz-state.c: the state file (lm-state.c), the restore journal read
 * after a crash. Load, save, load again: the same state. Then a key and a
 * value taken from the input (disk ids become keys) survive a round trip. */
#include <glib/gstdio.h>

#include "lm-fuzz.h"
#include "lm-state.h"

static void
strip_cr (char *text)
{
  char *out = text;

  for (const char *p = text; *p; p++)
    if (*p != '\r')
      *out++ = *p;
  *out = '\0';
}

static void
check_same (LmState *a, LmState *b)
{
  LM_FUZZ_CHECK (lm_state_is_empty (a) == lm_state_is_empty (b));
  if (lm_state_is_empty (a))
    return;
  g_autofree char *sa = lm_state_snapshot (a);
  g_autofree char *sb = lm_state_snapshot (b);
  /* GKeyFile reads a line's "\r\n" as "\n" and writes loaded values back
   * raw: a hand-made line ending in CRs loses one per load. Every value
   * lm_state_set stores is escaped ("\r"), so only foreign files see it. */
  strip_cr (sa);
  strip_cr (sb);
  if (!g_str_equal (sa, sb))
    {
      fprintf (stderr, "State changed across save and load:\n--- before:\n%s\n--- after:\n%s\n", sa,
               sb);
      abort ();
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *path = g_build_filename (lm_fuzz_scratch_dir (), "state", NULL);
  g_autoptr (LmState) first = lm_state_new (path);
  g_autoptr (GError) error = NULL;

  LM_FUZZ_CHECK (g_file_set_contents (path, (const char *) data, (gssize) size, NULL));
  if (lm_state_load (first, &error))
    {
      LM_FUZZ_CHECK (lm_state_save (first, &error));
      g_autoptr (LmState) second = lm_state_new (path);
      LM_FUZZ_CHECK (lm_state_load (second, &error));
      check_same (first, second);
    }
  else
    LM_FUZZ_CHECK (error != NULL);
  g_clear_error (&error);

  /* "key\0value": any key (made valid UTF-8, as D-Bus and sysfs names
   * are), any value. */
  const char *nul = memchr (data, '\0', size);
  if (nul == NULL || nul == (const char *) data)
    {
      g_unlink (path);
      return 0;
    }
  g_autofree char *key = g_utf8_make_valid ((const char *) data, nul - (const char *) data);
  g_autofree char *value
      = g_utf8_make_valid (nul + 1, (gssize) (size - (gsize) (nul + 1 - (const char *) data)));
  g_autoptr (LmState) fresh = lm_state_new (path);
  lm_state_set (fresh, "Fuzz", key, value);
  g_autofree char *direct = lm_state_get (fresh, "Fuzz", key);
  LM_FUZZ_CHECK (g_strcmp0 (direct, value) == 0);
  LM_FUZZ_CHECK (lm_state_save (fresh, &error));
  g_autoptr (LmState) loaded = lm_state_new (path);
  LM_FUZZ_CHECK (lm_state_load (loaded, &error));
  g_autofree char *got = lm_state_get (loaded, "Fuzz", key);
  /* GKeyFile drops a leading form feed and has no escape for it (lm-state.h:
   * values are text; lm-remount.c escapes its bytes before storing them). */
  LM_FUZZ_CHECK (g_strcmp0 (got, value) == 0 || (value[0] == '\f' && got != NULL));
  g_auto (GStrv) keys = lm_state_get_keys (loaded, "Fuzz");
  LM_FUZZ_CHECK (g_strv_length (keys) == 1 && g_str_equal (keys[0], key));
  lm_state_remove (loaded, "Fuzz", key);
  LM_FUZZ_CHECK (lm_state_is_empty (loaded));
  g_unlink (path);
  return 0;
}
