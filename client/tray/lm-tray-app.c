/* lm-tray-app.c: laptop-mode-tray's link between laptop-moded and the desktop.
 * Owns the daemon connection and gathers the daemon's state for lm-tray-view;
 * never decides what a state looks like, nor speaks the desktop's protocols. */
#include "config.h"

#include "lm-tray-app-private.h"

#include <gio/gio.h>

#include "lm-generated.h"
#include "lm-names.h"
#include "lm-tray-item.h"
#include "lm-tray-menu.h"
#include "lm-tray-notifier.h"
#include "lm-tray-report.h"
#include "lm-tray-settings.h"
#include "lm-tray-view.h"

gboolean
lm_tray_app_is_remote_error (const GError *error, const char *name)
{
  g_autofree char *remote = g_dbus_error_get_remote_error (error);

  return g_strcmp0 (remote, name) == 0;
}

gboolean
lm_tray_app_is_denied (const GError *error)
{
  return g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_ACCESS_DENIED);
}

/* Tell the user why the click did nothing: which right is missing, or what
 * the daemon said. */
void
lm_tray_app_report (LmTrayApp *app, const char *method, const GError *error)
{
  g_autoptr (GError) copy = g_error_copy (error);
  g_autofree char *summary = NULL;
  g_autofree char *body = NULL;

  g_dbus_error_strip_remote_error (copy);
  lm_tray_view_call_failed (method, lm_tray_app_is_denied (error), copy->message, &summary, &body);
  g_message ("%s: %s", summary, body);
  lm_tray_notifier_problem (app->notifier, summary, body);
}

static void
call_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autofree Call *call = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply = g_dbus_proxy_call_finish (G_DBUS_PROXY (source), result, &error);

  /* Cancelled: the daemon left and this answer is of no use now. */
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (call->done != NULL)
    call->done (call->app, reply, error);
  else if (reply == NULL)
    lm_tray_app_report (call->app, call->method, error);
}

/* @interactive: a person just clicked, so polkit may ask for a password
 * rather than refuse (and that may take long). Calls the tray makes on its
 * own, at login or when a menu opens, never make a password dialog appear. */
void
lm_tray_app_call_full (LmTrayApp *app, const char *method, GVariant *params, gboolean interactive,
                       CallDone done)
{
  Call *call = g_new0 (Call, 1);

  call->app = app;
  call->method = method;
  call->done = done;
  g_dbus_proxy_call (G_DBUS_PROXY (app->proxy), method, params,
                     interactive ? G_DBUS_CALL_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION
                                 : G_DBUS_CALL_FLAGS_NONE,
                     interactive ? G_MAXINT : -1, app->cancellable, call_done, call);
}

void
lm_tray_app_call (LmTrayApp *app, const char *method, GVariant *params, CallDone done)
{
  lm_tray_app_call_full (app, method, params, TRUE, done);
}

/* --- state ------------------------------------------------------------ */

/* A disk that would wear out its heads within five years: told once per
 * disk while the tray runs, even if notifications of spin-ups are off. */
static void
notify_wear (LmTrayApp *app, GVariant *disks)
{
  GVariantIter iter;
  const char *name;
  GVariant *info;

  if (disks == NULL || !g_variant_is_of_type (disks, G_VARIANT_TYPE ("a{sa{sv}}")))
    return;
  g_variant_iter_init (&iter, disks);
  while (g_variant_iter_next (&iter, "{&s@a{sv}}", &name, &info))
    {
      g_autoptr (GVariant) owned = info;
      g_autofree char *body = NULL;
      g_autofree char *summary = NULL;
      if (g_hash_table_contains (app->wear_told, name))
        continue;
      summary = lm_tray_view_wear_text (name, info, &body);
      if (summary == NULL)
        continue;
      g_hash_table_add (app->wear_told, g_strdup (name));
      lm_tray_notifier_wear (app->notifier, summary, body);
    }
}

