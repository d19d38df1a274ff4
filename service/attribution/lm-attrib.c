/* lm-attrib.c: choosing an attribution backend, the user-space spin-up
 * model and helpers shared by the backends. It never opens a kernel
 * interface for monitoring itself; the backends do. */
#include "config.h"

#include "lm-attrib.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lm-error.h"
#include "lm-blockdev.h"
#include "lm-excluded.h"
#include "lm-paths.h"

/* First choice first: bpf filters in the kernel, tracefs copies every event
 * to user space, block_dump exists only on old or patched kernels. */
static const LmAttribBackend *const backends[] = {
  &lm_attrib_bpf,
  &lm_attrib_tracefs,
  &lm_attrib_block_dump,
};

const char *
lm_via_to_string (LmVia via)
{
  switch (via)
    {
      case LM_VIA_WRITEBACK:
        return "writeback";
      case LM_VIA_KERNEL:
        return "kernel";
      case LM_VIA_PASSTHROUGH:
        return "passthrough";
      default:
        return "direct";
    }
}

void
lm_attrib_own_spinup (LmSpinUp *out, const char *disk, const char *command, gint64 time_us)
{
  memset (out, 0, sizeof *out);
  g_strlcpy (out->disk, disk, sizeof out->disk);
  out->time_us = time_us;
  out->pid = out->submitter_pid = (guint32) getpid ();
  g_strlcpy (out->comm, LM_ATTRIB_OWN_COMM, sizeof out->comm);
  g_strlcpy (out->submitter_comm, LM_ATTRIB_OWN_COMM, sizeof out->submitter_comm);
  out->uid = (gint64) geteuid ();
  out->via = LM_VIA_PASSTHROUGH;
  /* Data-in or none: SMART READ DATA reads, IDLE and SET FEATURES carry no data. */
  out->write = FALSE;
  g_strlcpy (out->note, command, sizeof out->note);
}

/* block_dump's lines go to the kernel log, which every user may read with
 * dmesg unless kernel.dmesg_restrict is 1: then they would see every
 * process that wakes a disk, which the monitor action is there to guard.
 * A missing or unreadable file counts as unrestricted. */
gboolean
lm_attrib_dmesg_restricted (void)
{
  g_autofree char *path = lm_path ("/proc/sys/kernel/dmesg_restrict");
  g_autofree char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  return g_strcmp0 (g_strstrip (text), "1") == 0;
}

char *
lm_attrib_note (const LmAttribBackend *backend)
{
  if (backend == &lm_attrib_block_dump && !lm_attrib_dmesg_restricted ())
    return g_strdup ("Attribution=block_dump while kernel.dmesg_restrict is 0: every user can "
                     "read all spin-ups with dmesg; set kernel.dmesg_restrict=1 to keep them to "
                     "those allowed to monitor");
  return g_strdup ("");
}

/* NULL with no error when "none" was asked for; NULL with an error saying
 * what each probe found when nothing works. */
const LmAttribBackend *
lm_attrib_choose (const char *setting, GError **error)
{
  gboolean any = g_strcmp0 (setting, "auto") == 0;
  g_autoptr (GString) reasons = g_string_new (NULL);

  if (g_strcmp0 (setting, "none") == 0)
    return NULL;
  for (gsize i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      g_autoptr (GError) probe_error = NULL;

      if (!any && g_strcmp0 (setting, backends[i]->name) != 0)
        continue;
      /* auto never chooses a backend that shows spin-ups to everyone. */
      if (any && backends[i] == &lm_attrib_block_dump && !lm_attrib_dmesg_restricted ())
        {
          g_string_append_printf (
              reasons,
              "%sblock_dump: not chosen automatically while "
              "kernel.dmesg_restrict is not 1, as every user could read the "
              "spin-ups with dmesg (set Attribution=block_dump to use it anyway)",
              reasons->len ? "; " : "");
          continue;
        }
      if (backends[i]->probe (&probe_error))
        return backends[i];
      g_string_append_printf (reasons, "%s%s: %s", reasons->len ? "; " : "", backends[i]->name,
                              probe_error->message);
    }
  g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "Attribution=%s cannot be used here (%s)",
               setting, reasons->len ? reasons->str : "unknown backend");
  return NULL;
}

void
lm_attrib_add_recovery (LmJournalRecovery *recovery)
{
  for (gsize i = 0; i < G_N_ELEMENTS (backends); i++)
    if (backends[i]->journal != NULL)
      lm_journal_recovery_add (recovery, backends[i]->journal, backends[i]->journal->what, NULL,
                               NULL);
}

