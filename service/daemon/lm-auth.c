/* lm-auth.c: who may call what: uid 0 always, everyone else as polkit
 * decides, asked asynchronously by the table of lm-auth-rules.c. Owns the
 * questions in flight and their bounds; must never allow a call polkit did not explicitly authorize
 * (root aside), nor wait for polkit on the main loop. polkitd is asked through its D-Bus interface
 * on the caller's connection, the guarded one (lm-bus.c), not through libpolkit-gobject, whose
 * authority lives on GLib's shared system-bus connection: that one is
 * unguarded, and any local user could close it with one undecodable
 * message.
 * A check waiting for polkit holds a slot (lm-auth.h's bounds) until it is
 * answered or times out: an agent that never answers pins at most its
 * caller's and its user's slots, never everyone's. */
#include "config.h"

#include "lm-auth-private.h"
#include "lm-error.h"
#include "lm-names.h"

#define POLKIT_PATH "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_ALLOW_USER_INTERACTION 1u /* CheckAuthorizationFlags */

/* --- slots: checks waiting for polkit ---------------------------------- */

typedef struct
{
  GHashTable *per_sender; /* unique name → checks in flight */
  GHashTable *per_uid;    /* uid → checks in flight */
  guint checks;
  guint lookups;
  guint64 next_id; /* for cancellation ids */
} LmAuthSlots;

/* Touched on the main loop only. */
static LmAuthSlots slots;

static void
slots_init (void)
{
  if (slots.per_sender != NULL)
    return;
  slots.per_sender = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  slots.per_uid = g_hash_table_new (g_direct_hash, g_direct_equal);
}

static guint
count_of (GHashTable *table, gconstpointer key)
{
  return GPOINTER_TO_UINT (g_hash_table_lookup (table, key));
}

static void
count_add (GHashTable *table, gconstpointer key, gboolean string_key, int delta)
{
  guint n = count_of (table, key) + delta;

  if (n == 0)
    g_hash_table_remove (table, key);
  else
    g_hash_table_replace (table, string_key ? g_strdup (key) : (gpointer) key,
                          GUINT_TO_POINTER (n));
}

/* NULL when a check of @sender (of @uid) may go to polkit now, else why not. */
static const char *
slot_refusal (const char *sender, guint32 uid)
{
  if (count_of (slots.per_sender, sender) >= LM_AUTH_MAX_PER_SENDER)
    return "this connection already has " G_STRINGIFY (
        LM_AUTH_MAX_PER_SENDER) " authorization checks waiting for polkit";
  if (count_of (slots.per_uid, GUINT_TO_POINTER (uid)) >= LM_AUTH_MAX_PER_UID)
    return "this user already has " G_STRINGIFY (
        LM_AUTH_MAX_PER_UID) " authorization checks waiting for polkit";
  if (slots.checks >= LM_AUTH_MAX_CHECKS)
    return G_STRINGIFY (LM_AUTH_MAX_CHECKS) " authorization checks are waiting for polkit";
  return NULL;
}

/* --- one question ---------------------------------------------------------- */

/* May @sender run @rule's method? Asked for a method call (answered on the
 * invocation) or to re-check a subscription (answered through a callback). */
typedef struct _LmAuthRequest LmAuthRequest;

struct _LmAuthRequest
{
  GDBusConnection *connection;
  char *sender;
  const LmAuthRule *rule;
  const char *method;
  PolkitDetails *details;
  gboolean interactive;
  guint32 uid;
  gboolean lookup;           /* counted in slots.lookups */
  gboolean slot;             /* holds a slot (per sender, uid, in all) */
  gboolean scope_asked;      /* the question in flight is monitor-all */
  gboolean timed_out;        /* on_timeout cancelled the question */
  guint timeout_s;           /* of the question in flight */
  char *cancel_id;           /* of the question in flight, for CancelCheckAuthorization */
  GCancellable *cancellable; /* ours: cancelled by the timeout */
  guint timeout_id;
  /* A method call... */
  GDBusMethodInvocation *invocation;
  LmAuthAdmit admit;
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
  if (req->lookup)
    slots.lookups--;
  if (req->slot)
    {
      count_add (slots.per_sender, req->sender, TRUE, -1);
      count_add (slots.per_uid, GUINT_TO_POINTER (req->uid), FALSE, -1);
      slots.checks--;
    }
  g_clear_handle_id (&req->timeout_id, g_source_remove);
  g_clear_object (&req->cancellable);
  g_clear_object (&req->caller_cancellable);
  g_clear_pointer (&req->details, g_hash_table_unref);
  g_clear_object (&req->invocation);
  g_clear_object (&req->connection);
  g_free (req->cancel_id);
  g_free (req->sender);
  g_free (req);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmAuthRequest, request_free)

