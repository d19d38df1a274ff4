/* lm-daemon-private.h: the LmDaemon instance, shared by lm-daemon.c (the
 * state machine and life cycle) and the files that are its parts:
 * lm-daemon-methods.c (its D-Bus methods), lm-daemon-inputs.c (power,
 * holds, profile, sleep), lm-daemon-override.c and lm-daemon-properties.c. */
#pragma once

#include "lm-conflicts.h"
#include "lm-daemon.h"
#include "lm-advice.h"
#include "lm-daemon-decide.h"
#include "lm-disks.h"
#include "lm-engine.h"
#include "lm-gate.h"
#include "lm-generated.h"
#include "lm-inhibitors.h"
#include "lm-ledger.h"
#include "lm-ledger-dbus.h"
#include "lm-participants.h"
#include "lm-power.h"
#include "lm-profile.h"
#include "lm-settings.h"
#include "lm-sleep.h"
#include "lm-spinup-dbus.h"
#include "lm-spinup-monitor.h"
#include "lm-state.h"
#include "lm-tunables.h"
#include "lm-budget.h"
#include "lm-waiters.h"

G_BEGIN_DECLS

/* A power, hold or profile change counts once it lasted this long. */
#define LM_POWER_SETTLE_MS 1000
/* Changes that keep coming postpone the decision at most this long, so
 * churn by one caller cannot hold off a power change or another's hold. */
#define LM_SETTLE_MAX_MS 10000

struct _LmDaemon
{
  GObject parent_instance;

  LmExportedLaptopMode *skeleton;
  LmSettings *settings; /* in force: the config file's, or an override over them */
  char *mode;           /* what the user asked for now: "off", "on", "auto" */
  const char *reason;   /* why laptop mode is on or off now (see the XML) */
  gboolean active;      /* tunables applied */
  const LmTunablesBackend *backend;
  LmEngine engine;
  LmState *state;
  LmSpinupMonitor *spinup;   /* attribution */
  LmSpinupDbus *spinup_dbus; /* its subscribers and properties */
  LmDisks *disks;            /* power state per disk; timer, APM, readahead while on */
  LmLedger *ledger;          /* spin-ups and sleep per disk, 30 days */
  LmLedgerDbus *ledger_dbus; /* its GetLedger and LedgerSummary */
  LmAdvice *advice;          /* known causes, for spin-ups' Explanation; read at start */
  LmConflicts *conflicts;    /* applied values someone else changed since */
  LmWaiters *waiters;        /* WaitAwake's callers */
  LmBudget *deferred_budget; /* their ledger records, per uid */

  LmSystem sys; /* the participants' view of the above */

  const LmEngineOps *running; /* the engine whose run is engine_run */
  gpointer engine_run;        /* what it runs while in effect (lm-engine.h) */
  guint engine_start_id;      /* the run starts once the caller has its answer */

  /* Inputs to the decision; NULL until lm_daemon_start() has a bus. */
  LmPower *power;
  LmSleep *sleep;
  LmInhibitors *inhibitors;
  LmProfile *profile;  /* power-profiles-daemon: power-saver counts as battery */
  guint settle_id;     /* power and hold changes settle before anything is remounted */
  gint64 settle_first; /* monotonic µs of the first change not yet acted on; 0: none */
  guint quiet_id;      /* the end of the quiet period after holds (only while it runs) */

  /* The object is on the bus before the name is ours (lm_daemon_export);
   * until lm_daemon_start() ran no method runs (lm-gate.c). */
  LmGate *gate;

  /* An override (lm-daemon-override.c): one connection's settings in
   * force until it clears them or closes; never saved. */
  LmSettings *file_settings; /* the file's while an override is in force, else NULL */
  GVariant *override;        /* its keys, a{sv} */
  char *override_owner;      /* its caller's unique name */
  guint override_watch;
};

/* The one way the daemon changes the system (lm-daemon.c). */
/* @next: the settings in force from now (taken on success); @save: what
 * the config file is to hold (NULL: not written, an override). */
gboolean lm_daemon_transition (LmDaemon *self, const char *mode, LmSettings *next,
                               const LmSettings *save, GError **error);
/* lm-daemon-override.c */
void lm_daemon_override_connect (LmDaemon *self);
void lm_daemon_override_clear (LmDaemon *self);
const LmSettings *lm_daemon_file_settings (LmDaemon *self);
LmSettings *lm_daemon_override_apply (LmDaemon *self, const LmSettings *file, GError **error);
/* sync() in a GTask thread: it can take seconds on a slow disk. */
void lm_daemon_flush_thread (GTask *task, gpointer source, gpointer task_data,
                             GCancellable *cancellable);
void lm_daemon_methods_connect (LmDaemon *self);
/* On or off for @mode given holds, battery and profile as they are now,
 * and why: gathered in lm-daemon.c, decided by lm-daemon-decide.c. */
const char *lm_daemon_decide_now (LmDaemon *self, const char *mode, gboolean *on);
/* lm-daemon-inputs.c: follow power, holds, the profile and sleep. */
void lm_daemon_inputs_start (LmDaemon *self, GDBusConnection *bus);
/* Publish the state as properties (lm-daemon-properties.c). */
void lm_daemon_sync_properties (LmDaemon *self);

G_END_DECLS
