/* lm-attrib.bpf.c: the daemon's one BPF object, shared by the bpf
 * attribution backend (lm-attrib-bpf.c) and the user-space laptop-mode
 * engine (lm-flush.c) through lm-bpf-shared.c, so that each tracepoint runs
 * one program, with one per-disk lookup, whatever is on.
 * Attribution keeps each disk's last I/O time and each inode's dirtier and
 * sends a record only for a spin-up (an I/O after idle_ns without any); the engine
 * keeps, per disk, the time of the last I/O that should lead to a flush and
 * tells user space only when a disk becomes armed, or when a filesystem on
 * a removable disk is first dirtied. User space never wakes for ordinary
 * I/O. It must never block or loop. */
#include "lm-vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "lm-attrib-bpf-event.h"
#include "lm-flush-bpf-event.h"
#include "lm-jclock.bpf.h"
#include "lm-pidns.bpf.h"

char LICENSE[] SEC ("license") = "GPL";

#define PF_KTHREAD 0x00200000
#define PF_KSWAPD 0x00020000
#define FS_REQUIRES_DEV 1
#define REQ_OP_MASK 0xff

#define MAX_FLUSHERS 64

/* Its maps are sized by MAX_DISKS. */
#include "lm-activity.bpf.h"

/* Set before load: the daemon's own process. Its commands (CHECK POWER
 * MODE, which never wakes a disk, the standby timer, APM) are not wake-ups,
 * and only its threads can be flushers. */
const volatile __u32 self_tgid = 0;

/* Set by lm-bpf-shared.c while each user is on: attribution (spin-ups,
 * activity, dirtiers) and the engine (arming, removable filesystems). */
__u32 attrib_on = 0;
__u32 engine_on = 0;
/* Set by lm-attrib-bpf.c before attribution_on: a disk is asleep after
 * this long without I/O; what happened before monitoring began is unknown,
 * so its start counts as the last I/O of every disk. */
__u64 idle_ns = 20000000000ULL;
__u64 start_ns = 0;

struct
{
  __uint (type, BPF_MAP_TYPE_RINGBUF);
  __uint (max_entries, 64 * 1024);
} events SEC (".maps");

/* Disks (and what is stacked on them only) with Exclude=true, kept by the
 * daemon (lm-excluded.c): their I/O is not looked at, so it never wakes
 * user space. Read once per disk, into its slot's flag (disk_slot_new),
 * which lm-excluded.c rewrites when the set changes. */
struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, MAX_DISKS);
  __type (key, __u32);
  __type (value, __u8);
} excluded SEC (".maps");

/* Each whole disk's state ("disks"), found through a cache of its slot
 * index: no hash lookup per bio. */
#include "lm-disks.bpf.h"

/* --- the engine's ---------------------------------------------------------- */

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

static __always_inline __u32
disk_key (struct gendisk *disk)
{
  return ((__u32) disk->major << 20) | ((__u32) disk->first_minor & 0xfffff);
}

static __always_inline int
current_is_kthread (void)
{
  return (bpf_get_current_task_btf ()->flags & PF_KTHREAD) != 0;
}

/* Whether @now falls in the second of a process's reads (or writes) on
 * disk @d last noted in "runs": then there is nothing to note. */
static __always_inline int
second_noted (struct lm_attrib_disk *d, int write, __u64 now)
{
  __u64 end = write ? d->act_end[1] : d->act_end[0];

  return now < end && now + 1000000000ULL >= end;
}

/* A read or write second of a process's I/O on disk @d: the "runs" map is
 * looked up only for the first I/O of each second. */
static __always_inline void
note_second (struct lm_attrib_disk *d, __u32 key, int write, __u64 now)
{
  __u64 *end = write ? &d->act_end[1] : &d->act_end[0];

  if (second_noted (d, write, now))
    return;
  *end = (now / 1000000000ULL + 1) * 1000000000ULL;
  note_activity (key, write ? LM_BPF_ACT_WRITE : LM_BPF_ACT_READ, now, 0);
}

/* Processes, not threads: @comm gets the process's name (its thread group
 * leader's, as the pid is the tgid) and @thread the current thread's own
 * ("Cache2 I/O", "iou-wrk-42"). Only on the rare paths. */
