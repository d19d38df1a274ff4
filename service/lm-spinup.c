/* lm-spinup.c: spin-up monitoring on D-Bus. The bpf backend (its filter
 * runs in the kernel) runs all the time; the others only while a
 * subscriber is on the bus or SpinUpHistory asks for it. SpinUp goes to
 * each subscriber by unique name, never to the whole bus, and shows
 * another user's process only to a subscriber with monitor-all (the others
 * get it as "another user's process", lm_auth_redact). A subscription
 * lasts only while polkit still allows it: it is checked again whenever
 * logind's sessions change, and again later when polkit gave no answer. */
#include "config.h"

#include "lm-spinup.h"

#include "lm-attrib.h"
#include "lm-auth.h"
#include "lm-error.h"
#include "lm-logind.h"
#include "lm-names.h"

#define HISTORY_MAX 256
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

struct _LmSpinup
{
  LmExportedLaptopMode *skeleton; /* not owned: the daemon's */
  LmState *state;                 /* not owned */
  const LmAttribBackend *backend; /* chosen; NULL for none */
  char *why_none;                 /* what the probes said, for Subscribe's error */
  char *setting;                  /* the Attribution setting it was chosen for */
  guint idle_s;
  gboolean history_wanted;
  LmAttrib *running;
  GHashTable *subscribers;   /* unique name → LmSubscriber */
  GHashTable *dropped;       /* unique name → LmDropped: told, not yet asked */
  LmLogind *logind;          /* from the first Subscribe on */
  GCancellable *cancellable; /* re-checks in flight */
  guint retry_id;            /* re-checks to ask again */
  GQueue history;            /* GVariant a{sv}, oldest first */
  gulong handlers[3];
  LmSpinupWakeFunc wake_func; /* the disks' accounting */
  gpointer wake_data;
  LmSpinUpFunc record_func; /* the ledger */
  gpointer record_data;
  LmActivityFunc activity_func; /* the ledger */
  gpointer activity_data;
  LmSpinupMonitorFunc monitor_func; /* the disks: no re-check while event-driven */
  gpointer monitor_data;
};

static void
tell_monitoring (LmSpinup *self)
{
  if (self->monitor_func != NULL)
    self->monitor_func (self->monitor_data, self->running != NULL && self->backend->event_driven);
}

