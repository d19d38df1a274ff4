/* lm-tray-app.c: laptop-mode-tray's link between laptop-moded and the desktop.
 * Owns the daemon connection and what each daemon state looks like; never
 * speaks the tray or notification protocols itself. */
#include "config.h"

#include "lm-tray-app.h"

#include <gio/gio.h>

#include "lm-escape.h"
#include "lm-generated.h"
#include "lm-names.h"
#include "lm-tray-item.h"
#include "lm-tray-menu.h"
#include "lm-tray-notifier.h"
#include "lm-tray-settings.h"

/* The menu shows the last few; the daemon keeps more for laptop-modectl. */
#define RECENT_MAX 8

/* Which right each call needs, in words a user can pass on to an admin. */
static const struct
{
  const char *method;
  const char *right;
  const char *what;
} rights[] = {
  { "Start", LM_ACTION_SWITCH, "switch laptop mode on" },
  { "Stop", LM_ACTION_SWITCH, "switch laptop mode off" },
  { "SetMode", LM_ACTION_SWITCH, "change the laptop mode setting" },
  { "Subscribe", LM_ACTION_MONITOR, "watch disk spin-ups" },
  { "GetSpinUps", LM_ACTION_MONITOR, "see recent disk spin-ups" },
};

struct _LmTrayApp
{
  GMainLoop *loop;
  int exit_status;
  LmTrayItem *item;
  LmTrayMenu *menu;
  LmTrayNotifier *notifier;
  guint daemon_watch;
  /* Calls to the daemon now on the bus; cancelled when it goes away. */
  GCancellable *cancellable;
  LmExportedLaptopMode *proxy;
  gboolean notify;
  gboolean subscribed;
  /* A denied subscription is explained once, not at every reconnection. */
  gboolean told_monitor_denied;
  GPtrArray *recent; /* newest first */
  char *spinups_note;
};

typedef void (*CallDone) (LmTrayApp *app, GVariant *reply, const GError *error);

typedef struct
{
  LmTrayApp *app;
  const char *method;
  CallDone done;
} Call;

static void update (LmTrayApp *app);

static const char *
right_for (const char *method, const char **what)
{
  for (gsize i = 0; i < G_N_ELEMENTS (rights); i++)
    if (g_str_equal (rights[i].method, method))
      {
        *what = rights[i].what;
        return rights[i].right;
      }
  *what = method;
  return "unknown";
}

static gboolean
is_remote_error (const GError *error, const char *name)
{
  g_autofree char *remote = g_dbus_error_get_remote_error (error);

  return g_strcmp0 (remote, name) == 0;
}

static gboolean
is_denied (const GError *error)
{
  return g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_ACCESS_DENIED);
}

/* Tell the user why the click did nothing: which right is missing, or what
 * the daemon said. */
static void
report (LmTrayApp *app, const char *method, const GError *error)
{
  const char *what;
  const char *right = right_for (method, &what);
  g_autoptr (GError) copy = g_error_copy (error);
  g_autofree char *summary = NULL;
  g_autofree char *body = NULL;

  g_dbus_error_strip_remote_error (copy);
  /* The daemon quotes input escaped already: controls go, backslashes stay. */
  g_autofree char *message = lm_escape (copy->message, -1, LM_ESCAPE_KEEP_BACKSLASH);
  if (is_denied (error))
    {
      summary = g_strdup_printf ("Not allowed to %s", what);
      body = g_strdup_printf ("Your account lacks the right %s. An administrator can grant it "
                              "with a polkit rule (see laptop-mode-tray(1)).\n%s",
                              right, message);
    }
  else
    {
      summary = g_strdup_printf ("Could not %s", what);
      body = g_strdup (message);
    }
  g_message ("%s: %s", summary, message);
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
    report (call->app, call->method, error);
}

/* @interactive: a person just clicked, so polkit may ask for a password
 * rather than refuse (and that may take long). Calls the tray makes on its
 * own, at login or when a menu opens, never make a password dialog appear. */
