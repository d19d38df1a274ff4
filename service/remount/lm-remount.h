/* lm-remount.h: journaled filesystems remounted with commit=<MaxLostWork>.
 * Owns the save-remount-restore transaction over the mount table; never
 * remounts a superblock whose original options are not saved durably first. */
#pragma once

#include <glib.h>

#include "lm-journal.h"
#include "lm-mount-options.h"
#include "lm-mounts.h"
#include "lm-settings.h"
#include "lm-state.h"

G_BEGIN_DECLS

/* The mount table is always the real one of the daemon's mount namespace,
 * never under LAPTOP_MODED_ROOT's /proc: remounts act on real mounts. But
 * under a fake root, remounting is off unless the fake root holds
 * proc/self/mountinfo (tests make it a symlink to the real one), so tests
 * with a fake /proc/sys/vm never touch the machine's filesystems. */
#define LM_MOUNTINFO "/proc/self/mountinfo"

/* The journal's part for remounts: applied all or nothing by lm-remount.c,
 * restored by lm-remount-restore.c, the grace-period switch with it; the
 * participant row (participants/lm-rows.c) and recovery go through it. */
extern const LmJournalPart lm_remount_part;

gboolean lm_remount_apply (const LmSettings *settings, LmState *state, GError **error);
gboolean lm_remount_restore (LmState *state, GError **error);
gboolean lm_remount_saved (LmState *state);
GVariant *lm_remount_list (LmState *state);

#ifdef LM_REMOUNT_TEST_HOOKS
/* Only in tests/test-remount-race, which compiles lm-remount-jobs.c with
 * this defined: the daemon's library has no hook at all, so nothing from
 * outside (environment, bus, config) can reach one. Called with "apply" or
 * "restore" after the mount table was read and before the mount points of
 * that batch are opened and held: the window a race would use. */
typedef void (*LmRemountTestHook) (const char *phase, gpointer user_data);
void lm_remount_test_set_hook (LmRemountTestHook hook, gpointer user_data);
#endif

G_END_DECLS
