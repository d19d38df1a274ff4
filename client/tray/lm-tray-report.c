/* lm-tray-report.c: today's HTML report, written by laptop-modectl and opened in a browser.
 * Owns the report's file in $XDG_RUNTIME_DIR and the two children; never
 * renders anything itself and never runs a shell. */
#include "lm-tray-report.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#define CTL "laptop-modectl"
/* Enough of laptop-modectl's complaint for a popup. */
#define MAX_MESSAGE 400

typedef struct
{
  LmTrayReportDone done;
  gpointer user_data;
  GCancellable *cancellable;
  GSubprocess *proc;
  char *ctl;
  char *path;
} Job;

static void
job_free (Job *job)
{
  g_clear_object (&job->cancellable);
  g_clear_object (&job->proc);
  g_free (job->ctl);
  g_free (job->path);
  g_free (job);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Job, job_free)

static void
finish (Job *job, LmTrayReportStep step, const GError *error)
{
  if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    job->done (step, error, job->user_data);
  job_free (job);
}

/* The laptop-modectl installed with this tray, which speaks its daemon's
 * interface; the one on PATH where the tray was moved on its own. */
static char *
find_ctl (GError **error)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);

  if (self != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (self);
      g_autofree char *next = g_build_filename (dir, CTL, NULL);
      if (g_file_test (next, G_FILE_TEST_IS_REGULAR)
          && g_file_test (next, G_FILE_TEST_IS_EXECUTABLE))
        return g_steal_pointer (&next);
    }
  char *found = g_find_program_in_path (CTL);
  if (found == NULL)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                 "%s is neither next to laptop-mode-tray (%s) nor on PATH; it is installed "
                 "with laptop-moded",
                 CTL, self != NULL ? self : "?");
  return found;
}

/* Only the user reads what woke their disks, whoever made the file first:
 * a regular file of mode 0600, never a symlink planted in its place. */
static gboolean
secure_file (const char *path, int flags, GError **error)
{
  struct stat st;
  /* O_NONBLOCK: a FIFO in its place must not hang the tray. */
  int fd = g_open (path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
  int saved;

  if (fd < 0)
    {
      saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot open %s: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid ())
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "%s is not a file of your own; remove it and try again", path);
      close (fd);
      return FALSE;
    }
  if (fchmod (fd, 0600) != 0)
    {
      saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot make %s private: %s",
                   path, g_strerror (saved));
      close (fd);
      return FALSE;
    }
  close (fd);
  return TRUE;
}

/* In the child, before exec: a file laptop-modectl creates anew (say by a
 * rename) is the user's alone as well. */
static void
child_setup (gpointer user_data)
{
  umask (077);
}

static char *
complaint (GBytes *err)
{
  gsize len = 0;
  const char *data = err != NULL ? g_bytes_get_data (err, &len) : NULL;
  g_autofree char *text = g_utf8_make_valid (data != NULL ? data : "", (gssize) len);

  g_strstrip (text);
  if (g_utf8_strlen (text, -1) > MAX_MESSAGE)
    {
      g_autofree char *head = g_utf8_substring (text, 0, MAX_MESSAGE);
      return g_strdup_printf ("%s…", head);
    }
  return g_steal_pointer (&text);
}

static void
opened (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Job *job = user_data;
  g_autoptr (GError) error = NULL;

  if (!g_app_info_launch_default_for_uri_finish (result, &error))
    {
      g_prefix_error (&error, "No browser opened %s: ", job->path);
      finish (job, LM_TRAY_REPORT_OPEN, error);
      return;
    }
  g_debug ("Opened %s", job->path);
  finish (job, LM_TRAY_REPORT_OPEN, NULL);
}

static void
written (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Job *job = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) err = NULL;
  g_autofree char *uri = NULL;

  if (!g_subprocess_communicate_finish (job->proc, result, NULL, &err, &error))
    {
      /* The tray is going: the report is no longer wanted. */
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_subprocess_force_exit (job->proc);
      finish (job, LM_TRAY_REPORT_WRITE, error);
      return;
    }
  if (!g_subprocess_get_successful (job->proc))
    {
      g_autofree char *said = complaint (err);
      g_autofree char *how
          = g_subprocess_get_if_signaled (job->proc)
                ? g_strdup_printf ("was killed by signal %d", g_subprocess_get_term_sig (job->proc))
                : g_strdup_printf ("failed with exit status %d",
                                   g_subprocess_get_exit_status (job->proc));
      g_set_error (&error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s report %s%s%s", job->ctl, how,
                   *said ? ": " : "", said);
      finish (job, LM_TRAY_REPORT_WRITE, error);
      return;
    }
  if (!secure_file (job->path, O_RDONLY, &error)
      || (uri = g_filename_to_uri (job->path, NULL, &error)) == NULL)
    {
      finish (job, LM_TRAY_REPORT_WRITE, error);
      return;
    }
  g_debug ("Wrote %s; opening %s", job->path, uri);
  /* The desktop's default for text/html; inside a sandbox GIO asks the
   * org.freedesktop.portal.OpenURI portal instead, handing it the file. */
  g_app_info_launch_default_for_uri_async (uri, NULL, job->cancellable, opened, job);
}

void
lm_tray_report_open (GCancellable *cancellable, LmTrayReportDone done, gpointer user_data)
{
  g_autoptr (Job) job = g_new0 (Job, 1);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocessLauncher) launcher = NULL;
  const char *dir = g_get_user_runtime_dir ();

  job->done = done;
  job->user_data = user_data;
  job->cancellable = cancellable != NULL ? g_object_ref (cancellable) : NULL;
  job->path = g_build_filename (dir, LM_TRAY_REPORT_FILE, NULL);
  /* Created here, so that it is 0600 before a byte is in it. */
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;
      g_set_error (&error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot create %s: %s", dir,
                   g_strerror (saved));
    }
  if (error != NULL || (job->ctl = find_ctl (&error)) == NULL
      || !secure_file (job->path, O_WRONLY | O_CREAT | O_TRUNC, &error))
    {
      done (LM_TRAY_REPORT_WRITE, error, user_data);
      return;
    }

  const char *argv[] = { job->ctl, "report", "--html", job->path, "--since", "1d", NULL };
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE
                                        | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_child_setup (launcher, child_setup, NULL, NULL);
  job->proc = g_subprocess_launcher_spawnv (launcher, argv, &error);
  if (job->proc == NULL)
    {
      g_prefix_error (&error, "Cannot run %s: ", job->ctl);
      done (LM_TRAY_REPORT_WRITE, error, user_data);
      return;
    }
  g_debug ("Writing the report: %s report --html %s --since 1d", job->ctl, job->path);
  /* Stolen first: arguments are evaluated in no fixed order. */
  Job *running = g_steal_pointer (&job);
  g_subprocess_communicate_async (running->proc, NULL, running->cancellable, written, running);
}
