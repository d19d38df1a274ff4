/* lm-owner-signals.c: signals of a well-known name, subscribed with its
 * current unique owner as the sender. GLib before 2.80.1 delivers a signal
 * subscribed by well-known name from any sender (a unicast signal needs no
 * match rule), so a local user could fake logind's PrepareForSleep or a
 * session change; a unique name cannot be faked. Never subscribes by
 * well-known name, and holds nothing while the name has no owner. */
#include "lm-owner-signals.h"

typedef struct
{
  char *interface;
  char *member;
  char *path;
  GDBusSignalCallback callback;
  guint id; /* 0 while the name has no owner */
} LmOwnerSignal;

struct _LmOwnerSignals
{
  GDBusConnection *bus;
  char *owner;
  guint watch;
  GPtrArray *signals; /* LmOwnerSignal */
  GBusNameAppearedCallback appeared;
  GBusNameVanishedCallback vanished;
  gpointer user_data;
};

static void
unsubscribe_all (LmOwnerSignals *self)
{
  for (guint i = 0; i < self->signals->len; i++)
    {
      LmOwnerSignal *s = g_ptr_array_index (self->signals, i);
      if (s->id != 0)
        g_dbus_connection_signal_unsubscribe (self->bus, s->id);
      s->id = 0;
    }
  g_clear_pointer (&self->owner, g_free);
}

static void
subscribe (LmOwnerSignals *self, LmOwnerSignal *s)
{
  s->id = g_dbus_connection_signal_subscribe (self->bus, self->owner, s->interface, s->member,
                                              s->path, NULL, G_DBUS_SIGNAL_FLAGS_NONE, s->callback,
                                              self->user_data, NULL);
}

static void
signal_free (gpointer data)
{
  LmOwnerSignal *s = data;

  g_free (s->interface);
  g_free (s->member);
  g_free (s->path);
  g_free (s);
}

static void
on_appeared (GDBusConnection *bus, const char *name, const char *owner, gpointer user_data)
{
  LmOwnerSignals *self = user_data;

  unsubscribe_all (self);
  self->owner = g_strdup (owner);
  for (guint i = 0; i < self->signals->len; i++)
    subscribe (self, g_ptr_array_index (self->signals, i));
  g_debug ("Taking %s's signals from %s only", name, owner);
  if (self->appeared != NULL)
    self->appeared (bus, name, owner, self->user_data);
}

static void
on_vanished (GDBusConnection *bus, const char *name, gpointer user_data)
{
  LmOwnerSignals *self = user_data;

  unsubscribe_all (self);
  if (self->vanished != NULL)
    self->vanished (bus, name, self->user_data);
}

LmOwnerSignals *
lm_owner_signals_new (GDBusConnection *bus, const char *name, GBusNameAppearedCallback appeared,
                      GBusNameVanishedCallback vanished, gpointer user_data)
{
  LmOwnerSignals *self = g_new0 (LmOwnerSignals, 1);

  self->bus = g_object_ref (bus);
  self->signals = g_ptr_array_new_with_free_func (signal_free);
  self->appeared = appeared;
  self->vanished = vanished;
  self->user_data = user_data;
  /* The watcher reports from the main loop, never from here: the caller
   * has time to add its signals first. */
  self->watch = g_bus_watch_name_on_connection (bus, name, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                on_appeared, on_vanished, self, NULL);
  return self;
}

void
lm_owner_signals_add (LmOwnerSignals *self, const char *interface, const char *member,
                      const char *path, GDBusSignalCallback callback)
{
  LmOwnerSignal *s = g_new0 (LmOwnerSignal, 1);

  s->interface = g_strdup (interface);
  s->member = g_strdup (member);
  s->path = g_strdup (path);
  s->callback = callback;
  g_ptr_array_add (self->signals, s);
  if (self->owner != NULL)
    subscribe (self, s);
}

void
lm_owner_signals_free (LmOwnerSignals *self)
{
  if (self == NULL)
    return;
  g_clear_handle_id (&self->watch, g_bus_unwatch_name);
  unsubscribe_all (self);
  g_ptr_array_unref (self->signals);
  g_object_unref (self->bus);
  g_free (self);
}
