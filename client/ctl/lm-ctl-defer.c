/* lm-ctl-defer.c: laptop-modectl defer -- COMMAND… and wait-awake: wait
 * (WaitAwake) until the disk is awake anyway, then exec the command. Owns
 * never costing the work: without a daemon, or on any error, the command
 * runs at once, with a note on stderr. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "lm-ctl.h"

/* Four hours: a night's maintenance timers ride a spin-up of the evening
 * or the morning, and nothing waits for longer than a usual session. */
#define DEFER_DEFAULT_MAX_S (4 * 3600)
#define DEFER_MAX_S (24 * 3600)
/* The call outlives the daemon's own bound by this much, then gives up. */
#define DEFER_CALL_MARGIN_S 30

/* "90s", "30m", "4h", "1d" or bare seconds, at most a day; -1 if not. */
gint64
lm_ctl_parse_duration (const char *text)
{
  char *end = NULL;
  guint64 n;
  guint64 unit = 1;

  if (text == NULL || !g_ascii_isdigit (text[0]))
    return -1;
  errno = 0;
  n = g_ascii_strtoull (text, &end, 10);
  if (errno != 0 || end == text)
    return -1;
  if (g_str_equal (end, "m") || g_str_equal (end, "min"))
    unit = 60;
  else if (g_str_equal (end, "h"))
    unit = 3600;
  else if (g_str_equal (end, "d"))
    unit = 86400;
  else if (!g_str_equal (end, "") && !g_str_equal (end, "s"))
    return -1;
  if (n > DEFER_MAX_S / unit)
    return -1;
  return (gint64) (n * unit);
}

/* WaitAwake on @target for up to @max_s; the reason, or NULL with @error. */
static char *
wait_awake (const char *target, guint max_s, GError **error)
{
  g_autoptr (GDBusConnection) bus = g_bus_get_sync (G_BUS_TYPE_SYSTEM, NULL, error);
  const char *reason;

  if (bus == NULL)
    return NULL;
  /* No activation: a daemon someone stopped is not started for this; no
   * password dialog either, a wait asks for nothing. */
  g_autoptr (GVariant) reply = g_dbus_connection_call_sync (
      bus, LM_BUS_NAME, LM_OBJECT_PATH, LM_INTERFACE, "WaitAwake",
      g_variant_new ("(su)", target, max_s), G_VARIANT_TYPE ("(st)"),
      G_DBUS_CALL_FLAGS_NO_AUTO_START, (int) ((max_s + DEFER_CALL_MARGIN_S) * 1000), NULL, error);
  if (reply == NULL)
    return NULL;
  g_variant_get (reply, "(&st)", &reason, NULL);
  return g_strdup (reason);
}

/* What to wait on: --disk as given, else --path (default ".") made
 * absolute and rid of "." and ".." by name only: a lookup of the path
 * (realpath) reads what the dentry cache has lost, and woke the very disk
 * the wait is for. The daemon matches it against mount points as written;
 * symlinks are not followed. */
static char *
target_of (const char *path, const char *disk)
{
  if (disk != NULL)
    return g_strdup (disk);
  return g_canonicalize_filename (path != NULL ? path : ".", NULL);
}

static void
print_note (const char *why, const char *what_now)
{
  g_autofree char *safe = lm_escape (why, -1, LM_ESCAPE_KEEP_BACKSLASH);
  g_printerr ("%s: not waiting for the disk (%s); %s\n", lm_ctl_prog, safe, what_now);
}

/* The wait itself, once the options are known: NULL and *@reason (why it
 * ended), or why it did not wait. @command: defer's, under whose name it
 * waits; NULL for wait-awake. */
static char *
wait_for (const char *path, const char *disk, const char *max_text, const char *command,
          char **reason)
{
  g_autoptr (GError) error = NULL;
  gint64 max_s = DEFER_DEFAULT_MAX_S;

  if (path != NULL && disk != NULL)
    return g_strdup ("--path and --disk are exclusive");
  if (max_text != NULL && (max_s = lm_ctl_parse_duration (max_text)) < 0)
    {
      g_autofree char *shown = lm_ctl_safe (max_text);
      return g_strdup_printf ("--max %s is not a duration such as 90s, 30m or 4h, up to 24h",
                              shown);
    }
  g_autofree char *target = target_of (path, disk);
  /* The daemon's ledger names a wait after its caller's process: this
   * one becomes COMMAND, so it waits under COMMAND's name (as ps shows). */
  if (command != NULL)
    {
      g_autofree char *base = g_path_get_basename (command);
      prctl (PR_SET_NAME, base, 0, 0, 0);
    }
  *reason = wait_awake (target, (guint) max_s, &error);
  if (*reason != NULL)
    return NULL;
  g_dbus_error_strip_remote_error (error);
  if (g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN)
      || g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER))
    return g_strdup ("laptop-moded is not running");
  return g_strdup (error->message);
}

