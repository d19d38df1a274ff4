/* lm-auth.c: who may call what, decided by polkit, asked asynchronously.
 * Owns the method-to-action table; must never allow a call polkit did not
 * explicitly authorize, nor wait for polkit on the main loop. */
#include "config.h"

#include "lm-auth.h"

#include <polkit/polkit.h>

/* A non-interactive check is one round trip to polkitd; if that takes this
 * long polkitd is stuck, and the caller is better told so than left
 * waiting. An interactive check waits for a person typing a password and
 * has no limit of ours. */
#define LM_AUTH_TIMEOUT_SECONDS 30

/* Adds to @details what a polkit rule may want to decide on, taken from the
 * call's (already validated) @parameters. */
typedef void (*LmAuthDetailsFunc) (GVariant *parameters, PolkitDetails *details);

typedef struct
{
  const char *method;
  const char *action;
  LmAuthDetailsFunc add_details;
} LmAuthRule;

static void
details_mode_on (GVariant *parameters, PolkitDetails *details)
{
  polkit_details_insert (details, "mode", "on");
}

static void
details_mode_off (GVariant *parameters, PolkitDetails *details)
{
  polkit_details_insert (details, "mode", "off");
}

static void
details_set_mode (GVariant *parameters, PolkitDetails *details)
{
  const char *mode;

  g_variant_get (parameters, "(&s)", &mode);
  polkit_details_insert (details, "mode", mode);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* "keys" lists the settings being changed ("DirtyRatio,MaxLostWork"), and
 * each key carries its new value, so that a rule can allow, say, only a
 * smaller MaxLostWork. */
static void
details_configure (GVariant *parameters, PolkitDetails *details)
{
  g_autoptr (GVariant) asv = g_variant_get_child_value (parameters, 0);
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_variant_iter_init (&iter, asv);
  while (g_variant_iter_loop (&iter, "{&sv}", &key, &value))
    {
      g_autofree char *text = g_variant_is_of_type (value, G_VARIANT_TYPE_STRING)
                                  ? g_variant_dup_string (value, NULL)
                                  : g_variant_print (value, FALSE);
      polkit_details_insert (details, key, text);
      g_ptr_array_add (keys, (gpointer) key);
    }
  g_ptr_array_sort (keys, compare_strings);
  g_ptr_array_add (keys, NULL);
  g_autofree char *joined = g_strjoinv (",", (char **) keys->pdata);
  polkit_details_insert (details, "keys", joined);
}

static void
details_inhibit (GVariant *parameters, PolkitDetails *details)
{
  const char *application, *reason;

  g_variant_get (parameters, "(&s&s)", &application, &reason);
  polkit_details_insert (details, "application", application);
  polkit_details_insert (details, "reason", reason);
}

/* The one table. Reading properties needs no entry: they are public. */
static const LmAuthRule rules[] = {
  { "Start", LM_ACTION_SWITCH, details_mode_on },
  { "Stop", LM_ACTION_SWITCH, details_mode_off },
  { "SetMode", LM_ACTION_SWITCH, details_set_mode },
  { "Sync", LM_ACTION_SWITCH, NULL },
  { "Configure", LM_ACTION_CONFIGURE, details_configure },
  { "Inhibit", LM_ACTION_INHIBIT, details_inhibit },
  { "Release", LM_ACTION_INHIBIT, NULL },
  { "Subscribe", LM_ACTION_MONITOR, NULL },
  { "Unsubscribe", LM_ACTION_MONITOR, NULL },
  { "GetSpinUps", LM_ACTION_MONITOR, NULL },
  { "GetLedger", LM_ACTION_MONITOR, NULL },
};

static const LmAuthRule *
rule_for_method (const char *method)
{
  for (gsize i = 0; i < G_N_ELEMENTS (rules); i++)
    if (g_str_equal (rules[i].method, method))
      return &rules[i];
  return NULL;
}

const char *
lm_auth_action_for_method (const char *method)
{
  const LmAuthRule *rule = rule_for_method (method);

  return rule != NULL ? rule->action : NULL;
}

typedef struct
{
  GDBusMethodInvocation *invocation;
  const LmAuthRule *rule;
  LmAuthAllowed allowed;
  gpointer user_data;
  GDestroyNotify destroy;
  GCancellable *cancellable;
  guint timeout_id;
  gboolean interactive;
} LmAuthRequest;

static void
request_free (LmAuthRequest *req)
{
  if (req->destroy != NULL)
    req->destroy (req->user_data);
  g_clear_handle_id (&req->timeout_id, g_source_remove);
  g_clear_object (&req->cancellable);
  g_object_unref (req->invocation);
  g_free (req);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmAuthRequest, request_free)

static const char *
method_name (LmAuthRequest *req)
{
  return g_dbus_method_invocation_get_method_name (req->invocation);
}

/* polkit's own reason is kept for the log; the caller gets one that says
 * which action was refused, for rules and administrators to act on. */
static void
deny (LmAuthRequest *req, const char *why)
{
  g_message ("Denied %s to %s: %s", method_name (req),
             g_dbus_method_invocation_get_sender (req->invocation), why);
  if (req->rule == NULL)
    g_dbus_method_invocation_return_error (req->invocation, G_DBUS_ERROR,
                                           G_DBUS_ERROR_ACCESS_DENIED, "Not authorized to %s: %s",
                                           method_name (req), why);
  else
    g_dbus_method_invocation_return_error (
        req->invocation, G_DBUS_ERROR, G_DBUS_ERROR_ACCESS_DENIED,
        "Not authorized to %s: polkit action %s %s", method_name (req), req->rule->action, why);
}

/* polkit could not be asked at all: still a refusal, but not one a polkit
 * rule can fix, hence a different error name than AccessDenied. */
static void
deny_unreachable (LmAuthRequest *req, const char *why)
{
  g_warning ("Cannot authorize %s: %s", method_name (req), why);
  g_dbus_method_invocation_return_error (
      req->invocation, G_DBUS_ERROR, G_DBUS_ERROR_AUTH_FAILED,
      "Cannot authorize %s (polkit action %s): %s; is polkitd running?", method_name (req),
      req->rule->action, why);
}

static gboolean
on_timeout (gpointer user_data)
{
  LmAuthRequest *req = user_data;

  req->timeout_id = 0;
  g_cancellable_cancel (req->cancellable);
  return G_SOURCE_REMOVE;
}

static void
got_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (LmAuthRequest) req = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (PolkitAuthorizationResult) res
      = polkit_authority_check_authorization_finish (POLKIT_AUTHORITY (source), result, &error);

  if (res == NULL)
    {
      g_autofree char *why = NULL;

      g_dbus_error_strip_remote_error (error);
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        why = g_strdup ("polkit gave no answer within " G_STRINGIFY (LM_AUTH_TIMEOUT_SECONDS) " s");
      else
        why = g_strdup_printf ("polkit failed: %s", error->message);
      deny_unreachable (req, why);
      return;
    }
  if (polkit_authorization_result_get_is_authorized (res))
    {
      req->allowed (req->invocation, req->user_data);
      return;
    }
  /* With the flag set, a challenge means no authentication agent could
   * ask the caller for a password (no desktop session, no pkttyagent). */
  if (polkit_authorization_result_get_is_challenge (res) && req->interactive)
    deny (req, "needs authentication, and no polkit authentication agent was there to ask for "
               "it");
  else if (polkit_authorization_result_get_is_challenge (res))
    deny (req, "needs authentication, and the call did not allow interactive authorization "
               "(run it from a terminal to be asked for a password)");
  else if (polkit_authorization_result_get_dismissed (res))
    deny (req, "was not granted: the authentication dialog was dismissed");
  else
    deny (req, "is not granted to this user");
}

