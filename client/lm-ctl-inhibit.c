/* lm-ctl-inhibit.c: laptop-modectl inhibit -- COMMAND….
 * Owns running a command with laptop mode held off; the hold lives on this
 * process's bus connection, so it ends with the command, even on a kill. */
#include "config.h"

#include <stdlib.h>
#include <sys/wait.h>

#include "lm-ctl.h"

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
