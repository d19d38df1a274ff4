/* lm-daemon.c: the daemon's state machine and life cycle: the one
 * transition that brings the system to a mode (apply or restore through
 * the participants, the engine, the config file), start-up with crash
 * recovery, and shutdown. Its D-Bus methods are lm-daemon-methods.c's,
 * its properties lm-daemon-properties.c's, the inputs that move it
 * lm-daemon-inputs.c's, the decision lm-daemon-decide.c's. */
#include "config.h"

#include "lm-daemon.h"
#include "lm-daemon-private.h"
#include "lm-measurement.h"

#include <unistd.h>

#include "lm-auth.h"
#include "lm-bpf-shared.h"
#include "lm-dispatch.h"
#include "lm-error.h"
#include "lm-excluded.h"
#include "lm-hwpower.h"
#include "lm-flush.h"
#include "lm-io.h"
#include "lm-limits.h"
#include "lm-names.h"
#include "lm-paths.h"

G_DEFINE_TYPE (LmDaemon, lm_daemon, G_TYPE_OBJECT)

static void stop_engine (LmDaemon *self);

static void
lm_daemon_finalize (GObject *object)
{
  LmDaemon *self = LM_DAEMON (object);

  lm_daemon_unexport (self);
  g_clear_pointer (&self->gate, lm_gate_free);
  g_clear_pointer (&self->waiters, lm_waiters_free);
  g_clear_pointer (&self->deferred_budget, lm_budget_free);
  g_clear_handle_id (&self->settle_id, g_source_remove);
  g_clear_handle_id (&self->quiet_id, g_source_remove);
  g_clear_pointer (&self->sleep, lm_sleep_free);
  g_clear_pointer (&self->inhibitors, lm_inhibitors_free);
  g_clear_pointer (&self->power, lm_power_free);
  g_clear_pointer (&self->profile, lm_profile_free);
  g_clear_pointer (&self->spinup_dbus, lm_spinup_dbus_free);
  g_clear_pointer (&self->spinup, lm_spinup_monitor_free);
  g_clear_pointer (&self->ledger_dbus, lm_ledger_dbus_free);
  /* Before the ledger: the run reports its stop into it. */
  stop_engine (self);
  g_clear_pointer (&self->ledger, lm_ledger_free);
  g_clear_pointer (&self->advice, lm_advice_free);
  g_clear_pointer (&self->disks, lm_disks_free);
  lm_excluded_reset ();
  g_clear_object (&self->skeleton);
  lm_daemon_override_clear (self);
  g_clear_pointer (&self->settings, lm_settings_free);
  g_clear_pointer (&self->mode, g_free);
  g_clear_pointer (&self->conflicts, lm_conflicts_free);
  g_clear_pointer (&self->state, lm_state_free);
  G_OBJECT_CLASS (lm_daemon_parent_class)->finalize (object);
}

static void
lm_daemon_class_init (LmDaemonClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = lm_daemon_finalize;
}

static void
lm_daemon_init (LmDaemon *self)
{
}

static gboolean
restore_all (LmDaemon *self, GError **error)
{
  if (!lm_participants_restore (&self->sys, error))
    return FALSE;
  self->active = FALSE;
  return TRUE;
}

/* Bring the system to @mode with @settings and @engine. On failure the
 * system is as it was before the call. */
static gboolean
apply (LmDaemon *self, const char *mode, const LmSettings *settings, LmEngine engine,
       GError **error)
{
  if (g_str_equal (mode, "off"))
    return self->active ? restore_all (self, error) : TRUE;

  if (engine == LM_ENGINE_NONE)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                   "This kernel has neither /proc/sys/vm writeback tunables nor "
                   "/proc/sys/vm/bdflush; laptop mode cannot be done here");
      return FALSE;
    }

  /* A change of engine changes which files are written (laptop_mode or
   * not): put everything back first so nothing stale stays applied. */
  if (self->active && engine != self->engine && !restore_all (self, error))
    return FALSE;

  if (!lm_participants_apply (&self->sys, settings, engine, self->active ? self->settings : NULL,
                              self->engine, error))
    return FALSE;
  self->active = TRUE;
  return TRUE;
}

