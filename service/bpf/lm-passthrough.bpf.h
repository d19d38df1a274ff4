/* lm-passthrough.bpf.h: lm-attrib.bpf.c's programs for driver-private
 * requests, which never pass block_bio_queue; lm-bpf-shared.c attaches the
 * best kind the kernel takes. Included at the end of lm-attrib.bpf.c only:
 * it uses that file's maps and helpers. */
#pragma once

/* --- passthrough requests ---------------------------------------------------- */

/* SG_IO, NVMe admin and I/O passthrough, and drivers' own commands are
 * driver-private requests (REQ_OP_DRV_IN/OUT, unchanged since 4.11): they
 * never pass block_bio_queue, nor block_rq_insert since 6.5 (they go
 * straight to the dispatch list). They are all sent by blk_execute_rq()
 * (synchronous: SG_IO, NVME_IOCTL_*, virtio-blk's serial number) or
 * blk_execute_rq_nowait() (sg, NVMe over io_uring), which nothing else
 * calls: watched there, by fentry or else by a kprobe, they cost the
 * machine's ordinary I/O nothing. Where neither attaches, block_rq_issue,
 * which every request passes, is watched instead (lm-bpf-shared.c). */
#define LM_REQ_OP_DRV_IN 34
#define LM_REQ_OP_DRV_OUT 35

static __always_inline int
is_passthrough (__u32 op)
{
  return op == LM_REQ_OP_DRV_IN || op == LM_REQ_OP_DRV_OUT;
}

/* A synchronous ioctl (SG_IO, NVME_IOCTL_*) dispatches its request in the
 * submitter's own context, so current is who to blame. A kernel thread
 * here is a driver's own command (removable-media polling, a runtime
 * resume) or a queue run on behalf of someone we cannot name: neither is
 * counted, so polling never hides a disk's idle gap. @op: the request's,
 * a passthrough one; @key: its disk's. */
static __always_inline int
passthrough (__u32 op, __u32 key)
{
  struct lm_attrib_disk *d;
  __u64 now, id, prev;

  if (!attrib_on)
    return 0;
  id = lm_current_pid_tgid (1);
  if ((__u32) (id >> 32) == self_tgid || current_is_kthread ())
    return 0;
  d = disk_slot (key);
  if (d == 0 || d->excluded)
    return 0;
  now = bpf_ktime_get_boot_ns ();
  note_activity (key, op == LM_REQ_OP_DRV_OUT, now, 0);
  if (!idle_gap (d, now, &prev))
    return 0;

  struct lm_bpf_spinup *e = spinup_reserve (key, now);
  if (e == 0)
    return 0;
  e->prev_ns = prev;
  e->write = op == LM_REQ_OP_DRV_OUT;
  e->passthrough = 1;
  bpf_ringbuf_submit (e, 0);
  return 0;
}

/* @rq: a pointer the verifier knows (BTF: fentry, tp_btf). */
static __always_inline int
passthrough_rq (struct request *rq)
{
  __u32 op = rq->cmd_flags & REQ_OP_MASK;
  struct request_queue *q;
  struct gendisk *disk;

  if (!is_passthrough (op))
    return 0;
  q = rq->q;
  if (q == 0)
    return 0;
  disk = q->disk;
  if (disk == 0)
    return 0;
  return passthrough (op, disk_key (disk));
}

SEC ("fentry/blk_execute_rq")
int
BPF_PROG (lm_execute_rq, struct request *rq, bool at_head)
{
  return passthrough_rq (rq);
}

SEC ("fentry/blk_execute_rq_nowait")
int
BPF_PROG (lm_execute_rq_nowait, struct request *rq, bool at_head)
{
  return passthrough_rq (rq);
}

/* Kprobes, where trampolines are refused (a kernel that allows no fentry
 * on this architecture, or a locked-down one) but kprobes are built in:
 * attached through the perf kprobe PMU, no tracefs needed. @rq is then
 * a plain kernel pointer, read with bpf_probe_read_kernel. Only where
 * lm-vmlinux.h knows the first argument's register (have_kprobe_arg). */
struct pt_regs;

#ifdef LM_KPROBE_ARG1
const volatile __u32 have_kprobe_arg = 1;

static __always_inline int
passthrough_kprobe (struct pt_regs *regs)
{
  struct request *rq = (struct request *) LM_KPROBE_ARG1 (regs);
  __u32 op = BPF_CORE_READ (rq, cmd_flags) & REQ_OP_MASK;
  struct gendisk *disk;

  if (!is_passthrough (op))
    return 0;
  disk = BPF_CORE_READ (rq, q, disk);
  if (disk == 0)
    return 0;
  return passthrough (op, ((__u32) BPF_CORE_READ (disk, major) << 20)
                              | ((__u32) BPF_CORE_READ (disk, first_minor) & 0xfffff));
}
#else
const volatile __u32 have_kprobe_arg = 0;

static __always_inline int
passthrough_kprobe (struct pt_regs *regs)
{
  return 0;
}
#endif

SEC ("kprobe/blk_execute_rq")
int
lm_kprobe_execute_rq (struct pt_regs *regs)
{
  return passthrough_kprobe (regs);
}

SEC ("kprobe/blk_execute_rq_nowait")
int
lm_kprobe_execute_rq_nowait (struct pt_regs *regs)
{
  return passthrough_kprobe (regs);
}

/* The last resort: every request passes here, so one load and a compare
 * for all but the rare passthrough one. */
SEC ("tp_btf/block_rq_issue")
int
BPF_PROG (lm_rq_issue, struct request *rq)
{
  return passthrough_rq (rq);
}
