/* lm-flush.bpf.c: the kernel side of the user-space laptop-mode engine.
 * Keeps, per disk, the time of the last I/O that should lead to a flush and
 * tells user space only when a disk becomes armed, or when a filesystem on
 * a removable disk is first dirtied; it must never block, loop, or wake
 * user space for an ordinary I/O. */
#include "lm-vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "lm-flush-bpf-event.h"
#include "lm-pidns.bpf.h"

char LICENSE[] SEC ("license") = "GPL";

#define PF_KTHREAD 0x00200000
#define MAX_DISKS 4096
#define MAX_FLUSHERS 64

struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, MAX_DISKS);
  __type (key, __u32);
  __type (value, struct lm_flush_disk);
} disks SEC (".maps");

/* Threads of the daemon that are flushing right now (key: tid): what they
 * write is the flush itself and must never arm a disk again. */
struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, MAX_FLUSHERS);
  __type (key, __u32);
  __type (value, __u32);
} flushers SEC (".maps");

struct
{
  __uint (type, BPF_MAP_TYPE_RINGBUF);
  __uint (max_entries, 4096);
} armed SEC (".maps");

/* Disks with Exclude=true (lm-excluded.c): never armed, never flushed by
 * us; the kernel's own writeback writes their data. */
struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, MAX_DISKS);
  __type (key, __u32);
  __type (value, __u8);
} excluded SEC (".maps");

/* Superblocks on removable and hot-plug disks (key: s_dev), filled by
 * lm-flush.c: 0 once the engine has written them, 1 from the first
 * dirtying since. Their data must not wait for laptop mode's long expiry. */
struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, 256);
  __type (key, __u32);
  __type (value, __u32);
} removable SEC (".maps");

struct
{
  __uint (type, BPF_MAP_TYPE_RINGBUF);
  __uint (max_entries, 4096);
} dirtied SEC (".maps");

#define REQ_OP_MASK 0xff

static __always_inline void
send_armed (struct bio *bio, __u32 key, __u64 now)
{
  struct lm_flush_armed *e = bpf_ringbuf_reserve (&armed, sizeof *e, 0);

  if (e == 0)
    return;
  e->boot_ns = now;
  e->major = key >> 20;
  e->minor = key & 0xfffff;
  e->pid = lm_current_pid_tgid (1) >> 32;
  e->write = (BPF_CORE_READ (bio, bi_opf) & REQ_OP_MASK) != 0;
  bpf_get_current_comm (e->comm, sizeof e->comm);
  bpf_ringbuf_submit (e, 0);
}

/* Only I/O that a process issued arms a disk: its reads, and writes such as
 * an fsync or O_DIRECT. Kernel threads are the flushers (periodic and the
 * ones our own syncfs hands work to), the journal, and stacking drivers
 * (loop, dm-crypt) whose I/O the process already issued one level up; if
 * they armed, every flush would arm the next one, mainline's fault. */
SEC ("raw_tp/block_bio_queue")
int
BPF_PROG (lm_flush_bio_queue, struct bio *bio)
{
  struct task_struct *task = (struct task_struct *) bpf_get_current_task ();
  struct gendisk *disk;
  struct lm_flush_disk *st;
  __u32 tid, key;
  __u64 now;

  /* A pure cache flush carries no data: not a reason to flush again. */
  if (BPF_CORE_READ (bio, bi_iter.bi_size) == 0)
    return 0;
  if (BPF_CORE_READ (task, flags) & PF_KTHREAD)
    return 0;
  tid = (__u32) lm_current_pid_tgid (0);
  if (bpf_map_lookup_elem (&flushers, &tid) != 0)
    return 0;
  disk = BPF_CORE_READ (bio, bi_bdev, bd_disk);
  if (disk == 0)
    return 0;
  key = ((__u32) BPF_CORE_READ (disk, major) << 20)
        | ((__u32) BPF_CORE_READ (disk, first_minor) & 0xfffff);
  if (bpf_map_lookup_elem (&excluded, &key) != 0)
    return 0;
  now = bpf_ktime_get_boot_ns ();

  st = bpf_map_lookup_elem (&disks, &key);
  if (st == 0)
    {
      struct lm_flush_disk init = { .last_ns = now, .armed = 1 };
      /* Of two CPUs racing on a new disk, only the inserter reports. */
      if (bpf_map_update_elem (&disks, &key, &init, BPF_NOEXIST) == 0)
        send_armed (bio, key, now);
      return 0;
    }
  st->last_ns = now;
  if (st->armed != 0)
    return 0;
  if (__sync_val_compare_and_swap (&st->armed, 0, 1) != 0)
    return 0;
  send_armed (bio, key, now);
  return 0;
}

/* A removable disk's filesystem dirtied: user space is told once, and
 * writes it within the stock expiry. Kernel threads count (a loop device's
 * worker dirties its backing file); the engine's own flush does not. */
SEC ("raw_tp/writeback_mark_inode_dirty")
int
BPF_PROG (lm_flush_mark_inode_dirty, struct inode *inode, int flags)
{
  __u32 dev = BPF_CORE_READ (inode, i_sb, s_dev);
  __u32 *pending = bpf_map_lookup_elem (&removable, &dev);
  __u32 tid;
  struct lm_flush_dirtied *e;

  if (pending == 0 || *pending != 0)
    return 0;
  tid = (__u32) lm_current_pid_tgid (0);
  if (bpf_map_lookup_elem (&flushers, &tid) != 0)
    return 0;
  if (__sync_val_compare_and_swap (pending, 0, 1) != 0)
    return 0;
  e = bpf_ringbuf_reserve (&dirtied, sizeof *e, 0);
  if (e == 0)
    return 0;
  e->boot_ns = bpf_ktime_get_boot_ns ();
  e->sb_dev = dev;
  e->pad = 0;
  bpf_ringbuf_submit (e, 0);
  return 0;
}
