/* lm-spinup-dbus.c: spin-up monitoring's D-Bus surface: Subscribe,
 * Unsubscribe and GetSpinUps, and SpinUp sent to each subscriber by unique
 * name, never to the whole bus, showing another user's process only to a
 * subscriber with monitor-all (the others get it as "another user's
 * process", lm_auth_redact). A subscription lasts only while polkit still
 * allows it: it is checked again whenever logind's sessions change, and
 * again later when polkit gave no answer. Subscribers are capped per user
 * and in all (lm-limits.h): each costs a match rule on the bus. */
#include "config.h"

#include "lm-spinup-dbus.h"

#include "lm-auth.h"
#include "lm-error.h"
#include "lm-limits.h"
#include "lm-logind.h"
#include "lm-names.h"

struct _LmSpinupDbus
{
  LmExportedLaptopMode *skeleton; /* not owned: the daemon's */
  LmSpinupMonitor *spinup;        /* not owned */
  GHashTable *subscribers;        /* unique name → LmSubscriber */
  GHashTable *dropped;            /* unique name → LmDropped: told, not yet asked */
  LmLogind *logind;               /* from the first Subscribe on */
  GCancellable *cancellable;      /* re-checks in flight */
  guint retry_id;                 /* re-checks to ask again */
  gulong handlers[3];
};

/* The monitor runs its backend while anyone reads. */
static void
tell_readers (LmSpinupDbus *self)
{
  lm_spinup_monitor_set_readers (self->spinup, g_hash_table_size (self->subscribers));
}

/* A re-check polkit could not answer is asked again after this long. */
#define RECHECK_RETRY_S 10

/* A subscriber: its watch on the bus and what it may see. */
typedef struct
{
  guint watch;
  LmAuthViewer viewer;
} LmSubscriber;

static void
subscriber_free (gpointer data)
{
  LmSubscriber *sub = data;

  g_bus_unwatch_name (sub->watch);
  g_free (sub);
}

static void
on_subscriber_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmSpinupDbus *self = user_data;

  if (g_hash_table_remove (self->subscribers, name))
    g_debug ("Spin-up subscriber %s left the bus", name);
  tell_readers (self);
}

/* A subscriber the daemon dropped, remembered (with its watch, so it is
 * forgotten when it leaves) until its next call, which then learns why. */
typedef struct
{
  guint watch;
  guint32 uid;
  char *reason;
} LmDropped;

static void
dropped_free (gpointer data)
{
  LmDropped *d = data;

  g_bus_unwatch_name (d->watch);
  g_free (d->reason);
  g_free (d);
}

static void
on_dropped_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmSpinupDbus *self = user_data;

  g_hash_table_remove (self->dropped, name);
}

/* --- re-checks ------------------------------------------------------- */

typedef struct
{
  LmSpinupDbus *self;
  GDBusConnection *connection;
  char *name;
} LmRecheck;

static void
recheck_free (gpointer data)
{
  LmRecheck *r = data;

  g_object_unref (r->connection);
  g_free (r->name);
  g_free (r);
}

static void
drop_subscriber (LmSpinupDbus *self, GDBusConnection *connection, const char *name, const char *why)
{
  GDBusInterfaceSkeleton *skel = G_DBUS_INTERFACE_SKELETON (self->skeleton);
  g_autoptr (GError) error = NULL;
  g_autofree char *reason = g_strdup_printf (
      "No longer authorized to monitor spin-ups after a session change: %s", why);
  LmDropped *d = g_new0 (LmDropped, 1);

  LmSubscriber *sub = g_hash_table_lookup (self->subscribers, name);

  g_message ("Dropped spin-up subscriber %s: %s", name, why);
  /* Still watched, so still counted against the caps (its uid's too). */
  d->uid = sub != NULL ? sub->viewer.uid : G_MAXUINT32;
  g_hash_table_remove (self->subscribers, name);
  d->reason = g_strdup (reason);
  /* Called at once if it has gone already: never a stale entry. */
  d->watch = g_bus_watch_name_on_connection (connection, name, G_BUS_NAME_WATCHER_FLAGS_NONE, NULL,
                                             on_dropped_vanished, self, NULL);
  g_hash_table_replace (self->dropped, g_strdup (name), d);
  if (!g_dbus_connection_emit_signal (
          connection, name, g_dbus_interface_skeleton_get_object_path (skel), LM_INTERFACE,
          "Unsubscribed", g_variant_new ("(s)", reason), &error))
    g_debug ("Cannot send Unsubscribed to %s: %s", name, error->message);
  tell_readers (self);
}

