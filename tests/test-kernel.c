/* test-kernel.c: kernel release parsing and the engine choice per kernel. */
#include <glib/gstdio.h>

#include "lm-engine.h"
#include "lm-flush.h"
#include "lm-io.h"
#include "lm-kernel.h"
#include "lm-tunables.h"
#include "lm-paths.h"
#include "test-fakeroot.h"

static void
test_parse (void)
{
  static const struct
  {
    const char *release;
    gboolean ok;
    guint major, minor, patch;
  } cases[] = {
    { "6.18.44-fc-v1147", TRUE, 6, 18, 44 },
    { "2.4.37.11", TRUE, 2, 4, 37 },
    { "2.6.6", TRUE, 2, 6, 6 },
    { "7.0-rc1", TRUE, 7, 0, 0 },
    { "7.0.0", TRUE, 7, 0, 0 },
    { "6.1.0-28-amd64", TRUE, 6, 1, 0 },
    { "10.2", TRUE, 10, 2, 0 },
    { "6", FALSE },
    { "", FALSE },
    { "linux", FALSE },
    { ".6.1", FALSE },
    { "99999999999999999999.1", FALSE },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      LmKernelVersion v = { 0 };
      gboolean ok = lm_kernel_version_parse (cases[i].release, &v);
      g_assert_cmpint (ok, ==, cases[i].ok);
      if (!ok)
        continue;
      g_assert_cmpuint (v.major, ==, cases[i].major);
      g_assert_cmpuint (v.minor, ==, cases[i].minor);
      g_assert_cmpuint (v.patch, ==, cases[i].patch);
    }
  g_assert_false (lm_kernel_version_parse (NULL, &(LmKernelVersion){ 0 }));
}

typedef LmFakeRoot Fixture;
#define put lm_fake_root_put
#define setup lm_fake_root_setup
#define teardown lm_fake_root_teardown

static void
sysctl_files (Fixture *f, gboolean laptop_mode)
{
  put (f, "proc/sys/vm/dirty_ratio", "20\n");
  put (f, "proc/sys/vm/dirty_background_ratio", "10\n");
  put (f, "proc/sys/vm/dirty_writeback_centisecs", "500\n");
  put (f, "proc/sys/vm/dirty_expire_centisecs", "3000\n");
  if (laptop_mode)
    put (f, "proc/sys/vm/laptop_mode", "0\n");
}

static LmEngine
choose (const char *setting, GError **error)
{
  return lm_engine_choose (setting, lm_tunables_probe (), error);
}

static void
test_engine_by_release (Fixture *f, gconstpointer data)
{
  static const struct
  {
    const char *release;
    LmEngine engine;
  } cases[] = {
    { "2.6.5\n", LM_ENGINE_USERSPACE },   { "2.6.6\n", LM_ENGINE_KERNEL },
    { "6.18.44-fc\n", LM_ENGINE_KERNEL }, { "6.99.99\n", LM_ENGINE_KERNEL },
    { "7.0.0\n", LM_ENGINE_USERSPACE },   { "7.0-rc3\n", LM_ENGINE_USERSPACE },
    { "8.1.2\n", LM_ENGINE_USERSPACE },   { "garbage\n", LM_ENGINE_USERSPACE },
  };

  sysctl_files (f, TRUE);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      put (f, "proc/sys/kernel/osrelease", cases[i].release);
      if (g_str_has_prefix (cases[i].release, "garbage"))
        g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_WARNING,
                               "*Cannot understand the kernel release*");
      g_assert_cmpint (choose ("auto", NULL), ==, cases[i].engine);
      g_test_assert_expected_messages ();
      g_assert_cmpint (choose ("userspace", NULL), ==, LM_ENGINE_USERSPACE);
      g_assert_cmpint (choose ("kernel", NULL), ==, LM_ENGINE_KERNEL);
    }
}

