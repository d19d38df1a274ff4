/* lm-vmlinux.h: the few kernel types lm-attrib.bpf.c reads, written by hand.
 * Only the fields used, marked preserve_access_index so libbpf relocates
 * each access against the running kernel's BTF (CO-RE); never add a field
 * the program does not read.
 *
 * Why not `bpftool btf dump file /sys/kernel/btf/vmlinux format c` at build
 * time: the build would then need a BTF-enabled kernel on the build machine
 * (chroots, containers, CI and distribution builders often have none or a
 * different one) and would pull in a 3 MB header; CO-RE makes the layout of
 * the build machine irrelevant anyway, as offsets are fixed up at load. */
#pragma once

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;

typedef __u32 dev_t;
typedef __u64 sector_t;
typedef __u32 blk_opf_t;

/* UAPI constants (include/uapi/linux/bpf.h), stable by definition. */
enum bpf_map_type
{
  BPF_MAP_TYPE_HASH = 1,
  BPF_MAP_TYPE_ARRAY = 2,
  BPF_MAP_TYPE_LRU_HASH = 9,
  BPF_MAP_TYPE_RINGBUF = 27,
};

enum
{
  BPF_ANY = 0,
  BPF_NOEXIST = 1,
};

/* bpf_get_ns_current_pid_tgid()'s answer (UAPI). */
struct bpf_pidns_info
{
  __u32 pid;
  __u32 tgid;
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct gendisk
{
  int major;
  int first_minor;
};

struct block_device
{
  dev_t bd_dev;
  struct gendisk *bd_disk;
  void *bd_holder; /* a filesystem's: its super_block (lm-attrib.bpf.c checks) */
};

struct bvec_iter
{
  sector_t bi_sector;
  unsigned int bi_size;
};

/* A page of the page cache: its mapping is its file's (low bits set:
 * anonymous or movable, no file). */
struct inode;
struct address_space
{
  struct inode *host;
};

struct page
{
  struct address_space *mapping; /* inside anonymous unions; CO-RE finds it */
};

struct bio_vec
{
  struct page *bv_page;
};

struct bio
{
  struct block_device *bi_bdev;
  blk_opf_t bi_opf;
  struct bvec_iter bi_iter;
  struct bio_vec *bi_io_vec;
};

struct file_system_type
{
  int fs_flags;
};

struct super_block
{
  unsigned long s_magic;
  dev_t s_dev;
  struct file_system_type *s_type;
  struct block_device *s_bdev;
};

/* The dirty bits of an inode's state, an enum since 6.x (the values are
 * relocated; lm-inodes.bpf.h has the older defines). */
enum inode_state_flags_t
{
  I_DIRTY_SYNC = 16,
  I_DIRTY_DATASYNC = 32,
  I_DIRTY_PAGES = 64,
  I_DIRTY_TIME = 4096,
};

struct inode
{
  unsigned short i_mode;
  unsigned long i_ino;
  struct super_block *i_sb;
  enum inode_state_flags_t i_state;
};

/* The same, on kernels whose i_state is an unsigned long (a CO-RE flavour:
 * libbpf matches it to struct inode). */
struct inode___ulong
{
  unsigned long i_state;
};

/* Pid namespaces (lm-pidns.bpf.h): a task's numbers per level. */
struct ns_common
{
  unsigned int inum;
};

struct pid_namespace
{
  struct ns_common ns;
};

struct upid
{
  int nr;
  struct pid_namespace *ns;
};

struct pid
{
  unsigned int level;
  struct upid numbers[1];
};

struct css_set;

struct task_struct
{
  unsigned int flags;
  struct task_struct *group_leader;
  struct pid *thread_pid;
  char comm[16];
  struct css_set *cgroups;
};

/* A written file's name and its directory's (lm-writers.bpf.h). */
struct qstr
{
  const unsigned char *name;
};

struct dentry
{
  struct dentry *d_parent;
  struct qstr d_name;
};

struct path
{
  struct dentry *dentry;
};

struct file
{
  struct path f_path;
};

struct kiocb
{
  struct file *ki_filp;
};

/* A cgroup as cgroup_rmdir sees it: its id and whether it is v2's. */
struct kernfs_node
{
  __u64 id;
};

struct cgroup_root;

struct cgroup
{
  struct kernfs_node *kn;
  struct cgroup_root *root;
};

struct css_set
{
  struct cgroup *dfl_cgrp;
};

/* Passthrough (driver-private) requests, seen at block_rq_issue. */
struct request_queue
{
  struct gendisk *disk;
};

struct request
{
  struct request_queue *q;
  blk_opf_t cmd_flags;
};

/* A kprobe's registers, for the first argument of the probed function
 * (LM_KPROBE_ARG1), by the kernel's own field names (not the UAPI's that
 * bpf_tracing.h's PT_REGS_PARM1 wants). Only where it is written here. */
#if defined(__TARGET_ARCH_x86)
struct pt_regs
{
  unsigned long di;
};
#define LM_KPROBE_ARG1(regs) ((regs)->di)
#elif defined(__TARGET_ARCH_arm64)
struct pt_regs
{
  __u64 regs[31]; /* inside an anonymous union; CO-RE finds it there */
};
#define LM_KPROBE_ARG1(regs) ((regs)->regs[0])
#endif

#pragma clang attribute pop
