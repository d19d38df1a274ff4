/* lm-ledger-notes.c: what the ledger is told, turned into records: disks
 * going to sleep and waking (asleep/awake intervals), spin-ups and their
 * blame, the kernel's runs of activity (coalesced within a daily budget),
 * and what the user-space engine flushed at a spin-up (Flushed, filled in
 * place while the record still waits in memory). */
#include "config.h"

#include "lm-ledger-private.h"

#include "lm-excluded.h"

#include <string.h>

static void
set_string (char *dst, gsize size, const char *src)
{
  g_strlcpy (dst, src != NULL ? src : "", size);
}

/* --- activity ------------------------------------------------------------------- */

/* How far apart two runs of activity may be and still share a record: not
 * at all for the first half of a disk's daily budget, then ever more, so
 * that a disk busy every few seconds all day costs at most
 * LM_LEDGER_ACTIVITY_PER_DAY records a day (the counts stay exact; only
 * Time..End then spans quiet seconds too). */
static gint64
merge_gap_us (guint today)
{
  if (today < LM_LEDGER_ACTIVITY_PER_DAY / 2)
    return 0;
  if (today < LM_LEDGER_ACTIVITY_PER_DAY / 4 * 3)
    return 60 * G_USEC_PER_SEC;
  if (today < LM_LEDGER_ACTIVITY_PER_DAY)
    return 600 * G_USEC_PER_SEC;
  return G_MAXINT64;
}

/* A drain hands over many runs at once: they are written together, with
 * the record that follows (the spin-up) or by the caller, in one write. */
static void
close_open (LmLedger *self, DiskDay *d)
{
  if (!d->has_open)
    return;
  d->has_open = FALSE;
  d->activity_today++;
  lm_ledger_nvme_note_run (self, d, &d->open);
  self->batching = TRUE;
  lm_ledger_append_counted (self, &d->open);
  self->batching = FALSE;
}

/* Open records that no later run can join go to the pending records; all
 * of them when @all (a stop), and those of an earlier day. */
void
lm_ledger_close_activity (LmLedger *self, gboolean all)
{
  gint64 now = g_get_real_time ();
  GHashTableIter iter;
  DiskDay *d;

  lm_ledger_roll_day (self, now);
  g_hash_table_iter_init (&iter, self->days);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &d))
    if (d->has_open
        && (all || d->open.end_us < self->day_start_us
            || now - d->open.end_us > merge_gap_us (d->activity_today)))
      close_open (self, d);
}

void
lm_ledger_note_activity (const LmActivity *a, gpointer user_data)
{
  LmLedger *self = user_data;
  DiskDay *d;

  if (a->disk[0] == '\0' || a->end_us < a->start_us)
    return;
  lm_ledger_roll_day (self, g_get_real_time ());
  d = lm_ledger_day_of (self, a->disk);
  /* The budget is per local day of the run's start. */
  gint64 midnight = lm_ledger_local_midnight_us (a->start_us);
  if (midnight != d->activity_day)
    {
      close_open (self, d);
      d->activity_day = midnight;
      d->activity_today = 0;
    }
  if (d->has_open && a->start_us - d->open.end_us <= merge_gap_us (d->activity_today))
    {
      d->open.end_us = MAX (d->open.end_us, a->end_us);
      d->open.reads += a->reads;
      d->open.writes += a->writes;
      d->open.dirtied += a->dirtied;
      d->open.spells += a->spells;
      d->open.fs |= a->fs;
      return;
    }
  close_open (self, d);
  d->has_open = TRUE;
  d->open = (LmLedgerRecord){ .kind = LM_LEDGER_ACTIVITY,
                              .time_us = a->start_us,
                              .end_us = a->end_us,
                              .uid = -1,
                              .reads = a->reads,
                              .writes = a->writes,
                              .dirtied = a->dirtied,
                              .fs = a->fs,
                              .spells = a->spells,
                              .spells_known = TRUE };
  g_strlcpy (d->open.disk, a->disk, sizeof d->open.disk);
}

void
lm_ledger_set_drain_func (LmLedger *self, LmLedgerDrainFunc func, gpointer user_data)
{
  self->drain_func = func;
  self->drain_data = user_data;
}

