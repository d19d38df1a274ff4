/* test-auth.c: the method-to-action table of lm-auth-rules.c, the mapping of each
 * shape of polkit's answer, and what a viewer may see of a spin-up record.
 * Owns the check that no D-Bus method is left without a polkit action;
 * it must never need polkitd (that is test_polkit.py's job). */
#include <string.h>

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
  /* Asked along with monitor for the scope: declared too. */
  g_assert_nonnull (strstr (policy, "<action id=\"" LM_ACTION_MONITOR_ALL "\">"));
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
  g_assert_cmpstr (lm_auth_action_for_method ("GetLedger"), ==, LM_ACTION_MONITOR);
}

/* --- polkit's answers ---------------------------------------------------- */

static GVariant *
result (gboolean authorized, gboolean challenge, const char *detail_key)
{
  g_auto (GVariantBuilder) d = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a{ss}"));

  if (detail_key != NULL)
    g_variant_builder_add (&d, "{ss}", detail_key, "true");
  return g_variant_ref_sink (
      g_variant_new ("((bb@a{ss}))", authorized, challenge, g_variant_builder_end (&d)));
}

typedef struct
{
  const char *what;
  gboolean authorized, challenge;
  const char *detail;
  const char *error_name; /* a remote error instead of a reply */
  gboolean interactive, recheck, timed_out;
  LmAuthVerdict want;
  const char *want_text; /* in *why */
} Shape;

/* Every shape seen from polkit 105 to 126 (and one it never sends): a
 * refusal is DENIED whatever its shape, so the caller gets AccessDenied
 * with any polkit version; no answer is UNAVAILABLE. */
static const Shape shapes[] = {
  { "allowed", TRUE, FALSE, NULL, NULL, FALSE, FALSE, FALSE, LM_AUTH_ALLOWED, NULL },
  { "allowed, temporary", TRUE, FALSE, "polkit.temporary_authorization_id", NULL, TRUE, FALSE,
    FALSE, LM_AUTH_ALLOWED, NULL },
  { "not granted", FALSE, FALSE, NULL, NULL, FALSE, FALSE, FALSE, LM_AUTH_DENIED,
    "is not granted" },
  { "challenge, no flag", FALSE, TRUE, "polkit.retains_authorization_after_challenge", NULL, FALSE,
    FALSE, FALSE, LM_AUTH_DENIED, "did not allow interactive" },
  { "challenge, no agent", FALSE, TRUE, NULL, NULL, TRUE, FALSE, FALSE, LM_AUTH_DENIED,
    "no polkit authentication agent" },
  { "challenge, re-check", FALSE, TRUE, NULL, NULL, FALSE, TRUE, FALSE, LM_AUTH_DENIED,
    "made again" },
  { "dismissed", FALSE, FALSE, "polkit.dismissed", NULL, TRUE, FALSE, FALSE, LM_AUTH_DENIED,
    "dismissed" },
  { "NotAuthorized error", FALSE, FALSE, NULL, "org.freedesktop.PolicyKit1.Error.NotAuthorized",
    FALSE, FALSE, FALSE, LM_AUTH_DENIED, "refused the check" },
  { "Cancelled error", FALSE, FALSE, NULL, "org.freedesktop.PolicyKit1.Error.Cancelled", TRUE,
    FALSE, FALSE, LM_AUTH_DENIED, "cancelled" },
  /* polkitd answered, with an error of its own: still a refusal. */
  { "Failed error", FALSE, FALSE, NULL, "org.freedesktop.PolicyKit1.Error.Failed", FALSE, FALSE,
    FALSE, LM_AUTH_DENIED, "refused the check (org.freedesktop.PolicyKit1.Error.Failed" },
  { "NotSupported error", FALSE, FALSE, NULL, "org.freedesktop.PolicyKit1.Error.NotSupported",
    FALSE, FALSE, FALSE, LM_AUTH_DENIED, "refused the check" },
  { "an error a later polkit may add", FALSE, FALSE, NULL,
    "org.freedesktop.PolicyKit1.Error.SomethingNew", FALSE, TRUE, FALSE, LM_AUTH_DENIED,
    "refused the check" },
  { "unmapped GError from polkitd", FALSE, FALSE, NULL,
    "org.gtk.GDBus.UnmappedGError.Quark._g_2dio_2derror_2dquark.Code0", FALSE, FALSE, FALSE,
    LM_AUTH_DENIED, "refused the check" },
  /* polkitd did not answer. */
  { "no polkitd", FALSE, FALSE, NULL, "org.freedesktop.DBus.Error.ServiceUnknown", FALSE, FALSE,
    FALSE, LM_AUTH_UNAVAILABLE, "is polkitd running?" },
  { "no reply", FALSE, FALSE, NULL, "org.freedesktop.DBus.Error.NoReply", FALSE, TRUE, FALSE,
    LM_AUTH_UNAVAILABLE, "did not answer" },
  { "bus limit", FALSE, FALSE, NULL, "org.freedesktop.DBus.Error.LimitsExceeded", FALSE, TRUE,
    FALSE, LM_AUTH_UNAVAILABLE, "did not answer" },
  { "bus policy", FALSE, FALSE, NULL, "org.freedesktop.DBus.Error.AccessDenied", FALSE, FALSE,
    FALSE, LM_AUTH_UNAVAILABLE, "did not answer" },
  { "connection closed", FALSE, FALSE, NULL, "closed", FALSE, FALSE, FALSE, LM_AUTH_UNAVAILABLE,
    "did not answer" },
  { "our timeout, interactive", FALSE, FALSE, NULL, "", TRUE, FALSE, TRUE, LM_AUTH_DENIED,
    "within 300 s" },
  { "our timeout, non-interactive", FALSE, FALSE, NULL, "", FALSE, TRUE, TRUE, LM_AUTH_UNAVAILABLE,
    "no answer within 300 s" },
};

