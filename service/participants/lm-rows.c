/* lm-rows.c: the participant rows of the work that lives a floor below
 * participants/: the remounts (remount/) and the disks (disks/), each a
 * row over its folder's public calls and journal part. The rows of the
 * participants in this folder stand in their own files. */
#include "lm-disks.h"
#include "lm-participants.h"
#include "lm-remount.h"

/* --- remounts ---------------------------------------------------------------- */

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

/* First: the likelier to fail, and rolled back whole. Not compared for
 * Conflicts: a remount by someone else is logged and left at restore. */
const LmParticipant lm_participant_remounts = {
  .name = "remounts",
  .must_succeed = TRUE,
  .apply = remounts_apply,
  .restore = remounts_restore,
  .journal = &lm_remount_part,
};

/* --- disks --------------------------------------------------------------------- */

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

/* Not compared for Conflicts: a drive's timer and APM cannot be read back. */
const LmParticipant lm_participant_disks = {
  .name = "disks",
  .must_succeed = FALSE,
  .apply = disks_apply,
  .restore = disks_restore,
  .journal = &lm_disks_journal_part,
};
