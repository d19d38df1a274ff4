/* lm-replay.c: replays recorded activity against the kernel's stock
 * writeback policy and counts the spin-ups it would cause. Pure arithmetic. */
#include "lm-replay.h"

#include <stdlib.h>

static int
cmp_i64 (const void *a, const void *b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

/* A run's counts are seconds within it, not their order: they are spread
 * evenly over its length, which is what decides spin-ups for a run longer
 * than the idle gap. A count above the run's length is capped by it. */
static void
spread (GArray *out, gint64 start_s, gint64 n_sec, guint32 count)
{
  gint64 k = MIN ((gint64) count, n_sec);

  for (gint64 i = 0; i < k; i++)
    {
      gint64 s = start_s + (i * n_sec) / k;
      g_array_append_val (out, s);
    }
}

static gint64
ceil_to (gint64 t, gint64 step)
{
  gint64 r = t % step;

  if (r < 0)
    r += step;
  return r == 0 ? t : t + (step - r);
}

void
lm_replay_count (gint64 *io_s, gsize n, gint64 since_s, gint64 until_s, guint idle_s,
                 LmReplayResult *out)
{
  gint64 idle = MAX (1, (gint64) idle_s);
  gint64 awake_from = 0, awake_to = G_MININT64;

  out->spinups = 0;
  out->awake_s = 0;
  if (n > 0)
    qsort (io_s, n, sizeof *io_s, cmp_i64);
  for (gsize i = 0; i < n; i++)
    {
      gint64 t = io_s[i];
      if (t < since_s || t >= until_s)
        continue;
      if (t >= awake_to)
        {
          /* Asleep since awake_to (or since the start): this I/O wakes it. */
          if (awake_to != G_MININT64)
            out->awake_s += awake_to - awake_from;
          out->spinups++;
          awake_from = t;
        }
      awake_to = MIN (t + idle, until_s);
    }
  if (awake_to != G_MININT64)
    out->awake_s += awake_to - awake_from;
}

/* A dirtied second and the filesystems it went to; @guess: its run did
 * not record dirty spells, so its data's write-back is guessed (one spell
 * per filesystem kind). */
typedef struct
{
  gint64 s;
  guint32 fs;
  gboolean guess;
} Dirtied;

static int
cmp_dirtied (const void *a, const void *b)
{
  return cmp_i64 (&((const Dirtied *) a)->s, &((const Dirtied *) b)->s);
}

static void
spread_dirtied (GArray *out, gint64 start_s, gint64 n_sec, guint32 count, guint32 fs,
                gboolean guess)
{
  gint64 k = MIN ((gint64) count, n_sec);

  for (gint64 i = 0; i < k; i++)
    {
      Dirtied d = { start_s + (i * n_sec) / k, fs, guess };
      g_array_append_val (out, d);
    }
}

/* The whole seconds of @r within [@from_s, @until_s): its first and how
 * many (at least one); FALSE when none. */
static gboolean
run_seconds (const LmReplayRun *r, gint64 from_s, gint64 until_s, gint64 *start_s, gint64 *n_sec)
{
  gint64 end_us = MAX (r->end_us, r->start_us);
  /* Rounded up without adding, which could overflow at G_MAXINT64. */
  gint64 end_s = MIN (end_us / G_USEC_PER_SEC + (end_us % G_USEC_PER_SEC != 0), until_s);

  *start_s = MAX (r->start_us / G_USEC_PER_SEC, from_s);
  if (end_s < *start_s || *start_s >= until_s)
    return FALSE;
  *n_sec = MAX (1, end_s - *start_s);
  return TRUE;
}

/* Each run's counts spread over its seconds, clipped to the window so a
 * corrupt or huge run stays bounded: reads and direct writes into @io,
 * dirtied seconds (Dirtied) into @dirty, the seconds in which a dirty
 * spell began into @spells (NULL: not wanted). Spells are taken from as
 * far before the window as one can be and still be written back within
 * it (a file dirtied before @since_s is written in the window without a
 * spell in it). */
static void
spread_runs (const LmReplayRun *runs, gsize n_runs, gint64 since_s, gint64 until_s, GArray *io,
             GArray *dirty, GArray *spells)
{
  gint64 spells_from_s = since_s - LM_REPLAY_DIRTY_EXPIRE_S - LM_REPLAY_WRITEBACK_S;

  for (gsize i = 0; i < n_runs; i++)
    {
      const LmReplayRun *r = &runs[i];
      gint64 start_s, n_sec;
      if (spells != NULL && r->spells_known
          && run_seconds (r, spells_from_s, until_s, &start_s, &n_sec))
        spread_dirtied (spells, start_s, n_sec, r->spells, r->fs, FALSE);
      if (!run_seconds (r, since_s, until_s, &start_s, &n_sec))
        continue;
      /* Reads and direct writes reach the disk when they were recorded. */
      spread (io, start_s, n_sec, r->reads);
      spread (io, start_s, n_sec, r->writes);
      spread_dirtied (dirty, start_s, n_sec, r->dirtied, r->fs, !r->spells_known);
    }
  if (dirty->len > 0)
    qsort (dirty->data, dirty->len, sizeof (Dirtied), cmp_dirtied);
}

static void
window_s (gint64 since_us, gint64 until_us, gint64 *since_s, gint64 *until_s)
{
  *since_s = since_us / G_USEC_PER_SEC;
  *until_s = until_us / G_USEC_PER_SEC + (until_us % G_USEC_PER_SEC != 0);
}

/* ext4 (and what is replayed as ext4): its write-back maps the blocks of
 * delayed allocation and moves i_disksize (ext4_writepages opens a journal
 * handle), a change that opens a transaction as a write does. */
#define ALLOCATES_ON_WRITEBACK (LM_REPLAY_FS_EXT4 | LM_REPLAY_FS_OTHER)

static void
written_back (gint64 at, guint32 fs, GArray *io, GArray *changes)
{
  g_array_append_val (io, at);
  if ((fs & ALLOCATES_ON_WRITEBACK) != 0)
    {
      Dirtied allocation = { at, fs & ALLOCATES_ON_WRITEBACK, FALSE };
      g_array_append_val (changes, allocation);
    }
}

/* The data: the kernel writes a file at the first flusher tick after it
 * expires, 30 s after its dirty spell began (its first dirtying since it
 * was last clean), with everything dirtied in it meanwhile. Where the
 * records hold the spells (@spells), each is one file's; where they do not
 * (@dirty's guesses, older records), each filesystem kind's dirtied
 * seconds are taken as one file's. (Until issue 49's bench, each dirtied
 * second on ext4 was written at its own expiry; replayed against the same
 * runs' own measurement, that kept the disk awake at every 5 s tick: 9
 * spin-ups and 4 % asleep where the disk did 21 and 12 %, bench/README.md.)
 * Every dirtied second, and each write-back that allocates, goes into
 * @changes. */
static void
data_write_backs (GArray *dirty, GArray *spells, GArray *io, GArray *changes)
{
  gint64 written_at[5];
  for (guint k = 0; k < G_N_ELEMENTS (written_at); k++)
    written_at[k] = G_MININT64;
  for (guint i = 0; i < dirty->len; i++)
    {
      const Dirtied *d = &g_array_index (dirty, Dirtied, i);
      Dirtied change = { d->s, d->fs != 0 ? d->fs : LM_REPLAY_FS_EXT4, FALSE };
      g_array_append_val (changes, change);
      for (guint k = 0; d->guess && k < G_N_ELEMENTS (written_at); k++)
        {
          guint32 bit = 1u << k;
          if ((change.fs & bit) == 0 || d->s < written_at[k])
            continue;
          written_at[k] = ceil_to (d->s + LM_REPLAY_DIRTY_EXPIRE_S, LM_REPLAY_WRITEBACK_S);
          written_back (written_at[k], bit, io, changes);
        }
    }
  for (guint i = 0; i < spells->len; i++)
    {
      const Dirtied *d = &g_array_index (spells, Dirtied, i);
      written_back (ceil_to (d->s + LM_REPLAY_DIRTY_EXPIRE_S, LM_REPLAY_WRITEBACK_S),
                    d->fs != 0 ? d->fs : LM_REPLAY_FS_EXT4, io, changes);
    }
}

/* Each journaled filesystem's commits but xfs's: a change opens a
 * transaction, committed on its filesystem's clock; later changes join
 * the open one. Not recorded, or no model: as ext4 (lm_replay_unsure says
 * so). The seconds of xfs's changes go to @xfs, sorted, for its log
 * worker's clock (xfs_log_ticks). */
static void
commit_changes (GArray *changes, GArray *io, GArray *xfs)
{
  static const struct
  {
    guint32 fs;
    gint64 after_s;
  } commits[] = {
    { LM_REPLAY_FS_EXT4 | LM_REPLAY_FS_OTHER, LM_REPLAY_COMMIT_S },
    { LM_REPLAY_FS_BTRFS, LM_REPLAY_BTRFS_COMMIT_S },
  };
  gint64 commit_at[G_N_ELEMENTS (commits)];

  for (guint k = 0; k < G_N_ELEMENTS (commits); k++)
    commit_at[k] = G_MININT64;
  if (changes->len > 0)
    qsort (changes->data, changes->len, sizeof (Dirtied), cmp_dirtied);
  for (guint i = 0; i < changes->len; i++)
    {
      const Dirtied *d = &g_array_index (changes, Dirtied, i);
      if (d->fs & LM_REPLAY_FS_XFS)
        g_array_append_val (xfs, d->s);
      for (guint k = 0; k < G_N_ELEMENTS (commits); k++)
        if ((d->fs & commits[k].fs) != 0 && d->s >= commit_at[k])
          {
            commit_at[k] = d->s + commits[k].after_s;
            g_array_append_val (io, commit_at[k]);
          }
    }
}

/* xfs's log worker (xfs_log_worker, fs/xfs/xfs_log.c) runs every
 * LM_REPLAY_XFS_LOG_S on a clock of its own, from the mount: at a tick
 * after changes it forces the log and pushes the metadata they dirtied;
 * at the next two ticks with nothing new it covers the log (two dummy
 * records, xfs_log_need_covered); then it is silent. @xfs: the seconds of
 * changes, sorted; ticks fall on @phase_s (0 to LM_REPLAY_XFS_LOG_S - 1)
 * modulo LM_REPLAY_XFS_LOG_S, before @until_s. */
static void
xfs_log_ticks (const GArray *xfs, gint64 phase_s, gint64 until_s, GArray *io)
{
  guint next = 0, covering = 0;

  if (xfs->len == 0)
    return;
  gint64 first = g_array_index (xfs, gint64, 0);
  /* The first tick after the first change. */
  gint64 t = first
             - ((first - phase_s) % LM_REPLAY_XFS_LOG_S + LM_REPLAY_XFS_LOG_S) % LM_REPLAY_XFS_LOG_S
             + LM_REPLAY_XFS_LOG_S;
  for (; t < until_s && (next < xfs->len || covering > 0); t += LM_REPLAY_XFS_LOG_S)
    {
      gboolean changed = FALSE;
      while (next < xfs->len && g_array_index (xfs, gint64, next) < t)
        {
          changed = TRUE;
          next++;
        }
      if (changed)
        covering = 2;
      else if (covering > 0)
        covering--;
      else
        {
          /* Idle until the next change: jump to the tick after it. */
          gint64 c = g_array_index (xfs, gint64, next);
          t += (c - t) / LM_REPLAY_XFS_LOG_S * LM_REPLAY_XFS_LOG_S;
          continue;
        }
      g_array_append_val (io, t);
    }
}

/* The stock policy's I/O but the xfs log worker's (@io), and the seconds
 * of xfs's changes for it (@xfs, sorted). */
static void
stock_parts (const LmReplayRun *runs, gsize n_runs, gint64 since_s, gint64 until_s, GArray *io,
             GArray *xfs)
{
  g_autoptr (GArray) dirty = g_array_new (FALSE, FALSE, sizeof (Dirtied));
  g_autoptr (GArray) spells = g_array_new (FALSE, FALSE, sizeof (Dirtied));
  g_autoptr (GArray) changes = g_array_new (FALSE, FALSE, sizeof (Dirtied));

  spread_runs (runs, n_runs, since_s, until_s, io, dirty, spells);
  data_write_backs (dirty, spells, io, changes);
  commit_changes (changes, io, xfs);
}

GArray *
lm_replay_stock_io (const LmReplayRun *runs, gsize n_runs, gint64 since_us, gint64 until_us)
{
  gint64 since_s, until_s;
  GArray *io = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) xfs = g_array_new (FALSE, FALSE, sizeof (gint64));

  window_s (since_us, until_us, &since_s, &until_s);
  if (until_s <= since_s)
    return io;
  stock_parts (runs, n_runs, since_s, until_s, io, xfs);
  /* One phase of the log worker's clock: the instants are one example. */
  xfs_log_ticks (xfs, 0, until_s, io);
  return io;
}

