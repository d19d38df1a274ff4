/* lm-disk-watch.c: one disk's power state while it is listed: the time it
 * spends active and asleep, the commands that ask it (and notice when the
 * daemon's own command woke it), and the two timers that look at it only
 * when it matters: quiet past its threshold (idle), or a slow re-check of
 * its I/O counters where no kernel event reports its spin-ups. The list of
 * disks and its life cycle are lm-disks.c's. */
#include "config.h"

#include "lm-disks-private.h"

#include "lm-ata.h"
#include "lm-blockdev.h"
#include "lm-disk-policy.h"
#include "lm-error.h"
#include "lm-sgio.h"

#define RECHECK_MIN_S 60
#define RECHECK_FACTOR 6

static void arm_idle (LmDisk *d);
static void arm_recheck (LmDisk *d, guint seconds);

/* --- accounting ------------------------------------------------------------ */

void
lm_disk_account (LmDisk *d, gint64 now)
{
  guint64 spent = (guint64) MAX (0, now - d->since_mono);

  if (d->asleep)
    d->standby_us += spent;
  else
    d->active_us += spent;
  d->since_mono = now;
}

typedef struct
{
  char *name;
  gboolean asleep;
  gint64 since_real;
} PowerNote;

static void
power_note_free (gpointer data)
{
  PowerNote *n = data;

  g_free (n->name);
  g_free (n);
}

static gboolean
on_power_notes (gpointer user_data)
{
  LmDisks *self = user_data;
  g_autoptr (GPtrArray) notes = g_steal_pointer (&self->power_notes);

  self->power_notes_id = 0;
  for (guint i = 0; i < notes->len; i++)
    {
      PowerNote *n = g_ptr_array_index (notes, i);
      if (self->power_func != NULL)
        self->power_func (n->name, n->asleep, n->since_real, self->power_data);
    }
  lm_disks_publish (self);
  return G_SOURCE_REMOVE;
}

/* The state changed @ago_us microseconds ago (0: now). Found while asked
 * (@later), it is told from the main loop, not from inside the asker: the
 * ledger asks while it walks its own tables, and the ledger is told. */
static void
set_asleep_full (LmDisk *d, gboolean asleep, gint64 ago_us, gboolean later)
{
  gint64 now = g_get_monotonic_time () - ago_us;

  if (d->asleep == asleep)
    return;
  lm_disk_account (d, MAX (now, d->since_mono));
  d->since_real = g_get_real_time () - ago_us;
  d->asleep = asleep;
  d->transitions++;
  if (!asleep)
    d->spinups++;
  g_debug ("Disk %s: %s", d->name, asleep ? "standby" : "active");
  if (later)
    {
      LmDisks *self = d->owner;
      PowerNote *n = g_new0 (PowerNote, 1);

      n->name = g_strdup (d->name);
      n->asleep = asleep;
      n->since_real = d->since_real;
      if (self->power_notes == NULL)
        self->power_notes = g_ptr_array_new_with_free_func (power_note_free);
      g_ptr_array_add (self->power_notes, n);
      if (self->power_notes_id == 0)
        self->power_notes_id = g_idle_add (on_power_notes, self);
      return;
    }
  if (d->owner->power_func != NULL)
    d->owner->power_func (d->name, asleep, d->since_real, d->owner->power_data);
  lm_disks_publish (d->owner);
}

static void
set_asleep_at (LmDisk *d, gboolean asleep, gint64 ago_us)
{
  set_asleep_full (d, asleep, ago_us, FALSE);
}

static void
set_asleep (LmDisk *d, gboolean asleep)
{
  set_asleep_at (d, asleep, 0);
}

void
lm_disk_set_error (LmDisk *d, const char *message)
{
  if (g_strcmp0 (d->error, message) == 0)
    return;
  if (message != NULL)
    g_warning ("Disk %s: %s", d->name, message);
  g_free (d->error);
  d->error = g_strdup (message);
  lm_disks_publish (d->owner);
}

/* --- commands -------------------------------------------------------------- */

/* The disk did I/O just now, so it is awake: an NVMe drive may be asked
 * its power states, a spinning disk its wear (each only when due). */
static void
io_seen (LmDisk *d)
{
  if (d->nvme != NULL)
    lm_disk_nvme_io_seen (d->nvme, d->excluded);
  if (d->smart != NULL && !d->excluded)
    {
      const LmDiskPolicy *p = lm_disk_policies_lookup (d->owner->policies, d->id, d->name);
      g_autofree char *path = lm_blockdev_devnode (d->name);
      guint rating = p != NULL && p->load_cycle_rating > 0 ? (guint) p->load_cycle_rating
                                                           : LM_SMART_DEFAULT_LOAD_CYCLE_RATING;
      gint64 woke_us = 0;
      gboolean changed = lm_disk_smart_io_seen (d->smart, d->name, path, rating,
                                                d->owner->wear_func, d->owner->wear_data, &woke_us);
      if (woke_us > 0)
        lm_disk_own_wake (d, LM_DISKS_CMD_SMART, woke_us);
      if (changed)
        lm_disks_publish (d->owner);
    }
}

