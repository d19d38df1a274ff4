/* lm-jclock.bpf.h: CLOCK_BOOTTIME to a jiffy, cheaply, for the programs'
 * per-disk fast paths. Tracing programs may not read the coarse clock
 * (bpf_ktime_get_coarse_ns), and bpf_ktime_get_boot_ns reads the
 * clocksource (kvm-clock in a VM: the larger part of a bio's cost), but
 * bpf_jiffies64 is a load. A disk's slot keeps one precise reading with its
 * jiffies; within a window of its last I/O the time is that reading plus
 * the jiffies since. Jiffies stop in suspend like CLOCK_MONOTONIC: two
 * I/Os on either side of a short suspend look close, and the resume (not
 * the second I/O) is what woke the disk then. */
#pragma once

#include <bpf/bpf_helpers.h>

/* Set before load by lm-bpf.c from the kernel's CONFIG_HZ: nanoseconds per
 * jiffy; 0 when the kernel's config is not readable: no fast path then,
 * every I/O reads the precise clock (slower, the same results). */
const volatile __u64 ns_per_jiffy = 0;

/* A precise reading at least this often on a busy disk, so that the
 * jiffies' drift against CLOCK_BOOTTIME (NTP slewing, at most 500 ppm)
 * stays within a few milliseconds. */
#define LM_JCLOCK_RESYNC_NS (30ULL * 1000000000ULL)

struct lm_jclock
{
  __u64 sync_ns; /* CLOCK_BOOTTIME at the last precise reading */
  __u64 sync_j;  /* jiffies then */
  __u64 last_j;  /* jiffies at the disk's last I/O */
  __u64 win_j;   /* the fast path's window, in jiffies; 0: none */
};

/* TRUE, with *now, when the disk's last I/O was less than its window ago:
 * the caller's cheap path. */
static __always_inline int
lm_jclock_fast (struct lm_jclock *c, __u64 *now)
{
  __u64 j = bpf_jiffies64 ();
  __u64 since_sync = j - c->sync_j;

  /* Unsigned: a time another CPU just moved past j is not fast. */
  if (j - c->last_j >= c->win_j || since_sync * ns_per_jiffy >= LM_JCLOCK_RESYNC_NS)
    return 0;
  /* Written only when it changes: the line is shared by the CPUs. */
  if (c->last_j != j)
    c->last_j = j;
  *now = c->sync_ns + since_sync * ns_per_jiffy;
  return 1;
}

/* A precise reading, with the jiffies then: what lm_jclock_publish takes. */
struct lm_jclock_reading
{
  __u64 ns, j;
};

static __always_inline struct lm_jclock_reading
lm_jclock_read (void)
{
  struct lm_jclock_reading r;

  r.ns = bpf_ktime_get_boot_ns ();
  r.j = bpf_jiffies64 ();
  return r;
}

/* @r becomes the clock's base; @window_ns: the next fast path's window.
 * Called once the caller has decided what @r's I/O was (a spin-up or
 * not): another CPU's I/O on the same disk takes the fast path from here
 * on and moves the disk's last I/O on without that decision, so published
 * first, it made the spin-up's own test see a disk busy a moment ago. */
static __always_inline void
lm_jclock_publish (struct lm_jclock *c, struct lm_jclock_reading r, __u64 window_ns)
{
  c->sync_ns = r.ns;
  c->sync_j = r.j;
  c->win_j = ns_per_jiffy != 0 ? window_ns / ns_per_jiffy : 0;
  c->last_j = r.j;
}
