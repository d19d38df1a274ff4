/* lm-waiters.c: WaitAwake: callers waiting until the disk holding a path
 * (or a disk by name) is awake for another reason, or laptop mode is off,
 * or on AC, or their time is up. Owns the waiters, their timeouts and one
 * watch per waiting connection (a match rule each, hence the caps); never
 * sends a disk a command: awake is what the disks' accounting already
 * says (lm_disks_is_awake) and what it is told next (lm_waiters_disk_awake). */
#include "config.h"

#include "lm-waiters.h"

#include <string.h>
#include <sys/sysmacros.h>

#include "lm-attrib.h"
#include "lm-auth.h"
#include "lm-blockdev.h"
#include "lm-error.h"
#include "lm-limits.h"
#include "lm-mounts.h"
#include "lm-paths.h"
#include "lm-sb-disks.h"

typedef struct
{
  LmWaiters *owner;
  GDBusMethodInvocation *invocation;
  char *sender;
  GPtrArray *disks; /* kernel names */
  gint64 start_us;  /* monotonic */
  gint64 end_us;    /* monotonic: max_seconds after the start */
  gint64 start_real_us;
  guint timeout_id;
  /* Who waits, for the ledger: asked of the bus once it waits. */
  GCancellable *asking;
  guint32 pid, uid;
  char comm[16];
  char unit[256];
} LmWaiter;

/* A connection with waiters: its watch (one match rule) and its uid. */
typedef struct
{
  guint watch;
  guint waiting;
  guint32 uid;
} LmWaitingSender;

struct _LmWaiters
{
  LmExportedLaptopMode *skeleton; /* not owned */
  LmDisks *disks;                 /* not owned */
  LmWaitersWhyNowFunc why_now;
  gpointer why_now_data;
  GPtrArray *waiters;  /* LmWaiter, oldest first */
  GHashTable *senders; /* unique name → LmWaitingSender */
  gulong handler;
  LmWaitersDoneFunc done;
  gpointer done_data;
};

static void
sender_free (gpointer data)
{
  LmWaitingSender *s = data;

  g_bus_unwatch_name (s->watch);
  g_free (s);
}

/* Takes @w out and frees it; the reply is the caller's. */
static void
waiter_remove (LmWaiter *w)
{
  LmWaiters *self = w->owner;
  LmWaitingSender *s = g_hash_table_lookup (self->senders, w->sender);

  g_ptr_array_remove (self->waiters, w);
  if (s != NULL && --s->waiting == 0)
    g_hash_table_remove (self->senders, w->sender);
  g_clear_handle_id (&w->timeout_id, g_source_remove);
  g_cancellable_cancel (w->asking);
  g_clear_object (&w->asking);
  g_clear_object (&w->invocation);
  g_ptr_array_unref (w->disks);
  g_free (w->sender);
  g_free (w);
}

static void
waiter_finish (LmWaiter *w, const char *reason)
{
  LmWaiters *self = w->owner;
  guint64 waited = (guint64) MAX (0, g_get_monotonic_time () - w->start_us);
  GDBusMethodInvocation *invocation = g_steal_pointer (&w->invocation);

  /* The reply takes the reference. */
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(st)", reason, waited));
  if (self->done != NULL)
    {
      LmWaitersRun run = { g_ptr_array_index (w->disks, 0),
                           w->start_real_us,
                           w->start_real_us + (gint64) waited,
                           w->pid,
                           w->uid,
                           w->comm,
                           w->unit,
                           reason };
      self->done (&run, self->done_data);
    }
  waiter_remove (w);
  g_debug ("WaitAwake: a waiter ended (%s) after %.1f s; %u waiting", reason,
           (double) waited / G_USEC_PER_SEC, self->waiters->len);
}

/* Ends every waiter on @disk (all when NULL) with @reason, oldest first. */
static void
finish_where (LmWaiters *self, const char *disk, const char *reason)
{
  g_autoptr (GPtrArray) ending = g_ptr_array_new ();

  for (guint i = 0; i < self->waiters->len; i++)
    {
      LmWaiter *w = g_ptr_array_index (self->waiters, i);
      if (disk == NULL || g_ptr_array_find_with_equal_func (w->disks, disk, g_str_equal, NULL))
        g_ptr_array_add (ending, w);
    }
  for (guint i = 0; i < ending->len; i++)
    waiter_finish (g_ptr_array_index (ending, i), reason);
}

