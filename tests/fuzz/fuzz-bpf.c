/* fuzz-bpf.c: ring-buffer records of the BPF programs (lm-bpf-record.c):
 * any size, any alignment, strings not terminated. */
#include "lm-bpf-record.h"
#include "lm-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* Misaligned on purpose: the decoder must not rely on alignment. */
  g_autofree uint8_t *buf = g_malloc (size + 1);
  if (size > 0) /* an empty input may come as NULL */
    memcpy (buf + 1, data, size);
  LmBpfSpinupRecord s;
  LmBpfArmedRecord a;

  if (lm_bpf_record_spinup (buf + 1, size, &s))
    {
      LM_FUZZ_CHECK (strlen (s.comm) < sizeof s.comm);
      LM_FUZZ_CHECK (strlen (s.dirtier_comm) < sizeof s.dirtier_comm);
      LM_FUZZ_CHECK (strlen (s.thread) < sizeof s.thread);
      LM_FUZZ_CHECK (strlen (s.dirtier_thread) < sizeof s.dirtier_thread);
      LM_FUZZ_CHECK (memcmp (&s.boot_ns, data, sizeof s.boot_ns) == 0);
    }
  if (lm_bpf_record_armed (buf + 1, size, &a))
    {
      LM_FUZZ_CHECK (strlen (a.comm) < sizeof a.comm);
      guint32 key = lm_bpf_record_disk_key (a.major, a.minor);
      LM_FUZZ_CHECK ((key & 0xfffff) == (a.minor & 0xfffff));
    }
  return 0;
}
