/* lm-attrib-tracefs.c: placeholder. */
#include "config.h"
#include "lm-attrib.h"
#include "lm-error.h"
static gboolean
probe (GError **error)
{
  g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "not built");
  return FALSE;
}
const LmAttribBackend lm_attrib_tracefs = { .name = "tracefs", .probe = probe };
