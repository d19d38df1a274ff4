/* lm-attrib-block-dump.c: the block_dump attribution backend: vm.block_dump
 * set while monitoring, /dev/kmsg parsed; the original value is saved in
 * the state file first and put back on stop, and after a crash. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib-unix.h>

#include "lm-attrib.h"
#include "lm-error.h"
#include "lm-io.h"
#include "lm-journal.h"
#include "lm-kmsg.h"
#include "lm-lines.h"
#include "lm-paths.h"

#define STATE_KEY "block_dump"
/* A kmsg record is at most 1 KiB of text (PRINTKRB_RECORD_MAX) plus its
 * prefix; a longer line from a FIFO is cut and skipped. */
#define LINE_MAX_BYTES 2048

struct _LmAttrib
{
  LmAttribConfig config;
  LmAttribModel *model;
  int fd;
  guint source;
  LmLines lines;    /* a partial line, when the source is not /dev/kmsg */
  gboolean changed; /* we set vm.block_dump: put it back at stop */
};

static gboolean
block_dump_probe (GError **error)
{
  g_autofree char *sysctl = lm_path ("/proc/sys/vm/block_dump");
  g_autofree char *kmsg = lm_path ("/dev/kmsg");

  if (access (sysctl, W_OK) != 0)
    {
      int e = errno;
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                   "%s: %s (vm.block_dump exists on Linux 2.6.6 to 5.13 and with the "
                   "kernel-patch/ series)",
                   sysctl, g_strerror (e));
      return FALSE;
    }
  if (access (kmsg, R_OK) != 0)
    {
      int e = errno;
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "Cannot read %s: %s", kmsg,
                   g_strerror (e));
      return FALSE;
    }
  return TRUE;
}

static void
handle_line (char *text, gsize length, gpointer user_data)
{
  LmAttrib *a = user_data;
  LmKmsgRecord r;
  LmSpinUp spinup;

  switch (lm_kmsg_parse_line (text, length, &r))
    {
      case LM_KMSG_BIO:
        {
          g_autofree char *disk = lm_blockdev_disk_for_name (r.dev);
          gint64 when = r.usec >= 0 ? r.usec : g_get_monotonic_time ();
          if (lm_attrib_model_io (a->model, disk != NULL ? disk : r.dev, when, r.pid, r.comm,
                                  r.write, r.sector, &spinup))
            a->config.func (&spinup, a->config.user_data);
          break;
        }
      case LM_KMSG_DIRTIED:
        {
          g_autofree char *disk = lm_blockdev_disk_for_name (r.dev);
          gint64 when = r.usec >= 0 ? r.usec : g_get_monotonic_time ();
          /* proc, tmpfs and other filesystems without a disk never wake one. */
          if (disk != NULL)
            lm_attrib_model_dirtied (a->model, disk, when, r.pid, r.comm,
                                     r.has_number ? r.number : 0,
                                     r.object == LM_KMSG_OBJECT_INODE ? r.name : NULL);
          break;
        }
      case LM_KMSG_SUPPRESSED:
        g_debug ("The kernel dropped %" G_GUINT64_FORMAT " block_dump lines (rate limit)",
                 r.suppressed);
        break;
      default:
        break;
    }
}

static gboolean
on_readable (int fd, GIOCondition condition, gpointer user_data)
{
  LmAttrib *a = user_data;
  g_autoptr (GError) error = NULL;

  if (lm_lines_drain (&a->lines, fd, "the kernel log", &error))
    return G_SOURCE_CONTINUE;
  g_warning ("%s; spin-up attribution stops", error->message);
  a->source = 0;
  return G_SOURCE_REMOVE;
}

static char *
sysctl_path (void)
{
  return lm_path ("/proc/sys/vm/block_dump");
}

static char *
read_sysctl (const char *key, gpointer data, GError **error)
{
  g_autofree char *sysctl = sysctl_path ();
  return lm_io_read_value (sysctl, error);
}

static gboolean
write_sysctl (const char *key, const char *value, gpointer data, GError **error)
{
  g_autofree char *sysctl = sysctl_path ();
  return lm_io_write_value (sysctl, value, error);
}

