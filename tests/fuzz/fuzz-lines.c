/* fuzz-lines.c: the line reassembler (lm-lines.c). The first bytes choose
 * the cap and how the rest is cut into reads; the lines that come out must
 * be the same however the stream was cut, and never longer than the cap. */
#include "lm-fuzz.h"
#include "lm-lines.h"

static void
collect (char *line, gsize length, gpointer user_data)
{
  GPtrArray *out = user_data;

  LM_FUZZ_CHECK (strlen (line) <= length); /* a NUL in the stream may come first */
  LM_FUZZ_CHECK (memchr (line, '\n', length) == NULL);
  g_ptr_array_add (out, g_bytes_new (line, length));
}

static GPtrArray *
run (const uint8_t *data, size_t size, gsize max, const uint8_t *cuts, gsize ncuts)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  LmLines lines;
  gsize done = 0, c = 0;

  lm_lines_init (&lines, max, collect, out);
  while (done < size)
    {
      gsize n = ncuts > 0 ? (gsize) cuts[c++ % ncuts] + 1 : size;
      n = MIN (n, size - done);
      /* Each read in a buffer of its own size: no reading past a piece. */
      g_autofree char *piece = g_memdup2 (data + done, n);
      lm_lines_feed (&lines, piece, n);
      done += n;
    }
  lm_lines_clear (&lines);
  return out;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 2)
    return 0;
  gsize max = data[0] % 64;
  gsize ncuts = MIN ((gsize) data[1] % 8, size - 2);
  const uint8_t *cuts = data + 2;
  const uint8_t *stream = data + 2 + ncuts;
  gsize length = size - 2 - ncuts;

  g_autoptr (GPtrArray) whole = run (stream, length, max, NULL, 0);
  g_autoptr (GPtrArray) pieces = run (stream, length, max, cuts, ncuts);

  LM_FUZZ_CHECK (whole->len == pieces->len);
  for (guint i = 0; i < whole->len; i++)
    {
      LM_FUZZ_CHECK (g_bytes_equal (whole->pdata[i], pieces->pdata[i]));
      LM_FUZZ_CHECK (g_bytes_get_size (whole->pdata[i]) <= max);
    }

  /* The model: every complete line of at most @max bytes, in order. */
  guint expected = 0;
  const uint8_t *p = stream, *end = stream + length;
  while (p < end)
    {
      const uint8_t *nl = memchr (p, '\n', (gsize) (end - p));
      if (nl == NULL)
        break;
      if ((gsize) (nl - p) <= max)
        {
          LM_FUZZ_CHECK (expected < whole->len);
          gsize n;
          const void *got = g_bytes_get_data (whole->pdata[expected], &n);
          LM_FUZZ_CHECK (n == (gsize) (nl - p) && (n == 0 || memcmp (got, p, n) == 0));
          expected++;
        }
      p = nl + 1;
    }
  LM_FUZZ_CHECK (expected == whole->len);
  return 0;
}
