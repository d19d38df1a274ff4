/* lm-inodes.bpf.h: who dirtied each inode, and the owner of the data a bio
 * carries. A kernel thread's write is blamed on the process that dirtied
 * the data it writes: the regular file its pages belong to, else the inode
 * the thread is writing back (the flusher writing btrfs's btree for the
 * files it expires); never on whoever last dirtied something else on the
 * disk. A filesystem's own writes outside a writeback (journal commits,
 * log covering, btrfs's transaction commits) carry no process's data.
 * Included by lm-attrib.bpf.c only, after its helpers. */
#pragma once

/* Bounded, least recently used first out: 16384 inodes of 64 bytes each
 * (1 MiB of the kernel's memory), more than the dirty inodes a laptop
 * holds at once. */
#define LM_INODE_DIRTIERS 16384
/* An inode written clean is forgotten this long after: a filesystem that
 * submits its data from workers (btrfs) may queue the bios just after the
 * flusher has moved on. */
#define LM_CLEAN_GRACE_NS (30ULL * 1000000000ULL)

struct lm_inode_key
{
  __u32 dev; /* the superblock's s_dev (btrfs: its anonymous number) */
  __u32 pad;
  __u64 ino;
};

struct
{
  __uint (type, BPF_MAP_TYPE_LRU_HASH);
  __uint (max_entries, LM_INODE_DIRTIERS);
  __type (key, struct lm_inode_key);
  __type (value, struct lm_inode_dirtier);
} inode_dirtiers SEC (".maps");

/* The inode each thread is writing back, between writeback_single_inode_start
 * and writeback_single_inode (key: tid): the flushers, and sync. */
#define LM_WB_WINDOWS 256

struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, LM_WB_WINDOWS);
  __type (key, __u32);
  __type (value, struct lm_inode_key);
} wb_windows SEC (".maps");

/* The same thread dirtying the same inode page after page, the common
 * case, costs no map lookup: one word per CPU of (inode, task), cleared
 * whenever an inode is written clean so that a redirtied one is recorded
 * again. */
#define LM_DIRTY_CACHE 64
__u64 dirty_cache[LM_DIRTY_CACHE] = {};

/* From scalars only (the verifier allows no arithmetic on a trusted
 * pointer): the inode's number and device, and the thread's id. */
static __always_inline __u64
dirty_tag (const struct lm_inode_key *key)
{
  return (key->ino * 0x9E3779B97F4A7C15ULL) ^ ((__u64) key->dev << 20)
         ^ ((__u64) (__u32) bpf_get_current_pid_tgid () << 44);
}

static __always_inline void
inode_key (struct inode *inode, struct lm_inode_key *key)
{
  key->dev = BPF_CORE_READ (inode, i_sb, s_dev);
  key->pad = 0;
  key->ino = BPF_CORE_READ (inode, i_ino);
}

/* The same from a tracepoint's own argument (a BTF pointer): direct loads,
 * no probe-read call, on the per-page path. */
static __always_inline void
inode_key_arg (struct inode *inode, struct lm_inode_key *key)
{
  key->dev = inode->i_sb->s_dev;
  key->pad = 0;
  key->ino = inode->i_ino;
}

#define LM_S_IFMT 0170000
#define LM_S_IFREG 0100000
#define LM_BTRFS_SUPER_MAGIC 0x9123683E
#define LM_BTRFS_BTREE_INODE 1

/* A regular file's: not a filesystem's own inode. btrfs's btree inode is
 * made with new_inode(), whose i_mode is whatever the recycled slab object
 * held: told apart by its number. */
static __always_inline int
is_regular_file (struct inode *inode)
{
  if ((inode->i_mode & LM_S_IFMT) != LM_S_IFREG)
    return 0;
  return !(inode->i_sb->s_magic == LM_BTRFS_SUPER_MAGIC && inode->i_ino == LM_BTRFS_BTREE_INODE);
}

/* I_DIRTY_PAGES, as __mark_inode_dirty's flags have it (see dirty_mask). */
static __always_inline __u64
dirty_pages_flag (void)
{
  if (bpf_core_enum_value_exists (enum inode_state_flags_t, I_DIRTY_PAGES))
    return bpf_core_enum_value (enum inode_state_flags_t, I_DIRTY_PAGES);
  return 4;
}

/* A process dirtied pages of @inode (@flags: __mark_inode_dirty's): one
 * map write while it stays the dirtier and the inode stays dirty. A time
 * stamp marked dirty (sync(1) and fsync mark I_DIRTY_SYNC) carries no
 * data. Whether it is a regular file is kept: only a regular file's pages
 * are a process's wherever they are written (a filesystem's own inodes,
 * btrfs's btree, are written by its threads on their own too). */
static __always_inline void
inode_dirtied (struct inode *inode, int flags, __u64 now)
{
  struct lm_inode_key key;
  struct lm_inode_dirtier d = {}, *old;

  if (((__u64) flags & dirty_pages_flag ()) == 0)
    return;
  inode_key_arg (inode, &key);
  __u64 tag = dirty_tag (&key);
  __u32 cpu = bpf_get_smp_processor_id () & (LM_DIRTY_CACHE - 1);
  if (dirty_cache[cpu] == tag)
    return;
  d.pid = lm_current_pid_tgid (1) >> 32;
  old = bpf_map_lookup_elem (&inode_dirtiers, &key);
  dirty_cache[cpu] = tag;
  /* The same process again: dirty again from now, in place. */
  if (old != 0 && old->pid == d.pid)
    {
      if (old->clean_ns != 0)
        {
          old->clean_ns = 0;
          old->dirtied_ns = now;
        }
      return;
    }
  d.dirtied_ns = now;
  d.regular = is_regular_file (inode);
  d.uid = (__u32) bpf_get_current_uid_gid ();
  current_names (&d.comm, &d.thread);
  d.cgroup = bpf_get_current_cgroup_id ();
  bpf_map_update_elem (&inode_dirtiers, &key, &d, BPF_ANY);
}

