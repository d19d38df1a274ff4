/* lm-engine.c: how laptop mode is done on this kernel.
 * The kernel honours vm.laptop_mode from 2.6.6 until 7.0, where the file
 * stays but is ignored; the release is the only way to tell them apart.
 * Where both work, auto prefers the user-space engine if its BPF loads. */
#include "lm-engine.h"

#include "lm-error.h"
#include "lm-flush.h"
#include "lm-kernel.h"
#include "lm-tunables.h"

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

/* @setting is "auto", "kernel" or "userspace" (validated by lm-settings). */
LmEngine
lm_engine_choose (const char *setting, const LmTunablesBackend *backend, GError **error)
{
  if (backend == NULL)
    return LM_ENGINE_NONE;

  if (backend == &lm_tunables_bdflush)
    {
      if (!g_str_equal (setting, "auto"))
        {
          g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                       "Engine “%s” is not available on a Linux 2.4 kernel (bdflush); use “auto”",
                       setting);
          return LM_ENGINE_NONE;
        }
      return LM_ENGINE_BDFLUSH;
    }

  if (g_str_equal (setting, "userspace"))
    return LM_ENGINE_USERSPACE;

  if (g_str_equal (setting, "kernel"))
    {
      if (!backend->has_laptop_mode ())
        {
          g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                       "Engine “kernel” needs vm.laptop_mode, which this kernel does not have");
          return LM_ENGINE_NONE;
        }
      return LM_ENGINE_KERNEL;
    }

  if (!backend->has_laptop_mode () || !kernel_honours_laptop_mode ())
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
