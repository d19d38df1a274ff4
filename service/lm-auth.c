/* lm-auth.c: who may call what: uid 0 always, everyone else as polkit
 * decides, asked asynchronously. Owns the method-to-action table; must
 * never allow a call polkit did not explicitly authorize (root aside), nor
 * wait for polkit on the main loop.
 * polkitd is asked through its D-Bus interface on the caller's connection,
 * the guarded one (lm-bus.c), not through libpolkit-gobject, whose
 * authority lives on GLib's shared system-bus connection: that one is
 * unguarded, and any local user could close it with one undecodable
 * message. */
#include "config.h"

#include "lm-auth.h"
#include "lm-names.h"

#include <string.h>

#define POLKIT_PATH "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_ALLOW_USER_INTERACTION 1u /* CheckAuthorizationFlags */

/* The details a rule sees: key to value, both owned. */
typedef GHashTable PolkitDetails;

static void
polkit_details_insert (PolkitDetails *details, const char *key, const char *value)
{
  g_hash_table_replace (details, g_strdup (key), g_strdup (value));
}

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
 * smaller MaxLostWork. A value longer than 256 bytes (a long NoRemount
 * list) is cut at a character boundary and ends in "…": the arguments are
 * bounded (lm-limits.h) but their printed form is not, and the request to
 * polkitd must stay far below what the bus carries. */
