/* lm-disks.bpf.h: each whole disk's state, found for every bio without a
 * hash lookup. The slots live in an array (its lookups are inlined by the
 * verifier); a disk's slot index is found in a small direct-mapped cache
 * of dev → index, and only when that misses (a disk's first bio, or two
 * disks sharing a cache line) in the "disk_index" hash, where a disk gets
 * its slot on its first I/O. Slots are never given back: a disk that goes
 * and comes back under the same number finds its old slot, as it found its
 * old entry when the slots were a hash. Included by lm-attrib.bpf.c only. */
#pragma once

#include <bpf/bpf_helpers.h>

#include "lm-attrib-bpf-event.h"

/* uapi's linux/bpf.h value; lm-vmlinux.h declares only what is used. */
#ifndef BPF_F_MMAPABLE
#define BPF_F_MMAPABLE (1U << 10)
#endif

/* The slots (struct lm_attrib_disk, lm-attrib-bpf-event.h), found by user
 * space through "disk_index" and written there in place, one field at a
 * time, through a mapping of the array (lm-bpf-shared.c): a copy written
 * back would undo what the programs wrote meanwhile. */
struct
{
  __uint (type, BPF_MAP_TYPE_ARRAY);
  __uint (map_flags, BPF_F_MMAPABLE);
  __uint (max_entries, MAX_DISKS);
  __type (key, __u32);
  __type (value, struct lm_attrib_disk);
} disks SEC (".maps");

/* MKDEV (major, first_minor) → its slot in "disks". */
struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, MAX_DISKS);
  __type (key, __u32);
  __type (value, __u32);
} disk_index SEC (".maps");

/* The next slot never given out (slots past MAX_DISKS: no disk gets one,
 * its I/O is not looked at, as when the hash was full). */
__u32 next_slot = 0;

/* dev → slot, (key << 32) | (index + 1), 0: empty. One 64-bit word per
 * entry, written whole, so a reader sees a key with its own index; a key
 * keeps its index forever, so any entry that names it is right. Shared by
 * the CPUs and written only on a miss; direct-mapped (not one entry per
 * CPU) so that a bio that goes through a stack (dm-crypt on sda: dm-0,
 * then sda) does not evict the disk of the level below. */
#define LM_SLOT_CACHE 256
__u64 slot_cache[LM_SLOT_CACHE] = {};

static __always_inline __u32
slot_hash (__u32 key)
{
  return (key * 2654435761u) >> 24; /* Knuth's multiplicative hash: 8 bits */
}

/* What happened before monitoring began is unknown, so a new slot's last
 * I/O is the start; whether the disk is excluded is looked up this once
 * (lm-excluded.c rewrites the flag when the set changes). A disk first met
 * while it rewrites the set may keep the old flag until the next change: a
 * few microseconds' window at a disk's first I/O. Returns the index, or
 * MAX_DISKS when there is none. */
static __noinline __u32
disk_slot_new (__u32 key)
{
  __u32 *found = bpf_map_lookup_elem (&disk_index, &key);
  struct lm_attrib_disk *d;
  __u32 i;

  if (found != 0)
    return *found;
  i = __sync_fetch_and_add (&next_slot, 1);
  if (i >= MAX_DISKS)
    return MAX_DISKS;
  d = bpf_map_lookup_elem (&disks, &i);
  if (d == 0)
    return MAX_DISKS;
  /* Never used before (slots are not given back): all zero. */
  d->last_io = start_ns;
  d->excluded = bpf_map_lookup_elem (&excluded, &key) != 0;
  if (bpf_map_update_elem (&disk_index, &key, &i, BPF_NOEXIST) == 0)
    return i;
  /* Another CPU gave the disk a slot first: that one is its slot (this
   * one stays unused). */
  found = bpf_map_lookup_elem (&disk_index, &key);
  return found != 0 ? *found : MAX_DISKS;
}

/* Disk @key's slot, made on its first I/O; 0 when there is none. */
static __always_inline struct lm_attrib_disk *
disk_slot (__u32 key)
{
  __u32 h = slot_hash (key) & (LM_SLOT_CACHE - 1);
  __u64 c = slot_cache[h];
  __u32 i;

  if ((__u32) (c >> 32) == key && (__u32) c != 0)
    i = (__u32) c - 1;
  else
    {
      i = disk_slot_new (key);
      if (i >= MAX_DISKS)
        return 0;
      slot_cache[h] = ((__u64) key << 32) | (i + 1);
    }
  return bpf_map_lookup_elem (&disks, &i);
}
