/* lm-tray-notifier.c: desktop notifications of the tray, through libnotify.
 * Owns what a popup says and how often one appears; never decides whether
 * the user wants them (the caller does) and never stacks popups. */
#include "lm-tray-notifier.h"

#include <libnotify/notify.h>

#include "lm-escape.h"

#define APP_NAME "Laptop mode"

struct _LmTrayNotifier
{
  guint interval;
  /* One notification each, updated and shown again, so that a new popup
   * replaces the old one instead of piling up. */
  NotifyNotification *spinup;
  NotifyNotification *problem;
  /* The interval after a popup: spin-ups in it are counted per process. */
  guint window_id;
  GHashTable *burst; /* comm → count */
  guint burst_total;
  gboolean pending;
  char *last_text;
};

char *
lm_tray_describe_spin_up (GVariant *spinup)
{
  const char *disk = "?", *comm = "?", *op = "I/O";
  guint32 pid = 0;

  g_variant_lookup (spinup, "Disk", "&s", &disk);
  g_variant_lookup (spinup, "Comm", "&s", &comm);
  g_variant_lookup (spinup, "Pid", "u", &pid);
  g_variant_lookup (spinup, "Operation", "&s", &op);
  /* Any user names its processes; ESC or BEL must not reach a terminal
   * through the log, nor confuse a notification server. */
  g_autofree char *s_disk = lm_escape (disk, -1, LM_ESCAPE_DEFAULT);
  g_autofree char *s_comm = lm_escape (comm, -1, LM_ESCAPE_DEFAULT);
  g_autofree char *s_op = lm_escape (op, -1, LM_ESCAPE_DEFAULT);
  return g_strdup_printf ("%s woken by %s (%u): %s", s_disk, s_comm, pid, s_op);
}

/* The details a popup can afford and a menu line cannot. */
static char *
spin_up_body (GVariant *spinup)
{
  g_autoptr (GString) body = g_string_new (NULL);
  const char *via = NULL, *path = NULL, *submitter = NULL;
  gint64 usec = 0;

  if (g_variant_lookup (spinup, "Time", "x", &usec) && usec > 0)
    {
      g_autoptr (GDateTime) t = g_date_time_new_from_unix_local (usec / G_USEC_PER_SEC);
      if (t != NULL)
        {
          g_autofree char *s = g_date_time_format (t, "%X");
          g_string_append_printf (body, "At %s", s);
        }
    }
  if (g_variant_lookup (spinup, "Path", "&s", &path))
    {
      g_autofree char *s_path = lm_escape (path, -1, LM_ESCAPE_DEFAULT);
      g_string_append_printf (body, "%sfile %s", body->len ? ", " : "", s_path);
    }
  if (g_variant_lookup (spinup, "Via", "&s", &via) && g_strcmp0 (via, "writeback") == 0
      && g_variant_lookup (spinup, "SubmitterComm", "&s", &submitter))
    {
      g_autofree char *s_submitter = lm_escape (submitter, -1, LM_ESCAPE_DEFAULT);
      g_string_append_printf (body, "%swritten back by %s", body->len ? ", " : "", s_submitter);
    }
  return g_markup_escape_text (body->str, -1);
}

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

static int
by_count (gconstpointer a, gconstpointer b, gpointer user_data)
{
  GHashTable *burst = user_data;
  guint ca = GPOINTER_TO_UINT (g_hash_table_lookup (burst, *(const char **) a));
  guint cb = GPOINTER_TO_UINT (g_hash_table_lookup (burst, *(const char **) b));

  if (ca != cb)
    return ca > cb ? -1 : 1;
  return g_strcmp0 (*(const char **) a, *(const char **) b);
}

/* "4 spin-ups: cron ×3, firefox ×1" */
static char *
burst_summary (LmTrayNotifier *self)
{
  g_autoptr (GPtrArray) comms = g_ptr_array_new ();
  g_autoptr (GString) s = g_string_new (NULL);
  GHashTableIter iter;
  gpointer comm;

  g_hash_table_iter_init (&iter, self->burst);
  while (g_hash_table_iter_next (&iter, &comm, NULL))
    g_ptr_array_add (comms, comm);

  g_ptr_array_sort_with_data (comms, by_count, self->burst);
  g_string_printf (s, "%u spin-ups: ", self->burst_total);
  for (guint i = 0; i < comms->len; i++)
    {
      g_autofree char *safe = lm_escape (comms->pdata[i], -1, LM_ESCAPE_DEFAULT);
      g_string_append_printf (
          s, "%s%s ×%u", i ? ", " : "", safe,
          GPOINTER_TO_UINT (g_hash_table_lookup (self->burst, comms->pdata[i])));
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
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
      g_autofree char *summary = burst_summary (self);
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
  const char *comm = "?";
  g_autofree char *text = lm_tray_describe_spin_up (spinup);

  g_variant_lookup (spinup, "Comm", "&s", &comm);
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
  g_autofree char *body = spin_up_body (spinup);
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
  /* The body quotes the daemon's message, which quotes the caller's input
   * escaped already: controls go, backslashes stay. */
  g_autofree char *safe = lm_escape (body, -1, LM_ESCAPE_KEEP_BACKSLASH);
  g_autofree char *escaped = g_markup_escape_text (safe, -1);

  show (self->problem, summary, escaped, "laptop-mode-unavailable");
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
  g_clear_pointer (&self->burst, g_hash_table_unref);
  g_free (self->last_text);
  g_free (self);
  if (notify_is_initted ())
    notify_uninit ();
}
