/* lm-attrib.h: spin-up attribution: which process woke which disk.
 * Owns the backend interface, the user-space spin-up model and the helpers
 * shared by the backends; never talks to D-Bus (daemon/lm-spinup-dbus.c does). */
#pragma once

#include <time.h>

#include <gio/gio.h>

#include "lm-blockdev.h"
#include "lm-cgroup.h"
#include "lm-journal-recovery.h"
#include "lm-state.h"

G_BEGIN_DECLS

/* Saved originals and things to undo after a crash live in this group of
 * the state file. */
#define LM_ATTRIB_STATE_GROUP "Attribution"

typedef enum
{
  LM_VIA_DIRECT,      /* the process itself issued the I/O */
  LM_VIA_WRITEBACK,   /* a flusher wrote what the process had dirtied */
  LM_VIA_KERNEL,      /* a kernel thread, and nobody known dirtied the disk */
  LM_VIA_PASSTHROUGH, /* the process sent a command (SG_IO, NVMe passthrough) */
} LmVia;

typedef struct
{
  char disk[32];   /* whole disk: "sda", "nvme0n1", "loop3" */
  gint64 time_us;  /* realtime, µs since the epoch */
  guint32 pid;     /* the process blamed (the dirtier for writeback): its tgid */
  char comm[16];   /* its name: the thread group leader's */
  char thread[16]; /* the thread's own name where it differs ("Cache2 I/O"), else "" */
  gint64 uid;      /* -1 when not known */
  gboolean write;
  guint64 sector; /* of the waking I/O, 512-byte units, on the whole disk
                   * where the backend knows it */
  guint64 inode;  /* dirtied inode for writeback; 0 when not known */
  char path[256]; /* file name where known (block_dump's dentry name), else "" */
  LmVia via;
  guint32 submitter_pid;   /* who issued the I/O: the flusher for writeback */
  char submitter_comm[16]; /* the issuing thread's own name */
  char note[64];           /* what else is known ("swap: …"), else "" */
  /* The systemd unit or application of the process blamed, taken from
   * the cgroup it did its part in (lm-cgroup.h), else "". */
  char unit[LM_UNIT_LEN];
  /* Realtime of the disk's last I/O before the idle gap, where the backend
   * knows it (bpf), else 0: the disk has slept since idle after it. */
  gint64 quiet_since_us;
} LmSpinUp;

typedef void (*LmSpinUpFunc) (const LmSpinUp *spinup, gpointer user_data);

#define LM_ATTRIB_NOTE_KSWAPD "swap: page-out by kswapd, reclaiming memory"

/* The name the daemon's own spin-ups go by (its comm as the kernel has it). */
#define LM_ATTRIB_OWN_COMM "laptop-moded"

/* @out: the spin-up of @disk at @time_us (realtime) by the daemon's own
 * command @command ("SMART READ DATA"): its pid and name, via
 * passthrough, the command in the Note; nobody else is blamed. */
void lm_attrib_own_spinup (LmSpinUp *out, const char *disk, const char *command, gint64 time_us);

/* A run of consecutive seconds with activity on a disk (for the ledger):
 * I/O that processes issued, or data they dirtied. Only the bpf backend
 * collects it (in the kernel, with no work in user space per I/O). */
typedef struct
{
  char disk[32];
  gint64 start_us, end_us;        /* realtime; end is the end of the last second */
  guint32 reads, writes, dirtied; /* seconds of the run with each */
  guint32 fs;                     /* LmReplayFs: the filesystems dirtied */
  guint32 spells;                 /* seconds in which a process made a clean file dirty */
} LmActivity;

typedef void (*LmActivityFunc) (const LmActivity *activity, gpointer user_data);

typedef struct _LmAttrib LmAttrib;

typedef struct
{
  LmSpinUpFunc func;
  gpointer user_data;
  guint idle_ms;                /* a disk without I/O for this long is taken to be asleep */
  LmState *state;               /* for what must be undone after a crash */
  LmActivityFunc activity_func; /* may be NULL; told by drain() */
  gpointer activity_data;
} LmAttribConfig;

/* A backend, in the order auto tries them. start() attaches and returns a
 * running instance; stop() detaches and undoes everything start() did. */
typedef struct
{
  const char *name;
  gboolean (*probe) (GError **error);
  LmAttrib *(*start) (const LmAttribConfig *config, GError **error);
  void (*stop) (LmAttrib *attrib);
  /* Its journal part: what it changes while it runs (a sysctl, a mount),
   * put back by stop() and, after a crash, by the journal's recovery;
   * may be NULL. */
  const LmJournalPart *journal;
  /* Hand the activity collected so far to activity_func; may be NULL
   * (the backend collects none). Cheap: called whenever the daemon is
   * awake anyway. */
  void (*drain) (LmAttrib *attrib);
  /* The spin-up filter runs in the kernel: the daemon is woken only for a
   * spin-up, so it may run all the time and replace the disks' re-check. */
  gboolean event_driven;
  /* The daemon's own command just woke @disk (a whole disk's name): its
   * last I/O is now, so the next program's I/O is not taken for the
   * spin-up. The backends never see the daemon's own commands (bpf and
   * tracefs drop them, block_dump never shows passthrough); may be NULL. */
  void (*own_io) (LmAttrib *attrib, const char *disk);
  /* When @disk (a whole disk's name) last did I/O, as the kernel saw it,
   * in CLOCK_MONOTONIC µs; FALSE when not known (not met yet, or this
   * backend keeps no such time). May be NULL. */
  gboolean (*last_io) (LmAttrib *attrib, const char *disk, gint64 *mono_us);
} LmAttribBackend;

