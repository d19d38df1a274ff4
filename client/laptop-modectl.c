/* laptop-modectl.c: the command-line client of laptop-moded.
 * Owns argument parsing and presentation only; every decision is the
 * daemon's, reached over D-Bus. Also answers as "laptop_mode". */
#include "config.h"

#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>

#include "lm-generated.h"

#define LM_BUS_NAME "org.laptopmode.LaptopMode1"
#define LM_OBJECT_PATH "/org/laptopmode/LaptopMode1"

#define EXIT_USAGE 2

static const char *prog = "laptop-modectl";

typedef struct
{
  const char *name;
  const char *args;
  const char *summary;
  int (*run) (int argc, char **argv);
} LmCommand;

static void
print_error (const char *what, GError *error)
{
  g_autofree char *remote = g_dbus_error_get_remote_error (error);

  g_dbus_error_strip_remote_error (error);
  /* polkit said no: one line with the daemon's reason (it names the
   * action) and who can change that. */
  if (g_strcmp0 (remote, "org.freedesktop.DBus.Error.AccessDenied") == 0)
    {
      g_printerr ("%s: %s; ask an administrator to add you to group “%s” or to grant the "
                  "action in a polkit rule\n",
                  prog, error->message, LM_POLKIT_GROUP);
      return;
    }
  if (what != NULL)
    g_printerr ("%s: %s: %s\n", prog, what, error->message);
  else
    g_printerr ("%s: %s\n", prog, error->message);
  if (g_strcmp0 (remote, "org.freedesktop.DBus.Error.ServiceUnknown") == 0
      || g_strcmp0 (remote, "org.freedesktop.DBus.Error.NameHasNoOwner") == 0)
    g_printerr ("%s: is laptop-moded running? (DBUS_SYSTEM_BUS_ADDRESS=%s)\n", prog,
                g_getenv ("DBUS_SYSTEM_BUS_ADDRESS") ? g_getenv ("DBUS_SYSTEM_BUS_ADDRESS")
                                                     : "default");
}

static LmExportedLaptopMode *
get_proxy (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LmExportedLaptopMode) proxy = lm_exported_laptop_mode_proxy_new_for_bus_sync (
      G_BUS_TYPE_SYSTEM, G_DBUS_PROXY_FLAGS_NONE, LM_BUS_NAME, LM_OBJECT_PATH, NULL, &error);

  if (proxy == NULL)
    {
      print_error ("cannot reach the system bus", error);
      return NULL;
    }
  g_autofree char *owner = g_dbus_proxy_get_name_owner (G_DBUS_PROXY (proxy));
  if (owner == NULL)
    {
      g_printerr ("%s: laptop-moded is not running (nobody owns %s on the system bus)\n", prog,
                  LM_BUS_NAME);
      return NULL;
    }
  return g_steal_pointer (&proxy);
}

/* Method calls carry ALLOW_INTERACTIVE_AUTHORIZATION when a person is at the
 * terminal, so polkit may ask for a password instead of refusing. */
static gboolean
call (const char *method, GVariant *params, GError **error)
{
  g_autoptr (LmExportedLaptopMode) proxy = get_proxy ();
  GDBusCallFlags flags = G_DBUS_CALL_FLAGS_NONE;

  if (proxy == NULL)
    return FALSE;
  if (isatty (STDIN_FILENO))
    flags |= G_DBUS_CALL_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION;
  g_autoptr (GVariant) reply
      = g_dbus_proxy_call_sync (G_DBUS_PROXY (proxy), method, params, flags, G_MAXINT, NULL, error);
  return reply != NULL;
}

static int
call_and_report (const char *method, GVariant *params)
{
  g_autoptr (GError) error = NULL;

  if (!call (method, params, &error))
    {
      if (error != NULL)
        print_error (NULL, error);
      return EXIT_FAILURE;
    }
  return EXIT_SUCCESS;
}

static gboolean
parse_options (int *argc, char ***argv, const char *args, const char *summary,
               const GOptionEntry *entries)
{
  g_autofree char *usage = g_strdup_printf ("%s%s", (*argv)[0], args ? args : "");
  g_autoptr (GOptionContext) context = g_option_context_new (usage);
  g_autoptr (GError) error = NULL;

  g_option_context_set_summary (context, summary);
  if (entries != NULL)
    g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, argc, argv, &error))
    {
      g_printerr ("%s: %s\n", prog, error->message);
      return FALSE;
    }
  return TRUE;
}

static int G_GNUC_PRINTF (1, 2) usage_error (const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_printerr ("%s: %s\n", prog, msg);
  return EXIT_USAGE;
}

/* --- status ------------------------------------------------------------ */

