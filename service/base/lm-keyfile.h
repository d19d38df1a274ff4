/* lm-keyfile.h: escaping and reading key-file values the same way on every GLib.
 * Owns the value text of the state and config files; never the key names (lm-state.c). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What is written: \\ \n \r \t always, \s for a space at either end, \; in
 * a list item; the rest byte for byte. Readable by GKeyFile as well. */
char *lm_keyfile_escape (const char *text);
char *lm_keyfile_escape_list (const char *const *items);
/* The inverse; an unknown escape stays as written. With @strip (always for
 * list items), unescaped blanks around the value are dropped (hand edits). */
char *lm_keyfile_unescape (const char *raw, gboolean strip);
char **lm_keyfile_unescape_list (const char *raw);

/* g_key_file_{get,set}_value with the escaping above; NULL if absent. */
char *lm_keyfile_get (GKeyFile *key_file, const char *group, const char *key, gboolean strip);
void lm_keyfile_set (GKeyFile *key_file, const char *group, const char *key, const char *text);

G_END_DECLS
