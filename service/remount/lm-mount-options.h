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

/* What the daemon reads from a superblock's options (as mountinfo shows
 * them for type @fstype), never to be sent back to the kernel: only the
 * part the kernel writes itself counts, since a filesystem's owner controls
 * some values (btrfs subvol= names hold commas: "subvol=/x,commit=5"). */
gboolean lm_remount_options_writable (const char *options);
char *lm_remount_options_commit (const char *fstype, const char *options);
char *lm_remount_options_commit_restore (const char *fstype, const char *original);
char *lm_remount_options_with_commit (const char *fstype, const char *options, const char *commit);
gboolean lm_remount_options_lazytime (const char *fstype, const char *options);

char *lm_remount_escape (const char *bytes);
char *lm_remount_unescape (const char *text);

G_END_DECLS