/* The decision's inputs as they are now (lm-daemon-decide.c decides). */
const char *
lm_daemon_decide_now (LmDaemon *self, const char *mode, gboolean *on)
{
  gint64 next_due;
  LmDecideInputs in = {
    .mode = mode,
    .follow_profile = self->settings->follow_power_profile,
  };

  /* Only holds that lasted the settle time: one that a caller takes and
   * drops at once must not cost a round of remounts. */
  if (self->inhibitors != NULL)
    {
      gint64 now = g_get_monotonic_time ();
      in.settled_holds = lm_inhibitors_count_settled (
          self->inhibitors, now, LM_POWER_SETTLE_MS * G_TIME_SPAN_MILLISECOND, &next_due);
      /* Holds that turned laptop mode off keep it off until they have
       * been quiet for the quiet period, which grows while they keep
       * coming: a loop of holds cannot turn it off and on every time. */
      in.hold_quiet = g_strcmp0 (self->reason, LM_REASON_INHIBITED) == 0
                      && lm_inhibitors_quiet_until (self->inhibitors) > now;
    }
  if (self->power != NULL)
    {
      in.low_battery = lm_power_get_low_battery (self->power);
      in.on_battery = lm_power_get_on_battery (self->power);
    }
  in.power_saver = self->profile != NULL && lm_profile_get_power_saver (self->profile);
  return lm_daemon_decide (&in, on);
}

void
lm_daemon_flush_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  /* sync() can take seconds on a slow disk: never on the main loop. */
  lm_io_sync_all ();
  g_task_return_boolean (task, TRUE);
}

/* Leaving laptop mode: what it held back goes to disk now, not in 30 s. */
static void
flush_in_background (void)
{
  g_autoptr (GTask) task = g_task_new (NULL, NULL, NULL, NULL);
  g_task_run_in_thread (task, lm_daemon_flush_thread);
}

static void
stop_engine (LmDaemon *self)
{
  g_clear_handle_id (&self->engine_start_id, g_source_remove);
  if (self->engine_run != NULL)
    self->running->stop (g_steal_pointer (&self->engine_run));
  self->running = NULL;
}

static gboolean
start_engine (gpointer user_data)
{
  LmDaemon *self = user_data;
  const LmEngineOps *ops = lm_engine_ops (self->engine);
  g_autoptr (GError) error = NULL;

  self->engine_start_id = 0;
  if (!self->active || ops->start == NULL || self->engine_run != NULL)
    return G_SOURCE_REMOVE;
  /* The ledger outlives the run: stop_engine() comes first in finalize. */
  LmEngineStart how = { self->settings->laptop_mode_seconds, lm_ledger_note_flushed, self->ledger };
  self->engine_run = ops->start (&how, &error);
  if (self->engine_run == NULL)
    g_warning ("%s; dirty data is now written only every MaxLostWork seconds, not when a "
               "disk is awake anyway",
               error->message);
  else
    self->running = ops;
  return G_SOURCE_REMOVE;
}

/* An engine runs exactly while its tunables are applied: the user-space one
 * costs nothing (not even a loaded BPF program) when laptop mode is off. */
static void
update_engine (LmDaemon *self)
{
  const LmEngineOps *ops = lm_engine_ops (self->engine);

  if (!self->active || ops != self->running)
    stop_engine (self);
  if (!self->active || ops->start == NULL)
    return;
  if (self->engine_run != NULL)
    {
      ops->retune (self->engine_run, self->settings->laptop_mode_seconds);
      return;
    }
  /* Loading the user-space engine's BPF program takes tens of
   * milliseconds: not while the caller of Start waits for its answer. */
  if (self->engine_start_id == 0)
    self->engine_start_id = g_idle_add (start_engine, self);
}

/* The one way the daemon changes the system: to @mode, with @next as the
 * new settings (Configure) or the current ones (NULL). On failure the
 * system, the settings and the config file are as before. */
