/* lm-participants.c: the table of participants and the loops over it.
 * Remounts come first: they are the likelier to fail (a filesystem refuses
 * the option, EBUSY) and roll themselves back, so a failure leaves the
 * tunables as they were; disks come last and never keep laptop mode off. */
#include "lm-participants.h"

#include "lm-disks-private.h"
#include "lm-hwpower.h"
#include "lm-remount.h"

typedef struct
{
  const char *name;
  gboolean must_succeed;
  gboolean (*apply) (const LmSystem *sys, const LmSettings *settings, LmEngine engine,
                     GError **error);
  gboolean (*restore) (const LmSystem *sys, GError **error);
  gboolean (*saved) (const LmSystem *sys);
} LmParticipant;

static gboolean
remounts_apply (const LmSystem *sys, const LmSettings *settings, LmEngine engine, GError **error)
{
  return lm_remount_apply (settings, sys->state, error);
}

static gboolean
remounts_restore (const LmSystem *sys, GError **error)
{
  return lm_remount_restore (sys->state, error);
}

static gboolean
remounts_saved (const LmSystem *sys)
{
  return lm_remount_saved (sys->state);
}

static gboolean
tunables_apply (const LmSystem *sys, const LmSettings *settings, LmEngine engine, GError **error)
{
  return lm_tunables_apply (sys->backend, settings, engine, sys->state, error);
}

static gboolean
tunables_restore (const LmSystem *sys, GError **error)
{
  return lm_tunables_restore (sys->state, error);
}

static gboolean
tunables_saved (const LmSystem *sys)
{
  return lm_tunables_saved (sys->state);
}

/* Per disk, best effort: a drive without APM must not keep laptop mode
 * off; failures show in the Disks property. */
static gboolean
disks_apply (const LmSystem *sys, const LmSettings *settings, LmEngine engine, GError **error)
{
  lm_disks_apply (sys->disks, settings);
  return TRUE;
}

/* A drive that refuses forgets APM and its timer at its next power cycle
 * anyway: logged by the caller, not fatal. */
static gboolean
disks_restore (const LmSystem *sys, GError **error)
{
  return lm_disks_restore (sys->disks, error);
}

static gboolean
disks_saved (const LmSystem *sys)
{
  return lm_disks_saved (sys->state);
}

/* SATA link power, runtime PM, NVMe latency tolerance: best effort like the
 * disks (a host that refuses ALPM must not keep laptop mode off); the Disks
 * property shows what sysfs holds now, so it is sent again after. */
static gboolean
hwpower_apply (const LmSystem *sys, const LmSettings *settings, LmEngine engine, GError **error)
{
  gboolean ok = lm_hwpower_apply (settings, sys->state, error);
  if (sys->disks != NULL)
    lm_disks_publish (sys->disks);
  return ok;
}

static gboolean
hwpower_restore (const LmSystem *sys, GError **error)
{
  gboolean ok = lm_hwpower_restore (sys->state, error);
  if (sys->disks != NULL)
    lm_disks_publish (sys->disks);
  return ok;
}

static gboolean
hwpower_saved (const LmSystem *sys)
{
  return lm_hwpower_saved (sys->state);
}

static const LmParticipant participants[] = {
  { "remounts", TRUE, remounts_apply, remounts_restore, remounts_saved },
  { "tunables", TRUE, tunables_apply, tunables_restore, tunables_saved },
  { "disks", FALSE, disks_apply, disks_restore, disks_saved },
  { "hardware power settings", FALSE, hwpower_apply, hwpower_restore, hwpower_saved },
};

gboolean
lm_participants_apply (const LmSystem *sys, const LmSettings *settings, LmEngine engine,
                       const LmSettings *previous, LmEngine previous_engine, GError **error)
{
  for (gsize i = 0; i < G_N_ELEMENTS (participants); i++)
    {
      g_autoptr (GError) local_error = NULL;

      if (participants[i].apply (sys, settings, engine, &local_error))
        continue;
      if (!participants[i].must_succeed)
        {
          g_warning ("%s: %s", participants[i].name, local_error->message);
          continue;
        }
      /* This one rolled itself back; undo the ones before it. */
      for (gsize j = i; j > 0; j--)
        {
          const LmParticipant *p = &participants[j - 1];
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

  for (gsize i = G_N_ELEMENTS (participants); i > 0; i--)
    {
      const LmParticipant *p = &participants[i - 1];
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
  for (gsize i = 0; i < G_N_ELEMENTS (participants); i++)
    if (participants[i].saved (sys))
      return TRUE;
  return FALSE;
}

void
lm_participants_recover (const LmSystem *sys)
{
  if (lm_participants_saved (sys))
    g_message ("The previous run did not restore the system; restoring the saved values from %s",
               lm_state_get_path (sys->state));
  for (gsize i = G_N_ELEMENTS (participants); i > 0; i--)
    {
      const LmParticipant *p = &participants[i - 1];
      g_autoptr (GError) error = NULL;

      if (!p->saved (sys))
        continue;
      g_message ("Restoring the %s", p->name);
      if (!p->restore (sys, &error))
        g_warning ("%s", error->message);
    }
}