static char *
json_string (const char *s)
{
  g_autoptr (GString) out = g_string_new ("\"");

  for (const char *p = s; *p; p++)
    {
      switch (*p)
        {
          case '"':
            g_string_append (out, "\\\"");
            break;
          case '\\':
            g_string_append (out, "\\\\");
            break;
          case '\n':
            g_string_append (out, "\\n");
            break;
          default:
            if ((guchar) *p < 0x20)
              g_string_append_printf (out, "\\u%04x", (guchar) *p);
            else
              g_string_append_c (out, *p);
        }
    }
  g_string_append_c (out, '"');
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Remounted a(ss) as [{"MountPoint": …, "Options": …}, …]. */
static char *
remounted_json (GVariant *remounted)
{
  g_autoptr (GString) out = g_string_new ("[");
  GVariantIter iter;
  const char *mount_point, *options;

  if (remounted != NULL)
    {
      g_variant_iter_init (&iter, remounted);
      while (g_variant_iter_next (&iter, "(&s&s)", &mount_point, &options))
        {
          g_autofree char *j_mp = json_string (mount_point);
          g_autofree char *j_opts = json_string (options);
          g_string_append_printf (out, "%s{\"MountPoint\": %s, \"Options\": %s}",
                                  out->len > 1 ? ", " : "", j_mp, j_opts);
        }
    }
  g_string_append_c (out, ']');
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Any property, as JSON: new properties appear in --json without code here. */
static void
append_json (GString *out, GVariant *v)
{
  if (g_variant_is_of_type (v, G_VARIANT_TYPE_BOOLEAN))
    g_string_append (out, g_variant_get_boolean (v) ? "true" : "false");
  else if (g_variant_is_of_type (v, G_VARIANT_TYPE_UINT32))
    g_string_append_printf (out, "%u", g_variant_get_uint32 (v));
  else if (g_variant_is_of_type (v, G_VARIANT_TYPE_INT32))
    g_string_append_printf (out, "%d", g_variant_get_int32 (v));
  else if (g_variant_is_of_type (v, G_VARIANT_TYPE_UINT64))
    g_string_append_printf (out, "%" G_GUINT64_FORMAT, g_variant_get_uint64 (v));
  else if (g_variant_is_of_type (v, G_VARIANT_TYPE_INT64))
    g_string_append_printf (out, "%" G_GINT64_FORMAT, g_variant_get_int64 (v));
  else if (g_variant_is_of_type (v, G_VARIANT_TYPE_DOUBLE))
    g_string_append_printf (out, "%g", g_variant_get_double (v));
  else if (g_variant_is_of_type (v, G_VARIANT_TYPE_STRING)
           || g_variant_is_of_type (v, G_VARIANT_TYPE_OBJECT_PATH))
    {
      g_autofree char *s = json_string (g_variant_get_string (v, NULL));
      g_string_append (out, s);
    }
  else if (g_variant_is_of_type (v, G_VARIANT_TYPE_VARIANT))
    {
      g_autoptr (GVariant) inner = g_variant_get_variant (v);
      append_json (out, inner);
    }
  else if (g_variant_is_of_type (v, G_VARIANT_TYPE ("a{s*}")))
    {
      g_string_append_c (out, '{');
      for (gsize i = 0; i < g_variant_n_children (v); i++)
        {
          g_autoptr (GVariant) entry = g_variant_get_child_value (v, i);
          g_autoptr (GVariant) key = g_variant_get_child_value (entry, 0);
          g_autoptr (GVariant) value = g_variant_get_child_value (entry, 1);
          g_string_append (out, i ? ", " : "");
          append_json (out, key);
          g_string_append (out, ": ");
          append_json (out, value);
        }
      g_string_append_c (out, '}');
    }
  else if (g_variant_is_container (v))
    {
      g_string_append_c (out, '[');
      for (gsize i = 0; i < g_variant_n_children (v); i++)
        {
          g_autoptr (GVariant) child = g_variant_get_child_value (v, i);
          g_string_append (out, i ? ", " : "");
          append_json (out, child);
        }
      g_string_append_c (out, ']');
    }
  else
    g_string_append (out, "null");
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char *const *) a, *(const char *const *) b);
}