static LmAuthRequest *
request_new (GDBusConnection *connection, const char *sender, const char *method)
{
  LmAuthRequest *req = g_new0 (LmAuthRequest, 1);

  slots_init ();
  req->connection = g_object_ref (connection);
  req->sender = g_strdup (sender);
  req->method = method;
  req->rule = lm_auth_rule_for_method (method);
  req->details = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return req;
}

static void
allow (LmAuthRequest *req, gboolean all)
{
  LmAuthViewer viewer = { req->uid, all };

  if (req->invocation != NULL)
    req->allowed (req->invocation, &viewer, req->user_data);
  else if (!g_cancellable_is_cancelled (req->caller_cancellable))
    req->recheck (LM_AUTH_ALLOWED, &viewer, NULL, req->user_data);
}

/* @why completes "polkit action X ..."; polkit's own reason stays in the
 * log. AccessDenied for a refusal, Error.AuthUnavailable when polkit could
 * not be asked (nothing a rule can fix), Error.Busy over a bound. */
static void
refuse (LmAuthRequest *req, LmAuthVerdict verdict, const char *error_name, const char *why)
{
  g_autofree char *text = NULL;

  if (req->rule == NULL)
    text = g_strdup_printf ("Not authorized to %s: %s", req->method, why);
  else if (verdict == LM_AUTH_DENIED)
    text = g_strdup_printf ("Not authorized to %s: polkit action %s %s", req->method,
                            req->rule->action, why);
  else
    text = g_strdup_printf ("Cannot authorize %s (polkit action %s): %s", req->method,
                            req->rule->action, why);
  if (req->invocation != NULL)
    {
      /* Busy is the caller's doing, not the daemon's: no warning (nor a
       * way to fill the log). */
      if (verdict == LM_AUTH_DENIED)
        g_message ("Denied %s to %s: %s", req->method, req->sender, why);
      else if (g_str_equal (error_name, LM_ERROR_NAME_BUSY))
        g_debug ("Refused %s to %s: %s", req->method, req->sender, why);
      else
        g_warning ("Cannot authorize %s for %s: %s", req->method, req->sender, why);
      g_dbus_method_invocation_return_dbus_error (req->invocation, error_name, text);
    }
  else if (!g_cancellable_is_cancelled (req->caller_cancellable))
    req->recheck (verdict, NULL, text, req->user_data);
}

static void
deny (LmAuthRequest *req, const char *why)
{
  refuse (req, LM_AUTH_DENIED, LM_ERROR_NAME_ACCESS_DENIED, why);
}

static void
on_cancel_sent (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GVariant) reply
      = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
}

/* The question took too long: polkitd is told to give it up (its agent's
 * dialog closes), and our call ends as cancelled. */
static gboolean
on_timeout (gpointer user_data)
{
  LmAuthRequest *req = user_data;

  req->timeout_id = 0;
  req->timed_out = TRUE;
  g_message ("Authorization of %s for %s: no answer from polkit within %u s; cancelling it",
             req->method, req->sender, req->timeout_s);
  g_dbus_connection_call (req->connection, LM_POLKIT_NAME, POLKIT_PATH, LM_POLKIT_AUTHORITY,
                          "CancelCheckAuthorization", g_variant_new ("(s)", req->cancel_id), NULL,
                          G_DBUS_CALL_FLAGS_NONE, 5000, NULL, on_cancel_sent, NULL);
  g_cancellable_cancel (req->cancellable);
  return G_SOURCE_REMOVE;
}

