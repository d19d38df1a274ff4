/* fuzz-kmsg.c: block_dump lines from /dev/kmsg or dmesg (lm-kmsg.c).
 * The parser must never read past the span, and what it fills is bounded. */
#include "lm-fuzz.h"
#include "lm-kmsg.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* Exactly @size bytes, no NUL after them: the parser takes a length. */
  g_autofree char *line = g_memdup2 (data, size);
  LmKmsgRecord r = { .kind = LM_KMSG_NONE };

  /* On NONE the record is left as it was. */
  LmKmsgKind kind = lm_kmsg_parse_line (line, size, &r);
  LM_FUZZ_CHECK (kind == r.kind);
  LM_FUZZ_CHECK (kind >= LM_KMSG_NONE && kind <= LM_KMSG_SUPPRESSED);
  if (kind == LM_KMSG_BIO || kind == LM_KMSG_DIRTIED)
    {
      LM_FUZZ_CHECK (strnlen (r.comm, sizeof r.comm) < sizeof r.comm);
      LM_FUZZ_CHECK (strnlen (r.dev, sizeof r.dev) < sizeof r.dev);
      LM_FUZZ_CHECK (r.dev[0] != '\0');
    }
  if (kind == LM_KMSG_DIRTIED)
    LM_FUZZ_CHECK (strnlen (r.name, sizeof r.name) < sizeof r.name);
  return 0;
}
