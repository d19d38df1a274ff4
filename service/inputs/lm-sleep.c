/* lm-sleep.c: suspend, hibernate and shutdown through logind.
 * A delay lock makes logind wait (up to its InhibitDelayMaxSec) while dirty
 * data held back by laptop mode reaches the disk; it is taken again after
 * resume. Without logind on the bus this does nothing; its signals count
 * only from the unique name that owns org.freedesktop.login1.
 * The lock is a file descriptor, which the guarded connection (lm-bus.c)
 * cannot carry, and a connection left open unguarded could be closed by
 * any local user with one undecodable message: each Inhibit call goes on
 * a private connection opened for it and closed once it answered. */
#include "lm-sleep.h"
#include "lm-names.h"

#include <unistd.h>

#include <gio/gunixfdlist.h>

#include "lm-owner-signals.h"

struct _LmSleep
{
  GDBusConnection *bus; /* guarded: logind's signals */
  char *address;        /* of the bus, for the connection each Inhibit call has */
  gboolean taking;      /* an Inhibit call is under way */
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

/* The connection is done with once the call answered; whatever becomes of
 * it (closed by us, by the bus or by a message it could not read) is no
 * concern of the daemon's. */
static void
close_private (GDBusConnection *connection)
{
  g_dbus_connection_close (connection, NULL, NULL, NULL);
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

  close_private (G_DBUS_CONNECTION (source));
  g_object_unref (source); /* the reference connected() kept */
  if (reply == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_warning ("Cannot take a logind delay lock; dirty data will not be flushed before "
                     "suspend: %s",
                     error->message);
          ((LmSleep *) user_data)->taking = FALSE;
        }
      return;
    }
  self = user_data;
  self->taking = FALSE;
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
connected (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  GDBusConnection *connection = g_dbus_connection_new_for_address_finish (result, &error);
  LmSleep *self;

  if (connection == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_warning ("Cannot connect to the bus for a logind delay lock; dirty data will not "
                     "be flushed before suspend: %s",
                     error->message);
          ((LmSleep *) user_data)->taking = FALSE;
        }
      return;
    }
  self = user_data;
  g_dbus_connection_set_exit_on_close (connection, FALSE);
  /* Released in lock_taken(). */
  g_dbus_connection_call_with_unix_fd_list (
      connection, LM_LOGIND_NAME, LM_LOGIND_PATH, LM_LOGIND_MANAGER, "Inhibit",
      g_variant_new ("(ssss)", "sleep:shutdown", "laptop-moded",
                     "Writing data held back by laptop mode to disk", "delay"),
      G_VARIANT_TYPE ("(h)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, self->cancellable, lock_taken,
      self);
}

static void
take_lock (LmSleep *self)
{
  if (self->lock_fd >= 0 || self->taking || self->address == NULL)
    return;
  self->taking = TRUE;
  g_dbus_connection_new_for_address (self->address,
                                     G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT
                                         | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                     NULL, self->cancellable, connected, self);
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
lm_sleep_new (GDBusConnection *bus, const char *address, LmSleepFunc func, gpointer user_data)
{
  LmSleep *self = g_new0 (LmSleep, 1);

  self->bus = g_object_ref (bus);
  self->address = g_strdup (address);
  if (self->address == NULL)
    self->address = g_dbus_address_get_for_bus_sync (G_BUS_TYPE_SYSTEM, NULL, NULL);
  self->cancellable = g_cancellable_new ();
  self->lock_fd = -1;
  self->func = func;
  self->user_data = user_data;
  self->logind = lm_owner_signals_new (bus, LM_LOGIND_NAME, logind_appeared, logind_vanished, self);
  lm_owner_signals_add (self->logind, LM_LOGIND_MANAGER, "PrepareForSleep", LM_LOGIND_PATH,
                        on_prepare);
  lm_owner_signals_add (self->logind, LM_LOGIND_MANAGER, "PrepareForShutdown", LM_LOGIND_PATH,
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
  g_free (self->address);
  g_free (self);
}
