/* lm-mounts.h: a snapshot of the mount table (/proc/self/mountinfo through
 * libmount), shared by the remounts and the flush engine. */
#pragma once

#include <sys/types.h>

#include <glib.h>

G_BEGIN_DECLS

/* The mount table is always the real one of the daemon's mount namespace,
 * never under LAPTOP_MODED_ROOT's /proc: remounts act on real mounts. But
 * under a fake root, remounting is off unless the fake root holds
 * proc/self/mountinfo (tests make it a symlink to the real one), so tests
 * with a fake /proc/sys/vm never touch the machine's filesystems. */
#define LM_MOUNTINFO "/proc/self/mountinfo"

typedef struct
{
  char *key; /* "major:minor" of the superblock */
  dev_t devno;
  int id; /* the mount's id, mountinfo's first field */
  char *target;
  char *fstype;
  char *source;      /* NULL when the table has none */
  char *root;        /* of the mount within its filesystem */
  char *vfs_options; /* this mount point's flags */
  char *fs_options;  /* the superblock's, with rw or ro */
} LmMount;

void lm_mount_free (LmMount *m);
LmMount *lm_mount_copy (const LmMount *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmMount, lm_mount_free)

/* Every mount of LM_MOUNTINFO (under the root of lm-paths), in mount table
 * order; NULL with @error set when it cannot be read. */
GPtrArray *lm_mounts_read (GError **error);

/* The mount of superblock @key at @target, or failing that any writable
 * mount of it (the one we used may have been unmounted, a bind remains). */
LmMount *lm_mounts_find (GPtrArray *mounts, const char *key, const char *target);

G_END_DECLS
