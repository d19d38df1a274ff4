/* lm-bpf-record.h: decoding of the records the BPF programs put in their
 * ring buffers. Pure: checks the size, copies, terminates the strings. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* lm-attrib.bpf.c's spin-up (struct lm_bpf_spinup), in host types. */
typedef struct
{
  guint64 boot_ns;
  guint64 sector;
  guint64 dirtier_ino;
  guint32 major;
  guint32 minor;
  guint32 pid;
  guint32 uid;
  gboolean write;
  gboolean kthread;
  gboolean have_dirtier;
  guint32 dirtier_pid;
  guint32 dirtier_uid;
  gboolean passthrough; /* a driver-private request (SG_IO, NVMe passthrough) */
  char comm[17];        /* always NUL-terminated, even if the kernel's was not */
  char dirtier_comm[17];
  guint64 prev_ns; /* the disk's last I/O before the gap */
  /* comm and dirtier_comm are the processes' names (their thread group
   * leaders'); these are the threads' own. */
  char thread[17];
  char dirtier_thread[17];
  gboolean kswapd;                /* reclaim's page-out */
  gboolean amends;                /* not a spin-up: whose data the kernel wrote just after the
                                   * disk's last spin-up, which carried nobody's */
  guint64 cgroup, dirtier_cgroup; /* cgroup v2 ids, 0: not known */
} LmBpfSpinupRecord;

/* The engine's "disk armed" record (lm-attrib.bpf.c) (struct lm_flush_armed). */
typedef struct
{
  guint64 boot_ns;
  guint32 major;
  guint32 minor;
  guint32 pid;
  gboolean write;
  char comm[17];
} LmBpfArmedRecord;

gboolean lm_bpf_record_spinup (const void *data, gsize size, LmBpfSpinupRecord *out);
gboolean lm_bpf_record_armed (const void *data, gsize size, LmBpfArmedRecord *out);

/* The lm-flush map key of a whole disk: (major << 20) | minor, as the
 * kernel's MKDEV, computed the same way on both sides. */
guint32 lm_bpf_record_disk_key (guint32 major, guint32 minor);

G_END_DECLS