static char *
properties_json (GDBusProxy *proxy)
{
  g_auto (GStrv) names = g_dbus_proxy_get_cached_property_names (proxy);
  g_autoptr (GString) out = g_string_new ("{");

  if (names != NULL)
    qsort (names, g_strv_length (names), sizeof (char *), compare_names);
  for (guint i = 0; names != NULL && names[i] != NULL; i++)
    {
      g_autoptr (GVariant) value = g_dbus_proxy_get_cached_property (proxy, names[i]);
      g_autofree char *key = json_string (names[i]);
      g_string_append_printf (out, "%s%s: ", i ? ", " : "", key);
      if (g_str_equal (names[i], "Remounted"))
        {
          g_autofree char *list = remounted_json (value);
          g_string_append (out, list);
        }
      else
        append_json (out, value);
    }
  g_string_append_c (out, '}');
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static const char *
reason_text (const char *reason)
{
  static const struct
  {
    const char *reason, *text;
  } texts[] = {
    { "manual", "set by hand" },
    { "on-battery", "on battery" },
    { "ac", "on AC" },
    { "low-battery", "battery low: off until charging" },
    { "inhibited", "held off by a program" },
  };

  for (gsize i = 0; reason != NULL && i < G_N_ELEMENTS (texts); i++)
    if (g_str_equal (texts[i].reason, reason))
      return texts[i].text;
  return reason != NULL ? reason : "?";
}

static void
print_inhibitors (GVariant *holds)
{
  GVariantIter iter;
  const char *application, *why;
  guint32 uid;
  gboolean first = TRUE;

  if (holds == NULL || !g_variant_is_of_type (holds, G_VARIANT_TYPE ("a(ssu)")))
    return;
  g_variant_iter_init (&iter, holds);
  while (g_variant_iter_next (&iter, "(&s&su)", &application, &why, &uid))
    {
      g_print ("%s%s (uid %u): %s\n", first ? "Held off by:         " : "                     ",
               application, uid, why);
      first = FALSE;
    }
}

static int
cmd_status (int argc, char **argv)
{
  gboolean json = FALSE;
  const GOptionEntry entries[]
      = { { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print machine-readable JSON", NULL },
          { NULL } };

  if (!parse_options (&argc, &argv, NULL, "Show whether laptop mode is on and its settings.",
                      entries))
    return EXIT_USAGE;
  if (argc > 1)
    return usage_error ("status takes no arguments, got “%s”", argv[1]);

  g_autoptr (LmExportedLaptopMode) p = get_proxy ();
  if (p == NULL)
    return EXIT_FAILURE;

  const char *mode = lm_exported_laptop_mode_get_mode (p);
  const char *engine = lm_exported_laptop_mode_get_engine (p);
  const char *backend = lm_exported_laptop_mode_get_tunables_backend (p);
  const char *version = lm_exported_laptop_mode_get_version (p);
  if (mode == NULL || engine == NULL || backend == NULL || version == NULL)
    {
      g_printerr ("%s: laptop-moded did not answer with its properties\n", prog);
      return EXIT_FAILURE;
    }

  if (json)
    {
      g_autofree char *text = properties_json (G_DBUS_PROXY (p));
      g_print ("%s\n", text);
      return EXIT_SUCCESS;
    }

  g_print ("Laptop mode:         %s\n", lm_exported_laptop_mode_get_active (p) ? "on" : "off");
  g_print ("Mode:                %s (%s)\n", mode,
           reason_text (lm_exported_laptop_mode_get_reason (p)));
  g_print ("Power:               %s (from %s)\n",
           lm_exported_laptop_mode_get_on_battery (p) ? "battery" : "AC",
           lm_exported_laptop_mode_get_power_source (p)
               ? lm_exported_laptop_mode_get_power_source (p)
               : "?");
  print_inhibitors (lm_exported_laptop_mode_get_inhibitors (p));
  g_print ("Engine:              %s (tunables via %s)\n", engine, backend);
  g_print ("Max lost work:       %u s\n", lm_exported_laptop_mode_get_max_lost_work (p));
  g_print ("Flush delay:         %u s after disk activity\n",
           lm_exported_laptop_mode_get_laptop_mode_seconds (p));
  g_print ("Dirty ratio:         %u %% (background %u %%)\n",
           lm_exported_laptop_mode_get_dirty_ratio (p),
           lm_exported_laptop_mode_get_dirty_background_ratio (p));
  if (lm_exported_laptop_mode_get_remount (p))
    {
      const char *const *types = lm_exported_laptop_mode_get_remount_types (p);
      g_autofree char *list = types != NULL ? g_strjoinv (", ", (char **) types) : g_strdup ("");
      g_print ("Remount:             %s with commit=%u while on\n", *list ? list : "(no types)",
               lm_exported_laptop_mode_get_max_lost_work (p));
    }
  else
    g_print ("Remount:             off\n");
  const char *const *no = lm_exported_laptop_mode_get_no_remount (p);
  if (no != NULL && no[0] != NULL)
    {
      g_autofree char *list = g_strjoinv (", ", (char **) no);
      g_print ("Never remounted:     %s\n", list);
    }
  GVariant *remounted = lm_exported_laptop_mode_get_remounted (p);
  if (remounted != NULL && g_variant_n_children (remounted) > 0)
    {
      GVariantIter iter;
      const char *mount_point, *options;
      gboolean first = TRUE;

      g_variant_iter_init (&iter, remounted);
      while (g_variant_iter_next (&iter, "(&s&s)", &mount_point, &options))
        {
          g_print ("%s%s (was %s)\n", first ? "Remounted:           " : "                     ",
                   mount_point, options);
          first = FALSE;
        }
    }
  g_print ("Daemon version:      %s\n", version);
  return EXIT_SUCCESS;
}

/* --- start, stop, mode, sync ------------------------------------------ */

static int
simple_command (int argc, char **argv, const char *summary, const char *method)
{
  if (!parse_options (&argc, &argv, NULL, summary, NULL))
    return EXIT_USAGE;
  if (argc > 1)
    return usage_error ("unexpected argument “%s”", argv[1]);
  return call_and_report (method, NULL);
}

static int
cmd_start (int argc, char **argv)
{
  return simple_command (argc, argv, "Turn laptop mode on now.", "Start");
}

static int
cmd_stop (int argc, char **argv)
{
  return simple_command (argc, argv, "Turn laptop mode off now and restore the saved tunables.",
                         "Stop");
}

static int
cmd_sync (int argc, char **argv)
{
  return simple_command (argc, argv, "Write all dirty data to disk now.", "Sync");
}

static int
cmd_mode (int argc, char **argv)
{
  if (!parse_options (&argc, &argv, " on|off|auto",
                      "Set the mode until the daemon restarts (the start-up mode is the Mode "
                      "setting).",
                      NULL))
    return EXIT_USAGE;
  if (argc != 2)
    return usage_error ("%s", "mode needs exactly one argument: on, off or auto");
  return call_and_report ("SetMode", g_variant_new ("(s)", argv[1]));
}

/* --- set --------------------------------------------------------------- */

static const struct
{
  const char *key;
  char type;
} known_keys[] = {
  { "Mode", 's' },
  { "Engine", 's' },
  { "MaxLostWork", 'u' },
  { "LaptopModeSeconds", 'u' },
  { "DirtyRatio", 'u' },
  { "DirtyBackgroundRatio", 'u' },
  { "LowBatteryPercent", 'u' },
  { "Remount", 'b' },
  { "RemountTypes", 'a' },
  { "NoRemount", 'a' },
};

/* Known keys get their declared type; anything else is sent as a number or
 * a string so that the daemon, which owns the rules, names the problem. */
static GVariant *
parse_setting (const char *key, const char *text, GError **error)
{
  char type = 0;
  guint64 n;

  for (gsize i = 0; i < G_N_ELEMENTS (known_keys); i++)
    if (g_ascii_strcasecmp (known_keys[i].key, key) == 0)
      type = known_keys[i].type;

  if (type == 'b')
    {
      static const char *const yes[] = { "true", "yes", "on", "1", NULL };
      static const char *const no[] = { "false", "no", "off", "0", NULL };
      g_autofree char *lower = g_ascii_strdown (text, -1);
      if (g_strv_contains (yes, lower) || g_strv_contains (no, lower))
        return g_variant_new_boolean (g_strv_contains (yes, lower));
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "%s takes true or false, not “%s”", key, text);
      return NULL;
    }
  if (type == 'a')
    {
      /* Comma-separated; an empty value is an empty list. */
      g_auto (GStrv) items = g_strsplit (text, ",", -1);
      g_autoptr (GPtrArray) kept = g_ptr_array_new ();
      for (guint i = 0; items[i] != NULL; i++)
        if (*g_strstrip (items[i]) != '\0')
          g_ptr_array_add (kept, items[i]);
      return g_variant_new_strv ((const char *const *) kept->pdata, (gssize) kept->len);
    }

  gboolean numeric = g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT32, &n, NULL);
  if (type == 'u' && !numeric)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "%s takes a whole number, not “%s”", key, text);
      return NULL;
    }
  if (type == 'u' || (type == 0 && numeric))
    return g_variant_new_uint32 ((guint32) n);
  return g_variant_new_string (text);
}

static const char *
canonical_key (const char *key)
{
  for (gsize i = 0; i < G_N_ELEMENTS (known_keys); i++)
    if (g_ascii_strcasecmp (known_keys[i].key, key) == 0)
      return known_keys[i].key;
  return key;
}