void
lm_disk_own_wake (LmDisk *d, const char *what, gint64 took_us)
{
  LmDisks *self = d->owner;

  g_message ("Disk %s: laptop-moded's own %s woke it (answered in %.1f s)", d->name, what,
             took_us / (double) G_USEC_PER_SEC);
  /* It was counted awake (it said so a moment before): it slept from
   * when the command went out until the command woke it. */
  if (!d->asleep)
    set_asleep_at (d, TRUE, took_us);
  if (d->ata)
    d->power = LM_ATA_POWER_ACTIVE;
  set_asleep (d, FALSE);
  arm_idle (d);
  if (self->own_wake_func != NULL)
    self->own_wake_func (d->name, what, g_get_real_time () - took_us, self->own_wake_data);
}

gboolean
lm_disk_send (LmDisk *d, const char *what, const guint8 cdb[LM_ATA_CDB_LEN], GError **error)
{
  g_autofree char *path = lm_blockdev_devnode (d->name);
  g_autoptr (LmSgio) dev = NULL;
  LmAtaPower before = LM_ATA_POWER_UNKNOWN;
  gint64 took_us = 0;
  LmAtaRegs regs;

  g_return_val_if_fail (!d->excluded, FALSE);
  dev = lm_sgio_open (path, error);
  if (dev == NULL)
    return FALSE;
  gboolean ok = lm_sgio_command_awake (dev, cdb, NULL, 0, FALSE, &regs, &before, &took_us, error);
  if (before != LM_ATA_POWER_UNKNOWN)
    d->power = before;
  if (took_us > 0 && lm_ata_command_woke (before, took_us))
    lm_disk_own_wake (d, what, took_us);
  return ok;
}

static gboolean
check_power (LmDisk *d, LmAtaPower *power, GError **error)
{
  g_autofree char *path = lm_blockdev_devnode (d->name);
  g_autoptr (LmSgio) dev = NULL;

  g_return_val_if_fail (!d->excluded, FALSE);
  dev = lm_sgio_open (path, error);
  return dev != NULL && lm_sgio_check_power (dev, power, error);
}

/* ATA if it answers CHECK POWER MODE. Only SCSI-class (sd) and old IDE (hd)
 * disks are asked: virtio, NVMe, MMC and loop devices take no ATA. */
static void
probe_ata (LmDisk *d)
{
  g_autoptr (GError) error = NULL;
  LmAtaPower power;

  d->ata = FALSE;
  if (d->excluded || !(g_str_has_prefix (d->name, "sd") || g_str_has_prefix (d->name, "hd")))
    return;
  if (!check_power (d, &power, &error))
    {
      if (!g_error_matches (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED))
        lm_disk_set_error (d, error->message);
      else
        g_debug ("Disk %s is not ATA: %s", d->name, error->message);
      return;
    }
  d->ata = TRUE;
  d->power = power;
  d->asleep = power == LM_ATA_POWER_STANDBY || power == LM_ATA_POWER_SLEEPING;
}

/* The disk is quiet: ask an ATA disk (it never wakes from this), infer
 * standby for the others. */
static void
quiet (LmDisk *d)
{
  LmDisks *self = d->owner;
  g_autoptr (GError) error = NULL;
  LmAtaPower power;

  if (!d->ata)
    {
      set_asleep (d, TRUE);
      arm_recheck (d, 0);
      return;
    }
  if (!check_power (d, &power, &error))
    {
      lm_disk_set_error (d, error->message);
      arm_recheck (d, 0);
      return;
    }
  lm_disk_set_error (d, NULL);
  d->power = power;
  if (power == LM_ATA_POWER_STANDBY || power == LM_ATA_POWER_SLEEPING)
    {
      set_asleep (d, TRUE);
      arm_recheck (d, 0);
      return;
    }
  lm_disks_publish (self);
  /* Spinning but quiet: its own timer spins it down. Look again when that
   * timer runs out if we set it, else at the slow re-check. */
  guint seconds = 0;
  if (d->applied_standby > 0)
    {
      guint timer;
      if (lm_ata_standby_decode ((guint8) d->applied_standby, &timer) && timer > self->idle_s)
        seconds = timer - self->idle_s + 1;
    }
  arm_recheck (d, seconds);
}

