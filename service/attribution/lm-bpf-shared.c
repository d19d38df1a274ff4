/* lm-bpf-shared.c: one loaded lm-attrib.bpf.c for the whole daemon. Two
 * objects (attribution's and the engine's) meant two programs on
 * block_bio_queue, each looking up the same disk for every bio; one object
 * runs one program per tracepoint (issue 29). */
#include "config.h"

#include "lm-attrib-config.h"

#if LM_HAVE_BPF

#include "lm-bpf-shared.h"

#include <errno.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lm-attrib-bpf-event.h"
#include "lm-bpf.h"
#include "lm-excluded.h"

static struct lm_attrib_bpf *shared;
static guint refs;
static guint engine_users;

/* Passthrough requests are watched where only they pass (fentry on
 * blk_execute_rq and blk_execute_rq_nowait) or, where fentry is missing,
 * on block_rq_issue, where every request passes. */
static struct lm_attrib_bpf *
open_and_load (gboolean fentry, gboolean configure, int *err)
{
  struct lm_attrib_bpf *skel = lm_attrib_bpf__open ();

  if (skel == NULL)
    {
      *err = errno;
      return NULL;
    }
  bpf_program__set_autoload (skel->progs.lm_execute_rq, fentry);
  bpf_program__set_autoload (skel->progs.lm_execute_rq_nowait, fentry);
  bpf_program__set_autoload (skel->progs.lm_rq_issue, !fentry);
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
  struct lm_attrib_bpf *skel = open_and_load (TRUE, configure, err);

  if (skel != NULL)
    return skel;
  g_debug ("Loading with fentry on blk_execute_rq failed (%s); watching block_rq_issue instead",
           g_strerror (*err < 0 ? -*err : *err));
  return open_and_load (FALSE, configure, err);
}

static void
add_excluded (struct lm_attrib_bpf *skel)
{
  lm_excluded_add_disks_map (bpf_map__fd (skel->maps.excluded), bpf_map__fd (skel->maps.disks),
                             G_STRUCT_OFFSET (struct lm_attrib_disk, excluded),
                             G_STRUCT_OFFSET (struct lm_attrib_disk, last_io),
                             bpf_map__fd (skel->maps.dirtiers));
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
  /* Before attaching: no I/O of an excluded disk is ever looked at. */
  add_excluded (skel);
  err = lm_attrib_bpf__attach (skel);
  if (err != 0 && bpf_program__autoload (skel->progs.lm_execute_rq))
    {
      /* Loaded but not attachable (no trampoline for it): block_rq_issue. */
      g_debug ("Attaching fentry on blk_execute_rq failed (%s); watching block_rq_issue instead",
               g_strerror (err < 0 ? -err : err));
      lm_excluded_remove_map (bpf_map__fd (skel->maps.excluded));
      lm_attrib_bpf__destroy (skel);
      skel = open_and_load (FALSE, TRUE, &err);
      if (skel == NULL)
        {
          lm_bpf_set_error (error, err, "load", program);
          return NULL;
        }
      add_excluded (skel);
      err = lm_attrib_bpf__attach (skel);
    }
  if (err != 0)
    {
      lm_bpf_set_error (error, err, "attach", program);
      lm_excluded_remove_map (bpf_map__fd (skel->maps.excluded));
      lm_attrib_bpf__destroy (skel);
      return NULL;
    }
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

/* What a fresh object had: no disk armed, no removable filesystem known. */
static void
engine_reset (void)
{
  int fd = bpf_map__fd (shared->maps.disks);
  __u32 key, next;
  __u32 *prev = NULL;

  while (bpf_map_get_next_key (fd, prev, &next) == 0)
    {
      struct lm_attrib_disk d;

      key = next;
      prev = &key;
      if (bpf_map_lookup_elem (fd, &key, &d) != 0 || d.armed == 0)
        continue;
      d.armed = 0;
      bpf_map_update_elem (fd, &key, &d, BPF_EXIST);
    }
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

#endif
