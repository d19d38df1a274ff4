/* lm-attrib-bpf-event.h: the record the BPF program sends for a spin-up.
 * Shared by the kernel side and lm-attrib-bpf.c; fixed-size fields only,
 * never a pointer, so both sides agree on its layout. */
#pragma once

#define LM_BPF_COMM_LEN 16

struct lm_bpf_spinup
{
  __u64 boot_ns; /* CLOCK_BOOTTIME of the waking bio */
  __u64 sector;  /* on the whole disk (partitions are remapped before the tracepoint) */
  __u64 dirtier_ino;
  __u32 major; /* the whole disk */
  __u32 minor;
  __u32 pid; /* the submitter's thread group */
  __u32 uid;
  __u32 write;
  __u32 kthread;      /* the submitter is a kernel thread (flusher, journal) */
  __u32 have_dirtier; /* the bio's data is a process's: the dirtier of its inode (or, in
                       * user space, of the data an upper dm/md device's bio carried) */
  __u32 dirtier_pid;
  __u32 dirtier_uid;
  __u32 passthrough; /* a driver-private request (SG_IO, NVMe passthrough), not a bio */
  char comm[LM_BPF_COMM_LEN];
  char dirtier_comm[LM_BPF_COMM_LEN];
  __u64 prev_ns; /* the disk's last I/O before the gap (CLOCK_BOOTTIME) */
  /* comm above is the process's name (its thread group leader's); these
   * are the names of the threads themselves (the submitter's, the one that
   * dirtied the data). */
  char thread[LM_BPF_COMM_LEN];
  char dirtier_thread[LM_BPF_COMM_LEN];
  __u32 kswapd; /* the submitter is kswapd: reclaim's page-out (swap), nobody's writeback */
  __u32 amends; /* not a spin-up: the process whose data a kernel thread wrote just after
                 * its spin-up of this disk carried nobody's (lm-attrib.bpf.c, bio_seek) */
  /* The cgroup v2 ids (kernfs inode numbers) of the submitter and of the
   * dirtier, when each did its part: user space names their units, also
   * of a cgroup removed since (the "gone_cgroups" map). */
  __u64 cgroup;
  __u64 dirtier_cgroup;
};

/* The "inode_dirtiers" map's value (lm-inodes.bpf.h): the process that
 * dirtied an inode, and when it was written clean (0 while dirty). */
struct lm_inode_dirtier
{
  __u64 dirtied_ns; /* CLOCK_BOOTTIME */
  __u64 clean_ns;
  __u32 pid;
  __u32 uid;
  __u32 regular; /* a regular file's: its pages are a process's wherever written */
  __u32 pad;
  char comm[LM_BPF_COMM_LEN];   /* the process (its thread group leader) */
  char thread[LM_BPF_COMM_LEN]; /* the thread that dirtied */
  __u64 cgroup;                 /* its cgroup v2 id when it dirtied */
};

/* Who last wrote a sysctl or sysfs file (lm-writers.bpf.h): the
 * "setting_writers" map, keyed by the names of the file's grandparent and
 * parent directories and its own ("sys", "vm", "dirty_expire_centisecs";
 * "0000:00:14.0", "power", "control": every device has a power/control),
 * longer names cut. */
#define LM_BPF_SETTING_DIR 32
#define LM_BPF_SETTING_NAME 64
#define LM_BPF_SETTING_WRITERS 256

struct lm_bpf_setting_key
{
  char up[LM_BPF_SETTING_DIR];
  char dir[LM_BPF_SETTING_DIR];
  char name[LM_BPF_SETTING_NAME];
};

struct lm_bpf_setting_writer
{
  __u64 boot_ns; /* CLOCK_BOOTTIME of the write */
  __u32 pid;     /* the writer's process (in the daemon's pid namespace) */
  __u32 uid;
  char comm[LM_BPF_COMM_LEN]; /* its name (the thread group leader's) */
};

/* A removed cgroup's path (from the cgroup v2 root), kept for a spin-up
 * that blames data a process in it dirtied before it went: the
 * "gone_cgroups" map's value, keyed by the cgroup's id. Longer paths are
 * cut (user space then names no unit). */
#define LM_BPF_CGROUP_PATH 192
#define LM_BPF_GONE_CGROUPS 1024

struct lm_bpf_cgroup_path
{
  char path[LM_BPF_CGROUP_PATH];
};

/* Activity (the ledger's replay of "what stock writeback would have done"):
 * per whole disk, the current run of consecutive seconds (CLOCK_BOOTTIME)
 * with I/O that a process issued or data a process dirtied. Kept in the
 * "runs" map while it grows; a run that ended goes to the "activity" ring
 * without waking user space, which reads it when it is awake anyway. */
#define LM_BPF_ACT_READ 0
#define LM_BPF_ACT_WRITE 1
#define LM_BPF_ACT_DIRTY 2
/* A process made a clean inode dirty: the kernel's dirtied_when, from
 * which stock write-back expires that inode (one dirty spell per file). */
#define LM_BPF_ACT_SPELL 3
#define LM_BPF_ACT_KINDS 4

struct lm_bpf_run
{
  __u64 start_s; /* first and last second of the run */
  __u64 end_s;
  __u64 last_s[LM_BPF_ACT_KINDS]; /* the last second counted for each kind (LM_BPF_ACT_*) */
  __u32 count[LM_BPF_ACT_KINDS];  /* seconds of the run with each kind */
  __u32 key;                      /* the whole disk, MKDEV (major, first_minor) */
  __u32 fs;                       /* LM_BPF_FS_*: the filesystems its data was dirtied on */
};

/* A superblock's kind by its magic (include/uapi/linux/magic.h), as the
 * stock replay models it: the same bits as LmReplayFs (lm-replay.h).
 * ext2 shares ext4's magic and is counted with it. */
#define LM_BPF_FS_EXT4 1
#define LM_BPF_FS_BTRFS 2
#define LM_BPF_FS_XFS 4
#define LM_BPF_FS_NO_JOURNAL 8
#define LM_BPF_FS_OTHER 16

/* Slots in the "disks" map: user space maps all of them (lm-bpf-shared.c). */
#define MAX_DISKS 4096

/* The program's state of one whole disk ("disks" map, keyed like runs):
 * attribution's and the engine's (lm-flush.c reads last_ns and armed). */
struct lm_attrib_disk
{
  __u64 last_ns; /* engine: CLOCK_BOOTTIME of the last I/O that arms */
  __u32 armed;   /* engine: 1 from the first such I/O until user space flushes */
  __u32 pad0;
  __u64 last_io;    /* CLOCK_BOOTTIME of its last I/O (to a jiffy on the fast path) */
  __u64 clock[4];   /* struct lm_jclock (lm-jclock.bpf.h): the fast path's clock */
  __u64 act_end[2]; /* CLOCK_BOOTTIME when the second last noted in "runs" ends,
                     * for reads and for writes */
  __u32 excluded;   /* 1: Exclude=true (lm-excluded.c keeps it), never looked at */
  __u32 pad;
  __u64 seek_until; /* CLOCK_BOOTTIME until which a kernel thread's bio that carries a
                     * process's data amends the spin-up before it (0: none) */
};