static void
call_daemon_full (LmTrayApp *app, const char *method, GVariant *params, gboolean interactive,
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

static void
call_daemon (LmTrayApp *app, const char *method, GVariant *params, CallDone done)
{
  call_daemon_full (app, method, params, TRUE, done);
}

/* --- spin-ups --------------------------------------------------------- */

static char *
recent_line (GVariant *spinup)
{
  g_autofree char *text = lm_tray_describe_spin_up (spinup);
  gint64 usec = 0;

  if (g_variant_lookup (spinup, "Time", "x", &usec) && usec > 0)
    {
      g_autoptr (GDateTime) t = g_date_time_new_from_unix_local (usec / G_USEC_PER_SEC);
      if (t != NULL)
        {
          g_autofree char *when = g_date_time_format (t, "%X");
          return g_strdup_printf ("%s  %s", when, text);
        }
    }
  return g_steal_pointer (&text);
}

static void
show_recent (LmTrayApp *app)
{
  g_ptr_array_add (app->recent, NULL);
  lm_tray_menu_set_spinups (app->menu, (const char *const *) app->recent->pdata,
                            app->spinups_note != NULL ? app->spinups_note : "None yet");
  g_ptr_array_remove_index (app->recent, app->recent->len - 1);
}

static void
set_spinups_note (LmTrayApp *app, const char *note)
{
  g_free (app->spinups_note);
  app->spinups_note = g_strdup (note);
}

static void
got_spinups (LmTrayApp *app, GVariant *reply, const GError *error)
{
  g_autoptr (GVariant) list = NULL;
  gsize n;

  if (reply == NULL)
    {
      /* Said in the menu only: the subscription already explains a denial. */
      if (is_denied (error))
        set_spinups_note (app, "Not allowed (needs " LM_ACTION_MONITOR ")");
      else if (is_remote_error (error, LM_ERROR_NAME_NOT_SUPPORTED))
        set_spinups_note (app, "Not available on this kernel");
      else
        g_debug ("GetSpinUps failed: %s", error->message);
      show_recent (app);
      return;
    }
  set_spinups_note (app, NULL);
  list = g_variant_get_child_value (reply, 0);
  n = g_variant_n_children (list);
  g_ptr_array_set_size (app->recent, 0);
  /* The daemon lists oldest first; the menu shows newest first. */
  for (gsize i = n; i > 0 && app->recent->len < RECENT_MAX; i--)
    {
      g_autoptr (GVariant) spinup = g_variant_get_child_value (list, i - 1);
      g_ptr_array_add (app->recent, recent_line (spinup));
    }
  show_recent (app);
  update (app);
}

static void
fetch_spinups (LmTrayApp *app)
{
  if (app->proxy != NULL)
    call_daemon_full (app, "GetSpinUps", NULL, FALSE, got_spinups);
}

static void
on_spin_up (LmExportedLaptopMode *proxy, GVariant *spinup, gpointer user_data)
{
  LmTrayApp *app = user_data;
  g_autofree char *line = recent_line (spinup);

  g_debug ("Spin-up: %s", line);
  g_ptr_array_insert (app->recent, 0, g_steal_pointer (&line));
  if (app->recent->len > RECENT_MAX)
    g_ptr_array_remove_index (app->recent, app->recent->len - 1);
  set_spinups_note (app, NULL);
  show_recent (app);
  update (app);
  if (app->notify)
    lm_tray_notifier_spin_up (app->notifier, spinup);
}

static void
subscribed (LmTrayApp *app, GVariant *reply, const GError *error)
{
  if (reply != NULL)
    {
      g_debug ("Subscribed to spin-ups");
      app->subscribed = TRUE;
      /* Notifications were turned off while the call was on its way. */
      if (!app->notify && app->proxy != NULL)
        {
          call_daemon (app, "Unsubscribe", NULL, NULL);
          app->subscribed = FALSE;
        }
      return;
    }
  if (is_remote_error (error, LM_ERROR_NAME_NOT_SUPPORTED))
    {
      g_message ("No spin-up notifications: %s", error->message);
      set_spinups_note (app, "Not available on this kernel");
      show_recent (app);
      return;
    }
  if (is_denied (error) && app->told_monitor_denied)
    return;
  if (is_denied (error))
    app->told_monitor_denied = TRUE;
  report (app, "Subscribe", error);
}

static void
subscribe (LmTrayApp *app, gboolean interactive)
{
  if (app->proxy != NULL && !app->subscribed)
    call_daemon_full (app, "Subscribe", NULL, interactive, subscribed);
}

/* --- state ------------------------------------------------------------ */

static const char *
reason_words (const char *reason)
{
  static const struct
  {
    const char *reason;
    const char *words;
  } words[] = {
    { LM_REASON_MANUAL, "set by hand" },
    { LM_REASON_ON_BATTERY, "running on battery" },
    { LM_REASON_AC, "running on AC power" },
    { LM_REASON_LOW_BATTERY, "battery low" },
    { LM_REASON_INHIBITED, "held off by a program" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (words); i++)
    if (g_strcmp0 (words[i].reason, reason) == 0)
      return words[i].words;
  return reason != NULL ? reason : "unknown";
}

static char *
duration_words (guint seconds)
{
  if (seconds >= 60 && seconds % 60 == 0)
    return g_strdup_printf ("%u min", seconds / 60);
  return g_strdup_printf ("%u s", seconds);
}

static void
update (LmTrayApp *app)
{
  g_autoptr (GString) desc = g_string_new (NULL);
  const char *icon, *status, *title;
  gboolean active;
  const char *mode, *reason;
  GVariant *inhibitors;

  if (app->proxy == NULL)
    {
      lm_tray_item_set_icon (app->item, "laptop-mode-unavailable");
      /* Active, not Passive: hosts may hide passive items, and a missing
       * daemon is worth seeing. */
      lm_tray_item_set_status (app->item, "Active");
      lm_tray_item_set_tooltip (app->item, "Laptop mode unavailable",
                                "laptop-moded is not running.");
      lm_tray_menu_set_state (app->menu, NULL, FALSE);
      return;
    }

  active = lm_exported_laptop_mode_get_active (app->proxy);
  mode = lm_exported_laptop_mode_get_mode (app->proxy);
  reason = lm_exported_laptop_mode_get_reason (app->proxy);
  if (g_strcmp0 (reason, LM_REASON_INHIBITED) == 0)
    icon = "laptop-mode-inhibited";
  else if (g_strcmp0 (reason, LM_REASON_LOW_BATTERY) == 0)
    icon = "laptop-mode-low-battery";
  else if (active)
    icon = "laptop-mode-on";
  else
    icon = "laptop-mode-off";
  /* Off by the user's choice or on AC is the quiet, expected state. */
  status = !active
                   && (g_strcmp0 (reason, LM_REASON_MANUAL) == 0
                       || g_strcmp0 (reason, LM_REASON_AC) == 0)
               ? "Passive"
               : "Active";
  title = active ? "Laptop mode is on" : "Laptop mode is off";

  g_autofree char *s_mode = lm_escape (mode != NULL ? mode : "unknown", -1, LM_ESCAPE_DEFAULT);
  g_autofree char *s_reason = lm_escape (reason_words (reason), -1, LM_ESCAPE_DEFAULT);
  g_string_append_printf (desc, "Mode: %s (%s)", s_mode, s_reason);
  inhibitors = lm_exported_laptop_mode_get_inhibitors (app->proxy);
  if (inhibitors != NULL && g_variant_n_children (inhibitors) > 0)
    {
      const char *who, *why;
      g_variant_get_child (inhibitors, 0, "(&s&su)", &who, &why, NULL);
      /* Any local user may take a hold, with words of its choosing. */
      g_autofree char *s_who = lm_escape (who, -1, LM_ESCAPE_DEFAULT);
      g_autofree char *s_why = lm_escape (why, -1, LM_ESCAPE_DEFAULT);
      g_string_append_printf (desc, "\nHeld off by %s: %s", s_who, s_why);
    }
  g_autofree char *lost = duration_words (lm_exported_laptop_mode_get_max_lost_work (app->proxy));
  g_string_append_printf (desc, "\nMax lost work: %s", lost);
  if (app->recent->len > 0)
    g_string_append_printf (desc, "\nLast spin-up: %s", (const char *) app->recent->pdata[0]);

  lm_tray_item_set_icon (app->item, icon);
  lm_tray_item_set_status (app->item, status);
  lm_tray_item_set_tooltip (app->item, title, desc->str);
  lm_tray_menu_set_state (app->menu, mode, active);
}

static void
properties_changed (GDBusProxy *proxy, GVariant *changed, GStrv invalidated, gpointer user_data)
{
  update (user_data);
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
  g_signal_connect (proxy, "spin-up", G_CALLBACK (on_spin_up), app);
  update (app);
  if (app->notify)
    subscribe (app, FALSE);
  fetch_spinups (app);
}

static void
daemon_appeared (GDBusConnection *connection, const char *name, const char *owner,
                 gpointer user_data)
{
  LmTrayApp *app = user_data;

  g_debug ("laptop-moded is on the bus as %s", owner);
  g_cancellable_cancel (app->cancellable);
  g_clear_object (&app->cancellable);
  app->cancellable = g_cancellable_new ();
  /* A new daemon knows nothing of our subscription. */
  app->subscribed = FALSE;
  lm_exported_laptop_mode_proxy_new (connection, G_DBUS_PROXY_FLAGS_NONE, LM_BUS_NAME,
                                     LM_OBJECT_PATH, app->cancellable, proxy_ready, app);
}

static void
daemon_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmTrayApp *app = user_data;

  g_debug ("laptop-moded is not on the %s", connection != NULL ? "system bus" : "(no) system bus");
  g_cancellable_cancel (app->cancellable);
  if (app->proxy != NULL)
    g_signal_handlers_disconnect_by_data (app->proxy, app);
  g_clear_object (&app->proxy);
  app->subscribed = FALSE;
  update (app);
}

/* --- what the user does ---------------------------------------------- */

static gboolean
need_daemon (LmTrayApp *app)
{
  if (app->proxy != NULL)
    return TRUE;
  lm_tray_notifier_problem (app->notifier, "Laptop mode is unavailable",
                            "laptop-moded is not running, so laptop mode cannot be switched.");
  return FALSE;
}

static void
toggle (gpointer user_data)
{
  LmTrayApp *app = user_data;

  if (need_daemon (app))
    call_daemon (app, lm_exported_laptop_mode_get_active (app->proxy) ? "Stop" : "Start", NULL,
                 NULL);
}

static void
set_mode (const char *mode, gpointer user_data)
{
  LmTrayApp *app = user_data;

  if (need_daemon (app))
    call_daemon (app, "SetMode", g_variant_new ("(s)", mode), NULL);
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
      subscribe (app, TRUE);
    }
  else
    {
      lm_tray_notifier_drop_pending (app->notifier);
      /* Unsubscribing stops the daemon's monitoring when no one else watches. */
      if (app->subscribed && app->proxy != NULL)
        call_daemon (app, "Unsubscribe", NULL, NULL);
      app->subscribed = FALSE;
    }
}

