/* lm-auth.c: who may call what.
 * Until polkit is wired in, an action is allowed for uid 0 only. The caller's
 * uid comes from the bus daemon, asked asynchronously so that a slow answer
 * never blocks other callers. */
#include "lm-auth.h"

typedef struct
{
  const char *method;
  const char *action;
} LmAuthRule;

static const LmAuthRule rules[] = {
  { "Start", LM_ACTION_SWITCH },     { "Stop", LM_ACTION_SWITCH },
  { "SetMode", LM_ACTION_SWITCH },   { "Sync", LM_ACTION_SWITCH },
  { "Configure", LM_ACTION_CONFIGURE },
  { "Inhibit", "org.laptopmode.LaptopMode1.inhibit" },
  { "Release", "org.laptopmode.LaptopMode1.inhibit" },
  { "Subscribe", "org.laptopmode.LaptopMode1.monitor" },
  { "Unsubscribe", "org.laptopmode.LaptopMode1.monitor" },
  { "GetSpinUps", "org.laptopmode.LaptopMode1.monitor" },
};

const char *
lm_auth_action_for_method (const char *method)
{
  for (gsize i = 0; i < G_N_ELEMENTS (rules); i++)
    if (g_str_equal (rules[i].method, method))
      return rules[i].action;
  return NULL;
}

typedef struct
{
  GDBusMethodInvocation *invocation;
  const char *action;
  LmAuthAllowed allowed;
  gpointer user_data;
  GDestroyNotify destroy;
} LmAuthRequest;

static void
request_free (LmAuthRequest *req)
{
  if (req->destroy != NULL)
    req->destroy (req->user_data);
  g_object_unref (req->invocation);
  g_free (req);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmAuthRequest, request_free)

static void
deny (LmAuthRequest *req, const char *why)
{
  g_dbus_method_invocation_return_error (
      req->invocation, G_DBUS_ERROR, G_DBUS_ERROR_ACCESS_DENIED,
      "Not authorized to %s: action %s (%s)",
      g_dbus_method_invocation_get_method_name (req->invocation),
      req->action != NULL ? req->action : "none", why);
}

static void
got_uid (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (LmAuthRequest) req = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply =
      g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  guint32 uid;

  if (reply == NULL)
    {
      deny (req, error->message);
      return;
    }
  g_variant_get (reply, "(u)", &uid);
  if (uid != 0)
    {
      deny (req, "only root may do this");
      return;
    }
  req->allowed (req->invocation, req->user_data);
}

void
lm_auth_check (GDBusMethodInvocation *invocation, LmAuthAllowed allowed, gpointer user_data,
               GDestroyNotify destroy)
{
  LmAuthRequest *req = g_new0 (LmAuthRequest, 1);

  req->invocation = g_object_ref (invocation);
  req->action = lm_auth_action_for_method (g_dbus_method_invocation_get_method_name (invocation));
  req->allowed = allowed;
  req->user_data = user_data;
  req->destroy = destroy;

  if (req->action == NULL)
    {
      deny (req, "no rule for this method");
      request_free (req);
      return;
    }

  g_dbus_connection_call (g_dbus_method_invocation_get_connection (invocation),
                          "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                          "GetConnectionUnixUser",
                          g_variant_new ("(s)", g_dbus_method_invocation_get_sender (invocation)),
                          G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, got_uid, req);
}
