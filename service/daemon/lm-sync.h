/* lm-sync.h: sync(2) for callers, one at a time, on a thread of its own.
 * Owns the single sync in flight and the callers waiting on it; never runs on GLib's shared pool.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef void (*LmSyncFunc) (gpointer user_data);

/* Calls @func on the main context once a sync() that began after this call
 * has returned: the one already running only counts for callers that came
 * before it started, so later ones share the next one. */
void lm_sync_request (LmSyncFunc func, gpointer user_data);
/* For tests: how many sync() calls have been made so far, and the most in
 * flight at once. */
guint lm_sync_get_count (void);
guint lm_sync_get_max_in_flight (void);

G_END_DECLS
