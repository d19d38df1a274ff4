/* lm-ledger.c: the spin-up ledger file and today's summary (its D-Bus
 * members are lm-ledger-dbus.c's). Records are
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
      g_autofree char *name = g_utf8_make_valid (disk, -1);
      g_variant_builder_add (&b, "{s@a{sv}}", name, g_variant_builder_end (&e));
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

static gboolean
append (LmLedger *self, const guint8 *data, gsize length, GError **error)
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
  g_debug ("Ledger: records waited MaxLostWork, writing them");
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
  /* An excluded state disk is not kept asleep (nor watched: its wake-ups
   * are never heard of), so there is nothing to wait for. */
  gboolean wait_for_disk
      = self->defer && self->state_disk != NULL && !lm_excluded_has (self->state_disk);
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
}

guint
lm_ledger_pending (LmLedger *self)
{
  return self->n_pending;
}

/* --- reading ----------------------------------------------------------------- */

static void
page_one (const guint8 *data, gsize size, gpointer user_data)
{
  g_byte_array_append (user_data, data, size);
}

static int
compare_disk (gconstpointer a, gconstpointer b)
{
  return strcmp (((const LmLedgerRecord *) a)->disk, ((const LmLedgerRecord *) b)->disk);
}

gboolean
lm_ledger_check_cursor (LmLedger *self, const char *cursor, GError **error)
{
  guint64 seq;

  return lm_ledger_index_parse_cursor (self->index, cursor, &seq, error);
}

GBytes *
lm_ledger_page (LmLedger *self, gint64 since_us, gint64 until_us, const char *cursor, guint limit,
                char **next_cursor, guint *count, GError **error)
{
  g_autoptr (GByteArray) b = g_byte_array_new ();
  g_autoptr (GArray) open = g_array_new (FALSE, FALSE, sizeof (LmLedgerRecord));
  GHashTableIter iter;
  DiskDay *d;
  guint64 seq, next;

  if (!lm_ledger_index_parse_cursor (self->index, cursor, &seq, error))
    return NULL;
  if (cursor[0] == '\0')
    {
      /* A first page: show the kernel's activity up to now (awake anyway). */
      drain (self);
      if (self->n_pending > 0 && !self->defer) /* a held spin-up waits on */
        lm_ledger_flush_or_warn (self, FALSE);
      /* The flush may have rewritten the file, and so the epoch. */
      if (!lm_ledger_index_parse_cursor (self->index, cursor, &seq, error))
        return NULL;
    }
  g_hash_table_iter_init (&iter, self->days);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &d))
    {
      if (d->has_open)
        g_array_append_val (open, d->open);
    }
  /* Past the indexed records, in an order that stays from page to page. */
  g_array_sort (open, compare_disk);
  *count
      = lm_ledger_index_page (self->index, since_us, until_us, seq, limit,
                              (const LmLedgerRecord *) open->data, open->len, page_one, b, &next);
  *next_cursor = next == 0 ? g_strdup ("") : lm_ledger_index_format_cursor (self->index, next);
  return g_byte_array_free_to_bytes (g_steal_pointer (&b));
}

static void
to_variant (const LmLedgerRecord *r, gsize offset, gsize size, gpointer user_data)
{
  g_variant_builder_add_value (user_data, lm_ledger_record_to_variant (r));
}

GVariant *
lm_ledger_records_to_variant (GBytes *records)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));
  gsize length = 0;
  const guint8 *data = g_bytes_get_data (records, &length);

  lm_ledger_parse (data, length, to_variant, &b, NULL);
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

GVariant *
lm_ledger_query (LmLedger *self, gint64 since_us, gint64 until_us, guint max)
{
  g_autofree char *next = NULL;
  guint count;
  g_autoptr (GBytes) records
      = lm_ledger_page (self, since_us, until_us, "", max, &next, &count, NULL);

  return lm_ledger_records_to_variant (records);
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

/* The ledger in the state directory, waiting for the disk under it. */
LmLedger *
lm_ledger_new_in_state_dir (void)
{
  g_autofree char *path = g_build_filename (lm_state_dir (), "ledger", NULL);
  LmLedger *ledger = lm_ledger_new (path);
  g_autofree char *disk = NULL;
  struct stat st;

  g_mkdir_with_parents (lm_state_dir (), 0755);
  /* Major 0: no block device under it (tmpfs), so nothing to wake. */
  if (stat (lm_state_dir (), &st) == 0 && major (st.st_dev) != 0)
    disk = lm_blockdev_disk_for_devnum (major (st.st_dev), minor (st.st_dev));
  lm_ledger_set_state_disk (ledger, disk);
  return ledger;
}