static int
cmd_set (int argc, char **argv)
{
  if (!parse_options (&argc, &argv, " KEY=VALUE…",
                      "Change settings, all or nothing, and save them to the configuration file.\n"
                      "Keys: Mode (off|on|auto), LowBatteryPercent, Engine "
                      "(auto|kernel|userspace), MaxLostWork,\n"
                      "LaptopModeSeconds, DirtyRatio, DirtyBackgroundRatio,\n"
                      "Remount (true|false), RemountTypes (comma-separated: ext3,ext4,reiserfs,\n"
                      "btrfs), NoRemount (comma-separated mount points).",
                      NULL))
    return EXIT_USAGE;
  if (argc < 2)
    return usage_error ("%s", "set needs at least one KEY=VALUE");

  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  for (int i = 1; i < argc; i++)
    {
      const char *eq = strchr (argv[i], '=');
      g_autoptr (GError) error = NULL;

      if (eq == NULL || eq == argv[i])
        return usage_error ("expected KEY=VALUE, got “%s”", argv[i]);
      g_autofree char *key = g_strndup (argv[i], (gsize) (eq - argv[i]));
      GVariant *value = parse_setting (key, eq + 1, &error);
      if (value == NULL)
        {
          g_printerr ("%s: %s\n", prog, error->message);
          return EXIT_USAGE;
        }
      g_variant_builder_add (&b, "{sv}", canonical_key (key), value);
    }
  return call_and_report ("Configure", g_variant_new ("(a{sv})", &b));
}

/* --- inhibit ----------------------------------------------------------- */

static void
on_inhibit_reason (GObject *proxy, GParamSpec *pspec, gpointer loop)
{
  if (g_strcmp0 (lm_exported_laptop_mode_get_reason (LM_EXPORTED_LAPTOP_MODE (proxy)), "inhibited")
      == 0)
    g_main_loop_quit (loop);
}

