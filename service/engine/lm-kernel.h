/* lm-kernel.h: what the running kernel is, as far as laptop mode cares.
 * Owns parsing of the kernel release; never decides policy by itself. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  guint major;
  guint minor;
  guint patch;
} LmKernelVersion;

gboolean lm_kernel_version_parse (const char *release, LmKernelVersion *version);
gboolean lm_kernel_version_read (LmKernelVersion *version, GError **error);
int lm_kernel_version_compare (const LmKernelVersion *a, guint major, guint minor, guint patch);

G_END_DECLS