static void
refresh_spinups (gpointer user_data)
{
  fetch_spinups (user_data);
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
      = { toggle, set_mode, set_notify, refresh_spinups, quit };
  LmTrayApp *app = g_new0 (LmTrayApp, 1);
  const char *theme_path = g_getenv ("LAPTOP_MODE_TRAY_ICON_THEME_PATH");

  app->loop = g_main_loop_new (NULL, FALSE);
  app->cancellable = g_cancellable_new ();
  app->recent = g_ptr_array_new_with_free_func (g_free);
  app->notify = lm_tray_settings_get_notify ();
  app->notifier = lm_tray_notifier_new (notify_interval);
  app->menu = lm_tray_menu_new (&menu_callbacks, app);
  lm_tray_menu_set_notify (app->menu, app->notify);
  app->item = lm_tray_item_new (LM_TRAY_MENU_PATH, theme_path ? theme_path : LM_TRAY_ICON_DIR,
                                &item_callbacks, app);
  update (app);
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
  if (app->proxy != NULL)
    g_signal_handlers_disconnect_by_data (app->proxy, app);
  g_clear_object (&app->proxy);
  g_clear_pointer (&app->item, lm_tray_item_free);
  g_clear_pointer (&app->menu, lm_tray_menu_free);
  g_clear_pointer (&app->notifier, lm_tray_notifier_free);
  g_clear_pointer (&app->recent, g_ptr_array_unref);
  g_free (app->spinups_note);
  g_clear_pointer (&app->loop, g_main_loop_unref);
  g_free (app);
}
