/* lm-ledger-page.c: reading the ledger: pages of GetLedgerPage and
 * GetLedger served from the in-memory index (the records written and those
 * that wait), never from the file. */
#include "config.h"

#include <string.h>

#include "lm-ledger-private.h"

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
      lm_ledger_drain (self);
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
