/* lm-attrib-tracefs.c: the tracefs attribution backend (no BPF): a private
 * tracefs instance of the daemon's own with the block and writeback events,
 * read from its trace_pipe and filtered in user space. Mounts tracefs only
 * if it is absent and unmounts only what it mounted. */
#include "config.h"

#include "lm-attrib-config.h"
#include "lm-lines.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <glib-unix.h>

#include "lm-attrib.h"
#include "lm-error.h"
#include "lm-io.h"
#include "lm-paths.h"

#define INSTANCE "laptop-moded"
#define KEY_MOUNT "tracefs-mount"
#define KEY_INSTANCE "tracefs-instance"
#define TRACEFS_MAGIC 0x74726163
#define LINE_MAX_BYTES 4096

static gboolean
is_tracefs (const char *path)
{
  struct statfs st;

  return statfs (path, &st) == 0 && (unsigned long) st.f_type == TRACEFS_MAGIC;
}

/* Also used after a crash, without libtracefs: an instance is a directory
 * that rmdir removes with everything enabled in it. */
static void
remove_instance_dir (const char *tracing)
{
  g_autofree char *dir = g_build_filename (tracing, "instances", INSTANCE, NULL);

  if (rmdir (dir) != 0 && errno != ENOENT)
    g_warning ("Cannot remove the tracefs instance %s: %s", dir, g_strerror (errno));
}

static void
unmount_tracefs (const char *path)
{
  if (umount2 (path, UMOUNT_NOFOLLOW) == 0)
    return;
  /* Someone else started using it meanwhile: theirs now. */
  g_message ("Leaving tracefs mounted on %s: %s", path, g_strerror (errno));
}

static void
tracefs_recover (LmState *state)
{
  g_autofree char *instance = lm_state_get (state, LM_ATTRIB_STATE_GROUP, KEY_INSTANCE);
  g_autofree char *mounted = lm_state_get (state, LM_ATTRIB_STATE_GROUP, KEY_MOUNT);
  g_autoptr (GError) error = NULL;

  if (instance == NULL && mounted == NULL)
    return;
  g_message ("Removing the tracefs instance and mount left by the previous run");
  if (instance != NULL && is_tracefs (instance))
    remove_instance_dir (instance);
  if (mounted != NULL && is_tracefs (mounted))
    unmount_tracefs (mounted);
  lm_state_remove (state, LM_ATTRIB_STATE_GROUP, KEY_INSTANCE);
  lm_state_remove (state, LM_ATTRIB_STATE_GROUP, KEY_MOUNT);
  if (!lm_state_save (state, &error))
    g_warning ("%s", error->message);
}

static gboolean
tracefs_available (GError **error)
{
  g_autofree char *tracing = lm_path ("/sys/kernel/tracing");
  g_autofree char *filesystems = lm_path ("/proc/filesystems");
  g_autofree char *list = NULL;

  if (is_tracefs (tracing))
    return TRUE;
  if (!g_file_get_contents (filesystems, &list, NULL, NULL) || strstr (list, "\ttracefs\n") == NULL)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "The kernel has no tracefs (not in %s)",
                   filesystems);
      return FALSE;
    }
  if (!g_file_test (tracing, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "%s is missing", tracing);
      return FALSE;
    }
  return TRUE;
}

#if LM_HAVE_TRACEFS

#include <tracefs.h>

struct _LmAttrib
{
  LmAttribConfig config;
  LmAttribModel *model;
  char *tracing;    /* where tracefs is */
  gboolean mounted; /* by us */
  struct tracefs_instance *instance;
  int fd;
  guint source;
  LmLines lines;
  GHashTable *disks; /* "maj,min" → disk name: sysfs once per device, not per event */
};

static const char *
disk_of (LmAttrib *a, const char *devnum)
{
  const char *disk = g_hash_table_lookup (a->disks, devnum);
  guint64 major, minor;
  g_auto (GStrv) parts = g_strsplit_set (devnum, ",:", 3);

  if (disk != NULL)
    return disk;
  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXUINT32, &major, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT32, &minor, NULL))
    return NULL;
  char *name = lm_blockdev_disk_for_devnum ((guint) major, (guint) minor);
  g_hash_table_insert (a->disks, g_strdup (devnum), name);
  return name;
}

/* "<comm>-<pid> [<cpu>] <flags> <secs>.<usecs>: <event>: <fields>", the
 * task name possibly holding spaces and dashes: parse from the event
 * name backwards. */
