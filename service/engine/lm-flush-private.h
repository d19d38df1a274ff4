/* lm-flush-private.h: the user-space engine's state, shared by lm-flush.c
 * (arming, timers, removable disks) and lm-flush-sync.c (the flush itself,
 * in a worker thread); for nothing else. */
#pragma once

#include "lm-attrib-config.h"

#if LM_HAVE_BPF

#include <gio/gio.h>
#include <linux/types.h>

#include "lm-bpf.h"
#include "lm-flush.h"
#include "lm-mounts.h"

/* A physical whole disk, armed by its own I/O or by I/O on a device stacked
 * on it (dm-crypt, LVM, md): it is flushed once all of those are quiet. */
typedef struct
{
  LmFlush *owner;  /* borrowed: disks live in owner->disks */
  guint32 key;     /* (major << 20) | first_minor, as the BPF program keys it */
  GArray *members; /* guint32 BPF keys that armed it: itself, dm and md on it */
  guint timer;
  gboolean flushing;
  gboolean again;     /* armed and quiet again while its flush was running */
  guint64 last_io_ns; /* its members' last arming I/O when the flush began */
} LmFlushDisk;

/* A mounted filesystem on a removable or hot-plug disk. */
typedef struct
{
  LmFlush *owner;
  guint32 sb_dev; /* s_dev as the kernel encodes it, the BPF map's key */
  guint timer;
  gboolean flushing;
} LmFlushRemovable;

struct _LmFlush
{
  /* Reference counted (GRcBox): a flush thread may outlive lm_flush_free(),
   * which only stops everything and drops the owner's reference. */
  gboolean stopped;
  guint seconds;
  LmFlushReportFunc report; /* may be NULL */
  gpointer report_data;
  struct lm_attrib_bpf *skel; /* shared (lm-bpf-shared.c): a reference */
  LmBpfRing ring;
  LmBpfRing dirtied_ring;
  GHashTable *disks;     /* key → LmFlushDisk */
  GHashTable *removable; /* sb_dev → LmFlushRemovable */
  int mountinfo_fd;      /* polled: the mount table changed */
  guint mountinfo_watch;
  /* Flush threads only: superblock (dev_t) → CLOCK_BOOTTIME its last
   * syncfs() began, so that a filesystem on two disks is flushed once. */
  GMutex synced_lock;
  GHashTable *synced;
};

typedef struct
{
  LmFlush *owner; /* a reference */
  guint32 key;    /* the disk to flush, or 0 for a removable filesystem */
  guint32 sb_dev; /* that removable filesystem */
  guint64 last_io_ns;
  int flushers_fd; /* a dup: the map outlives the skeleton while we use it */
  guint32 kib;     /* written to the disk during the flush, set by the thread */
  guint skipped;   /* filesystems another disk's flush had just written */
} FlushJob;

gint64 lm_flush_boot_ns (void);
/* Whether superblock @m can have a disk below it at all. */
gboolean lm_flush_may_have_disk (const LmMount *m);
char *lm_flush_job_name (const FlushJob *job);
/* GTaskThreadFunc: syncfs() each filesystem of the job's disk. */
void lm_flush_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable);

#endif
