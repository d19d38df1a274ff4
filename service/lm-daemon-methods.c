/* lm-daemon-methods.c: the D-Bus methods of the LaptopMode1 object: each
 * validates its arguments, authorizes (lm-auth.c), then acts through lm-daemon.c. */
#include "config.h"

#include "lm-daemon-private.h"

#include "lm-auth.h"
#include "lm-engine.h"
#include "lm-error.h"
#include "lm-inhibitors.h"
#include "lm-limits.h"
#include "lm-settings.h"

static void
return_result (GDBusMethodInvocation *invocation, gboolean ok, GError *error)
{
  if (ok)
    g_dbus_method_invocation_return_value (invocation, NULL);
  else
    g_dbus_method_invocation_return_gerror (invocation, error);
}

/* --- Start, Stop, SetMode -------------------------------------------- */

static void
set_mode_allowed (GDBusMethodInvocation *invocation, gpointer user_data)
{
  LmDaemon *self = g_object_get_data (G_OBJECT (invocation), "lm-daemon");
  g_autoptr (GError) error = NULL;

  gboolean ok = lm_daemon_transition (self, user_data, NULL, &error);

  return_result (invocation, ok, error);
}

static void
authorize_mode (LmDaemon *self, GDBusMethodInvocation *invocation, const char *mode)
{
  g_object_set_data (G_OBJECT (invocation), "lm-daemon", self);
  lm_auth_check (invocation, set_mode_allowed, g_strdup (mode), g_free);
}

