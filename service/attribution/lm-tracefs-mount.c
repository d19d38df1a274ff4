/* lm-tracefs-mount.c: the tracefs backend's place: tracefs mounted where
 * it is absent, the instance directory, both journaled before they are
 * made, and the journal part that puts them back (at a stop: what this run
 * mounted; after a crash: the one place this daemon uses). Mounts only if
 * tracefs is absent and unmounts only what it mounted. */
#include "config.h"

#include "lm-tracefs-mount.h"

#include <errno.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lm-attrib.h"
#include "lm-error.h"
#include "lm-paths.h"

#define KEY_MOUNT "tracefs-mount"
#define KEY_INSTANCE "tracefs-instance"
#define TRACEFS_MAGIC 0x74726163

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
  g_autofree char *dir = g_build_filename (tracing, "instances", LM_TRACEFS_INSTANCE, NULL);

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

/* The journal's restorer: at a stop, what this run mounted (@data: by
 * us; libtracefs removed the instance); after a crash (@data NULL), only
 * the one place this daemon mounts and makes its instance in. */
static gboolean
restore_all (GPtrArray *entries, gpointer data, GString *failures, GError **error)
{
  const gboolean *mounted = data;
  g_autofree char *tracing = lm_path ("/sys/kernel/tracing");
  gboolean instance = FALSE, mount = FALSE;

  for (guint i = 0; i < entries->len; i++)
    {
      LmJournalEntry *e = g_ptr_array_index (entries, i);
      gboolean ours = g_strcmp0 (e->original, tracing) == 0 && is_tracefs (tracing);
      if (g_str_equal (e->key, KEY_INSTANCE))
        instance = ours;
      else
        mount = ours;
      e->done = TRUE;
    }
  if (mounted == NULL && instance)
    remove_instance_dir (tracing);
  if (mounted != NULL ? *mounted : mount)
    unmount_tracefs (tracing);
  return TRUE;
}

static const char *const journal_keys[] = { KEY_INSTANCE, KEY_MOUNT, NULL };
const LmJournalPart lm_tracefs_journal_part = {
  .part = LM_ATTRIB_STATE_GROUP,
  .what = "tracefs instance and mount",
  .keys = journal_keys, /* the group is attribution's, shared with block_dump */
  .restore_all = restore_all,
};

gboolean
lm_tracefs_available (GError **error)
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

/* Journaled before the change it describes, so that a crash is undone. */
static gboolean
note (LmState *state, const char *key, const char *tracing, GError **error)
{
  g_autoptr (LmJournalChange) c = lm_journal_change_new (key, tracing, NULL);
  return lm_journal_record (state, &lm_tracefs_journal_part, c, error);
}

gboolean
lm_tracefs_prepare (LmState *state, const char *tracing, gboolean *mounted, GError **error)
{
  if (!is_tracefs (tracing))
    {
      if (!note (state, KEY_MOUNT, tracing, error))
        return FALSE;
      if (mount ("tracefs", tracing, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        {
          int err = errno;
          g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot mount tracefs in %s: %s", tracing,
                       g_strerror (err));
          return FALSE;
        }
      *mounted = TRUE;
      g_message ("Mounted tracefs on %s for spin-up attribution", tracing);
    }
  if (!note (state, KEY_INSTANCE, tracing, error))
    return FALSE;
  /* A leftover of a crashed run could hold other events: start clean. */
  remove_instance_dir (tracing);
  return TRUE;
}

gboolean
lm_tracefs_put_back (LmState *state, gboolean *mounted, GError **error)
{
  return lm_journal_restore (state, &lm_tracefs_journal_part, mounted, error);
}