static __always_inline void
current_names (char (*comm)[LM_BPF_COMM_LEN], char (*thread)[LM_BPF_COMM_LEN])
{
  struct task_struct *task = (struct task_struct *) bpf_get_current_task ();

  bpf_get_current_comm (thread, sizeof *thread);
  if (BPF_CORE_READ_STR_INTO (comm, task, group_leader, comm) <= 0)
    __builtin_memcpy (comm, thread, sizeof *comm);
}

/* Who dirtied each inode (inode_dirtiers): what a kernel thread writes is
 * blamed on the owner of its data. */
#include "lm-inodes.bpf.h"

/* The idle-gap filter, in the kernel: TRUE once per gap of at least
 * idle_ns on disk @key (user space wakes only then), with *prev the disk's
 * last I/O before it. Two CPUs may see the same gap; only the one that
 * moves the time on reports, so a spin-up is reported once. */
static __always_inline int
idle_gap (struct lm_attrib_disk *d, __u64 now, __u64 *prev)
{
  *prev = d->last_io;
  if (now < *prev + idle_ns)
    {
      if (now > *prev)
        d->last_io = now;
      return 0;
    }
  return __sync_val_compare_and_swap (&d->last_io, *prev, now) == *prev;
}

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

/* The engine: only I/O that a process issued arms a disk (the caller
 * checked): its reads, and writes such as an fsync or O_DIRECT. Kernel
 * threads are the flushers (periodic and the ones our own syncfs hands
 * work to), the journal, and stacking drivers (loop, dm-crypt) whose I/O
 * the process already issued one level up; if they armed, every flush
 * would arm the next one, mainline's fault. Nor does our own flush. */
static __always_inline void
engine_arm (struct lm_attrib_disk *d, __u32 key, int write, __u64 now)
{
  if (current_is_flusher ())
    return;
  if (now > d->last_ns)
    d->last_ns = now;
  if (d->armed != 0)
    return;
  /* Of two CPUs arming at once, only the one that flips it reports. */
  if (__sync_val_compare_and_swap (&d->armed, 0, 1) != 0)
    return;
  send_armed (write, key, now);
}

/* What lm_bio_queue does for a process's bio on disk @d when its fast path
 * found something to do: bit 0 of @what: a write; bit 1: a new second of
 * activity; bit 2: the engine's time to refresh or the disk to arm. Apart,
 * so that the fast path keeps its few registers. */
#define LM_BIO_WRITE 1
#define LM_BIO_ACT 2
#define LM_BIO_ARM 4

static __noinline int
bio_noted (struct lm_attrib_disk *d, __u32 key, __u32 what, __u64 now)
{
  int write = (what & LM_BIO_WRITE) != 0;

  if (d == 0 || current_is_kthread ())
    return 0;
  if (what & LM_BIO_ACT)
    note_second (d, key, write, now);
  if (what & LM_BIO_ARM)
    engine_arm (d, key, write, now);
  return 0;
}

/* A record of the "events" ring for disk @key at @now, its submitter the
 * current task and every other field zero; 0 when the ring is full. */
static __always_inline struct lm_bpf_spinup *
spinup_reserve (__u32 key, __u64 now)
{
  struct lm_bpf_spinup *e = bpf_ringbuf_reserve (&events, sizeof *e, 0);

  if (e == 0)
    return 0;
  __builtin_memset (e, 0, sizeof *e);
  e->boot_ns = now;
  e->major = key >> 20;
  e->minor = key & 0xfffff;
  e->pid = lm_current_pid_tgid (1) >> 32;
  e->uid = (__u32) bpf_get_current_uid_gid ();
  current_names (&e->comm, &e->thread);
  e->cgroup = bpf_get_current_cgroup_id ();
  return e;
}

/* The data @e's bio carries is @w's, of inode @ino. */
static __always_inline void
spinup_dirtier (struct lm_bpf_spinup *e, const struct lm_inode_dirtier *w, __u64 ino)
{
  e->have_dirtier = 1;
  e->dirtier_ino = ino;
  e->dirtier_pid = w->pid;
  e->dirtier_uid = w->uid;
  __builtin_memcpy (e->dirtier_comm, w->comm, sizeof e->dirtier_comm);
  __builtin_memcpy (e->dirtier_thread, w->thread, sizeof e->dirtier_thread);
  e->dirtier_cgroup = w->cgroup;
}