gboolean
lm_daemon_transition (LmDaemon *self, const char *mode, LmSettings *next, const LmSettings *save,
                      GError **error)
{
  const LmSettings *settings = next != NULL ? next : self->settings;
  gboolean on, was_active = self->active;
  LmEngine engine_before = self->engine, engine = self->engine;
  const char *reason = lm_daemon_decide_now (self, mode, &on);

  /* A moment we look anyway: what someone else changed is left alone (the
   * apply and the restore below skip it) and listed. A new round of
   * laptop mode starts with an empty list. */
  if (self->active)
    lm_conflicts_check (self->conflicts, self->state);
  else if (on)
    lm_conflicts_clear (self->conflicts);

  if (next != NULL)
    {
      engine = lm_engine_choose (next->engine, self->backend, error);
      if (engine == LM_ENGINE_NONE && self->backend != NULL)
        return FALSE;
    }
  if (!apply (self, on ? "on" : "off", settings, engine, error))
    return FALSE;
  self->engine = engine;

  if (next != NULL)
    {
      if (save != NULL && !lm_settings_save (save, lm_config_file (), error))
        {
          /* Put the system back as it was with the old settings. */
          g_autoptr (GError) undo_error = NULL;
          self->engine = engine_before;
          if (!apply (self, was_active ? "on" : "off", self->settings, engine_before, &undo_error))
            g_warning ("Could not undo a configuration change: %s", undo_error->message);
          return FALSE;
        }
      lm_settings_free (self->settings);
      self->settings = next;
      lm_spinup_monitor_configure (self->spinup, self->settings);
      lm_disks_configure (self->disks, self->settings);
      if (self->power != NULL)
        lm_power_set_low_percent (self->power, self->settings->low_battery_percent);
      if (save != NULL)
        g_message ("Configuration changed and saved to %s", lm_config_file ());
    }
  if (self->mode != mode)
    {
      g_free (self->mode);
      self->mode = g_strdup (mode);
    }
  /* Back from holds: what the holders did meanwhile, summed up once. */
  if (g_strcmp0 (self->reason, LM_REASON_INHIBITED) == 0
      && g_strcmp0 (reason, LM_REASON_INHIBITED) != 0 && self->inhibitors != NULL)
    lm_inhibitors_summarise (self->inhibitors);
  if (was_active != self->active || reason != self->reason)
    g_message ("Laptop mode %s (mode %s, reason %s, engine %s)", self->active ? "on" : "off",
               self->mode, reason, lm_engine_to_string (self->engine));
  self->reason = reason;
  lm_ledger_set_deferring (self->ledger, self->active, self->settings->max_lost_work);
  update_engine (self);
  if (was_active && !self->active)
    flush_in_background ();
  lm_daemon_sync_properties (self);
  return TRUE;
}

/* A spin-up counts as activity in the disks' power accounting, and the
 * disk's WaitAwake callers go on: whatever Disks counted it (with bpf, a
 * disk busy at its idle check is not counted asleep, so its spin-up is no
 * change of state there and was never passed on). */
static void
on_disk_woken (const char *disk, gint64 quiet_since_us, gpointer user_data)
{
  LmDaemon *self = user_data;

  lm_disks_note_activity (self->disks, disk, quiet_since_us);
  lm_waiters_disk_awake (self->waiters, disk);
}

/* A disk counted awake or asleep: the ledger's record, and WaitAwake's
 * callers on a disk that woke go on. */
static void
on_disk_power (const char *disk, gboolean asleep, gint64 time_us, gpointer user_data)
{
  LmDaemon *self = user_data;

  lm_ledger_note_power (disk, asleep, time_us, self->ledger);
  if (!asleep)
    lm_waiters_disk_awake (self->waiters, disk);
}

/* A wait ended with an answer: the ledger keeps it, within its user's
 * budget (lm-limits.h). */
static void
on_waited (const LmWaitersRun *run, gpointer user_data)
{
  LmDaemon *self = user_data;
  g_autoptr (GError) error = NULL;
  char key[16];

  g_snprintf (key, sizeof key, "%u", run->uid);
  if (!lm_budget_check (self->deferred_budget, key, g_get_monotonic_time (), &error))
    {
      g_debug ("WaitAwake: a wait of uid %u not kept in the ledger: %s", run->uid, error->message);
      return;
    }
  lm_budget_charge (self->deferred_budget, key, 1, g_get_monotonic_time ());
  lm_ledger_note_deferred (self->ledger, run->disk, run->start_us, run->end_us, run->pid, run->uid,
                           run->comm, run->unit, run->reason);
}

/* Why WaitAwake would not wait now, or NULL: the setting, then laptop
 * mode off ("ac" when on AC: mode auto turned it off for that). Laptop
 * mode forced on while on AC (Mode on: a silent machine, say) is laptop
 * mode all the same: its disks sleep, and the wait holds. */
static const char *
waiters_why_now (gpointer user_data)
{
  LmDaemon *self = user_data;

  if (!self->settings->defer_maintenance)
    return "disabled";
  if (!self->active)
    return self->power != NULL && !lm_power_get_on_battery (self->power) ? "ac" : "inactive";
  return NULL;
}

/* The disks' state, on the bus. */
static void
on_disks_publish (GVariant *disks, gpointer user_data)
{
  LmDaemon *self = user_data;

  lm_exported_laptop_mode_set_disks (self->skeleton, disks);
}

