/* lm-attrib-bpf-event.h: the record the BPF program sends for a spin-up.
 * Shared by the kernel side and lm-attrib-bpf.c; fixed-size fields only,
 * never a pointer, so both sides agree on its layout. */
#pragma once

#define LM_BPF_COMM_LEN 16

struct lm_bpf_spinup
{
  __u64 boot_ns; /* CLOCK_BOOTTIME of the waking bio */
  __u64 sector;  /* on the whole disk (partitions are remapped before the tracepoint) */
  __u64 dirtier_ino;
  __u32 major; /* the whole disk */
  __u32 minor;
  __u32 pid; /* the submitter's thread group */
  __u32 uid;
  __u32 write;
  __u32 kthread;      /* the submitter is a kernel thread (flusher, journal) */
  __u32 have_dirtier; /* a process dirtied data on this disk since monitoring began */
  __u32 dirtier_pid;
  __u32 dirtier_uid;
  __u32 passthrough; /* a driver-private request (SG_IO, NVMe passthrough), not a bio */
  char comm[LM_BPF_COMM_LEN];
  char dirtier_comm[LM_BPF_COMM_LEN];
};
