/* lm-attrib-stack.c: the devices and superblocks stacked on a disk, and the
 * owner of the data their latest bios carried, handed down to the disk. The program remembers who
 * dirtied a filesystem by the superblock's device (a dm or md device, or btrfs's anonymous number),
 * while the write that wakes the disk comes from a kernel thread (the flusher, dm-crypt's workers)
 * on the physical disk beneath: only user space knows the stack, and asks only at a spin-up. */
#include "lm-attrib-stack.h"

#include <sys/sysmacros.h>

#include "lm-blockdev.h"
#include "lm-bpf-record.h"
#include "lm-excluded.h"
#include "lm-mounts.h"
#include "lm-paths.h"
#include "lm-sb-disks.h"

/* The key the program gives superblock @dev's dirtiers: its whole disk's
 * number for a block device, the number itself for an anonymous one. */
static gboolean
superblock_key (dev_t dev, guint32 *key)
{
  if (major (dev) == 0)
    {
      *key = lm_bpf_record_disk_key (0, minor (dev));
      return TRUE;
    }
  g_autofree char *disk = lm_blockdev_disk_for_devnum (major (dev), minor (dev));
  return lm_excluded_key_of (disk, key);
}

static void
add_key (GArray *keys, guint32 key)
{
  for (guint i = 0; i < keys->len; i++)
    if (g_array_index (keys, guint32, i) == key)
      return;
  g_array_append_val (keys, key);
}

/* dm on dm on md is the deepest real stack; a loop in sysfs must end. */
#define MAX_STACK_DEPTH 8

static void add_holders_of (GArray *keys, const char *dir, guint depth);

/* The device @name holds a disk below it: its key, and those above it. */
static void
add_holder (GArray *keys, const char *name, guint depth)
{
  g_autofree char *block = g_build_filename ("/sys/block", name, NULL);
  guint32 key;

  if (!lm_excluded_key_of (name, &key))
    return;
  add_key (keys, key);
  add_holders_of (keys, block, depth + 1);
}

/* The holders/ of sysfs block directory @dir (a disk or a partition). */
static void
add_holders_of (GArray *keys, const char *dir, guint depth)
{
  g_autofree char *sys = g_build_filename (dir, "holders", NULL);
  g_autofree char *path = lm_path (sys);
  g_autoptr (GDir) holders = depth < MAX_STACK_DEPTH ? g_dir_open (path, 0, NULL) : NULL;
  const char *name;

  while (holders != NULL && (name = g_dir_read_name (holders)) != NULL)
    add_holder (keys, name, depth);
}

/* Every dm or md device over disk @disk or one of its partitions. A
 * filesystem on one of them is remembered under that device's key. */
static void
add_stacked_devices (GArray *keys, const char *disk)
{
  g_autofree char *block = g_build_filename ("/sys/block", disk, NULL);
  g_autofree char *path = lm_path (block);
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *entry;

  add_holders_of (keys, block, 0);
  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *part = g_build_filename (block, entry, NULL);
      g_autofree char *marker = g_build_filename (part, "partition", NULL);
      g_autofree char *marker_path = lm_path (marker);
      if (g_file_test (marker_path, G_FILE_TEST_EXISTS))
        add_holders_of (keys, part, 0);
    }
}

GArray *
lm_attrib_stack_keys (guint disk_major, guint disk_minor)
{
  g_autoptr (GArray) keys = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) mounts = lm_mounts_read (&error);
  dev_t disk = makedev (disk_major, disk_minor);
  guint32 own = lm_bpf_record_disk_key (disk_major, disk_minor);

  if (mounts == NULL)
    g_debug ("No stacked filesystems for %u:%u: %s", disk_major, disk_minor, error->message);
  for (guint i = 0; mounts != NULL && i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      gint64 *devno = g_new (gint64, 1);
      guint32 key;

      *devno = (gint64) m->devno;
      /* A superblock mounted many times (subvolumes, binds) is one. */
      if (!g_hash_table_add (seen, devno))
        continue;
      /* Only a filesystem mounted from a device node can sit on a disk. */
      if (m->source == NULL || !g_str_has_prefix (m->source, "/dev/"))
        continue;
      if (!superblock_key (m->devno, &key) || key == own)
        continue;
      g_autoptr (GArray) disks = lm_sb_disks_for_dev (m->devno, NULL);
      if (disks != NULL && lm_sb_disks_has (disks, disk))
        add_key (keys, key);
    }
  /* Where a filesystem keeps its own block device (btrfs does on some
   * kernels), its dirtiers are under that device's key. */
  g_autofree char *name = lm_blockdev_disk_for_devnum (disk_major, disk_minor);
  add_stacked_devices (keys, name);
  return g_steal_pointer (&keys);
}

