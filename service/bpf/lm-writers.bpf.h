/* lm-writers.bpf.h: who last wrote each sysctl (/proc/sys) and sysfs file,
 * so that a value laptop mode applied and someone else changed names its
 * writer (participants/lm-conflicts.c). Watched where the kernel hands a
 * write to those files, never at every write(): fentry, else a kprobe;
 * where neither attaches, nobody is named. Included by lm-attrib.bpf.c. */

struct
{
  __uint (type, BPF_MAP_TYPE_LRU_HASH);
  __uint (max_entries, LM_BPF_SETTING_WRITERS);
  __type (key, struct lm_bpf_setting_key);
  __type (value, struct lm_bpf_setting_writer);
} setting_writers SEC (".maps");

/* @f: the file written (a pointer the verifier knows, or read by probe). */
static __always_inline int
setting_written (struct file *f)
{
  struct lm_bpf_setting_key key = {};
  struct lm_bpf_setting_writer w = {};
  struct dentry *d = BPF_CORE_READ (f, f_path.dentry);
  char thread[LM_BPF_COMM_LEN];

  w.pid = lm_current_pid_tgid (1) >> 32;
  if (d == 0
      || bpf_probe_read_kernel_str (key.name, sizeof key.name, BPF_CORE_READ (d, d_name.name)) <= 0)
    return 0;
  bpf_probe_read_kernel_str (key.dir, sizeof key.dir, BPF_CORE_READ (d, d_parent, d_name.name));
  bpf_probe_read_kernel_str (key.up, sizeof key.up,
                             BPF_CORE_READ (d, d_parent, d_parent, d_name.name));
  /* The daemon's own write is what it applied: whoever wrote before it
   * changed nothing laptop mode set. */
  if (w.pid == self_tgid)
    {
      bpf_map_delete_elem (&setting_writers, &key);
      return 0;
    }
  w.boot_ns = bpf_ktime_get_boot_ns ();
  w.uid = (__u32) bpf_get_current_uid_gid ();
  current_names (&w.comm, &thread);
  bpf_map_update_elem (&setting_writers, &key, &w, BPF_ANY);
  return 0;
}

SEC ("fentry/proc_sys_write")
int
BPF_PROG (lm_sysctl_write, struct kiocb *iocb)
{
  return setting_written (iocb->ki_filp);
}

SEC ("fentry/kernfs_fop_write_iter")
int
BPF_PROG (lm_sysfs_write, struct kiocb *iocb)
{
  return setting_written (iocb->ki_filp);
}

#ifdef LM_KPROBE_ARG1
static __always_inline int
setting_written_kprobe (struct pt_regs *regs)
{
  struct kiocb *iocb = (struct kiocb *) LM_KPROBE_ARG1 (regs);
  return setting_written (BPF_CORE_READ (iocb, ki_filp));
}
#else
static __always_inline int
setting_written_kprobe (struct pt_regs *regs)
{
  return 0;
}
#endif

SEC ("kprobe/proc_sys_write")
int
lm_kprobe_sysctl_write (struct pt_regs *regs)
{
  return setting_written_kprobe (regs);
}

SEC ("kprobe/kernfs_fop_write_iter")
int
lm_kprobe_sysfs_write (struct pt_regs *regs)
{
  return setting_written_kprobe (regs);
}