/* --- helpers ------------------------------------------------------------ */

/* Flushers, journal threads and other kernel threads by name, for when the
 * process is gone or /proc is not ours to read. */
static gboolean
looks_like_kernel_thread (const char *comm)
{
  static const char *const prefixes[] = {
    "kworker/", "jbd2/",    "flush-", "pdflush",   "kjournald", "kswapd",   "kupdated",
    "bdflush",  "xfsaild/", "btrfs-", "kcompactd", "writeback", "kthreadd",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (prefixes); i++)
    if (g_str_has_prefix (comm, prefixes[i]))
      return TRUE;
  return FALSE;
}

/* PF_KTHREAD in /proc/PID/stat's flags when the pid still belongs to that
 * name, else by name. Asked once per spin-up, never per I/O. */
gboolean
lm_attrib_is_kernel_thread (guint32 pid, const char *comm)
{
  g_autofree char *sys = g_strdup_printf ("/proc/%u/stat", pid);
  g_autofree char *path = lm_path (sys);
  g_autofree char *text = NULL;
  const guint64 pf_kthread = 0x00200000;

  if (pid != 0 && g_file_get_contents (path, &text, NULL, NULL))
    {
      const char *open = strchr (text, '(');
      const char *close = strrchr (text, ')');
      if (open != NULL && close != NULL && close > open
          && (gsize) (close - open - 1) == strlen (comm)
          && strncmp (open + 1, comm, (gsize) (close - open - 1)) == 0)
        {
          /* After the name: state ppid pgrp session tty_nr tpgid flags. */
          g_auto (GStrv) fields = g_strsplit (close + 2, " ", 8);
          guint64 flags;
          if (g_strv_length (fields) >= 7
              && g_ascii_string_to_unsigned (fields[6], 10, 0, G_MAXUINT64, &flags, NULL))
            return (flags & pf_kthread) != 0;
        }
    }
  return looks_like_kernel_thread (comm);
}

gint64
lm_attrib_uid_of (guint32 pid)
{
  g_autofree char *sys = g_strdup_printf ("/proc/%u/status", pid);
  g_autofree char *path = lm_path (sys);
  g_autofree char *text = NULL;

  if (pid == 0 || !g_file_get_contents (path, &text, NULL, NULL))
    return -1;
  const char *uid = strstr (text, "\nUid:\t");
  guint64 v;
  if (uid == NULL)
    return -1;
  g_auto (GStrv) fields = g_strsplit (uid + 6, "\t", 2);
  if (fields[0] == NULL || !g_ascii_string_to_unsigned (fields[0], 10, 0, G_MAXUINT32, &v, NULL))
    return -1;
  return (gint64) v;
}

/* Kernel time stamps are on a boot-relative clock; the signal carries
 * wall-clock time, which is what a person compares with. */
gint64
lm_attrib_realtime_us (clockid_t clock, gint64 clock_us)
{
  struct timespec ts;

  if (clock_gettime (clock, &ts) != 0)
    return g_get_real_time ();
  gint64 now = (gint64) ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
  return g_get_real_time () - (now - clock_us);
}

/* /proc/TID/comm, without its newline; NULL when gone. */
static char *
read_comm (guint32 pid)
{
  g_autofree char *rel = g_strdup_printf ("/proc/%u/comm", pid);
  g_autofree char *path = lm_path (rel);
  g_autofree char *text = NULL;
  gsize len;

  if (pid == 0 || !g_file_get_contents (path, &text, &len, NULL))
    return NULL;
  if (len > 0 && text[len - 1] == '\n')
    text[len - 1] = '\0';
  return g_steal_pointer (&text);
}

/* Asked once per spin-up or new dirtier, never per I/O. /proc/TID is
 * there for every thread, listed or not. */