/* --- what upper devices carried -------------------------------------------- */

/* How long after its upper device's bio a disk's write may come: the
 * stacking driver's queueing, not a disk's idle time. */
#define LM_ATTRIB_UPPER_WINDOW_US (2 * G_USEC_PER_SEC)
/* Notes kept: one per upper device that woke; a machine has few. */
#define UPPER_MAX 256

typedef struct
{
  gint64 usec;
  gboolean have_owner;
  LmAttribTask owner;
  guint64 ino;
} UpperNote;

struct _LmAttribUppers
{
  GHashTable *notes; /* key → UpperNote */
};

/* Full: the oldest note goes (the others may be for a write on its way). */
static void
drop_oldest (GHashTable *notes)
{
  GHashTableIter iter;
  gpointer key, value, oldest = NULL;
  gint64 oldest_usec = G_MAXINT64;

  g_hash_table_iter_init (&iter, notes);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (((const UpperNote *) value)->usec < oldest_usec)
      {
        oldest_usec = ((const UpperNote *) value)->usec;
        oldest = key;
      }
  g_hash_table_remove (notes, oldest);
}

LmAttribUppers *
lm_attrib_uppers_new (void)
{
  LmAttribUppers *u = g_new0 (LmAttribUppers, 1);

  u->notes = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  return u;
}

void
lm_attrib_uppers_free (LmAttribUppers *uppers)
{
  if (uppers == NULL)
    return;
  g_hash_table_unref (uppers->notes);
  g_free (uppers);
}

void
lm_attrib_uppers_note (LmAttribUppers *uppers, guint32 key, gint64 usec, const LmAttribTask *owner,
                       guint64 ino)
{
  UpperNote *n = g_new0 (UpperNote, 1);

  n->usec = usec;
  if (owner != NULL)
    {
      n->have_owner = TRUE;
      n->owner = *owner;
      n->ino = ino;
    }
  if (g_hash_table_size (uppers->notes) >= UPPER_MAX
      && !g_hash_table_contains (uppers->notes, GUINT_TO_POINTER (key)))
    drop_oldest (uppers->notes);
  g_hash_table_replace (uppers->notes, GUINT_TO_POINTER (key), n);
}

void
lm_attrib_uppers_amend (LmAttribUppers *uppers, guint32 key, gint64 usec, const LmAttribTask *owner,
                        guint64 ino)
{
  UpperNote *n = g_hash_table_lookup (uppers->notes, GUINT_TO_POINTER (key));

  if (n == NULL || n->have_owner || usec < n->usec || usec - n->usec > LM_ATTRIB_UPPER_WINDOW_US)
    return;
  n->have_owner = TRUE;
  n->owner = *owner;
  n->ino = ino;
}

gboolean
lm_attrib_uppers_owner (LmAttribUppers *uppers, const char *disk, gint64 usec, LmAttribTask *owner,
                        guint64 *ino)
{
  const UpperNote *best = NULL;
  guint32 disk_key;

  if (g_hash_table_size (uppers->notes) == 0 || !lm_excluded_key_of (disk, &disk_key))
    return FALSE;
  g_autoptr (GArray) keys = lm_attrib_stack_keys (disk_key >> 20, disk_key & 0xfffff);
  for (guint i = 0; i < keys->len; i++)
    {
      const UpperNote *n = g_hash_table_lookup (
          uppers->notes, GUINT_TO_POINTER (g_array_index (keys, guint32, i)));
      if (n != NULL)
        g_debug ("%s: upper note %u:%u %" G_GINT64_FORMAT " us before, %s", disk,
                 g_array_index (keys, guint32, i) >> 20, g_array_index (keys, guint32, i) & 0xfffff,
                 usec - n->usec, n->have_owner ? n->owner.comm : "no owner");
      if (n != NULL && n->usec <= usec && usec - n->usec <= LM_ATTRIB_UPPER_WINDOW_US
          && (best == NULL || n->usec > best->usec))
        best = n;
    }
  if (best == NULL || !best->have_owner)
    return FALSE;
  *owner = best->owner;
  *ino = best->ino;
  return TRUE;
}