/* --- flushed: a spin-up waits for the flush that follows it ------------------------ */

/* The held spin-up's wait is over (its count came, or LM_LEDGER_HOLD_S
 * passed): the state disk, awake since, may be written now. */
static void
release_held (LmLedger *self, const char *disk, DiskDay *d, gboolean write)
{
  if (!d->has_held)
    return;
  g_clear_handle_id (&d->held_timer, g_source_remove);
  d->has_held = FALSE;
  if (write
      && (self->state_disk == NULL || g_strcmp0 (disk, self->state_disk) == 0
          || lm_excluded_has (self->state_disk)))
    lm_ledger_flush_or_warn (self, FALSE);
}

typedef struct
{
  LmLedger *self;
  char *disk;
} HeldTimeout;

static void
held_timeout_free (gpointer data)
{
  HeldTimeout *h = data;

  g_free (h->disk);
  g_free (h);
}

static gboolean
on_held_timeout (gpointer user_data)
{
  HeldTimeout *h = user_data;
  DiskDay *d = g_hash_table_lookup (h->self->days, h->disk);

  if (d != NULL)
    {
      d->held_timer = 0; /* the source ends with this return */
      release_held (h->self, h->disk, d, TRUE);
    }
  return G_SOURCE_REMOVE;
}

void
lm_ledger_note_deferred (LmLedger *self, const char *disk, gint64 start_us, gint64 end_us,
                         guint32 pid, guint32 uid, const char *comm, const char *unit,
                         const char *reason)
{
  LmLedgerRecord r = { .kind = LM_LEDGER_DEFERRED, .pid = pid, .uid = uid };

  if (!lm_ledger_reason_from_string (reason, &r.reason))
    return;
  g_strlcpy (r.disk, disk, sizeof r.disk);
  g_strlcpy (r.comm, comm, sizeof r.comm);
  g_strlcpy (r.path, unit, sizeof r.path);
  r.time_us = start_us;
  r.end_us = MAX (start_us, end_us);
  lm_ledger_append (self, &r);
}

void
lm_ledger_note_flushed (const char *disk, guint32 kib, gpointer user_data)
{
  LmLedger *self = user_data;
  DiskDay *d;
  LmLedgerRecord r;

  if (disk == NULL)
    {
      /* The engine started (kib 1) or stopped (0). */
      self->expect_flush = kib != 0;
      return;
    }
  d = g_hash_table_lookup (self->days, disk);
  if (d == NULL || !d->has_held)
    return;
  /* Same strings, same size: re-encoded over itself. */
  if (d->held_gen == self->pending_gen && d->held_offset + d->held_size <= self->pending->len
      && lm_ledger_record_decode (self->pending->data + d->held_offset, d->held_size, &r)
             == (gssize) d->held_size)
    {
      g_autoptr (GByteArray) again = g_byte_array_new ();
      r.flushed = kib;
      lm_ledger_record_encode (&r, again);
      if (again->len == d->held_size)
        {
          memcpy (self->pending->data + d->held_offset, again->data, again->len);
          lm_ledger_index_patch (self->index,
                                 lm_ledger_index_bytes (self->index) - self->pending->len
                                     + d->held_offset,
                                 again->data, again->len);
        }
    }
  release_held (self, disk, d, TRUE);
}

static void
interval (LmLedger *self, const char *disk, DiskDay *d, gint64 now)
{
  LmLedgerRecord r = { .kind = d->asleep ? LM_LEDGER_ASLEEP : LM_LEDGER_AWAKE,
                       .time_us = d->since_us,
                       .end_us = MAX (now, d->since_us),
                       .uid = -1 };

  set_string (r.disk, sizeof r.disk, disk);
  d->since_us = now;
  lm_ledger_append (self, &r);
}

void
lm_ledger_close_intervals (LmLedger *self)
{
  gint64 now = g_get_real_time ();
  GHashTableIter iter;
  const char *disk;
  DiskDay *d;

  /* interval() only looks up disks already in the table. */
  g_hash_table_iter_init (&iter, self->days);
  while (g_hash_table_iter_next (&iter, (gpointer *) &disk, (gpointer *) &d))
    if (d->known && now > d->since_us)
      interval (self, disk, d, now);
}

