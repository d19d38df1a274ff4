/* tests/guest/swap-toucher.c MIB: writes MIB MiB of its own memory, says
 * "ready", waits for SIGUSR1, then reads it all back (and checks it). Run
 * under a memory limit smaller than MIB (systemd-run -p MemoryMax=), most of
 * it is in swap by "ready", and the reads after SIGUSR1 are swap-ins: page
 * faults of this process that read the swap device. Built static on the
 * host by tests/guest/run (the guest has no compiler). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  long mib = argc == 2 ? atol (argv[1]) : 0;
  long page = sysconf (_SC_PAGESIZE);
  size_t size = (size_t) mib << 20;
  sigset_t set;
  int sig;
  unsigned char *mem;

  if (mib <= 0 || mib > 4096)
    {
      fprintf (stderr, "usage: %s MIB (1 to 4096)\n", argv[0]);
      return 2;
    }
  /* Blocked before "ready": a SIGUSR1 sent right after is not lost. */
  sigemptyset (&set);
  sigaddset (&set, SIGUSR1);
  sigprocmask (SIG_BLOCK, &set, NULL);
  mem = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
    {
      perror ("mmap");
      return 1;
    }
  for (size_t i = 0; i < size; i += (size_t) page)
    mem[i] = (unsigned char) (i / (size_t) page * 7 + 1);
  printf ("ready\n");
  fflush (stdout);
  if (sigwait (&set, &sig) != 0)
    return 1;
  for (size_t i = 0; i < size; i += (size_t) page)
    if (mem[i] != (unsigned char) (i / (size_t) page * 7 + 1))
      {
        fprintf (stderr, "page %zu changed\n", i / (size_t) page);
        return 1;
      }
  return 0;
}
