/* lm-disks.h: the machine's disks, their power state and time asleep (the
 * old dslm), and the per-disk standby timer, APM and readahead while laptop
 * mode is on. Owns the Disks property; never touches an excluded disk. */
#pragma once

#include <gio/gio.h>

#include "lm-journal.h"
#include "lm-settings.h"
#include "lm-state.h"

#include "lm-disk-smart.h"

G_BEGIN_DECLS

typedef struct _LmDisks LmDisks;

/* Given the whole Disks value (a{sa{sv}}, floating) each time it changes:
 * the daemon puts it on the bus. */
typedef void (*LmDisksPublishFunc) (GVariant *disks, gpointer user_data);

LmDisks *lm_disks_new (LmState *state, LmDisksPublishFunc publish, gpointer user_data);
void lm_disks_free (LmDisks *disks);

void lm_disks_configure (LmDisks *disks, const LmSettings *settings);
void lm_disks_start (LmDisks *disks);
void lm_disks_rescan (LmDisks *disks);

void lm_disks_apply (LmDisks *disks, const LmSettings *settings);
gboolean lm_disks_restore (LmDisks *disks, GError **error);
/* The disks' journal part (group "Disks": each disk's originals by id),
 * for the participant row, crash recovery and Conflicts. */
extern const LmJournalPart lm_disks_journal_part;
/* After a resume: send again what is applied (the journal already holds the
 * originals). */
void lm_disks_resume (LmDisks *disks);
/* Send the Disks property again (what sysfs holds changed: hwpower). */
void lm_disks_publish (LmDisks *disks);

/* A disk (or a partition of it) had its first I/O after an idle gap: it is
 * spinning now. Called by spin-up attribution. */
void lm_disks_note_activity (LmDisks *disks, const char *disk_name, gint64 quiet_since_us);
/* The machine resumed: time suspended is in no disk's awake or asleep
 * time; the counts are sent again, up to now (CountedUntil). */
void lm_disks_note_resumed (LmDisks *disks);
/* Spin-ups are reported by a filter in the kernel (bpf): no disk is
 * re-checked on a timer; the periodic re-check is the fallback. */
void lm_disks_set_event_driven (LmDisks *disks, gboolean event_driven);

/* The kernel name (its key in Disks) of the disk @name_or_id names, by
 * that name or its Id; NULL when no watched disk has it (unknown, or
 * Exclude=true: its state is not followed). */
const char *lm_disks_find (LmDisks *disks, const char *name_or_id);
/* Whether watched disk @name counts as active now (I/O within SpinUpIdle,
 * or an ATA disk not in standby), as Disks shows: nothing is sent to it. */
gboolean lm_disks_is_awake (LmDisks *disks, const char *name);

/* Told each time a disk is counted asleep or awake (the ledger). */
typedef void (*LmDisksPowerFunc) (const char *disk, gboolean asleep, gint64 time_us,
                                  gpointer user_data);
void lm_disks_set_power_func (LmDisks *disks, LmDisksPowerFunc func, gpointer user_data);
/* Told each SMART wear reading of a spinning disk (the ledger). */
void lm_disks_set_wear_func (LmDisks *disks, LmDisksWearFunc func, gpointer user_data);

/* Told when one of the daemon's own commands (SMART READ DATA, IDLE,
 * SET FEATURES) woke @disk: @command names it, @time_us (realtime) is when
 * it was sent. Attribution reports it as the daemon's own spin-up and
 * moves the disk's last I/O; CHECK POWER MODE never comes here. */
typedef void (*LmDisksOwnWakeFunc) (const char *disk, const char *command, gint64 time_us,
                                    gpointer user_data);
void lm_disks_set_own_wake_func (LmDisks *disks, LmDisksOwnWakeFunc func, gpointer user_data);
/* When @disk last did I/O (CLOCK_MONOTONIC µs), as the kernel saw it;
 * FALSE when not known. */
typedef gboolean (*LmDisksLastIoFunc) (const char *disk, gint64 *mono_us, gpointer user_data);
void lm_disks_set_last_io_func (LmDisks *disks, LmDisksLastIoFunc func, gpointer user_data);

/* Adds to a watched disk's Disks entry what others keep of it (link
 * power, runtime PM, NVMe latency: participants/lm-hwpower.c, which stands
 * above disks/), each time the entry is built. */
typedef void (*LmDisksDescribeFunc) (const char *disk, GVariantBuilder *builder,
                                     gpointer user_data);
void lm_disks_set_describe_func (LmDisks *disks, LmDisksDescribeFunc func, gpointer user_data);

/* Told the whole disks Exclude=true takes out of monitoring (sorted,
 * NULL-terminated) each time they are worked out: the kernel filters and
 * the user-space model stop looking at them. TRUE when the set changed. */
typedef gboolean (*LmDisksExcludedFunc) (const char *const *disks, gpointer user_data);
void lm_disks_set_excluded_func (LmDisks *disks, LmDisksExcludedFunc func, gpointer user_data);

/* The names the daemon's commands go by in a spin-up's Note. */
#define LM_DISKS_CMD_SMART "SMART READ DATA"
#define LM_DISKS_CMD_IDLE "IDLE (standby timer)"
#define LM_DISKS_CMD_APM "SET FEATURES (APM)"

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmDisks, lm_disks_free)

G_END_DECLS