guint
lm_replay_unsure (const LmReplayRun *runs, gsize n_runs)
{
  guint unsure = 0;

  for (gsize i = 0; i < n_runs; i++)
    {
      if (runs[i].dirtied == 0)
        continue;
      if (runs[i].fs == 0)
        unsure |= LM_REPLAY_UNSURE_FS_NOT_RECORDED;
      if (runs[i].fs & LM_REPLAY_FS_OTHER)
        unsure |= LM_REPLAY_UNSURE_FS_NOT_MODELLED;
      if (!runs[i].spells_known)
        unsure |= LM_REPLAY_UNSURE_SPELLS_NOT_RECORDED;
    }
  return unsure;
}

const char *
lm_replay_unsure_to_string (guint unsure)
{
  if (unsure & LM_REPLAY_UNSURE_FS_NOT_RECORDED)
    return "the filesystem some data was written to was not recorded (taken as ext4's)";
  if (unsure & LM_REPLAY_UNSURE_FS_NOT_MODELLED)
    return "some data went to a filesystem the estimate has no model of (taken as ext4's)";
  if (unsure & LM_REPLAY_UNSURE_SPELLS_NOT_RECORDED)
    return "some activity was recorded before laptop-moded counted the files made dirty "
           "(each filesystem's data taken as one file's)";
  return NULL;
}

