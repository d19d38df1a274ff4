/* lm-flush-bpf-event.h: what the engine's part of lm-attrib.bpf.c and
 * lm-flush.c share: the "armed" and "dirtied" records (the per-disk state
 * is struct lm_attrib_disk). Fixed-size fields only, never a
 * pointer, so both sides agree on the layout. */
#pragma once

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