/* The inode's dirty bits: I_DIRTY_SYNC, _DATASYNC, _PAGES and _TIME, whose
 * values moved (an enum since 6.x; defines, bits 0-2 and 11, before). */
static __always_inline __u64
dirty_mask (void)
{
  if (bpf_core_enum_value_exists (enum inode_state_flags_t, I_DIRTY_PAGES))
    return bpf_core_enum_value (enum inode_state_flags_t, I_DIRTY_SYNC)
           | bpf_core_enum_value (enum inode_state_flags_t, I_DIRTY_DATASYNC)
           | bpf_core_enum_value (enum inode_state_flags_t, I_DIRTY_PAGES)
           | bpf_core_enum_value (enum inode_state_flags_t, I_DIRTY_TIME);
  return 0x807;
}

/* @inode's state bits: an enum (6.x), an unsigned long before. */
static __always_inline int
inode_state (struct inode *inode, __u64 *state)
{
  struct inode___ulong *old = (void *) inode;

  *state = 0;
  if (bpf_core_field_exists (inode->i_state))
    return bpf_probe_read_kernel (state, bpf_core_field_size (inode->i_state), &inode->i_state)
           == 0;
  if (bpf_core_field_exists (old->i_state))
    return bpf_probe_read_kernel (state, sizeof old->i_state, &old->i_state) == 0;
  return 0;
}

/* Does this __mark_inode_dirty (@flags; its tracepoint fires before the
 * state changes) begin a dirty spell of @inode's data: a regular file's
 * pages made dirty while it had none? Stock write-back writes them once
 * they expire (from dirtied_when, set at the first dirtying since the
 * inode was clean, in the same call or the time stamp's just before).
 * Metadata alone (a directory, chmod, a time stamp) is no spell: its
 * write at expiry does no I/O on a journaling filesystem. */
static __always_inline int
spell_starts (struct inode *inode, int flags)
{
  __u64 pages = dirty_pages_flag (), state;

  if (((__u64) flags & pages) == 0 || !is_regular_file (inode) || !inode_state (inode, &state))
    return 0;
  return (state & pages) == 0;
}

/* The current thread starts writing @inode back. */
SEC ("tp_btf/writeback_single_inode_start")
int
BPF_PROG (lm_inode_writing, struct inode *inode)
{
  struct lm_inode_key key;
  __u32 tid;

  if (!attrib_on)
    return 0;
  inode_key_arg (inode, &key);
  tid = (__u32) bpf_get_current_pid_tgid ();
  bpf_map_update_elem (&wb_windows, &tid, &key, BPF_ANY);
  return 0;
}

/* After a writeback of @inode: the thread's window ends; clean now, its
 * dirtier stands for no data (after the grace). */
SEC ("tp_btf/writeback_single_inode")
int
BPF_PROG (lm_inode_written, struct inode *inode)
{
  struct lm_inode_key key;
  struct lm_inode_dirtier *d;
  __u64 state;
  __u32 tid = (__u32) bpf_get_current_pid_tgid ();

  bpf_map_delete_elem (&wb_windows, &tid);
  if (!attrib_on)
    return 0;
  inode_key_arg (inode, &key);
  d = bpf_map_lookup_elem (&inode_dirtiers, &key);
  if (d == 0 || d->clean_ns != 0)
    return 0;
  if (inode_state (inode, &state) && (state & dirty_mask ()) == 0)
    {
      d->clean_ns = bpf_ktime_get_boot_ns ();
      for (int i = 0; i < LM_DIRTY_CACHE; i++)
        dirty_cache[i] = 0;
    }
  return 0;
}

/* @key's dirtier, unless written clean longer ago than the grace. */
static __always_inline struct lm_inode_dirtier *
live_dirtier (struct lm_inode_key *key, __u64 now)
{
  struct lm_inode_dirtier *d = bpf_map_lookup_elem (&inode_dirtiers, key);

  if (d == 0 || (d->clean_ns != 0 && now > d->clean_ns + LM_CLEAN_GRACE_NS))
    return 0;
  return d;
}

/* The process whose data a kernel thread's @bio carries, and its inode:
 * the dirtier of the regular file its first page belongs to (a page of
 * the page cache: anonymous and movable pages, and a stacking driver's
 * bounce pages, belong to none); else of the inode the thread is writing
 * back. */
static __always_inline struct lm_inode_dirtier *
bio_data_dirtier (struct bio *bio, __u64 now, __u64 *ino)
{
  struct lm_inode_key key, *window;
  struct lm_inode_dirtier *d;
  struct bio_vec *bv = BPF_CORE_READ (bio, bi_io_vec);
  struct page *page = bv != 0 ? BPF_CORE_READ (bv, bv_page) : 0;
  struct address_space *mapping = page != 0 ? BPF_CORE_READ (page, mapping) : 0;
  struct inode *inode = 0;
  __u32 tid;

  if (mapping != 0 && ((__u64) mapping & 3) == 0)
    inode = BPF_CORE_READ (mapping, host);
  if (inode != 0)
    {
      inode_key (inode, &key);
      d = live_dirtier (&key, now);
      if (d != 0 && d->regular)
        {
          *ino = key.ino;
          return d;
        }
    }
  tid = (__u32) bpf_get_current_pid_tgid ();
  window = bpf_map_lookup_elem (&wb_windows, &tid);
  if (window == 0)
    return 0;
  key = *window;
  d = live_dirtier (&key, now);
  if (d != 0)
    *ino = key.ino;
  return d;
}
