/* lm-excluded.h: the disks that Exclude=true takes out of monitoring, and
 * the stacked devices (dm, md) that live on them alone. lm-disks.c says
 * which disks; the BPF programs' "excluded" maps are kept in step, so that
 * I/O on an excluded disk never leaves the kernel and never wakes the
 * daemon. Main thread only. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Replace the set with the whole disks @disks (NULL-terminated) and what is
 * stacked on them only. TRUE when the set changed. */
gboolean lm_excluded_set (const char *const *disks);
/* @name: a whole disk or stacked device ("sda", "dm-0"). */
gboolean lm_excluded_has (const char *name);
/* The key the BPF programs use for @name, (major << 20) | first_minor;
 * FALSE when sysfs does not say. */
gboolean lm_excluded_key_of (const char *name, guint32 *key);

/* A BPF hash map (u32 key → u8) to keep equal to the set, filled now.
 * @last_io_fd, or -1: the attribution program's per-disk last I/O time,
 * set to now for a disk that becomes watched again, so that what happened
 * while nobody looked is not taken for an idle gap. @dirtiers_fd, or -1:
 * its last dirtier per disk, forgotten then (it dirtied before the gap). */
void lm_excluded_add_map (int excluded_fd, int last_io_fd, int dirtiers_fd);
/* The same, for a program that copies the flag into its per-disk slots:
 * @index_fd maps each disk it met (u32 key as above) to its slot (u32) in
 * the array mapped at @slots (@n_slots of @stride bytes); the u32 at
 * @excluded_off of each slot is kept 1 for an excluded disk and 0
 * otherwise; @last_io_off, or -1: a u64 CLOCK_BOOTTIME set to now for a
 * disk watched again. Written in place, one field at a time. */
void lm_excluded_add_disks_map (int excluded_fd, int index_fd, guint8 *slots, gsize stride,
                                guint n_slots, gssize excluded_off, gssize last_io_off,
                                int dirtiers_fd);
void lm_excluded_remove_map (int excluded_fd);
/* Forget everything (tests). */
void lm_excluded_reset (void);

G_END_DECLS
