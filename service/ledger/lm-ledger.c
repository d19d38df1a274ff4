/* lm-ledger.c: the spin-up ledger file and today's summary (its D-Bus
 * members are lm-ledger-dbus.c's). Records are
 * appended to <state dir>/ledger, each framed with a magic, a length and a
 * CRC32, so a torn or corrupt record is skipped on load and never spoils
 * the rest; compaction (30 days, 2 MiB, oldest dropped first) replaces the
 * file atomically. It must never wake a disk to write itself: while laptop
 * mode is on, new records wait in memory until the disk holding the state
 * directory is awake anyway (a wake for someone else, or awake when
 * MaxLostWork has passed), and are written then, at Stop, before suspend
 * and at shutdown; only LM_LEDGER_MAX_PENDING waiting records force a
 * write. Compaction is a write like any other: never while that disk
 * sleeps, and by age at most once a day (LM_LEDGER_COMPACT_SLACK_US).
 *
 * What a kill -9 loses: the records still waiting in memory (at most 4096;
 * LedgerSummary's UnwrittenSince says since when), nothing while laptop
 * mode is off, and the open asleep/awake interval of each disk (written
 * when it ends or at a clean stop). A write made because the disk is
 * awake is synced at once (syncfs, in a worker), in that spin-up: left to
 * writeback, its pages would wake the disk later. Other appends are not: a power loss can
 * also lose what the kernel had not written back, and the CRC skips the
 * torn record it may leave. */
#define _GNU_SOURCE /* syncfs */
#include "config.h"

#include "lm-ledger.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "lm-error.h"
#include "lm-excluded.h"
#include "lm-io.h"

#include "lm-ledger-private.h"

void
lm_ledger_disk_day_free (gpointer data)
{
  DiskDay *d = data;

  g_clear_handle_id (&d->held_timer, g_source_remove);
  g_clear_pointer (&d->runs_today, g_array_unref);
  g_free (d);
}

/* --- today's summary --------------------------------------------------------- */

gint64
lm_ledger_local_midnight_us (gint64 now_us)
{
  g_autoptr (GDateTime) now = g_date_time_new_from_unix_local (now_us / G_USEC_PER_SEC);
  g_autoptr (GDateTime) midnight
      = g_date_time_new_local (g_date_time_get_year (now), g_date_time_get_month (now),
                               g_date_time_get_day_of_month (now), 0, 0, 0);
  return g_date_time_to_unix (midnight) * G_USEC_PER_SEC;
}

DiskDay *
lm_ledger_day_of (LmLedger *self, const char *disk)
{
  DiskDay *d = g_hash_table_lookup (self->days, disk);

  if (d == NULL)
    {
      d = g_new0 (DiskDay, 1);
      g_hash_table_insert (self->days, g_strdup (disk), d);
    }
  return d;
}

/* A new day resets the counts; the open interval carries over. */
void
lm_ledger_roll_day (LmLedger *self, gint64 now_us)
{
  gint64 midnight = lm_ledger_local_midnight_us (now_us);
  GHashTableIter iter;
  DiskDay *d;

  if (midnight == self->day_start_us)
    return;
  self->day_start_us = midnight;
  /* Yesterday's suspends are no part of today. */
  g_array_set_size (self->paused, 0);
  g_hash_table_iter_init (&iter, self->days);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &d))
    {
      d->spinups = 0, d->asleep_us = 0;
      g_clear_pointer (&d->runs_today, g_array_unref);
    }
}

static void
count_record (LmLedger *self, const LmLedgerRecord *r)
{
  DiskDay *d = lm_ledger_day_of (self, r->disk);

  if (r->kind == LM_LEDGER_SPINUP || r->kind == LM_LEDGER_AWAKE)
    d->last_wake_us = MAX (d->last_wake_us, r->time_us);
  if (r->kind == LM_LEDGER_SPINUP && r->time_us >= self->day_start_us)
    d->spinups++;
  if (r->kind == LM_LEDGER_ASLEEP && r->end_us > self->day_start_us)
    d->asleep_us += r->end_us - MAX (r->time_us, self->day_start_us);
  if (r->kind == LM_LEDGER_WEAR)
    lm_ledger_count_wear (self, d, r);
  lm_ledger_nvme_note_run (self, d, r);
}