static gboolean
handle_start (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, LmDaemon *self)
{
  authorize_mode (self, invocation, "on");
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_stop (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, LmDaemon *self)
{
  authorize_mode (self, invocation, "off");
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_set_mode (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation,
                 const char *mode, LmDaemon *self)
{
  if (!lm_settings_valid_mode (mode))
    {
      /* Bounded: a caller's 30 MiB "mode" is quoted back in 64 bytes. */
      g_autofree char *quoted = lm_limits_quote (mode);
      g_dbus_method_invocation_return_error (invocation, LM_ERROR, LM_ERROR_INVALID_ARGS,
                                             "Mode must be “off”, “on” or “auto”, not %s", quoted);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  authorize_mode (self, invocation, mode);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* --- Configure --------------------------------------------------------- */

static gboolean
configure (LmDaemon *self, GVariant *asv, GError **error)
{
  g_autoptr (LmSettings) next = lm_settings_copy (self->settings);

  /* Checked again after authorization: another call may have changed the
   * settings that the cross-key rules compare against. */
  if (!lm_settings_update (next, asv, error))
    return FALSE;
  /* A new Mode takes effect now; otherwise the mode in force stays. */
  g_autofree char *mode
      = g_strdup (g_variant_lookup (asv, "Mode", "&s", NULL) ? next->mode : self->mode);
  if (!lm_daemon_transition (self, mode, next, error))
    return FALSE;
  g_steal_pointer (&next); /* the daemon's settings now */
  return TRUE;
}

static void
configure_allowed (GDBusMethodInvocation *invocation, gpointer user_data)
{
  LmDaemon *self = g_object_get_data (G_OBJECT (invocation), "lm-daemon");
  g_autoptr (GError) error = NULL;

  gboolean ok = configure (self, user_data, &error);

  return_result (invocation, ok, error);
}

static gboolean
handle_configure (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, GVariant *asv,
                  LmDaemon *self)
{
  g_autoptr (LmSettings) next = lm_settings_copy (self->settings);
  g_autoptr (GError) error = NULL;

  /* Validate before authorizing: a bad argument is an error whoever asks. */
  if (!lm_settings_update (next, asv, &error)
      || (lm_engine_choose (next->engine, self->backend, &error) == LM_ENGINE_NONE
          && error != NULL))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_object_set_data (G_OBJECT (invocation), "lm-daemon", self);
  lm_auth_check (invocation, configure_allowed, g_variant_ref (asv),
                 (GDestroyNotify) g_variant_unref);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* --- Sync -------------------------------------------------------------- */

static void
sync_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GDBusMethodInvocation) invocation = user_data;

  g_task_propagate_boolean (G_TASK (result), NULL);
  g_dbus_method_invocation_return_value (invocation, NULL);
}

static void
sync_allowed (GDBusMethodInvocation *invocation, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, NULL, sync_done, g_object_ref (invocation));

  g_task_run_in_thread (task, lm_daemon_flush_thread);
}

static gboolean
handle_sync (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, LmDaemon *self)
{
  lm_auth_check (invocation, sync_allowed, NULL, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* --- Inhibit, Release -------------------------------------------------- */

typedef struct
{
  LmDaemon *daemon;
  GDBusMethodInvocation *invocation;
  char *application;
  char *reason;
} InhibitCall;

static void
inhibit_call_free (InhibitCall *call)
{
  g_object_unref (call->invocation);
  g_free (call->application);
  g_free (call->reason);
  g_free (call);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (InhibitCall, inhibit_call_free)

static void
inhibit_got_uid (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (InhibitCall) call = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply
      = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  guint32 uid, cookie;

  if (reply == NULL)
    {
      g_dbus_method_invocation_return_gerror (call->invocation, error);
      return;
    }
  g_variant_get (reply, "(u)", &uid);
  if (!lm_inhibitors_add (call->daemon->inhibitors,
                          g_dbus_method_invocation_get_sender (call->invocation), uid,
                          call->application, call->reason, &cookie, &error))
    {
      g_dbus_method_invocation_return_gerror (call->invocation, error);
      return;
    }
  g_dbus_method_invocation_return_value (call->invocation, g_variant_new ("(u)", cookie));
}

/* The holder's uid is shown in the Inhibitors property, so an
 * administrator can tell whose backup keeps laptop mode off. */
static void
inhibit_allowed (GDBusMethodInvocation *invocation, gpointer user_data)
{
  InhibitCall *call = user_data;
  InhibitCall *mine = g_memdup2 (call, sizeof *call);

  g_object_ref (mine->invocation);
  mine->application = g_strdup (call->application);
  mine->reason = g_strdup (call->reason);
  g_dbus_connection_call (
      g_dbus_method_invocation_get_connection (invocation), "org.freedesktop.DBus",
      "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixUser",
      g_variant_new ("(s)", g_dbus_method_invocation_get_sender (invocation)),
      G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, inhibit_got_uid, mine);
}

static gboolean
handle_inhibit (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation,
                const char *application, const char *reason, LmDaemon *self)
{
  g_autoptr (GError) error = NULL;

  if (self->inhibitors == NULL)
    {
      g_dbus_method_invocation_return_error (invocation, LM_ERROR, LM_ERROR_FAILED,
                                             "laptop-moded is still starting; try again");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (!lm_inhibitors_validate (application, reason, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  InhibitCall *call = g_new0 (InhibitCall, 1);
  call->daemon = self;
  call->invocation = g_object_ref (invocation);
  call->application = g_strdup (application);
  call->reason = g_strdup (reason);
  lm_auth_check (invocation, inhibit_allowed, call, (GDestroyNotify) inhibit_call_free);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
release_allowed (GDBusMethodInvocation *invocation, gpointer user_data)
{
  LmDaemon *self = g_object_get_data (G_OBJECT (invocation), "lm-daemon");
  g_autoptr (GError) error = NULL;
  guint32 cookie = GPOINTER_TO_UINT (user_data);

  gboolean ok = lm_inhibitors_release (
      self->inhibitors, g_dbus_method_invocation_get_sender (invocation), cookie, &error);
  return_result (invocation, ok, error);
}

static gboolean
handle_release (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, guint cookie,
                LmDaemon *self)
{
  if (self->inhibitors == NULL)
    {
      g_dbus_method_invocation_return_error (invocation, LM_ERROR, LM_ERROR_INVALID_ARGS,
                                             "No hold with cookie %u was taken by this connection",
                                             cookie);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_object_set_data (G_OBJECT (invocation), "lm-daemon", self);
  lm_auth_check (invocation, release_allowed, GUINT_TO_POINTER (cookie), NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* The skeleton's method signals, connected once by lm_daemon_new(). */
void
lm_daemon_methods_connect (LmDaemon *self)
{
  g_signal_connect (self->skeleton, "handle-start", G_CALLBACK (handle_start), self);
  g_signal_connect (self->skeleton, "handle-stop", G_CALLBACK (handle_stop), self);
  g_signal_connect (self->skeleton, "handle-set-mode", G_CALLBACK (handle_set_mode), self);
  g_signal_connect (self->skeleton, "handle-configure", G_CALLBACK (handle_configure), self);
  g_signal_connect (self->skeleton, "handle-sync", G_CALLBACK (handle_sync), self);
  g_signal_connect (self->skeleton, "handle-inhibit", G_CALLBACK (handle_inhibit), self);
  g_signal_connect (self->skeleton, "handle-release", G_CALLBACK (handle_release), self);
}
