/* lm-attrib-bpf.c: the bpf attribution backend: turns on the attribution
 * part of the BPF object shared with the engine (lm-attrib.bpf.c, loaded by
 * lm-bpf-shared.c: block_bio_queue, passthrough requests,
 * writeback_mark_inode_dirty and writeback_single_inode) and reads its ring
 * buffers from the main loop. Never polls: the fd wakes us per spin-up. */
#include "config.h"

#include "lm-attrib-config.h"

#include <errno.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lm-attrib-stack.h"
#include "lm-attrib.h"
#include "lm-blockdev.h"
#include "lm-bpf-record.h"
#include "lm-replay.h"
#include "lm-bpf.h"
#include "lm-error.h"
#include "lm-excluded.h"
#include "lm-paths.h"
#include "lm-sb-disks.h"

#if LM_HAVE_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <glib-unix.h>
#include <linux/types.h>

#include "lm-attrib-bpf-event.h"
#include "lm-bpf-shared.h"

/* The program's filesystem bits are the replay's (lm-attrib-bpf-event.h). */
G_STATIC_ASSERT (LM_BPF_FS_EXT4 == LM_REPLAY_FS_EXT4);
G_STATIC_ASSERT (LM_BPF_FS_BTRFS == LM_REPLAY_FS_BTRFS);
G_STATIC_ASSERT (LM_BPF_FS_XFS == LM_REPLAY_FS_XFS);
G_STATIC_ASSERT (LM_BPF_FS_NO_JOURNAL == LM_REPLAY_FS_NO_JOURNAL);
G_STATIC_ASSERT (LM_BPF_FS_OTHER == LM_REPLAY_FS_OTHER);

#define PROGRAM "spin-up attribution"

struct _LmAttrib
{
  LmAttribConfig config;
  struct lm_attrib_bpf *skel;
  LmBpfRing ring;
  LmBpfRing activity; /* woken only when half full; else drained */
  LmAttribUppers *uppers;
  GHashTable *held; /* disk name → Held: kernel spin-ups waiting for an "amends" */
};

/* A kernel thread's spin-up that carried nobody's data, held back while
 * the programs look for the data of the same pass (lm-attrib.bpf.c,
 * bio_seek; LM_ATTRIB_HOLD_MS in lm-attrib-stack.h). */
typedef struct
{
  LmAttrib *a;
  char *disk;
  LmBpfSpinupRecord e;
  guint timer;
} Held;

static void bpf_drain (LmAttrib *a);
static void deliver (LmAttrib *a, const char *disk, LmBpfSpinupRecord *e);

static void
bpf_stop (LmAttrib *a)
{
  if (a == NULL)
    return;
  /* Held spin-ups go out as they are: nothing may be lost at a stop. */
  if (a->held != NULL)
    {
      GHashTableIter iter;
      Held *h;
      g_hash_table_iter_init (&iter, a->held);
      while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &h))
        {
          g_hash_table_iter_steal (&iter);
          g_source_remove (h->timer);
          deliver (a, h->disk, &h->e);
          g_free (h->disk);
          g_free (h);
        }
      g_hash_table_unref (a->held);
    }
  if (a->skel != NULL && a->activity.ring != NULL)
    bpf_drain (a); /* what the kernel collected must not be lost at a stop */
  lm_bpf_ring_close (&a->activity);
  lm_bpf_ring_close (&a->ring);
  g_clear_pointer (&a->uppers, lm_attrib_uppers_free);
  if (a->skel != NULL)
    {
      a->skel->bss->attrib_on = 0;
      lm_bpf_shared_unref ();
    }
  g_free (a);
}

/* --- activity ------------------------------------------------------------ */

static void deliver_disk_run (LmAttrib *a, const struct lm_bpf_run *run, const char *disk);

/* A run keyed by a superblock's anonymous device number (btrfs: data
 * dirtied there) is each of its disks', from the kernel's view in sysfs;
 * asked only here, when the daemon is awake anyway. */