static GVariant *
spinup_to_variant (const LmSpinUp *s, const char *backend)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

  g_variant_builder_add (&b, "{sv}", "Disk", g_variant_new_string (s->disk));
  g_variant_builder_add (&b, "{sv}", "Time", g_variant_new_int64 (s->time_us));
  g_variant_builder_add (&b, "{sv}", "Pid", g_variant_new_uint32 (s->pid));
  /* Task names are bytes; D-Bus strings must be UTF-8. */
  g_autofree char *comm = g_utf8_make_valid (s->comm, -1);
  g_autofree char *submitter = g_utf8_make_valid (s->submitter_comm, -1);
  g_variant_builder_add (&b, "{sv}", "Comm", g_variant_new_string (comm));
  if (s->thread[0] != '\0')
    {
      g_autofree char *thread = g_utf8_make_valid (s->thread, -1);
      g_variant_builder_add (&b, "{sv}", "Thread", g_variant_new_string (thread));
    }
  if (s->note[0] != '\0')
    g_variant_builder_add (&b, "{sv}", "Note", g_variant_new_string (s->note));
  if (s->uid >= 0)
    g_variant_builder_add (&b, "{sv}", "Uid", g_variant_new_uint32 ((guint32) s->uid));
  g_variant_builder_add (&b, "{sv}", "Operation",
                         g_variant_new_string (s->write ? "write" : "read"));
  g_variant_builder_add (&b, "{sv}", "Sector", g_variant_new_uint64 (s->sector));
  if (s->inode != 0)
    g_variant_builder_add (&b, "{sv}", "Inode", g_variant_new_uint64 (s->inode));
  if (s->path[0] != '\0')
    {
      g_autofree char *path = g_utf8_make_valid (s->path, -1);
      g_variant_builder_add (&b, "{sv}", "Path", g_variant_new_string (path));
    }
  g_variant_builder_add (&b, "{sv}", "Via", g_variant_new_string (lm_via_to_string (s->via)));
  g_variant_builder_add (&b, "{sv}", "SubmitterPid", g_variant_new_uint32 (s->submitter_pid));
  g_variant_builder_add (&b, "{sv}", "SubmitterComm", g_variant_new_string (submitter));
  g_variant_builder_add (&b, "{sv}", "Backend", g_variant_new_string (backend));
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static void
on_spinup (const LmSpinUp *s, gpointer user_data)
{
  LmSpinup *self = user_data;
  GDBusInterfaceSkeleton *skel = G_DBUS_INTERFACE_SKELETON (self->skeleton);
  GDBusConnection *connection = g_dbus_interface_skeleton_get_connection (skel);
  g_autoptr (GVariant) v = spinup_to_variant (s, self->backend->name);
  GHashTableIter iter;
  gpointer name, value;

  g_debug ("Spin-up of %s by %s[%u] (%s)", s->disk, s->comm, s->pid, lm_via_to_string (s->via));
  if (self->wake_func != NULL)
    self->wake_func (s->disk, s->quiet_since_us, self->wake_data);
  if (self->record_func != NULL)
    self->record_func (s, self->record_data);
  g_queue_push_tail (&self->history, g_variant_ref (v));
  while (self->history.length > HISTORY_MAX)
    g_variant_unref (g_queue_pop_head (&self->history));

  if (connection == NULL)
    return;
  g_hash_table_iter_init (&iter, self->subscribers);
  while (g_hash_table_iter_next (&iter, &name, &value))
    {
      const LmSubscriber *sub = value;
      g_autoptr (GError) error = NULL;
      g_autoptr (GVariant) shown = lm_auth_redact (v, &sub->viewer);
      if (!g_dbus_connection_emit_signal (
              connection, name, g_dbus_interface_skeleton_get_object_path (skel), LM_INTERFACE,
              "SpinUp", g_variant_new ("(@a{sv})", shown), &error))
        g_debug ("Cannot send SpinUp to %s: %s", (const char *) name, error->message);
    }
}

static void
stop_monitoring (LmSpinup *self)
{
  if (self->running == NULL)
    return;
  self->backend->stop (g_steal_pointer (&self->running));
  g_message ("Spin-up monitoring stopped (%s)", self->backend->name);
  tell_monitoring (self);
}

static gboolean
start_monitoring (LmSpinup *self, GError **error)
{
  if (self->running != NULL)
    return TRUE;
  if (self->backend == NULL)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "No spin-up attribution here: %s",
                   self->why_none);
      return FALSE;
    }
  LmAttribConfig config = {
    .func = on_spinup,
    .user_data = self,
    .idle_ms = self->idle_s * 1000,
    .state = self->state,
    .activity_func = self->activity_func,
    .activity_data = self->activity_data,
  };
  self->running = self->backend->start (&config, error);
  if (self->running == NULL)
    return FALSE;
  g_message ("Spin-up monitoring started (%s, disks idle after %u s%s)", self->backend->name,
             self->idle_s, self->backend->event_driven ? ", always on" : "");
  tell_monitoring (self);
  return TRUE;
}

/* tracefs and block_dump copy every I/O to user space: run them only while
 * they have a reader. The bpf backend filters in the kernel and wakes the
 * daemon only for a spin-up, which costs less than the disks' periodic
 * re-check it replaces: it runs all the time, for the ledger. */
static void
update_monitoring (LmSpinup *self)
{
  g_autoptr (GError) error = NULL;

  if (g_hash_table_size (self->subscribers) == 0 && !self->history_wanted
      && (self->backend == NULL || !self->backend->event_driven))
    stop_monitoring (self);
  else if (!start_monitoring (self, &error))
    g_warning ("Cannot monitor spin-ups: %s", error->message);
}