static gboolean
inhibit_wait_over (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

/* The daemon counts a hold once it has lasted its settle time (1 s), so a
 * hold dropped at once costs no remount: wait until it is in effect before
 * the command writes, but not forever. */
static void
wait_for_hold (LmExportedLaptopMode *proxy)
{
  if (g_strcmp0 (lm_exported_laptop_mode_get_reason (proxy), "inhibited") == 0)
    return;
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  gulong id = g_signal_connect (proxy, "notify::reason", G_CALLBACK (on_inhibit_reason), loop);
  guint timeout = g_timeout_add_seconds (10, inhibit_wait_over, loop);
  g_main_loop_run (loop);
  g_signal_handler_disconnect (proxy, id);
  if (g_main_context_find_source_by_id (NULL, timeout) != NULL)
    g_source_remove (timeout);
}

/* Like systemd-inhibit: the hold lives on this process's bus connection, so
 * it ends when the command ends, even if this process is killed. */
static int
cmd_inhibit (int argc, char **argv)
{
  g_autofree char *why = NULL;
  g_autofree char *who = NULL;
  const GOptionEntry entries[]
      = { { "why", 0, 0, G_OPTION_ARG_STRING, &why, "Why laptop mode must stay off", "TEXT" },
          { "who", 0, 0, G_OPTION_ARG_STRING, &who, "Who holds it (default: the command's name)",
            "NAME" },
          { NULL } };
  g_autoptr (GError) error = NULL;

  if (!parse_options (&argc, &argv, " [--why TEXT] [--who NAME] -- COMMAND [ARG…]",
                      "Run COMMAND with laptop mode held off; its writes reach the disk at once.",
                      entries))
    return EXIT_USAGE;
  /* GOption leaves a "--" in place; the command follows it. */
  char **command = argv + 1;
  if (argc >= 2 && g_str_equal (command[0], "--"))
    command++;
  if (command[0] == NULL)
    return usage_error ("%s", "inhibit needs a command to run, after “--”");

  g_autofree char *base = g_path_get_basename (command[0]);
  if (who == NULL)
    who = g_strdup (base);
  if (why == NULL)
    why = g_strdup_printf ("Running %s", base);

  g_autoptr (LmExportedLaptopMode) proxy = get_proxy ();
  if (proxy == NULL)
    return EXIT_FAILURE;
  g_autoptr (GVariant) reply = g_dbus_proxy_call_sync (
      G_DBUS_PROXY (proxy), "Inhibit", g_variant_new ("(ss)", who, why),
      isatty (STDIN_FILENO) ? G_DBUS_CALL_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION
                            : G_DBUS_CALL_FLAGS_NONE,
      G_MAXINT, NULL, &error);
  if (reply == NULL)
    {
      print_error ("cannot hold laptop mode off", error);
      return EXIT_FAILURE;
    }
  guint32 cookie;
  g_variant_get (reply, "(u)", &cookie);
  wait_for_hold (proxy);

  int wait_status = 0;
  if (!g_spawn_sync (NULL, command, NULL,
                     G_SPAWN_SEARCH_PATH | G_SPAWN_CHILD_INHERITS_STDIN
                         | G_SPAWN_CHILD_INHERITS_STDOUT | G_SPAWN_CHILD_INHERITS_STDERR,
                     NULL, NULL, NULL, NULL, &wait_status, &error))
    {
      g_printerr ("%s: cannot run %s: %s\n", prog, command[0], error->message);
      return 127;
    }

  g_autoptr (GVariant) released
      = g_dbus_proxy_call_sync (G_DBUS_PROXY (proxy), "Release", g_variant_new ("(u)", cookie),
                                G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL);
  if (WIFEXITED (wait_status))
    return WEXITSTATUS (wait_status);
  if (WIFSIGNALED (wait_status))
    return 128 + WTERMSIG (wait_status);
  return EXIT_FAILURE;
}

/* --- watch, spinups ---------------------------------------------------- */

/* One spin-up as JSON: the D-Bus keys as they are, so scripts and the
 * interface documentation agree. */
static char *
spinup_json (GVariant *dict)
{
  g_autoptr (GString) out = g_string_new ("{");
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_variant_iter_init (&iter, dict);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_autoptr (GVariant) v = value;
      g_autofree char *k = json_string (key);

      g_string_append_printf (out, "%s%s: ", out->len > 1 ? ", " : "", k);
      if (g_variant_is_of_type (v, G_VARIANT_TYPE_STRING))
        {
          g_autofree char *s = json_string (g_variant_get_string (v, NULL));
          g_string_append (out, s);
        }
      else if (g_variant_is_of_type (v, G_VARIANT_TYPE_UINT32))
        g_string_append_printf (out, "%u", g_variant_get_uint32 (v));
      else if (g_variant_is_of_type (v, G_VARIANT_TYPE_INT64))
        g_string_append_printf (out, "%" G_GINT64_FORMAT, g_variant_get_int64 (v));
      else if (g_variant_is_of_type (v, G_VARIANT_TYPE_UINT64))
        g_string_append_printf (out, "%" G_GUINT64_FORMAT, g_variant_get_uint64 (v));
      else
        g_string_append (out, "null");
    }
  g_string_append_c (out, '}');
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static char *
spinup_text (GVariant *dict)
{
  const char *disk = "?", *comm = "?", *op = "?", *via = "direct", *path = NULL, *sub = NULL;
  guint32 pid = 0, uid = 0, sub_pid = 0;
  gint64 time_us = 0;
  guint64 sector = 0, inode = 0;

  g_variant_lookup (dict, "Disk", "&s", &disk);
  g_variant_lookup (dict, "Comm", "&s", &comm);
  g_variant_lookup (dict, "Operation", "&s", &op);
  g_variant_lookup (dict, "Via", "&s", &via);
  g_variant_lookup (dict, "Path", "&s", &path);
  g_variant_lookup (dict, "SubmitterComm", "&s", &sub);
  g_variant_lookup (dict, "Pid", "u", &pid);
  g_variant_lookup (dict, "SubmitterPid", "u", &sub_pid);
  g_variant_lookup (dict, "Time", "x", &time_us);
  g_variant_lookup (dict, "Sector", "t", &sector);
  gboolean has_uid = g_variant_lookup (dict, "Uid", "u", &uid);
  gboolean has_inode = g_variant_lookup (dict, "Inode", "t", &inode);

  g_autoptr (GDateTime) secs = g_date_time_new_from_unix_local (time_us / G_USEC_PER_SEC);
  g_autoptr (GDateTime) dt = secs != NULL ? g_date_time_add (secs, time_us % G_USEC_PER_SEC) : NULL;
  g_autofree char *when = dt != NULL ? g_date_time_format (dt, "%F %T.%f") : g_strdup ("?");
  g_autoptr (GString) out = g_string_new (NULL);
  g_string_printf (out, "%s  %-8s %-5s %s[%u]", when, disk, op, comm, pid);
  if (has_uid)
    g_string_append_printf (out, " uid %u", uid);
  g_string_append_printf (out, " sector %" G_GUINT64_FORMAT, sector);
  if (g_str_equal (via, "writeback"))
    g_string_append_printf (out, " via writeback by %s[%u]", sub ? sub : "?", sub_pid);
  else if (!g_str_equal (via, "direct"))
    g_string_append_printf (out, " via %s", via);
  if (has_inode)
    g_string_append_printf (out, " inode %" G_GUINT64_FORMAT, inode);
  if (path != NULL)
    g_string_append_printf (out, " (%s)", path);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
print_spinup (GVariant *dict, gboolean json)
{
  g_autofree char *line = json ? spinup_json (dict) : spinup_text (dict);

  g_print ("%s\n", line);
  fflush (stdout);
}

typedef struct
{
  GMainLoop *loop;
  gboolean json;
  int status;
} LmWatch;

static void
on_spin_up (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
            const char *signal, GVariant *params, gpointer user_data)
{
  LmWatch *w = user_data;
  g_autoptr (GVariant) dict = NULL;

  if (!g_variant_is_of_type (params, G_VARIANT_TYPE ("(a{sv})")))
    return;
  g_variant_get (params, "(@a{sv})", &dict);
  print_spinup (dict, w->json);
}

static void
on_daemon_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmWatch *w = user_data;

  g_printerr ("%s: laptop-moded left the bus\n", prog);
  w->status = EXIT_FAILURE;
  g_main_loop_quit (w->loop);
}

static gboolean
on_quit_signal (gpointer user_data)
{
  LmWatch *w = user_data;

  /* Kept: cmd_watch removes both handlers after the loop. */
  g_main_loop_quit (w->loop);
  return G_SOURCE_CONTINUE;
}

static int
cmd_watch (int argc, char **argv)
{
  LmWatch w = { 0 };
  const GOptionEntry entries[]
      = { { "json", 'j', 0, G_OPTION_ARG_NONE, &w.json, "Print one JSON object per line", NULL },
          { NULL } };
  g_autoptr (GError) error = NULL;

  if (!parse_options (&argc, &argv, NULL,
                      "Print each disk spin-up as it happens: which process woke which disk.\n"
                      "Needs the monitor right, as it shows every user's process names.",
                      entries))
    return EXIT_USAGE;
  if (argc > 1)
    return usage_error ("watch takes no arguments, got “%s”", argv[1]);

  g_autoptr (LmExportedLaptopMode) proxy = get_proxy ();
  if (proxy == NULL)
    return EXIT_FAILURE;
  GDBusConnection *connection = g_dbus_proxy_get_connection (G_DBUS_PROXY (proxy));
  g_autofree char *owner = g_dbus_proxy_get_name_owner (G_DBUS_PROXY (proxy));

  w.loop = g_main_loop_new (NULL, FALSE);
  /* Listen before subscribing, so that no spin-up falls in between. The
   * signal comes from the daemon's unique name, addressed to us alone. */
  guint sub = g_dbus_connection_signal_subscribe (connection, owner, "org.laptopmode.LaptopMode1",
                                                  "SpinUp", LM_OBJECT_PATH, NULL,
                                                  G_DBUS_SIGNAL_FLAGS_NONE, on_spin_up, &w, NULL);
  guint watch = g_bus_watch_name_on_connection (connection, owner, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                NULL, on_daemon_vanished, &w, NULL);
  if (!call ("Subscribe", NULL, &error))
    {
      print_error ("cannot watch spin-ups", error);
      g_dbus_connection_signal_unsubscribe (connection, sub);
      g_bus_unwatch_name (watch);
      g_main_loop_unref (w.loop);
      return EXIT_FAILURE;
    }
  g_printerr ("Watching spin-ups (attribution: %s); Ctrl+C stops\n",
              lm_exported_laptop_mode_get_attribution (proxy)
                  ? lm_exported_laptop_mode_get_attribution (proxy)
                  : "?");
  guint sigint = g_unix_signal_add (SIGINT, on_quit_signal, &w);
  guint sigterm = g_unix_signal_add (SIGTERM, on_quit_signal, &w);
  g_main_loop_run (w.loop);
  g_source_remove (sigint);
  g_source_remove (sigterm);
  g_dbus_connection_signal_unsubscribe (connection, sub);
  g_bus_unwatch_name (watch);
  g_main_loop_unref (w.loop);
  return w.status;
}

typedef struct
{
  char *comm;
  guint32 pid;
  guint reads, writes, writeback;
} LmSpinupSummary;

static void
summary_free (gpointer p)
{
  LmSpinupSummary *s = p;

  g_free (s->comm);
  g_free (s);
}

static gint
by_count (gconstpointer a, gconstpointer b)
{
  const LmSpinupSummary *x = *(LmSpinupSummary *const *) a;
  const LmSpinupSummary *y = *(LmSpinupSummary *const *) b;

  return (gint) (y->reads + y->writes) - (gint) (x->reads + x->writes);
}

static int
cmd_spinups (int argc, char **argv)
{
  gboolean json = FALSE;
  const GOptionEntry entries[] = { { "json", 'j', 0, G_OPTION_ARG_NONE, &json,
                                     "Print one JSON object per line, no summary", NULL },
                                   { NULL } };
  g_autoptr (GError) error = NULL;

  if (!parse_options (&argc, &argv, NULL,
                      "Show the recent spin-ups (the last 256, newest last) and which processes "
                      "caused them.",
                      entries))
    return EXIT_USAGE;
  if (argc > 1)
    return usage_error ("spinups takes no arguments, got “%s”", argv[1]);

  g_autoptr (LmExportedLaptopMode) proxy = get_proxy ();
  if (proxy == NULL)
    return EXIT_FAILURE;
  g_autoptr (GVariant) reply = g_dbus_proxy_call_sync (
      G_DBUS_PROXY (proxy), "GetSpinUps", NULL,
      isatty (STDIN_FILENO) ? G_DBUS_CALL_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION
                            : G_DBUS_CALL_FLAGS_NONE,
      -1, NULL, &error);
  if (reply == NULL)
    {
      print_error ("cannot read the spin-ups", error);
      return EXIT_FAILURE;
    }

  g_autoptr (GVariant) list = g_variant_get_child_value (reply, 0);
  g_autoptr (GHashTable) per_process
      = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, summary_free);
  GVariantIter iter;
  GVariant *dict;

  g_variant_iter_init (&iter, list);
  while ((dict = g_variant_iter_next_value (&iter)) != NULL)
    {
      g_autoptr (GVariant) d = dict;
      const char *comm = "?", *op = "read", *via = "direct";
      guint32 pid = 0;

      print_spinup (d, json);
      g_variant_lookup (d, "Comm", "&s", &comm);
      g_variant_lookup (d, "Pid", "u", &pid);
      g_variant_lookup (d, "Operation", "&s", &op);
      g_variant_lookup (d, "Via", "&s", &via);
      g_autofree char *key = g_strdup_printf ("%s[%u]", comm, pid);
      LmSpinupSummary *s = g_hash_table_lookup (per_process, key);
      if (s == NULL)
        {
          s = g_new0 (LmSpinupSummary, 1);
          s->comm = g_strdup (comm);
          s->pid = pid;
          g_hash_table_insert (per_process, g_strdup (key), s);
        }
      if (g_str_equal (op, "write"))
        s->writes++;
      else
        s->reads++;
      if (g_str_equal (via, "writeback"))
        s->writeback++;
    }
  if (json)
    return EXIT_SUCCESS;
  if (g_variant_n_children (list) == 0)
    {
      g_print ("No spin-ups recorded (attribution: %s).\n",
               lm_exported_laptop_mode_get_attribution (proxy)
                   ? lm_exported_laptop_mode_get_attribution (proxy)
                   : "?");
      return EXIT_SUCCESS;
    }
  g_autoptr (GPtrArray) rows = g_ptr_array_new ();
  GHashTableIter hi;
  gpointer row;
  g_hash_table_iter_init (&hi, per_process);
  while (g_hash_table_iter_next (&hi, NULL, &row))
    g_ptr_array_add (rows, row);
  g_ptr_array_sort (rows, by_count);
  g_print ("\nSpin-ups per process:\n");
  for (guint i = 0; i < rows->len; i++)
    {
      LmSpinupSummary *s = rows->pdata[i];
      g_autofree char *who = g_strdup_printf ("%s[%u]", s->comm, s->pid);
      g_print ("  %5u  %-24s %u read, %u write (%u via writeback)\n", s->reads + s->writes, who,
               s->reads, s->writes, s->writeback);
    }
  return EXIT_SUCCESS;
}