static void
deliver_run (LmAttrib *a, const struct lm_bpf_run *run)
{
  if (a->config.activity_func == NULL || run->end_s < run->start_s)
    return;
  if ((run->key >> 20) != 0)
    {
      g_autofree char *disk = lm_blockdev_disk_for_devnum (run->key >> 20, run->key & 0xfffff);
      deliver_disk_run (a, run, disk);
      return;
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) disks = lm_sb_disks_for_dev (makedev (0, run->key & 0xfffff), &error);
  if (disks == NULL)
    {
      g_debug ("Activity of superblock 0:%u left out: %s", run->key & 0xfffff, error->message);
      return;
    }
  for (guint i = 0; i < disks->len; i++)
    {
      dev_t dev = g_array_index (disks, dev_t, i);
      g_autofree char *disk = lm_blockdev_disk_for_devnum (major (dev), minor (dev));
      if (!lm_excluded_has (disk))
        deliver_disk_run (a, run, disk);
    }
}

static void
deliver_disk_run (LmAttrib *a, const struct lm_bpf_run *run, const char *disk)
{
  LmActivity act = { 0 };

  g_strlcpy (act.disk, disk, sizeof act.disk);
  act.start_us = lm_attrib_realtime_us (CLOCK_BOOTTIME, (gint64) run->start_s * G_USEC_PER_SEC);
  act.end_us = lm_attrib_realtime_us (CLOCK_BOOTTIME, (gint64) (run->end_s + 1) * G_USEC_PER_SEC);
  act.reads = run->count[LM_BPF_ACT_READ];
  act.writes = run->count[LM_BPF_ACT_WRITE];
  act.dirtied = run->count[LM_BPF_ACT_DIRTY];
  act.spells = run->count[LM_BPF_ACT_SPELL];
  act.fs = run->fs;
  a->config.activity_func (&act, a->config.activity_data);
}

static int
on_run (void *ctx, void *data, size_t size)
{
  struct lm_bpf_run run;

  if (size < sizeof run)
    return 0;
  memcpy (&run, data, sizeof run); /* the ring's memory need not be aligned */
  deliver_run (ctx, &run);
  return 0;
}

/* The ended runs in the ring, then the runs in the map that ended (no
 * activity in the last whole second): those are taken out of the map, so
 * nothing the kernel holds is older than the daemon's last look. An I/O
 * racing the delete loses at most that second's mark. */
static void
bpf_drain (LmAttrib *a)
{
  int fd = bpf_map__fd (a->skel->maps.runs);
  struct timespec now;
  __u32 key, next;
  __u32 *prev = NULL;
  g_autoptr (GArray) ended = g_array_new (FALSE, FALSE, sizeof (__u32));

  if (ring_buffer__consume (a->activity.ring) < 0)
    g_debug ("Reading the activity ring buffer failed");
  clock_gettime (CLOCK_BOOTTIME, &now);
  while (bpf_map_get_next_key (fd, prev, &next) == 0)
    {
      struct lm_bpf_run run;

      key = next;
      prev = &key;
      if (bpf_map_lookup_elem (fd, &key, &run) == 0 && run.end_s + 1 < (__u64) now.tv_sec)
        g_array_append_val (ended, key);
    }
  for (guint i = 0; i < ended->len; i++)
    {
      struct lm_bpf_run run;
      key = g_array_index (ended, __u32, i);
      if (bpf_map_lookup_elem (fd, &key, &run) == 0 && bpf_map_delete_elem (fd, &key) == 0)
        deliver_run (a, &run);
    }
}

/* Woken only when the kernel found the ring half full. */
static int
on_run_woken (void *ctx, void *data, size_t size)
{
  return on_run (ctx, data, size);
}

/* The task a record's names and numbers describe. */
static void
record_task (LmAttribTask *t, guint32 pid, guint32 uid, const char *comm, const char *thread)
{
  memset (t, 0, sizeof *t);
  t->tid = t->pid = pid;
  t->uid = uid;
  g_strlcpy (t->comm, comm, sizeof t->comm);
  g_strlcpy (t->thread, thread, sizeof t->thread);
}

/* An upper device's (dm, md) spin-up: whose data its bio carried, for the
 * disk beneath (lm-attrib-stack.c): the process that issued it, or the
 * owner of its pages when a kernel thread did, or nobody. */