gboolean
lm_attrib_process_of (guint32 tid, const char *thread, guint32 *tgid, char comm[16])
{
  g_autofree char *own = read_comm (tid);
  g_autofree char *rel = g_strdup_printf ("/proc/%u/status", tid);
  g_autofree char *path = lm_path (rel);
  g_autofree char *status = NULL;
  guint64 v;

  /* The name must still be the one the kernel printed, or the tid may be
   * another thread's by now. */
  if (own == NULL || g_strcmp0 (own, thread) != 0
      || !g_file_get_contents (path, &status, NULL, NULL))
    return FALSE;
  const char *field = strstr (status, "\nTgid:\t");
  if (field == NULL)
    return FALSE;
  g_auto (GStrv) fields = g_strsplit (field + 7, "\n", 2);
  if (!g_ascii_string_to_unsigned (fields[0], 10, 1, G_MAXUINT32, &v, NULL))
    return FALSE;
  g_autofree char *leader = (guint32) v == tid ? g_strdup (own) : read_comm ((guint32) v);
  if (leader == NULL)
    return FALSE;
  *tgid = (guint32) v;
  g_strlcpy (comm, leader, 16);
  return TRUE;
}

/* The offset of CLOCK_BOOTTIME (which /proc's start times count in) from
 * CLOCK_MONOTONIC (the trace clock): the time spent suspended. */
static gint64
boot_offset_us (void)
{
  struct timespec boot, mono;

  if (clock_gettime (CLOCK_BOOTTIME, &boot) != 0 || clock_gettime (CLOCK_MONOTONIC, &mono) != 0)
    return 0;
  return ((gint64) boot.tv_sec - mono.tv_sec) * G_USEC_PER_SEC
         + (boot.tv_nsec - mono.tv_nsec) / 1000;
}

gboolean
lm_attrib_proc_stat (guint32 pid, guint64 *flags, gint64 *start_mono_us)
{
  g_autofree char *rel = g_strdup_printf ("/proc/%u/stat", pid);
  g_autofree char *path = lm_path (rel);
  g_autofree char *stat = NULL;
  guint64 start_ticks;
  long hz = sysconf (_SC_CLK_TCK);

  if (pid == 0 || hz <= 0 || !g_file_get_contents (path, &stat, NULL, NULL))
    return FALSE;
  /* After the name in parentheses, which may hold anything:
   * state ppid pgrp session tty_nr tpgid flags ... starttime (the 20th). */
  const char *close = strrchr (stat, ')');
  if (close == NULL || close[1] != ' ')
    return FALSE;
  g_auto (GStrv) f = g_strsplit (close + 2, " ", 21);
  if (g_strv_length (f) < 20 || !g_ascii_string_to_unsigned (f[6], 10, 0, G_MAXUINT64, flags, NULL)
      || !g_ascii_string_to_unsigned (f[19], 10, 0, G_MAXUINT64 / G_USEC_PER_SEC, &start_ticks,
                                      NULL))
    return FALSE;
  /* Whole ticks, rounded down: never later than the truth. */
  *start_mono_us = (gint64) (start_ticks * G_USEC_PER_SEC / (guint64) hz) - boot_offset_us ();
  return TRUE;
}

gboolean
lm_attrib_proc_started_by (guint32 pid, gint64 mono_us)
{
  guint64 flags;
  gint64 start;

  return lm_attrib_proc_stat (pid, &flags, &start) && start <= mono_us;
}

void
lm_attrib_task_from_proc (guint32 tid, const char *thread, gboolean with_uid, gint64 mono_us,
                          LmAttribTask *out)
{
  memset (out, 0, sizeof *out);
  out->tid = out->pid = tid;
  g_strlcpy (out->comm, thread, sizeof out->comm);
  g_strlcpy (out->thread, thread, sizeof out->thread);
  out->kthread = lm_attrib_is_kernel_thread (tid, thread);
  out->uid = out->kthread ? 0 : with_uid ? lm_attrib_uid_of (tid) : -1;
  /* The process, not the thread, where /proc still shows it. */
  if (!out->kthread)
    lm_attrib_process_of (tid, thread, &out->pid, out->comm);
  /* Last: a task /proc shows as @tid that started after the event owns a
   * pid reused since; what was read of it is not the event's. */
  if (!out->kthread && mono_us >= 0 && !lm_attrib_proc_started_by (tid, mono_us))
    {
      out->pid = tid;
      out->uid = -1;
      g_strlcpy (out->comm, thread, sizeof out->comm);
    }
}

/* "" when the thread's name says nothing the process's does not. */
static void
set_thread (char *thread, gsize size, const char *comm, const char *name)
{
  if (name == NULL || g_strcmp0 (name, comm) == 0)
    name = "";
  g_strlcpy (thread, name, size);
}

