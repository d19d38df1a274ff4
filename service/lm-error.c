/* lm-error.c: the project's error domain, registered with GDBus so that
 * remote callers see org.laptopmode.LaptopMode1.Error.* names. */
#include "lm-error.h"

#include <gio/gio.h>

static const GDBusErrorEntry lm_error_entries[] = {
  { LM_ERROR_FAILED, "org.laptopmode.LaptopMode1.Error.Failed" },
  { LM_ERROR_INVALID_ARGS, "org.laptopmode.LaptopMode1.Error.InvalidArgs" },
  { LM_ERROR_NOT_SUPPORTED, "org.laptopmode.LaptopMode1.Error.NotSupported" },
  { LM_ERROR_KERNEL, "org.laptopmode.LaptopMode1.Error.Kernel" },
};

GQuark
lm_error_quark (void)
{
  static gsize quark = 0;

  g_dbus_error_register_error_domain ("lm-error-quark", &quark, lm_error_entries,
                                      G_N_ELEMENTS (lm_error_entries));
  return (GQuark) quark;
}
