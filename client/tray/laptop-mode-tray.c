/* laptop-mode-tray.c: the tray notifier's entry point.
 * Owns the command line, logging and signals only; everything the user sees
 * is in lm-tray-app.c and below, every decision in laptop-moded. */
#include "config.h"

#include <locale.h>
#include <stdlib.h>

#include <glib-unix.h>
#include <glib.h>

#include "lm-tray-app.h"

#define DEFAULT_INTERVAL 10

static gboolean
on_signal (gpointer user_data)
{
  lm_tray_app_quit (user_data);
  return G_SOURCE_CONTINUE;
}

int
main (int argc, char **argv)
{
  gboolean version = FALSE, verbose = FALSE;
  int interval = DEFAULT_INTERVAL;
  const GOptionEntry entries[] = {
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Log what the tray does", NULL },
    { "notify-interval", 0, 0, G_OPTION_ARG_INT, &interval,
      "At most one spin-up popup per SECONDS (default 10); those in between are summed up",
      "SECONDS" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (LmTrayApp) app = NULL;

  setlocale (LC_ALL, "");
  g_set_prgname ("laptop-mode-tray");
  g_option_context_set_summary (context,
                                "Show laptop mode in the panel's tray, switch it, and tell "
                                "which process woke a disk.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("laptop-mode-tray: %s\n", error->message);
      return 2;
    }
  if (version)
    {
      g_print ("laptop-mode-tray %s\n", PACKAGE_VERSION);
      return EXIT_SUCCESS;
    }
  if (interval < 1 || interval > 86400)
    {
      g_printerr ("laptop-mode-tray: --notify-interval must be 1 to 86400 seconds\n");
      return 2;
    }
  if (verbose)
    g_log_set_debug_enabled (TRUE);

  app = lm_tray_app_new ((guint) interval);
  g_unix_signal_add (SIGINT, on_signal, app);
  g_unix_signal_add (SIGTERM, on_signal, app);
  return lm_tray_app_run (app);
}
