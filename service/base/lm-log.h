/* lm-log.h: the daemon's log writer: every message escaped before it is written.
 * Owns no policy of what is logged; only that outside text cannot forge a line. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* For g_log_set_writer_func(): GLib's default writer (stderr or the
 * journal, G_MESSAGES_DEBUG and --verbose honoured), after the MESSAGE
 * field went through lm_escape(): a process, file, mount or device name
 * with a newline, an escape sequence or a bidirectional override in it
 * stays inside its own line. */
GLogWriterOutput lm_log_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                                gpointer user_data);

G_END_DECLS
