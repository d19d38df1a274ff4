/* lm-daemon-override.c: the Override method: settings in force for as long
 * as one caller's connection lasts, never written to the configuration
 * file (laptop-modectl measure --compare). Owns the override's owner, its
 * keys and the file's settings underneath; lm-daemon-methods.c's Configure
 * writes those and keeps the override on top. */
#include "config.h"

#include "lm-daemon-private.h"

#include "lm-auth.h"
#include "lm-error.h"
#include "lm-limits.h"
#include "lm-settings.h"

/* The file's settings (what Configure saves) and, over them, the override's
 * keys: what is in force. */
LmSettings *
lm_daemon_override_apply (LmDaemon *self, const LmSettings *file, GError **error)
{
  g_autoptr (LmSettings) next = lm_settings_copy (file);

  if (self->override != NULL && !lm_settings_update (next, self->override, error))
    return NULL;
  return g_steal_pointer (&next);
}

const LmSettings *
lm_daemon_file_settings (LmDaemon *self)
{
  return self->file_settings != NULL ? self->file_settings : self->settings;
}

static char *
describe (GVariant *asv)
{
  g_autoptr (GString) s = g_string_new (NULL);
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_variant_iter_init (&iter, asv);
  while (g_variant_iter_loop (&iter, "{&sv}", &key, &value))
    {
      g_autofree char *text = g_variant_print (value, FALSE);
      g_autofree char *quoted = lm_limits_quote (text);
      g_string_append_printf (s, "%s%s=%s", s->len > 0 ? " " : "", key, quoted);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* Back to the file's settings: the owner cleared it, or its connection is
 * gone (SIGKILL, a crash, an empty battery: the file never held it). */
static gboolean
drop (LmDaemon *self, const char *why, GError **error)
{
  g_autoptr (LmSettings) next = lm_settings_copy (self->file_settings);

  if (!lm_daemon_transition (self, self->mode, next, NULL, error))
    return FALSE;
  g_steal_pointer (&next); /* the daemon's settings now */
  g_message ("Override by %s ended (%s): the configuration file's settings are in force",
             self->override_owner, why);
  g_clear_pointer (&self->file_settings, lm_settings_free);
  g_clear_pointer (&self->override, g_variant_unref);
  g_clear_pointer (&self->override_owner, g_free);
  g_clear_handle_id (&self->override_watch, g_bus_unwatch_name);
  return TRUE;
}

static void
on_owner_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmDaemon *self = user_data;
  g_autoptr (GError) error = NULL;

  if (self->override_owner == NULL || g_strcmp0 (name, self->override_owner) != 0)
    return;
  if (!drop (self, "its connection closed", &error))
    g_warning ("Could not end the override by %s: %s", name, error->message);
}

/* Keys an override may not hold: the run switches the mode itself, and an
 * engine change is no setting to compare. */
static gboolean
validate (LmDaemon *self, GVariant *asv, GError **error)
{
  g_autoptr (LmSettings) next = lm_settings_copy (lm_daemon_file_settings (self));

  g_autoptr (GVariant) mode = g_variant_lookup_value (asv, "Mode", NULL);
  g_autoptr (GVariant) engine = g_variant_lookup_value (asv, "Engine", NULL);

  if (mode != NULL || engine != NULL)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "Override takes power settings, not Mode or Engine");
      return FALSE;
    }
  return lm_settings_update (next, asv, error);
}

static void
override_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller, gpointer user_data)
{
  LmDaemon *self = user_data;
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) asv = NULL;

  g_variant_get (g_dbus_method_invocation_get_parameters (invocation), "(@a{sv})", &asv);
  /* Checked again: another caller may have taken it while polkit answered. */
  if (self->override_owner != NULL && g_strcmp0 (self->override_owner, sender) != 0)
    {
      g_dbus_method_invocation_return_error (invocation, LM_ERROR, LM_ERROR_BUSY,
                                             "Another connection (%s) holds an override",
                                             self->override_owner);
      return;
    }
  if (g_variant_n_children (asv) == 0)
    {
      gboolean ok = self->override_owner == NULL || drop (self, "cleared by its owner", &error);
      if (!ok)
        g_dbus_method_invocation_return_gerror (invocation, error);
      else
        g_dbus_method_invocation_return_value (invocation, NULL);
      return;
    }
  if (!validate (self, asv, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return;
    }
  g_autoptr (LmSettings) file = lm_settings_copy (lm_daemon_file_settings (self));
  g_autoptr (GVariant) before = self->override != NULL ? g_variant_ref (self->override) : NULL;
  g_clear_pointer (&self->override, g_variant_unref);
  self->override = g_variant_ref (asv);
  g_autoptr (LmSettings) next = lm_daemon_override_apply (self, file, &error);
  if (next == NULL || !lm_daemon_transition (self, self->mode, next, NULL, &error))
    {
      g_clear_pointer (&self->override, g_variant_unref);
      self->override = g_steal_pointer (&before);
      g_dbus_method_invocation_return_gerror (invocation, error);
      return;
    }
  g_steal_pointer (&next); /* the daemon's settings now */
  if (self->file_settings == NULL)
    self->file_settings = g_steal_pointer (&file);
  if (self->override_owner == NULL)
    {
      self->override_owner = g_strdup (sender);
      self->override_watch = g_bus_watch_name_on_connection (
          g_dbus_method_invocation_get_connection (invocation), sender,
          G_BUS_NAME_WATCHER_FLAGS_NONE, NULL, on_owner_vanished, self, NULL);
    }
  g_autofree char *what = describe (asv);
  g_message ("Override by %s (uid %u): %s, in force until it clears it or its connection "
             "closes; not saved",
             sender, caller->uid, what);
  g_dbus_method_invocation_return_value (invocation, NULL);
}

static gboolean
handle_override (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, GVariant *asv,
                 LmDaemon *self)
{
  g_autoptr (GError) error = NULL;
  const char *sender = g_dbus_method_invocation_get_sender (invocation);

  /* Validated (and bounded) before polkit is asked: a bad argument is an
   * error whoever asks; one override at a time. */
  if (g_variant_n_children (asv) > 0 && !validate (self, asv, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (self->override_owner != NULL && g_strcmp0 (self->override_owner, sender) != 0)
    {
      g_dbus_method_invocation_return_error (invocation, LM_ERROR, LM_ERROR_BUSY,
                                             "Another connection (%s) holds an override",
                                             self->override_owner);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  lm_auth_check (invocation, override_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

void
lm_daemon_override_connect (LmDaemon *self)
{
  g_signal_connect (self->skeleton, "handle-override", G_CALLBACK (handle_override), self);
}

void
lm_daemon_override_clear (LmDaemon *self)
{
  g_clear_handle_id (&self->override_watch, g_bus_unwatch_name);
  g_clear_pointer (&self->file_settings, lm_settings_free);
  g_clear_pointer (&self->override, g_variant_unref);
  g_clear_pointer (&self->override_owner, g_free);
}
