/* lm-spinup-private.h: what lm-spinup.c (backends, monitoring, history)
 * and lm-spinup-dbus.c (Subscribe, Unsubscribe, GetSpinUps, SpinUp to each
 * subscriber) share. Not for anyone else. */
#pragma once

#include "lm-logind.h"
#include "lm-spinup.h"

G_BEGIN_DECLS

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
  GQueue history;             /* GVariant a{sv}, oldest first */
  LmSpinupWakeFunc wake_func; /* the disks' accounting */
  gpointer wake_data;
  LmSpinUpFunc record_func; /* the ledger */
  gpointer record_data;
  LmActivityFunc activity_func; /* the ledger */
  gpointer activity_data;
  LmSpinupMonitorFunc monitor_func; /* the disks: no re-check while event-driven */
  gpointer monitor_data;
  /* The D-Bus side (lm-spinup-dbus.c): */
  GHashTable *subscribers;   /* unique name → LmSubscriber */
  GHashTable *dropped;       /* unique name → LmDropped: told, not yet asked */
  LmLogind *logind;          /* from the first Subscribe on */
  GCancellable *cancellable; /* re-checks in flight */
  guint retry_id;            /* re-checks to ask again */
  gulong handlers[3];
};

/* Monitoring (lm-spinup.c): a subscriber needs it running. */
gboolean lm_spinup_start_monitoring (LmSpinup *self, GError **error);
/* Runs it while it has a reader (or always, for an event-driven backend). */
void lm_spinup_update_monitoring (LmSpinup *self);

/* The D-Bus side (lm-spinup-dbus.c). */
void lm_spinup_dbus_init (LmSpinup *self);
/* SpinUp to each subscriber, as it may see @record. */
void lm_spinup_dbus_emit (LmSpinup *self, GVariant *record);
/* Ends every subscription and forgets re-checks in flight. */
void lm_spinup_dbus_shutdown (LmSpinup *self);
void lm_spinup_dbus_free (LmSpinup *self);

G_END_DECLS
