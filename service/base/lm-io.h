/* lm-io.h: small, careful file operations shared by the daemon.
 * Owns reading and writing single-value kernel files and durable atomic
 * replacement of state and config files; never builds paths itself. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

char *lm_io_read_value (const char *path, GError **error);
/* On failure errno is left at the kernel's reason (EIO for a short write). */
gboolean lm_io_write_value (const char *path, const char *value, GError **error);
gboolean lm_io_write_atomic (const char *path, const char *contents, gsize length, int mode,
                             GError **error);

/* Files the daemon reads back (state, ledger): never through a symbolic
 * link, only when owned by the daemon's user and writable by no one else. */
gboolean lm_io_read_private (const char *path, char **contents, gsize *length, GError **error);
gboolean lm_io_check_private_dir (const char *dir, GError **error);
/* Everything dirty to disk: sync(), or only the fake root's filesystem
 * where the test tier asks (lm_sync_root_only). */
void lm_io_sync_all (void);

G_END_DECLS