/* --- disks, monitor ---------------------------------------------------- */

static char *
format_duration (guint64 s)
{
  if (s >= 3600)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " h %02" G_GUINT64_FORMAT " min", s / 3600,
                            (s % 3600) / 60);
  if (s >= 60)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " min %02" G_GUINT64_FORMAT " s", s / 60, s % 60);
  return g_strdup_printf ("%" G_GUINT64_FORMAT " s", s);
}

/* The daemon counts up to Since; the current state has lasted since then. */
static void
disk_times (GVariant *disk, guint64 *active, guint64 *standby)
{
  gint64 since = 0;
  gboolean asleep = FALSE;

  *active = *standby = 0;
  g_variant_lookup (disk, "ActiveSeconds", "t", active);
  g_variant_lookup (disk, "StandbySeconds", "t", standby);
  g_variant_lookup (disk, "Since", "x", &since);
  g_variant_lookup (disk, "Asleep", "b", &asleep);
  gint64 extra = MAX (0, g_get_real_time () - since) / G_USEC_PER_SEC;
  if (since > 0)
    *(asleep ? standby : active) += (guint64) extra;
}

static char *
disk_state_text (GVariant *disk)
{
  const char *state = "unknown";
  gboolean asleep = FALSE, inferred = FALSE, excluded = FALSE;

  g_variant_lookup (disk, "State", "&s", &state);
  g_variant_lookup (disk, "Asleep", "b", &asleep);
  g_variant_lookup (disk, "Inferred", "b", &inferred);
  g_variant_lookup (disk, "Excluded", "b", &excluded);
  if (excluded)
    return g_strdup ("excluded");
  if (inferred)
    return g_strdup_printf ("%s (%s)", state, asleep ? "quiet" : "busy");
  return g_strdup (state);
}

