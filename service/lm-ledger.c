/* lm-ledger.c: the spin-up ledger file and its D-Bus members. Records are
 * appended to <state dir>/ledger, each framed with a magic, a length and a
 * CRC32, so a torn or corrupt record is skipped on load and never spoils
 * the rest; compaction (30 days, 2 MiB, oldest dropped first) replaces the
 * file atomically. It must never wake a disk to write itself: new records
 * wait in memory while laptop mode is on until the disk holding the state
 * directory wakes anyway, at most MaxLostWork seconds (laptop mode allows
 * that much loss) or LM_LEDGER_MAX_PENDING records, and at shutdown.
 *
 * What a kill -9 loses: the records still waiting in memory, that is at most
 * the last MaxLostWork seconds (and at most 4096 records) while laptop mode
 * is on, nothing while it is off, and the open asleep/awake interval of each
 * disk (written when it ends or at a clean stop). Appends are not fsync()ed
 * (that would spin the disk up): a power loss can also lose what the kernel
 * had not written back, and the CRC skips the torn record it may leave. */
#include "config.h"

#include "lm-ledger.h"
#include "lm-paths.h"
#include "lm-blockdev.h"

#include <sys/sysmacros.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "lm-auth.h"
#include "lm-error.h"
#include "lm-io.h"

typedef struct
{
  gboolean known; /* state seen at least once */
  gboolean asleep;
  gint64 since_us;
  /* Today, local time: */
  guint spinups;
  gint64 asleep_us; /* in closed intervals */
  gint64 last_wake_us;
  guint activity_today; /* activity records closed on activity_day */
  gint64 activity_day;  /* local midnight of the day they belong to */
  gboolean has_open;    /* an activity record that may still grow */
  LmLedgerRecord open;
  /* A spin-up in the pending records whose Flushed the engine's flush
   * that follows it fills in place: its offset, while pending_gen holds. */
  gboolean has_held;
  gsize held_offset, held_size;
  guint64 held_gen;
  guint held_timer;
} DiskDay;

static void
disk_day_free (gpointer data)
{
  DiskDay *d = data;

  g_clear_handle_id (&d->held_timer, g_source_remove);
  g_free (d);
}

struct _LmLedger
{
  char *path;
  LmExportedLaptopMode *skeleton; /* not owned */
  gulong handler;
  char *state_disk;
  gboolean defer;
  guint max_wait_s;
  guint timer_id;
  GByteArray *pending; /* encoded records not yet in the file */
  guint n_pending;
  gsize file_size;
  gint64 oldest_us; /* of the file's records; G_MAXINT64 when none */
  gint64 start_us;  /* when this ledger started: the first interval's start */
  gint64 day_start_us;
  GHashTable *days;             /* disk → DiskDay */
  guint64 pending_gen;          /* counts each time the pending records are written */
  gboolean expect_flush;        /* the user-space engine runs: flushes are reported */
  gboolean holding;             /* the record being appended waits for its flush */
  gboolean batching;            /* activity: written with the next record, not alone */
  LmLedgerDrainFunc drain_func; /* collects the kernel's activity first */
  gpointer drain_data;
  gboolean draining;
};

/* --- today's summary --------------------------------------------------------- */

static gint64
local_midnight_us (gint64 now_us)
{
  g_autoptr (GDateTime) now = g_date_time_new_from_unix_local (now_us / G_USEC_PER_SEC);
  g_autoptr (GDateTime) midnight
      = g_date_time_new_local (g_date_time_get_year (now), g_date_time_get_month (now),
                               g_date_time_get_day_of_month (now), 0, 0, 0);
  return g_date_time_to_unix (midnight) * G_USEC_PER_SEC;
}

static DiskDay *
day_of (LmLedger *self, const char *disk)
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
static void
roll_day (LmLedger *self, gint64 now_us)
{
  gint64 midnight = local_midnight_us (now_us);
  GHashTableIter iter;
  DiskDay *d;

  if (midnight == self->day_start_us)
    return;
  self->day_start_us = midnight;
  g_hash_table_iter_init (&iter, self->days);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &d))
    d->spinups = 0, d->asleep_us = 0;
}

