/* test-remount-race.c: the remount transaction with a pause between reading
 * the mount table and opening the mount points, for test_remount_race.py.
 * Built with its own copy of lm-remount.c and lm-mountfd.c compiled with
 * LM_REMOUNT_TEST_HOOKS: the daemon's library has no such hook at all.
 *
 * Usage: test-remount-race [--fallback] [--pause PHASE] STATE CONFIG apply|restore
 * With --pause, prints "PAUSED PHASE" when the remount of PHASE ("apply" or
 * "restore") reaches the window and waits for a line on stdin.
 * Prints "OK" or "ERROR <message>" last; log messages go to stderr. */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "lm-mountfd.h"
#include "lm-remount.h"
#include "lm-settings.h"
#include "lm-state.h"

static void
pause_here (const char *phase, gpointer user_data)
{
  const char *want = user_data;
  char line[64];

  if (want == NULL || !g_str_equal (phase, want))
    return;
  printf ("PAUSED %s\n", phase);
  fflush (stdout);
  if (fgets (line, sizeof line, stdin) == NULL)
    g_printerr ("stdin closed while paused; going on\n");
}

static void
log_to_stderr (const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  fprintf (stderr, "%s\n", message);
}

int
main (int argc, char **argv)
{
  gboolean fallback = FALSE;
  g_autofree char *pause = NULL;
  GOptionEntry entries[] = {
    { "fallback", 0, 0, G_OPTION_ARG_NONE, &fallback,
      "Take the paths of kernels before 5.6 (no openat2, no fspick)", NULL },
    { "pause", 0, 0, G_OPTION_ARG_STRING, &pause, "Wait for a line on stdin in PHASE", "PHASE" },
    { NULL },
  };
  g_autoptr (GOptionContext) options = g_option_context_new ("STATE CONFIG apply|restore");
  g_autoptr (GError) error = NULL;

  g_option_context_add_main_entries (options, entries, NULL);
  if (!g_option_context_parse (options, &argc, &argv, &error) || argc != 4
      || (!g_str_equal (argv[3], "apply") && !g_str_equal (argv[3], "restore")))
    {
      g_printerr ("%s\n", error != NULL ? error->message : "usage: see --help");
      return 2;
    }
  g_log_set_default_handler (log_to_stderr, NULL);
  lm_mountfd_test_force_fallback (fallback);
  lm_remount_test_set_hook (pause_here, pause);

  g_autoptr (LmSettings) settings = lm_settings_load (argv[2], &error);
  g_autoptr (LmState) state = lm_state_new (argv[1]);
  gboolean ok = settings != NULL && lm_state_load (state, &error);
  if (ok && g_str_equal (argv[3], "apply"))
    ok = lm_remount_apply (settings, state, &error);
  else if (ok)
    ok = lm_remount_restore (state, &error);
  if (ok)
    printf ("OK\n");
  else
    printf ("ERROR %s\n", error->message); /* escaped by the library: checked */
  return 0;
}
