/* lm-engine.h: how laptop mode is done on this kernel (kernel, userspace,
 * bdflush or none). Owns the choice only; the engines live elsewhere. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* lm-tunables.h plans by engine, so it includes this header, not the reverse. */
typedef struct _LmTunablesBackend LmTunablesBackend;

typedef enum
{
  LM_ENGINE_NONE,
  LM_ENGINE_KERNEL,
  LM_ENGINE_USERSPACE,
  LM_ENGINE_BDFLUSH,
} LmEngine;

const char *lm_engine_to_string (LmEngine engine);
LmEngine lm_engine_choose (const char *setting, const LmTunablesBackend *backend, GError **error);

G_END_DECLS