GArray *
lm_replay_laptop_io (const LmReplayRun *runs, gsize n_runs, gint64 since_us, gint64 until_us,
                     guint max_age_s, guint delay_s)
{
  gint64 since_s, until_s;
  GArray *io = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) dirty = g_array_new (FALSE, FALSE, sizeof (Dirtied));

  window_s (since_us, until_us, &since_s, &until_s);
  if (until_s <= since_s)
    return io;
  spread_runs (runs, n_runs, since_s, until_s, io, dirty, NULL);
  if (io->len > 0)
    qsort (io->data, io->len, sizeof (gint64), cmp_i64);

  /* Dirtied data is written @delay_s after the next read or write at or
   * after it (laptop mode flushes once the disk, woken anyway, has been
   * quiet that long: the engine's LaptopModeSeconds), or @max_age_s after
   * it was dirtied when that comes first: one write for all it holds then. */
  g_autoptr (GArray) flushes = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 flush_at = G_MININT64;
  guint next = 0;
  for (guint i = 0; i < dirty->len; i++)
    {
      gint64 t = g_array_index (dirty, Dirtied, i).s;
      if (t <= flush_at)
        continue; /* written by the flush already due */
      while (next < io->len && g_array_index (io, gint64, next) < t)
        next++;
      gint64 deadline = t + MAX (1, (gint64) max_age_s);
      if (next < io->len && g_array_index (io, gint64, next) <= deadline)
        flush_at = MIN (g_array_index (io, gint64, next) + (gint64) delay_s, deadline);
      else
        flush_at = deadline;
      g_array_append_val (flushes, flush_at);
    }
  g_array_append_vals (io, flushes->data, flushes->len);
  return io;
}

