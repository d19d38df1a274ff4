/* lm-auth-rules.c: the rules lm-auth.c asks by, all pure: the one table
 * from D-Bus method to polkit action with the details a polkit rule sees,
 * what each shape of polkit's answer means, and what a caller may see of
 * another user's spin-up records. Must never let a method without a row
 * through, nor show another user's process without monitor-all. */
#include "config.h"

#include "lm-auth-private.h"

#include <string.h>

static void
polkit_details_insert (PolkitDetails *details, const char *key, const char *value)
{
  g_hash_table_replace (details, g_strdup (key), g_strdup (value));
}

static void
details_mode_on (GVariant *parameters, PolkitDetails *details)
{
  polkit_details_insert (details, "mode", "on");
}

static void
details_mode_off (GVariant *parameters, PolkitDetails *details)
{
  polkit_details_insert (details, "mode", "off");
}

static void
details_set_mode (GVariant *parameters, PolkitDetails *details)
{
  const char *mode;

  g_variant_get (parameters, "(&s)", &mode);
  polkit_details_insert (details, "mode", mode);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* "keys" lists the settings being changed ("DirtyRatio,MaxLostWork"), and
 * each key carries its new value, so that a rule can allow, say, only a
 * smaller MaxLostWork. A value longer than 256 bytes (a long NoRemount
 * list) is cut at a character boundary and ends in "…": the arguments are
 * bounded (lm-limits.h) but their printed form is not, and the request to
 * polkitd must stay far below what the bus carries. */
static void
details_configure (GVariant *parameters, PolkitDetails *details)
{
  const gsize max_value = 256;
  g_autoptr (GVariant) asv = g_variant_get_child_value (parameters, 0);
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_variant_iter_init (&iter, asv);
  while (g_variant_iter_loop (&iter, "{&sv}", &key, &value))
    {
      g_autofree char *text = g_variant_is_of_type (value, G_VARIANT_TYPE_STRING)
                                  ? g_variant_dup_string (value, NULL)
                                  : g_variant_print (value, FALSE);
      if (strlen (text) > max_value)
        {
          const char *end = g_utf8_find_prev_char (text, text + max_value + 1);
          g_autofree char *whole = g_steal_pointer (&text);
          text = g_strdup_printf ("%.*s…", (int) (end - whole), whole);
        }
      polkit_details_insert (details, key, text);
      g_ptr_array_add (keys, (gpointer) key);
    }
  g_ptr_array_sort (keys, compare_strings);
  g_ptr_array_add (keys, NULL);
  g_autofree char *joined = g_strjoinv (",", (char **) keys->pdata);
  polkit_details_insert (details, "keys", joined);
}

static void
details_inhibit (GVariant *parameters, PolkitDetails *details)
{
  const char *application, *reason;

  g_variant_get (parameters, "(&s&s)", &application, &reason);
  polkit_details_insert (details, "application", application);
  polkit_details_insert (details, "reason", reason);
}

/* The one table. Reading properties needs no entry: they are public. */
static const LmAuthRule rules[] = {
  { "Start", LM_ACTION_SWITCH, details_mode_on },
  { "Stop", LM_ACTION_SWITCH, details_mode_off },
  { "SetMode", LM_ACTION_SWITCH, details_set_mode },
  { "Sync", LM_ACTION_SWITCH, NULL },
  { "SaveMeasurement", LM_ACTION_SWITCH, NULL },
  { "Configure", LM_ACTION_CONFIGURE, details_configure },
  { "Override", LM_ACTION_CONFIGURE, details_configure },
  { "Inhibit", LM_ACTION_INHIBIT, details_inhibit },
  { "Release", LM_ACTION_INHIBIT, NULL },
  { "WaitAwake", LM_ACTION_WAIT_AWAKE, NULL },
  { "Subscribe", LM_ACTION_MONITOR, NULL, TRUE },
  { "Unsubscribe", LM_ACTION_MONITOR, NULL },
  { "GetSpinUps", LM_ACTION_MONITOR, NULL, TRUE },
  { "GetLedger", LM_ACTION_MONITOR, NULL, TRUE },
  { "GetLedgerPage", LM_ACTION_MONITOR, NULL, TRUE },
};

const LmAuthRule *
lm_auth_rule_for_method (const char *method)
{
  for (gsize i = 0; i < G_N_ELEMENTS (rules); i++)
    if (g_str_equal (rules[i].method, method))
      return &rules[i];
  return NULL;
}

const char *
lm_auth_action_for_method (const char *method)
{
  const LmAuthRule *rule = lm_auth_rule_for_method (method);

  return rule != NULL ? rule->action : NULL;
}

/* --- what polkit's answer means ------------------------------------------- */

/* What polkitd says differs between versions in shape, not in meaning:
 * a refusal may be a result (not authorized, a challenge, dismissed) or an
 * error of polkitd's own (NotAuthorized, Cancelled, Failed: "Process
 * terminated", "Action ... is not registered", and what later versions
 * add). So the rule is about who answered, not how: any answer polkitd
 * itself gave that is not "authorized" is a refusal, AccessDenied; only
 * no answer (polkitd not on the bus, stuck, the bus's own errors, an
 * answer of the wrong type) is "unavailable", which a subscription takes
 * as "ask again later". The caller's error does not depend on polkit's
 * version. */
#define BUS_ERROR_PREFIX "org.freedesktop.DBus.Error."

LmAuthVerdict
lm_auth_verdict (GVariant *reply, const GError *error, gboolean interactive, gboolean recheck,
                 gboolean timed_out, guint timeout_s, char **why)
{
  g_autoptr (GVariant) details = NULL;
  gboolean is_authorized, is_challenge;

  if (reply == NULL)
    {
      g_autofree char *remote = error != NULL ? g_dbus_error_get_remote_error (error) : NULL;
      g_autoptr (GError) copy = error != NULL ? g_error_copy (error) : NULL;

      if (copy != NULL)
        g_dbus_error_strip_remote_error (copy);
      if (timed_out && interactive)
        {
          *why = g_strdup_printf ("was not granted: nobody answered the authentication dialog "
                                  "within %u s",
                                  timeout_s);
          return LM_AUTH_DENIED;
        }
      if (timed_out)
        {
          *why
              = g_strdup_printf ("cannot be checked: polkit gave no answer within %u s", timeout_s);
          return LM_AUTH_UNAVAILABLE;
        }
      /* Not a remote error (the connection closed, a reply of the wrong
       * type), or the bus's own (no polkitd, no reply, a limit): polkitd
       * did not answer. */
      if (remote == NULL || g_str_has_prefix (remote, BUS_ERROR_PREFIX))
        {
          *why = g_strdup_printf ("cannot be checked: polkit did not answer: %s; is polkitd "
                                  "running?",
                                  copy != NULL ? copy->message : "no reply");
          return LM_AUTH_UNAVAILABLE;
        }
      /* The authentication was cancelled (by the agent, or by polkitd
       * when the agent went away): as good as a dismissed dialog. */
      if (g_str_equal (remote, "org.freedesktop.PolicyKit1.Error.Cancelled"))
        *why = g_strdup ("was not granted: the authentication was cancelled");
      else
        *why = g_strdup_printf ("was not granted: polkit refused the check (%s: %s)", remote,
                                copy->message);
      return LM_AUTH_DENIED;
    }
  if (!g_variant_is_of_type (reply, G_VARIANT_TYPE ("((bba{ss}))")))
    {
      *why = g_strdup_printf ("cannot be checked: polkit answered with type %s",
                              g_variant_get_type_string (reply));
      return LM_AUTH_UNAVAILABLE;
    }
  g_variant_get (reply, "((bb@a{ss}))", &is_authorized, &is_challenge, &details);
  if (is_authorized)
    {
      *why = NULL;
      return LM_AUTH_ALLOWED;
    }
  /* With the flag set, a challenge means no authentication agent could
   * ask the caller for a password (no desktop session, no pkttyagent). */
  if (is_challenge && recheck)
    *why = g_strdup ("needs authentication, which nobody can give to a check made again "
                     "without a call");
  else if (is_challenge && interactive)
    *why = g_strdup ("needs authentication, and no polkit authentication agent was there to "
                     "ask for it");
  else if (is_challenge)
    *why = g_strdup ("needs authentication, and the call did not allow interactive "
                     "authorization (run it from a terminal to be asked for a password)");
  else if (g_variant_lookup (details, "polkit.dismissed", "&s", NULL))
    *why = g_strdup ("was not granted: the authentication dialog was dismissed");
  else
    *why = g_strdup ("is not granted to this user");
  return LM_AUTH_DENIED;
}

guint
lm_auth_interactive_timeout (void)
{
  const char *env = g_getenv ("LAPTOP_MODED_AUTH_TIMEOUT");
  guint64 value = 0;

  /* Only ever shorter: a longer wait would let checks pin slots longer.
   * Read at each interactive check (rare), not cached in a static. */
  if (env != NULL
      && g_ascii_string_to_unsigned (env, 10, 1, LM_AUTH_INTERACTIVE_TIMEOUT_SECONDS, &value, NULL))
    return (guint) value;
  return LM_AUTH_INTERACTIVE_TIMEOUT_SECONDS;
}

/* --- what a viewer may see ------------------------------------------------- */

/* What is left of another user's record: where and when, whose, what
 * kind, and the counts; never which process or file. */
static const char *const kept_keys[] = {
  "Kind",    "Disk",    "Time",  "End",    "Uid",     "Operation", "Via",
  "Backend", "Flushed", "Reads", "Writes", "Dirtied", "Reason",    NULL,
};

GVariant *
lm_auth_redact (GVariant *record, const LmAuthViewer *viewer)
{
  guint32 uid;
  const char *via = NULL;

  if (viewer->all)
    return g_variant_ref (record);
  /* Names no process: an asleep/awake interval, an activity run. */
  if (!g_variant_lookup (record, "Pid", "u", NULL) && !g_variant_lookup (record, "Comm", "&s", NULL)
      && !g_variant_lookup (record, "Path", "&s", NULL))
    return g_variant_ref (record);
  /* Kernel work belongs to no user. */
  if (g_variant_lookup (record, "Via", "&s", &via) && g_str_equal (via, "kernel"))
    return g_variant_ref (record);
  if (g_variant_lookup (record, "Uid", "u", &uid) && uid == viewer->uid)
    return g_variant_ref (record);

  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  for (gsize i = 0; kept_keys[i] != NULL; i++)
    {
      g_autoptr (GVariant) value = g_variant_lookup_value (record, kept_keys[i], NULL);
      if (value != NULL)
        g_variant_builder_add (&b, "{sv}", kept_keys[i], value);
    }
  g_variant_builder_add (&b, "{sv}", "OtherUser", g_variant_new_boolean (TRUE));
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

GVariant *
lm_auth_redact_list (GVariant *records, const LmAuthViewer *viewer)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));
  GVariantIter iter;
  GVariant *record;

  if (viewer->all)
    return g_variant_ref (records);
  g_variant_iter_init (&iter, records);
  while ((record = g_variant_iter_next_value (&iter)) != NULL)
    {
      g_autoptr (GVariant) shown = lm_auth_redact (record, viewer);
      g_variant_builder_add_value (&b, shown);
      g_variant_unref (record);
    }
  return g_variant_ref_sink (g_variant_builder_end (&b));
}
