/* test-nvme-data.h: the recorded and hand-made NVMe pages of tests/data/nvme,
 * for the NVMe tests. */
#pragma once

#include <glib.h>

static inline guint8 *
load (const char *name, gsize *len)
{
  const char *src = g_getenv ("LM_SRCDIR");
  g_autofree char *path
      = g_build_filename (src != NULL ? src : ".", "tests", "data", "nvme", name, NULL);
  g_autoptr (GError) error = NULL;
  char *data = NULL;

  g_assert_true (g_file_get_contents (path, &data, len, &error));
  g_assert_no_error (error);
  return (guint8 *) data;
}