static void
count_record (LmLedger *self, const LmLedgerRecord *r)
{
  DiskDay *d = day_of (self, r->disk);

  if (r->kind == LM_LEDGER_SPINUP || r->kind == LM_LEDGER_AWAKE)
    d->last_wake_us = MAX (d->last_wake_us, r->time_us);
  if (r->kind == LM_LEDGER_SPINUP && r->time_us >= self->day_start_us)
    d->spinups++;
  if (r->kind == LM_LEDGER_ASLEEP && r->end_us > self->day_start_us)
    d->asleep_us += r->end_us - MAX (r->time_us, self->day_start_us);
}

GVariant *
lm_ledger_summary (LmLedger *self)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a{sa{sv}}"));
  gint64 now = g_get_real_time ();
  GHashTableIter iter;
  const char *disk;
  DiskDay *d;

  roll_day (self, now);
  g_hash_table_iter_init (&iter, self->days);
  while (g_hash_table_iter_next (&iter, (gpointer *) &disk, (gpointer *) &d))
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
      g_autofree char *name = g_utf8_make_valid (disk, -1);
      g_variant_builder_add (&b, "{s@a{sv}}", name, g_variant_builder_end (&e));
    }
  return g_variant_builder_end (&b);
}

static void
publish (LmLedger *self)
{
  if (self->skeleton != NULL)
    lm_exported_laptop_mode_set_ledger_summary (self->skeleton, lm_ledger_summary (self));
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

  if (!g_file_get_contents (self->path, &contents, &length, &read_error)
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
  self->oldest_us = G_MAXINT64;
  for (guint i = first; i < c.keep->len; i++)
    {
      gsize offset = g_array_index (c.keep, gsize, 2 * i);
      gsize size = g_array_index (c.keep, gsize, 2 * i + 1);
      LmLedgerRecord r;

      lm_ledger_record_decode (all->data + offset, size, &r);
      self->oldest_us = MIN (self->oldest_us, r.end_us);
      g_byte_array_append (out, all->data + offset, size);
    }
  g_array_unref (c.keep);
  if (!lm_io_write_atomic (self->path, (const char *) out->data, out->len, 0600, error))
    return FALSE;
  g_debug ("Ledger compacted to %u bytes (%u records dropped)", out->len, first);
  self->file_size = out->len;
  return TRUE;
}

static gboolean
append (LmLedger *self, const guint8 *data, gsize length, GError **error)
{
  int fd = open (self->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
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
  count_record (self, r);
}

static void
load (LmLedger *self)
{
  g_autofree char *contents = NULL;
  gsize length = 0, skipped = 0;
  g_autoptr (GError) error = NULL;

  if (!g_file_get_contents (self->path, &contents, &length, &error))
    {
      if (!g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        g_warning ("Cannot read the ledger: %s", error->message);
      return;
    }
  self->file_size = length;
  guint n = lm_ledger_parse ((const guint8 *) contents, length, load_one, self, &skipped);
  g_message ("Ledger %s: %u records, %" G_GSIZE_FORMAT " bytes skipped", self->path, n, skipped);
  /* Rewrite now rather than leave a torn tail in front of new records. */
  if (skipped > 0 && !compact (self, NULL, 0, &error))
    g_warning ("%s", error->message);
}

/* --- pending records ----------------------------------------------------------- */

static void close_intervals (LmLedger *self);
static void close_activity (LmLedger *self, gboolean all);

static void
drain (LmLedger *self)
{
  /* The drain hands records back through lm_ledger_note_activity(), which
   * may flush: not again from there. */
  if (self->drain_func == NULL || self->draining)
    return;
  self->draining = TRUE;
  self->drain_func (self->drain_data);
  self->draining = FALSE;
}

gboolean
lm_ledger_flush (LmLedger *self, gboolean closing, GError **error)
{
  gboolean ok;

  drain (self);
  close_activity (self, closing);
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
      close_intervals (self);
    }
  g_clear_handle_id (&self->timer_id, g_source_remove);
  if (self->n_pending == 0)
    return TRUE;
  if (self->file_size + self->pending->len > LM_LEDGER_MAX_BYTES
      || self->oldest_us < g_get_real_time () - LM_LEDGER_MAX_AGE_US)
    ok = compact (self, self->pending->data, self->pending->len, error);
  else
    ok = append (self, self->pending->data, self->pending->len, error);
  if (!ok)
    return FALSE;
  g_debug ("Ledger: wrote %u records", self->n_pending);
  g_byte_array_set_size (self->pending, 0);
  self->n_pending = 0;
  self->pending_gen++;
  return TRUE;
}

static void
flush_or_warn (LmLedger *self, gboolean closing)
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
  g_debug ("Ledger: records waited MaxLostWork, writing them");
  flush_or_warn (self, FALSE);
  return G_SOURCE_REMOVE;
}

static void append_counted (LmLedger *self, const LmLedgerRecord *r);

void
lm_ledger_append (LmLedger *self, const LmLedgerRecord *r)
{
  roll_day (self, g_get_real_time ());
  count_record (self, r);
  append_counted (self, r);
}

/* @r was counted in today's summary already. */
static void
append_counted (LmLedger *self, const LmLedgerRecord *r)
{
  self->oldest_us = MIN (self->oldest_us, r->end_us); /* the file's, once written */
  lm_ledger_record_encode (r, self->pending);
  self->n_pending++;
  if ((!self->holding && !self->batching && (!self->defer || self->state_disk == NULL))
      || self->n_pending >= LM_LEDGER_MAX_PENDING)
    flush_or_warn (self, FALSE);
  else if (self->timer_id == 0)
    self->timer_id = g_timeout_add_seconds (MAX (1, self->max_wait_s), on_timer, self);
  if (self->n_pending >= LM_LEDGER_MAX_PENDING)
    {
      /* The file cannot be written (the flush above warned why): keep
       * memory bounded by dropping what waits, rather than the daemon. */
      g_warning ("Ledger: dropping %u records that could not be written", self->n_pending);
      g_byte_array_set_size (self->pending, 0);
      self->n_pending = 0;
      self->pending_gen++;
    }
}

guint
lm_ledger_pending (LmLedger *self)
{
  return self->n_pending;
}

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
  self->batching = TRUE;
  append_counted (self, &d->open);
  self->batching = FALSE;
}