static void on_sessions_changed (gpointer user_data);

static gboolean
on_retry (gpointer user_data)
{
  LmSpinupDbus *self = user_data;

  self->retry_id = 0;
  on_sessions_changed (self);
  return G_SOURCE_REMOVE;
}

static void
rechecked (LmAuthVerdict verdict, const LmAuthViewer *viewer, const char *why, gpointer user_data)
{
  LmRecheck *r = user_data;
  LmSubscriber *sub = g_hash_table_lookup (r->self->subscribers, r->name);

  /* It may have unsubscribed or left while polkit thought. */
  if (sub == NULL)
    return;
  if (verdict == LM_AUTH_ALLOWED)
    {
      g_debug ("Spin-up subscriber %s still authorized%s", r->name,
               viewer->all ? " (every user's processes)" : "");
      sub->viewer = *viewer;
      return;
    }
  if (verdict == LM_AUTH_DENIED)
    {
      drop_subscriber (r->self, r->connection, r->name, why);
      return;
    }
  /* No answer is not a refusal: polkitd restarting, or too many checks
   * waiting, must not end subscriptions. Asked again later, meanwhile it
   * sees only its own processes (nothing more than polkit last allowed). */
  g_message ("Spin-up subscriber %s: %s; asking again in %d s", r->name, why, RECHECK_RETRY_S);
  sub->viewer.all = FALSE;
  if (r->self->retry_id == 0)
    r->self->retry_id = g_timeout_add_seconds (RECHECK_RETRY_S, on_retry, r->self);
}

/* Sessions or seats changed: what polkit said at Subscribe (for a rule on
 * subject.active, say) may no longer hold. Asked again for each one,
 * without interaction, off the main loop. */
static void
on_sessions_changed (gpointer user_data)
{
  LmSpinupDbus *self = user_data;
  GDBusConnection *connection
      = g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (self->skeleton));
  GHashTableIter iter;
  gpointer name;

  if (connection == NULL || g_hash_table_size (self->subscribers) == 0)
    return;
  g_debug ("Sessions changed; checking %u spin-up subscribers again",
           g_hash_table_size (self->subscribers));
  g_hash_table_iter_init (&iter, self->subscribers);
  while (g_hash_table_iter_next (&iter, &name, NULL))
    {
      LmRecheck *r = g_new0 (LmRecheck, 1);

      r->self = self;
      r->connection = g_object_ref (connection);
      r->name = g_strdup (name);
      lm_auth_recheck (connection, name, "Subscribe", self->cancellable, rechecked, r,
                       recheck_free);
    }
}

/* TRUE when @invocation came from a dropped subscriber, now answered with
 * why; it is forgotten then, so later calls are authorized as usual. */
static gboolean
answer_dropped (LmSpinupDbus *self, GDBusMethodInvocation *invocation)
{
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  LmDropped *d = sender != NULL ? g_hash_table_lookup (self->dropped, sender) : NULL;

  if (d == NULL)
    return FALSE;
  g_autofree char *text = g_strdup_printf ("Subscription ended: %s", d->reason);
  g_dbus_method_invocation_return_dbus_error (invocation, LM_ERROR_NAME_ACCESS_DENIED, text);
  g_hash_table_remove (self->dropped, sender);
  return TRUE;
}

/* --- caps ------------------------------------------------------------ */

/* Whether @sender (of @uid) may become a subscriber: one already is (or
 * was, and is still watched: it takes its own place again); else the
 * subscribers and the dropped ones still watched, of @uid and in all, are
 * below the caps. */
