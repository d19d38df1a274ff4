/* lm-error.c: the project's error domain, registered with GDBus so that
 * remote callers see org.laptopmode.LaptopMode1.Error.* names. */
#include "lm-error.h"

#include <gio/gio.h>

#include "lm-names.h"
static const GDBusErrorEntry lm_error_entries[] = {
  { LM_ERROR_FAILED, LM_ERROR_NAME_FAILED },
  { LM_ERROR_INVALID_ARGS, LM_ERROR_NAME_INVALID_ARGS },
  { LM_ERROR_NOT_SUPPORTED, LM_ERROR_NAME_NOT_SUPPORTED },
  { LM_ERROR_KERNEL, LM_ERROR_NAME_KERNEL },
  { LM_ERROR_BUSY, LM_ERROR_NAME_BUSY },
  { LM_ERROR_AUTH_UNAVAILABLE, LM_ERROR_NAME_AUTH_UNAVAILABLE },
  { LM_ERROR_LIMIT_EXCEEDED, LM_ERROR_NAME_LIMIT_EXCEEDED },
};

GQuark
lm_error_quark (void)
{
  static gsize quark = 0;

  g_dbus_error_register_error_domain ("lm-error-quark", &quark, lm_error_entries,
                                      G_N_ELEMENTS (lm_error_entries));
  return (GQuark) quark;
}