static void
test_engine_without_laptop_mode (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  sysctl_files (f, FALSE);
  put (f, "proc/sys/kernel/osrelease", "6.1.0\n");
  g_assert_cmpint (choose ("auto", NULL), ==, LM_ENGINE_USERSPACE);
  g_assert_cmpint (choose ("kernel", &error), ==, LM_ENGINE_NONE);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "vm.laptop_mode"));
}

/* Where both engines work, auto takes the user-space one when its BPF
 * program loads (bench/README.md): that needs root and a kernel with BTF. */
static void
test_engine_prefers_userspace (Fixture *f, gconstpointer data)
{
  sysctl_files (f, TRUE);
  put (f, "proc/sys/kernel/osrelease", "6.18.0\n");
  g_assert_cmpint (choose ("auto", NULL), ==, LM_ENGINE_KERNEL); /* no BTF in the fake root */
  put (f, "sys/kernel/btf/vmlinux", "");
  if (!lm_flush_probe (NULL))
    {
      g_test_skip ("the user-space engine's BPF program cannot load here (needs root, BTF)");
      return;
    }
  g_assert_cmpint (choose ("auto", NULL), ==, LM_ENGINE_USERSPACE);
  g_assert_cmpint (choose ("kernel", NULL), ==, LM_ENGINE_KERNEL);
}

static void
test_engine_bdflush (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  put (f, "proc/sys/vm/bdflush", "30 500 0 0 500 3000 60 20 0\n");
  put (f, "proc/sys/kernel/osrelease", "2.4.37\n");
  g_assert_true (lm_tunables_probe () == &lm_tunables_bdflush);
  g_assert_cmpint (choose ("auto", NULL), ==, LM_ENGINE_BDFLUSH);
  g_assert_cmpint (choose ("kernel", &error), ==, LM_ENGINE_NONE);
  g_assert_nonnull (error);
}

static void
test_engine_none (Fixture *f, gconstpointer data)
{
  put (f, "proc/sys/kernel/osrelease", "6.1.0\n");
  g_assert_null (lm_tunables_probe ());
  g_assert_cmpint (choose ("auto", NULL), ==, LM_ENGINE_NONE);
  g_assert_cmpstr (lm_engine_to_string (LM_ENGINE_NONE), ==, "none");
}

/* Each backend declares its engines; only the user-space one runs anything. */
static void
test_engine_declared (Fixture *f, gconstpointer data)
{
  sysctl_files (f, FALSE);
  g_assert_cmpuint (lm_tunables_sysctl.engines (), ==, LM_ENGINE_USERSPACE);
  sysctl_files (f, TRUE);
  g_assert_cmpuint (lm_tunables_sysctl.engines (), ==, LM_ENGINE_USERSPACE | LM_ENGINE_KERNEL);
  g_assert_cmpuint (lm_tunables_bdflush.engines (), ==, LM_ENGINE_BDFLUSH);

  g_assert_null (lm_engine_ops (LM_ENGINE_KERNEL)->start);
  g_assert_null (lm_engine_ops (LM_ENGINE_BDFLUSH)->start);
  g_assert_null (lm_engine_ops (LM_ENGINE_NONE)->start);
  g_assert_nonnull (lm_engine_ops (LM_ENGINE_USERSPACE)->start);
  g_assert_cmpint (lm_engine_ops (LM_ENGINE_USERSPACE)->engine, ==, LM_ENGINE_USERSPACE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernel/parse", test_parse);
  g_test_add ("/engine/by-release", Fixture, NULL, setup, test_engine_by_release, teardown);
  g_test_add ("/engine/no-laptop-mode", Fixture, NULL, setup, test_engine_without_laptop_mode,
              teardown);
  g_test_add ("/engine/prefers-userspace", Fixture, NULL, setup, test_engine_prefers_userspace,
              teardown);
  g_test_add ("/engine/bdflush", Fixture, NULL, setup, test_engine_bdflush, teardown);
  g_test_add ("/engine/none", Fixture, NULL, setup, test_engine_none, teardown);
  g_test_add ("/engine/declared", Fixture, NULL, setup, test_engine_declared, teardown);
  return g_test_run ();
}
