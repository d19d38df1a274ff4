/* lm-ctl-common.c: laptop-modectl's bus, error and output helpers.
 * Owns how the CLI reaches the daemon, reports its refusals and prints what
 * came from outside; never decides anything the daemon decides. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "lm-ctl.h"

const char *lm_ctl_prog = "laptop-modectl";

void
lm_ctl_print_error (const char *what, GError *error)
{
  g_autofree char *remote = g_dbus_error_get_remote_error (error);

  g_dbus_error_strip_remote_error (error);
  /* The daemon's messages quote the caller's input escaped already; any
   * control byte left would still be one too many on a terminal. */
  g_autofree char *message = lm_escape (error->message, -1, LM_ESCAPE_KEEP_BACKSLASH);
  /* polkit said no: one line with the daemon's reason (it names the
   * action) and who can change that. */
  if (g_strcmp0 (remote, LM_ERROR_NAME_ACCESS_DENIED) == 0)
    {
      g_printerr ("%s: %s; ask an administrator to add you to group “%s” or to grant the "
                  "action in a polkit rule\n",
                  lm_ctl_prog, message, LM_POLKIT_GROUP);
      return;
    }
  if (what != NULL)
    g_printerr ("%s: %s: %s\n", lm_ctl_prog, what, message);
  else
    g_printerr ("%s: %s\n", lm_ctl_prog, message);
  if (g_strcmp0 (remote, "org.freedesktop.DBus.Error.ServiceUnknown") == 0
      || g_strcmp0 (remote, "org.freedesktop.DBus.Error.NameHasNoOwner") == 0)
    {
      g_autofree char *address = lm_ctl_safe (g_getenv ("DBUS_SYSTEM_BUS_ADDRESS"));
      g_printerr ("%s: laptop-moded is not running; an administrator starts it with "
                  "“systemctl start laptop-moded” (DBUS_SYSTEM_BUS_ADDRESS=%s)\n",
                  lm_ctl_prog, address ? address : "default");
    }
}

LmExportedLaptopMode *
lm_ctl_get_proxy (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LmExportedLaptopMode) proxy = lm_exported_laptop_mode_proxy_new_for_bus_sync (
      G_BUS_TYPE_SYSTEM, G_DBUS_PROXY_FLAGS_NONE, LM_BUS_NAME, LM_OBJECT_PATH, NULL, &error);

  if (proxy == NULL)
    {
      lm_ctl_print_error ("cannot reach the system bus", error);
      return NULL;
    }
  g_autofree char *owner = g_dbus_proxy_get_name_owner (G_DBUS_PROXY (proxy));
  if (owner == NULL)
    {
      g_printerr ("%s: laptop-moded is not running (nobody owns %s on the system bus); an "
                  "administrator starts it with “systemctl start laptop-moded”\n",
                  lm_ctl_prog, LM_BUS_NAME);
      return NULL;
    }
  return g_steal_pointer (&proxy);
}

/* ALLOW_INTERACTIVE_AUTHORIZATION when a person is at the terminal, so
 * polkit may ask for a password instead of refusing. */
GDBusCallFlags
lm_ctl_call_flags (void)
{
  return isatty (STDIN_FILENO) ? G_DBUS_CALL_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION
                               : G_DBUS_CALL_FLAGS_NONE;
}

/* No timeout: a password dialog may take as long as the person needs. */
GVariant *
lm_ctl_call (LmExportedLaptopMode *proxy, const char *method, GVariant *params, GError **error)
{
  return g_dbus_proxy_call_sync (G_DBUS_PROXY (proxy), method, params, lm_ctl_call_flags (),
                                 G_MAXINT, NULL, error);
}

/* A method call needs no proxy: no GetAll of every property and no
 * GetNameOwner before it, one round trip to the daemon. Nothing activates
 * it (no activation file): ServiceUnknown says it is not running. */
int
lm_ctl_call_and_report (const char *method, GVariant *params)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) owned = params != NULL ? g_variant_ref_sink (params) : NULL;
  g_autoptr (GDBusConnection) bus = g_bus_get_sync (G_BUS_TYPE_SYSTEM, NULL, &error);

  if (bus == NULL)
    {
      lm_ctl_print_error ("cannot reach the system bus", error);
      return EXIT_FAILURE;
    }
  g_autoptr (GVariant) reply
      = g_dbus_connection_call_sync (bus, LM_BUS_NAME, LM_OBJECT_PATH, LM_INTERFACE, method, owned,
                                     NULL, lm_ctl_call_flags (), G_MAXINT, NULL, &error);
  if (reply == NULL)
    {
      lm_ctl_print_error (NULL, error);
      return EXIT_FAILURE;
    }
  return EXIT_SUCCESS;
}

