/* lm-participants.c: the registry of participants (each row declared in
 * its own file) and the loops over it; knows no participant's insides.
 * Remounts come first: they are the likelier to fail (a filesystem refuses
 * the option, EBUSY) and roll themselves back, so a failure leaves the
 * tunables as they were; disks come last and never keep laptop mode off. */
#include "lm-participants.h"

/* The daemon's own, in the order they apply. */
static const LmParticipant *const own[] = {
  &lm_participant_remounts,
  &lm_participant_tunables,
  &lm_participant_disks,
  &lm_participant_hwpower,
};

static GPtrArray *added; /* of const LmParticipant *, not owned */

void
lm_participants_add (const LmParticipant *participant)
{
  if (added == NULL)
    added = g_ptr_array_new ();
  g_ptr_array_add (added, (gpointer) participant);
}

const LmParticipant *
lm_participants_get (guint index)
{
  if (index < G_N_ELEMENTS (own))
    return own[index];
  index -= G_N_ELEMENTS (own);
  return added != NULL && index < added->len ? g_ptr_array_index (added, index) : NULL;
}

static guint
count (void)
{
  return G_N_ELEMENTS (own) + (added != NULL ? added->len : 0);
}

gboolean
lm_participants_apply (const LmSystem *sys, const LmSettings *settings, LmEngine engine,
                       const LmSettings *previous, LmEngine previous_engine, GError **error)
{
  for (guint i = 0; i < count (); i++)
    {
      const LmParticipant *row = lm_participants_get (i);
      g_autoptr (GError) local_error = NULL;

      if (row->apply (sys, settings, engine, &local_error))
        continue;
      if (!row->must_succeed)
        {
          g_warning ("%s: %s", row->name, local_error->message);
          continue;
        }
      /* This one rolled itself back; undo the ones before it. */
      for (guint j = i; j > 0; j--)
        {
          const LmParticipant *p = lm_participants_get (j - 1);
          g_autoptr (GError) undo_error = NULL;
          gboolean undone = previous != NULL
                                ? p->apply (sys, previous, previous_engine, &undo_error)
                                : p->restore (sys, &undo_error);
          if (!undone)
            g_warning ("Could not undo the %s: %s", p->name, undo_error->message);
        }
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return TRUE;
}

gboolean
lm_participants_restore (const LmSystem *sys, GError **error)
{
  g_autoptr (GError) first = NULL;

  for (guint i = count (); i > 0; i--)
    {
      const LmParticipant *p = lm_participants_get (i - 1);
      g_autoptr (GError) local_error = NULL;

      if (p->restore (sys, &local_error))
        continue;
      if (p->must_succeed && first == NULL)
        first = g_steal_pointer (&local_error);
      else
        g_warning ("%s", local_error->message);
    }
  if (first != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&first));
      return FALSE;
    }
  return TRUE;
}

gboolean
lm_participants_saved (const LmSystem *sys)
{
  for (guint i = 0; i < count (); i++)
    if (lm_journal_saved (sys->state, lm_participants_get (i)->journal))
      return TRUE;
  return FALSE;
}

static gboolean
recover_row (gconstpointer owner, gpointer context, GError **error)
{
  const LmParticipant *row = owner;
  return row->restore (context, error);
}

void
lm_participants_add_recovery (LmJournalRecovery *recovery)
{
  for (guint i = 0; i < count (); i++)
    {
      const LmParticipant *row = lm_participants_get (i);
      lm_journal_recovery_add (recovery, row->journal, row->name, recover_row, row);
    }
}
