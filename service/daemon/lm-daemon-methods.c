/* lm-daemon-methods.c: the D-Bus methods of the LaptopMode1 object: each
 * validates its arguments, authorizes (lm-auth.c), then acts through lm-daemon.c. */
#include "config.h"

#include "lm-daemon-private.h"

#include "lm-auth.h"
#include "lm-engine.h"
#include "lm-error.h"
#include "lm-inhibitors.h"
#include "lm-limits.h"
#include "lm-measurement.h"
#include "lm-paths.h"
#include "lm-settings.h"
#include "lm-sync.h"

static void
return_result (GDBusMethodInvocation *invocation, gboolean ok, GError *error)
{
  if (ok)
    g_dbus_method_invocation_return_value (invocation, NULL);
  else
    g_dbus_method_invocation_return_gerror (invocation, error);
}

/* Every handler validates its arguments, then lm_auth_check() carries the
 * invocation to the *_allowed() function, with the caller it looked up;
 * that acts from the same invocation's parameters: nothing is copied or
 * stashed on the way. */

/* --- Start, Stop, SetMode -------------------------------------------- */

/* The mode a Start, Stop or (validated) SetMode call asks for. */
static const char *
mode_of (GDBusMethodInvocation *invocation)
{
  const char *method = g_dbus_method_invocation_get_method_name (invocation);
  const char *mode;

  if (g_str_equal (method, "Start"))
    return "on";
  if (g_str_equal (method, "Stop"))
    return "off";
  g_variant_get (g_dbus_method_invocation_get_parameters (invocation), "(&s)", &mode);
  return mode;
}

static void
set_mode_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller, gpointer user_data)
{
  g_autoptr (GError) error = NULL;

  gboolean ok = lm_daemon_transition (user_data, mode_of (invocation), NULL, NULL, &error);

  return_result (invocation, ok, error);
}

static gboolean
handle_start (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, LmDaemon *self)
{
  lm_auth_check (invocation, set_mode_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_stop (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, LmDaemon *self)
{
  lm_auth_check (invocation, set_mode_allowed, self, NULL);
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
  lm_auth_check (invocation, set_mode_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* --- Configure --------------------------------------------------------- */

/* The file gets the change; an override in force stays on top of it. */
static gboolean
configure (LmDaemon *self, GVariant *asv, GError **error)
{
  g_autoptr (LmSettings) file = lm_settings_copy (lm_daemon_file_settings (self));

  /* Checked again after authorization: another call may have changed the
   * settings that the cross-key rules compare against. */
  if (!lm_settings_update (file, asv, error))
    return FALSE;
  g_autoptr (LmSettings) next = lm_daemon_override_apply (self, file, error);
  if (next == NULL)
    return FALSE;
  /* A new Mode takes effect now; otherwise the mode in force stays. */
  g_autofree char *mode
      = g_strdup (g_variant_lookup (asv, "Mode", "&s", NULL) ? next->mode : self->mode);
  if (!lm_daemon_transition (self, mode, next, file, error))
    return FALSE;
  g_steal_pointer (&next); /* the daemon's settings now */
  if (self->file_settings != NULL)
    {
      lm_settings_free (self->file_settings);
      self->file_settings = g_steal_pointer (&file);
    }
  return TRUE;
}

static void
configure_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller,
                   gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) asv = NULL;

  g_variant_get (g_dbus_method_invocation_get_parameters (invocation), "(@a{sv})", &asv);
  gboolean ok = configure (user_data, asv, &error);

  return_result (invocation, ok, error);
}

static gboolean
handle_configure (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, GVariant *asv,
                  LmDaemon *self)
{
  g_autoptr (LmSettings) next = lm_settings_copy (lm_daemon_file_settings (self));
  g_autoptr (GError) error = NULL;

  /* Validate before authorizing: a bad argument is an error whoever asks. */
  if (!lm_settings_update (next, asv, &error)
      || (lm_engine_choose (next->engine, self->backend, &error) == LM_ENGINE_NONE
          && error != NULL))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  lm_auth_check (invocation, configure_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* --- Sync -------------------------------------------------------------- */

static void
sync_done (gpointer user_data)
{
  g_autoptr (GDBusMethodInvocation) invocation = user_data;

  g_dbus_method_invocation_return_value (invocation, NULL);
}

/* One sync() in flight, shared by the callers waiting (lm-sync.c). */
static void
sync_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller, gpointer user_data)
{
  lm_sync_request (sync_done, g_object_ref (invocation));
}

static gboolean
handle_sync (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, LmDaemon *self)
{
  lm_auth_check (invocation, sync_allowed, NULL, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* --- Inhibit, Release -------------------------------------------------- */

/* The holder's uid (the one lm-auth.c had the bus look up) is shown in the
 * Inhibitors property, so an administrator can tell whose backup keeps
 * laptop mode off. */
static void
inhibit_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller, gpointer user_data)
{
  LmDaemon *self = user_data;
  g_autoptr (GError) error = NULL;
  const char *application, *reason;
  guint32 cookie;

  g_variant_get (g_dbus_method_invocation_get_parameters (invocation), "(&s&s)", &application,
                 &reason);
  if (!lm_inhibitors_add (self->inhibitors, g_dbus_method_invocation_get_sender (invocation),
                          caller->uid, application, reason, &cookie, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return;
    }
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(u)", cookie));
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
  lm_auth_check (invocation, inhibit_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
release_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller, gpointer user_data)
{
  LmDaemon *self = user_data;
  g_autoptr (GError) error = NULL;
  guint32 cookie;

  g_variant_get (g_dbus_method_invocation_get_parameters (invocation), "(u)", &cookie);
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
  lm_auth_check (invocation, release_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* --- SaveMeasurement -------------------------------------------------- */

static void
save_measurement_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller,
                          gpointer user_data)
{
  LmDaemon *self = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) asv = NULL;

  g_variant_get (g_dbus_method_invocation_get_parameters (invocation), "(@a{sv})", &asv);
  if (!lm_measurement_save (lm_state_dir (), asv, &error))
    {
      g_dbus_method_invocation_return_error (invocation, LM_ERROR, LM_ERROR_FAILED,
                                             "Cannot save the measurement: %s", error->message);
      return;
    }
  lm_exported_laptop_mode_set_measurement (self->skeleton, asv);
  g_dbus_method_invocation_return_value (invocation, NULL);
}

static gboolean
handle_save_measurement (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation,
                         GVariant *asv, LmDaemon *self)
{
  g_autoptr (GError) error = NULL;

  if (!lm_measurement_validate (asv, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  lm_auth_check (invocation, save_measurement_allowed, self, NULL);
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
  g_signal_connect (self->skeleton, "handle-save-measurement", G_CALLBACK (handle_save_measurement),
                    self);
}
