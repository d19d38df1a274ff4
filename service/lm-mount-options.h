/* lm-mount-options.h: mount-option strings as in /proc/self/mountinfo, and
 * the reversible escaping of mount points for D-Bus, key files and logs. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Option strings as in /proc/self/mountinfo: comma-separated, a value may
 * be double-quoted and then may contain commas. */
char **lm_remount_options_split (const char *options);
char *lm_remount_options_get (const char *options, const char *name);
gboolean lm_remount_options_has (const char *options, const char *name);
char *lm_remount_options_set (const char *options, const char *name, const char *value);
char *lm_remount_options_for_restore (const char *options);

char *lm_remount_escape (const char *bytes);
char *lm_remount_unescape (const char *text);

G_END_DECLS
