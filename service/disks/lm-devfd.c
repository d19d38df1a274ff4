/* lm-devfd.c: opening and closing device nodes for ioctls. */
#include "lm-devfd.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "lm-error.h"

gpointer
lm_devfd_open (const char *path, GError **error)
{
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "Cannot open %s: %s", path,
                   g_strerror (saved));
      return NULL;
    }
  return GINT_TO_POINTER (fd + 1); /* fd 0 is a valid descriptor */
}

int
lm_devfd_fd (gpointer handle)
{
  return GPOINTER_TO_INT (handle) - 1;
}

void
lm_devfd_close (gpointer handle)
{
  close (lm_devfd_fd (handle));
}