/* With xfs, over every phase of its log worker's clock (which the records
 * cannot know: it runs from the mount), averaged and rounded. */
void
lm_replay_stock (const LmReplayRun *runs, gsize n_runs, gint64 since_us, gint64 until_us,
                 guint idle_s, LmReplayResult *out)
{
  gint64 since_s, until_s;
  g_autoptr (GArray) io = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) xfs = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint64 spinups = 0;
  gint64 awake_s = 0;

  window_s (since_us, until_us, &since_s, &until_s);
  out->spinups = 0;
  out->awake_s = 0;
  if (until_s <= since_s)
    return;
  stock_parts (runs, n_runs, since_s, until_s, io, xfs);
  guint phases = xfs->len > 0 ? LM_REPLAY_XFS_LOG_S : 1;
  g_autoptr (GArray) all = g_array_sized_new (FALSE, FALSE, sizeof (gint64), io->len);
  for (guint phase = 0; phase < phases; phase++)
    {
      LmReplayResult r;
      /* lm_replay_count() sorts what it is given: a copy each time. */
      g_array_set_size (all, 0);
      g_array_append_vals (all, io->data, io->len);
      xfs_log_ticks (xfs, phase, until_s, all);
      lm_replay_count ((gint64 *) all->data, all->len, since_s, until_s, idle_s, &r);
      spinups += r.spinups;
      awake_s += r.awake_s;
    }
  out->spinups = (guint) ((spinups + phases / 2) / phases);
  out->awake_s = (awake_s + phases / 2) / phases;
}