/* A kernel thread's spin-up whose first bio carried nobody's data (the
 * flusher writing a block device's own pages, a superblock, before the
 * files whose expiry started its pass): for this long, the first kernel
 * thread's bio on the disk that carries a process's data names it, in an
 * "amends" record (LM_ATTRIB_SEEK_US in lm-attrib-stack.h: user space
 * holds such a spin-up back a little longer). */
#define LM_SEEK_NS 1000000000ULL

static __noinline int
bio_seek (struct bio *bio, struct lm_attrib_disk *d, __u32 key, __u64 now)
{
  struct lm_inode_dirtier *w;
  __u64 until, ino = 0;

  if (d == 0)
    return 0;
  until = d->seek_until;
  if (until == 0)
    return 0;
  if (now > until)
    {
      __sync_val_compare_and_swap (&d->seek_until, until, 0);
      return 0;
    }
  if (!current_is_kthread () || (bpf_get_current_task_btf ()->flags & PF_KSWAPD) != 0)
    return 0;
  w = bio_data_dirtier (bio, now, &ino);
  if (w == 0)
    return 0;
  /* Of two CPUs finding data at once, one amends. */
  if (__sync_val_compare_and_swap (&d->seek_until, until, 0) != until)
    return 0;
  struct lm_bpf_spinup *e = spinup_reserve (key, now);
  if (e == 0)
    return 0;
  e->sector = bio->bi_iter.bi_sector;
  e->write = (bio->bi_opf & REQ_OP_MASK) != 0;
  e->kthread = 1;
  spinup_dirtier (e, w, ino);
  e->amends = 1;
  bpf_ringbuf_submit (e, 0);
  return 0;
}

/* A bio on disk @d past the fast path's window: the precise clock, the
 * idle-gap test and, for a spin-up, the record. */
static __noinline int
bio_slow (struct bio *bio, struct lm_attrib_disk *d, __u32 key, int write)
{
  struct lm_jclock *clock;
  struct lm_jclock_reading r;
  __u64 now, prev;
  int user, gap;

  if (d == 0)
    return 0;
  clock = (struct lm_jclock *) d->clock;
  user = !current_is_kthread ();
  r = lm_jclock_read ();
  now = r.ns;
  if (user && attrib_on)
    note_second (d, key, write, now);
  if (user && engine_on)
    engine_arm (d, key, write, now);
  if (!attrib_on)
    {
      /* Kept while attribution is off, for when it comes on (it resets
       * every disk's anyway, lm-attrib-bpf.c). */
      if (now > d->last_io)
        d->last_io = now;
      lm_jclock_publish (clock, r, idle_ns >> 3);
      return 0;
    }
  /* Decided before the fast path opens (lm_jclock_publish): fio's ring
   * workers on two CPUs lost one spin-up in eight to it. */
  gap = idle_gap (d, now, &prev);
  lm_jclock_publish (clock, r, idle_ns >> 3);
  if (!gap)
    return bio_seek (bio, d, key, now);

  struct lm_bpf_spinup *e = spinup_reserve (key, now);
  if (e == 0)
    return 0;
  e->prev_ns = prev;
  e->sector = bio->bi_iter.bi_sector;
  e->write = write;
  e->kthread = !user;
  /* kswapd's page-out is reclaim (swap), not anybody's dirty data. */
  e->kswapd = (bpf_get_current_task_btf ()->flags & PF_KSWAPD) != 0;
  if (e->kthread && !e->kswapd)
    {
      __u64 ino = 0;
      struct lm_inode_dirtier *w = bio_data_dirtier (bio, now, &ino);
      if (w != 0)
        spinup_dirtier (e, w, ino);
      else
        d->seek_until = now + LM_SEEK_NS;
    }
  bpf_ringbuf_submit (e, 0);
  return 0;
}