static void
note_upper (LmAttrib *a, const LmBpfSpinupRecord *e)
{
  gint64 usec = (gint64) (e->boot_ns / 1000);
  LmAttribTask owner;

  if (!e->kthread && !e->passthrough)
    record_task (&owner, e->pid, e->uid, e->comm, e->thread);
  else if (e->have_dirtier && !e->kswapd)
    record_task (&owner, e->dirtier_pid, e->dirtier_uid, e->dirtier_comm, e->dirtier_thread);
  else
    {
      g_debug ("Upper %u:%u woke, by %s (kernel), carrying nobody's data", e->major, e->minor,
               e->comm);
      lm_attrib_uppers_note (a->uppers, lm_bpf_record_disk_key (e->major, e->minor), usec, NULL, 0);
      return;
    }
  g_debug ("Upper %u:%u woke, by %s, carrying %s's data", e->major, e->minor, e->comm, owner.comm);
  lm_attrib_uppers_note (a->uppers, lm_bpf_record_disk_key (e->major, e->minor), usec, &owner,
                         e->kthread ? e->dirtier_ino : 0);
}

/* A kernel thread's write whose pages are no file's, on a disk under a
 * stack: the owner of what the stack's latest bio carried. */
static void
stacked_owner (LmAttrib *a, const char *disk, LmBpfSpinupRecord *e)
{
  LmAttribTask owner;
  guint64 ino;

  if (!lm_attrib_uppers_owner (a->uppers, disk, (gint64) (e->boot_ns / 1000), &owner, &ino))
    {
      g_debug ("%s woke by %s: no upper note with an owner within the window", disk, e->comm);
      return;
    }
  e->have_dirtier = TRUE;
  e->dirtier_ino = ino;
  e->dirtier_pid = owner.pid;
  e->dirtier_uid = (guint32) owner.uid;
  g_strlcpy (e->dirtier_comm, owner.comm, sizeof e->dirtier_comm);
  g_strlcpy (e->dirtier_thread, owner.thread, sizeof e->dirtier_thread);
}

/* @e's data was @owner's: a record that names nobody takes it. */
static void
take_owner (LmBpfSpinupRecord *e, const LmBpfSpinupRecord *owner)
{
  e->have_dirtier = TRUE;
  e->dirtier_ino = owner->dirtier_ino;
  e->dirtier_pid = owner->dirtier_pid;
  e->dirtier_uid = owner->dirtier_uid;
  memcpy (e->dirtier_comm, owner->dirtier_comm, sizeof e->dirtier_comm);
  memcpy (e->dirtier_thread, owner->dirtier_thread, sizeof e->dirtier_thread);
  e->dirtier_cgroup = owner->dirtier_cgroup;
}

/* @s's unit: of cgroup @id where the program saw it (a removed one's path
 * kept in its map), else of the blamed process while it lives. */
static void
name_unit (LmAttrib *a, guint64 id, LmSpinUp *s)
{
  g_autofree char *path = NULL;

  if (id != 0)
    {
      struct lm_bpf_cgroup_path v;
      /* The kernel takes a cgroup out of the tree before its rmdir
       * tracepoint runs: one removed in between is in neither, so the map
       * is asked again after the walk (which takes far longer than that). */
      if (bpf_map__lookup_elem (a->skel->maps.gone_cgroups, &id, sizeof id, &v, sizeof v, 0) == 0)
        path = g_strndup (v.path, sizeof v.path);
      else if ((path = lm_cgroup_path_of_id (id)) == NULL
               && bpf_map__lookup_elem (a->skel->maps.gone_cgroups, &id, sizeof id, &v, sizeof v, 0)
                      == 0)
        path = g_strndup (v.path, sizeof v.path);
      if (path == NULL)
        g_debug ("Spin-up of %s by %s: cgroup %" G_GUINT64_FORMAT
                 " neither in the tree nor among the removed",
                 s->disk, s->comm, id);
    }
  else if (s->via != LM_VIA_KERNEL)
    path = lm_cgroup_path_of_pid (s->pid, s->comm);
  g_autofree char *unit = lm_cgroup_unit_of_path (path);
  g_strlcpy (s->unit, unit != NULL ? unit : "", sizeof s->unit);
}

