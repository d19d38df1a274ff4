/* main.c: laptop-moded's entry point: options, logging, bus name, signals.
 * Everything else lives in the library the tests link against. */
#include "config.h"

#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>

#include "lm-bus.h"
#include "lm-daemon.h"
#include "lm-error.h"
#include "lm-log.h"
#include "lm-names.h"
#include "lm-paths.h"

typedef struct
{
  GMainLoop *loop;
  LmDaemon *daemon;
  int exit_code;
  gboolean owned;
  gboolean quitting; /* the first reason to stop wins */
} LmMain;

static void
quit (LmMain *m, int code, gboolean restore)
{
  g_autoptr (GError) error = NULL;

  if (m->quitting)
    return;
  m->quitting = TRUE;
  if (restore && !lm_daemon_shutdown (m->daemon, &error))
    {
      g_warning ("%s", error->message);
      code = EXIT_FAILURE;
    }
  m->exit_code = code;
  g_main_loop_quit (m->loop);
}

/* Signals whose default action would end the daemon with the system
 * changed. The first group ends it the way Stop does (SIGHUP too: closing
 * the terminal of scripts/run-service; there is no reload, the daemon
 * reads its file at start and takes Configure); the second means nothing
 * to it and is logged and ignored. SIGPIPE is ignored outright (a closed
 * peer is an error return). Synchronous faults (SIGSEGV, SIGBUS, SIGABRT,
 * ...) are crashes: the next start restores from the state file. */
static const int stop_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU };
static const int ignored_signals[]
    = { SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGSTKFLT, SIGPWR, SIGXFSZ };

static gboolean
in (const int *list, gsize n, int sig)
{
  for (gsize i = 0; i < n; i++)
    if (list[i] == sig)
      return TRUE;
  return FALSE;
}

/* Blocked in every thread (called before any is made) and read from a
 * signalfd on the main loop, so the restore runs there and nowhere else. */
