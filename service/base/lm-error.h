/* lm-error.h: the project's error domain, org.laptopmode.LaptopMode1.Error.*.
 * Owns the GError codes and their D-Bus names; nothing else maps errors. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define LM_ERROR (lm_error_quark ())

typedef enum
{
  LM_ERROR_FAILED,
  LM_ERROR_INVALID_ARGS,
  LM_ERROR_NOT_SUPPORTED,
  LM_ERROR_KERNEL,
  LM_ERROR_BUSY,
  LM_ERROR_AUTH_UNAVAILABLE,
  LM_ERROR_LIMIT_EXCEEDED,
  /* A value the system declines and nobody need act on (a link policy the
   * controller does not take): taken back quietly by the journal, never
   * a failure shown to a user, never an answer on the bus. */
  LM_ERROR_REFUSED,
} LmError;

GQuark lm_error_quark (void);

G_END_DECLS
