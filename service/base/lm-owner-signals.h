/* lm-owner-signals.h: signals of a service known by a well-known name,
 * taken only from the unique name that owns it now; never from anyone else. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _LmOwnerSignals LmOwnerSignals;

/* @appeared and @vanished (either may be NULL) are told of the owner, like
 * g_bus_watch_name()'s, after the signals were subscribed or dropped. */
LmOwnerSignals *lm_owner_signals_new (GDBusConnection *bus, const char *name,
                                      GBusNameAppearedCallback appeared,
                                      GBusNameVanishedCallback vanished, gpointer user_data);

/* @path NULL for any object; @callback gets the @user_data given to new().
 * Subscribed with the current owner as sender, and again whenever the name
 * changes hands. Add before the owner can appear (right after new()). */
void lm_owner_signals_add (LmOwnerSignals *signals, const char *interface, const char *member,
                           const char *path, GDBusSignalCallback callback);

void lm_owner_signals_free (LmOwnerSignals *signals);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmOwnerSignals, lm_owner_signals_free)

G_END_DECLS
