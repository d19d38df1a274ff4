/* lm-participants.h: everything that changes the system while laptop mode
 * is on, each one row (LmParticipant) declared in its own file, in one
 * declared order: remounts, tunables, disks, hardware power. The daemon
 * drives them through these calls and never lists them itself. */
#pragma once

#include <glib.h>

#include "lm-disks.h"
#include "lm-journal-recovery.h"
#include "lm-settings.h"
#include "lm-state.h"
#include "lm-engines.h"

G_BEGIN_DECLS

/* lm-tunables.h's; named only, so the registry does not include its rows. */
typedef struct _LmTunablesBackend LmTunablesBackend;

/* What the participants act on; owned by the daemon. */
typedef struct
{
  LmState *state; /* the restore journal */
  const LmTunablesBackend *backend;
  LmDisks *disks;
} LmSystem;

/* Everything about one participant. Its journal transaction is
 * lm-journal.h's: the row says what it changes, not how to journal it. */
typedef struct
{
  const char *name;      /* "tunables": for the log */
  gboolean must_succeed; /* a failure keeps laptop mode off (and undoes the
                          * earlier ones); else best effort, logged */
  gboolean (*apply) (const LmSystem *sys, const LmSettings *settings, LmEngine engine,
                     GError **error);
  /* Put back every original still ours; also after a crash (recover). */
  gboolean (*restore) (const LmSystem *sys, GError **error);
  /* Its journal part: what it holds (saved), how a key is read and named
   * (Conflicts compares the parts that have a read(); not remounts nor
   * disk commands). */
  const LmJournalPart *journal;
} LmParticipant;

/* The daemon's own rows: tunables and hardware power in their own files,
 * remounts and disks (whose work lives a floor below) in lm-rows.c. */
extern const LmParticipant lm_participant_remounts; /* lm-rows.c */
extern const LmParticipant lm_participant_tunables; /* lm-tunables.c */
extern const LmParticipant lm_participant_disks;    /* lm-rows.c */
extern const LmParticipant lm_participant_hwpower;  /* lm-hwpower.c */

/* One more row, after the daemon's own (a test participant linked into the
 * test daemon only); before the daemon starts. */
void lm_participants_add (const LmParticipant *participant);
/* The rows in order; NULL past the last. */
const LmParticipant *lm_participants_get (guint index);

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
/* Every row's journal part into @recovery, in order, put back through
 * the row's restore (lm_journal_recovery_run()'s context: the LmSystem). */
void lm_participants_add_recovery (LmJournalRecovery *recovery);

G_END_DECLS
