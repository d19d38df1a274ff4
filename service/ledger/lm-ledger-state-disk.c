/* lm-ledger-state-disk.c: which disk the ledger's own file lives on (the
 * disk under the state directory, through btrfs and tmpfs), and whether it
 * sleeps now: the ledger writes only while that disk is awake anyway. */
#define _GNU_SOURCE /* statx */
#include "config.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fcntl.h>

#include "lm-blockdev.h"
#include "lm-mounts.h"
#include "lm-paths.h"
#include "lm-sb-disks.h"

#include "lm-ledger-private.h"

void
lm_ledger_set_state_disk (LmLedger *self, const char *disk)
{
  g_free (self->state_disk);
  self->state_disk = g_strdup (disk);
  g_message ("Ledger %s waits for disk %s to wake while laptop mode is on", self->path,
             disk != NULL ? disk : "(none: written at once)");
}

/* Asked of the disks where they watch it: with the kernel reporting
 * spin-ups, a disk that went quiet is not counted asleep until asked, so
 * the last note_power may say "awake" of a disk asleep for hours. */
gboolean
lm_ledger_state_disk_asleep (LmLedger *self)
{
  if (self->state_disk == NULL)
    return FALSE;
  if (self->disks != NULL && lm_disks_find (self->disks, self->state_disk) != NULL)
    return !lm_disks_is_awake (self->disks, self->state_disk);
  DiskDay *d = g_hash_table_lookup (self->days, self->state_disk);
  return d != NULL && d->known && d->asleep;
}

void
lm_ledger_set_disks (LmLedger *self, LmDisks *disks)
{
  self->disks = disks;
}

/* MaxLostWork passed. A state disk awake all along (busy) is written now;
 * one asleep is not woken: its wake for someone else writes them
 * (lm_ledger_note_power), whenever that comes. */

/* The disk under an anonymous device number: none for tmpfs; btrfs's
 * first device (a btrfs over several is written on all of them at once).
 * Found by the mount's id, not its device number: a btrfs subvolume's
 * files have a device number of their own, not the superblock's. */
static char *
anonymous_disk (const char *dir)
{
  struct statx stx;
  g_autoptr (GPtrArray) mounts = NULL;

  if (statx (AT_FDCWD, dir, 0, STATX_MNT_ID, &stx) != 0 || !(stx.stx_mask & STATX_MNT_ID)
      || (mounts = lm_mounts_read (NULL)) == NULL)
    return NULL;
  for (guint i = 0; i < mounts->len; i++)
    {
      LmMount *m = g_ptr_array_index (mounts, i);
      if ((guint64) m->id != stx.stx_mnt_id)
        continue;
      g_autoptr (GArray) disks = lm_sb_disks_for_mount (m->devno, m->fstype, m->source, NULL);
      if (disks == NULL || disks->len == 0)
        return NULL;
      dev_t first = g_array_index (disks, dev_t, 0);
      return lm_blockdev_disk_for_devnum (major (first), minor (first));
    }
  return NULL;
}

/* The ledger in the state directory, waiting for the disk under it. */
LmLedger *
lm_ledger_new_in_state_dir (void)
{
  g_autofree char *path = g_build_filename (lm_state_dir (), "ledger", NULL);
  LmLedger *ledger = lm_ledger_new (path);
  g_autofree char *disk = NULL;
  struct stat st;

  g_mkdir_with_parents (lm_state_dir (), 0755);
  if (stat (lm_state_dir (), &st) == 0 && major (st.st_dev) != 0)
    disk = lm_blockdev_disk_for_devnum (major (st.st_dev), minor (st.st_dev));
  else
    disk = anonymous_disk (lm_state_dir ());
  lm_ledger_set_state_disk (ledger, disk);
  return ledger;
}
