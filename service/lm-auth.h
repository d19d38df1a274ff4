/* lm-auth.h: who may call what. Owns the one table from D-Bus method to
 * polkit action; a method missing from it is denied, never let through. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define LM_ACTION_SWITCH "org.laptopmode.LaptopMode1.switch"
#define LM_ACTION_CONFIGURE "org.laptopmode.LaptopMode1.configure"
#define LM_ACTION_MONITOR "org.laptopmode.LaptopMode1.monitor"
#define LM_ACTION_INHIBIT "org.laptopmode.LaptopMode1.inhibit"

/* Called on the main loop once the caller is allowed; a denied call has
 * already been answered with AccessDenied and @allowed is never called.
 * @user_data is released with @destroy either way. */
typedef void (*LmAuthAllowed) (GDBusMethodInvocation *invocation, gpointer user_data);

const char *lm_auth_action_for_method (const char *method);

/* Asks polkit, without blocking the main loop, whether the caller of
 * @invocation may run its method. Call it after validating the arguments:
 * the polkit details (for rules to decide on) are taken from them. */
void lm_auth_check (GDBusMethodInvocation *invocation, LmAuthAllowed allowed, gpointer user_data,
                    GDestroyNotify destroy);

G_END_DECLS
