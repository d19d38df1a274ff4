/* lm-spinup-monitor.h: spin-up monitoring: which backend runs when and the last
 * spin-ups. Owns when a backend runs; its readers on D-Bus are
 * daemon/lm-spinup-dbus.c's, which it tells through funcs. */
#pragma once

#include <gio/gio.h>

#include "lm-attrib.h"
#include "lm-settings.h"
#include "lm-state.h"

G_BEGIN_DECLS

typedef struct _LmSpinupMonitor LmSpinupMonitor;

/* Told of every spin-up's disk, e.g. for the disks' power accounting. */
typedef void (*LmSpinupWakeFunc) (const char *disk, gint64 quiet_since_us, gpointer user_data);

LmSpinupMonitor *lm_spinup_monitor_new (LmState *state);
void lm_spinup_monitor_free (LmSpinupMonitor *spinup);
void lm_spinup_monitor_configure (LmSpinupMonitor *spinup, const LmSettings *settings);
void lm_spinup_monitor_shutdown (LmSpinupMonitor *spinup);
/* The backends' journal parts, put back after a crash (lm-journal-recovery.h). */
void lm_spinup_monitor_add_recovery (LmJournalRecovery *recovery);
void lm_spinup_monitor_set_wake_func (LmSpinupMonitor *spinup, LmSpinupWakeFunc func,
                                      gpointer user_data);
/* Told every spin-up in full, after the wake func (the ledger). */
void lm_spinup_monitor_set_record_func (LmSpinupMonitor *spinup, LmSpinUpFunc func,
                                        gpointer user_data);

/* Told each run of activity the backend collected (the ledger), when
 * lm_spinup_monitor_drain() asks, at a spin-up and at a stop. */
void lm_spinup_monitor_set_activity_func (LmSpinupMonitor *spinup, LmActivityFunc func,
                                          gpointer user_data);
void lm_spinup_monitor_drain (gpointer spinup);
/* Told whether a backend whose filter runs in the kernel is running: then
 * every spin-up is reported, and the disks need not re-read counters. */
typedef void (*LmSpinupMonitorFunc) (gboolean event_driven, gpointer user_data);
void lm_spinup_monitor_set_monitor_func (LmSpinupMonitor *spinup, LmSpinupMonitorFunc func,
                                         gpointer user_data);

/* The daemon's own command @command (SMART READ DATA, IDLE, SET FEATURES;
 * never CHECK POWER MODE) woke @disk at @time_us (realtime): the running
 * backend moves the disk's last I/O to now, and the spin-up, naming
 * laptop-moded and the command, goes where every spin-up goes (the
 * ledger, the history, subscribers), but not back to the disks' wake
 * func: the disks already counted it. Nothing while no backend runs. */
/* When @disk last did I/O (CLOCK_MONOTONIC µs), where the running backend
 * keeps it (bpf); FALSE otherwise. An LmDisksLastIoFunc. */
gboolean lm_spinup_monitor_last_io (const char *disk, gint64 *mono_us, gpointer spinup);
void lm_spinup_monitor_own_command (LmSpinupMonitor *spinup, const char *disk, const char *command,
                                    gint64 time_us);

/* Told each spin-up as a SpinUp record (a{sv}), after the record func:
 * for the subscribers. */
typedef void (*LmSpinupPublishFunc) (GVariant *record, gpointer user_data);
void lm_spinup_monitor_set_publish_func (LmSpinupMonitor *spinup, LmSpinupPublishFunc func,
                                         gpointer user_data);
/* Told the backend chosen ("none" when there is none) and what the user
 * should know of it ("" for nothing): the Attribution properties. */
typedef void (*LmSpinupBackendFunc) (const char *backend, const char *note, gpointer user_data);
void lm_spinup_monitor_set_backend_func (LmSpinupMonitor *spinup, LmSpinupBackendFunc func,
                                         gpointer user_data);

/* How many read the spin-ups as they come (subscribers): tracefs and
 * block_dump run only while someone does. */
void lm_spinup_monitor_set_readers (LmSpinupMonitor *spinup, guint readers);
/* Runs the backend now (a new reader needs it); an error when there is
 * none or it cannot start. */
gboolean lm_spinup_monitor_start_monitoring (LmSpinupMonitor *spinup, GError **error);
/* The last spin-ups, oldest first: GVariant a{sv} records. */
const GList *lm_spinup_monitor_history (LmSpinupMonitor *spinup);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmSpinupMonitor, lm_spinup_monitor_free)

/* The table of known causes (lm-advice.h) each SpinUp's Explanation is
 * taken from; NULL: none. Not owned: it outlives the monitor. */
typedef struct _LmAdvice LmAdvice;
void lm_spinup_monitor_set_advice (LmSpinupMonitor *monitor, const LmAdvice *advice);

G_END_DECLS