static void ask_polkit (LmAuthRequest *req, const char *action, gboolean interactive);

static void
got_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (LmAuthRequest) req = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply
      = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  g_autofree char *why = NULL;

  g_clear_handle_id (&req->timeout_id, g_source_remove);
  LmAuthVerdict verdict
      = lm_auth_verdict (reply, error, req->interactive && !req->scope_asked,
                         req->invocation == NULL, req->timed_out, req->timeout_s, &why);
  if (req->scope_asked)
    {
      /* monitor-all refused or unanswerable: the caller sees its own. */
      if (verdict != LM_AUTH_ALLOWED)
        g_debug ("%s for %s: own processes only (%s %s)", req->method, req->sender,
                 LM_ACTION_MONITOR_ALL, why);
      allow (req, verdict == LM_AUTH_ALLOWED);
      return;
    }
  if (verdict == LM_AUTH_ALLOWED && req->rule->scoped)
    {
      req->scope_asked = TRUE;
      g_clear_object (&req->cancellable);
      ask_polkit (g_steal_pointer (&req), LM_ACTION_MONITOR_ALL, FALSE);
      return;
    }
  if (verdict == LM_AUTH_ALLOWED)
    allow (req, FALSE);
  else if (verdict == LM_AUTH_DENIED)
    deny (req, why);
  else
    refuse (req, verdict, LM_ERROR_NAME_AUTH_UNAVAILABLE, why);
}

/* CheckAuthorization, as polkit's D-Bus interface documents it, with a
 * cancellation id of our own: the timeout gives the question up in polkitd
 * too. A scope question (monitor-all) carries no details and never asks
 * the person. */
static void
ask_polkit (LmAuthRequest *req_in, const char *action, gboolean interactive)
{
  g_autoptr (LmAuthRequest) req = req_in;
  GVariantBuilder subject_details, details;
  GHashTableIter iter;
  gpointer key, value;
  guint32 flags = 0;

  req->timeout_s = interactive ? lm_auth_interactive_timeout () : LM_AUTH_TIMEOUT_SECONDS;
  g_debug ("Asking polkit about %s for %s (uid %u, %u checks waiting)", action, req->sender,
           req->uid, slots.checks);
  if (interactive)
    flags |= POLKIT_ALLOW_USER_INTERACTION;
  g_free (req->cancel_id);
  req->cancel_id = g_strdup_printf ("lm-%" G_GUINT64_FORMAT, ++slots.next_id);
  req->cancellable = g_cancellable_new ();
  req->timeout_id = g_timeout_add_seconds (req->timeout_s, on_timeout, req);
  g_variant_builder_init (&subject_details, G_VARIANT_TYPE ("a{sv}"));
  g_variant_builder_add (&subject_details, "{sv}", "name", g_variant_new_string (req->sender));
  g_variant_builder_init (&details, G_VARIANT_TYPE ("a{ss}"));
  if (!req->scope_asked)
    {
      g_hash_table_iter_init (&iter, req->details);
      while (g_hash_table_iter_next (&iter, &key, &value))
        g_variant_builder_add (&details, "{ss}", key, value);
    }

  /* Read before req is handed on: argument order is unspecified in C. */
  GDBusConnection *connection = req->connection;
  GCancellable *cancellable = req->cancellable;
  GVariant *args = g_variant_new ("((sa{sv})sa{ss}us)", "system-bus-name", &subject_details, action,
                                  &details, flags, req->cancel_id);
  /* Our timeout cancels first; the bus's is a backstop. */
  int timeout_ms = (int) MIN ((guint64) req->timeout_s * 1000 + 5000, (guint64) G_MAXINT);
  g_dbus_connection_call (connection, LM_POLKIT_NAME, POLKIT_PATH, LM_POLKIT_AUTHORITY,
                          "CheckAuthorization", args, G_VARIANT_TYPE ("((bba{ss}))"),
                          G_DBUS_CALL_FLAGS_NONE, timeout_ms, cancellable, got_result,
                          g_steal_pointer (&req));
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
  const char *busy;

  req->lookup = FALSE;
  slots.lookups--;
  if (reply == NULL)
    {
      g_autofree char *why = NULL;

      g_dbus_error_strip_remote_error (error);
      why = g_strdup_printf ("cannot be checked: the bus does not know the caller (%s)",
                             error->message);
      deny (req, why);
      return;
    }
  g_variant_get (reply, "(u)", &req->uid);
  /* A caller over its share is refused before polkit is asked. */
  if (req->admit != NULL && req->invocation != NULL)
    {
      g_autoptr (GError) refusal = NULL;

      if (!req->admit (req->sender, req->uid, req->user_data, &refusal))
        {
          g_debug ("Refused %s to %s (uid %u): %s", req->method, req->sender, req->uid,
                   refusal->message);
          g_dbus_method_invocation_return_gerror (req->invocation, refusal);
          return;
        }
    }
  /* Root could write the sysctls and remount by itself; asking polkit
   * would only cost it a round trip. systemd's services do the same. */
  if (req->uid == 0)
    {
      g_debug ("%s by %s allowed: uid 0", req->method, req->sender);
      allow (req, TRUE);
      return;
    }
  busy = slot_refusal (req->sender, req->uid);
  if (busy != NULL)
    {
      g_autofree char *why = g_strdup_printf ("%s; try again when one is answered", busy);
      refuse (req, LM_AUTH_UNAVAILABLE, LM_ERROR_NAME_BUSY, why);
      return;
    }
  req->slot = TRUE;
  count_add (slots.per_sender, req->sender, TRUE, 1);
  count_add (slots.per_uid, GUINT_TO_POINTER (req->uid), FALSE, 1);
  slots.checks++;
  const char *action = req->rule->action;
  gboolean interactive = req->interactive;
  ask_polkit (g_steal_pointer (&req), action, interactive);
}

