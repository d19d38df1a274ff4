/* lm-bpf-shared.c: one loaded lm-attrib.bpf.c for the whole daemon. Two
 * objects (attribution's and the engine's) meant two programs on
 * block_bio_queue, each looking up the same disk for every bio; one object
 * runs one program per tracepoint (issue 29). */
#include "config.h"

#include "lm-attrib-config.h"

#if LM_HAVE_BPF

#include "lm-bpf-shared.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lm-attrib-bpf-event.h"
#include "lm-bpf.h"
#include "lm-excluded.h"

static struct lm_attrib_bpf *shared;
static struct lm_attrib_disk *slots; /* "disks", mapped (lm_bpf_shared_disk) */
static guint refs;

/* An array map's elements are 8-byte aligned in its mapping. */
G_STATIC_ASSERT (sizeof (struct lm_attrib_disk) % 8 == 0);
#define SLOTS_LEN (sizeof (struct lm_attrib_disk) * MAX_DISKS)
static guint engine_users;

/* Passthrough requests are watched where only they pass, blk_execute_rq()
 * and blk_execute_rq_nowait(), by fentry or else by kprobes; where neither
 * attaches, on block_rq_issue, where every request passes. Loading is tried
 * with what may fail to load (fentry: refused where there are no
 * trampolines, or by a kernel that forbids them) first; each kind of
 * program is attached by hand after the rest (attach_passthrough). */
enum
{
  LOAD_FENTRY,  /* fentry, kprobes and block_rq_issue */
  LOAD_KPROBE,  /* kprobes and block_rq_issue */
  LOAD_RQ_ISSUE /* block_rq_issue alone */
};

static struct lm_attrib_bpf *
open_and_load (int what, gboolean configure, int *err)
{
  struct lm_attrib_bpf *skel = lm_attrib_bpf__open ();

  if (skel == NULL)
    {
      *err = errno;
      return NULL;
    }
  struct bpf_program *fentry[] = { skel->progs.lm_execute_rq, skel->progs.lm_execute_rq_nowait,
                                   skel->progs.lm_sysctl_write, skel->progs.lm_sysfs_write };
  struct bpf_program *kprobe[]
      = { skel->progs.lm_kprobe_execute_rq, skel->progs.lm_kprobe_execute_rq_nowait,
          skel->progs.lm_kprobe_sysctl_write, skel->progs.lm_kprobe_sysfs_write };
  for (guint i = 0; i < G_N_ELEMENTS (fentry); i++)
    {
      bpf_program__set_autoload (fentry[i], what == LOAD_FENTRY);
      bpf_program__set_autoattach (fentry[i], FALSE);
      bpf_program__set_autoload (kprobe[i], what != LOAD_RQ_ISSUE && skel->rodata->have_kprobe_arg);
      bpf_program__set_autoattach (kprobe[i], FALSE);
    }
  /* Multigrain ctime's tracepoint (Linux 6.13 on): where the kernel has
   * none, btrfs and xfs time updates go unseen, as before. */
  bpf_program__set_autoload (skel->progs.lm_ctime_changed,
                             libbpf_find_vmlinux_btf_id ("ctime_ns_xchg", BPF_TRACE_RAW_TP) > 0);
  bpf_program__set_autoattach (skel->progs.lm_rq_issue, FALSE);
  bpf_program__set_autoattach (skel->progs.lm_cgroup_rmdir, FALSE);
  if (configure)
    {
      skel->rodata->self_tgid = (__u32) getpid ();
      lm_bpf_pidns (&skel->rodata->pidns_dev, &skel->rodata->pidns_ino);
      skel->rodata->ns_per_jiffy = lm_bpf_ns_per_jiffy ();
    }
  *err = lm_attrib_bpf__load (skel);
  if (*err != 0)
    {
      lm_attrib_bpf__destroy (skel);
      return NULL;
    }
  return skel;
}

static struct lm_attrib_bpf *
load (gboolean configure, int *err)
{
  static const char *const without[] = { "fentry", "kprobes" };

  for (int what = LOAD_FENTRY;; what++)
    {
      struct lm_attrib_bpf *skel = open_and_load (what, configure, err);
      if (skel != NULL || what == LOAD_RQ_ISSUE)
        return skel;
      g_debug ("Loading with %s on blk_execute_rq failed (%s); trying without", without[what],
               g_strerror (*err < 0 ? -*err : *err));
    }
}

/* Both programs of a pair attached (into the skeleton's links, which
 * lm_attrib_bpf__destroy() detaches), or neither. */