/* Every bio of the machine passes here, once for attribution and the
 * engine together, so the common case comes first and costs little: a
 * disk that did I/O less than an eighth of idle_ns ago cannot be waking
 * up, and only its last I/O time (a process's second of activity, the
 * engine's last arming I/O) is refreshed, from the jiffies
 * (lm-jclock.bpf.h). Its slot is found without a hash lookup
 * (lm-disks.bpf.h). */
SEC ("tp_btf/block_bio_queue")
int
BPF_PROG (lm_bio_queue, struct bio *bio)
{
  struct block_device *bdev = bio->bi_bdev;
  struct lm_attrib_disk *d;
  struct gendisk *disk;
  __u64 now;
  __u32 key, what;
  int write;

  /* A pure flush carries no data and does not by itself spin a disk up. */
  if (bdev == 0 || bio->bi_iter.bi_size == 0)
    return 0;
  disk = bdev->bd_disk;
  if (disk == 0)
    return 0;
  key = disk_key (disk);
  d = disk_slot (key);
  if (d == 0 || d->excluded)
    return 0;
  write = (bio->bi_opf & REQ_OP_MASK) != 0;
  if (!lm_jclock_fast ((struct lm_jclock *) d->clock, &now))
    return bio_slow (bio, d, key, write);
  if (now > d->last_io)
    d->last_io = now;
  if (d->seek_until != 0)
    bio_seek (bio, d, key, now);
  /* Most bios find nothing to do for either part (the same second of
   * activity, the engine's time already this jiffy's): tested before who
   * issued the bio, which takes a helper call. */
  what = write ? LM_BIO_WRITE : 0;
  if (attrib_on && !second_noted (d, write, now))
    what |= LM_BIO_ACT;
  if (engine_on && (now > d->last_ns || d->armed == 0))
    what |= LM_BIO_ARM;
  if (what & (LM_BIO_ACT | LM_BIO_ARM))
    return bio_noted (d, key, what, now);
  return 0;
}

/* The engine's side: a removable disk's filesystem dirtied: user space is
 * told once, and writes it within the stock expiry. Kernel threads count
 * (a loop device's worker dirties its backing file); the engine's own
 * flush does not. */
static __always_inline void
removable_dirtied (struct super_block *sb)
{
  __u32 dev = sb->s_dev;
  __u32 *pending = bpf_map_lookup_elem (&removable, &dev);
  struct lm_flush_dirtied *e;

  if (pending == 0 || *pending != 0)
    return;
  if (current_is_flusher ())
    return;
  if (__sync_val_compare_and_swap (pending, 0, 1) != 0)
    return;
  e = bpf_ringbuf_reserve (&dirtied, sizeof *e, 0);
  if (e == 0)
    return;
  e->boot_ns = bpf_ktime_get_boot_ns ();
  e->sb_dev = dev;
  e->pad = 0;
  bpf_ringbuf_submit (e, 0);
}

/* Every inode a process dirties, with who did it (lm-inodes.bpf.h): the
 * writeback a flusher does later is that process's doing. Kernel threads
 * dirty too (journal, writeback's own time updates) and are never
 * recorded: their data is nobody's. */
/* Magics of include/uapi/linux/magic.h: what the replay needs to know of
 * where data was dirtied (each filesystem commits on its own clock). */
static __always_inline __u32
fs_kind (struct super_block *sb)
{
  unsigned long magic = sb->s_magic;

  if (magic == 0xEF53) /* EXT4_SUPER_MAGIC (ext2, ext3 too) */
    return LM_BPF_FS_EXT4;
  if (magic == 0x9123683E) /* BTRFS_SUPER_MAGIC */
    return LM_BPF_FS_BTRFS;
  if (magic == 0x58465342) /* XFS_SUPER_MAGIC */
    return LM_BPF_FS_XFS;
  if (magic == 0x4d44 || magic == 0x2011BAB0) /* MSDOS_SUPER_MAGIC, EXFAT_SUPER_MAGIC */
    return LM_BPF_FS_NO_JOURNAL;
  return LM_BPF_FS_OTHER;
}

/* The disk a process's change to a file on @sb goes to, as the "runs"
 * map keys it; 0: not looked at (no disk at all, a disk not watched or
 * excluded). Without a gendisk, the filesystem's device number: its disks
 * are found in user space when the run is read. */
