/* lm-bpf-record.c: decoding of the records the BPF programs put in their
 * ring buffers. A record is copied before it is read (the ring buffer's
 * memory is the kernel's layout, not necessarily aligned for every field)
 * and shorter records than the struct are refused. */
#include "lm-bpf-record.h"

#include <linux/types.h>
#include <string.h>

#include "lm-attrib-bpf-event.h"
#include "lm-flush-bpf-event.h"

/* Zero @out, and copy the event of @data into @e when it is whole. */
static gboolean
record_copy (const void *data, gsize size, void *e, gsize e_size, void *out, gsize out_size)
{
  memset (out, 0, out_size);
  if (data == NULL || size < e_size)
    return FALSE;
  memcpy (e, data, e_size);
  return TRUE;
}

gboolean
lm_bpf_record_spinup (const void *data, gsize size, LmBpfSpinupRecord *out)
{
  struct lm_bpf_spinup e;

  if (!record_copy (data, size, &e, sizeof e, out, sizeof *out))
    return FALSE;
  out->boot_ns = e.boot_ns;
  out->sector = e.sector;
  out->dirtier_ino = e.dirtier_ino;
  out->major = e.major;
  out->minor = e.minor;
  out->pid = e.pid;
  out->uid = e.uid;
  out->write = e.write != 0;
  out->kthread = e.kthread != 0;
  out->have_dirtier = e.have_dirtier != 0;
  out->dirtier_pid = e.dirtier_pid;
  out->dirtier_uid = e.dirtier_uid;
  out->prev_ns = e.prev_ns;
  out->passthrough = e.passthrough != 0;
  G_STATIC_ASSERT (sizeof out->comm > sizeof e.comm);
  memcpy (out->comm, e.comm, sizeof e.comm);
  memcpy (out->dirtier_comm, e.dirtier_comm, sizeof e.dirtier_comm);
  G_STATIC_ASSERT (sizeof out->thread > sizeof e.thread);
  memcpy (out->thread, e.thread, sizeof e.thread);
  memcpy (out->dirtier_thread, e.dirtier_thread, sizeof e.dirtier_thread);
  out->kswapd = e.kswapd != 0;
  out->amends = e.amends != 0;
  out->cgroup = e.cgroup;
  out->dirtier_cgroup = e.dirtier_cgroup;
  return TRUE;
}

gboolean
lm_bpf_record_armed (const void *data, gsize size, LmBpfArmedRecord *out)
{
  struct lm_flush_armed e;

  if (!record_copy (data, size, &e, sizeof e, out, sizeof *out))
    return FALSE;
  out->boot_ns = e.boot_ns;
  out->major = e.major;
  out->minor = e.minor;
  out->pid = e.pid;
  out->write = e.write != 0;
  G_STATIC_ASSERT (sizeof out->comm > sizeof e.comm);
  memcpy (out->comm, e.comm, sizeof e.comm);
  return TRUE;
}

guint32
lm_bpf_record_disk_key (guint32 major, guint32 minor)
{
  return (major << 20) | (minor & 0xfffff);
}
