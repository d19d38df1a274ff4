/* lm-replay.h: the "what laptop mode saved" estimate: recorded disk activity
 * replayed against the kernel's stock writeback policy. Pure; never does I/O. */
#pragma once

#include <glib.h>

/* The stock policy replayed: dirty data expires after 30 s and the flusher
 * wakes every 5 s; a journal commits 5 s after a metadata change opens a
 * transaction (ext4/jbd2's commit=5). */
#define LM_REPLAY_DIRTY_EXPIRE_S 30
#define LM_REPLAY_WRITEBACK_S 5
#define LM_REPLAY_COMMIT_S 5
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
} LmReplayRun;

typedef struct
{
  guint spinups;
  gint64 awake_s;
} LmReplayResult;

/* Spin-ups and awake seconds in [since_us, until_us) had the disk run the
 * stock policy: it is asleep at @since_us, wakes for any I/O after @idle_s
 * seconds or more without one, and stays awake @idle_s seconds after each.
 * @runs may overlap and come in any order. */
void lm_replay_stock (const LmReplayRun *runs, gsize n_runs, gint64 since_us, gint64 until_us,
                      guint idle_s, LmReplayResult *out);

/* The instants (seconds since the epoch, unsorted, may repeat) at which
 * the disk would do I/O under the stock policy, and under laptop mode
 * (dirtied data written @delay_s after the next read or write, the
 * engine's LaptopModeSeconds, or @max_age_s after it, laptop mode's
 * MaxLostWork, whichever comes first): what lm-nvme-residency.c walks.
 * Both are models: what they give is an estimate. */
GArray *lm_replay_stock_io (const LmReplayRun *runs, gsize n_runs, gint64 since_us,
                            gint64 until_us);
GArray *lm_replay_laptop_io (const LmReplayRun *runs, gsize n_runs, gint64 since_us,
                             gint64 until_us, guint max_age_s, guint delay_s);

/* The same count over instants at which the disk did I/O (seconds since
 * the epoch, any order): shared by the replay and its tests. */
void lm_replay_count (gint64 *io_s, gsize n, gint64 since_s, gint64 until_s, guint idle_s,
                      LmReplayResult *out);