static void
test_verdicts (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (shapes); i++)
    {
      const Shape *t = &shapes[i];
      g_autoptr (GVariant) reply = NULL;
      g_autoptr (GError) error = NULL;
      g_autofree char *why = NULL;

      if (t->error_name == NULL)
        reply = result (t->authorized, t->challenge, t->detail);
      else if (*t->error_name == '\0')
        error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "Operation was cancelled");
      else if (g_str_equal (t->error_name, "closed"))
        error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CLOSED, "The connection is closed");
      else
        error = g_dbus_error_new_for_dbus_error (t->error_name, "polkit's own words");
      g_test_message ("%s", t->what);
      LmAuthVerdict got
          = lm_auth_verdict (reply, error, t->interactive, t->recheck, t->timed_out, 300, &why);
      g_assert_cmpint (got, ==, t->want);
      if (t->want_text == NULL)
        g_assert_null (why);
      else
        {
          g_assert_nonnull (why);
          if (strstr (why, t->want_text) == NULL)
            g_error ("%s: “%s” lacks “%s”", t->what, why, t->want_text);
        }
    }
}

static void
test_wrong_reply_type (void)
{
  g_autoptr (GVariant) reply = g_variant_ref_sink (g_variant_new ("((bb))", TRUE, FALSE));
  g_autofree char *why = NULL;

  /* Not even "authorized" is believed from an answer of another shape. */
  g_assert_cmpint (lm_auth_verdict (reply, NULL, FALSE, FALSE, FALSE, 30, &why), ==,
                   LM_AUTH_UNAVAILABLE);
  g_assert_nonnull (strstr (why, "(bb)"));
}

static void
test_interactive_timeout_only_lower (void)
{
  /* Read once, at the first call: the environment of this process. */
  guint t = lm_auth_interactive_timeout ();

  g_assert_cmpuint (t, >=, 1);
  g_assert_cmpuint (t, <=, LM_AUTH_INTERACTIVE_TIMEOUT_SECONDS);
}

/* --- what a viewer sees ------------------------------------------------ */