static gboolean
on_idle_timeout (gpointer user_data)
{
  LmDisk *d = user_data;
  guint64 io;

  d->idle_id = 0;
  if (!lm_blockdev_read_io (d->name, &io))
    return G_SOURCE_REMOVE; /* gone; the uevent rescan drops it */
  if (io != d->io)
    {
      d->io = io;
      d->io_mono = g_get_monotonic_time ();
      io_seen (d);
      /* Busy. Where the kernel reports spin-ups, the one after this busy
       * spell says when it went quiet (lm_disks_note_activity), so no
       * timer watches it meanwhile; else look again one threshold later. */
      if (!d->owner->event_driven || d->ata)
        arm_idle (d); /* an ATA disk is asked, not inferred */
      return G_SOURCE_REMOVE;
    }
  quiet (d);
  return G_SOURCE_REMOVE;
}

static void
arm_idle (LmDisk *d)
{
  g_clear_handle_id (&d->recheck_id, g_source_remove);
  g_clear_handle_id (&d->idle_id, g_source_remove);
  if (d->excluded)
    return;
  d->idle_id = g_timeout_add_seconds (d->owner->idle_s, on_idle_timeout, d);
}

static void
woke (LmDisk *d)
{
  d->sleep_checks = 0;
  if (d->ata)
    d->power = LM_ATA_POWER_ACTIVE;
  set_asleep (d, FALSE);
  lm_disks_publish (d->owner);
  arm_idle (d);
  /* Spinning now for someone else's I/O: what laptop mode held back from
   * it while it slept costs no spin-up of its own any more. */
  if (d->apply_pending || d->restore_pending)
    lm_disk_woken (d->owner, d);
}

gboolean
lm_disk_in_standby (LmDisk *d)
{
  g_autoptr (GError) error = NULL;
  LmAtaPower power;

  if (!d->ata || d->excluded)
    return FALSE;
  if (!check_power (d, &power, &error))
    {
      g_debug ("Disk %s: cannot ask its power state: %s", d->name, error->message);
      return FALSE;
    }
  d->power = power;
  if (power != LM_ATA_POWER_STANDBY && power != LM_ATA_POWER_SLEEPING)
    return FALSE;
  /* What it says is what the accounting counts; its wake is watched as
   * after any quiet check. */
  if (!d->asleep)
    {
      set_asleep (d, TRUE);
      arm_recheck (d, 0);
    }
  return TRUE;
}

/* The fallback where no attribution event says a disk woke: compare its
 * I/O counters now and then (no command unless something changed), and
 * ask a quiet-but-spinning ATA disk whether its timer spun it down. */
static gboolean
on_recheck (gpointer user_data)
{
  LmDisk *d = user_data;
  guint64 io;

  d->recheck_id = 0;
  if (!lm_blockdev_read_io (d->name, &io))
    return G_SOURCE_REMOVE;
  if (io != d->io)
    {
      d->io = io;
      d->io_mono = g_get_monotonic_time ();
      io_seen (d);
      woke (d);
      return G_SOURCE_REMOVE;
    }
  if (d->ata && !d->asleep)
    quiet (d);
  else
    arm_recheck (d, 0);
  return G_SOURCE_REMOVE;
}

static guint
recheck_interval (LmDisks *self)
{
  if (self->recheck_s > 0)
    return self->recheck_s;
  return MAX (RECHECK_MIN_S, self->idle_s * RECHECK_FACTOR);
}

static void
arm_recheck (LmDisk *d, guint seconds)
{
  g_clear_handle_id (&d->idle_id, g_source_remove);
  g_clear_handle_id (&d->recheck_id, g_source_remove);
  if (d->excluded)
    return;
  /* Event-driven: a sleeping disk needs no timer (its spin-up is
   * reported); a spinning, quiet ATA disk is asked once more, when its
   * own timer should have spun it down, and then left until it wakes. */
  if (d->owner->event_driven && (!d->ata || d->asleep || d->sleep_checks++ > 0))
    return;
  if (seconds == 0 || seconds > recheck_interval (d->owner))
    seconds = recheck_interval (d->owner);
  d->recheck_id = g_timeout_add_seconds (seconds, on_recheck, d);
}

void
lm_disks_note_activity (LmDisks *self, const char *disk_name, gint64 quiet_since_us)
{
  g_autofree char *name = lm_blockdev_disk_for_name (disk_name);
  LmDisk *d = name != NULL ? g_hash_table_lookup (self->disks, name) : NULL;

  if (d == NULL || d->excluded)
    return;
  lm_blockdev_read_io (d->name, &d->io);
  d->io_mono = g_get_monotonic_time ();
  /* I/O right now: the drive is awake and may be asked. */
  io_seen (d);
  /* Busy when last seen and not watched since: it slept from one
   * threshold after its last I/O before this gap until now. */
  gint64 slept_at = quiet_since_us + (gint64) self->idle_s * G_USEC_PER_SEC;
  gint64 now = g_get_real_time ();
  if (!d->ata && !d->asleep && d->idle_id == 0 && d->recheck_id == 0 && quiet_since_us > 0
      && slept_at < now && slept_at > d->since_real)
    set_asleep_at (d, TRUE, now - slept_at);
  if (d->asleep || d->idle_id == 0)
    woke (d);
}

