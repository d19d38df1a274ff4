/* lm-kernel.c: what the running kernel is, as far as laptop mode cares.
 * The release string is read through lm_path() so tests can fake any kernel. */
#include "lm-kernel.h"

#include "lm-error.h"
#include "lm-io.h"
#include "lm-paths.h"

/* Accepts "6.18.44-fc-v1147", "2.4.37.11", "7.0-rc1", "2.6.6": the leading
 * numbers count, whatever suffix a distribution adds. */
gboolean
lm_kernel_version_parse (const char *release, LmKernelVersion *version)
{
  guint parts[3] = { 0, 0, 0 };
  const char *p = release;
  guint i;

  if (release == NULL)
    return FALSE;
  for (i = 0; i < 3; i++)
    {
      guint64 n = 0;
      const char *start = p;

      while (g_ascii_isdigit (*p) && n <= G_MAXUINT16)
        n = n * 10 + (guint64) (*p++ - '0');
      if (p == start || n > G_MAXUINT16)
        break;
      parts[i] = (guint) n;
      if (*p != '.')
        {
          i++;
          break;
        }
      p++;
    }
  /* Major and minor are required; the patch level is optional. */
  if (i < 2)
    return FALSE;
  version->major = parts[0];
  version->minor = parts[1];
  version->patch = parts[2];
  return TRUE;
}

gboolean
lm_kernel_version_read (LmKernelVersion *version, GError **error)
{
  g_autofree char *path = lm_path ("/proc/sys/kernel/osrelease");
  g_autofree char *release = lm_io_read_value (path, error);

  if (release == NULL)
    return FALSE;
  if (!lm_kernel_version_parse (release, version))
    {
      g_autofree char *escaped = g_strescape (release, NULL);
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                   "Cannot understand the kernel release “%s” in %s", escaped, path);
      return FALSE;
    }
  return TRUE;
}

int
lm_kernel_version_compare (const LmKernelVersion *a, guint major, guint minor, guint patch)
{
  if (a->major != major)
    return a->major < major ? -1 : 1;
  if (a->minor != minor)
    return a->minor < minor ? -1 : 1;
  if (a->patch != patch)
    return a->patch < patch ? -1 : 1;
  return 0;
}
