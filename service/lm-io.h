/* lm-io.h: small, careful file operations shared by the daemon.
 * Owns reading and writing single-value kernel files and durable atomic
 * replacement of state and config files; never builds paths itself. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

char *lm_io_read_value (const char *path, GError **error);
gboolean lm_io_write_value (const char *path, const char *value, GError **error);
gboolean lm_io_write_atomic (const char *path, const char *contents, gsize length, int mode,
                             GError **error);

G_END_DECLS
