/* lm-ctl-switch.c: laptop-modectl start, stop, mode and sync.
 * Owns the commands that switch laptop mode or flush; each is one method
 * call whose refusal the daemon explains. */
#include "config.h"

#include <stdlib.h>

#include "lm-ctl.h"

static int
simple_command (int argc, char **argv, const char *summary, const char *method)
{
  if (!lm_ctl_parse_options (&argc, &argv, NULL, summary, NULL))
    return LM_CTL_EXIT_USAGE;
  if (argc > 1)
    {
      g_autofree char *got = lm_ctl_safe (argv[1]);
      return lm_ctl_usage_error ("unexpected argument “%s”", got);
    }
  return lm_ctl_call_and_report (method, NULL);
}

int
lm_ctl_start (int argc, char **argv)
{
  return simple_command (argc, argv, "Turn laptop mode on now.", "Start");
}

int
lm_ctl_stop (int argc, char **argv)
{
  return simple_command (argc, argv, "Turn laptop mode off now and restore the saved tunables.",
                         "Stop");
}

int
lm_ctl_sync (int argc, char **argv)
{
  return simple_command (argc, argv, "Write all dirty data to disk now.", "Sync");
}

int
lm_ctl_mode (int argc, char **argv)
{
  if (!lm_ctl_parse_options (&argc, &argv, " on|off|auto",
                             "Set the mode until the daemon restarts (the start-up mode is the "
                             "Mode setting).",
                             NULL))
    return LM_CTL_EXIT_USAGE;
  if (argc != 2)
    return lm_ctl_usage_error ("%s", "mode needs exactly one argument: on, off or auto");
  return lm_ctl_call_and_report ("SetMode", g_variant_new ("(s)", argv[1]));
}