/* Open records that no later run can join go to the pending records; all
 * of them when @all (a stop), and those of an earlier day. */
static void
close_activity (LmLedger *self, gboolean all)
{
  gint64 now = g_get_real_time ();
  GHashTableIter iter;
  DiskDay *d;

  roll_day (self, now);
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
  roll_day (self, g_get_real_time ());
  d = day_of (self, a->disk);
  /* The budget is per local day of the run's start. */
  gint64 midnight = local_midnight_us (a->start_us);
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
                              .dirtied = a->dirtied };
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
  if (write && (self->state_disk == NULL || g_strcmp0 (disk, self->state_disk) == 0))
    flush_or_warn (self, FALSE);
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
        memcpy (self->pending->data + d->held_offset, again->data, again->len);
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

static void
close_intervals (LmLedger *self)
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
lm_ledger_note_power (const char *disk, gboolean asleep, gint64 time_us, gpointer user_data)
{
  LmLedger *self = user_data;
  DiskDay *d = day_of (self, disk);
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
    flush_or_warn (self, FALSE); /* it spins anyway: write what waits */
  publish (self);
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
  set_string (r.path, sizeof r.path, s->path);
  DiskDay *d = day_of (self, s->disk);
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
    flush_or_warn (self, FALSE);
  publish (self);
}

/* --- reading ----------------------------------------------------------------- */

typedef struct
{
  gint64 since, until;
  guint max, count;
  GVariantBuilder *b;
} Query;

static void
query_one (const LmLedgerRecord *r, gsize offset, gsize size, gpointer user_data)
{
  Query *q = user_data;

  if (q->count >= q->max || r->end_us < q->since || r->time_us > q->until)
    return;
  g_variant_builder_add_value (q->b, lm_ledger_record_to_variant (r));
  q->count++;
}

