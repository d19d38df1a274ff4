/* lm-auth.h: who may call what. Owns the one table from D-Bus method to
 * authorization action; a method missing from it is denied. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define LM_ACTION_SWITCH "org.laptopmode.LaptopMode1.switch"
#define LM_ACTION_CONFIGURE "org.laptopmode.LaptopMode1.configure"

/* Called on the main loop once the caller is allowed; a denied call has
 * already been answered with AccessDenied. */
typedef void (*LmAuthAllowed) (GDBusMethodInvocation *invocation, gpointer user_data);

const char *lm_auth_action_for_method (const char *method);
void lm_auth_check (GDBusMethodInvocation *invocation, LmAuthAllowed allowed, gpointer user_data,
                    GDestroyNotify destroy);

G_END_DECLS