void
lm_tray_app_update (LmTrayApp *app)
{
  LmTrayState state = { .available = app->proxy != NULL,
                        .monitor = app->monitor,
                        .spinups_unsupported = app->spinups_unsupported,
                        .report_running = app->report_running };
  g_autoptr (GArray) recent = g_array_new (FALSE, TRUE, sizeof (LmTraySpinUp));
  g_autoptr (GArray) days = NULL;
  g_autoptr (GVariant) summary = NULL;
  g_auto (LmTrayView) view = { 0 };

  for (guint i = 0; i < app->recent->len; i++)
    {
      LmTraySpinUp s;
      lm_tray_spin_up_from_variant (app->recent->pdata[i], &s);
      g_array_append_val (recent, s);
    }
  state.recent = (const LmTraySpinUp *) recent->data;
  state.n_recent = recent->len;

  if (app->proxy != NULL)
    {
      GVariant *holds = lm_exported_laptop_mode_get_inhibitors (app->proxy);

      state.active = lm_exported_laptop_mode_get_active (app->proxy);
      state.mode = lm_exported_laptop_mode_get_mode (app->proxy);
      state.reason = lm_exported_laptop_mode_get_reason (app->proxy);
      state.max_lost_work = lm_exported_laptop_mode_get_max_lost_work (app->proxy);
      if (holds != NULL && g_variant_n_children (holds) > 0)
        {
          state.n_holds = (guint) g_variant_n_children (holds);
          g_variant_get_child (holds, 0, "(&s&su)", &state.hold_who, &state.hold_why, NULL);
        }
      summary = lm_exported_laptop_mode_dup_ledger_summary (app->proxy);
    }
  days = lm_tray_disk_days_from_variant (summary, app->top_wakers);
  state.days = (const LmTrayDiskDay *) days->data;
  state.n_days = days->len;

  if (app->proxy != NULL)
    notify_wear (app, lm_exported_laptop_mode_get_disks (app->proxy));
  lm_tray_view_build (&state, &view);
  lm_tray_item_apply (app->item, &view);
  lm_tray_menu_apply (app->menu, &view);
}

static void
properties_changed (GDBusProxy *proxy, GVariant *changed, GStrv invalidated, gpointer user_data)
{
  LmTrayApp *app = user_data;
  g_autoptr (GVariant) summary = g_variant_lookup_value (changed, "LedgerSummary", NULL);

  if (summary != NULL
      || (invalidated != NULL
          && g_strv_contains ((const char *const *) invalidated, "LedgerSummary")))
    lm_tray_app_fetch_ledger (app);
  lm_tray_app_update (app);
}

static void
proxy_ready (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LmTrayApp *app = user_data;
  g_autoptr (GError) error = NULL;
  LmExportedLaptopMode *proxy = lm_exported_laptop_mode_proxy_new_finish (result, &error);

  if (proxy == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_warning ("Cannot talk to laptop-moded: %s", error->message);
      return;
    }
  g_clear_object (&app->proxy);
  app->proxy = proxy;
  g_signal_connect (proxy, "g-properties-changed", G_CALLBACK (properties_changed), app);
  /* Listen before subscribing, so no spin-up falls in between. */
  g_signal_connect (proxy, "spin-up", G_CALLBACK (lm_tray_app_on_spin_up), app);
  lm_tray_app_update (app);
  if (app->notify)
    lm_tray_app_subscribe (app, FALSE);
  /* Also tells whether this user may monitor; if so, today's ledger follows. */
  lm_tray_app_fetch_spinups (app);
}

/* A new daemon, or none: what the old one said or allowed counts no more. */
static void
forget_daemon (LmTrayApp *app)
{
  g_cancellable_cancel (app->cancellable);
  g_clear_object (&app->cancellable);
  app->cancellable = g_cancellable_new ();
  if (app->proxy != NULL)
    g_signal_handlers_disconnect_by_data (app->proxy, app);
  g_clear_object (&app->proxy);
  app->subscribed = FALSE;
  app->monitor = LM_TRAY_MONITOR_UNKNOWN;
  app->spinups_unsupported = FALSE;
  app->ledger_busy = FALSE;
  app->ledger_again = FALSE;
  g_ptr_array_set_size (app->ledger_records, 0);
  g_hash_table_remove_all (app->top_wakers);
}

static void
daemon_appeared (GDBusConnection *connection, const char *name, const char *owner,
                 gpointer user_data)
{
  LmTrayApp *app = user_data;

  g_debug ("laptop-moded is on the bus as %s", owner);
  forget_daemon (app);
  lm_exported_laptop_mode_proxy_new (connection, G_DBUS_PROXY_FLAGS_NONE, LM_BUS_NAME,
                                     LM_OBJECT_PATH, app->cancellable, proxy_ready, app);
}

static void
daemon_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmTrayApp *app = user_data;

  g_debug ("laptop-moded is not on the %s", connection != NULL ? "system bus" : "(no) system bus");
  forget_daemon (app);
  lm_tray_app_update (app);
}

/* --- what the user does ---------------------------------------------- */

static gboolean
need_daemon (LmTrayApp *app, const char *method)
{
  g_autofree char *summary = NULL;
  g_autofree char *body = NULL;

  if (app->proxy != NULL)
    return TRUE;
  lm_tray_view_no_daemon (method, &summary, &body);
  lm_tray_notifier_problem (app->notifier, summary, body);
  return FALSE;
}

static void
toggle (gpointer user_data)
{
  LmTrayApp *app = user_data;

  if (need_daemon (app, "Start"))
    lm_tray_app_call (app, lm_exported_laptop_mode_get_active (app->proxy) ? "Stop" : "Start", NULL,
                      NULL);
}

static void
set_mode (const char *mode, gpointer user_data)
{
  LmTrayApp *app = user_data;

  if (need_daemon (app, "SetMode"))
    lm_tray_app_call (app, "SetMode", g_variant_new ("(s)", mode), NULL);
}