static void
summary_entry (LmLedger *self, const char *disk, DiskDay *d, gint64 now, GVariant *disks,
               guint max_lost_work, guint laptop_mode_seconds, GVariantBuilder *b)
{
  g_auto (GVariantBuilder) e = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  gint64 asleep = d->asleep_us;
  gint64 span = MAX (1, now - self->day_start_us);

  if (d->known && d->asleep)
    asleep += now - MAX (d->since_us, self->day_start_us);
  g_variant_builder_add (&e, "{sv}", "SpinUpsToday", g_variant_new_uint32 (d->spinups));
  g_variant_builder_add (&e, "{sv}", "AsleepShareToday",
                         g_variant_new_double (CLAMP ((double) asleep / span, 0.0, 1.0)));
  g_variant_builder_add (&e, "{sv}", "LastWake",
                         g_variant_new_uint64 ((guint64) MAX (0, d->last_wake_us)));
  lm_ledger_nvme_summary (self, disk, d, now, laptop_mode_seconds, disks, max_lost_work, &e);
  if (self->unwritten_since_us != 0 && g_strcmp0 (disk, self->state_disk) == 0)
    g_variant_builder_add (&e, "{sv}", "UnwrittenSince",
                           g_variant_new_uint64 ((guint64) self->unwritten_since_us));
  g_autofree char *name = g_utf8_make_valid (disk, -1);
  g_variant_builder_add (b, "{s@a{sv}}", name, g_variant_builder_end (&e));
}

/* Changes nothing in the days table: it is built from inside walks over
 * that table (a record appended while intervals close publishes it). */
GVariant *
lm_ledger_summary (LmLedger *self, GVariant *disks, guint max_lost_work, guint laptop_mode_seconds)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a{sa{sv}}"));
  gint64 now = g_get_real_time ();
  GHashTableIter iter;
  const char *disk;
  DiskDay *d;

  lm_ledger_roll_day (self, now);
  g_hash_table_iter_init (&iter, self->days);
  while (g_hash_table_iter_next (&iter, (gpointer *) &disk, (gpointer *) &d))
    summary_entry (self, disk, d, now, disks, max_lost_work, laptop_mode_seconds, &b);
  /* Where UnwrittenSince is said, though nothing was noted of it yet. */
  if (self->unwritten_since_us != 0 && self->state_disk != NULL
      && !g_hash_table_contains (self->days, self->state_disk))
    {
      DiskDay none = { 0 };
      summary_entry (self, self->state_disk, &none, now, disks, max_lost_work, laptop_mode_seconds,
                     &b);
    }
  return g_variant_builder_end (&b);
}

void
lm_ledger_publish (LmLedger *self)
{
  if (self->changed_func != NULL)
    self->changed_func (self->changed_data);
}

void
lm_ledger_set_changed_func (LmLedger *self, LmLedgerChangedFunc func, gpointer user_data)
{
  self->changed_func = func;
  self->changed_data = user_data;
}

/* --- the file ---------------------------------------------------------------- */

typedef struct
{
  gint64 cutoff; /* drop records that ended before */
  GArray *keep;  /* (offset, size) pairs of the records kept */
  gsize kept_bytes;
  gint64 oldest;
} Compact;

static void
compact_one (const LmLedgerRecord *r, gsize offset, gsize size, gpointer user_data)
{
  Compact *c = user_data;
  gsize pair[2] = { offset, size };

  if (r->end_us < c->cutoff)
    return;
  g_array_append_vals (c->keep, pair, 1);
  c->kept_bytes += size;
}

/* Rewrite the file with @extra appended, without what is older than 30
 * days, and the oldest dropped until it fills at most 3/4 of the bound (so
 * compaction is not needed again at the next append). */