static gboolean
on_timeout (gpointer user_data)
{
  LmWaiter *w = user_data;
  gint64 left_us = w->end_us - g_get_monotonic_time ();

  /* A whole-second timer (woken with others) may fire up to a second
   * early: never answer before max_seconds. */
  if (left_us > 0)
    {
      w->timeout_id = g_timeout_add ((guint) (left_us / 1000 + 1), on_timeout, w);
      return G_SOURCE_REMOVE;
    }
  w->timeout_id = 0;
  waiter_finish (w, "timeout");
  return G_SOURCE_REMOVE;
}

/* Its connection left the bus: its waiters go, unanswered (no one to tell). */
static void
on_sender_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmWaiters *self = user_data;
  g_autoptr (GPtrArray) gone = g_ptr_array_new ();

  for (guint i = 0; i < self->waiters->len; i++)
    {
      LmWaiter *w = g_ptr_array_index (self->waiters, i);
      if (g_str_equal (w->sender, name))
        g_ptr_array_add (gone, w);
    }
  for (guint i = 0; i < gone->len; i++)
    waiter_remove (g_ptr_array_index (gone, i));
  if (gone->len > 0)
    g_debug ("WaitAwake: %s left the bus, %u of its waiters dropped; %u waiting", name, gone->len,
             self->waiters->len);
}

/* --- who waits ----------------------------------------------------------- */

/* The service a process runs in, from its cgroup: "man-db.service" in
 * system.slice, "backup.service of user 1000" in a user's manager, else "". */
static void
unit_of (guint32 pid, char unit[256])
{
  g_autofree char *rel = g_strdup_printf ("/proc/%u/cgroup", pid);
  g_autofree char *path = lm_path (rel);
  g_autofree char *text = NULL;
  gsize len;

  unit[0] = '\0';
  if (!g_file_get_contents (path, &text, &len, NULL) || len > 64 * 1024)
    return;
  lm_waiters_unit_from_cgroup (text, unit, 256);
}

static void
on_caller_pid (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) reply
      = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  LmWaiter *w;
  guint32 pid;

  /* Cancelled: the waiter is gone. */
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  w = user_data;
  g_clear_object (&w->asking);
  if (reply == NULL)
    {
      g_debug ("WaitAwake: no process for %s: %s", w->sender, error->message);
      return;
    }
  g_variant_get (reply, "(u)", &pid);
  /* Named only while the pid is still a process of the caller's uid. */
  g_autofree char *rel = g_strdup_printf ("/proc/%u/comm", pid);
  g_autofree char *path = lm_path (rel);
  g_autofree char *comm = NULL;
  if (pid == 0 || lm_attrib_uid_of (pid) != (gint64) w->uid
      || !g_file_get_contents (path, &comm, NULL, NULL))
    return;
  g_strchomp (comm);
  w->pid = pid;
  g_strlcpy (w->comm, comm, sizeof w->comm);
  unit_of (pid, w->unit);
}

/* --- arguments --------------------------------------------------------- */

/* Sizes and shapes only, before anything else is looked at. */
static gboolean
check_args (const char *target, guint max_seconds, GError **error)
{
  gsize len = strnlen (target, LM_LIMIT_PATH + 1);
  g_autofree char *quoted = NULL;

  if (max_seconds > LM_LIMIT_WAIT_SECONDS)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "max_seconds %u is out of range: 0 to %d (a day)", max_seconds,
                   LM_LIMIT_WAIT_SECONDS);
      return FALSE;
    }
  if (target[0] == '/')
    {
      if (len > LM_LIMIT_PATH)
        {
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       "target path too long: at most %d bytes", LM_LIMIT_PATH);
          return FALSE;
        }
      g_auto (GStrv) parts = g_strsplit (target, "/", -1);
      for (guint i = 0; parts[i] != NULL; i++)
        if (g_str_equal (parts[i], ".") || g_str_equal (parts[i], ".."))
          {
            quoted = lm_limits_quote (target);
            g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                         "target path %s has a \".\" or \"..\" component: give it resolved",
                         quoted);
            return FALSE;
          }
      return TRUE;
    }
  if (len == 0 || len > LM_LIMIT_DISK_ID || strchr (target, '/') != NULL)
    {
      quoted = lm_limits_quote (target);
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "target %s is neither an absolute path nor a disk id (1 to %d bytes, no "
                   "\"/\")",
                   quoted, LM_LIMIT_DISK_ID);
      return FALSE;
    }
  return TRUE;
}

/* The mount whose mount point is @path's longest prefix (the last in the
 * table among equals: it is on top). Lexical: nothing is opened. */