/* Each disk's link power, runtime PM and NVMe latency, as sysfs has them,
 * in its Disks entry. */
static void
on_describe_disk (const char *disk, GVariantBuilder *builder, gpointer user_data)
{
  lm_hwpower_describe_disk (disk, builder);
}

/* The disks Exclude=true takes out: attribution's excluded set, which the
 * BPF maps follow. */
static gboolean
on_excluded (const char *const *disks, gpointer user_data)
{
  return lm_excluded_set (disks);
}

/* One of the daemon's own commands woke a disk: a spin-up of its own. */
static void
on_own_wake (const char *disk, const char *command, gint64 time_us, gpointer user_data)
{
  lm_spinup_monitor_own_command (user_data, disk, command, time_us);
}

/* While spin-ups come from the kernel the disks need not re-read counters. */
static void
on_monitoring (gboolean event_driven, gpointer user_data)
{
  lm_disks_set_event_driven (user_data, event_driven);
}

/* --- Life cycle -------------------------------------------------------- */

/* A state file at start-up means the last run ended without restoring
 * (crash, kill -9, power loss): put the originals back first, every part
 * that can be left changed in one registry, in one loop. */
static void
recover (LmDaemon *self)
{
  g_autoptr (LmJournalRecovery) recovery = lm_journal_recovery_new ();
  g_autoptr (GError) error = NULL;

  if (!lm_state_load (self->state, &error))
    {
      g_warning ("%s", error->message);
      return;
    }
  lm_participants_add_recovery (recovery);
  lm_spinup_monitor_add_recovery (recovery);
  lm_journal_recovery_run (recovery, self->state, &self->sys);
  lm_daemon_sync_properties (self);
}

LmDaemon *
lm_daemon_new (GError **error)
{
  g_autoptr (LmDaemon) self = g_object_new (LM_TYPE_DAEMON, NULL);
  g_autofree char *state_file = g_build_filename (lm_state_dir (), "state", NULL);
  g_autoptr (GError) engine_error = NULL;

  /* The restore journal is written back to the kernel as root: refuse a
   * directory where anyone else could have left a file (lm-io.c). */
  if (!lm_io_check_private_dir (lm_state_dir (), error))
    return NULL;
  self->state = lm_state_new (state_file);
  self->conflicts = lm_conflicts_new ();
  /* Where the BPF object watches writes to sysctls and sysfs. */
  lm_conflicts_set_writer_func (self->conflicts, lm_bpf_shared_setting_writer);

  self->settings = lm_settings_load (lm_config_file (), error);
  if (self->settings == NULL)
    return NULL;

  self->backend = lm_tunables_probe ();
  self->engine = lm_engine_choose (self->settings->engine, self->backend, &engine_error);
  if (engine_error != NULL)
    {
      g_warning ("%s; choosing automatically", engine_error->message);
      self->engine = lm_engine_choose ("auto", self->backend, NULL);
    }
  g_message ("Tunables backend %s, engine %s", self->backend ? self->backend->name : "none",
             lm_engine_to_string (self->engine));
  if (lm_sync_root_only ())
    g_message ("sync() is a syncfs() of %s alone (LAPTOP_MODED_SYNC=root, a test tier)",
               lm_root ());

  self->mode = g_strdup ("off");
  self->reason = LM_REASON_MANUAL;
  self->skeleton = lm_dispatch_skeleton_new (lm_auth_action_for_method);
  lm_exported_laptop_mode_set_version (self->skeleton, PACKAGE_VERSION);
  self->spinup = lm_spinup_monitor_new (self->state);
  /* Read once, at start (the disk is awake then): never from a spin-up. */
  g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  self->advice = lm_advice_load (warnings);
  for (guint i = 0; i < warnings->len; i++)
    g_message ("Table of known causes: %s", (const char *) warnings->pdata[i]);
  lm_spinup_monitor_set_advice (self->spinup, self->advice);
  self->spinup_dbus = lm_spinup_dbus_new (self->skeleton, self->spinup);
  self->disks = lm_disks_new (self->state, on_disks_publish, self);
  self->sys = (LmSystem){ self->state, self->backend, self->disks };
  lm_spinup_monitor_set_wake_func (self->spinup, on_disk_woken, self);
  lm_disks_set_own_wake_func (self->disks, on_own_wake, self->spinup);
  lm_disks_set_last_io_func (self->disks, lm_spinup_monitor_last_io, self->spinup);
  lm_disks_set_excluded_func (self->disks, on_excluded, NULL);
  lm_disks_set_describe_func (self->disks, on_describe_disk, NULL);
  self->ledger = lm_ledger_new_in_state_dir ();
  lm_ledger_set_disks (self->ledger, self->disks);
  lm_spinup_monitor_set_record_func (self->spinup, lm_ledger_note_spinup, self->ledger);
  lm_disks_set_power_func (self->disks, on_disk_power, self);
  self->waiters = lm_waiters_new (self->skeleton, self->disks, waiters_why_now, self);
  self->deferred_budget = lm_budget_new ("this user", "ledger records of waits",
                                         LM_LIMIT_DEFERRED_RECORDS_UID, LM_LIMIT_DEFERRED_REFILL_S);
  lm_waiters_set_done_func (self->waiters, on_waited, self);
  lm_disks_set_wear_func (self->disks, lm_ledger_note_wear, self->ledger);
  /* The ledger's activity and flushed counts; the disks' re-check stops
   * while spin-ups come from the kernel. */
  lm_spinup_monitor_set_activity_func (self->spinup, lm_ledger_note_activity, self->ledger);
  lm_ledger_set_drain_func (self->ledger, lm_spinup_monitor_drain, self->spinup);
  lm_spinup_monitor_set_monitor_func (self->spinup, on_monitoring, self->disks);
  lm_daemon_sync_properties (self);
  {
    g_autoptr (GVariant) measurement = lm_measurement_load (lm_state_dir ());
    lm_exported_laptop_mode_set_measurement (self->skeleton, measurement);
  }
  /* After the properties: LedgerSummary's NVMe keys read Disks and MaxLostWork. */
  self->ledger_dbus = lm_ledger_dbus_new (self->ledger, self->skeleton);
  lm_ledger_dbus_set_advice (self->ledger_dbus, self->advice);

  /* Every method (those of lm-spinup-dbus.c and lm-ledger-dbus.c too)
   * waits at the gate until lm_daemon_start(): this daemon does not own
   * the name yet, and another may be in charge (--replace). */
  self->gate = lm_gate_new (G_DBUS_INTERFACE_SKELETON (self->skeleton));
  lm_daemon_methods_connect (self);
  lm_daemon_override_connect (self);
  return g_steal_pointer (&self);
}

