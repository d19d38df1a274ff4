/* lm-replay.h: the "what laptop mode saved" estimate: recorded disk activity
 * replayed against the kernel's stock writeback policy. Pure; never does I/O. */
#pragma once

#include <glib.h>

/* The stock policy replayed, the kernel's defaults: dirty data expires after
 * 30 s (vm.dirty_expire_centisecs = 3000) and the flusher wakes every 5 s
 * (vm.dirty_writeback_centisecs = 500), whatever the filesystem. It expires
 * per inode, from the inode's first dirtying since it was last clean
 * (dirtied_when, fs/fs-writeback.c), and goes with all dirtied in it
 * since: each file at its own expiry where the records hold the seconds
 * in which a file's data became dirty (Spells), else each filesystem
 * kind's dirtied seconds taken as one file's (a file rewritten every 2 s
 * is written every 30-35 s, not at every tick; checked against
 * measurement per filesystem by bench/replay_bench.py, bench/README.md).
 * On ext4 the write-back's delayed allocation is a change of its own. What a
 * change of metadata costs besides is each filesystem's own:
 * - ext4, ext3 (jbd2): the transaction a change opens commits 5 s later
 *   (JBD2_DEFAULT_MAX_COMMIT_AGE, include/linux/jbd2.h; mount option
 *   commit=);
 * - btrfs: the transaction commits 30 s after it opened
 *   (BTRFS_DEFAULT_COMMIT_INTERVAL, fs/btrfs/fs.h; commit=), from
 *   btrfs-transaction's periodic wake;
 * - xfs: its log worker runs every 30 s on a clock of its own, from the
 *   mount (fs.xfs.xfssyncd_centisecs = 3000, xfs_params in
 *   fs/xfs/xfs_globals.c): a tick after changes forces the log and pushes
 *   their metadata, the next two with nothing new cover the log
 *   (xfs_log_worker, xfs_log_need_covered in fs/xfs/xfs_log.c); the
 *   clock's phase is not recorded, so lm_replay_stock() averages the 30;
 * - vfat, exfat, ext2 and other filesystems without a journal: the data's
 *   write-back and nothing more. */
#define LM_REPLAY_DIRTY_EXPIRE_S 30
#define LM_REPLAY_WRITEBACK_S 5
#define LM_REPLAY_COMMIT_S 5        /* ext4, ext3 */
#define LM_REPLAY_BTRFS_COMMIT_S 30 /* btrfs */
#define LM_REPLAY_XFS_LOG_S 30      /* xfs: the log worker's period */

/* Which filesystems a run's dirtied data went to (a mask). 0: not recorded
 * (a ledger from before the field, a backend that cannot tell): replayed
 * as ext4, and lm_replay_unsure() says so. */
typedef enum
{
  LM_REPLAY_FS_EXT4 = 1 << 0, /* ext4, ext3: jbd2 */
  LM_REPLAY_FS_BTRFS = 1 << 1,
  LM_REPLAY_FS_XFS = 1 << 2,
  LM_REPLAY_FS_NO_JOURNAL = 1 << 3, /* vfat, exfat, ext2, ... */
  LM_REPLAY_FS_OTHER = 1 << 4,      /* a type with no model here: as ext4, unsure */
} LmReplayFs;

/* Why a replay is less sure than its figure looks (a mask, 0: sure). */
typedef enum
{
  LM_REPLAY_UNSURE_FS_NOT_RECORDED = 1 << 0,     /* runs without LmReplayFs */
  LM_REPLAY_UNSURE_FS_NOT_MODELLED = 1 << 1,     /* LM_REPLAY_FS_OTHER */
  LM_REPLAY_UNSURE_SPELLS_NOT_RECORDED = 1 << 2, /* runs without spells_known */
} LmReplayUnsure;
/* The disk's idle gap before it counts as asleep where its standby timer is
 * not known: bench/engine_bench.py's --idle default. */
#define LM_REPLAY_DEFAULT_IDLE_S 5

/* One activity record: consecutive active seconds [start_us, end_us) and how
 * many of them had reads reaching the disk, direct writes, dirtied data. */
typedef struct
{
  gint64 start_us;
  gint64 end_us;
  guint32 reads;
  guint32 writes;
  guint32 dirtied;
  guint32 fs; /* LmReplayFs: where the dirtied data went; 0 not recorded */
  /* Seconds in which a clean file became dirty: each starts a file's dirty
   * spell, written back at its own expiry. Not known (a record from before
   * the field): each filesystem kind's dirtied seconds are one spell. */
  guint32 spells;
  gboolean spells_known;
} LmReplayRun;

typedef struct
{
  guint spinups;
  gint64 awake_s;
} LmReplayResult;

/* Spin-ups and awake seconds in [since_us, until_us) had the disk run the
 * stock policy: it is asleep at @since_us, wakes for any I/O after @idle_s
 * seconds or more without one, and stays awake @idle_s seconds after each.
 * @runs may overlap and come in any order. With xfs, the mean over the 30
 * phases of its log worker's clock, rounded. */
void lm_replay_stock (const LmReplayRun *runs, gsize n_runs, gint64 since_us, gint64 until_us,
                      guint idle_s, LmReplayResult *out);

/* The instants (seconds since the epoch, unsorted, may repeat) at which
 * the disk would do I/O under the stock policy, and under laptop mode
 * (dirtied data written @delay_s after the next read or write, the
 * engine's LaptopModeSeconds, or @max_age_s after it, laptop mode's
 * MaxLostWork, whichever comes first): what lm-nvme-residency.c walks.
 * Both are models: what they give is an estimate (the stock one with xfs's
 * log worker on one phase of its clock, ticks on multiples of 30 s). */
GArray *lm_replay_stock_io (const LmReplayRun *runs, gsize n_runs, gint64 since_us,
                            gint64 until_us);
GArray *lm_replay_laptop_io (const LmReplayRun *runs, gsize n_runs, gint64 since_us,
                             gint64 until_us, guint max_age_s, guint delay_s);

/* What the replay of @runs had to assume (LmReplayUnsure): runs with
 * dirtied data but no filesystem recorded, or one without a model. */
guint lm_replay_unsure (const LmReplayRun *runs, gsize n_runs);
/* Its words, for the report, the tray and --json ("the filesystem of some
 * activity was not recorded"), or NULL when sure. */
const char *lm_replay_unsure_to_string (guint unsure);

/* The same count over instants at which the disk did I/O (seconds since
 * the epoch, any order): shared by the replay and its tests. */
void lm_replay_count (gint64 *io_s, gsize n, gint64 since_s, gint64 until_s, guint idle_s,
                      LmReplayResult *out);
