/* lm-mounts.c: reading the mount table into LmMount records and finding a
 * superblock's mount in it; no remounting and no state here. */
#include "config.h"

#include "lm-mounts.h"

#include <errno.h>
#include <sys/sysmacros.h>

#include <libmount.h>

#include "lm-error.h"
#include "lm-paths.h"

typedef struct libmnt_table LmMntTable;
typedef struct libmnt_iter LmMntIter;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmMntTable, mnt_unref_table)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmMntIter, mnt_free_iter)

void
lm_mount_free (LmMount *m)
{
  if (m == NULL)
    return;
  g_free (m->key);
  g_free (m->target);
  g_free (m->fstype);
  g_free (m->source);
  g_free (m->root);
  g_free (m->vfs_options);
  g_free (m->fs_options);
  g_free (m);
}

static LmMount *
lm_mount_new (struct libmnt_fs *fs)
{
  LmMount *m = g_new0 (LmMount, 1);
  dev_t dev = mnt_fs_get_devno (fs);

  m->key = g_strdup_printf ("%u:%u", major (dev), minor (dev));
  m->devno = dev;
  m->id = mnt_fs_get_id (fs);
  m->target = g_strdup (mnt_fs_get_target (fs));
  m->fstype = g_strdup (mnt_fs_get_fstype (fs));
  m->source = g_strdup (mnt_fs_get_source (fs));
  m->root = g_strdup (mnt_fs_get_root (fs) ? mnt_fs_get_root (fs) : "/");
  m->vfs_options = g_strdup (mnt_fs_get_vfs_options (fs) ? mnt_fs_get_vfs_options (fs) : "");
  m->fs_options = g_strdup (mnt_fs_get_fs_options (fs) ? mnt_fs_get_fs_options (fs) : "");
  return m;
}

LmMount *
lm_mount_copy (const LmMount *m)
{
  LmMount *copy = g_new0 (LmMount, 1);

  copy->key = g_strdup (m->key);
  copy->devno = m->devno;
  copy->id = m->id;
  copy->target = g_strdup (m->target);
  copy->fstype = g_strdup (m->fstype);
  copy->source = g_strdup (m->source);
  copy->root = g_strdup (m->root);
  copy->vfs_options = g_strdup (m->vfs_options);
  copy->fs_options = g_strdup (m->fs_options);
  return copy;
}

GPtrArray *
lm_mounts_read (GError **error)
{
  g_autofree char *path = lm_path (LM_MOUNTINFO);
  g_autoptr (LmMntTable) table = mnt_new_table ();
  g_autoptr (LmMntIter) iter = mnt_new_iter (MNT_ITER_FORWARD);
  g_autoptr (GPtrArray) mounts = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_mount_free);
  struct libmnt_fs *fs;

  if (table == NULL || iter == NULL)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot read %s: out of memory", path);
      return NULL;
    }
  int rc = mnt_table_parse_file (table, path);
  if (rc != 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Cannot read the mount table %s: %s", path,
                   g_strerror (rc < 0 ? -rc : EINVAL));
      return NULL;
    }
  while (mnt_table_next_fs (table, iter, &fs) == 0)
    if (mnt_fs_get_target (fs) != NULL && mnt_fs_get_fstype (fs) != NULL)
      g_ptr_array_add (mounts, lm_mount_new (fs));
  return g_steal_pointer (&mounts);
}

LmMount *
lm_mounts_find (GPtrArray *mounts, const char *key, const char *target)
{
  LmMount *other = NULL;

  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      if (!g_str_equal (m->key, key))
        continue;
      if (g_str_equal (m->target, target))
        return m;
      /* libmount's own reading of the options: the table needs nothing of
       * the remounts' (lm-mount-options.c). */
      if (other == NULL && mnt_optstr_get_option (m->vfs_options, "rw", NULL, NULL) == 0)
        other = m;
    }
  return other;
}