static void
on_subscriber_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmSpinup *self = user_data;

  if (g_hash_table_remove (self->subscribers, name))
    g_debug ("Spin-up subscriber %s left the bus", name);
  update_monitoring (self);
}

/* A subscriber the daemon dropped, remembered (with its watch, so it is
 * forgotten when it leaves) until its next call, which then learns why. */
typedef struct
{
  guint watch;
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
  LmSpinup *self = user_data;

  g_hash_table_remove (self->dropped, name);
}

/* --- re-checks ------------------------------------------------------- */

typedef struct
{
  LmSpinup *self;
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
drop_subscriber (LmSpinup *self, GDBusConnection *connection, const char *name, const char *why)
{
  GDBusInterfaceSkeleton *skel = G_DBUS_INTERFACE_SKELETON (self->skeleton);
  g_autoptr (GError) error = NULL;
  g_autofree char *reason = g_strdup_printf (
      "No longer authorized to monitor spin-ups after a session change: %s", why);
  LmDropped *d = g_new0 (LmDropped, 1);

  g_message ("Dropped spin-up subscriber %s: %s", name, why);
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
  update_monitoring (self);
}

static void on_sessions_changed (gpointer user_data);

static gboolean
on_retry (gpointer user_data)
{
  LmSpinup *self = user_data;

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
  LmSpinup *self = user_data;
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
answer_dropped (LmSpinup *self, GDBusMethodInvocation *invocation)
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

/* --- methods --------------------------------------------------------- */

static void
subscribe_allowed (GDBusMethodInvocation *invocation, gpointer user_data)
{
  LmSpinup *self = user_data;
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autoptr (GError) error = NULL;
  LmSubscriber *sub;

  if (!start_monitoring (self, &error))
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
  sub->viewer = lm_auth_viewer (invocation);
  g_debug ("Spin-up subscriber %s (uid %u%s)", sender, sub->viewer.uid,
           sub->viewer.all ? ", every user's processes" : "");
  g_dbus_method_invocation_return_value (invocation, NULL);
}

static void
unsubscribe_allowed (GDBusMethodInvocation *invocation, gpointer user_data)
{
  LmSpinup *self = user_data;

  g_hash_table_remove (self->subscribers, g_dbus_method_invocation_get_sender (invocation));
  update_monitoring (self);
  g_dbus_method_invocation_return_value (invocation, NULL);
}

static void
get_spin_ups_allowed (GDBusMethodInvocation *invocation, gpointer user_data)
{
  LmSpinup *self = user_data;
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));
  LmAuthViewer viewer = lm_auth_viewer (invocation);

  for (GList *l = self->history.head; l != NULL; l = l->next)
    {
      g_autoptr (GVariant) shown = lm_auth_redact (l->data, &viewer);
      g_variant_builder_add_value (&b, shown);
    }
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(aa{sv})", &b));
}