static gboolean
attach_pair (struct bpf_program *a, struct bpf_link **la, struct bpf_program *b,
             struct bpf_link **lb, const char *what)
{
  if (!bpf_program__autoload (a) || !bpf_program__autoload (b))
    return FALSE;
  *la = bpf_program__attach (a);
  if (*la != NULL)
    *lb = bpf_program__attach (b);
  if (*la != NULL && *lb != NULL)
    return TRUE;
  g_debug ("Attaching %s failed (%s)", what, g_strerror (errno));
  if (*la != NULL)
    bpf_link__destroy (*la);
  *la = NULL;
  return FALSE;
}

/* Who writes sysctls and sysfs files: the fentry pair where it loaded,
 * else the kprobe pair; without either, a changed setting's writer is not
 * named (lm-conflicts.c says which power tools are installed instead). */
static void
attach_writers (struct lm_attrib_bpf *skel)
{
  __typeof__ (skel->progs) *p = &skel->progs;
  __typeof__ (skel->links) *l = &skel->links;

  if (attach_pair (p->lm_sysctl_write, &l->lm_sysctl_write, p->lm_sysfs_write, &l->lm_sysfs_write,
                   "fentry on proc_sys_write"))
    g_debug ("Writes to sysctls and sysfs watched by fentry");
  else if (attach_pair (p->lm_kprobe_sysctl_write, &l->lm_kprobe_sysctl_write,
                        p->lm_kprobe_sysfs_write, &l->lm_kprobe_sysfs_write,
                        "kprobes on proc_sys_write"))
    g_debug ("Writes to sysctls and sysfs watched by kprobes");
  else
    g_message ("Writes to sysctls and sysfs not watched (neither fentry nor kprobes attach): "
               "a setting changed by another program names no writer");
}

/* What watches passthrough requests, for the log; NULL (errno set) when
 * not even block_rq_issue attached. */
static const char *
attach_passthrough (struct lm_attrib_bpf *skel)
{
  __typeof__ (skel->progs) *p = &skel->progs;
  __typeof__ (skel->links) *l = &skel->links;

  if (attach_pair (p->lm_execute_rq, &l->lm_execute_rq, p->lm_execute_rq_nowait,
                   &l->lm_execute_rq_nowait, "fentry on blk_execute_rq"))
    return "fentry on blk_execute_rq()";
  if (attach_pair (p->lm_kprobe_execute_rq, &l->lm_kprobe_execute_rq,
                   p->lm_kprobe_execute_rq_nowait, &l->lm_kprobe_execute_rq_nowait,
                   "kprobes on blk_execute_rq"))
    return "kprobes on blk_execute_rq()";
  l->lm_rq_issue = bpf_program__attach (p->lm_rq_issue);
  if (l->lm_rq_issue == NULL)
    return NULL;
  return "block_rq_issue (every request passes it: no fentry nor kprobe on blk_execute_rq())";
}

static void
add_excluded (struct lm_attrib_bpf *skel)
{
  lm_excluded_add_disks_map (bpf_map__fd (skel->maps.excluded), bpf_map__fd (skel->maps.disk_index),
                             (guint8 *) slots, sizeof (struct lm_attrib_disk), MAX_DISKS,
                             G_STRUCT_OFFSET (struct lm_attrib_disk, excluded),
                             G_STRUCT_OFFSET (struct lm_attrib_disk, last_io), -1);
}

static void
unmap_slots (void)
{
  if (slots != NULL)
    munmap (slots, SLOTS_LEN);
  slots = NULL;
}

struct lm_attrib_bpf *
lm_bpf_shared_ref (const char *program, GError **error)
{
  int err;

  if (shared != NULL)
    {
      refs++;
      return shared;
    }
  lm_bpf_log_to_glib ();
  struct lm_attrib_bpf *skel = load (TRUE, &err);
  if (skel == NULL)
    {
      lm_bpf_set_error (error, err, "load", program);
      return NULL;
    }
  slots = mmap (NULL, SLOTS_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd (skel->maps.disks),
                0);
  if (slots == MAP_FAILED)
    {
      slots = NULL;
      lm_bpf_set_error (error, -errno, "map the disks of", program);
      lm_attrib_bpf__destroy (skel);
      return NULL;
    }
  /* Before attaching: no I/O of an excluded disk is ever looked at. */
  add_excluded (skel);
  err = lm_attrib_bpf__attach (skel);
  const char *how = NULL;
  if (err == 0)
    {
      how = attach_passthrough (skel);
      if (how == NULL)
        err = -errno;
    }
  if (err != 0)
    {
      lm_bpf_set_error (error, err, "attach", program);
      lm_excluded_remove_map (bpf_map__fd (skel->maps.excluded));
      unmap_slots ();
      lm_attrib_bpf__destroy (skel);
      return NULL;
    }
  g_message ("Passthrough requests (SG_IO, NVMe) watched by %s", how);
  attach_writers (skel);
  /* Without it, units are named only while their cgroup is there. */
  skel->links.lm_cgroup_rmdir = bpf_program__attach (skel->progs.lm_cgroup_rmdir);
  if (skel->links.lm_cgroup_rmdir == NULL)
    g_message ("cgroup_rmdir not attached (%s): a unit that ended before its data was written "
               "is not named",
               g_strerror (errno));
  shared = skel;
  refs = 1;
  return shared;
}

