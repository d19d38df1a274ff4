/* lm-engine.c: how laptop mode is done on this kernel.
 * The kernel honours vm.laptop_mode from 2.6.6 until 7.0, where the file
 * stays but is ignored; the release is the only way to tell them apart.
 * Where both work, auto prefers the user-space engine if its BPF loads. */
#include "lm-engine.h"

#include "lm-error.h"
#include "lm-flush.h"
#include "lm-kernel.h"

const char *
lm_engine_to_string (LmEngine engine)
{
  switch (engine)
    {
      case LM_ENGINE_KERNEL:
        return "kernel";
      case LM_ENGINE_USERSPACE:
        return "userspace";
      case LM_ENGINE_BDFLUSH:
        return "bdflush";
      case LM_ENGINE_NONE:
      default:
        return "none";
    }
}

static gboolean
kernel_honours_laptop_mode (void)
{
  LmKernelVersion v;
  g_autoptr (GError) error = NULL;

  if (!lm_kernel_version_read (&v, &error))
    {
      /* The user-space engine works on every kernel, so it is the safe guess. */
      g_warning ("%s; assuming vm.laptop_mode is ignored", error->message);
      return FALSE;
    }
  return lm_kernel_version_compare (&v, 2, 6, 6) >= 0
         && lm_kernel_version_compare (&v, 7, 0, 0) < 0;
}

static LmEngine
choose_auto (guint engines)
{
  if (engines & LM_ENGINE_BDFLUSH)
    return LM_ENGINE_BDFLUSH;
  if (!(engines & LM_ENGINE_USERSPACE))
    return LM_ENGINE_NONE;
  if (!(engines & LM_ENGINE_KERNEL) || !kernel_honours_laptop_mode ())
    return LM_ENGINE_USERSPACE;

  /* Both work here. The kernel's timer re-arms on its own flush, so a
   * program writing every few seconds keeps the disk awake (11% asleep
   * against 72% for ours in bench/README.md): ours whenever it can load. */
  g_autoptr (GError) flush_error = NULL;
  if (lm_flush_probe (&flush_error))
    return LM_ENGINE_USERSPACE;
  g_debug ("Engine auto: %s; using the kernel's vm.laptop_mode", flush_error->message);
  return LM_ENGINE_KERNEL;
}

/* @setting is "auto", "kernel" or "userspace" (validated by lm-settings);
 * the backend says which engines its kernel supports. */
LmEngine
lm_engine_choose (const char *setting, const LmTunablesBackend *backend, GError **error)
{
  if (backend == NULL)
    return LM_ENGINE_NONE;

  guint engines = backend->engines ();
  if (g_str_equal (setting, "auto"))
    return choose_auto (engines);

  LmEngine wanted = g_str_equal (setting, "kernel") ? LM_ENGINE_KERNEL : LM_ENGINE_USERSPACE;
  if (engines & wanted)
    return wanted;
  if (engines & LM_ENGINE_BDFLUSH)
    g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                 "Engine “%s” is not available on a Linux 2.4 kernel (bdflush); use “auto”",
                 setting);
  else
    g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                 "Engine “%s” needs vm.laptop_mode, which this kernel does not have", setting);
  return LM_ENGINE_NONE;
}

/* The user-space engine is the only one with something to run. */
static gpointer
userspace_start (const LmEngineStart *how, GError **error)
{
  return lm_flush_new (how->laptop_mode_seconds, how->report, how->report_data, error);
}

static void
userspace_retune (gpointer run, guint laptop_mode_seconds)
{
  lm_flush_set_seconds (run, laptop_mode_seconds);
}

static void
userspace_stop (gpointer run)
{
  lm_flush_free (run);
}

const LmEngineOps *
lm_engine_ops (LmEngine engine)
{
  static const LmEngineOps table[] = {
    { LM_ENGINE_NONE, NULL, NULL, NULL },
    { LM_ENGINE_KERNEL, NULL, NULL, NULL },
    { LM_ENGINE_BDFLUSH, NULL, NULL, NULL },
    { LM_ENGINE_USERSPACE, userspace_start, userspace_retune, userspace_stop },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (table); i++)
    if (table[i].engine == engine)
      return &table[i];
  return &table[0];
}