static gboolean
within_caps (LmSpinupDbus *self, const char *sender, guint32 uid, GError **error)
{
  GHashTableIter iter;
  gpointer value;
  guint of_uid = 0;

  if (g_hash_table_contains (self->subscribers, sender)
      || g_hash_table_contains (self->dropped, sender))
    return TRUE;
  if (g_hash_table_size (self->subscribers) + g_hash_table_size (self->dropped)
      >= LM_LIMIT_SUBSCRIBERS)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_LIMIT_EXCEEDED,
                   "Too many spin-up subscribers: at most %d in all; try again when one "
                   "unsubscribes or leaves the bus",
                   LM_LIMIT_SUBSCRIBERS);
      return FALSE;
    }
  g_hash_table_iter_init (&iter, self->subscribers);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    of_uid += ((LmSubscriber *) value)->viewer.uid == uid;
  g_hash_table_iter_init (&iter, self->dropped);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    of_uid += ((LmDropped *) value)->uid == uid;
  if (of_uid >= LM_LIMIT_SUBSCRIBERS_PER_UID)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_LIMIT_EXCEEDED,
                   "Too many spin-up subscribers: one user may have at most %d connections "
                   "subscribed; unsubscribe one first",
                   LM_LIMIT_SUBSCRIBERS_PER_UID);
      return FALSE;
    }
  return TRUE;
}

static gboolean
admit_subscriber (const char *sender, guint32 uid, gpointer user_data, GError **error)
{
  return within_caps (user_data, sender, uid, error);
}

/* --- methods --------------------------------------------------------- */

static void
subscribe_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller,
                   gpointer user_data)
{
  LmSpinupDbus *self = user_data;
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autoptr (GError) error = NULL;
  LmSubscriber *sub;

  /* Asked again: other callers may have subscribed while polkit thought. */
  if (!within_caps (self, sender, caller->uid, &error)
      || !lm_spinup_monitor_start_monitoring (self->spinup, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return;
    }
  g_hash_table_remove (self->dropped, sender);
  if (self->logind == NULL)
    self->logind = lm_logind_new (g_dbus_method_invocation_get_connection (invocation),
                                  on_sessions_changed, self);
  sub = g_hash_table_lookup (self->subscribers, sender);
  if (sub == NULL)
    {
      sub = g_new0 (LmSubscriber, 1);
      g_hash_table_insert (self->subscribers, g_strdup (sender), sub);
      /* Called at once if the sender has already gone: never a stale entry. */
      sub->watch = g_bus_watch_name_on_connection (
          g_dbus_method_invocation_get_connection (invocation), sender,
          G_BUS_NAME_WATCHER_FLAGS_NONE, NULL, on_subscriber_vanished, self, NULL);
    }
  sub->viewer = *caller;
  /* The monitor keeps its backend running for as long as anyone reads: a
   * reader it was not told of is stopped by the next Configure. */
  tell_readers (self);
  g_debug ("Spin-up subscriber %s (uid %u%s)", sender, sub->viewer.uid,
           sub->viewer.all ? ", every user's processes" : "");
  g_dbus_method_invocation_return_value (invocation, NULL);
}

static void
unsubscribe_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller,
                     gpointer user_data)
{
  LmSpinupDbus *self = user_data;

  g_hash_table_remove (self->subscribers, g_dbus_method_invocation_get_sender (invocation));
  tell_readers (self);
  g_dbus_method_invocation_return_value (invocation, NULL);
}

static void
get_spin_ups_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller,
                      gpointer user_data)
{
  LmSpinupDbus *self = user_data;
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));

  for (const GList *l = lm_spinup_monitor_history (self->spinup); l != NULL; l = l->next)
    {
      g_autoptr (GVariant) shown = lm_auth_redact (l->data, caller);
      g_variant_builder_add_value (&b, shown);
    }
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(aa{sv})", &b));
}

