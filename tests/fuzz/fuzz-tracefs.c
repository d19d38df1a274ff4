/* fuzz-tracefs.c: trace_pipe lines (lm-tracefs-parse.c). Any bytes; what
 * the parser fills must be bounded and consistent with its verdict. */
#include "lm-fuzz.h"
#include "lm-tracefs-parse.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *line = g_memdup2 (data, size);
  LmTracefsRecord r;

  LmTracefsKind kind = lm_tracefs_parse_line (line, size, &r);
  LM_FUZZ_CHECK (kind == r.kind);
  switch (kind)
    {
      case LM_TRACEFS_BIO:
        LM_FUZZ_CHECK (r.sectors > 0);
        /* fall through */
      case LM_TRACEFS_DIRTIED:
        LM_FUZZ_CHECK (strnlen (r.comm, sizeof r.comm) < sizeof r.comm);
        LM_FUZZ_CHECK (r.usec >= 0);
        break;
      case LM_TRACEFS_PASSTHROUGH:
        /* A command moves no sectors and has none. */
        LM_FUZZ_CHECK (r.sector == 0 && r.sectors == 0 && !r.write);
        LM_FUZZ_CHECK (strnlen (r.comm, sizeof r.comm) < sizeof r.comm);
        LM_FUZZ_CHECK (r.usec >= 0);
        break;
      case LM_TRACEFS_WB_START:
      case LM_TRACEFS_WB_END:
        LM_FUZZ_CHECK (strnlen (r.bdi, sizeof r.bdi) < sizeof r.bdi);
        LM_FUZZ_CHECK (strnlen (r.comm, sizeof r.comm) < sizeof r.comm);
        LM_FUZZ_CHECK (r.usec >= 0);
        break;
      case LM_TRACEFS_NEWTASK:
      case LM_TRACEFS_RENAME:
        /* A task's name as the kernel has them: at most 15 bytes. */
        LM_FUZZ_CHECK (strnlen (r.task_name, sizeof r.task_name) < sizeof r.task_name);
        LM_FUZZ_CHECK (strnlen (r.comm, sizeof r.comm) < sizeof r.comm);
        LM_FUZZ_CHECK (r.usec >= 0 && r.task_pid <= G_MAXINT32);
        break;
      case LM_TRACEFS_LOST:
        LM_FUZZ_CHECK (r.pid == 0 && r.task_pid == 0);
        break;
      case LM_TRACEFS_NONE:
        LM_FUZZ_CHECK (r.pid == 0 && r.comm[0] == '\0' && r.task_pid == 0);
        break;
      default:
        LM_FUZZ_CHECK (!"unknown kind");
    }
  return 0;
}
