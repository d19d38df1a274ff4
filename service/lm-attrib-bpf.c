/* lm-attrib-bpf.c: the bpf attribution backend: loads lm-attrib.bpf.c (CO-RE)
 * on block_bio_queue and writeback_mark_inode_dirty and reads its ring
 * buffer from the main loop. Never polls: the fd wakes us per spin-up. */
#include "config.h"

#include "lm-attrib-config.h"

#include <errno.h>
#include <unistd.h>

#include "lm-attrib.h"
#include "lm-error.h"
#include "lm-paths.h"

#if LM_HAVE_BPF

#include <bpf/libbpf.h>
#include <glib-unix.h>
#include <linux/types.h>

#include "lm-attrib-bpf-event.h"
#include "lm-attrib.skel.h"

struct _LmAttrib
{
  LmAttribConfig config;
  struct lm_attrib_bpf *skel;
  struct ring_buffer *ring;
  guint source;
};

/* libbpf explains a failed load (the verifier, a missing tracepoint) on
 * its print hook; keep it for the debug log instead of stderr. */
static int
libbpf_log (enum libbpf_print_level level, const char *format, va_list args)
{
  if (level == LIBBPF_DEBUG)
    return 0;
  g_autofree char *msg = g_strdup_vprintf (format, args);
  g_debug ("libbpf: %s", g_strchomp (msg));
  return 0;
}

static void
bpf_stop (LmAttrib *a)
{
  if (a == NULL)
    return;
  if (a->source != 0)
    g_source_remove (a->source);
  g_clear_pointer (&a->ring, ring_buffer__free);
  g_clear_pointer (&a->skel, lm_attrib_bpf__destroy);
  g_free (a);
}

static int
on_event (void *ctx, void *data, size_t size)
{
  LmAttrib *a = ctx;
  const struct lm_bpf_spinup *e = data;
  LmSpinUp s = { 0 };

  if (size < sizeof *e)
    return 0;
  g_autofree char *disk = lm_attrib_disk_for_devnum (e->major, e->minor);
  g_autofree char *comm = g_strndup (e->comm, sizeof e->comm);
  g_autofree char *dirtier = g_strndup (e->dirtier_comm, sizeof e->dirtier_comm);

  g_strlcpy (s.disk, disk, sizeof s.disk);
  s.time_us = lm_attrib_realtime_us (CLOCK_BOOTTIME, (gint64) (e->boot_ns / 1000));
  s.pid = e->pid;
  g_strlcpy (s.comm, comm, sizeof s.comm);
  s.uid = e->uid;
  s.write = e->write != 0;
  s.sector = e->sector;
  lm_attrib_finish (&s, e->dirtier_pid, dirtier, e->dirtier_uid, e->dirtier_ino, NULL,
                    e->have_dirtier != 0, e->kthread != 0);
  a->config.func (&s, a->config.user_data);
  return 0;
}

static gboolean
on_ring_readable (int fd, GIOCondition condition, gpointer user_data)
{
  LmAttrib *a = user_data;

  if (ring_buffer__consume (a->ring) < 0)
    g_debug ("Reading the BPF ring buffer failed");
  return G_SOURCE_CONTINUE;
}

static gboolean
set_bpf_error (GError **error, int err, const char *what)
{
  g_set_error (error, LM_ERROR, LM_ERROR_FAILED,
               "Cannot %s the spin-up BPF program: %s (needs root, a kernel with BTF and the "
               "block_bio_queue tracepoint; run with --verbose for libbpf's reason)",
               what, g_strerror (err < 0 ? -err : err));
  return FALSE;
}

static LmAttrib *
bpf_start (const LmAttribConfig *config, GError **error)
{
  LmAttrib *a = g_new0 (LmAttrib, 1);
  struct timespec now;
  int err;

  a->config = *config;
  libbpf_set_print (libbpf_log);
  a->skel = lm_attrib_bpf__open ();
  if (a->skel == NULL)
    {
      set_bpf_error (error, errno, "open");
      bpf_stop (a);
      return NULL;
    }
  a->skel->rodata->idle_ns = (__u64) config->idle_ms * 1000000;
  err = lm_attrib_bpf__load (a->skel);
  if (err != 0)
    {
      set_bpf_error (error, err, "load");
      bpf_stop (a);
      return NULL;
    }
  clock_gettime (CLOCK_BOOTTIME, &now);
  a->skel->bss->start_ns = (__u64) now.tv_sec * 1000000000 + (__u64) now.tv_nsec;
  err = lm_attrib_bpf__attach (a->skel);
  if (err != 0)
    {
      set_bpf_error (error, err, "attach");
      bpf_stop (a);
      return NULL;
    }
  a->ring = ring_buffer__new (bpf_map__fd (a->skel->maps.events), on_event, a, NULL);
  if (a->ring == NULL)
    {
      set_bpf_error (error, errno, "read the ring buffer of");
      bpf_stop (a);
      return NULL;
    }
  a->source = g_unix_fd_add (ring_buffer__epoll_fd (a->ring), G_IO_IN, on_ring_readable, a);
  return a;
}

/* Loading is the only honest test (verifier, BTF, tracepoint names), and
 * takes milliseconds; done once, when the backend is chosen. */
static gboolean
bpf_probe (GError **error)
{
  g_autofree char *btf = lm_path ("/sys/kernel/btf/vmlinux");

  if (!g_file_test (btf, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                   "%s is missing: the kernel has no BTF (CONFIG_DEBUG_INFO_BTF)", btf);
      return FALSE;
    }
  if (geteuid () != 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "Loading BPF programs needs root");
      return FALSE;
    }
  libbpf_set_print (libbpf_log);
  struct lm_attrib_bpf *skel = lm_attrib_bpf__open_and_load ();
  if (skel == NULL)
    return set_bpf_error (error, errno, "load");
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
