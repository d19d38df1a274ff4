/* lm-tunables-sysctl.c: the 2.6+ backend, one file per tunable in /proc/sys/vm.
 * Plans the classic laptop-mode values; never writes (lm-tunables.c does). */
#include "lm-tunables.h"

#include "lm-paths.h"

static gboolean
tunable_exists (const char *name)
{
  g_autofree char *path = lm_tunables_path (name);
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static gboolean
sysctl_probe (void)
{
  return tunable_exists ("dirty_ratio") && tunable_exists ("dirty_background_ratio")
         && tunable_exists ("dirty_writeback_centisecs")
         && tunable_exists ("dirty_expire_centisecs");
}

/* 7.0+ keeps the laptop_mode file but ignores it: lm-engine.c tells those
 * apart by release; here only the file counts. */
static guint
sysctl_engines (void)
{
  return LM_ENGINE_USERSPACE | (tunable_exists ("laptop_mode") ? LM_ENGINE_KERNEL : 0);
}

static void
add (GPtrArray *plan, const char *name, guint value)
{
  g_autofree char *text = g_strdup_printf ("%u", value);
  g_ptr_array_add (plan, lm_tunable_new (name, text));
}

/* The background threshold for the user-space engine. The kernel's laptop
 * mode never starts background writeback below dirty_ratio (it returns
 * early in balance_dirty_pages()); without it, a low background ratio would
 * wake the disk whenever a few MB are dirty. A tenth of the ratio is left
 * as a band where writers are throttled gradually instead of stopped. */
static guint
userspace_background_ratio (const LmSettings *settings)
{
  guint ratio = settings->dirty_ratio;
  guint background = ratio - MAX (ratio / 10, 1);

  return MAX (background, settings->dirty_background_ratio);
}

/* The mapping of the 2004 control script: dirty data may age MaxLostWork
 * seconds and the flusher wakes as rarely; laptop_mode is the delay before
 * the kernel flushes everything after disk activity. The user-space engine
 * does that flush itself and leaves vm.laptop_mode alone (7.0+ ignores it
 * and logs a warning on each write). */
static GPtrArray *
sysctl_plan (const LmSettings *settings, LmEngine engine, GError **error)
{
  GPtrArray *plan = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_tunable_free);
  guint centisecs = settings->max_lost_work * 100;
  gboolean userspace = engine == LM_ENGINE_USERSPACE;

  if (engine == LM_ENGINE_KERNEL)
    add (plan, "laptop_mode", settings->laptop_mode_seconds);
  add (plan, "dirty_writeback_centisecs", centisecs);
  add (plan, "dirty_expire_centisecs", centisecs);
  add (plan, "dirty_ratio", settings->dirty_ratio);
  add (plan, "dirty_background_ratio",
       userspace ? userspace_background_ratio (settings) : settings->dirty_background_ratio);
  return plan;
}

static const char *const sysctl_side_effects[] = { "dirty_bytes", "dirty_background_bytes", NULL };

const LmTunablesBackend lm_tunables_sysctl = {
  .name = "sysctl",
  .probe = sysctl_probe,
  .engines = sysctl_engines,
  .plan = sysctl_plan,
  .side_effects = sysctl_side_effects,
};
