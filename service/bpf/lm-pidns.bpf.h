/* lm-pidns.bpf.h: pids as the daemon sees them. bpf_get_current_pid_tgid()
 * gives the initial pid namespace's numbers; a daemon in a child pid
 * namespace (a container, `unshare -p`) knows its processes, its own
 * threads and getpid() by that namespace's. lm-bpf.c sets pidns_* before
 * load when the daemon is not in the initial namespace. */
#pragma once

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

/* nsfs's device and the inode of the daemon's /proc/self/ns/pid; 0 when
 * the daemon is in the initial pid namespace (plain pids are right). */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

#define LM_PIDNS_MAX_WALK 8

/* @p's number in the daemon's namespace, or 0 when it has none there.
 * A pid has one number per level from the initial namespace down to the
 * one it was made in; the daemon's is the level whose namespace has its
 * inode. Bounded: at most LM_PIDNS_MAX_WALK levels are looked at. */
static __always_inline __u32
lm_pidns_nr (struct pid *p)
{
  unsigned int level = BPF_CORE_READ (p, level);
  __u64 base = (__u64) p + bpf_core_field_offset (struct pid, numbers);

  for (int i = 0; i < LM_PIDNS_MAX_WALK; i++)
    {
      struct upid up = {};
      struct pid_namespace *ns;

      if ((int) level - i < 0)
        break;
      if (bpf_probe_read_kernel (&up, sizeof up, (void *) (base + (level - i) * sizeof up)) != 0)
        break;
      ns = up.ns;
      if (BPF_CORE_READ (ns, ns.inum) == pidns_ino)
        return (__u32) up.nr;
    }
  return 0;
}

/* (tgid << 32) | tid of current, as the daemon sees them: 0 for a task the
 * daemon cannot see (one in a parent namespace). @walk: also find tasks in
 * namespaces nested below the daemon's (rare paths only; the daemon's own
 * threads never need it). */
static __always_inline __u64
lm_current_pid_tgid (int walk)
{
  struct bpf_pidns_info info;

  if (pidns_ino == 0)
    return bpf_get_current_pid_tgid ();
  /* Available since 5.7; the programs need 5.12 for -mcpu=v3 anyway. */
  if (bpf_get_ns_current_pid_tgid (pidns_dev, pidns_ino, &info, sizeof info) == 0)
    return ((__u64) info.tgid << 32) | info.pid;
  if (!walk)
    return 0;
  struct task_struct *task = (struct task_struct *) bpf_get_current_task ();
  __u32 tid = lm_pidns_nr (BPF_CORE_READ (task, thread_pid));
  __u32 tgid = lm_pidns_nr (BPF_CORE_READ (task, group_leader, thread_pid));
  return ((__u64) tgid << 32) | tid;
}
