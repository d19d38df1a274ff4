/* test-remount-seccomp.c: runs a program with fspick() refused (EPERM) by a
 * seccomp filter, as a container's or an older systemd's filter refuses it;
 * with --deny-mount, mount(2) too. For test_remount_flags.py; never installed.
 *
 * Usage: test-remount-seccomp [--deny-mount] -- PROGRAM [ARG...] */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define NATIVE_ARCH AUDIT_ARCH_I386
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH AUDIT_ARCH_RISCV64
#else
#error "test-remount-seccomp: add this architecture's AUDIT_ARCH_*"
#endif

#define DENY(nr)                                                                                   \
  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                                \
      BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

int
main (int argc, char **argv)
{
  int deny_mount = 0;
  int first = 1;

  for (; first < argc && strcmp (argv[first], "--") != 0; first++)
    {
      if (strcmp (argv[first], "--deny-mount") == 0)
        deny_mount = 1;
      else
        {
          fprintf (stderr, "usage: %s [--deny-mount] -- PROGRAM [ARG...]\n", argv[0]);
          return 2;
        }
    }
  if (first + 1 >= argc)
    {
      fprintf (stderr, "usage: %s [--deny-mount] -- PROGRAM [ARG...]\n", argv[0]);
      return 2;
    }

  /* Another architecture's calls (x32, ia32 on x86_64) are let through:
   * the daemon makes none. With --deny-mount, mount's check is reached;
   * without, its jump is to an ALLOW just the same. */
  struct sock_filter filter[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    DENY (SYS_fspick),
    DENY (deny_mount ? SYS_mount : SYS_fspick),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { .len = sizeof filter / sizeof filter[0], .filter = filter };

  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
      || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
    {
      perror ("test-remount-seccomp: installing the filter");
      return 1;
    }
  execvp (argv[first + 1], argv + first + 1);
  perror (argv[first + 1]);
  return 127;
}
