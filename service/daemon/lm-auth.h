/* lm-auth.h: who may call what, and who may see whose processes. Owns the
 * one table from D-Bus method to polkit action (a method missing from it is
 * denied, never let through) and the bounds on checks waiting for polkit. */
#pragma once

#include <gio/gio.h>

#include "lm-names.h"
G_BEGIN_DECLS

/* Checks waiting for polkit, at most: per caller (unique name), per uid
 * and in all. The last stays well under dbus-daemon's limit of replies
 * the daemon's own connection may wait for (max_replies_per_connection,
 * 128 on the system bus), so that an agent that never answers cannot use
 * them up. A call over a bound is answered at once with Error.Busy. */
#define LM_AUTH_MAX_PER_SENDER 2
#define LM_AUTH_MAX_PER_UID 8
#define LM_AUTH_MAX_CHECKS 64
/* Callers whose uid is being asked of the bus, at most (the bus answers
 * those itself, at once: a bound on memory, not on waiting). */
#define LM_AUTH_MAX_LOOKUPS 256

/* A non-interactive check is one round trip to polkitd: this long means
 * polkitd is stuck. */
#define LM_AUTH_TIMEOUT_SECONDS 30
/* An interactive one waits for a person typing a password: five minutes,
 * then it is cancelled (CancelCheckAuthorization) and the call refused.
 * LAPTOP_MODED_AUTH_TIMEOUT (seconds, in the daemon's environment, which
 * only root sets) can make it shorter, never longer: for tests. */
#define LM_AUTH_INTERACTIVE_TIMEOUT_SECONDS 300

/* What polkit's answer means for the caller, whatever shape it had. */
typedef enum
{
  LM_AUTH_ALLOWED,
  LM_AUTH_DENIED,      /* AccessDenied: polkitd answered, and not "yes" */
  LM_AUTH_UNAVAILABLE, /* Error.AuthUnavailable: polkitd did not answer */
} LmAuthVerdict;

/* Maps polkitd's answer to CheckAuthorization, @reply ("((bba{ss}))") or
 * @error (as g_dbus_connection_call_finish() gave it, not stripped), to a
 * verdict; *@why gets a sentence for the caller that completes "polkit
 * action X ...". @interactive: the caller allowed interaction; @recheck:
 * nobody called (a subscription checked again); @timed_out: our timeout
 * cancelled the call after @timeout_s seconds. Pure: for the unit test. */
LmAuthVerdict lm_auth_verdict (GVariant *reply, const GError *error, gboolean interactive,
                               gboolean recheck, gboolean timed_out, guint timeout_s, char **why);

/* The interactive timeout in force, in seconds. */
guint lm_auth_interactive_timeout (void);

/* Who asked, once allowed: its uid (as the bus daemon took it from the
 * socket), and whether polkit granted it monitor-all (every user's
 * processes in full; asked only for the scoped monitor methods); uid 0
 * always may. */
typedef struct
{
  guint32 uid;
  gboolean all;
} LmAuthViewer;

/* Called on the main loop once the caller is allowed, with who it is; a
 * denied call has already been answered and @allowed is never called.
 * @user_data is released with @destroy either way. */
typedef void (*LmAuthAllowed) (GDBusMethodInvocation *invocation, const LmAuthViewer *caller,
                               gpointer user_data);

/* Called once the caller's uid is known (from the bus), before polkit is
 * asked and for uid 0 too: whether this caller and its user are within
 * their share (a budget, a cap). FALSE with @error set: the call is
 * answered with @error and neither polkit nor @allowed is asked. */
typedef gboolean (*LmAuthAdmit) (const char *sender, guint32 uid, gpointer user_data,
                                 GError **error);

const char *lm_auth_action_for_method (const char *method);

/* Decides, without blocking the main loop, whether the caller of
 * @invocation may run its method: a caller with uid 0 may, anyone else
 * only when polkit says so. Call it after validating the arguments: the
 * polkit details (for rules to decide on) are taken from them. For the
 * monitor methods, monitor-all is asked too (without interaction): see
 * LmAuthViewer. */
void lm_auth_check (GDBusMethodInvocation *invocation, LmAuthAllowed allowed, gpointer user_data,
                    GDestroyNotify destroy);
/* The same, with @admit (may be NULL) asked first (see LmAuthAdmit). */
void lm_auth_check_admit (GDBusMethodInvocation *invocation, LmAuthAdmit admit,
                          LmAuthAllowed allowed, gpointer user_data, GDestroyNotify destroy);

/* @record (a{sv}: a SpinUp, a GetSpinUps item or a GetLedger record) as
 * @viewer may see it: in full when it may see all, when the record names
 * no process, when it is the viewer's own (same Uid) or kernel work (Via
 * "kernel"); else only the disk, time, uid, operation and counts, with
 * OtherUser true: no Pid, Comm, Path, Inode, Sector, Thread or submitter.
 * Returns a new reference. */
GVariant *lm_auth_redact (GVariant *record, const LmAuthViewer *viewer);
/* The same for each element of an aa{sv}; returns a new reference. */
GVariant *lm_auth_redact_list (GVariant *records, const LmAuthViewer *viewer);

/* The answer to lm_auth_recheck(): @why says what refused it or why there
 * was no answer (a sentence for the caller), NULL when allowed; @viewer
 * is set when allowed. */
typedef void (*LmAuthRecheckFunc) (LmAuthVerdict verdict, const LmAuthViewer *viewer,
                                   const char *why, gpointer user_data);

/* Asks again, non-interactively and off the main loop, whether @sender may
 * still run @method (one without arguments, e.g. Subscribe): for a right
 * that lasts, such as a subscription, when what polkit decides on (the
 * caller's session) changed. LM_AUTH_UNAVAILABLE (polkit unreachable, too
 * many checks in flight) means: ask again later, not "denied". Once
 * @cancellable is cancelled @func is not called; @user_data is released
 * with @destroy either way. */
void lm_auth_recheck (GDBusConnection *connection, const char *sender, const char *method,
                      GCancellable *cancellable, LmAuthRecheckFunc func, gpointer user_data,
                      GDestroyNotify destroy);

G_END_DECLS
