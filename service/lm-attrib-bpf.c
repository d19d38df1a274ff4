/* lm-attrib-bpf.c: placeholder. */
#include "config.h"
#include "lm-attrib.h"
#include "lm-error.h"
static gboolean
probe (GError **error)
{
  g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "not built");
  return FALSE;
}
const LmAttribBackend lm_attrib_bpf = { .name = "bpf", .probe = probe };
