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
#include "lm-jclock.bpf.h"
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
 * us; the kernel's own writeback writes their data. Read once per disk,
 * into its "disks" entry's flag, which lm-excluded.c rewrites on a change. */
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
/* Within this of the disk's last arming I/O, its time is taken from the
 * jiffies (lm-jclock.bpf.h): a jiffy's precision, for a flush that waits
 * LaptopModeSeconds (at least 1 s). */
#define FAST_NS 1000000000ULL

/* Set before load: the daemon's own process (its thread group id), whose
 * threads alone can be flushers. */
const volatile __u32 self_tgid = 0;

/* The daemon's flush threads are its own: any other thread is looked up in
 * no map. */
static __always_inline int
current_is_flusher (void)
{
  __u64 id = lm_current_pid_tgid (0);
  __u32 tid = (__u32) id;

  if ((__u32) (id >> 32) != self_tgid)
    return 0;
  return bpf_map_lookup_elem (&flushers, &tid) != 0;
}

static __always_inline void
send_armed (int write, __u32 key, __u64 now)
{
  struct lm_flush_armed *e = bpf_ringbuf_reserve (&armed, sizeof *e, 0);

  if (e == 0)
    return;
  e->boot_ns = now;
  e->major = key >> 20;
  e->minor = key & 0xfffff;
  e->pid = lm_current_pid_tgid (1) >> 32;
  e->write = write;
  bpf_get_current_comm (e->comm, sizeof e->comm);
  bpf_ringbuf_submit (e, 0);
}

/* Only I/O that a process issued arms a disk: its reads, and writes such as
 * an fsync or O_DIRECT. Kernel threads are the flushers (periodic and the
 * ones our own syncfs hands work to), the journal, and stacking drivers
 * (loop, dm-crypt) whose I/O the process already issued one level up; if
 * they armed, every flush would arm the next one, mainline's fault. */
SEC ("tp_btf/block_bio_queue")
int
BPF_PROG (lm_flush_bio_queue, struct bio *bio)
{
  struct block_device *bdev;
  struct gendisk *disk;
  struct lm_flush_disk *st;
  __u64 now;
  __u32 key;

  /* The cheapest tests first: a kernel thread's bio, or a pure cache
   * flush (no data: not a reason to flush again). */
  if (bpf_get_current_task_btf ()->flags & PF_KTHREAD)
    return 0;
  bdev = bio->bi_bdev;
  if (bdev == 0 || bio->bi_iter.bi_size == 0)
    return 0;
  disk = bdev->bd_disk;
  if (disk == 0)
    return 0;
  key = ((__u32) disk->major << 20) | ((__u32) disk->first_minor & 0xfffff);

  st = bpf_map_lookup_elem (&disks, &key);
  if (st == 0)
    {
      struct lm_flush_disk init = {};

      if (current_is_flusher ())
        return 0;
      now = lm_jclock_sync ((struct lm_jclock *) init.clock, FAST_NS);
      init.last_ns = now;
      init.excluded = bpf_map_lookup_elem (&excluded, &key) != 0;
      init.armed = !init.excluded;
      /* Of two CPUs racing on a new disk, only the inserter reports. */
      if (bpf_map_update_elem (&disks, &key, &init, BPF_NOEXIST) == 0 && init.armed)
        send_armed ((bio->bi_opf & REQ_OP_MASK) != 0, key, now);
      return 0;
    }
  if (st->excluded || current_is_flusher ())
    return 0;
  if (!lm_jclock_fast ((struct lm_jclock *) st->clock, &now))
    now = lm_jclock_sync ((struct lm_jclock *) st->clock, FAST_NS);
  if (now > st->last_ns)
    st->last_ns = now;
  if (st->armed != 0)
    return 0;
  if (__sync_val_compare_and_swap (&st->armed, 0, 1) != 0)
    return 0;
  send_armed ((bio->bi_opf & REQ_OP_MASK) != 0, key, now);
  return 0;
}

/* A removable disk's filesystem dirtied: user space is told once, and
 * writes it within the stock expiry. Kernel threads count (a loop device's
 * worker dirties its backing file); the engine's own flush does not. */
SEC ("tp_btf/writeback_mark_inode_dirty")
int
BPF_PROG (lm_flush_mark_inode_dirty, struct inode *inode, int flags)
{
  struct super_block *sb = inode->i_sb;
  __u32 dev, *pending;
  struct lm_flush_dirtied *e;

  if (sb == 0)
    return 0;
  dev = sb->s_dev;
  pending = bpf_map_lookup_elem (&removable, &dev);
  if (pending == 0 || *pending != 0)
    return 0;
  if (current_is_flusher ())
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
