/* lm-ledger-index.c: the ledger's bytes and a sorted table of its records,
 * kept in memory so that a page is a binary search, never a re-read or a
 * re-parse of the file. Pure: never does I/O, never touches the bus. */
#include "config.h"

#include "lm-ledger-index.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lm-error.h"
#include "lm-escape.h"

typedef struct
{
  gint64 time_us, end_us;
  guint64 seq;
  guint32 offset, size; /* the bytes stay far below 4 GiB (LM_LEDGER_MAX_BYTES) */
} Entry;

struct _LmLedgerIndex
{
  GByteArray *bytes; /* the file's records, then those waiting to be written */
  GArray *entries;   /* Entry, by offset and by seq alike */
  guint64 next_seq;  /* of the next record added; never 0 (0 means "the end") */
  guint32 epoch;
};

LmLedgerIndex *
lm_ledger_index_new (void)
{
  LmLedgerIndex *self = g_new0 (LmLedgerIndex, 1);

  self->bytes = g_byte_array_new ();
  self->entries = g_array_new (FALSE, FALSE, sizeof (Entry));
  self->next_seq = 1;
  /* A cursor from an earlier daemon is stale, not silently wrong. */
  self->epoch = g_random_int ();
  return self;
}

void
lm_ledger_index_free (LmLedgerIndex *self)
{
  if (self == NULL)
    return;
  g_byte_array_unref (self->bytes);
  g_array_unref (self->entries);
  g_free (self);
}

typedef struct
{
  LmLedgerIndex *self;
  gsize base;
} Adding;

static void
add_one (const LmLedgerRecord *r, gsize offset, gsize size, gpointer user_data)
{
  Adding *a = user_data;
  Entry e = { r->time_us, r->end_us, a->self->next_seq++, (guint32) (a->base + offset),
              (guint32) size };

  g_array_append_val (a->self->entries, e);
}

void
lm_ledger_index_add (LmLedgerIndex *self, const guint8 *data, gsize length)
{
  Adding a = { self, self->bytes->len };

  g_byte_array_append (self->bytes, data, length);
  lm_ledger_parse (data, length, add_one, &a, NULL);
}

void
lm_ledger_index_truncate (LmLedgerIndex *self, gsize length)
{
  guint n = self->entries->len;

  if (length >= self->bytes->len)
    return;
  while (n > 0 && g_array_index (self->entries, Entry, n - 1).offset >= length)
    n--;
  g_array_set_size (self->entries, n);
  g_byte_array_set_size (self->bytes, length);
}

void
lm_ledger_index_patch (LmLedgerIndex *self, gsize offset, const guint8 *data, gsize length)
{
  if (offset > self->bytes->len || length > self->bytes->len - offset)
    return;
  memcpy (self->bytes->data + offset, data, length);
}

/* The entry at byte @offset, NULL when no record starts there. */
static const Entry *
entry_at_offset (LmLedgerIndex *self, gsize offset)
{
  guint lo = 0, hi = self->entries->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      const Entry *e = &g_array_index (self->entries, Entry, mid);
      if (e->offset == offset)
        return e;
      if (e->offset < offset)
        lo = mid + 1;
      else
        hi = mid;
    }
  return NULL;
}

void
lm_ledger_index_replace (LmLedgerIndex *self, const guint8 *data, gsize length, const guint8 *old,
                         gsize old_length, const gsize *kept_offsets, guint n_kept)
{
  gboolean same = old_length == self->bytes->len
                  && (old_length == 0 || memcmp (old, self->bytes->data, old_length) == 0);
  g_autoptr (GArray) seqs = g_array_sized_new (FALSE, FALSE, sizeof (guint64), n_kept);

  for (guint i = 0; same && i < n_kept; i++)
    {
      const Entry *e = entry_at_offset (self, kept_offsets[i]);
      if (e == NULL)
        same = FALSE;
      else
        g_array_append_val (seqs, e->seq);
    }
  g_byte_array_set_size (self->bytes, 0);
  g_array_set_size (self->entries, 0);
  if (!same)
    {
      /* Other bytes than ours (a torn tail dropped at start-up, a file
       * changed behind our back): positions handed out mean nothing now. */
      self->epoch++;
      lm_ledger_index_add (self, data, length);
      return;
    }
  lm_ledger_index_add (self, data, length);
  if (self->entries->len != n_kept)
    {
      self->epoch++;
      return;
    }
  for (guint i = 0; i < n_kept; i++)
    g_array_index (self->entries, Entry, i).seq = g_array_index (seqs, guint64, i);
  /* Sequence numbers only grow: what was added meanwhile keeps its place. */
  self->next_seq -= n_kept;
}

