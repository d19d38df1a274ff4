/* lm-auth.h: who may call what. Owns the one table from D-Bus method to
 * polkit action; a method missing from it is denied, never let through. */
#pragma once

#include <gio/gio.h>

#include "lm-names.h"
G_BEGIN_DECLS

/* Called on the main loop once the caller is allowed; a denied call has
 * already been answered with AccessDenied and @allowed is never called.
 * @user_data is released with @destroy either way. */
typedef void (*LmAuthAllowed) (GDBusMethodInvocation *invocation, gpointer user_data);

const char *lm_auth_action_for_method (const char *method);

/* Decides, without blocking the main loop, whether the caller of
 * @invocation may run its method: a caller with uid 0 may, anyone else
 * only when polkit says so. Call it after validating the arguments: the
 * polkit details (for rules to decide on) are taken from them. */
void lm_auth_check (GDBusMethodInvocation *invocation, LmAuthAllowed allowed, gpointer user_data,
                    GDestroyNotify destroy);

/* The answer to lm_auth_recheck(): @why says what refused it (a sentence
 * for the caller), NULL when @allowed. */
typedef void (*LmAuthRecheckFunc) (gboolean allowed, const char *why, gpointer user_data);

/* Asks again, non-interactively and off the main loop, whether @sender may
 * still run @method (one without arguments, e.g. Subscribe): for a right
 * that lasts, such as a subscription, when what polkit decides on (the
 * caller's session) changed. Once @cancellable is cancelled @func is not
 * called; @user_data is released with @destroy either way. */
void lm_auth_recheck (GDBusConnection *connection, const char *sender, const char *method,
                      GCancellable *cancellable, LmAuthRecheckFunc func, gpointer user_data,
                      GDestroyNotify destroy);

G_END_DECLS
