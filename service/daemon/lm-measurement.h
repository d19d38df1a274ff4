/* lm-measurement.h: the last result of laptop-modectl measure, kept by the daemon.
 * Owns its validation (a fixed table of keys and types, every value
 * bounded) and its file in the state directory; never measures anything. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* At most this many keys, each a string of at most this many bytes. */
#define LM_MEASUREMENT_MAX_KEYS 32
#define LM_MEASUREMENT_MAX_STRING 128

gboolean lm_measurement_validate (GVariant *asv, GError **error);
/* The saved result, or an empty a{sv} when none is (or the file does not
 * pass validation, which is logged); a full reference. */
GVariant *lm_measurement_load (const char *state_dir);
gboolean lm_measurement_save (const char *state_dir, GVariant *asv, GError **error);

G_END_DECLS