guint
lm_ledger_index_count (LmLedgerIndex *self)
{
  return self->entries->len;
}

gsize
lm_ledger_index_bytes (LmLedgerIndex *self)
{
  return self->bytes->len;
}

/* --- cursors --------------------------------------------------------------- */

char *
lm_ledger_index_format_cursor (LmLedgerIndex *self, guint64 seq)
{
  return g_strdup_printf ("%08x.%" G_GUINT64_FORMAT, self->epoch, seq);
}

gboolean
lm_ledger_index_parse_cursor (LmLedgerIndex *self, const char *cursor, guint64 *seq, GError **error)
{
  gsize n = strnlen (cursor, LM_LEDGER_CURSOR_MAX + 1);
  guint64 epoch = 0, value = 0;
  char epoch_text[9] = { 0 };
  const char *dot;

  if (n == 0)
    {
      *seq = 1;
      return TRUE;
    }
  if (n > LM_LEDGER_CURSOR_MAX)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "cursor: at most %d bytes, the cursor a page returned, or \"\" to start",
                   LM_LEDGER_CURSOR_MAX);
      return FALSE;
    }
  dot = strchr (cursor, '.');
  if (dot != NULL && dot - cursor == 8)
    memcpy (epoch_text, cursor, 8);
  if (dot == NULL || dot - cursor != 8
      || !g_ascii_string_to_unsigned (epoch_text, 16, 0, G_MAXUINT32, &epoch, NULL)
      || !g_ascii_string_to_unsigned (dot + 1, 10, 1, G_MAXUINT64 - 1, &value, NULL))
    {
      g_autofree char *quoted = lm_escape (cursor, n, LM_ESCAPE_DEFAULT);
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "cursor: “%s” is not a cursor GetLedgerPage returned; pass back the last "
                   "page's, or \"\" to start",
                   quoted);
      return FALSE;
    }
  if ((guint32) epoch != self->epoch)
    {
      g_set_error_literal (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                           "cursor: stale, the ledger was rewritten or the daemon restarted since "
                           "that page; start again from \"\"");
      return FALSE;
    }
  *seq = value;
  return TRUE;
}

/* --- pages ----------------------------------------------------------------- */

/* The first entry whose seq is @seq or later. */
static guint
first_from (LmLedgerIndex *self, guint64 seq)
{
  guint lo = 0, hi = self->entries->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (self->entries, Entry, mid).seq < seq)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

guint
lm_ledger_index_page (LmLedgerIndex *self, gint64 since_us, gint64 until_us, guint64 seq,
                      guint limit, const LmLedgerRecord *extra, guint n_extra,
                      LmLedgerIndexFunc func, gpointer user_data, guint64 *next)
{
  guint count = 0;

  *next = 0;
  for (guint i = first_from (self, seq); i < self->entries->len; i++)
    {
      const Entry *e = &g_array_index (self->entries, Entry, i);

      if (e->end_us < since_us || e->time_us > until_us)
        continue;
      if (count == limit)
        {
          *next = e->seq;
          return count;
        }
      func (self->bytes->data + e->offset, e->size, user_data);
      count++;
    }
  /* The records still growing sit just past the indexed ones. */
  guint64 base = self->next_seq;
  for (guint k = seq > base ? (guint) MIN (seq - base, (guint64) n_extra) : 0; k < n_extra; k++)
    {
      if (extra[k].end_us < since_us || extra[k].time_us > until_us)
        continue;
      if (count == limit)
        {
          *next = base + k;
          return count;
        }
      g_autoptr (GByteArray) encoded = g_byte_array_new ();
      lm_ledger_record_encode (&extra[k], encoded);
      func (encoded->data, encoded->len, user_data);
      count++;
    }
  return count;
}