static gboolean
split_header (char *line, char *marker_at, char **comm, guint32 *pid, gint64 *usec)
{
  *marker_at = '\0';
  char *ts = strrchr (line, ' ');
  if (ts == NULL)
    return FALSE;
  *ts++ = '\0';
  g_auto (GStrv) secs = g_strsplit (ts, ".", 2);
  guint64 s, us;
  if (g_strv_length (secs) != 2
      || !g_ascii_string_to_unsigned (secs[0], 10, 0, G_MAXINT32, &s, NULL)
      || !g_ascii_string_to_unsigned (secs[1], 10, 0, 999999, &us, NULL))
    return FALSE;
  *usec = (gint64) (s * G_USEC_PER_SEC + us);
  char *cpu = strrchr (line, '[');
  if (cpu == NULL || cpu == line)
    return FALSE;
  *cpu = '\0';
  g_strchomp (line);
  char *dash = strrchr (line, '-');
  guint64 p;
  if (dash == NULL || !g_ascii_string_to_unsigned (dash + 1, 10, 0, G_MAXUINT32, &p, NULL))
    return FALSE;
  *dash = '\0';
  *comm = g_strchug (line);
  *pid = (guint32) p;
  return TRUE;
}

/* ftrace prints "<...>" for a task whose name fell out of its small cache
 * of recent names (saved_cmdlines), common on a busy machine. The task is
 * usually still running when its line is read: ask /proc. */
static const char *
resolve_comm (const char *comm, guint32 pid, char *buf, gsize size)
{
  if (!g_str_equal (comm, "<...>"))
    return comm;
  g_autofree char *rel = g_strdup_printf ("/proc/%u/comm", pid);
  g_autofree char *path = lm_path (rel);
  g_autofree char *name = lm_io_read_value (path, NULL);
  if (name == NULL || *name == '\0')
    return comm;
  g_strlcpy (buf, name, size);
  return buf;
}

static void
handle_line (char *line, gsize length, gpointer user_data)
{
  LmAttrib *a = user_data;
  char *m, *comm;
  char comm_buf[16];
  guint32 pid;
  gint64 usec;

  if ((m = strstr (line, ": block_bio_queue: ")) != NULL)
    {
      /* "7,0 R 2048 + 8 [cat]" */
      char *fields = m + strlen (": block_bio_queue: ");
      g_auto (GStrv) f = g_strsplit (fields, " ", 6);
      guint64 sector, count;
      LmSpinUp spinup;

      if (!split_header (line, m, &comm, &pid, &usec) || g_strv_length (f) < 5
          || !g_ascii_string_to_unsigned (f[2], 10, 0, G_MAXUINT64, &sector, NULL)
          || !g_ascii_string_to_unsigned (f[4], 10, 0, G_MAXUINT32, &count, NULL) || count == 0)
        return; /* also a pure flush: no data, no spin-up by itself */
      const char *disk = disk_of (a, f[0]);
      gboolean write = strpbrk (f[1], "WD") != NULL;
      if (disk != NULL
          && lm_attrib_model_io (a->model, disk, usec, pid,
                                 resolve_comm (comm, pid, comm_buf, sizeof comm_buf), write, sector,
                                 &spinup))
        a->config.func (&spinup, a->config.user_data);
    }
  else if ((m = strstr (line, ": writeback_mark_inode_dirty: ")) != NULL)
    {
      /* "bdi 7:0: ino=12 state=… flags=…" */
      char *fields = m + strlen (": writeback_mark_inode_dirty: ");
      g_auto (GStrv) f = g_strsplit (fields, " ", 4);
      guint64 ino;

      if (!split_header (line, m, &comm, &pid, &usec) || g_strv_length (f) < 3
          || !g_str_equal (f[0], "bdi") || !g_str_has_suffix (f[1], ":")
          || !g_str_has_prefix (f[2], "ino=")
          || !g_ascii_string_to_unsigned (f[2] + 4, 10, 0, G_MAXUINT64, &ino, NULL))
        return;
      f[1][strlen (f[1]) - 1] = '\0';
      const char *disk = disk_of (a, f[1]);
      if (disk != NULL && strchr (disk, ':') == NULL)
        lm_attrib_model_dirtied (a->model, disk, pid,
                                 resolve_comm (comm, pid, comm_buf, sizeof comm_buf), ino, NULL);
    }
}

static gboolean
on_readable (int fd, GIOCondition condition, gpointer user_data)
{
  LmAttrib *a = user_data;
  g_autoptr (GError) error = NULL;
  g_autofree char *what = g_strdup_printf ("%s/instances/%s/trace_pipe", a->tracing, INSTANCE);

  if (lm_lines_drain (&a->lines, fd, what, &error))
    return G_SOURCE_CONTINUE;
  g_warning ("%s; spin-up attribution stops", error->message);
  a->source = 0;
  return G_SOURCE_REMOVE;
}

