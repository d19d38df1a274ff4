/* fuzz-uevent.c: kernel uevent datagrams (lm-uevent.c), as recv() hands
 * them over: any bytes, not necessarily NUL-terminated at the end. */
#include "lm-fuzz.h"
#include "lm-uevent.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *buf = g_memdup2 (data, size);
  g_autofree char *subsystem = NULL;
  g_autofree char *action = NULL;

  if (lm_uevent_parse (buf, size, &subsystem, &action))
    {
      LM_FUZZ_CHECK (subsystem != NULL && action != NULL);
      /* What came back was in the datagram. */
      LM_FUZZ_CHECK (strlen (subsystem) < size && strlen (action) < size);
    }
  else
    LM_FUZZ_CHECK (subsystem == NULL && action == NULL);
  return 0;
}
