/* lm-paths.h: every path the daemon (and a client reading sysfs) touches.
 * Owns the mapping from a system path to the real one (fake root for tests);
 * must never be bypassed by building a /proc or /sys path by hand. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

char *lm_path (const char *system_path);
/* @system_path with its symlinks resolved inside the root, NULL unless it
 * exists and lies under @within (e.g. "/sys/devices"). */
char *lm_path_resolve (const char *system_path, const char *within);
const char *lm_root (void);
/* sync() is a syncfs() of the fake root's filesystem alone (test tiers). */
gboolean lm_sync_root_only (void);
void lm_paths_reset (void);

const char *lm_config_file (void);
void lm_paths_set_config_file (const char *path);
const char *lm_state_dir (void);

G_END_DECLS