static gboolean
handle_subscribe (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation,
                  LmSpinupDbus *self)
{
  lm_auth_check_admit (invocation, admit_subscriber, subscribe_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_unsubscribe (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation,
                    LmSpinupDbus *self)
{
  if (answer_dropped (self, invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  lm_auth_check (invocation, unsubscribe_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_spin_ups (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation,
                     LmSpinupDbus *self)
{
  if (answer_dropped (self, invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  lm_auth_check (invocation, get_spin_ups_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* --- life cycle -------------------------------------------------------- */

/* SpinUp to each subscriber, as it may see @record. */
static void
on_spinup_record (GVariant *record, gpointer user_data)
{
  LmSpinupDbus *self = user_data;
  GDBusInterfaceSkeleton *skel = G_DBUS_INTERFACE_SKELETON (self->skeleton);
  GDBusConnection *connection = g_dbus_interface_skeleton_get_connection (skel);
  GHashTableIter iter;
  gpointer name, value;

  if (connection == NULL)
    return;
  g_hash_table_iter_init (&iter, self->subscribers);
  while (g_hash_table_iter_next (&iter, &name, &value))
    {
      const LmSubscriber *sub = value;
      g_autoptr (GError) error = NULL;
      g_autoptr (GVariant) shown = lm_auth_redact (record, &sub->viewer);
      if (!g_dbus_connection_emit_signal (
              connection, name, g_dbus_interface_skeleton_get_object_path (skel), LM_INTERFACE,
              "SpinUp", g_variant_new ("(@a{sv})", shown), &error))
        g_debug ("Cannot send SpinUp to %s: %s", (const char *) name, error->message);
    }
}

/* Attribution and AttributionNote. */
static void
on_backend (const char *backend, const char *note, gpointer user_data)
{
  LmSpinupDbus *self = user_data;

  lm_exported_laptop_mode_set_attribution (self->skeleton, backend);
  lm_exported_laptop_mode_set_attribution_note (self->skeleton, note);
}

LmSpinupDbus *
lm_spinup_dbus_new (LmExportedLaptopMode *skeleton, LmSpinupMonitor *spinup)
{
  LmSpinupDbus *self = g_new0 (LmSpinupDbus, 1);

  self->skeleton = skeleton;
  self->spinup = spinup;
  self->subscribers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, subscriber_free);
  self->dropped = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, dropped_free);
  self->cancellable = g_cancellable_new ();
  self->handlers[0]
      = g_signal_connect (skeleton, "handle-subscribe", G_CALLBACK (handle_subscribe), self);
  self->handlers[1]
      = g_signal_connect (skeleton, "handle-unsubscribe", G_CALLBACK (handle_unsubscribe), self);
  self->handlers[2]
      = g_signal_connect (skeleton, "handle-get-spin-ups", G_CALLBACK (handle_get_spin_ups), self);
  on_backend ("none", "", self);
  lm_spinup_monitor_set_publish_func (spinup, on_spinup_record, self);
  lm_spinup_monitor_set_backend_func (spinup, on_backend, self);
  return self;
}

void
lm_spinup_dbus_shutdown (LmSpinupDbus *self)
{
  /* Answers to re-checks asked before are of no use now. */
  g_cancellable_cancel (self->cancellable);
  g_object_unref (self->cancellable);
  self->cancellable = g_cancellable_new ();
  g_clear_handle_id (&self->retry_id, g_source_remove);
  g_clear_pointer (&self->logind, lm_logind_free);
  g_hash_table_remove_all (self->dropped);
  g_hash_table_remove_all (self->subscribers);
}

void
lm_spinup_dbus_free (LmSpinupDbus *self)
{
  if (self == NULL)
    return;
  lm_spinup_dbus_shutdown (self);
  lm_spinup_monitor_set_publish_func (self->spinup, NULL, NULL);
  lm_spinup_monitor_set_backend_func (self->spinup, NULL, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (self->handlers); i++)
    g_signal_handler_disconnect (self->skeleton, self->handlers[i]);
  g_hash_table_unref (self->subscribers);
  g_hash_table_unref (self->dropped);
  g_clear_object (&self->cancellable);
  g_free (self);
}