static void
set_notify (gboolean notify, gpointer user_data)
{
  LmTrayApp *app = user_data;
  g_autoptr (GError) error = NULL;

  app->notify = notify;
  lm_tray_menu_set_notify (app->menu, notify);
  if (!lm_tray_settings_set_notify (notify, &error))
    g_warning ("The setting lasts only until the tray quits: %s", error->message);
  if (notify)
    {
      app->told_monitor_denied = FALSE;
      lm_tray_app_subscribe (app, TRUE);
    }
  else
    {
      lm_tray_notifier_drop_pending (app->notifier);
      /* Unsubscribing stops the daemon's monitoring when no one else watches. */
      if (app->subscribed && app->proxy != NULL)
        lm_tray_app_call (app, "Unsubscribe", NULL, NULL);
      app->subscribed = FALSE;
    }
}

static void
refresh_spinups (gpointer user_data)
{
  lm_tray_app_fetch_spinups (user_data);
}

static void
report_done (LmTrayReportStep step, const GError *error, gpointer user_data)
{
  LmTrayApp *app = user_data;

  app->report_running = FALSE;
  lm_tray_app_update (app);
  if (error != NULL)
    {
      g_autofree char *summary = NULL;
      g_autofree char *body = NULL;

      lm_tray_view_report_failed (step, error->message, &summary, &body);
      g_message ("%s: %s", summary, body);
      lm_tray_notifier_problem (app->notifier, summary, body);
    }
}

static void
open_report (gpointer user_data)
{
  LmTrayApp *app = user_data;

  if (app->report_running || !need_daemon (app, "Report"))
    return;
  app->report_running = TRUE;
  lm_tray_app_update (app);
  lm_tray_report_open (app->report_cancellable, report_done, app);
}

static void
quit (gpointer user_data)
{
  lm_tray_app_quit (user_data);
}

static void
item_lost (gpointer user_data)
{
  LmTrayApp *app = user_data;

  app->exit_status = 1;
  lm_tray_app_quit (app);
}

LmTrayApp *
lm_tray_app_new (guint notify_interval)
{
  static const LmTrayItemCallbacks item_callbacks = { toggle, item_lost };
  static const LmTrayMenuCallbacks menu_callbacks
      = { toggle, set_mode, set_notify, refresh_spinups, open_report, quit };
  LmTrayApp *app = g_new0 (LmTrayApp, 1);
  const char *theme_path = g_getenv ("LAPTOP_MODE_TRAY_ICON_THEME_PATH");

  app->loop = g_main_loop_new (NULL, FALSE);
  app->cancellable = g_cancellable_new ();
  app->report_cancellable = g_cancellable_new ();
  app->recent = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  app->top_wakers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  app->ledger_records = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  app->wear_told = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  app->notify = lm_tray_settings_get_notify ();
  app->notifier = lm_tray_notifier_new (notify_interval);
  app->menu = lm_tray_menu_new (&menu_callbacks, app);
  lm_tray_menu_set_notify (app->menu, app->notify);
  app->item = lm_tray_item_new (LM_TRAY_MENU_PATH, theme_path ? theme_path : LM_TRAY_ICON_DIR,
                                &item_callbacks, app);
  lm_tray_app_update (app);
  app->daemon_watch
      = g_bus_watch_name (G_BUS_TYPE_SYSTEM, LM_BUS_NAME, G_BUS_NAME_WATCHER_FLAGS_NONE,
                          daemon_appeared, daemon_vanished, app, NULL);
  return app;
}

int
lm_tray_app_run (LmTrayApp *app)
{
  g_main_loop_run (app->loop);
  return app->exit_status;
}

void
lm_tray_app_quit (LmTrayApp *app)
{
  g_main_loop_quit (app->loop);
}

void
lm_tray_app_free (LmTrayApp *app)
{
  if (app == NULL)
    return;
  if (app->daemon_watch != 0)
    g_bus_unwatch_name (app->daemon_watch);
  g_cancellable_cancel (app->cancellable);
  g_clear_object (&app->cancellable);
  g_cancellable_cancel (app->report_cancellable);
  g_clear_object (&app->report_cancellable);
  if (app->proxy != NULL)
    g_signal_handlers_disconnect_by_data (app->proxy, app);
  g_clear_object (&app->proxy);
  g_clear_pointer (&app->item, lm_tray_item_free);
  g_clear_pointer (&app->menu, lm_tray_menu_free);
  g_clear_pointer (&app->notifier, lm_tray_notifier_free);
  g_clear_pointer (&app->recent, g_ptr_array_unref);
  g_clear_pointer (&app->top_wakers, g_hash_table_unref);
  g_clear_pointer (&app->ledger_records, g_ptr_array_unref);
  g_clear_pointer (&app->wear_told, g_hash_table_unref);
  g_clear_pointer (&app->loop, g_main_loop_unref);
  g_free (app);
}