static gboolean
handle_subscribe (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, LmSpinup *self)
{
  lm_auth_check (invocation, subscribe_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_unsubscribe (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation,
                    LmSpinup *self)
{
  if (answer_dropped (self, invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  lm_auth_check (invocation, unsubscribe_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_spin_ups (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation,
                     LmSpinup *self)
{
  if (answer_dropped (self, invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  lm_auth_check (invocation, get_spin_ups_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* --- life cycle -------------------------------------------------------- */

LmSpinup *
lm_spinup_new (LmExportedLaptopMode *skeleton, LmState *state)
{
  LmSpinup *self = g_new0 (LmSpinup, 1);

  self->skeleton = skeleton;
  self->state = state;
  self->subscribers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, subscriber_free);
  self->dropped = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, dropped_free);
  self->cancellable = g_cancellable_new ();
  g_queue_init (&self->history);
  self->handlers[0]
      = g_signal_connect (skeleton, "handle-subscribe", G_CALLBACK (handle_subscribe), self);
  self->handlers[1]
      = g_signal_connect (skeleton, "handle-unsubscribe", G_CALLBACK (handle_unsubscribe), self);
  self->handlers[2]
      = g_signal_connect (skeleton, "handle-get-spin-ups", G_CALLBACK (handle_get_spin_ups), self);
  lm_exported_laptop_mode_set_attribution (skeleton, "none");
  lm_exported_laptop_mode_set_attribution_note (skeleton, "");
  return self;
}

/* Choose the backend for @settings; a running one is restarted when the
 * backend or the idle time changed. */
void
lm_spinup_configure (LmSpinup *self, const LmSettings *settings)
{
  gboolean same = g_strcmp0 (self->setting, settings->attribution) == 0
                  && self->idle_s == settings->spinup_idle;

  self->history_wanted = settings->spinup_history;
  if (!same)
    {
      g_autoptr (GError) error = NULL;

      stop_monitoring (self);
      g_free (self->setting);
      self->setting = g_strdup (settings->attribution);
      self->idle_s = settings->spinup_idle;
      self->backend = lm_attrib_choose (settings->attribution, &error);
      g_free (self->why_none);
      self->why_none = error != NULL ? g_strdup (error->message)
                                     : g_strdup ("the Attribution setting is “none”");
      if (self->backend == NULL)
        g_message ("No spin-up attribution: %s", self->why_none);
      else
        g_message ("Spin-up attribution backend %s", self->backend->name);
      lm_exported_laptop_mode_set_attribution (self->skeleton,
                                               self->backend ? self->backend->name : "none");
      g_autofree char *note = lm_attrib_note (self->backend);
      if (*note != '\0')
        g_warning ("%s", note);
      lm_exported_laptop_mode_set_attribution_note (self->skeleton, note);
    }
  update_monitoring (self);
}

void
lm_spinup_shutdown (LmSpinup *self)
{
  /* Answers to re-checks asked before are of no use now. */
  g_cancellable_cancel (self->cancellable);
  g_object_unref (self->cancellable);
  self->cancellable = g_cancellable_new ();
  g_clear_handle_id (&self->retry_id, g_source_remove);
  g_clear_pointer (&self->logind, lm_logind_free);
  g_hash_table_remove_all (self->dropped);
  g_hash_table_remove_all (self->subscribers);
  stop_monitoring (self);
}

void
lm_spinup_free (LmSpinup *self)
{
  if (self == NULL)
    return;
  lm_spinup_shutdown (self);
  for (gsize i = 0; i < G_N_ELEMENTS (self->handlers); i++)
    g_signal_handler_disconnect (self->skeleton, self->handlers[i]);
  g_hash_table_unref (self->subscribers);
  g_hash_table_unref (self->dropped);
  g_clear_object (&self->cancellable);
  g_queue_clear_full (&self->history, (GDestroyNotify) g_variant_unref);
  g_free (self->setting);
  g_free (self->why_none);
  g_free (self);
}

void
lm_spinup_set_wake_func (LmSpinup *self, LmSpinupWakeFunc func, gpointer user_data)
{
  self->wake_func = func;
  self->wake_data = user_data;
}

void
lm_spinup_recover (LmState *state)
{
  lm_attrib_recover (state);
}

void
lm_spinup_set_record_func (LmSpinup *self, LmSpinUpFunc func, gpointer user_data)
{
  self->record_func = func;
  self->record_data = user_data;
}

void
lm_spinup_set_activity_func (LmSpinup *self, LmActivityFunc func, gpointer user_data)
{
  self->activity_func = func;
  self->activity_data = user_data;
}

void
lm_spinup_set_monitor_func (LmSpinup *self, LmSpinupMonitorFunc func, gpointer user_data)
{
  self->monitor_func = func;
  self->monitor_data = user_data;
  tell_monitoring (self);
}

void
lm_spinup_drain (gpointer user_data)
{
  LmSpinup *self = user_data;

  if (self->running != NULL && self->backend->drain != NULL)
    self->backend->drain (self->running);
}