static gboolean
compact (LmLedger *self, const guint8 *extra, gsize extra_len, GError **error)
{
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_autoptr (GError) read_error = NULL;

  if (!lm_io_read_private (self->path, &contents, &length, &read_error)
      && !g_error_matches (read_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&read_error),
                                  "Cannot compact the ledger: ");
      return FALSE;
    }
  g_autoptr (GByteArray) all = g_byte_array_sized_new (length + extra_len);
  g_byte_array_append (all, (const guint8 *) contents, length);
  g_byte_array_append (all, extra, extra_len);

  Compact c = { .cutoff = g_get_real_time () - LM_LEDGER_MAX_AGE_US,
                .keep = g_array_new (FALSE, FALSE, 2 * sizeof (gsize)) };
  lm_ledger_parse (all->data, all->len, compact_one, &c, NULL);

  guint first = 0;
  while (first < c.keep->len && c.kept_bytes > LM_LEDGER_MAX_BYTES / 4 * 3)
    c.kept_bytes -= g_array_index (c.keep, gsize, 2 * first + 1), first++;

  g_autoptr (GByteArray) out = g_byte_array_sized_new (c.kept_bytes);
  g_autoptr (GArray) kept = g_array_new (FALSE, FALSE, sizeof (gsize));
  gint64 oldest = G_MAXINT64;
  for (guint i = first; i < c.keep->len; i++)
    {
      gsize offset = g_array_index (c.keep, gsize, 2 * i);
      gsize size = g_array_index (c.keep, gsize, 2 * i + 1);
      LmLedgerRecord r;

      lm_ledger_record_decode (all->data + offset, size, &r);
      oldest = MIN (oldest, r.end_us);
      g_byte_array_append (out, all->data + offset, size);
      g_array_append_val (kept, offset);
    }
  g_array_unref (c.keep);
  if (!lm_io_write_atomic (self->path, (const char *) out->data, out->len, 0600, error))
    return FALSE;
  g_debug ("Ledger compacted to %u bytes (%u records dropped)", out->len, first);
  self->oldest_us = oldest;
  self->file_size = out->len;
  /* What waited is in the file now: the index holds the file alone. */
  lm_ledger_index_replace (self->index, out->data, out->len, all->data, all->len,
                           (const gsize *) kept->data, kept->len);
  return TRUE;
}

static void
syncfs_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  int fd = GPOINTER_TO_INT (data);

  if (syncfs (fd) < 0)
    g_debug ("Ledger: syncfs: %s", g_strerror (errno));
  close (fd);
}

/* The records were written because the state disk is awake: everything
 * dirty on its filesystem goes now, in this spin-up (syncfs, not fdatasync:
 * ext4's journalled metadata and btrfs's transaction would otherwise reach
 * it later, from writeback, and wake it). Off the main loop; takes @fd. */
static void
sync_in_background (int fd)
{
  g_autoptr (GTask) task = g_task_new (NULL, NULL, NULL, NULL);

  g_task_set_task_data (task, GINT_TO_POINTER (fd), NULL);
  g_task_run_in_thread (task, syncfs_thread);
}