static void
tracefs_stop (LmAttrib *a)
{
  g_autoptr (GError) error = NULL;

  if (a == NULL)
    return;
  if (a->source != 0)
    g_source_remove (a->source);
  if (a->fd >= 0)
    close (a->fd);
  if (a->instance != NULL)
    {
      tracefs_instance_destroy (a->instance);
      tracefs_instance_free (a->instance);
    }
  lm_state_remove (a->config.state, LM_ATTRIB_STATE_GROUP, KEY_INSTANCE);
  if (a->mounted)
    {
      unmount_tracefs (a->tracing);
      lm_state_remove (a->config.state, LM_ATTRIB_STATE_GROUP, KEY_MOUNT);
    }
  if (!lm_state_save (a->config.state, &error))
    g_warning ("%s", error->message);
  g_clear_pointer (&a->model, lm_attrib_model_free);
  g_clear_pointer (&a->disks, g_hash_table_unref);
  lm_lines_clear (&a->lines);
  g_free (a->tracing);
  g_free (a);
}

static LmAttrib *
fail (LmAttrib *a, GError **error, int err, const char *what)
{
  g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot %s in %s: %s", what, a->tracing,
               g_strerror (err));
  tracefs_stop (a);
  return NULL;
}

static LmAttrib *
tracefs_start (const LmAttribConfig *config, GError **error)
{
  LmAttrib *a = g_new0 (LmAttrib, 1);
  static const char *const events[][2] = {
    { "block", "block_bio_queue" },
    { "writeback", "writeback_mark_inode_dirty" },
  };

  a->config = *config;
  a->fd = -1;
  lm_lines_init (&a->lines, LINE_MAX_BYTES, handle_line, a);
  a->disks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  a->tracing = lm_path ("/sys/kernel/tracing");

  /* Written before the change it describes, so a crash is undone. */
  if (!is_tracefs (a->tracing))
    {
      lm_state_set (config->state, LM_ATTRIB_STATE_GROUP, KEY_MOUNT, a->tracing);
      if (!lm_state_save (config->state, error))
        {
          lm_state_remove (config->state, LM_ATTRIB_STATE_GROUP, KEY_MOUNT);
          tracefs_stop (a);
          return NULL;
        }
      if (mount ("tracefs", a->tracing, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        {
          int e = errno;
          lm_state_remove (config->state, LM_ATTRIB_STATE_GROUP, KEY_MOUNT);
          return fail (a, error, e, "mount tracefs");
        }
      a->mounted = TRUE;
      g_message ("Mounted tracefs on %s for spin-up attribution", a->tracing);
    }
  lm_state_set (config->state, LM_ATTRIB_STATE_GROUP, KEY_INSTANCE, a->tracing);
  if (!lm_state_save (config->state, error))
    {
      tracefs_stop (a);
      return NULL;
    }
  /* Never let libtracefs look for (or mount) tracefs on its own. */
  if (tracefs_set_tracing_dir (a->tracing) != 0)
    return fail (a, error, errno, "use tracefs");
  /* A leftover of a crashed run could hold other events: start clean. */
  remove_instance_dir (a->tracing);
  a->instance = tracefs_instance_create (INSTANCE);
  if (a->instance == NULL)
    return fail (a, error, errno, "create the tracefs instance " INSTANCE);
  /* CLOCK_MONOTONIC time stamps, the clock the model and the signal use. */
  if (tracefs_instance_file_write (a->instance, "trace_clock", "mono") < 0)
    return fail (a, error, errno, "set the trace clock of instance " INSTANCE);
  for (gsize i = 0; i < G_N_ELEMENTS (events); i++)
    if (tracefs_event_enable (a->instance, events[i][0], events[i][1]) != 0)
      {
        g_autofree char *what
            = g_strdup_printf ("enable the %s:%s event", events[i][0], events[i][1]);
        return fail (a, error, errno ? errno : ENOENT, what);
      }
  a->fd = tracefs_instance_file_open (a->instance, "trace_pipe", O_RDONLY | O_NONBLOCK);
  if (a->fd < 0)
    return fail (a, error, errno, "open trace_pipe of instance " INSTANCE);
  a->model = lm_attrib_model_new (config->idle_ms, g_get_monotonic_time ());
  a->source = g_unix_fd_add (a->fd, G_IO_IN, on_readable, a);
  return a;
}

static gboolean
tracefs_probe (GError **error)
{
  if (geteuid () != 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "tracefs instances need root");
      return FALSE;
    }
  return tracefs_available (error);
}

const LmAttribBackend lm_attrib_tracefs = {
  .name = "tracefs",
  .probe = tracefs_probe,
  .start = tracefs_start,
  .stop = tracefs_stop,
  .recover = tracefs_recover,
};

#else

static gboolean
tracefs_probe (GError **error)
{
  if (!tracefs_available (error))
    return FALSE;
  g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
               "laptop-moded was built without libtracefs");
  return FALSE;
}

const LmAttribBackend lm_attrib_tracefs = {
  .name = "tracefs",
  .probe = tracefs_probe,
  .recover = tracefs_recover,
};

#endif