void
lm_attrib_finish (LmSpinUp *s, const LmAttribDirtier *dirtier, gboolean kernel_thread)
{
  s->submitter_pid = s->pid;
  g_strlcpy (s->submitter_comm, s->thread[0] != '\0' ? s->thread : s->comm,
             sizeof s->submitter_comm);
  if (!kernel_thread)
    {
      s->via = LM_VIA_DIRECT;
      set_thread (s->thread, sizeof s->thread, s->comm, s->thread);
      return;
    }
  /* A kernel thread works for whoever it is working for; its own name
   * is the submitter's. */
  s->thread[0] = '\0';
  if (dirtier == NULL)
    {
      s->via = LM_VIA_KERNEL;
      return;
    }
  s->via = LM_VIA_WRITEBACK;
  s->pid = dirtier->pid;
  g_strlcpy (s->comm, dirtier->comm, sizeof s->comm);
  set_thread (s->thread, sizeof s->thread, s->comm, dirtier->thread);
  s->uid = dirtier->uid;
  s->inode = dirtier->inode;
  g_strlcpy (s->path, dirtier->name != NULL ? dirtier->name : "", sizeof s->path);
}

/* --- the model ----------------------------------------------------------- */

typedef struct
{
  gint64 last_us;
  gboolean have_dirtier;
  guint32 dirtier_tid; /* as printed: to tell a new dirtier */
  guint32 dirtier_pid; /* its process */
  gint64 dirtier_uid;
  char dirtier_comm[16];
  char dirtier_thread[16];
  guint64 inode;
  char name[256];
} LmDiskState;

struct _LmAttribModel
{
  gint64 idle_us;
  gint64 start_us;
  GHashTable *disks; /* name → LmDiskState */
};

LmAttribModel *
lm_attrib_model_new (guint idle_ms, gint64 start_mono_us)
{
  LmAttribModel *m = g_new0 (LmAttribModel, 1);

  m->idle_us = (gint64) idle_ms * 1000;
  m->start_us = start_mono_us;
  m->disks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return m;
}

void
lm_attrib_model_free (LmAttribModel *model)
{
  if (model == NULL)
    return;
  g_hash_table_unref (model->disks);
  g_free (model);
}

static LmDiskState *
disk_state (LmAttribModel *m, const char *disk)
{
  LmDiskState *d = g_hash_table_lookup (m->disks, disk);

  if (d == NULL)
    {
      d = g_new0 (LmDiskState, 1);
      /* What happened before monitoring began is unknown: count its start
       * as activity, so a disk busy then is not reported as waking. */
      d->last_us = m->start_us;
      g_hash_table_insert (m->disks, g_strdup (disk), d);
    }
  return d;
}

/* TRUE when I/O on @disk at @mono_us ends an idle gap and is reported.
 * An excluded disk's I/O is counted as activity but never reported, as
 * with bpf; nor is a dm or md device's: the disks under it report theirs. */
gboolean
lm_attrib_model_gap (LmAttribModel *m, const char *disk, gint64 mono_us)
{
  LmDiskState *d = disk_state (m, disk);
  gboolean gap = mono_us - d->last_us > m->idle_us;

  if (mono_us > d->last_us)
    d->last_us = mono_us;
  return gap;
}

gboolean
lm_attrib_model_woke (LmAttribModel *m, const char *disk, gint64 mono_us)
{
  return lm_attrib_model_gap (m, disk, mono_us) && !lm_excluded_has (disk)
         && lm_blockdev_is_listed (disk);
}

static void
spinup_of (const char *disk, gint64 mono_us, const LmAttribTask *task, gboolean write,
           guint64 sector, LmSpinUp *out)
{
  memset (out, 0, sizeof *out);
  g_strlcpy (out->disk, disk, sizeof out->disk);
  out->time_us = lm_attrib_realtime_us (CLOCK_MONOTONIC, mono_us);
  out->pid = task->pid;
  g_strlcpy (out->comm, task->comm, sizeof out->comm);
  g_strlcpy (out->thread, task->thread, sizeof out->thread);
  out->write = write;
  out->sector = sector;
  out->uid = task->kthread ? 0 : task->uid;
}

void
lm_attrib_model_spinup_owned (LmAttribModel *m, const char *disk, gint64 mono_us,
                              const LmAttribTask *task, gboolean write, guint64 sector,
                              const LmAttribTask *owner, guint64 ino, LmSpinUp *out)
{
  gboolean kswapd = task->kthread && g_str_has_prefix (task->thread, "kswapd");

  spinup_of (disk, mono_us, task, write, sector, out);
  if (owner != NULL && !kswapd)
    {
      LmAttribDirtier dirtier = { owner->pid, owner->comm, owner->thread, owner->uid, ino, NULL };
      lm_attrib_finish (out, &dirtier, task->kthread);
    }
  else
    lm_attrib_finish (out, NULL, task->kthread);
  if (kswapd)
    g_strlcpy (out->note, LM_ATTRIB_NOTE_KSWAPD, sizeof out->note);
}

