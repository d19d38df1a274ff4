/* laptop-modectl.c: the command-line client of laptop-moded, its dispatcher.
 * Owns the command table and the top-level options only; each command lives
 * in an lm-ctl-*.c file of its group. Also answers as "laptop_mode". */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>

#include "lm-ctl.h"

static const LmCtlCommand commands[] = {
  { "status", " [--json]", "Show the state and settings", lm_ctl_status,
    LM_CTL_COMMAND_HISTORICAL },
  { "start", "", "Turn laptop mode on", lm_ctl_start, LM_CTL_COMMAND_HISTORICAL },
  { "stop", "", "Turn laptop mode off and restore the tunables", lm_ctl_stop,
    LM_CTL_COMMAND_HISTORICAL },
  { "mode", " on|off|auto", "Set the mode until the daemon restarts", lm_ctl_mode },
  { "set", " KEY=VALUE…", "Change and save settings", lm_ctl_set },
  { "sync", "", "Write all dirty data to disk now", lm_ctl_sync },
  { "inhibit", " -- COMMAND…", "Run a command with laptop mode held off", lm_ctl_inhibit },
  { "defer", " [--max 4h] -- COMMAND…", "Run a command when the disk is awake anyway",
    lm_ctl_defer },
  { "wait-awake", " [--path P]", "Wait until the disk is awake anyway", lm_ctl_wait_awake },
  { "watch", " [--json]", "Print each disk spin-up and who caused it", lm_ctl_watch },
  { "spinups", " [--json]", "Show recent spin-ups and a per-process summary", lm_ctl_spinups },
  { "disks", " [--json]", "Show disks, power state, time asleep and spin-ups", lm_ctl_disks },
  { "monitor", " DISK", "Print a disk's power state changes; summary on Ctrl+C", lm_ctl_monitor },
  { "report", " [--since 12h|7d|2w|DATE]", "Show what woke the disks and how long they slept",
    lm_ctl_report },
  { "explain", " [DISK] [--since 1d]", "Explain what woke the disks and what would avoid it",
    lm_ctl_explain },
  { "measure", " [--window 5m] [--windows 8]", "Measure the watts laptop mode saves (on battery)",
    lm_ctl_measure },
};

static gboolean
historical (void)
{
  return g_str_equal (lm_ctl_prog, "laptop_mode");
}

/* The column of the commands' summaries: past the longest usual command
 * and its arguments, so that a line stays within 80 columns. */
#define USAGE_COLUMN 25

/* "  NAME ARGS" and the summary at USAGE_COLUMN, counted in characters
 * (printf's %-Ns counts bytes, and "…" is three); a longer left part puts
 * the summary on a line of its own, at the same column. */
static void
print_command (FILE *out, const LmCtlCommand *command)
{
  g_autofree char *left = g_strdup_printf ("  %s%s", command->name, command->args);
  glong width = g_utf8_strlen (left, -1);

  if (width < USAGE_COLUMN)
    fprintf (out, "%s%*s%s\n", left, (int) (USAGE_COLUMN - width), "", command->summary);
  else
    fprintf (out, "%s\n%*s%s\n", left, USAGE_COLUMN, "", command->summary);
}

/* As laptop_mode, only the historical commands are there. */
static void
print_usage (FILE *out)
{
  fprintf (out,
           "Usage: %s COMMAND [OPTIONS…]\n\nControl laptop mode (laptop-moded).\n\n"
           "Commands:\n",
           lm_ctl_prog);
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      if (historical () && !(commands[i].flags & LM_CTL_COMMAND_HISTORICAL))
        continue;
      print_command (out, &commands[i]);
    }
  fprintf (out,
           "\nRun “%s COMMAND --help” for a command's options.\n"
           "Talks to the system bus; set DBUS_SYSTEM_BUS_ADDRESS to use another.\n",
           lm_ctl_prog);
}

int
main (int argc, char **argv)
{
  g_autofree char *base = g_path_get_basename (argv[0]);

  setlocale (LC_ALL, "");
  /* The historical interface: laptop_mode start|stop|status. */
  if (g_str_equal (base, "laptop_mode"))
    lm_ctl_prog = "laptop_mode";

  if (argc < 2)
    {
      print_usage (stderr);
      return LM_CTL_EXIT_USAGE;
    }
  if (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h")
      || g_str_equal (argv[1], "help"))
    {
      print_usage (stdout);
      return EXIT_SUCCESS;
    }
  if (g_str_equal (argv[1], "--version"))
    {
      g_print ("%s %s\n", lm_ctl_prog, PACKAGE_VERSION);
      return EXIT_SUCCESS;
    }

  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      if (!g_str_equal (commands[i].name, argv[1]))
        continue;
      if (historical () && !(commands[i].flags & LM_CTL_COMMAND_HISTORICAL))
        break;
      g_autofree char *name = g_strdup_printf ("%s %s", lm_ctl_prog, argv[1]);
      argv[1] = name;
      return commands[i].run (argc - 1, argv + 1);
    }
  /* Worded as laptop-mode-tools said it, for the scripts that match it. */
  if (historical ())
    g_printerr ("Usage: laptop_mode start|stop|status\n");
  else
    {
      g_autofree char *got = lm_ctl_safe (argv[1]);
      g_printerr ("%s: unknown command “%s”; see “%s --help”\n", lm_ctl_prog, got, lm_ctl_prog);
    }
  return LM_CTL_EXIT_USAGE;
}
