/* lm-paths.c: every path the daemon touches on the system.
 * Owns the root (LAPTOP_MODED_ROOT), the config file and the state directory;
 * it never opens anything itself. */
#include "config.h"

#include "lm-paths.h"

#include <stdlib.h>
#include <string.h>

static char *root;
static int sync_root_only = -1;
static char *config_file;
static char *state_dir;

/* Read once: the environment does not change under a running daemon, and
 * tests that change it call lm_paths_reset(). */
const char *
lm_root (void)
{
  if (root == NULL)
    {
      const char *env = g_getenv ("LAPTOP_MODED_ROOT");
      root = g_strdup (env != NULL && *env != '\0' ? env : "/");
    }
  return root;
}

/* The test tiers without a real kernel (LAPTOP_MODED_SYNC=root, honoured
 * only under a fake root) run beside the real-kernel tier, whose loop
 * disks a sync() of the whole machine would flush in mid-measurement. */
gboolean
lm_sync_root_only (void)
{
  if (sync_root_only < 0)
    sync_root_only
        = !g_str_equal (lm_root (), "/") && g_strcmp0 (g_getenv ("LAPTOP_MODED_SYNC"), "root") == 0;
  return sync_root_only;
}

char *
lm_path (const char *system_path)
{
  g_return_val_if_fail (system_path != NULL && system_path[0] == '/', NULL);

  if (g_str_equal (lm_root (), "/"))
    return g_strdup (system_path);
  return g_build_filename (lm_root (), system_path, NULL);
}

const char *
lm_config_file (void)
{
  if (config_file == NULL)
    {
      const char *env = g_getenv ("LAPTOP_MODED_CONFIG");
      config_file = g_strdup (env != NULL && *env != '\0' ? env : LM_CONFIG_FILE);
    }
  return config_file;
}

/* systemd's StateDirectory= hands us $STATE_DIRECTORY; honour it so the unit
 * and the build agree without a rebuild. */
const char *
lm_state_dir (void)
{
  if (state_dir == NULL)
    {
      const char *env = g_getenv ("STATE_DIRECTORY");
      /* StateDirectory= may list several, colon-separated; ours is the first. */
      if (env != NULL && *env != '\0')
        {
          g_auto (GStrv) dirs = g_strsplit (env, ":", 2);
          state_dir = g_strdup (dirs[0]);
        }
      else
        {
          state_dir = g_strdup (LM_STATE_DIR);
        }
    }
  return state_dir;
}

void
lm_paths_reset (void)
{
  g_clear_pointer (&root, g_free);
  sync_root_only = -1;
  g_clear_pointer (&config_file, g_free);
  g_clear_pointer (&state_dir, g_free);
}

/* Let the daemon's --config option win over the environment. */
void
lm_paths_set_config_file (const char *path)
{
  g_free (config_file);
  config_file = g_strdup (path);
}

/* A sysfs path with every symlink resolved, as a system path ("/sys/devices/…"),
 * or NULL when it does not exist or leads out of @within under the root: a
 * link in a fake root, or a tampered one, never takes a write elsewhere. */
char *
lm_path_resolve (const char *system_path, const char *within)
{
  g_autofree char *path = lm_path (system_path);
  g_autofree char *real = realpath (path, NULL);
  g_autofree char *real_root = realpath (lm_root (), NULL);
  const char *rest;

  if (real == NULL || real_root == NULL)
    return NULL;
  rest = real;
  if (!g_str_equal (real_root, "/"))
    {
      if (!g_str_has_prefix (real, real_root) || real[strlen (real_root)] != '/')
        return NULL;
      rest = real + strlen (real_root);
    }
  if (!g_str_equal (rest, within)
      && !(g_str_has_prefix (rest, within) && rest[strlen (within)] == '/'))
    return NULL;
  return g_strdup (rest);
}
