/* lm-journal-recovery.c: the one recovery registry and its loop; knows
 * no part's insides (each says how it is put back), and never runs but
 * at start-up, before anything is applied. */
#include "lm-journal-recovery.h"

typedef struct
{
  const LmJournalPart *part;
  const char *name;
  LmJournalRecoverFunc recover;
  gconstpointer owner;
} LmRecoverable;

struct _LmJournalRecovery
{
  GArray *parts; /* of LmRecoverable, in the order added */
};

LmJournalRecovery *
lm_journal_recovery_new (void)
{
  LmJournalRecovery *self = g_new0 (LmJournalRecovery, 1);

  self->parts = g_array_new (FALSE, TRUE, sizeof (LmRecoverable));
  return self;
}

void
lm_journal_recovery_free (LmJournalRecovery *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->parts);
  g_free (self);
}

void
lm_journal_recovery_add (LmJournalRecovery *self, const LmJournalPart *part, const char *name,
                         LmJournalRecoverFunc recover, gconstpointer owner)
{
  LmRecoverable r = { part, name, recover, owner };

  for (guint i = 0; i < self->parts->len; i++)
    if (g_array_index (self->parts, LmRecoverable, i).part == part)
      return;
  g_array_append_val (self->parts, r);
}

gboolean
lm_journal_recovery_saved (LmJournalRecovery *self, LmState *state)
{
  for (guint i = 0; i < self->parts->len; i++)
    if (lm_journal_saved (state, g_array_index (self->parts, LmRecoverable, i).part))
      return TRUE;
  return FALSE;
}

void
lm_journal_recovery_run (LmJournalRecovery *self, LmState *state, gpointer context)
{
  if (lm_journal_recovery_saved (self, state))
    g_message ("The previous run did not restore the system; restoring the saved values from %s",
               lm_state_get_path (state));
  for (guint i = self->parts->len; i > 0; i--)
    {
      const LmRecoverable *r = &g_array_index (self->parts, LmRecoverable, i - 1);
      g_autoptr (GError) error = NULL;
      gboolean ok;

      if (!lm_journal_saved (state, r->part))
        continue;
      g_message ("Restoring the %s", r->name);
      ok = r->recover != NULL ? r->recover (r->owner, context, &error)
                              : lm_journal_restore (state, r->part, NULL, &error);
      if (!ok)
        g_warning ("%s", error->message);
    }
}
