/* lm-ctl-inhibit.c: laptop-modectl inhibit -- COMMAND….
 * Owns running a command with laptop mode held off; the hold lives on this
 * process's bus connection, so it ends with the command, even on a kill. */
#include "config.h"

#include <stdlib.h>
#include <sys/wait.h>

#include "lm-ctl.h"

static gboolean
hold_in_effect (LmExportedLaptopMode *proxy)
{
  return !lm_exported_laptop_mode_get_active (proxy)
         || g_strcmp0 (lm_exported_laptop_mode_get_reason (proxy), LM_REASON_INHIBITED) == 0;
}

static void
on_state (GObject *proxy, GParamSpec *pspec, gpointer loop)
{
  if (hold_in_effect (LM_EXPORTED_LAPTOP_MODE (proxy)))
    g_main_loop_quit (loop);
}

static gboolean
wait_over (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

/* The daemon counts a hold once it has lasted its settle time (1 s), so a
 * hold dropped at once costs no remount: wait until laptop mode is off
 * before the command writes, but not forever. */
static void
wait_for_hold (LmExportedLaptopMode *proxy)
{
  if (hold_in_effect (proxy))
    return;
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  gulong id = g_signal_connect (proxy, "notify", G_CALLBACK (on_state), loop);
  guint timeout = g_timeout_add_seconds (10, wait_over, loop);
  g_main_loop_run (loop);
  g_signal_handler_disconnect (proxy, id);
  if (g_main_context_find_source_by_id (NULL, timeout) != NULL)
    g_source_remove (timeout);
}

int
lm_ctl_inhibit (int argc, char **argv)
{
  g_autofree char *why = NULL;
  g_autofree char *who = NULL;
  const GOptionEntry entries[]
      = { { "why", 0, 0, G_OPTION_ARG_STRING, &why, "Why laptop mode must stay off", "TEXT" },
          { "who", 0, 0, G_OPTION_ARG_STRING, &who, "Who holds it (default: the command's name)",
            "NAME" },
          { NULL } };
  g_autoptr (GError) error = NULL;

  if (!lm_ctl_parse_options (
          &argc, &argv, " [--why TEXT] [--who NAME] -- COMMAND [ARG…]",
          "Run COMMAND with laptop mode held off; its writes reach the disk at once.", entries))
    return LM_CTL_EXIT_USAGE;
  /* GOption leaves a "--" in place; the command follows it. */
  char **command = argv + 1;
  if (argc >= 2 && g_str_equal (command[0], "--"))
    command++;
  if (command[0] == NULL)
    return lm_ctl_usage_error ("%s", "inhibit needs a command to run, after “--”");

  g_autofree char *base = g_path_get_basename (command[0]);
  if (who == NULL)
    who = g_strdup (base);
  if (why == NULL)
    why = g_strdup_printf ("Running %s", base);

  g_autoptr (LmExportedLaptopMode) proxy = lm_ctl_get_proxy ();
  if (proxy == NULL)
    return EXIT_FAILURE;
  g_autoptr (GVariant) reply
      = lm_ctl_call (proxy, "Inhibit", g_variant_new ("(ss)", who, why), &error);
  if (reply == NULL)
    {
      lm_ctl_print_error ("cannot hold laptop mode off", error);
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
      g_autofree char *name = lm_ctl_safe (command[0]);
      g_autofree char *message = lm_escape (error->message, -1, LM_ESCAPE_KEEP_BACKSLASH);
      g_printerr ("%s: cannot run %s: %s\n", lm_ctl_prog, name, message);
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
