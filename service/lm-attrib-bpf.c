/* lm-attrib-bpf.c: the bpf attribution backend: loads lm-attrib.bpf.c (CO-RE)
 * on block_bio_queue, block_rq_issue (passthrough) and
 * writeback_mark_inode_dirty and reads its ring
 * buffer from the main loop. Never polls: the fd wakes us per spin-up. */
#include "config.h"

#include "lm-attrib-config.h"

#include <errno.h>
#include <unistd.h>

#include "lm-attrib.h"
#include "lm-bpf-record.h"
#include "lm-bpf.h"
#include "lm-error.h"
#include "lm-paths.h"

#if LM_HAVE_BPF

#include <bpf/libbpf.h>
#include <glib-unix.h>
#include <linux/types.h>

#include "lm-attrib-bpf-event.h"
#include "lm-attrib.skel.h"

#define PROGRAM "spin-up attribution"

struct _LmAttrib
{
  LmAttribConfig config;
  struct lm_attrib_bpf *skel;
  LmBpfRing ring;
};

static void
bpf_stop (LmAttrib *a)
{
  if (a == NULL)
    return;
  lm_bpf_ring_close (&a->ring);
  g_clear_pointer (&a->skel, lm_attrib_bpf__destroy);
  g_free (a);
}

static int
on_event (void *ctx, void *data, size_t size)
{
  LmAttrib *a = ctx;
  LmBpfSpinupRecord e;
  LmSpinUp s = { 0 };

  if (!lm_bpf_record_spinup (data, size, &e))
    return 0;
  g_autofree char *disk = lm_blockdev_disk_for_devnum (e.major, e.minor);

  g_strlcpy (s.disk, disk, sizeof s.disk);
  s.time_us = lm_attrib_realtime_us (CLOCK_BOOTTIME, (gint64) (e.boot_ns / 1000));
  s.pid = e.pid;
  g_strlcpy (s.comm, e.comm, sizeof s.comm);
  s.uid = e.uid;
  s.write = e.write;
  s.sector = e.sector;
  lm_attrib_finish (&s, e.dirtier_pid, e.dirtier_comm, e.dirtier_uid, e.dirtier_ino, NULL,
                    e.have_dirtier, e.kthread);
  if (e.passthrough)
    s.via = LM_VIA_PASSTHROUGH;
  a->config.func (&s, a->config.user_data);
  return 0;
}

static LmAttrib *
bpf_start (const LmAttribConfig *config, GError **error)
{
  LmAttrib *a = g_new0 (LmAttrib, 1);
  struct timespec now;
  int err;

  a->config = *config;
  lm_bpf_log_to_glib ();
  a->skel = lm_attrib_bpf__open ();
  if (a->skel == NULL)
    {
      lm_bpf_set_error (error, errno, "open", PROGRAM);
      bpf_stop (a);
      return NULL;
    }
  a->skel->rodata->idle_ns = (__u64) config->idle_ms * 1000000;
  a->skel->rodata->self_tgid = (__u32) getpid ();
  err = lm_attrib_bpf__load (a->skel);
  if (err != 0)
    {
      lm_bpf_set_error (error, err, "load", PROGRAM);
      bpf_stop (a);
      return NULL;
    }
  clock_gettime (CLOCK_BOOTTIME, &now);
  a->skel->bss->start_ns = (__u64) now.tv_sec * 1000000000 + (__u64) now.tv_nsec;
  err = lm_attrib_bpf__attach (a->skel);
  if (err != 0)
    {
      lm_bpf_set_error (error, err, "attach", PROGRAM);
      bpf_stop (a);
      return NULL;
    }
  if (!lm_bpf_ring_open (&a->ring, bpf_map__fd (a->skel->maps.events), on_event, a, PROGRAM, error))
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
  if (!lm_bpf_check_possible (PROGRAM, error))
    return FALSE;
  lm_bpf_log_to_glib ();
  struct lm_attrib_bpf *skel = lm_attrib_bpf__open_and_load ();
  if (skel == NULL)
    return lm_bpf_set_error (error, errno, "load", PROGRAM);
  lm_attrib_bpf__destroy (skel);
  return TRUE;
}

const LmAttribBackend lm_attrib_bpf = {
  .name = "bpf",
  .probe = bpf_probe,
  .start = bpf_start,
  .stop = bpf_stop,
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