void
lm_disks_note_resumed (LmDisks *self)
{
  GHashTableIter iter;
  gpointer value;
  gint64 mono = g_get_monotonic_time ();

  /* The counters run on the monotonic clock, which stood still while
   * suspended; sent again now, with CountedUntil now, so that a reader
   * adding "now - CountedUntil" to the current state (laptop-modectl
   * disks) adds no suspended time. */
  g_hash_table_iter_init (&iter, self->disks);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    lm_disk_account (value, mono);
  lm_disks_publish (self);
}

void
lm_disks_set_event_driven (LmDisks *self, gboolean event_driven)
{
  GHashTableIter iter;
  gpointer value;

  if (self->event_driven == event_driven)
    return;
  self->event_driven = event_driven;
  g_message ("Disks: %s", event_driven ? "spin-ups reported by the kernel; no periodic re-check"
                                       : "re-checking I/O counters now and then");
  g_hash_table_iter_init (&iter, self->disks);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      LmDisk *d = value;
      if (event_driven && d->recheck_id != 0 && (!d->ata || d->asleep))
        g_clear_handle_id (&d->recheck_id, g_source_remove);
      else if (!event_driven && d->idle_id == 0 && d->recheck_id == 0 && !d->excluded)
        arm_recheck (d, 0);
    }
}

void
lm_disk_set_excluded (LmDisk *d, gboolean excluded)
{
  if (excluded == d->excluded)
    return;
  d->excluded = excluded;
  if (excluded)
    {
      d->ata = FALSE;
      g_clear_handle_id (&d->idle_id, g_source_remove);
      g_clear_handle_id (&d->recheck_id, g_source_remove);
      return;
    }
  /* Watched from now on: an ATA disk says its state; any other is awake
   * until it has been quiet for the threshold, as at start-up. */
  lm_blockdev_read_io (d->name, &d->io);
  probe_ata (d);
  if (!d->ata)
    set_asleep (d, FALSE);
  if (d->asleep)
    arm_recheck (d, 0);
  else
    arm_idle (d);
}

/* A disk just listed: an ATA disk says its state, any other is awake
 * until it has been quiet for the threshold. */
void
lm_disk_watch_begin (LmDisk *d)
{
  probe_ata (d);
  if (d->asleep)
    arm_recheck (d, 0);
  else
    arm_idle (d);
}

/* Where spin-ups come from the kernel, a disk still busy at its idle
 * check is not watched until its next spin-up (on_idle_timeout), so it
 * may count as awake long after it went quiet. Asked then, its counters
 * say: unchanged for SpinUpIdle, it is asleep (counted so from one
 * threshold after they last moved); moved since a look less than a
 * threshold ago, awake; else unknown: watched again (arm_idle), and taken
 * as asleep, since a wrong "awake" would cost the spin-up a waiter avoids. */
gboolean
lm_disks_is_awake (LmDisks *self, const char *name)
{
  LmDisk *d = g_hash_table_lookup (self->disks, name);
  gint64 now = g_get_monotonic_time ();
  gint64 idle_us = (gint64) self->idle_s * G_USEC_PER_SEC;
  guint64 io;

  if (d == NULL || d->excluded || d->asleep)
    return FALSE;
  if (d->ata || !self->event_driven || d->idle_id != 0 || d->recheck_id != 0)
    return TRUE;
  if (!lm_blockdev_read_io (d->name, &io))
    return FALSE;
  /* The kernel's time of the last I/O where the backend keeps one: the
   * idle check that saw the counters move took its own time for it, up to
   * SpinUpIdle late, and WaitAwake then said "awake" of a quiet disk. */
  gint64 last;
  gboolean exact
      = self->last_io_func != NULL && self->last_io_func (d->name, &last, self->last_io_data);
  if (io == d->io)
    {
      gint64 since = exact ? MIN (last, d->io_mono) : d->io_mono;
      if (now - since < idle_us)
        return TRUE;
      set_asleep_full (d, TRUE, now - since - idle_us, TRUE);
      return FALSE;
    }
  /* Moved since the last look: without the kernel's time, the I/O is
   * taken as that old (a wrong "asleep" costs a waiter only its wait). */
  gboolean recent = now - (exact ? last : d->io_mono) < idle_us;
  d->io = io;
  d->io_mono = exact ? last : now;
  arm_idle (d);
  return recent;
}
