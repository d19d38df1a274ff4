/* fuzz-selftest.c: not a parser: a target with a planted GLib critical,
 * for tests/fuzz/run --self-test to show that a critical found by
 * mutation is a failure with its input kept and its executions counted. */
#include "lm-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* Two bytes that the seed ("xx") lacks: libFuzzer must mutate to them. */
  if (size >= 2 && data[0] == 'C' && data[1] == 'R')
    {
      char **volatile none = NULL;
      g_free (g_strjoinv (",", none)); /* GLib: assertion 'str_array != NULL' failed */
    }
  return 0;
}