static __always_inline __u32
changed_disk_key (struct super_block *sb)
{
  struct block_device *bdev = sb->s_bdev;
  struct gendisk *disk = 0;
  __u32 key;

  if (bdev != 0)
    disk = bdev->bd_disk;
  if (disk != 0)
    {
      struct lm_attrib_disk *slot;

      key = disk_key (disk);
      slot = disk_slot (key);
      if (slot == 0 || slot->excluded)
        return 0;
      return key;
    }
  /* tmpfs, proc and the like have no disk at all: not looked at. */
  if ((sb->s_type->fs_flags & FS_REQUIRES_DEV) == 0)
    return 0;
  key = sb->s_dev;
  if (key == 0 || (key >> 20) != 0)
    return 0;
  return key;
}

SEC ("tp_btf/writeback_mark_inode_dirty")
int
BPF_PROG (lm_mark_inode_dirty, struct inode *inode, int flags)
{
  struct super_block *sb;
  __u64 now;
  __u32 key;

  sb = inode->i_sb;
  if (sb == 0)
    return 0;
  if (engine_on)
    removable_dirtied (sb);
  if (!attrib_on || current_is_kthread ())
    return 0;
  key = changed_disk_key (sb);
  if (key == 0)
    return 0;
  now = bpf_ktime_get_boot_ns ();
  note_activity (key, LM_BPF_ACT_DIRTY, now, fs_kind (sb));
  if (spell_starts (inode, flags))
    note_activity (key, LM_BPF_ACT_SPELL, now, fs_kind (sb));
  inode_dirtied (inode, flags, now);
  return 0;
}

/* A file's ctime changed (a write's time update, a chmod, a rename): a
 * change its filesystem's journal or transaction commits. Where times are
 * multigrain (ext4, xfs and btrfs since Linux 6.13) it fires where
 * __mark_inode_dirty may not: btrfs and xfs update times in a transaction
 * of their own (btrfs_update_time, xfs_vn_update_time), so an editor's
 * writes to a page already dirty were invisible to the estimate. Counted
 * as a dirtied second (the same second is counted once); no spell: no page
 * became dirty. Loaded only where the kernel has the tracepoint
 * (lm-bpf-shared.c). */
SEC ("tp_btf/ctime_ns_xchg")
int
BPF_PROG (lm_ctime_changed, struct inode *inode, __u32 old, __u32 new, __u32 cur)
{
  struct super_block *sb = inode->i_sb;
  __u32 key;

  if (!attrib_on || sb == 0 || current_is_kthread ())
    return 0;
  key = changed_disk_key (sb);
  if (key == 0)
    return 0;
  note_activity (key, LM_BPF_ACT_DIRTY, bpf_ktime_get_boot_ns (), fs_kind (sb));
  return 0;
}

/* A cgroup v2 directory removed (a transient unit's scope or service
 * ended): its path, by id, for spin-ups that come later from data a
 * process in it dirtied. Once per removal, never per I/O. */
struct
{
  __uint (type, BPF_MAP_TYPE_LRU_HASH);
  __uint (max_entries, LM_BPF_GONE_CGROUPS);
  __type (key, __u64);
  __type (value, struct lm_bpf_cgroup_path);
} gone_cgroups SEC (".maps");

SEC ("tp_btf/cgroup_rmdir")
int
BPF_PROG (lm_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
  struct lm_bpf_cgroup_path v;
  __u64 id;

  struct task_struct *task = (struct task_struct *) bpf_get_current_task ();

  /* Only v2's (v1's ids are another space): the root of the remover's
   * own cgroup on the default hierarchy. */
  if (BPF_CORE_READ (cgrp, root) != BPF_CORE_READ (task, cgroups, dfl_cgrp, root))
    return 0;
  id = BPF_CORE_READ (cgrp, kn, id);
  if (bpf_probe_read_kernel_str (v.path, sizeof v.path, path) <= 0)
    return 0;
  bpf_map_update_elem (&gone_cgroups, &id, &v, BPF_ANY);
  return 0;
}

/* Who writes sysctls and sysfs files (fentry or kprobes). */
#include "lm-writers.bpf.h"

/* Passthrough requests: fentry, kprobes or block_rq_issue. */
#include "lm-passthrough.bpf.h"
