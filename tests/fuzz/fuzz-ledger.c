/* fuzz-ledger.c: the ledger file parser (lm-ledger-record.c). Every record
 * it accepts must encode back to the very bytes it came from, and the
 * records plus the skipped bytes must account for the whole input. */
#include "lm-fuzz.h"
#include "lm-ledger-record.h"

typedef struct
{
  const uint8_t *data;
  gsize covered;
  GByteArray *again;
} Check;

static void
check_one (const LmLedgerRecord *r, gsize offset, gsize size, gpointer user_data)
{
  Check *c = user_data;
  g_autoptr (GByteArray) out = g_byte_array_new ();

  lm_ledger_record_encode (r, out);
  LM_FUZZ_CHECK (out->len == size);
  LM_FUZZ_CHECK (memcmp (out->data, c->data + offset, size) == 0);
  LM_FUZZ_CHECK (r->end_us >= r->time_us && r->disk[0] != '\0');
  g_variant_unref (g_variant_ref_sink (lm_ledger_record_to_variant (r)));
  g_byte_array_append (c->again, out->data, out->len);
  c->covered += size;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* A copy of exactly @size bytes, so AddressSanitizer sees overreads. */
  g_autofree uint8_t *copy = g_memdup2 (data, size);
  g_autoptr (GByteArray) again = g_byte_array_new ();
  Check c = { copy, 0, again };
  gsize skipped = 0, skipped_again = 1;

  guint n = lm_ledger_parse (copy, size, check_one, &c, &skipped);
  LM_FUZZ_CHECK (c.covered + skipped == size);
  LM_FUZZ_CHECK (lm_ledger_parse (again->data, again->len, NULL, NULL, &skipped_again) == n);
  LM_FUZZ_CHECK (skipped_again == 0);
  return 0;
}