static GVariant *
get_disks (LmExportedLaptopMode *proxy)
{
  GVariant *disks = lm_exported_laptop_mode_get_disks (proxy);

  if (disks == NULL || !g_variant_is_of_type (disks, G_VARIANT_TYPE ("a{sa{sv}}")))
    return NULL;
  return disks;
}

static int
cmd_disks (int argc, char **argv)
{
  gboolean json = FALSE;
  const GOptionEntry entries[]
      = { { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print machine-readable JSON", NULL },
          { NULL } };

  if (!parse_options (&argc, &argv, NULL,
                      "Show the disks, their power state, time active and in standby, and "
                      "spin-ups.\nState is “unknown” for disks that take no ATA commands "
                      "(NVMe, virtio, loop); their time is inferred from I/O activity.",
                      entries))
    return EXIT_USAGE;
  if (argc > 1)
    return usage_error ("disks takes no arguments, got “%s”", argv[1]);

  g_autoptr (LmExportedLaptopMode) p = get_proxy ();
  if (p == NULL)
    return EXIT_FAILURE;
  GVariant *disks = get_disks (p);
  if (disks == NULL)
    {
      g_printerr ("%s: laptop-moded did not answer with its Disks property\n", prog);
      return EXIT_FAILURE;
    }
  if (json)
    {
      g_autoptr (GString) out = g_string_new (NULL);
      append_json (out, disks);
      g_print ("%s\n", out->str);
      return EXIT_SUCCESS;
    }

  GVariantIter iter;
  const char *name;
  GVariant *disk;
  g_print ("%-10s %-24s %-16s %14s %14s %8s %8s\n", "DISK", "MODEL", "STATE", "ACTIVE", "STANDBY",
           "SPIN-UPS", "PER HOUR");
  g_variant_iter_init (&iter, disks);
  while (g_variant_iter_next (&iter, "{&s@a{sv}}", &name, &disk))
    {
      g_autoptr (GVariant) d = disk;
      const char *model = "", *error = NULL;
      guint32 spinups = 0;
      double per_hour = 0;
      guint64 active, standby;

      g_variant_lookup (d, "Model", "&s", &model);
      g_variant_lookup (d, "SpinUps", "u", &spinups);
      g_variant_lookup (d, "SpinUpsPerHour", "d", &per_hour);
      g_variant_lookup (d, "Error", "&s", &error);
      disk_times (d, &active, &standby);
      g_autofree char *state = disk_state_text (d);
      g_autofree char *a = format_duration (active);
      g_autofree char *s = format_duration (standby);
      g_print ("%-10s %-24.24s %-16s %14s %14s %8u %8.1f\n", name, *model ? model : "-", state, a,
               s, spinups, per_hour);
      if (error != NULL)
        g_print ("           error: %s\n", error);
    }
  return EXIT_SUCCESS;
}

typedef struct
{
  GMainLoop *loop;
  char *disk;
  gint64 start, last_change; /* µs since the epoch */
  gboolean asleep;
  char *state;
  guint64 active_us, standby_us;
  guint32 spinups_at_start, spinups;
  int status;
} LmMonitor;

static GVariant *
lookup_disk (LmExportedLaptopMode *proxy, const char *name)
{
  GVariant *disks = get_disks (proxy);
  return disks != NULL ? g_variant_lookup_value (disks, name, G_VARIANT_TYPE_VARDICT) : NULL;
}

static void
print_change (LmMonitor *m, const char *what, gint64 when, guint64 lasted_us)
{
  g_autoptr (GDateTime) dt = g_date_time_new_from_unix_local (when / G_USEC_PER_SEC);
  g_autofree char *clock = dt != NULL ? g_date_time_format (dt, "%T") : g_strdup ("?");
  g_autofree char *lasted = format_duration (lasted_us / G_USEC_PER_SEC);

  g_print ("%s  %s  %s (after %s)\n", clock, m->disk, what, lasted);
  fflush (stdout);
}

static void
on_disks_changed (GDBusProxy *proxy, GVariant *changed, GStrv invalidated, gpointer user_data)
{
  LmMonitor *m = user_data;
  g_autoptr (GVariant) disk = NULL;
  gboolean asleep = FALSE;
  gint64 since = 0;

  g_autoptr (GVariant) disks = g_variant_lookup_value (changed, "Disks", NULL);

  if (disks == NULL)
    return;
  disk = lookup_disk (LM_EXPORTED_LAPTOP_MODE (proxy), m->disk);
  if (disk == NULL)
    {
      g_printerr ("%s: %s is gone\n", prog, m->disk);
      g_main_loop_quit (m->loop);
      return;
    }
  g_autofree char *state = disk_state_text (disk);
  g_variant_lookup (disk, "Asleep", "b", &asleep);
  g_variant_lookup (disk, "Since", "x", &since);
  g_variant_lookup (disk, "SpinUps", "u", &m->spinups);
  if (asleep == m->asleep && g_str_equal (state, m->state))
    return;
  gint64 when = MAX (since, m->last_change);
  if (asleep != m->asleep)
    {
      guint64 lasted = (guint64) (when - m->last_change);
      *(m->asleep ? &m->standby_us : &m->active_us) += lasted;
      print_change (m, state, when, lasted);
      m->last_change = when;
      m->asleep = asleep;
    }
  else
    {
      print_change (m, state, g_get_real_time (), (guint64) (g_get_real_time () - m->last_change));
    }
  g_free (m->state);
  m->state = g_steal_pointer (&state);
}

static gboolean
on_monitor_quit (gpointer user_data)
{
  LmMonitor *m = user_data;

  /* Kept: cmd_monitor removes it after the loop. */
  g_main_loop_quit (m->loop);
  return G_SOURCE_CONTINUE;
}

static void
print_monitor_summary (LmMonitor *m)
{
  gint64 now = g_get_real_time ();
  guint64 total;

  *(m->asleep ? &m->standby_us : &m->active_us) += (guint64) MAX (0, now - m->last_change);
  total = m->active_us + m->standby_us;
  g_autofree char *t = format_duration (total / G_USEC_PER_SEC);
  g_autofree char *a = format_duration (m->active_us / G_USEC_PER_SEC);
  g_autofree char *s = format_duration (m->standby_us / G_USEC_PER_SEC);
  double pa = total > 0 ? 100.0 * (double) m->active_us / (double) total : 0.0;
  g_print ("\n%s monitored for %s: active %s (%.1f %%), standby %s (%.1f %%), %u spin-ups\n",
           m->disk, t, a, pa, s, total > 0 ? 100.0 - pa : 0.0, m->spinups - m->spinups_at_start);
}

static int
cmd_monitor (int argc, char **argv)
{
  LmMonitor m = { 0 };

  if (!parse_options (&argc, &argv, " DISK",
                      "Print DISK's power state changes as they happen (the old dslm), and on "
                      "Ctrl+C how long it was active and in standby.\nDISK is a kernel name "
                      "(sda) or its /dev path.",
                      NULL))
    return EXIT_USAGE;
  if (argc != 2)
    return usage_error ("%s", "monitor needs exactly one disk, e.g. “monitor sda”");

  g_autoptr (LmExportedLaptopMode) proxy = get_proxy ();
  if (proxy == NULL)
    return EXIT_FAILURE;
  g_autofree char *disk_name = g_path_get_basename (argv[1]);
  g_autoptr (GVariant) disk = lookup_disk (proxy, disk_name);
  if (disk == NULL)
    {
      g_printerr ("%s: laptop-moded lists no disk “%s”; see “%s disks”\n", prog, disk_name, prog);
      return EXIT_FAILURE;
    }

  m.disk = disk_name;
  m.start = m.last_change = g_get_real_time ();
  m.state = disk_state_text (disk);
  g_variant_lookup (disk, "Asleep", "b", &m.asleep);
  g_variant_lookup (disk, "SpinUps", "u", &m.spinups_at_start);
  m.spinups = m.spinups_at_start;
  m.loop = g_main_loop_new (NULL, FALSE);
  g_print ("Monitoring %s: %s; Ctrl+C prints a summary\n", disk_name, m.state);
  fflush (stdout);
  gulong handler
      = g_signal_connect (proxy, "g-properties-changed", G_CALLBACK (on_disks_changed), &m);
  guint sigint = g_unix_signal_add (SIGINT, on_monitor_quit, &m);
  guint sigterm = g_unix_signal_add (SIGTERM, on_monitor_quit, &m);
  g_main_loop_run (m.loop);
  g_source_remove (sigint);
  g_source_remove (sigterm);
  g_signal_handler_disconnect (proxy, handler);
  print_monitor_summary (&m);
  g_main_loop_unref (m.loop);
  g_free (m.state);
  return m.status;
}

/* --- dispatch ---------------------------------------------------------- */

static const LmCommand commands[] = {
  { "status", " [--json]", "Show the state and settings", cmd_status },
  { "start", "", "Turn laptop mode on", cmd_start },
  { "stop", "", "Turn laptop mode off and restore the tunables", cmd_stop },
  { "mode", " on|off|auto", "Set the mode until the daemon restarts", cmd_mode },
  { "set", " KEY=VALUE…", "Change and save settings", cmd_set },
  { "sync", "", "Write all dirty data to disk now", cmd_sync },
  { "inhibit", " -- COMMAND…", "Run a command with laptop mode held off", cmd_inhibit },
  { "watch", " [--json]", "Print each disk spin-up and who caused it", cmd_watch },
  { "spinups", " [--json]", "Show recent spin-ups and a per-process summary", cmd_spinups },
  { "disks", " [--json]", "Show disks, power state, time asleep and spin-ups", cmd_disks },
  { "monitor", " DISK", "Print a disk's power state changes; summary on Ctrl+C", cmd_monitor },
};

static void
print_usage (FILE *out)
{
  fprintf (out,
           "Usage: %s COMMAND [OPTIONS…]\n\nControl laptop mode (laptop-moded).\n\n"
           "Commands:\n",
           prog);
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autofree char *left = g_strdup_printf ("%s%s", commands[i].name, commands[i].args);
      fprintf (out, "  %-22s %s\n", left, commands[i].summary);
    }
  fprintf (out,
           "\nRun “%s COMMAND --help” for a command's options.\n"
           "Talks to the system bus; set DBUS_SYSTEM_BUS_ADDRESS to use another.\n",
           prog);
}

