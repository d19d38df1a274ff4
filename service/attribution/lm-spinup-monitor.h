/* lm-spinup.h: spin-up monitoring: which backend runs when and the last
 * spin-ups. Owns when a backend runs; its readers on D-Bus are
 * daemon/lm-spinup-dbus.c's, which it tells through funcs. */
#pragma once

#include <gio/gio.h>

#include "lm-attrib.h"
#include "lm-settings.h"
#include "lm-state.h"

G_BEGIN_DECLS

typedef struct _LmSpinup LmSpinup;

/* Told of every spin-up's disk, e.g. for the disks' power accounting. */
typedef void (*LmSpinupWakeFunc) (const char *disk, gint64 quiet_since_us, gpointer user_data);

LmSpinup *lm_spinup_new (LmState *state);
void lm_spinup_free (LmSpinup *spinup);
void lm_spinup_configure (LmSpinup *spinup, const LmSettings *settings);
void lm_spinup_shutdown (LmSpinup *spinup);
void lm_spinup_recover (LmState *state);
void lm_spinup_set_wake_func (LmSpinup *spinup, LmSpinupWakeFunc func, gpointer user_data);
/* Told every spin-up in full, after the wake func (the ledger). */
void lm_spinup_set_record_func (LmSpinup *spinup, LmSpinUpFunc func, gpointer user_data);

/* Told each run of activity the backend collected (the ledger), when
 * lm_spinup_drain() asks, at a spin-up and at a stop. */
void lm_spinup_set_activity_func (LmSpinup *spinup, LmActivityFunc func, gpointer user_data);
void lm_spinup_drain (gpointer spinup);
/* Told whether a backend whose filter runs in the kernel is running: then
 * every spin-up is reported, and the disks need not re-read counters. */
typedef void (*LmSpinupMonitorFunc) (gboolean event_driven, gpointer user_data);
void lm_spinup_set_monitor_func (LmSpinup *spinup, LmSpinupMonitorFunc func, gpointer user_data);

/* The daemon's own command @command (SMART READ DATA, IDLE, SET FEATURES;
 * never CHECK POWER MODE) woke @disk at @time_us (realtime): the running
 * backend moves the disk's last I/O to now, and the spin-up, naming
 * laptop-moded and the command, goes where every spin-up goes (the
 * ledger, the history, subscribers), but not back to the disks' wake
 * func: the disks already counted it. Nothing while no backend runs. */
/* When @disk last did I/O (CLOCK_MONOTONIC µs), where the running backend
 * keeps it (bpf); FALSE otherwise. An LmDisksLastIoFunc. */
gboolean lm_spinup_last_io (const char *disk, gint64 *mono_us, gpointer spinup);
void lm_spinup_own_command (LmSpinup *spinup, const char *disk, const char *command,
                            gint64 time_us);

/* Told each spin-up as a SpinUp record (a{sv}), after the record func:
 * for the subscribers. */
typedef void (*LmSpinupPublishFunc) (GVariant *record, gpointer user_data);
void lm_spinup_set_publish_func (LmSpinup *spinup, LmSpinupPublishFunc func, gpointer user_data);
/* Told the backend chosen ("none" when there is none) and what the user
 * should know of it ("" for nothing): the Attribution properties. */
typedef void (*LmSpinupBackendFunc) (const char *backend, const char *note, gpointer user_data);
void lm_spinup_set_backend_func (LmSpinup *spinup, LmSpinupBackendFunc func, gpointer user_data);

/* How many read the spin-ups as they come (subscribers): tracefs and
 * block_dump run only while someone does. */
void lm_spinup_set_readers (LmSpinup *spinup, guint readers);
/* Runs the backend now (a new reader needs it); an error when there is
 * none or it cannot start. */
gboolean lm_spinup_start_monitoring (LmSpinup *spinup, GError **error);
/* The last spin-ups, oldest first: GVariant a{sv} records. */
const GList *lm_spinup_history (LmSpinup *spinup);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmSpinup, lm_spinup_free)

G_END_DECLS