/* polkit drops its authority (a D-Bus proxy) with the last reference; one
 * kept for the daemon's lifetime spares a round trip on every call. */
static PolkitAuthority *authority;

static void
check (LmAuthRequest *req_in)
{
  g_autoptr (LmAuthRequest) req = req_in;
  GDBusMethodInvocation *inv = req->invocation;
  g_autoptr (PolkitSubject) subject
      = polkit_system_bus_name_new (g_dbus_method_invocation_get_sender (inv));
  g_autoptr (PolkitDetails) details = polkit_details_new ();
  PolkitCheckAuthorizationFlags flags = POLKIT_CHECK_AUTHORIZATION_FLAGS_NONE;

  if (req->rule->add_details != NULL)
    req->rule->add_details (g_dbus_method_invocation_get_parameters (inv), details);
  if (req->interactive)
    flags |= POLKIT_CHECK_AUTHORIZATION_FLAGS_ALLOW_USER_INTERACTION;
  else
    req->timeout_id = g_timeout_add_seconds (LM_AUTH_TIMEOUT_SECONDS, on_timeout, req);

  /* Read before req is handed on: argument order is unspecified in C. */
  const char *action = req->rule->action;
  GCancellable *cancellable = req->cancellable;
  polkit_authority_check_authorization (authority, subject, action, details, flags, cancellable,
                                        got_result, g_steal_pointer (&req));
}

static void
got_authority (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (LmAuthRequest) req = user_data;
  g_autoptr (GError) error = NULL;
  PolkitAuthority *got = polkit_authority_get_finish (result, &error);

  if (got == NULL)
    {
      g_autofree char *why = g_strdup_printf ("polkit failed: %s", error->message);

      deny_unreachable (req, why);
      return;
    }
  if (authority == NULL)
    authority = g_steal_pointer (&got);
  else
    g_object_unref (got);
  check (g_steal_pointer (&req));
}

void
lm_auth_check (GDBusMethodInvocation *invocation, LmAuthAllowed allowed, gpointer user_data,
               GDestroyNotify destroy)
{
  g_autoptr (LmAuthRequest) req = g_new0 (LmAuthRequest, 1);
  GDBusMessage *message = g_dbus_method_invocation_get_message (invocation);

  req->invocation = g_object_ref (invocation);
  req->rule = rule_for_method (g_dbus_method_invocation_get_method_name (invocation));
  req->allowed = allowed;
  req->user_data = user_data;
  req->destroy = destroy;
  req->cancellable = g_cancellable_new ();
  req->interactive
      = (g_dbus_message_get_flags (message) & G_DBUS_MESSAGE_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION)
        != 0;

  if (req->rule == NULL)
    {
      deny (req, "laptop-moded has no polkit action for this method, so it is refused to "
                 "everyone");
      return;
    }
  /* A peer-to-peer connection has no sender for polkit to look up. */
  if (g_dbus_method_invocation_get_sender (invocation) == NULL)
    {
      deny (req, "cannot be checked: the caller has no bus name");
      return;
    }
  if (authority != NULL)
    check (g_steal_pointer (&req));
  else
    polkit_authority_get_async (NULL, got_authority, g_steal_pointer (&req));
}