gboolean
lm_ctl_parse_options (int *argc, char ***argv, const char *args, const char *summary,
                      const GOptionEntry *entries)
{
  /* GOption prints the program name itself: "laptop-modectl disks" from
   * argv[0], as the dispatcher set it. */
  g_autofree char *usage = g_strstrip (g_strdup (args ? args : ""));
  g_autoptr (GOptionContext) context = g_option_context_new (*usage ? usage : NULL);
  g_autoptr (GError) error = NULL;

  g_option_context_set_summary (context, summary);
  if (entries != NULL)
    g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, argc, argv, &error))
    {
      g_autofree char *message = lm_escape (error->message, -1, LM_ESCAPE_KEEP_BACKSLASH);
      g_printerr ("%s: %s\n", lm_ctl_prog, message);
      return FALSE;
    }
  return TRUE;
}

int
lm_ctl_usage_error (const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_printerr ("%s: %s\n", lm_ctl_prog, msg);
  return LM_CTL_EXIT_USAGE;
}

/* For commands that take options only; argv[0] is "PROG COMMAND". */
int
lm_ctl_no_arguments (int argc, char **argv)
{
  if (argc <= 1)
    return EXIT_SUCCESS;
  g_autofree char *got = lm_ctl_safe (argv[1]);
  const char *space = strchr (argv[0], ' ');
  return lm_ctl_usage_error ("%s takes no arguments, got “%s”", space ? space + 1 : argv[0], got);
}

/* Text from outside (process, file and disk names, a holder's words) as
 * it may reach a terminal. */
char *
lm_ctl_safe (const char *text)
{
  return lm_escape (text, -1, LM_ESCAPE_DEFAULT);
}

/* At most @width characters of @text (escaped already), cut neither inside
 * a UTF-8 sequence nor inside a \xNN. */
char *
lm_ctl_fit (const char *text, guint width)
{
  const char *end = text;
  guint n = 0;

  while (*end != '\0' && n < width)
    {
      guint step = end[0] == '\\' && end[1] == 'x' ? 4 : 1;
      if (step > 1 && n + step > width)
        break;
      for (guint i = 0; i < step && *end != '\0'; i++)
        end = g_utf8_next_char (end);
      n += step;
    }
  return g_strndup (text, (gsize) (end - text));
}

char *
lm_ctl_format_time (gint64 time_us)
{
  g_autoptr (GDateTime) dt = g_date_time_new_from_unix_local (time_us / G_USEC_PER_SEC);

  return dt != NULL ? g_date_time_format (dt, "%F %H:%M") : g_strdup ("?");
}

/* JSON escapes the control characters below U+0020 only; DEL, the C1
 * controls and bidi overrides are legal raw in a JSON string but no better
 * on a terminal. They occur only inside strings, where \uNNNN means the
 * same character (all are in the BMP), so the JSON stays the same. */
char *
lm_ctl_json_text (JsonNode *node)
{
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  g_autoptr (GString) out = g_string_new (NULL);

  json_generator_set_root (generator, node);
  g_autofree char *text = json_generator_to_data (generator, NULL);
  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      if (lm_escape_is_unsafe (c))
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_len (out, p, g_utf8_next_char (p) - p);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

void
lm_ctl_print_json (JsonNode *node)
{
  g_autofree char *text = lm_ctl_json_text (node);

  g_print ("%s\n", text);
  fflush (stdout);
}

void
lm_ctl_print_variant_json (GVariant *value)
{
  g_autoptr (JsonNode) node = json_gvariant_serialize (value);

  lm_ctl_print_json (node);
}

/* Conflicts a(sxss), ConflictWriters a{ss} (may be NULL: an older daemon):
 * the daemon escapes expected, found and the writer already. */
void
lm_ctl_print_conflicts (GVariant *conflicts, GVariant *writers)
{
  GVariantIter iter;
  const char *what, *expected, *found;
  gint64 when;
  gboolean first = TRUE;

  if (conflicts == NULL || !g_variant_is_of_type (conflicts, G_VARIANT_TYPE ("a(sxss)")))
    return;
  if (writers != NULL && !g_variant_is_of_type (writers, G_VARIANT_TYPE ("a{ss}")))
    writers = NULL;
  g_variant_iter_init (&iter, conflicts);
  while (g_variant_iter_next (&iter, "(&sx&s&s)", &what, &when, &expected, &found))
    {
      const char *by = NULL;
      g_autofree char *w = lm_ctl_safe (what);
      g_autofree char *e = lm_escape (expected, -1, LM_ESCAPE_KEEP_BACKSLASH);
      g_autofree char *f = lm_escape (found, -1, LM_ESCAPE_KEEP_BACKSLASH);
      g_autoptr (GDateTime) t = g_date_time_new_from_unix_local (when / G_USEC_PER_SEC);
      g_autofree char *at = t != NULL ? g_date_time_format (t, "%F %T") : g_strdup ("?");
      if (writers != NULL)
        g_variant_lookup (writers, what, "&s", &by);
      g_autofree char *b = by != NULL ? lm_escape (by, -1, LM_ESCAPE_KEEP_BACKSLASH) : NULL;
      g_print ("%s%s is %s, laptop mode set %s (found %s; left alone)\n",
               first ? "Changed by others:   " : "                     ", w, f, e, at);
      if (b != NULL)
        g_print ("                       written by %s\n", b);
      first = FALSE;
    }
}