static LmMount *
mount_of (GPtrArray *mounts, const char *path)
{
  LmMount *best = NULL;
  gsize best_len = 0;

  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      gsize n = strlen (m->target);
      gboolean holds
          = g_str_equal (m->target, "/")
            || (strncmp (path, m->target, n) == 0 && (path[n] == '\0' || path[n] == '/'));
      if (holds && (best == NULL || n >= best_len))
        {
          best = m;
          best_len = n;
        }
    }
  return best;
}

/* The watched disks (kernel names) @target names or holds it. */
static GPtrArray *
disks_for_target (LmWaiters *self, const char *target, GError **error)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *quoted = lm_limits_quote (target);

  if (target[0] != '/')
    {
      const char *name = lm_disks_find (self->disks, target);
      if (name == NULL)
        {
          g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                       "No disk %s is watched (see laptop-modectl disks)", quoted);
          return NULL;
        }
      g_ptr_array_add (names, g_strdup (name));
      return g_steal_pointer (&names);
    }

  g_autoptr (GPtrArray) mounts = lm_mounts_read (error);
  if (mounts == NULL)
    return NULL;
  LmMount *m = mount_of (mounts, target);
  if (m == NULL)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS, "No filesystem holds %s", quoted);
      return NULL;
    }
  g_autoptr (GArray) devs = lm_sb_disks_for_mount (m->devno, m->fstype, m->source, error);
  if (devs == NULL)
    return NULL;
  for (guint i = 0; i < devs->len; i++)
    {
      dev_t dev = g_array_index (devs, dev_t, i);
      g_autofree char *disk = lm_blockdev_disk_for_devnum (major (dev), minor (dev));
      const char *name = disk != NULL ? lm_disks_find (self->disks, disk) : NULL;
      if (name != NULL && !g_ptr_array_find_with_equal_func (names, name, g_str_equal, NULL))
        g_ptr_array_add (names, g_strdup (name));
    }
  if (names->len == 0)
    {
      g_autofree char *mount = lm_limits_quote (m->target);
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "No disk the daemon watches holds %s (mount %s, %s)", quoted, mount, m->fstype);
      return NULL;
    }
  return g_steal_pointer (&names);
}

/* --- caps ---------------------------------------------------------------- */

G_STATIC_ASSERT (LM_LIMIT_WAITERS_USERS + LM_LIMIT_WAITERS_SYSTEM + LM_LIMIT_WAITERS_ROOT
                 == LM_LIMIT_WAITERS);

typedef enum
{
  CLASS_ROOT,
  CLASS_SYSTEM,
  CLASS_USERS,
} WaiterClass;

static WaiterClass
class_of (guint32 uid)
{
  return uid == 0 ? CLASS_ROOT : uid < LM_FIRST_USER_UID ? CLASS_SYSTEM : CLASS_USERS;
}

static gboolean
within_caps (LmWaiters *self, const char *sender, guint32 uid, GError **error)
{
  static const struct
  {
    guint cap;
    const char *who;
  } classes[] = {
    [CLASS_ROOT] = { LM_LIMIT_WAITERS_ROOT, "from root" },
    [CLASS_SYSTEM] = { LM_LIMIT_WAITERS_SYSTEM, "from system accounts (uid 1 to 999)" },
    [CLASS_USERS] = { LM_LIMIT_WAITERS_USERS, "from users' accounts (uid 1000 and up)" },
  };
  LmWaitingSender *s = g_hash_table_lookup (self->senders, sender);
  WaiterClass class = class_of (uid);
  GHashTableIter iter;
  gpointer value;
  guint of_class = 0;

  if (s != NULL && s->waiting >= LM_LIMIT_WAITERS_PER_SENDER)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_LIMIT_EXCEEDED,
                   "Too many WaitAwake calls waiting on this connection: at most %d",
                   LM_LIMIT_WAITERS_PER_SENDER);
      return FALSE;
    }
  g_hash_table_iter_init (&iter, self->senders);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      const LmWaitingSender *other = value;
      if (class_of (other->uid) == class)
        of_class += other->waiting;
    }
  if (of_class >= classes[class].cap)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_LIMIT_EXCEEDED,
                   "Too many WaitAwake callers waiting %s: at most %u; run the work now",
                   classes[class].who, classes[class].cap);
      return FALSE;
    }
  return TRUE;
}

static gboolean
admit (const char *sender, guint32 uid, gpointer user_data, GError **error)
{
  return within_caps (user_data, sender, uid, error);
}

/* --- the method ---------------------------------------------------------- */

