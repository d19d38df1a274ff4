/* lm-activity.bpf.h: activity for the ledger (its replay of what stock
 * writeback would have done): per whole disk, runs of consecutive seconds
 * with I/O a process issued or data a process dirtied, kept in the "runs"
 * map while they grow and sent to the "activity" ring, without waking user
 * space, when they end. Included by lm-attrib.bpf.c only. */
#pragma once

#include <bpf/bpf_helpers.h>

#include "lm-attrib-bpf-event.h"

/* enum bpf_ringbuf flags of the UAPI (lm-vmlinux.h carries no enums). */
#define LM_RB_NO_WAKEUP 1
#define LM_RB_FORCE_WAKEUP 2
#define LM_RB_AVAIL_DATA 0

struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, MAX_DISKS);
  __type (key, __u32);
  __type (value, struct lm_bpf_run);
} runs SEC (".maps");

/* Ended runs, read by the daemon when it is awake anyway (a spin-up, a
 * ledger flush, a stop); only once it is half full is user space woken. */
struct
{
  __uint (type, BPF_MAP_TYPE_RINGBUF);
  __uint (max_entries, 256 * 1024);
} activity SEC (".maps");

/* Count second @s for @kind once. Constant indices only: the verifier
 * refuses a variable offset into the stack. */
static __always_inline void
count_second (struct lm_bpf_run *run, int kind, __u64 s)
{
  if (kind == LM_BPF_ACT_READ && run->last_s[LM_BPF_ACT_READ] != s)
    {
      run->last_s[LM_BPF_ACT_READ] = s;
      run->count[LM_BPF_ACT_READ]++;
    }
  else if (kind == LM_BPF_ACT_WRITE && run->last_s[LM_BPF_ACT_WRITE] != s)
    {
      run->last_s[LM_BPF_ACT_WRITE] = s;
      run->count[LM_BPF_ACT_WRITE]++;
    }
  else if (kind == LM_BPF_ACT_DIRTY && run->last_s[LM_BPF_ACT_DIRTY] != s)
    {
      run->last_s[LM_BPF_ACT_DIRTY] = s;
      run->count[LM_BPF_ACT_DIRTY]++;
    }
  else if (kind == LM_BPF_ACT_SPELL && run->last_s[LM_BPF_ACT_SPELL] != s)
    {
      run->last_s[LM_BPF_ACT_SPELL] = s;
      run->count[LM_BPF_ACT_SPELL]++;
    }
}

/* A second of @kind on disk @key: extend its run, or end it and start one.
 * Two CPUs may race on one run's counters; the worst is a second counted
 * twice or not at all, never a wake-up. */
static __always_inline void
note_activity (__u32 key, int kind, __u64 now_ns, __u32 fs)
{
  __u64 s = now_ns / 1000000000ULL;
  struct lm_bpf_run *run = bpf_map_lookup_elem (&runs, &key);

  if (run != 0 && s <= run->end_s + 1)
    {
      if (s > run->end_s)
        run->end_s = s;
      count_second (run, kind, s);
      run->fs |= fs;
      return;
    }
  if (run != 0)
    {
      struct lm_bpf_run *e = bpf_ringbuf_reserve (&activity, sizeof *e, 0);
      if (e != 0)
        {
          __builtin_memcpy (e, run, sizeof *e);
          __u64 queued = bpf_ringbuf_query (&activity, LM_RB_AVAIL_DATA);
          bpf_ringbuf_submit (e, queued > 128 * 1024 ? LM_RB_FORCE_WAKEUP : LM_RB_NO_WAKEUP);
        }
    }
  struct lm_bpf_run fresh = { .start_s = s, .end_s = s, .key = key, .fs = fs };
  count_second (&fresh, kind, s);
  bpf_map_update_elem (&runs, &key, &fresh, BPF_ANY);
}
