/* lm-bpf.h: what the daemon's BPF programs share: libbpf's log, the
 * checks before loading, errors, and ring buffers read on the main loop.
 * Owns no program; each engine loads its own skeleton. */
#pragma once

#include "lm-attrib-config.h"

#include <glib.h>

G_BEGIN_DECLS

gboolean lm_bpf_check_possible (const char *program, GError **error);
gboolean lm_bpf_set_error (GError **error, int err, const char *what, const char *program);

#if LM_HAVE_BPF
#include <bpf/libbpf.h>
#include <linux/types.h>

void lm_bpf_log_to_glib (void);
/* The daemon's pid namespace (nsfs device and inode) for the programs'
 * pidns_dev and pidns_ino; both 0 in the initial pid namespace, where the
 * kernel's plain pids are the daemon's. */
void lm_bpf_pidns (__u64 *dev, __u64 *ino);
/* Nanoseconds per jiffy, from the running kernel's CONFIG_HZ (its
 * /boot/config-RELEASE or /proc/config.gz), for the programs' fast paths
 * (lm-jclock.bpf.h); 0 when neither says. */
__u64 lm_bpf_ns_per_jiffy (void);

typedef struct
{
  struct ring_buffer *ring;
  guint source;
  const char *program;
} LmBpfRing;

gboolean lm_bpf_ring_open (LmBpfRing *ring, int map_fd, ring_buffer_sample_fn sample, void *ctx,
                           const char *program, GError **error);
void lm_bpf_ring_close (LmBpfRing *ring);
#endif

G_END_DECLS
