/* tests/guest/named-reader.c FILE: reads FILE with O_DIRECT from a thread
 * named as Firefox's cache thread ("Cache2 I/O"), while the process keeps
 * its own name: a spin-up must name the process, with the thread as a
 * detail. A thread can only be renamed from inside its own process
 * (/proc/PID/task/TID/comm refuses other writers), hence a program of its
 * own; built static on the host by tests/guest/run (the guest has no
 * compiler nor python). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#define CHUNK (64 * 1024)

static void *
reader (void *path)
{
  void *buf;
  int fd;
  ssize_t n;
  long total = 0;

  if (prctl (PR_SET_NAME, "Cache2 I/O", 0, 0, 0) != 0 || posix_memalign (&buf, 4096, CHUNK) != 0)
    return (void *) 1;
  fd = open (path, O_RDONLY | O_DIRECT);
  if (fd < 0)
    {
      perror (path);
      return (void *) 1;
    }
  while ((n = read (fd, buf, CHUNK)) > 0)
    total += n;
  close (fd);
  free (buf);
  return n < 0 || total == 0 ? (void *) 1 : NULL;
}

int
main (int argc, char **argv)
{
  pthread_t t;
  void *failed;

  if (argc != 2)
    {
      fprintf (stderr, "usage: %s FILE\n", argv[0]);
      return 2;
    }
  if (pthread_create (&t, NULL, reader, argv[1]) != 0 || pthread_join (t, &failed) != 0)
    return 1;
  return failed != NULL;
}
