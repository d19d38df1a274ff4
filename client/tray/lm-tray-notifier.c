/* lm-tray-notifier.c: desktop notifications of the tray, through libnotify.
 * Owns how often a popup appears and which one it replaces; never decides
 * whether the user wants them (the caller does), nor their words (lm-tray-view). */
#include "lm-tray-notifier.h"

#include <libnotify/notify.h>

#include "lm-escape.h"
#include "lm-tray-view.h"

#define APP_NAME "Laptop mode"

struct _LmTrayNotifier
{
  guint interval;
  /* One notification each, updated and shown again, so that a new popup
   * replaces the old one instead of piling up. */
  NotifyNotification *spinup;
  NotifyNotification *problem;
  NotifyNotification *wear;
  /* The interval after a popup: spin-ups in it are counted per process. */
  guint window_id;
  GHashTable *burst; /* comm → count */
  guint burst_total;
  gboolean pending;
  char *last_text;
};

static void
show (NotifyNotification *n, const char *summary, const char *body, const char *icon)
{
  g_autoptr (GError) error = NULL;

  g_debug ("Notification: %s", summary);
  notify_notification_update (n, summary, body, icon);
  /* No notification server is not worth more than a line in the log. */
  if (!notify_notification_show (n, &error))
    g_warning ("Cannot show a notification (%s): %s", summary, error->message);
}

static gboolean window_ended (gpointer user_data);

static void
open_window (LmTrayNotifier *self)
{
  self->window_id = g_timeout_add_seconds (self->interval, window_ended, self);
}

/* The interval after a popup is over: sum up what came in it, if anything,
 * and start a new interval; else go quiet, with no timer left running. */
static gboolean
window_ended (gpointer user_data)
{
  LmTrayNotifier *self = user_data;

  self->window_id = 0;
  if (self->pending)
    {
      g_autofree char *summary = lm_tray_view_burst_text (self->burst, self->burst_total);
      g_autofree char *body = g_markup_escape_text (self->last_text, -1);
      g_autofree char *latest = g_strdup_printf ("Latest: %s", body);

      show (self->spinup, summary, latest, "laptop-mode-on");
      open_window (self);
    }
  self->pending = FALSE;
  self->burst_total = 0;
  g_hash_table_remove_all (self->burst);
  return G_SOURCE_REMOVE;
}

void
lm_tray_notifier_spin_up (LmTrayNotifier *self, GVariant *spinup)
{
  LmTraySpinUp s;

  lm_tray_spin_up_from_variant (spinup, &s);
  g_autofree char *text = lm_tray_view_spin_up_text (&s);
  const char *comm = s.comm != NULL ? s.comm : "?";

  g_hash_table_insert (
      self->burst, g_strdup (comm),
      GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (self->burst, comm)) + 1));
  self->burst_total++;
  g_free (self->last_text);
  self->last_text = g_strdup (text);

  if (self->window_id != 0)
    {
      /* Too soon after the last popup: it waits for the summary. */
      self->pending = TRUE;
      return;
    }
  g_autofree char *details = lm_tray_view_spin_up_details (&s);
  g_autofree char *body = g_markup_escape_text (details, -1);
  show (self->spinup, text, body, "laptop-mode-on");
  open_window (self);
}

void
lm_tray_notifier_drop_pending (LmTrayNotifier *self)
{
  g_clear_handle_id (&self->window_id, g_source_remove);
  self->pending = FALSE;
  self->burst_total = 0;
  g_hash_table_remove_all (self->burst);
}

void
lm_tray_notifier_problem (LmTrayNotifier *self, const char *summary, const char *body)
{
  /* lm-tray-view escaped it already; again, as that costs nothing here and
   * a body with controls must never reach the notification server. */
  g_autofree char *safe = lm_escape (body, -1, LM_ESCAPE_KEEP_BACKSLASH);
  g_autofree char *escaped = g_markup_escape_text (safe, -1);

  show (self->problem, summary, escaped, "laptop-mode-unavailable");
}

void
lm_tray_notifier_wear (LmTrayNotifier *self, const char *summary, const char *body)
{
  g_autofree char *escaped = g_markup_escape_text (body, -1);

  show (self->wear, summary, escaped, "drive-harddisk");
}

LmTrayNotifier *
lm_tray_notifier_new (guint interval_seconds)
{
  LmTrayNotifier *self = g_new0 (LmTrayNotifier, 1);

  if (!notify_is_initted ())
    notify_init (APP_NAME);
  self->interval = MAX (interval_seconds, 1);
  self->burst = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->spinup = notify_notification_new ("", NULL, NULL);
  notify_notification_set_category (self->spinup, "device");
  notify_notification_set_hint (self->spinup, "desktop-entry",
                                g_variant_new_string ("laptop-mode-tray"));
  self->problem = notify_notification_new ("", NULL, NULL);
  notify_notification_set_urgency (self->problem, NOTIFY_URGENCY_NORMAL);
  notify_notification_set_hint (self->problem, "desktop-entry",
                                g_variant_new_string ("laptop-mode-tray"));
  self->wear = notify_notification_new ("", NULL, NULL);
  notify_notification_set_category (self->wear, "device");
  notify_notification_set_hint (self->wear, "desktop-entry",
                                g_variant_new_string ("laptop-mode-tray"));
  return self;
}

void
lm_tray_notifier_free (LmTrayNotifier *self)
{
  if (self == NULL)
    return;
  g_clear_handle_id (&self->window_id, g_source_remove);
  g_clear_object (&self->spinup);
  g_clear_object (&self->problem);
  g_clear_object (&self->wear);
  g_clear_pointer (&self->burst, g_hash_table_unref);
  g_free (self->last_text);
  g_free (self);
  if (notify_is_initted ())
    notify_uninit ();
}