static char *
shown_name (const char *key)
{
  return g_strdup ("vm.block_dump");
}

/* Its group is attribution's, shared with tracefs' records: only the one
 * key is its. Put back at a stop and, by the journal's recovery, after a
 * crash, unless someone set it since. */
static const char *const journal_keys[] = { STATE_KEY, NULL };
static const LmJournalPart journal_part = {
  .part = LM_ATTRIB_STATE_GROUP,
  .what = "vm.block_dump value",
  .mode = LM_JOURNAL_ALL_OR_NOTHING,
  .keep_failed = TRUE,
  .keys = journal_keys,
  .write = write_sysctl,
  .read = read_sysctl,
  .name = shown_name,
};

static void
restore_sysctl (LmState *state)
{
  g_autoptr (GError) error = NULL;

  if (!lm_journal_restore (state, &journal_part, NULL, &error))
    g_warning ("%s", error->message);
}

static void
block_dump_stop (LmAttrib *a)
{
  if (a == NULL)
    return;
  if (a->source != 0)
    g_source_remove (a->source);
  if (a->fd >= 0)
    close (a->fd);
  if (a->changed)
    restore_sysctl (a->config.state);
  g_clear_pointer (&a->model, lm_attrib_model_free);
  lm_lines_clear (&a->lines);
  g_free (a);
}

static LmAttrib *
block_dump_start (const LmAttribConfig *config, GError **error)
{
  g_autofree char *sysctl = lm_path ("/proc/sys/vm/block_dump");
  g_autofree char *kmsg = lm_path ("/dev/kmsg");
  LmAttrib *a = g_new0 (LmAttrib, 1);
  struct stat st;

  a->config = *config;
  a->fd = -1;
  /* /dev/kmsg hands out one record per read(); a FIFO standing in for it
   * in tests hands out arbitrary pieces: lines are reassembled for both. */
  lm_lines_init (&a->lines, LINE_MAX_BYTES, handle_line, a);

  g_autofree char *current = lm_io_read_value (sysctl, error);
  if (current == NULL)
    {
      block_dump_stop (a);
      return NULL;
    }
  /* Opened before the sysctl changes, and at its end: what the kernel
   * logged before monitoring began is history, not a spin-up now. */
  a->fd = open (kmsg, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (a->fd >= 0 && fstat (a->fd, &st) == 0 && S_ISFIFO (st.st_mode))
    {
      /* A FIFO (tests): hold a write end too so that it never reads EOF. */
      close (a->fd);
      a->fd = open (kmsg, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    }
  if (a->fd < 0)
    {
      int e = errno;
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot open %s: %s", kmsg, g_strerror (e));
      block_dump_stop (a);
      return NULL;
    }
  lseek (a->fd, 0, SEEK_END);

  if (!g_str_equal (current, "1"))
    {
      /* Saved durably before the change, like every other tunable. */
      g_autoptr (GPtrArray) changes = lm_journal_changes_new ();
      g_ptr_array_add (changes, lm_journal_change_new (STATE_KEY, current, "1"));
      if (!lm_journal_apply (config->state, &journal_part, changes, NULL, NULL, error))
        {
          block_dump_stop (a);
          return NULL;
        }
      a->changed = TRUE;
    }
  a->model = lm_attrib_model_new (config->idle_ms, g_get_monotonic_time ());
  a->source = g_unix_fd_add (a->fd, G_IO_IN, on_readable, a);
  return a;
}

/* The daemon's own command woke @disk: the model's last I/O of it is
 * now, as if the backend had seen it (it filters the daemon out). */
static void
block_dump_own_io (LmAttrib *a, const char *disk)
{
  lm_attrib_model_gap (a->model, disk, g_get_monotonic_time ());
}

const LmAttribBackend lm_attrib_block_dump = {
  .name = "block_dump",
  .probe = block_dump_probe,
  .start = block_dump_start,
  .stop = block_dump_stop,
  .own_io = block_dump_own_io,
  .journal = &journal_part,
};
