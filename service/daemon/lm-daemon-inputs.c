/* lm-daemon-inputs.c: the inputs that move the daemon between on and off
 * by themselves: the power source, holds, the power profile (each settles
 * before it counts, so churn costs at most one apply), and suspend and
 * shutdown (a flush before logind may go on). */
#include "config.h"

#include "lm-bus.h"
#include "lm-daemon-private.h"
#include "lm-names.h"

/* An input changed (power, holds): bring the system in line. */
static void
reconcile (LmDaemon *self)
{
  g_autoptr (GError) error = NULL;

  if (!lm_daemon_transition (self, self->mode, NULL, NULL, &error))
    {
      g_warning ("Cannot switch laptop mode: %s", error->message);
      lm_daemon_sync_properties (self);
    }
}

static gboolean settled (gpointer user_data);
static void arm_quiet (LmDaemon *self);

/* (Re)arm the one settle timer: @delay_ms from now, but never later than
 * LM_SETTLE_MAX_MS after the first change it is settling. */
static void
settle_in (LmDaemon *self, gint64 delay_ms)
{
  gint64 now = g_get_monotonic_time ();

  if (self->settle_first == 0)
    self->settle_first = now;
  gint64 left_ms = (self->settle_first + LM_SETTLE_MAX_MS * G_TIME_SPAN_MILLISECOND - now)
                   / G_TIME_SPAN_MILLISECOND;
  g_clear_handle_id (&self->settle_id, g_source_remove);
  self->settle_id
      = g_timeout_add ((guint) CLAMP (MIN (delay_ms, left_ms), 0, G_MAXUINT), settled, self);
}

static gboolean
settled (gpointer user_data)
{
  LmDaemon *self = user_data;
  gint64 next_due = 0;

  gboolean on;
  const char *reason = lm_daemon_decide_now (self, self->mode, &on);

  self->settle_id = 0;
  self->settle_first = 0;
  /* Churn that ends where it began (a hold taken and dropped, a plug that
   * bounced back) changes nothing: no apply, no remount, no state write. */
  if (on != self->active || g_strcmp0 (reason, self->reason) != 0)
    reconcile (self);
  else
    lm_daemon_sync_properties (self);
  /* A hold still younger than the settle time counts once it is not. */
  if (self->inhibitors != NULL)
    lm_inhibitors_count_settled (self->inhibitors, g_get_monotonic_time (),
                                 LM_POWER_SETTLE_MS * G_TIME_SPAN_MILLISECOND, &next_due);
  if (next_due != 0 && self->settle_id == 0)
    settle_in (self, (next_due - g_get_monotonic_time ()) / G_TIME_SPAN_MILLISECOND + 1);
  arm_quiet (self);
  return G_SOURCE_REMOVE;
}

/* The quiet period after holds is over (or was moved on by a hold since):
 * decide again. */
static gboolean
quiet_over (gpointer user_data)
{
  LmDaemon *self = user_data;

  self->quiet_id = 0;
  settle_in (self, 0);
  return G_SOURCE_REMOVE;
}

/* One timer, only while laptop mode is off for holds that are all gone
 * and their quiet period runs; none while idle. */
static void
arm_quiet (LmDaemon *self)
{
  gint64 until = self->inhibitors != NULL ? lm_inhibitors_quiet_until (self->inhibitors) : 0;
  gint64 now = g_get_monotonic_time ();

  g_clear_handle_id (&self->quiet_id, g_source_remove);
  if (g_strcmp0 (self->reason, LM_REASON_INHIBITED) != 0 || until <= now)
    return;
  g_debug ("Holds keep coming: laptop mode comes back after %" G_GINT64_FORMAT " s without one",
           lm_inhibitors_quiet_ms (self->inhibitors) / 1000);
  self->quiet_id
      = g_timeout_add ((guint) ((until - now) / G_TIME_SPAN_MILLISECOND + 1), quiet_over, self);
}

/* A plug that bounces sends several changes in a second; act once, on the
 * last, rather than remounting every filesystem each time. */
static void
on_power_changed (LmPower *power, gpointer user_data)
{
  LmDaemon *self = user_data;

  settle_in (self, LM_POWER_SETTLE_MS);
  lm_daemon_sync_properties (self);
}

/* Holds settle like power changes: Inhibit-and-exit in a loop, or holders
 * coming and going, cost at most one apply and one restore. The Inhibitors
 * property shows every hold at once; Reason follows once it counts. */
static void
on_inhibitors_changed (LmInhibitors *inhibitors, gpointer user_data)
{
  LmDaemon *self = user_data;

  settle_in (self, LM_POWER_SETTLE_MS);
  lm_daemon_sync_properties (self);
}

/* A profile switch settles like a plug: one decision, not one per signal. */
static void
on_profile_changed (LmProfile *profile, gpointer user_data)
{
  LmDaemon *self = user_data;

  settle_in (self, LM_POWER_SETTLE_MS);
  lm_daemon_sync_properties (self);
}

static void
sleep_flushed (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_task_propagate_boolean (G_TASK (result), NULL);
  lm_sleep_done (user_data);
}

static void
on_sleep (LmSleep *sleep, LmSleepEvent event, gpointer user_data)
{
  LmDaemon *self = user_data;

  /* Many drives forget their standby timer and APM level across suspend:
   * send them again, without a whole Start. */
  if (event == LM_SLEEP_RESUMED)
    {
      lm_ledger_note_sleep (self->ledger, FALSE);
      lm_disks_note_resumed (self->disks);
      if (self->active)
        lm_disks_resume (self->disks);
      return;
    }
  if (event == LM_SLEEP_SHUTDOWN)
    {
      g_autoptr (GError) error = NULL;
      if (!lm_daemon_shutdown (self, &error))
        g_warning ("%s", error->message);
    }
  if (event == LM_SLEEP_SUSPEND)
    lm_ledger_note_sleep (self->ledger, TRUE);
  /* Everything held back goes to disk before logind may go on. */
  g_autoptr (GTask) task = g_task_new (NULL, NULL, sleep_flushed, sleep);
  g_task_run_in_thread (task, lm_daemon_flush_thread);
}

void
lm_daemon_inputs_start (LmDaemon *self, GDBusConnection *bus)
{
  self->inhibitors = lm_inhibitors_new (bus, on_inhibitors_changed, self);
  self->power = lm_power_new (bus, self->settings->low_battery_percent, on_power_changed, self);
  self->profile = lm_profile_new (bus, on_profile_changed, self);
  /* logind's delay lock is a file descriptor: lm-sleep.c takes it on a
   * connection of its own, its signals come on @bus. */
  self->sleep = lm_sleep_new (bus, lm_bus_get_address (bus), on_sleep, self);
}