static int
run (int argc, char **argv, gboolean defer)
{
  g_autofree char *path = NULL;
  g_autofree char *disk = NULL;
  g_autofree char *max_text = NULL;
  gboolean verbose = FALSE;
  const GOptionEntry entries[]
      = { { "path", 'p', 0, G_OPTION_ARG_FILENAME, &path,
            "Wait for the disk(s) holding PATH (default: the current directory)", "PATH" },
          { "disk", 'd', 0, G_OPTION_ARG_STRING, &disk,
            "Wait for disk ID (as laptop-modectl disks shows)", "ID" },
          { "max", 'm', 0, G_OPTION_ARG_STRING, &max_text,
            "Wait at most DURATION: 90s, 30m, 4h, up to 24h (default 4h)", "DURATION" },
          { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Say on stderr why the wait ended",
            NULL },
          { NULL } };
  g_autoptr (GOptionContext) context
      = g_option_context_new (defer ? "[--path P | --disk ID] [--max DURATION] [--] COMMAND [ARG…]"
                                    : "[--path P | --disk ID] [--max DURATION]");
  g_autoptr (GError) error = NULL;
  g_autofree char *why_not = NULL;
  g_autofree char *reason = NULL;

  g_option_context_set_summary (
      context,
      defer ? "Run COMMAND when the disk is awake anyway (laptop-moded's WaitAwake): after\n"
              "another program's spin-up; at once if the disk is awake, laptop mode is off,\n"
              "on AC or DeferMaintenance is false; at the latest after DURATION. The exit\n"
              "status is COMMAND's. Without laptop-moded, or on any error, COMMAND runs at\n"
              "once, with a note on stderr."
            : "Wait until the disk is awake anyway, then print why the wait ended: awake,\n"
              "inactive, ac, disabled or timeout (\"unavailable\" after a note on stderr\n"
              "when it could not wait). Exits 0 either way, so that the work that follows\n"
              "runs.");
  g_option_context_add_main_entries (context, entries, NULL);
  /* Options end at the command: its own options are its own. */
  g_option_context_set_strict_posix (context, TRUE);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_autofree char *message = lm_escape (error->message, -1, LM_ESCAPE_KEEP_BACKSLASH);
      g_printerr ("%s: %s\n", lm_ctl_prog, message);
      return LM_CTL_EXIT_USAGE;
    }
  char **command = argv + 1;
  if (argc >= 2 && g_str_equal (command[0], "--"))
    command++;
  if (defer && command[0] == NULL)
    return lm_ctl_usage_error ("%s", "defer needs a command to run, after “--”");
  if (!defer && command[0] != NULL)
    return lm_ctl_usage_error ("%s", "wait-awake takes no command (see “defer”)");

  why_not = wait_for (path, disk, max_text, defer ? command[0] : NULL, &reason);
  if (why_not != NULL)
    {
      g_autofree char *name = defer ? lm_ctl_safe (command[0]) : NULL;
      g_autofree char *now
          = defer ? g_strdup_printf ("running %s now", name) : g_strdup ("going on now");
      print_note (why_not, now);
    }
  else if (verbose)
    g_printerr ("%s: %s\n", lm_ctl_prog, reason);

  if (!defer)
    {
      g_print ("%s\n", reason != NULL ? reason : "unavailable");
      return EXIT_SUCCESS;
    }
  fflush (stdout);
  execvp (command[0], command);
  int saved = errno;
  g_autofree char *name = lm_ctl_safe (command[0]);
  g_printerr ("%s: cannot run %s: %s\n", lm_ctl_prog, name, g_strerror (saved));
  return saved == ENOENT ? 127 : 126;
}

int
lm_ctl_defer (int argc, char **argv)
{
  return run (argc, argv, TRUE);
}

int
lm_ctl_wait_awake (int argc, char **argv)
{
  return run (argc, argv, FALSE);
}
