/* lm-engine.h: how laptop mode is done on this kernel (kernel, userspace,
 * bdflush or none). Owns the choice only; the engines live elsewhere. */
#pragma once

#include <glib.h>

#include "lm-flush.h"
#include "lm-tunables.h"

G_BEGIN_DECLS

/* What a run is started with: LaptopModeSeconds, and who is told what
 * each flush wrote (see LmFlushReportFunc; @report may be NULL). */
typedef struct
{
  guint laptop_mode_seconds;
  LmFlushReportFunc report;
  gpointer report_data;
} LmEngineStart;

/* What an engine runs while laptop mode is on, beyond its tunables: nothing
 * for the kernel and bdflush engines (start is NULL), the daemon's flush for
 * the user-space one. */
typedef struct
{
  LmEngine engine;
  /* NULL with @error set when it cannot run; the tunables still apply. */
  gpointer (*start) (const LmEngineStart *how, GError **error);
  void (*retune) (gpointer run, guint laptop_mode_seconds);
  void (*stop) (gpointer run);
} LmEngineOps;

const char *lm_engine_to_string (LmEngine engine);
const LmEngineOps *lm_engine_ops (LmEngine engine);
LmEngine lm_engine_choose (const char *setting, const LmTunablesBackend *backend, GError **error);

G_END_DECLS
