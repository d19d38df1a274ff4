/* lm-journal.c: the restore journal over the state file.
 * Group "<part>" holds the originals, "<part>Applied" what was written;
 * values are %XX-encoded where the key file could not hold them as is. */
#include "lm-journal-private.h"

#include "lm-error.h"

#define APPLIED_SUFFIX "Applied"

/* Keys are lm-state's to encode (any bytes); values here: a key file
 * holds only UTF-8 and erodes control bytes such as a trailing CR. */
static gboolean
value_char_plain (guchar c)
{
  return c >= 0x20 && c < 0x7f && c != '%';
}

static char *
encode (const char *text, gboolean (*plain) (guchar))
{
  GString *out = g_string_sized_new (strlen (text));

  for (const guchar *p = (const guchar *) text; *p != '\0'; p++)
    {
      if (plain (*p))
        g_string_append_c (out, (char) *p);
      else
        g_string_append_printf (out, "%%%02X", *p);
    }
  return g_string_free (out, FALSE);
}

/* Lenient: a '%' not followed by two hex digits (a hand-edited file) stays. */
static char *
decode (const char *text)
{
  GString *out = g_string_sized_new (strlen (text));

  for (const char *p = text; *p != '\0'; p++)
    {
      if (p[0] == '%' && g_ascii_isxdigit (p[1]) && g_ascii_isxdigit (p[2]))
        {
          char c = (char) (g_ascii_xdigit_value (p[1]) << 4 | g_ascii_xdigit_value (p[2]));
          if (c != '\0')
            {
              g_string_append_c (out, c);
              p += 2;
              continue;
            }
        }
      g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

static char *
applied_group (const char *part)
{
  return g_strconcat (part, APPLIED_SUFFIX, NULL);
}

static char *
get (LmState *state, const char *group, const char *key)
{
  g_autofree char *v = lm_state_get (state, group, key);

  return v != NULL ? decode (v) : NULL;
}

static void
set (LmState *state, const char *group, const char *key, const char *value)
{
  g_autofree char *v = encode (value, value_char_plain);

  lm_state_set (state, group, key, v);
}

void
lm_journal_remember (LmState *state, const char *part, const char *key, const char *original)
{
  g_autofree char *known = get (state, part, key);

  /* The first original is the true one: a second apply sees our own value. */
  if (known == NULL)
    set (state, part, key, original);
}

void
lm_journal_mark (LmState *state, const char *part, const char *key, const char *applied)
{
  g_autofree char *group = applied_group (part);
  set (state, group, key, applied);
}

char *
lm_journal_original (LmState *state, const char *part, const char *key)
{
  return get (state, part, key);
}

char *
lm_journal_applied (LmState *state, const char *part, const char *key)
{
  g_autofree char *group = applied_group (part);
  return get (state, group, key);
}

void
lm_journal_forget (LmState *state, const char *part, const char *key)
{
  g_autofree char *group = applied_group (part);

  lm_state_remove (state, part, key);
  lm_state_remove (state, group, key);
}

char **
lm_journal_pending (LmState *state, const char *part)
{
  return lm_state_get_keys (state, part);
}

gboolean
lm_journal_has_pending (LmState *state, const char *part)
{
  g_auto (GStrv) keys = lm_state_get_keys (state, part);
  return keys[0] != NULL;
}

LmJournalVerdict
lm_journal_verdict_known (gboolean original_known, const char *original, gboolean applied_known,
                          const char *applied, const char *current)
{
  if (original_known && g_strcmp0 (current, original) == 0)
    return LM_JOURNAL_AS_ORIGINAL;
  if (applied_known && g_strcmp0 (current, applied) != 0)
    return LM_JOURNAL_CHANGED;
  return LM_JOURNAL_OURS;
}

LmJournalVerdict
lm_journal_verdict (const char *original, const char *applied, const char *current)
{
  return lm_journal_verdict_known (original != NULL, original, applied != NULL, applied, current);
}

LmJournalVerdict
lm_journal_check (LmState *state, const char *part, const char *key, const char *current)
{
  g_autofree char *original = lm_journal_original (state, part, key);
  g_autofree char *applied = lm_journal_applied (state, part, key);

  return lm_journal_verdict (original, applied, current);
}

struct _LmJournalTx
{
  LmState *state;
  char *before; /* the in-memory state at begin */
  gboolean committed;
};

LmJournalTx *
lm_journal_begin (LmState *state)
{
  LmJournalTx *tx = g_new0 (LmJournalTx, 1);

  tx->state = state;
  tx->before = lm_state_snapshot (state);
  return tx;
}

/* Durable, or nothing: a failed save leaves memory as at begin. */
gboolean
lm_journal_commit (LmJournalTx *tx, GError **error)
{
  if (lm_state_save (tx->state, error))
    {
      tx->committed = TRUE;
      return TRUE;
    }
  lm_state_revert (tx->state, tx->before);
  return FALSE;
}

/* The system refused the change: forget what it recorded, on disk too. */
void
lm_journal_undo (LmJournalTx *tx)
{
  g_autoptr (GError) error = NULL;

  lm_state_revert (tx->state, tx->before);
  tx->committed = TRUE; /* memory and disk agree again */
  if (!lm_state_save (tx->state, &error))
    g_warning ("Could not rewrite %s after a failed change: %s", lm_state_get_path (tx->state),
               error->message);
}

void
lm_journal_tx_free (LmJournalTx *tx)
{
  if (tx == NULL)
    return;
  /* Never committed: what it recorded was never on disk, so drop it. */
  if (!tx->committed)
    lm_state_revert (tx->state, tx->before);
  g_free (tx->before);
  g_free (tx);
}