static GVariant *
spinup (guint32 uid, const char *via)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

  g_variant_builder_add (&b, "{sv}", "Disk", g_variant_new_string ("sda"));
  g_variant_builder_add (&b, "{sv}", "Time", g_variant_new_int64 (1000));
  g_variant_builder_add (&b, "{sv}", "Pid", g_variant_new_uint32 (4242));
  g_variant_builder_add (&b, "{sv}", "Thread", g_variant_new_uint32 (4243));
  g_variant_builder_add (&b, "{sv}", "Comm", g_variant_new_string ("cat"));
  g_variant_builder_add (&b, "{sv}", "Uid", g_variant_new_uint32 (uid));
  g_variant_builder_add (&b, "{sv}", "Operation", g_variant_new_string ("read"));
  g_variant_builder_add (&b, "{sv}", "Sector", g_variant_new_uint64 (77));
  g_variant_builder_add (&b, "{sv}", "Inode", g_variant_new_uint64 (12));
  g_variant_builder_add (&b, "{sv}", "Path", g_variant_new_string ("secret.txt"));
  g_variant_builder_add (&b, "{sv}", "Via", g_variant_new_string (via));
  g_variant_builder_add (&b, "{sv}", "SubmitterPid", g_variant_new_uint32 (4242));
  g_variant_builder_add (&b, "{sv}", "SubmitterComm", g_variant_new_string ("cat"));
  g_variant_builder_add (&b, "{sv}", "Backend", g_variant_new_string ("bpf"));
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static void
test_redact (void)
{
  g_autoptr (GVariant) theirs = spinup (1001, "direct");
  g_autoptr (GVariant) kernel = spinup (0, "kernel");
  LmAuthViewer me = { 1000, FALSE }, admin = { 1000, TRUE }, them = { 1001, FALSE };
  static const char *const gone[] = { "Pid",    "Thread",       "Comm",          "Path", "Inode",
                                      "Sector", "SubmitterPid", "SubmitterComm", NULL };
  guint32 uid;
  gboolean other;

  g_autoptr (GVariant) shown = lm_auth_redact (theirs, &me);
  for (gsize i = 0; gone[i] != NULL; i++)
    g_assert_false (g_variant_lookup (shown, gone[i], "*", NULL));
  g_assert_true (g_variant_lookup (shown, "Uid", "u", &uid));
  g_assert_cmpuint (uid, ==, 1001);
  g_assert_true (g_variant_lookup (shown, "Disk", "&s", NULL));
  g_assert_true (g_variant_lookup (shown, "Time", "x", NULL));
  g_assert_true (g_variant_lookup (shown, "OtherUser", "b", &other));
  g_assert_true (other);

  /* Their own, anything with monitor-all, and kernel work: in full. */
  g_autoptr (GVariant) own = lm_auth_redact (theirs, &them);
  g_assert_true (g_variant_equal (own, theirs));
  g_autoptr (GVariant) all = lm_auth_redact (theirs, &admin);
  g_assert_true (g_variant_equal (all, theirs));
  g_autoptr (GVariant) kw = lm_auth_redact (kernel, &me);
  g_assert_true (g_variant_equal (kw, kernel));

  /* A list, as GetLedger returns it. */
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));
  g_variant_builder_add_value (&b, theirs);
  g_variant_builder_add_value (&b, kernel);
  g_autoptr (GVariant) list = g_variant_ref_sink (g_variant_builder_end (&b));
  g_autoptr (GVariant) shown_list = lm_auth_redact_list (list, &me);
  g_autoptr (GVariant) first = g_variant_get_child_value (shown_list, 0);
  g_autoptr (GVariant) second = g_variant_get_child_value (shown_list, 1);
  g_assert_true (g_variant_equal (first, shown));
  g_assert_true (g_variant_equal (second, kernel));

  /* A record without a known uid is nobody's own. */
  g_auto (GVariantBuilder) nb = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&nb, "{sv}", "Comm", g_variant_new_string ("x"));
  g_variant_builder_add (&nb, "{sv}", "Via", g_variant_new_string ("writeback"));
  g_autoptr (GVariant) nouid = g_variant_ref_sink (g_variant_builder_end (&nb));
  g_autoptr (GVariant) nouid_shown = lm_auth_redact (nouid, &me);
  g_assert_false (g_variant_lookup (nouid_shown, "Comm", "&s", NULL));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/auth/every-method-has-a-declared-action",
                   test_every_method_has_a_declared_action);
  g_test_add_func ("/auth/unknown-is-denied", test_unknown_is_denied);
  g_test_add_func ("/auth/kinds", test_kinds);
  g_test_add_func ("/auth/verdicts", test_verdicts);
  g_test_add_func ("/auth/wrong-reply-type", test_wrong_reply_type);
  g_test_add_func ("/auth/interactive-timeout-only-lower", test_interactive_timeout_only_lower);
  g_test_add_func ("/auth/redact", test_redact);
  return g_test_run ();
}