static int
signals_fd (void)
{
  sigset_t set;

  sigemptyset (&set);
  for (gsize i = 0; i < G_N_ELEMENTS (stop_signals); i++)
    sigaddset (&set, stop_signals[i]);
  for (gsize i = 0; i < G_N_ELEMENTS (ignored_signals); i++)
    sigaddset (&set, ignored_signals[i]);
  /* Real-time signals end a process by default too. */
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
    sigaddset (&set, sig);
  signal (SIGPIPE, SIG_IGN);
  if (sigprocmask (SIG_BLOCK, &set, NULL) < 0)
    return -1;
  return signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static gboolean
on_signal (int fd, GIOCondition condition, gpointer user_data)
{
  LmMain *m = user_data;
  struct signalfd_siginfo info;

  while (read (fd, &info, sizeof info) == (ssize_t) sizeof info)
    {
      int sig = (int) info.ssi_signo;

      if (in (stop_signals, G_N_ELEMENTS (stop_signals), sig))
        {
          g_message ("Signal %d (%s) from pid %u: restoring and exiting", sig, strsignal (sig),
                     (guint) info.ssi_pid);
          quit (m, EXIT_SUCCESS, TRUE);
          return G_SOURCE_REMOVE;
        }
      g_message ("Signal %d (%s) from pid %u means nothing to laptop-moded; ignoring it", sig,
                 strsignal (sig), (guint) info.ssi_pid);
    }
  return G_SOURCE_CONTINUE;
}

/* The bus dropped this daemon (dbus-daemon restarted or died, or it cut a
 * connection that broke its limits) without a hand-over: nobody else
 * takes charge, so put the system back and fail, for systemd's
 * Restart=on-failure to start a fresh daemon that owns the name again. */
static void
on_bus_closed (GDBusConnection *connection, gboolean remote_peer_vanished, GError *error,
               gpointer user_data)
{
  LmMain *m = user_data;

  g_warning ("Lost the bus connection (%s); restoring and exiting with failure",
             error != NULL ? error->message : "closed");
  quit (m, EXIT_FAILURE, m->owned);
}

static void
on_name_acquired (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmMain *m = user_data;

  m->owned = TRUE;
  g_message ("Owning %s", name);
  /* Only the owner of the name touches the system, so two daemons never
   * act at once (e.g. during --replace). The object is already exported,
   * refusing every method until now (lm-daemon.c). */
  lm_daemon_start (m->daemon, connection);
}

static void
on_name_lost (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmMain *m = user_data;

  /* NULL: the connection is gone (GBusNameLostCallback), as on a bus that
   * died; its "closed" handler may have quit already. */
  if (connection == NULL || g_dbus_connection_is_closed (connection))
    on_bus_closed (connection, TRUE, NULL, m);
  else if (m->owned)
    {
      /* Replaced (--replace): the connection is fine and another daemon
       * owns the name now. Hand over as things are; the new owner finds the
       * state file and takes it from there. Not a failure to restart on. */
      g_message ("Replaced by another laptop-moded; leaving the saved state to it");
      quit (m, EXIT_SUCCESS, FALSE);
    }
  else
    {
      g_warning ("Cannot own %s: another laptop-moded runs (use --replace) or the bus policy "
                 "does not allow it",
                 name);
      quit (m, EXIT_FAILURE, FALSE);
    }
}

/* The command line: FALSE (and the exit code in *@rc) when the process
 * is done already (--version, a bad option). */
static gboolean
parse_options (int *argc, char ***argv, gboolean *replace, gboolean *session, int *rc)
{
  gboolean verbose = FALSE, version = FALSE;
  g_autofree char *config = NULL;
  const GOptionEntry entries[]
      = { { "replace", 'r', 0, G_OPTION_ARG_NONE, replace, "Replace a running laptop-moded", NULL },
          { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Log debug messages", NULL },
          { "session", 0, 0, G_OPTION_ARG_NONE, session,
            "Use the session bus instead of the system bus (for development)", NULL },
          { "config", 'c', 0, G_OPTION_ARG_FILENAME, &config,
            "Configuration file (default " LM_CONFIG_FILE ")", "FILE" },
          { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
          { NULL } };
  g_autoptr (GOptionContext) context = g_option_context_new ("- laptop mode service");
  g_autoptr (GError) error = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_summary (
      context, "Owns org.laptopmode.LaptopMode1 on the system bus and keeps the disk asleep.");
  if (!g_option_context_parse (context, argc, argv, &error))
    {
      g_printerr ("laptop-moded: %s\n", error->message);
      *rc = EXIT_FAILURE;
      return FALSE;
    }
  if (version)
    {
      g_print ("laptop-moded %s\n", PACKAGE_VERSION);
      *rc = EXIT_SUCCESS;
      return FALSE;
    }
  if (verbose)
    g_log_set_debug_enabled (TRUE);
  if (config != NULL)
    lm_paths_set_config_file (config);
  return TRUE;
}

/* On the bus until told to stop: the exit code. */
static int
serve (LmMain *m, gboolean session, gboolean replace)
{
  g_autoptr (GError) error = NULL;

  /* The one long-lived connection, guarded (lm-bus.c); logind's delay
   * lock, a file descriptor, comes on a short-lived one of lm-sleep.c's.
   * Closing must not raise SIGTERM, as GLib's default would: that would
   * look like a clean stop (exit 0, no restart). */
  GBusType type = session ? G_BUS_TYPE_SESSION : G_BUS_TYPE_SYSTEM;
  g_autoptr (GDBusConnection) bus = lm_bus_connect (type, &error);
  if (bus == NULL)
    {
      g_printerr ("laptop-moded: cannot connect to the bus: %s\n", error->message);
      return EXIT_FAILURE;
    }
  g_dbus_connection_set_exit_on_close (bus, FALSE);
  g_signal_connect (bus, "closed", G_CALLBACK (on_bus_closed), m);
  /* Exported before the name is asked for: with D-Bus activation the bus
   * hands over the first call as soon as the name is ours, and GDBus
   * would answer it UnknownObject if the object came only then. */
  if (!lm_daemon_export (m->daemon, bus, &error))
    {
      g_printerr ("laptop-moded: cannot export the object: %s\n", error->message);
      return EXIT_FAILURE;
    }
  guint owner = g_bus_own_name_on_connection (bus, LM_BUS_NAME,
                                              G_BUS_NAME_OWNER_FLAGS_ALLOW_REPLACEMENT
                                                  | (replace ? G_BUS_NAME_OWNER_FLAGS_REPLACE : 0),
                                              on_name_acquired, on_name_lost, m, NULL);
  g_main_loop_run (m->loop);

  g_bus_unown_name (owner);
  lm_daemon_unexport (m->daemon);
  return m->exit_code;
}

int
main (int argc, char **argv)
{
  gboolean replace = FALSE, session = FALSE;
  g_autoptr (GError) error = NULL;
  int rc;

  setlocale (LC_ALL, "");
  /* Names from outside in a log line cannot start a line of their own. */
  g_log_set_writer_func (lm_log_writer, NULL, NULL);
  if (!parse_options (&argc, &argv, &replace, &session, &rc))
    return rc;

  /* Before any thread exists, so that every thread blocks them. */
  int sig_fd = signals_fd ();
  if (sig_fd < 0)
    {
      g_printerr ("laptop-moded: cannot take signals: %s\n", g_strerror (errno));
      return EXIT_FAILURE;
    }

  /* Register the error domain before any error can reach a caller. */
  (void) LM_ERROR;

  LmMain m = { 0 };
  m.daemon = lm_daemon_new (&error);
  if (m.daemon == NULL)
    {
      g_printerr ("laptop-moded: %s\n", error->message);
      return EXIT_FAILURE;
    }
  m.loop = g_main_loop_new (NULL, FALSE);
  g_unix_fd_add (sig_fd, G_IO_IN, on_signal, &m);
  rc = serve (&m, session, replace);
  g_clear_object (&m.daemon);
  g_main_loop_unref (m.loop);
  close (sig_fd);
  return rc;
}