extern const LmAttribBackend lm_attrib_bpf;
extern const LmAttribBackend lm_attrib_tracefs;
extern const LmAttribBackend lm_attrib_block_dump;

const LmAttribBackend *lm_attrib_choose (const char *setting, GError **error);
gboolean lm_attrib_dmesg_restricted (void);
/* What an administrator should know about @backend here (a sentence), or
 * "" when nothing; free with g_free(). */
char *lm_attrib_note (const LmAttribBackend *backend);
/* Every backend's journal part into @recovery. */
void lm_attrib_add_recovery (LmJournalRecovery *recovery);
const char *lm_via_to_string (LmVia via);

/* A task as a backend resolved it: the thread that ran and its process. */
typedef struct
{
  guint32 tid;      /* the thread, as the event gave it */
  guint32 pid;      /* its process: the tgid */
  char comm[16];    /* the process's name: its thread group leader's */
  char thread[16];  /* the thread's own name */
  gboolean kthread; /* a kernel thread (PF_KTHREAD) */
  gint64 uid;       /* -1 when not known */
} LmAttribTask;

/* @tid (named @thread as the kernel printed it at @mono_us) resolved from
 * /proc now, for a backend with no record of tasks of its own; the uid
 * only when @with_uid. A thread /proc no longer shows under that name
 * stays its own process; one /proc shows started after @mono_us (a pid
 * reused since; not checked when @mono_us is negative) is the thread as
 * printed, its uid unknown (-1), so no view takes it for its own. */
void lm_attrib_task_from_proc (guint32 tid, const char *thread, gboolean with_uid, gint64 mono_us,
                               LmAttribTask *out);

/* The spin-up model for backends that see every I/O in user space. */
typedef struct _LmAttribModel LmAttribModel;

LmAttribModel *lm_attrib_model_new (guint idle_ms, gint64 start_mono_us);
void lm_attrib_model_free (LmAttribModel *model);
/* @pid and @comm are the thread's as the kernel printed them (block_dump,
 * which has no task events); the process is looked up in /proc only for a
 * spin-up or a new dirtier. */
gboolean lm_attrib_model_io (LmAttribModel *model, const char *disk, gint64 mono_us, guint32 pid,
                             const char *comm, gboolean write, guint64 sector, LmSpinUp *out);
void lm_attrib_model_dirtied (LmAttribModel *model, const char *disk, gint64 mono_us, guint32 pid,
                              const char *comm, guint64 inode, const char *name);
/* The same two steps for a backend that resolves tasks itself: whether
 * I/O on @disk at @mono_us ends an idle gap (and is to be reported), then
 * the spin-up of @task; and who dirtied data on @disk. */
gboolean lm_attrib_model_woke (LmAttribModel *model, const char *disk, gint64 mono_us);
/* The same gap test for any device (a dm or md device too, never reported). */
gboolean lm_attrib_model_gap (LmAttribModel *model, const char *disk, gint64 mono_us);
/* The spin-up of @task, whose data (for a kernel thread) is @owner's
 * (NULL: nobody's, the kernel's), of inode @ino: the backend found it. */
void lm_attrib_model_spinup_owned (LmAttribModel *model, const char *disk, gint64 mono_us,
                                   const LmAttribTask *task, gboolean write, guint64 sector,
                                   const LmAttribTask *owner, guint64 ino, LmSpinUp *out);
void lm_attrib_model_spinup (LmAttribModel *model, const char *disk, gint64 mono_us,
                             const LmAttribTask *task, gboolean write, guint64 sector,
                             LmSpinUp *out);
void lm_attrib_model_dirtied_by (LmAttribModel *model, const char *disk, const LmAttribTask *task,
                                 guint64 inode, const char *name);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmAttribModel, lm_attrib_model_free)

/* Helpers; every path goes through lm_path(). Disks of devices: lm-blockdev.h. */
gboolean lm_attrib_is_kernel_thread (guint32 pid, const char *comm);
gint64 lm_attrib_uid_of (guint32 pid);
/* /proc/PID/stat's flags and start time on CLOCK_MONOTONIC, never later
 * than the truth (whole ticks, rounded down); FALSE when /proc does not
 * show it. */
gboolean lm_attrib_proc_stat (guint32 pid, guint64 *flags, gint64 *start_mono_us);
/* /proc shows a task as @pid that was there at @mono_us (not a later owner). */
gboolean lm_attrib_proc_started_by (guint32 pid, gint64 mono_us);
gint64 lm_attrib_realtime_us (clockid_t clock, gint64 clock_us);
/* The process thread @tid (named @thread) belongs to: its tgid and its
 * leader's name. FALSE, with @tgid and @comm untouched, when /proc no
 * longer shows that thread (it exited, or the tid is someone else's now). */
gboolean lm_attrib_process_of (guint32 tid, const char *thread, guint32 *tgid, char comm[16]);

/* Who dirtied the data a kernel thread's write carried, and which inode it
 * is (@name: its file name, NULL when unknown). */
typedef struct
{
  guint32 pid;
  const char *comm;
  const char *thread;
  gint64 uid;
  guint64 inode;
  const char *name;
} LmAttribDirtier;

/* Blame: @spinup's pid, comm and thread (the submitter, as the backend saw
 * it) become the submitter's, and the blamed process is the submitter or,
 * for a kernel thread (@kernel_thread), @dirtier (NULL: nobody's data, the
 * kernel's own write). */
void lm_attrib_finish (LmSpinUp *spinup, const LmAttribDirtier *dirtier, gboolean kernel_thread);

G_END_DECLS