/* Asks the bus who the caller is (got_uid goes on from there): polkit is
 * asked about a uid, and root needs no question at all. */
static void
look_up_caller (LmAuthRequest *req_in)
{
  g_autoptr (LmAuthRequest) req = req_in;

  /* Refused before the uid is known: a caller with its checks already
   * waiting gains nothing by asking the bus who it is. */
  if (count_of (slots.per_sender, req->sender) >= LM_AUTH_MAX_PER_SENDER
      || slots.lookups >= LM_AUTH_MAX_LOOKUPS)
    {
      const char *busy = slots.lookups >= LM_AUTH_MAX_LOOKUPS
                             ? G_STRINGIFY (LM_AUTH_MAX_LOOKUPS) " callers are being looked up"
                             : slot_refusal (req->sender, G_MAXUINT32);
      g_autofree char *why = g_strdup_printf ("%s; try again when one is answered", busy);
      refuse (req, LM_AUTH_UNAVAILABLE, LM_ERROR_NAME_BUSY, why);
      return;
    }
  req->lookup = TRUE;
  slots.lookups++;
  GDBusConnection *connection = req->connection;
  GVariant *args = g_variant_new ("(s)", req->sender);
  g_dbus_connection_call (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                          "org.freedesktop.DBus", "GetConnectionUnixUser", args,
                          G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE,
                          LM_AUTH_TIMEOUT_SECONDS * 1000, NULL, got_uid, g_steal_pointer (&req));
}

void
lm_auth_check (GDBusMethodInvocation *invocation, LmAuthAllowed allowed, gpointer user_data,
               GDestroyNotify destroy)
{
  lm_auth_check_admit (invocation, NULL, allowed, user_data, destroy);
}

void
lm_auth_check_admit (GDBusMethodInvocation *invocation, LmAuthAdmit admit, LmAuthAllowed allowed,
                     gpointer user_data, GDestroyNotify destroy)
{
  GDBusMessage *message = g_dbus_method_invocation_get_message (invocation);
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autoptr (LmAuthRequest) req
      = request_new (g_dbus_method_invocation_get_connection (invocation), sender,
                     g_dbus_method_invocation_get_method_name (invocation));

  req->invocation = g_object_ref (invocation);
  req->admit = admit;
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
  look_up_caller (g_steal_pointer (&req));
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
  look_up_caller (g_steal_pointer (&req));
}