static void
details_configure (GVariant *parameters, PolkitDetails *details)
{
  const gsize max_value = 256;
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
      if (strlen (text) > max_value)
        {
          const char *end = g_utf8_find_prev_char (text, text + max_value + 1);
          g_autofree char *whole = g_steal_pointer (&text);
          text = g_strdup_printf ("%.*s…", (int) (end - whole), whole);
        }
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

/* One question: may @sender run @rule's method? Asked for a method call
 * (answered on the invocation) or to re-check a subscription (answered
 * through a callback). */
typedef struct _LmAuthRequest LmAuthRequest;

struct _LmAuthRequest
{
  GDBusConnection *connection;
  char *sender;
  const LmAuthRule *rule;
  const char *method;
  PolkitDetails *details;
  gboolean interactive;
  GCancellable *cancellable; /* ours: cancelled by the timeout */
  guint timeout_id;
  /* A method call... */
  GDBusMethodInvocation *invocation;
  LmAuthAllowed allowed;
  /* ...or a re-check, whose caller may stop caring. */
  LmAuthRecheckFunc recheck;
  GCancellable *caller_cancellable;
  gpointer user_data;
  GDestroyNotify destroy;
};

static void
request_free (LmAuthRequest *req)
{
  if (req->destroy != NULL)
    req->destroy (req->user_data);
  g_clear_handle_id (&req->timeout_id, g_source_remove);
  g_clear_object (&req->cancellable);
  g_clear_object (&req->caller_cancellable);
  g_clear_pointer (&req->details, g_hash_table_unref);
  g_clear_object (&req->invocation);
  g_clear_object (&req->connection);
  g_free (req->sender);
  g_free (req);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmAuthRequest, request_free)

static LmAuthRequest *
request_new (GDBusConnection *connection, const char *sender, const char *method)
{
  LmAuthRequest *req = g_new0 (LmAuthRequest, 1);

  req->connection = g_object_ref (connection);
  req->sender = g_strdup (sender);
  req->method = method;
  req->rule = rule_for_method (method);
  req->cancellable = g_cancellable_new ();
  req->details = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return req;
}

static void
allow (LmAuthRequest *req)
{
  if (req->invocation != NULL)
    req->allowed (req->invocation, req->user_data);
  else if (!g_cancellable_is_cancelled (req->caller_cancellable))
    req->recheck (TRUE, NULL, req->user_data);
}

/* polkit's own reason is kept for the log; the caller gets one that says
 * which action was refused, for rules and administrators to act on. */
static void
deny (LmAuthRequest *req, const char *why)
{
  g_autofree char *text = NULL;

  if (req->rule == NULL)
    text = g_strdup_printf ("Not authorized to %s: %s", req->method, why);
  else
    text = g_strdup_printf ("Not authorized to %s: polkit action %s %s", req->method,
                            req->rule->action, why);
  if (req->invocation != NULL)
    {
      g_message ("Denied %s to %s: %s", req->method, req->sender, why);
      g_dbus_method_invocation_return_dbus_error (req->invocation, LM_ERROR_NAME_ACCESS_DENIED,
                                                  text);
    }
  else if (!g_cancellable_is_cancelled (req->caller_cancellable))
    req->recheck (FALSE, text, req->user_data);
}

/* polkit could not be asked at all: still a refusal, but not one a polkit
 * rule can fix, hence a different error name than AccessDenied. */
static void
deny_unreachable (LmAuthRequest *req, const char *why)
{
  g_autofree char *text
      = g_strdup_printf ("Cannot authorize %s (polkit action %s): %s; is polkitd running?",
                         req->method, req->rule->action, why);

  g_warning ("Cannot authorize %s: %s", req->method, why);
  if (req->invocation != NULL)
    g_dbus_method_invocation_return_dbus_error (req->invocation, LM_ERROR_NAME_AUTH_FAILED, text);
  else if (!g_cancellable_is_cancelled (req->caller_cancellable))
    req->recheck (FALSE, text, req->user_data);
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
  g_autoptr (GVariant) reply
      = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  g_autoptr (GVariant) result_details = NULL;
  gboolean is_authorized, is_challenge;

  if (reply == NULL)
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
  g_variant_get (reply, "((bb@a{ss}))", &is_authorized, &is_challenge, &result_details);
  if (is_authorized)
    {
      allow (req);
      return;
    }
  /* With the flag set, a challenge means no authentication agent could
   * ask the caller for a password (no desktop session, no pkttyagent). */
  if (is_challenge && req->interactive)
    deny (req, "needs authentication, and no polkit authentication agent was there to ask for "
               "it");
  else if (is_challenge && req->invocation == NULL)
    deny (req, "needs authentication, which nobody can give to a check made again without a "
               "call");
  else if (is_challenge)
    deny (req, "needs authentication, and the call did not allow interactive authorization "
               "(run it from a terminal to be asked for a password)");
  else if (g_variant_lookup (result_details, "polkit.dismissed", "&s", NULL))
    deny (req, "was not granted: the authentication dialog was dismissed");
  else
    deny (req, "is not granted to this user");
}

/* CheckAuthorization, as polkit's D-Bus interface documents it. No
 * cancellation id: a check is only ever given up by its timeout, and
 * polkitd drops a non-interactive check's answer itself. */
static void
ask_polkit (LmAuthRequest *req_in)
{
  g_autoptr (LmAuthRequest) req = req_in;
  GVariantBuilder subject_details, details;
  GHashTableIter iter;
  gpointer key, value;
  guint32 flags = 0;
  int timeout_ms;

  if (req->interactive)
    {
      flags |= POLKIT_ALLOW_USER_INTERACTION;
      timeout_ms = G_MAXINT; /* a person typing a password: no limit of ours */
    }
  else
    {
      req->timeout_id = g_timeout_add_seconds (LM_AUTH_TIMEOUT_SECONDS, on_timeout, req);
      timeout_ms = (LM_AUTH_TIMEOUT_SECONDS + 5) * 1000; /* ours cancels first */
    }
  g_variant_builder_init (&subject_details, G_VARIANT_TYPE ("a{sv}"));
  g_variant_builder_add (&subject_details, "{sv}", "name", g_variant_new_string (req->sender));
  g_variant_builder_init (&details, G_VARIANT_TYPE ("a{ss}"));
  g_hash_table_iter_init (&iter, req->details);
  while (g_hash_table_iter_next (&iter, &key, &value))
    g_variant_builder_add (&details, "{ss}", key, value);

  /* Read before req is handed on: argument order is unspecified in C. */
  const char *action = req->rule != NULL ? req->rule->action : "";
  GDBusConnection *connection = req->connection;
  GCancellable *cancellable = req->cancellable;
  g_dbus_connection_call (connection, LM_POLKIT_NAME, POLKIT_PATH, LM_POLKIT_AUTHORITY,
                          "CheckAuthorization",
                          g_variant_new ("((sa{sv})sa{ss}us)", "system-bus-name", &subject_details,
                                         action, &details, flags, ""),
                          G_VARIANT_TYPE ("((bba{ss}))"), G_DBUS_CALL_FLAGS_NONE, timeout_ms,
                          cancellable, got_result, g_steal_pointer (&req));
}

/* The bus daemon took the uid from the socket's credentials when the
 * caller connected; a unique name is never reused, so the answer cannot
 * belong to anyone else. */
static void
got_uid (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (LmAuthRequest) req = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply
      = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  guint32 uid;

  if (reply == NULL)
    {
      g_autofree char *why = NULL;

      g_dbus_error_strip_remote_error (error);
      why = g_strdup_printf ("cannot be checked: the bus does not know the caller (%s)",
                             error->message);
      deny (req, why);
      return;
    }
  g_variant_get (reply, "(u)", &uid);
  /* Root could write the sysctls and remount by itself; asking polkit
   * would only cost it a round trip. systemd's services do the same. */
  if (uid == 0)
    {
      g_debug ("%s by %s allowed: uid 0", req->method, req->sender);
      allow (req);
      return;
    }
  ask_polkit (g_steal_pointer (&req));
}

static void
decide (LmAuthRequest *req)
{
  GCancellable *cancellable = req->cancellable;

  g_dbus_connection_call (
      req->connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
      "GetConnectionUnixUser", g_variant_new ("(s)", req->sender), G_VARIANT_TYPE ("(u)"),
      G_DBUS_CALL_FLAGS_NONE, LM_AUTH_TIMEOUT_SECONDS * 1000, cancellable, got_uid, req);
}

void
lm_auth_check (GDBusMethodInvocation *invocation, LmAuthAllowed allowed, gpointer user_data,
               GDestroyNotify destroy)
{
  GDBusMessage *message = g_dbus_method_invocation_get_message (invocation);
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autoptr (LmAuthRequest) req
      = request_new (g_dbus_method_invocation_get_connection (invocation), sender,
                     g_dbus_method_invocation_get_method_name (invocation));

  req->invocation = g_object_ref (invocation);
  req->allowed = allowed;
  req->user_data = user_data;
  req->destroy = destroy;
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
  if (sender == NULL)
    {
      deny (req, "cannot be checked: the caller has no bus name");
      return;
    }
  if (req->rule->add_details != NULL)
    req->rule->add_details (g_dbus_method_invocation_get_parameters (invocation), req->details);
  decide (g_steal_pointer (&req));
}

void
lm_auth_recheck (GDBusConnection *connection, const char *sender, const char *method,
                 GCancellable *cancellable, LmAuthRecheckFunc func, gpointer user_data,
                 GDestroyNotify destroy)
{
  g_autoptr (LmAuthRequest) req = request_new (connection, sender, method);

  req->recheck = func;
  req->user_data = user_data;
  req->destroy = destroy;
  req->caller_cancellable = cancellable != NULL ? g_object_ref (cancellable) : NULL;
  /* Nobody is at a terminal to type a password for a re-check. */
  req->interactive = FALSE;
  if (req->rule == NULL || req->rule->add_details != NULL)
    {
      /* Only methods without arguments can be asked again without them. */
      deny (req, "cannot be re-checked without the call's arguments");
      return;
    }
  decide (g_steal_pointer (&req));
}