static void
deliver (LmAttrib *a, const char *disk, LmBpfSpinupRecord *e)
{
  LmSpinUp s = { 0 };

  g_strlcpy (s.disk, disk, sizeof s.disk);
  s.time_us = lm_attrib_realtime_us (CLOCK_BOOTTIME, (gint64) (e->boot_ns / 1000));
  s.pid = e->pid;
  g_strlcpy (s.comm, e->comm, sizeof s.comm);
  g_strlcpy (s.thread, e->thread, sizeof s.thread);
  s.uid = e->uid;
  s.write = e->write;
  s.sector = e->sector;
  s.quiet_since_us = lm_attrib_realtime_us (CLOCK_BOOTTIME, (gint64) (e->prev_ns / 1000));
  LmAttribDirtier dirtier = { e->dirtier_pid, e->dirtier_comm, e->dirtier_thread,
                              e->dirtier_uid, e->dirtier_ino,  NULL };
  lm_attrib_finish (&s, e->have_dirtier ? &dirtier : NULL, e->kthread);
  if (e->kswapd)
    g_strlcpy (s.note, LM_ATTRIB_NOTE_KSWAPD, sizeof s.note);
  /* Awake anyway: the activity before this spin-up goes first, in order. */
  bpf_drain (a);
  if (e->passthrough)
    s.via = LM_VIA_PASSTHROUGH;
  /* Whose part it was: the dirtier's for writeback, none for kernel work. */
  name_unit (a,
             s.via == LM_VIA_WRITEBACK ? e->dirtier_cgroup
             : s.via == LM_VIA_KERNEL  ? 0
                                       : e->cgroup,
             &s);
  a->config.func (&s, a->config.user_data);
}

/* The hold is over: what the stack carried meanwhile may name the owner. */
static gboolean
held_timeout (gpointer user_data)
{
  Held *h = user_data;
  LmAttrib *a = h->a;

  g_hash_table_steal (a->held, h->disk);
  if (!h->e.have_dirtier)
    stacked_owner (a, h->disk, &h->e);
  deliver (a, h->disk, &h->e);
  g_free (h->disk);
  g_free (h);
  return G_SOURCE_REMOVE;
}

static void
hold (LmAttrib *a, const char *disk, const LmBpfSpinupRecord *e)
{
  Held *h = g_hash_table_lookup (a->held, disk);

  /* One per disk: an older one still held goes first. */
  if (h != NULL)
    {
      g_source_remove (h->timer);
      held_timeout (h);
    }
  h = g_new0 (Held, 1);
  h->a = a;
  h->disk = g_strdup (disk);
  h->e = *e;
  h->timer = g_timeout_add (LM_ATTRIB_HOLD_MS, held_timeout, h);
  g_hash_table_insert (a->held, h->disk, h);
}

/* The kernel's next bio on @disk after its spin-up carried @e's data. */
static void
amend (LmAttrib *a, const char *disk, const LmBpfSpinupRecord *e)
{
  Held *h;

  if (!lm_blockdev_is_listed (disk))
    {
      LmAttribTask owner;
      record_task (&owner, e->dirtier_pid, e->dirtier_uid, e->dirtier_comm, e->dirtier_thread);
      g_debug ("Upper %u:%u: the same pass carried %s's data", e->major, e->minor, owner.comm);
      lm_attrib_uppers_amend (a->uppers, lm_bpf_record_disk_key (e->major, e->minor),
                              (gint64) (e->boot_ns / 1000), &owner, e->dirtier_ino);
      return;
    }
  h = g_hash_table_lookup (a->held, disk);
  if (h == NULL || h->e.have_dirtier)
    return;
  take_owner (&h->e, e);
  g_source_remove (h->timer);
  held_timeout (h);
}

static int
on_event (void *ctx, void *data, size_t size)
{
  LmAttrib *a = ctx;
  LmBpfSpinupRecord e;

  if (!lm_bpf_record_spinup (data, size, &e))
    return 0;
  g_autofree char *disk = lm_blockdev_disk_for_devnum (e.major, e.minor);
  if (e.amends)
    {
      amend (a, disk, &e);
      return 0;
    }
  /* A dm or md device is no disk: the disks under it report their own
   * spin-ups, blamed through stacked_owner where a kernel thread wrote. */
  if (!lm_blockdev_is_listed (disk))
    {
      note_upper (a, &e);
      return 0;
    }
  if (e.kthread && !e.have_dirtier && !e.kswapd && !e.passthrough)
    stacked_owner (a, disk, &e);
  if (e.kthread && !e.have_dirtier && !e.kswapd && !e.passthrough)
    {
      hold (a, disk, &e);
      return 0;
    }
  deliver (a, disk, &e);
  return 0;
}

/* What happened before attribution came on is unknown (the object may have
 * been loaded for the engine long before): its start counts as the last
 * I/O of every disk already seen, as for those seen later (start_ns). */
static void
reset_disk (struct lm_attrib_disk *d, gpointer user_data)
{
  __atomic_store_n (&d->last_io, *(const __u64 *) user_data, __ATOMIC_SEQ_CST);
}

