/* lm-sleep.c: suspend, hibernate and shutdown through logind.
 * A delay lock makes logind wait (up to its InhibitDelayMaxSec) while dirty
 * data held back by laptop mode reaches the disk; it is taken again after
 * resume. Without logind on the bus this does nothing; its signals count
 * only from the unique name that owns org.freedesktop.login1. */
#include "lm-sleep.h"

#include <unistd.h>

#include <gio/gunixfdlist.h>

#include "lm-owner-signals.h"

#define LOGIND_NAME "org.freedesktop.login1"
#define LOGIND_PATH "/org/freedesktop/login1"
#define LOGIND_MANAGER "org.freedesktop.login1.Manager"

struct _LmSleep
{
  GDBusConnection *bus;
  GCancellable *cancellable;
  LmOwnerSignals *logind; /* PrepareFor*, only from logind's unique name */
  int lock_fd;
  gboolean pending; /* the owner is flushing; the lock waits for it */
  LmSleepFunc func;
  gpointer user_data;
};

static void take_lock (LmSleep *self);

static void
release_lock (LmSleep *self)
{
  if (self->lock_fd >= 0)
    {
      close (self->lock_fd);
      self->lock_fd = -1;
      g_debug ("Released the logind delay lock");
    }
}

static void
lock_taken (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GUnixFDList) fds = NULL;
  g_autoptr (GVariant) reply = g_dbus_connection_call_with_unix_fd_list_finish (
      G_DBUS_CONNECTION (source), &fds, result, &error);
  LmSleep *self;
  gint32 index;

  if (reply == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_warning ("Cannot take a logind delay lock; dirty data will not be flushed before "
                   "suspend: %s",
                   error->message);
      return;
    }
  self = user_data;
  g_variant_get (reply, "(h)", &index);
  int fd = fds != NULL ? g_unix_fd_list_get (fds, index, &error) : -1;
  if (fd < 0)
    {
      g_warning ("logind sent no lock descriptor");
      return;
    }
  release_lock (self);
  self->lock_fd = fd;
  g_debug ("Holding a logind delay lock for sleep and shutdown");
}

static void
take_lock (LmSleep *self)
{
  if (self->lock_fd >= 0)
    return;
  g_dbus_connection_call_with_unix_fd_list (
      self->bus, LOGIND_NAME, LOGIND_PATH, LOGIND_MANAGER, "Inhibit",
      g_variant_new ("(ssss)", "sleep:shutdown", "laptop-moded",
                     "Writing data held back by laptop mode to disk", "delay"),
      G_VARIANT_TYPE ("(h)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, self->cancellable, lock_taken,
      self);
}

static void
on_prepare (GDBusConnection *bus, const char *sender, const char *path, const char *iface,
            const char *signal, GVariant *params, gpointer user_data)
{
  LmSleep *self = user_data;
  gboolean start;

  if (!g_variant_is_of_type (params, G_VARIANT_TYPE ("(b)")))
    return;
  g_variant_get (params, "(b)", &start);
  gboolean shutdown = g_str_equal (signal, "PrepareForShutdown");

  if (!start)
    {
      /* Resumed (or shutdown cancelled): be ready for the next time. */
      take_lock (self);
      if (!shutdown)
        self->func (self, LM_SLEEP_RESUMED, self->user_data);
      return;
    }
  g_message ("logind: %s; flushing before letting it go on",
             shutdown ? "shutting down" : "going to sleep");
  self->pending = TRUE;
  self->func (self, shutdown ? LM_SLEEP_SHUTDOWN : LM_SLEEP_SUSPEND, self->user_data);
}

void
lm_sleep_done (LmSleep *self)
{
  if (!self->pending)
    return;
  self->pending = FALSE;
  release_lock (self);
}

gboolean
lm_sleep_has_lock (LmSleep *self)
{
  return self->lock_fd >= 0;
}

static void
logind_appeared (GDBusConnection *bus, const char *name, const char *owner, gpointer user_data)
{
  take_lock (user_data);
}

static void
logind_vanished (GDBusConnection *bus, const char *name, gpointer user_data)
{
  release_lock (user_data);
}

LmSleep *
lm_sleep_new (GDBusConnection *bus, LmSleepFunc func, gpointer user_data)
{
  LmSleep *self = g_new0 (LmSleep, 1);

  self->bus = g_object_ref (bus);
  self->cancellable = g_cancellable_new ();
  self->lock_fd = -1;
  self->func = func;
  self->user_data = user_data;
  self->logind = lm_owner_signals_new (bus, LOGIND_NAME, logind_appeared, logind_vanished, self);
  lm_owner_signals_add (self->logind, LOGIND_MANAGER, "PrepareForSleep", LOGIND_PATH, on_prepare);
  lm_owner_signals_add (self->logind, LOGIND_MANAGER, "PrepareForShutdown", LOGIND_PATH,
                        on_prepare);
  return self;
}

void
lm_sleep_free (LmSleep *self)
{
  if (self == NULL)
    return;
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->logind, lm_owner_signals_free);
  release_lock (self);
  g_clear_object (&self->bus);
  g_free (self);
}