/* Take charge of the system: undo what a crashed run left, then enter the
 * configured start-up mode. @bus is the guarded connection that owns the
 * name (lm-bus.c). */
void
lm_daemon_start (LmDaemon *self, GDBusConnection *bus)
{
  g_autoptr (GError) mode_error = NULL;

  /* Disks first: restoring what a crashed run left needs them found. */
  lm_disks_configure (self->disks, self->settings);
  lm_disks_start (self->disks);
  recover (self);
  lm_spinup_monitor_configure (self->spinup, self->settings);

  lm_daemon_inputs_start (self, bus);

  g_free (self->mode);
  self->mode = g_strdup (self->settings->mode);
  if (!lm_daemon_transition (self, self->settings->mode, NULL, NULL, &mode_error))
    {
      g_warning ("Cannot start in mode %s: %s", self->settings->mode, mode_error->message);
      lm_daemon_sync_properties (self);
    }
  lm_gate_open (self->gate);
}

gboolean
lm_daemon_export (LmDaemon *self, GDBusConnection *connection, GError **error)
{
  return g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (self->skeleton), connection,
                                           LM_OBJECT_PATH, error);
}

void
lm_daemon_unexport (LmDaemon *self)
{
  if (self->skeleton != NULL
      && g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (self->skeleton)))
    g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (self->skeleton));
}

/* Restore everything this daemon changed and write what laptop mode held
 * back; called on SIGTERM, SIGINT, logind's PrepareForShutdown and loss of
 * the bus name. */
gboolean
lm_daemon_shutdown (LmDaemon *self, GError **error)
{
  gboolean ok = TRUE;
  g_autoptr (GError) ledger_error = NULL;

  lm_spinup_dbus_shutdown (self->spinup_dbus);
  lm_spinup_monitor_shutdown (self->spinup);
  if (!lm_ledger_flush (self->ledger, TRUE, &ledger_error))
    g_warning ("%s", ledger_error->message);
  stop_engine (self);
  if (lm_participants_saved (&self->sys))
    {
      lm_conflicts_check (self->conflicts, self->state);
      ok = restore_all (self, error);
      if (ok)
        g_message ("Restored the original tunables and mount options");
      self->reason = LM_REASON_MANUAL;
      lm_daemon_sync_properties (self);
    }
  lm_io_sync_all ();
  return ok;
}