static gboolean
append (LmLedger *self, const guint8 *data, gsize length, gboolean sync, GError **error)
{
  int fd = open (self->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  gsize done = 0;

  if (fd < 0 && errno == ENOENT)
    return compact (self, data, length, error); /* creates the directory */
  while (fd >= 0 && done < length)
    {
      ssize_t n = write (fd, data + done, length - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      done += (gsize) n;
    }
  int saved = errno;
  if (fd >= 0 && done == length && sync)
    sync_in_background (fd), fd = -1;
  if (fd >= 0)
    close (fd);
  self->file_size += done;
  if (done < length)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot write the ledger %s: %s", self->path,
                   g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static void
load_one (const LmLedgerRecord *r, gsize offset, gsize size, gpointer user_data)
{
  LmLedger *self = user_data;

  self->oldest_us = MIN (self->oldest_us, r->end_us);
  /* The latest end a run before this one wrote: the daemon was stopped
   * from there until this ledger started. */
  self->stopped_from_us = MAX (self->stopped_from_us, r->end_us);
  count_record (self, r);
}

static void
load (LmLedger *self)
{
  g_autofree char *contents = NULL;
  gsize length = 0, skipped = 0;
  g_autoptr (GError) error = NULL;

  if (!lm_io_read_private (self->path, &contents, &length, &error))
    {
      if (!g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        g_warning ("Cannot read the ledger: %s", error->message);
      return;
    }
  self->file_size = length;
  lm_ledger_index_add (self->index, (const guint8 *) contents, length);
  guint n = lm_ledger_parse ((const guint8 *) contents, length, load_one, self, &skipped);
  g_message ("Ledger %s: %u records, %" G_GSIZE_FORMAT " bytes skipped", self->path, n, skipped);
  /* Rewrite now rather than leave a torn tail in front of new records. */
  if (skipped > 0 && !compact (self, NULL, 0, &error))
    g_warning ("%s", error->message);
}

/* --- pending records ----------------------------------------------------------- */

void
lm_ledger_drain (LmLedger *self)
{
  /* The drain hands records back through lm_ledger_note_activity(), which
   * may flush: not again from there. */
  if (self->drain_func == NULL || self->draining)
    return;
  self->draining = TRUE;
  self->drain_func (self->drain_data);
  self->draining = FALSE;
}

/* Whether the records wait for the state disk: laptop mode is on and a
 * disk is under the state directory. An excluded state disk is not kept
 * asleep (nor watched: its wake-ups are never heard of), so there is
 * nothing to wait for. */
static gboolean
waits_for_disk (LmLedger *self)
{
  return self->defer && self->state_disk != NULL && !lm_excluded_has (self->state_disk);
}

gboolean
lm_ledger_flush (LmLedger *self, gboolean closing, GError **error)
{
  gboolean ok;

  lm_ledger_drain (self);
  lm_ledger_close_activity (self, closing);
  if (closing)
    {
      GHashTableIter iter;
      const char *disk;
      DiskDay *d;

      g_hash_table_iter_init (&iter, self->days);
      while (g_hash_table_iter_next (&iter, (gpointer *) &disk, (gpointer *) &d))
        {
          d->has_held = FALSE;
          g_clear_handle_id (&d->held_timer, g_source_remove);
        }
      lm_ledger_close_intervals (self);
    }
  g_clear_handle_id (&self->timer_id, g_source_remove);
  if (self->n_pending == 0)
    return TRUE;
  /* By age at most once a day: compaction keeps what ended in the last 30
   * days, so the oldest record kept is a day from the next one. */
  if (self->file_size + self->pending->len > LM_LEDGER_MAX_BYTES
      || self->oldest_us < g_get_real_time () - LM_LEDGER_MAX_AGE_US - LM_LEDGER_COMPACT_SLACK_US)
    ok = compact (self, self->pending->data, self->pending->len, error);
  else
    ok = append (self, self->pending->data, self->pending->len, waits_for_disk (self), error);
  if (!ok)
    return FALSE;
  g_debug ("Ledger: wrote %u records", self->n_pending);
  g_byte_array_set_size (self->pending, 0);
  self->n_pending = 0;
  self->pending_gen++;
  if (self->unwritten_since_us != 0)
    {
      self->unwritten_since_us = 0;
      lm_ledger_publish (self);
    }
  return TRUE;
}

void
lm_ledger_flush_or_warn (LmLedger *self, gboolean closing)
{
  g_autoptr (GError) error = NULL;

  if (!lm_ledger_flush (self, closing, &error))
    g_warning ("%s", error->message);
}

static gboolean
on_timer (gpointer user_data)
{
  LmLedger *self = user_data;

  self->timer_id = 0;
  if (waits_for_disk (self) && lm_ledger_state_disk_asleep (self))
    {
      g_debug ("Ledger: %u records wait for disk %s to wake", self->n_pending, self->state_disk);
      return G_SOURCE_REMOVE;
    }
  g_debug ("Ledger: records waited MaxLostWork on an awake disk, writing them");
  lm_ledger_flush_or_warn (self, FALSE);
  return G_SOURCE_REMOVE;
}

void
lm_ledger_append (LmLedger *self, const LmLedgerRecord *r)
{
  lm_ledger_roll_day (self, g_get_real_time ());
  count_record (self, r);
  lm_ledger_append_counted (self, r);
}

/* @r was counted in today's summary already. */
void
lm_ledger_append_counted (LmLedger *self, const LmLedgerRecord *r)
{
  gsize before = self->pending->len;

  self->oldest_us = MIN (self->oldest_us, r->end_us); /* the file's, once written */
  lm_ledger_record_encode (r, self->pending);
  lm_ledger_index_add (self->index, self->pending->data + before, self->pending->len - before);
  self->n_pending++;
  gboolean wait_for_disk = waits_for_disk (self);
  if (self->n_pending >= LM_LEDGER_MAX_PENDING && wait_for_disk
      && lm_ledger_state_disk_asleep (self))
    g_message ("Ledger: %u records waited for disk %s to wake; writing them now (it may spin up)",
               self->n_pending, self->state_disk);
  if ((!self->holding && !self->batching && !wait_for_disk)
      || self->n_pending >= LM_LEDGER_MAX_PENDING)
    lm_ledger_flush_or_warn (self, FALSE);
  else if (self->timer_id == 0)
    self->timer_id = g_timeout_add_seconds (MAX (1, self->max_wait_s), on_timer, self);
  if (self->n_pending >= LM_LEDGER_MAX_PENDING)
    {
      /* The file cannot be written (the flush above warned why): keep
       * memory bounded by dropping what waits, rather than the daemon. */
      g_warning ("Ledger: dropping %u records that could not be written", self->n_pending);
      lm_ledger_index_truncate (self->index,
                                lm_ledger_index_bytes (self->index) - self->pending->len);
      g_byte_array_set_size (self->pending, 0);
      self->n_pending = 0;
      self->pending_gen++;
    }
  /* Records now wait in memory: LedgerSummary says since when. Only then,
   * not for each record written at once (laptop mode off), which would
   * cost every append two summaries and two PropertiesChanged. */
  if (self->n_pending > 0 && self->unwritten_since_us == 0)
    {
      self->unwritten_since_us = g_get_real_time ();
      lm_ledger_publish (self);
    }
}

guint
lm_ledger_pending (LmLedger *self)
{
  return self->n_pending;
}

/* --- life cycle ----------------------------------------------------------------- */

LmLedger *
lm_ledger_new (const char *path)
{
  LmLedger *self = g_new0 (LmLedger, 1);

  self->path = g_strdup (path);
  self->pending = g_byte_array_new ();
  self->index = lm_ledger_index_new ();
  self->oldest_us = G_MAXINT64;
  self->start_us = g_get_real_time ();
  self->day_start_us = lm_ledger_local_midnight_us (self->start_us);
  self->days = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, lm_ledger_disk_day_free);
  self->paused = g_array_new (FALSE, FALSE, sizeof (gint64));
  load (self);
  return self;
}

void
lm_ledger_set_deferring (LmLedger *self, gboolean defer, guint max_wait_s)
{
  self->defer = defer;
  self->max_wait_s = max_wait_s;
  if (!defer)
    lm_ledger_flush_or_warn (self, FALSE);
}

void
lm_ledger_free (LmLedger *self)
{
  if (self == NULL)
    return;
  self->drain_func = NULL; /* its owner may be gone already */
  lm_ledger_flush_or_warn (self, FALSE);
  g_clear_handle_id (&self->timer_id, g_source_remove);
  g_byte_array_unref (self->pending);
  lm_ledger_index_free (self->index);
  g_hash_table_unref (self->days);
  g_array_unref (self->paused);
  g_free (self->state_disk);
  g_free (self->path);
  g_free (self);
}
