/* lm-flush-bpf-event.h: what lm-flush.bpf.c and lm-flush.c share: the
 * per-disk state and the "armed" record. Fixed-size fields only, never a
 * pointer, so both sides agree on the layout. */
#pragma once

/* One per whole disk, keyed by (major << 20) | first_minor. */
struct lm_flush_disk
{
  __u64 last_ns;  /* CLOCK_BOOTTIME of the last I/O that arms (to a tick) */
  __u32 armed;    /* 1 from the first such I/O until user space flushes */
  __u32 excluded; /* 1: Exclude=true (lm-excluded.c keeps it), never armed */
  __u64 clock[4]; /* struct lm_jclock (lm-jclock.bpf.h): the fast path's clock */
};

/* Sent once when a disk goes from disarmed to armed, never per I/O. */
struct lm_flush_armed
{
  __u64 boot_ns;
  __u32 major; /* the whole disk */
  __u32 minor;
  __u32 pid; /* who armed it, for the debug log */
  __u32 write;
  char comm[16];
};

/* Sent once when a filesystem on a removable disk is first dirtied after
 * the engine wrote it (its "removable" entry going from 0 to 1). */
struct lm_flush_dirtied
{
  __u64 boot_ns;
  __u32 sb_dev; /* the superblock's s_dev, (major << 20) | minor */
  __u32 pad;
};