void
lm_attrib_model_spinup (LmAttribModel *m, const char *disk, gint64 mono_us,
                        const LmAttribTask *task, gboolean write, guint64 sector, LmSpinUp *out)
{
  LmDiskState *d = disk_state (m, disk);

  spinup_of (disk, mono_us, task, write, sector, out);
  /* kswapd's page-out is reclaim (swap), nobody's dirty data. */
  gboolean kswapd = task->kthread && g_str_has_prefix (task->thread, "kswapd");
  LmAttribDirtier dirtier
      = { d->dirtier_pid, d->dirtier_comm, d->dirtier_thread, d->dirtier_uid, d->inode, d->name };
  lm_attrib_finish (out, d->have_dirtier && !kswapd ? &dirtier : NULL, task->kthread);
  if (kswapd)
    g_strlcpy (out->note, LM_ATTRIB_NOTE_KSWAPD, sizeof out->note);
  /* Without the kernel's cgroup ids: the blamed process's, while it lives. */
  if (out->via != LM_VIA_KERNEL)
    {
      g_autofree char *path = lm_cgroup_path_of_pid (out->pid, out->comm);
      g_autofree char *unit = lm_cgroup_unit_of_path (path);
      g_strlcpy (out->unit, unit != NULL ? unit : "", sizeof out->unit);
    }
}

/* One I/O on @disk at @mono_us. TRUE and @out filled when it woke the disk;
 * the process, uid and the kernel-thread test are looked up only then. */
gboolean
lm_attrib_model_io (LmAttribModel *m, const char *disk, gint64 mono_us, guint32 pid,
                    const char *comm, gboolean write, guint64 sector, LmSpinUp *out)
{
  LmAttribTask task;

  if (!lm_attrib_model_woke (m, disk, mono_us))
    return FALSE;
  lm_attrib_task_from_proc (pid, comm, TRUE, mono_us, &task);
  lm_attrib_model_spinup (m, disk, mono_us, &task, write, sector, out);
  return TRUE;
}

/* Kernel threads dirty too (journal, writeback updating times); they are
 * not who the user wants to hear about, so they never replace a process. */
void
lm_attrib_model_dirtied_by (LmAttribModel *m, const char *disk, const LmAttribTask *task,
                            guint64 inode, const char *name)
{
  if (task->kthread)
    return;
  LmDiskState *d = disk_state (m, disk);
  if (lm_excluded_has (disk))
    {
      d->have_dirtier = FALSE; /* not to be blamed once it is watched again */
      return;
    }
  d->have_dirtier = TRUE;
  d->dirtier_tid = task->tid;
  d->dirtier_pid = task->pid;
  d->dirtier_uid = task->uid;
  g_strlcpy (d->dirtier_comm, task->comm, sizeof d->dirtier_comm);
  g_strlcpy (d->dirtier_thread, task->thread, sizeof d->dirtier_thread);
  d->inode = inode;
  g_strlcpy (d->name, name != NULL ? name : "", sizeof d->name);
}

/* @pid and @comm as the kernel printed them. Looked up in /proc now: by
 * writeback time the process has often exited. Only for a new dirtier, as
 * one process dirties many pages in a row. */
void
lm_attrib_model_dirtied (LmAttribModel *m, const char *disk, gint64 mono_us, guint32 pid,
                         const char *comm, guint64 inode, const char *name)
{
  LmDiskState *d = disk_state (m, disk);
  LmAttribTask task;

  if (looks_like_kernel_thread (comm))
    return;
  if (d->have_dirtier && d->dirtier_tid == pid && g_strcmp0 (d->dirtier_thread, comm) == 0)
    {
      task = (LmAttribTask){ .tid = pid, .pid = d->dirtier_pid, .uid = d->dirtier_uid };
      g_strlcpy (task.comm, d->dirtier_comm, sizeof task.comm);
      g_strlcpy (task.thread, d->dirtier_thread, sizeof task.thread);
    }
  else
    lm_attrib_task_from_proc (pid, comm, TRUE, mono_us, &task);
  task.kthread = FALSE;
  lm_attrib_model_dirtied_by (m, disk, &task, inode, name);
}