void
lm_bpf_shared_unref (void)
{
  g_return_if_fail (refs > 0);
  if (--refs > 0)
    return;
  lm_excluded_remove_map (bpf_map__fd (shared->maps.excluded));
  unmap_slots ();
  g_clear_pointer (&shared, lm_attrib_bpf__destroy);
  engine_users = 0;
}

gboolean
lm_bpf_shared_probe (const char *program, GError **error)
{
  static int loaded_errno = -1; /* not tried yet */

  if (!lm_bpf_check_possible (program, error))
    return FALSE;
  if (shared != NULL)
    return TRUE;
  if (loaded_errno < 0)
    {
      int err = 0;
      lm_bpf_log_to_glib ();
      struct lm_attrib_bpf *skel = load (FALSE, &err);
      loaded_errno = skel != NULL ? 0 : (err < 0 ? -err : (err > 0 ? err : EINVAL));
      lm_attrib_bpf__destroy (skel);
    }
  if (loaded_errno != 0)
    return lm_bpf_set_error (error, loaded_errno, "load", program);
  return TRUE;
}

struct lm_attrib_disk *
lm_bpf_shared_disk (guint32 key)
{
  guint32 slot;

  g_return_val_if_fail (shared != NULL, NULL);
  if (bpf_map_lookup_elem (bpf_map__fd (shared->maps.disk_index), &key, &slot) != 0
      || slot >= MAX_DISKS)
    return NULL;
  return &slots[slot];
}

void
lm_bpf_shared_disks_foreach (LmBpfDiskFunc func, gpointer user_data)
{
  int fd = bpf_map__fd (shared->maps.disk_index);
  __u32 key, next;
  __u32 *prev = NULL;

  g_return_if_fail (shared != NULL);
  while (bpf_map_get_next_key (fd, prev, &next) == 0)
    {
      struct lm_attrib_disk *d;

      key = next;
      prev = &key;
      d = lm_bpf_shared_disk (key);
      if (d != NULL)
        func (d, user_data);
    }
}

static void
disarm (struct lm_attrib_disk *d, gpointer user_data)
{
  __atomic_store_n (&d->armed, 0, __ATOMIC_SEQ_CST);
}

/* What a fresh object had: no disk armed, no removable filesystem known. */
static void
engine_reset (void)
{
  __u32 next;
  int fd;

  lm_bpf_shared_disks_foreach (disarm, NULL);
  fd = bpf_map__fd (shared->maps.removable);
  while (bpf_map_get_next_key (fd, NULL, &next) == 0)
    if (bpf_map_delete_elem (fd, &next) != 0)
      break;
}

void
lm_bpf_shared_engine (gboolean on)
{
  g_return_if_fail (shared != NULL);
  if (on && engine_users++ == 0)
    engine_reset ();
  else if (!on && engine_users > 0)
    engine_users--;
  shared->bss->engine_on = engine_users > 0;
}

char *
lm_bpf_shared_setting_writer (const char *up, const char *dir, const char *name)
{
  struct lm_bpf_setting_key key;
  struct lm_bpf_setting_writer w;

  if (shared == NULL)
    return NULL;
  memset (&key, 0, sizeof key);
  g_strlcpy (key.up, up, sizeof key.up);
  g_strlcpy (key.dir, dir, sizeof key.dir);
  g_strlcpy (key.name, name, sizeof key.name);
  if (bpf_map__lookup_elem (shared->maps.setting_writers, &key, sizeof key, &w, sizeof w, 0) != 0)
    return NULL;
  g_autofree char *comm = g_strndup (w.comm, sizeof w.comm);
  return g_strdup_printf ("%s[%u]", comm, w.pid);
}

#else

char *
lm_bpf_shared_setting_writer (const char *up, const char *dir, const char *name)
{
  return NULL;
}

#endif
