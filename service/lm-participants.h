/* lm-participants.h: everything that changes the system while laptop mode
 * is on, in one declared order: remounts, tunables, disks, hardware power. The daemon
 * drives them through these four calls and never lists them itself. */
#pragma once

#include <glib.h>

#include "lm-disks.h"
#include "lm-settings.h"
#include "lm-state.h"
#include "lm-tunables.h"

G_BEGIN_DECLS

/* What the participants act on; owned by the daemon. */
typedef struct
{
  LmState *state; /* the restore journal */
  const LmTunablesBackend *backend;
  LmDisks *disks;
} LmSystem;

/* Apply @settings with @engine, in order. A participant that must succeed
 * (remounts, tunables) and fails undoes the earlier ones: back to
 * @previous/@previous_engine when @previous is non-NULL (laptop mode was
 * on), else restored. Best-effort participants (disks) report through
 * their own property instead. */
gboolean lm_participants_apply (const LmSystem *sys, const LmSettings *settings, LmEngine engine,
                                const LmSettings *previous, LmEngine previous_engine,
                                GError **error);
/* Restore every participant, in reverse order, each whatever the others
 * did; the first failure of one that must succeed is returned. */
gboolean lm_participants_restore (const LmSystem *sys, GError **error);
/* TRUE when the journal holds something of any participant. */
gboolean lm_participants_saved (const LmSystem *sys);
/* At start-up: put back what a run that did not restore left. */
void lm_participants_recover (const LmSystem *sys);

G_END_DECLS