GVariant *
lm_ledger_query (LmLedger *self, gint64 since_us, gint64 until_us, guint max)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));
  g_autofree char *contents = NULL;
  gsize length = 0;
  Query q = { since_us, until_us, max, 0, &b };

  GHashTableIter iter;
  DiskDay *d;

  drain (self);                            /* awake anyway: show the kernel's activity up to now */
  if (self->n_pending > 0 && !self->defer) /* a held spin-up waits on */
    flush_or_warn (self, FALSE);
  if (g_file_get_contents (self->path, &contents, &length, NULL))
    lm_ledger_parse ((const guint8 *) contents, length, query_one, &q, NULL);
  lm_ledger_parse (self->pending->data, self->pending->len, query_one, &q, NULL);
  g_hash_table_iter_init (&iter, self->days);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &d))
    {
      if (d->has_open)
        query_one (&d->open, 0, 0, &q);
    }
  return g_variant_builder_end (&b);
}

static void
get_ledger_allowed (GDBusMethodInvocation *invocation, gpointer user_data)
{
  LmLedger *self = user_data;
  guint64 since, until;

  g_variant_get (g_dbus_method_invocation_get_parameters (invocation), "(tt)", &since, &until);
  GVariant *records
      = lm_ledger_query (self, (gint64) MIN (since, (guint64) G_MAXINT64),
                         (gint64) MIN (until, (guint64) G_MAXINT64), LM_LEDGER_MAX_QUERY);
  g_dbus_method_invocation_return_value (invocation, g_variant_new_tuple (&records, 1));
}

static gboolean
handle_get_ledger (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, guint64 since,
                   guint64 until, LmLedger *self)
{
  lm_auth_check (invocation, get_ledger_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* --- life cycle ----------------------------------------------------------------- */

LmLedger *
lm_ledger_new (const char *path, LmExportedLaptopMode *skeleton)
{
  LmLedger *self = g_new0 (LmLedger, 1);

  self->path = g_strdup (path);
  self->skeleton = skeleton;
  self->pending = g_byte_array_new ();
  self->oldest_us = G_MAXINT64;
  self->start_us = g_get_real_time ();
  self->day_start_us = local_midnight_us (self->start_us);
  self->days = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, disk_day_free);
  load (self);
  if (skeleton != NULL)
    self->handler
        = g_signal_connect (skeleton, "handle-get-ledger", G_CALLBACK (handle_get_ledger), self);
  publish (self);
  return self;
}

void
lm_ledger_set_state_disk (LmLedger *self, const char *disk)
{
  g_free (self->state_disk);
  self->state_disk = g_strdup (disk);
  g_message ("Ledger %s waits for disk %s to wake while laptop mode is on", self->path,
             disk != NULL ? disk : "(none: written at once)");
}

const char *
lm_ledger_get_state_disk (LmLedger *self)
{
  return self->state_disk;
}

void
lm_ledger_set_deferring (LmLedger *self, gboolean defer, guint max_wait_s)
{
  self->defer = defer;
  self->max_wait_s = max_wait_s;
  if (!defer)
    flush_or_warn (self, FALSE);
}

void
lm_ledger_free (LmLedger *self)
{
  if (self == NULL)
    return;
  self->drain_func = NULL; /* its owner may be gone already */
  flush_or_warn (self, FALSE);
  if (self->handler != 0)
    g_signal_handler_disconnect (self->skeleton, self->handler);
  g_clear_handle_id (&self->timer_id, g_source_remove);
  g_byte_array_unref (self->pending);
  g_hash_table_unref (self->days);
  g_free (self->state_disk);
  g_free (self->path);
  g_free (self);
}

/* The ledger in the state directory, waiting for the disk under it. */
LmLedger *
lm_ledger_new_in_state_dir (LmExportedLaptopMode *skeleton)
{
  g_autofree char *path = g_build_filename (lm_state_dir (), "ledger", NULL);
  LmLedger *ledger = lm_ledger_new (path, skeleton);
  g_autofree char *disk = NULL;
  struct stat st;

  g_mkdir_with_parents (lm_state_dir (), 0755);
  /* Major 0: no block device under it (tmpfs), so nothing to wake. */
  if (stat (lm_state_dir (), &st) == 0 && major (st.st_dev) != 0)
    disk = lm_blockdev_disk_for_devnum (major (st.st_dev), minor (st.st_dev));
  lm_ledger_set_state_disk (ledger, disk);
  return ledger;
}