void
lm_ledger_note_sleep (LmLedger *self, gboolean suspended)
{
  gint64 now = g_get_real_time ();
  GHashTableIter iter;
  DiskDay *d;

  if (suspended)
    {
      if (self->paused_since == 0)
        {
          lm_ledger_close_intervals (self);
          self->paused_since = now;
        }
      /* Before the suspend's own sync: what waited is not lost with a
       * battery that runs out while suspended. */
      lm_ledger_flush_or_warn (self, FALSE);
      return;
    }
  if (self->paused_since == 0)
    return;
  gint64 pause[2] = { self->paused_since, MAX (now, self->paused_since) };
  self->paused_since = 0;
  if (self->paused->len < 2 * LM_LEDGER_MAX_PAUSES)
    g_array_append_vals (self->paused, pause, 2);
  else
    g_array_index (self->paused, gint64, self->paused->len - 1) = pause[1];
  /* The next interval starts now: the suspend is in none. */
  g_hash_table_iter_init (&iter, self->days);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &d))
    if (d->known)
      d->since_us = MAX (d->since_us, now);
  lm_ledger_publish (self);
}

void
lm_ledger_note_power (const char *disk, gboolean asleep, gint64 time_us, gpointer user_data)
{
  LmLedger *self = user_data;
  DiskDay *d = lm_ledger_day_of (self, disk);
  gint64 now = time_us > 0 ? time_us : g_get_real_time ();

  if (d->known && d->asleep == asleep)
    return;
  if (!d->known)
    {
      /* Its state before the first change is the other one, since we started. */
      d->known = TRUE;
      d->asleep = !asleep;
      d->since_us = self->start_us;
    }
  interval (self, disk, d, now);
  d->asleep = asleep;
  if (!asleep)
    d->last_wake_us = MAX (d->last_wake_us, now);
  if (!asleep && g_strcmp0 (disk, self->state_disk) == 0)
    lm_ledger_flush_or_warn (self, FALSE); /* it spins anyway: write what waits */
  lm_ledger_publish (self);
}

void
lm_ledger_note_spinup (const LmSpinUp *s, gpointer user_data)
{
  LmLedger *self = user_data;
  LmLedgerRecord r = {
    .kind = LM_LEDGER_SPINUP,
    .time_us = s->time_us,
    .end_us = s->time_us,
    .pid = s->pid,
    .uid = s->uid,
    .via = s->via,
    .flushed = 0, /* lm_ledger_note_flushed() */
  };

  set_string (r.disk, sizeof r.disk, s->disk);
  set_string (r.comm, sizeof r.comm, s->comm);
  set_string (r.thread, sizeof r.thread, s->thread);
  set_string (r.unit, sizeof r.unit, s->unit);
  set_string (r.path, sizeof r.path, s->path);
  DiskDay *d = lm_ledger_day_of (self, s->disk);
  release_held (self, s->disk, d, FALSE); /* its flush did not come */
  /* While the user-space engine runs, a process's I/O is followed by its
   * flush of what was held back (lm-flush.c): the record stays pending
   * for that count, and a state disk's records wait for it, at most
   * LM_LEDGER_HOLD_S. Writeback is itself that flush. */
  gboolean hold = self->defer && self->expect_flush && s->via == LM_VIA_DIRECT;
  gsize offset = self->pending->len;
  guint64 gen = self->pending_gen;
  self->holding = hold; /* lm_ledger_append leaves it pending */
  lm_ledger_append (self, &r);
  self->holding = FALSE;
  if (hold && self->pending_gen == gen && self->pending->len > offset)
    {
      HeldTimeout *h = g_new0 (HeldTimeout, 1);

      d->has_held = TRUE;
      d->held_offset = offset;
      d->held_size = self->pending->len - offset;
      d->held_gen = gen;
      h->self = self;
      h->disk = g_strdup (s->disk);
      d->held_timer = g_timeout_add_seconds_full (G_PRIORITY_DEFAULT, LM_LEDGER_HOLD_S,
                                                  on_held_timeout, h, held_timeout_free);
    }
  else if (g_strcmp0 (s->disk, self->state_disk) == 0)
    lm_ledger_flush_or_warn (self, FALSE);
  lm_ledger_publish (self);
}