int
main (int argc, char **argv)
{
  g_autofree char *base = g_path_get_basename (argv[0]);

  setlocale (LC_ALL, "");
  /* The historical interface: laptop_mode start|stop|status. */
  if (g_str_equal (base, "laptop_mode"))
    prog = "laptop_mode";

  if (argc < 2)
    {
      print_usage (stderr);
      return EXIT_USAGE;
    }
  if (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h")
      || g_str_equal (argv[1], "help"))
    {
      print_usage (stdout);
      return EXIT_SUCCESS;
    }
  if (g_str_equal (argv[1], "--version"))
    {
      g_print ("%s %s\n", prog, PACKAGE_VERSION);
      return EXIT_SUCCESS;
    }

  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      if (!g_str_equal (commands[i].name, argv[1]))
        continue;
      if (g_str_equal (prog, "laptop_mode") && !g_str_equal (argv[1], "start")
          && !g_str_equal (argv[1], "stop") && !g_str_equal (argv[1], "status"))
        break;
      g_autofree char *name = g_strdup_printf ("%s %s", prog, argv[1]);
      argv[1] = name;
      return commands[i].run (argc - 1, argv + 1);
    }
  if (g_str_equal (prog, "laptop_mode"))
    g_printerr ("Usage: laptop_mode start|stop|status\n");
  else
    g_printerr ("%s: unknown command “%s”; see “%s --help”\n", prog, argv[1], prog);
  return EXIT_USAGE;
}
