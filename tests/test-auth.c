/* test-auth.c: the method-to-action table of lm-auth.c.
 * Owns the check that no D-Bus method is left without a polkit action;
 * it must never need polkitd (that is test_polkit.py's job). */
#include "lm-auth.h"
#include "lm-generated.h"

/* Every method of the interface, now and added later, maps to an action
 * that the shipped .policy file declares: a method forgotten in the table
 * would be denied to everyone, one mapped to an undeclared action too. */
static void
test_every_method_has_a_declared_action (void)
{
  GDBusInterfaceInfo *info = lm_exported_laptop_mode_interface_info ();
  const char *srcdir = g_getenv ("LM_SRCDIR");
  g_autofree char *policy_path
      = srcdir != NULL
            ? g_build_filename (srcdir, "polkit", "org.laptopmode.LaptopMode1.policy", NULL)
            : g_test_build_filename (G_TEST_DIST, "..", "polkit",
                                     "org.laptopmode.LaptopMode1.policy", NULL);
  g_autofree char *policy = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_get_contents (policy_path, &policy, NULL, &error));
  g_assert_no_error (error);
  g_assert_nonnull (info->methods);
  for (GDBusMethodInfo **m = info->methods; *m != NULL; m++)
    {
      const char *action = lm_auth_action_for_method ((*m)->name);
      g_test_message ("%s -> %s", (*m)->name, action ? action : "(none)");
      g_assert_nonnull (action);
      g_autofree char *declared = g_strdup_printf ("<action id=\"%s\">", action);
      g_assert_nonnull (strstr (policy, declared));
    }
}

static void
test_unknown_is_denied (void)
{
  g_assert_null (lm_auth_action_for_method ("Bogus"));
  g_assert_null (lm_auth_action_for_method (""));
  /* Case matters on D-Bus. */
  g_assert_null (lm_auth_action_for_method ("start"));
  /* Properties are read without authorization, never through the table. */
  g_assert_null (lm_auth_action_for_method ("Get"));
}

static void
test_kinds (void)
{
  g_assert_cmpstr (lm_auth_action_for_method ("Start"), ==, LM_ACTION_SWITCH);
  g_assert_cmpstr (lm_auth_action_for_method ("Sync"), ==, LM_ACTION_SWITCH);
  g_assert_cmpstr (lm_auth_action_for_method ("Configure"), ==, LM_ACTION_CONFIGURE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/auth/every-method-has-a-declared-action",
                   test_every_method_has_a_declared_action);
  g_test_add_func ("/auth/unknown-is-denied", test_unknown_is_denied);
  g_test_add_func ("/auth/kinds", test_kinds);
  return g_test_run ();
}