/* The daemon's own command woke @disk: the programs drop it (it is the
 * daemon's), so its last I/O is moved here, never back in time: in place,
 * the programs' own moves win a race. */
static void
bpf_own_io (LmAttrib *a, const char *disk)
{
  struct lm_attrib_disk *d;
  struct timespec now;
  guint32 key;

  if (!lm_excluded_key_of (disk, &key) || (d = lm_bpf_shared_disk (key)) == NULL)
    return; /* not met yet: its first I/O is measured from the start */
  clock_gettime (CLOCK_BOOTTIME, &now);
  __u64 ns = (__u64) now.tv_sec * 1000000000 + (__u64) now.tv_nsec;
  __u64 old = __atomic_load_n (&d->last_io, __ATOMIC_SEQ_CST);
  while (old < ns
         && !__atomic_compare_exchange_n (&d->last_io, &old, ns, FALSE, __ATOMIC_SEQ_CST,
                                          __ATOMIC_SEQ_CST))
    ;
}

/* The programs' own time of @disk's last I/O (its slot, the idle filter's),
 * from CLOCK_BOOTTIME to CLOCK_MONOTONIC: both run alike while the machine
 * is up. */
static gboolean
bpf_last_io (LmAttrib *a, const char *disk, gint64 *mono_us)
{
  struct lm_attrib_disk *d;
  struct timespec boot, mono;
  guint32 key;

  if (!lm_excluded_key_of (disk, &key) || (d = lm_bpf_shared_disk (key)) == NULL)
    return FALSE;
  __u64 last = __atomic_load_n (&d->last_io, __ATOMIC_SEQ_CST);
  if (last == 0 || clock_gettime (CLOCK_BOOTTIME, &boot) != 0
      || clock_gettime (CLOCK_MONOTONIC, &mono) != 0)
    return FALSE;
  gint64 boot_us = (gint64) boot.tv_sec * G_USEC_PER_SEC + boot.tv_nsec / 1000;
  gint64 ago_us = MAX (0, boot_us - (gint64) (last / 1000));
  *mono_us = (gint64) mono.tv_sec * G_USEC_PER_SEC + mono.tv_nsec / 1000 - ago_us;
  return TRUE;
}

static LmAttrib *
bpf_start (const LmAttribConfig *config, GError **error)
{
  LmAttrib *a = g_new0 (LmAttrib, 1);
  struct timespec now;

  a->config = *config;
  a->uppers = lm_attrib_uppers_new ();
  a->held = g_hash_table_new (g_str_hash, g_str_equal);
  a->skel = lm_bpf_shared_ref (PROGRAM, error);
  if (a->skel == NULL)
    {
      bpf_stop (a);
      return NULL;
    }
  clock_gettime (CLOCK_BOOTTIME, &now);
  a->skel->data->idle_ns = (__u64) config->idle_ms * 1000000;
  a->skel->bss->start_ns = (__u64) now.tv_sec * 1000000000 + (__u64) now.tv_nsec;
  lm_bpf_shared_disks_foreach (reset_disk, &a->skel->bss->start_ns);
  a->skel->bss->attrib_on = 1;
  if (!lm_bpf_ring_open (&a->ring, bpf_map__fd (a->skel->maps.events), on_event, a, PROGRAM, error)
      || !lm_bpf_ring_open (&a->activity, bpf_map__fd (a->skel->maps.activity), on_run_woken, a,
                            PROGRAM, error))
    {
      bpf_stop (a);
      return NULL;
    }
  return a;
}

/* Loading is the only honest test (verifier, BTF, tracepoint names), and
 * takes milliseconds; done once, when the backend is chosen. */
static gboolean
bpf_probe (GError **error)
{
  return lm_bpf_shared_probe (PROGRAM, error);
}

const LmAttribBackend lm_attrib_bpf = {
  .name = "bpf",
  .probe = bpf_probe,
  .start = bpf_start,
  .stop = bpf_stop,
  .drain = bpf_drain,
  .event_driven = TRUE,
  .own_io = bpf_own_io,
  .last_io = bpf_last_io,
};

#else

static gboolean
bpf_probe (GError **error)
{
  g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
               "laptop-moded was built without BPF (clang, bpftool and libbpf were missing)");
  return FALSE;
}

const LmAttribBackend lm_attrib_bpf = {
  .name = "bpf",
  .probe = bpf_probe,
};

#endif