static void
wait_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller, gpointer user_data)
{
  LmWaiters *self = user_data;
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autoptr (GError) error = NULL;
  const char *target, *why;
  guint max_seconds;

  g_variant_get (g_dbus_method_invocation_get_parameters (invocation), "(&su)", &target,
                 &max_seconds);
  /* Asked again: others may have come while polkit thought. */
  g_autoptr (GPtrArray) disks = NULL;
  if (!within_caps (self, sender, caller->uid, &error)
      || (disks = disks_for_target (self, target, &error)) == NULL)
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return;
    }
  why = self->why_now (self->why_now_data);
  for (guint i = 0; why == NULL && i < disks->len; i++)
    if (lm_disks_is_awake (self->disks, g_ptr_array_index (disks, i)))
      why = "awake";
  if (why == NULL && max_seconds == 0)
    why = "timeout";
  if (why != NULL)
    {
      g_dbus_method_invocation_return_value (invocation, g_variant_new ("(st)", why, 0));
      return;
    }

  LmWaiter *w = g_new0 (LmWaiter, 1);
  w->owner = self;
  w->invocation = g_object_ref (invocation);
  w->sender = g_strdup (sender);
  w->disks = g_steal_pointer (&disks);
  w->start_us = g_get_monotonic_time ();
  w->start_real_us = g_get_real_time ();
  w->uid = caller->uid;
  w->end_us = w->start_us + (gint64) max_seconds * G_USEC_PER_SEC;
  w->asking = g_cancellable_new ();
  g_dbus_connection_call (g_dbus_method_invocation_get_connection (invocation),
                          "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                          "GetConnectionUnixProcessID", g_variant_new ("(s)", sender),
                          G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, -1, w->asking,
                          on_caller_pid, w);
  w->timeout_id = g_timeout_add_seconds (max_seconds, on_timeout, w);
  g_ptr_array_add (self->waiters, w);

  LmWaitingSender *s = g_hash_table_lookup (self->senders, sender);
  if (s == NULL)
    {
      s = g_new0 (LmWaitingSender, 1);
      s->uid = caller->uid;
      g_hash_table_insert (self->senders, g_strdup (sender), s);
      /* Called at once if the sender has already gone: never a stale entry. */
      s->watch = g_bus_watch_name_on_connection (
          g_dbus_method_invocation_get_connection (invocation), sender,
          G_BUS_NAME_WATCHER_FLAGS_NONE, NULL, on_sender_vanished, self, NULL);
    }
  s->waiting++;
  g_debug ("WaitAwake: %s (uid %u) waits up to %u s for %s; %u waiting", sender, caller->uid,
           max_seconds, (const char *) g_ptr_array_index (w->disks, 0), self->waiters->len);
}

static gboolean
handle_wait_awake (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation,
                   const char *target, guint max_seconds, LmWaiters *self)
{
  g_autoptr (GError) error = NULL;

  if (!check_args (target, max_seconds, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  lm_auth_check_admit (invocation, admit, wait_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* --- life cycle ---------------------------------------------------------- */

LmWaiters *
lm_waiters_new (LmExportedLaptopMode *skeleton, LmDisks *disks, LmWaitersWhyNowFunc why_now,
                gpointer user_data)
{
  LmWaiters *self = g_new0 (LmWaiters, 1);

  self->skeleton = skeleton;
  self->disks = disks;
  self->why_now = why_now;
  self->why_now_data = user_data;
  self->waiters = g_ptr_array_new ();
  self->senders = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, sender_free);
  self->handler
      = g_signal_connect (skeleton, "handle-wait-awake", G_CALLBACK (handle_wait_awake), self);
  return self;
}

void
lm_waiters_recheck (LmWaiters *self)
{
  const char *why;

  if (self == NULL || self->waiters->len == 0)
    return;
  why = self->why_now (self->why_now_data);
  if (why != NULL)
    finish_where (self, NULL, why);
}

void
lm_waiters_disk_awake (LmWaiters *self, const char *name)
{
  if (self != NULL && self->waiters->len > 0)
    finish_where (self, name, "awake");
}

void
lm_waiters_set_done_func (LmWaiters *self, LmWaitersDoneFunc func, gpointer user_data)
{
  self->done = func;
  self->done_data = user_data;
}

void
lm_waiters_free (LmWaiters *self)
{
  if (self == NULL)
    return;
  g_signal_handler_disconnect (self->skeleton, self->handler);
  while (self->waiters->len > 0)
    {
      LmWaiter *w = g_ptr_array_index (self->waiters, 0);
      g_dbus_method_invocation_return_error_literal (g_steal_pointer (&w->invocation), LM_ERROR,
                                                     LM_ERROR_FAILED, "laptop-moded is stopping");
      waiter_remove (w);
    }
  g_ptr_array_unref (self->waiters);
  g_hash_table_unref (self->senders);
  g_free (self);
}
