/* test-excluded.c: which devices Exclude=true takes out of monitoring
 * (the disk, and dm/md devices that live on excluded disks alone) against
 * a fake sysfs, and the BPF maps kept equal to that set, on real kernel
 * maps. */
#include "lm-attrib-config.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "lm-excluded.h"
#include "test-fakeroot.h"

#if LM_HAVE_BPF
#include <bpf/bpf.h>
#endif

#define KEY(maj, min) ((guint32) (maj) << 20 | (min))

static void
disk (LmFakeRoot *f, const char *name, const char *dev)
{
  g_autofree char *file = g_strdup_printf ("/sys/block/%s/dev", name);
  g_autofree char *cls = g_strdup_printf ("/sys/class/block/%s", name);
  g_autofree char *target = g_strdup_printf ("../../block/%s", name);
  lm_fake_root_put (f, file, dev);
  lm_fake_root_link (f, cls, target);
}

static void
partition (LmFakeRoot *f, const char *disk_name, const char *name)
{
  g_autofree char *file = g_strdup_printf ("/sys/block/%s/%s/partition", disk_name, name);
  g_autofree char *cls = g_strdup_printf ("/sys/class/block/%s", name);
  g_autofree char *target = g_strdup_printf ("../../block/%s/%s", disk_name, name);
  lm_fake_root_put (f, file, "1\n");
  lm_fake_root_link (f, cls, target);
}

static void
stacked_on (LmFakeRoot *f, const char *name, const char *below)
{
  g_autofree char *file = g_strdup_printf ("/sys/block/%s/slaves/%s", name, below);
  lm_fake_root_put (f, file, "");
}

/* sda and sdb; dm-0 on sda1 alone, md0 on dm-0, dm-1 on sda2 and sdb1;
 * nvme0n1 with a dev file that is not MAJ:MIN. */
static void
setup_sysfs (LmFakeRoot *f, gconstpointer data)
{
  lm_fake_root_setup (f, data);
  lm_excluded_reset ();
  disk (f, "sda", "8:0\n");
  partition (f, "sda", "sda1");
  partition (f, "sda", "sda2");
  disk (f, "sdb", "8:16\n");
  partition (f, "sdb", "sdb1");
  disk (f, "dm-0", "253:0\n");
  stacked_on (f, "dm-0", "sda1");
  disk (f, "md0", "9:0\n");
  stacked_on (f, "md0", "dm-0");
  disk (f, "dm-1", "253:1\n");
  stacked_on (f, "dm-1", "sda2");
  stacked_on (f, "dm-1", "sdb1");
  disk (f, "nvme0n1", "259:0:7\n");
}

static void
teardown (LmFakeRoot *f, gconstpointer data)
{
  lm_excluded_reset ();
  lm_fake_root_teardown (f, data);
}

static void
test_stacked (LmFakeRoot *f, gconstpointer data)
{
  const char *sda[] = { "sda", NULL };
  const char *both[] = { "sda", "sdb", NULL };
  const char *none[] = { NULL };

  g_assert_false (lm_excluded_has ("sda"));
  g_assert_true (lm_excluded_set (sda));
  g_assert_true (lm_excluded_has ("sda"));
  g_assert_true (lm_excluded_has ("dm-0"));
  g_assert_true (lm_excluded_has ("md0"));   /* through dm-0 */
  g_assert_false (lm_excluded_has ("dm-1")); /* also on sdb, which is watched */
  g_assert_false (lm_excluded_has ("sdb"));
  g_assert_false (lm_excluded_has (NULL));
  g_assert_false (lm_excluded_set (sda)); /* unchanged */

  g_assert_true (lm_excluded_set (both));
  g_assert_true (lm_excluded_has ("dm-1"));
  g_assert_true (lm_excluded_has ("sdb"));

  g_assert_true (lm_excluded_set (none));
  g_assert_false (lm_excluded_has ("sda"));
  g_assert_false (lm_excluded_has ("md0"));
  g_assert_false (lm_excluded_set (none));
}

static void
test_keys (LmFakeRoot *f, gconstpointer data)
{
  guint32 key = 0;

  g_assert_true (lm_excluded_key_of ("sdb", &key));
  g_assert_cmphex (key, ==, KEY (8, 16));
  g_assert_true (lm_excluded_key_of ("dm-1", &key));
  g_assert_cmphex (key, ==, KEY (253, 1));
  g_assert_false (lm_excluded_key_of ("nvme0n1", &key));
  g_assert_false (lm_excluded_key_of ("sdz", &key));
  lm_fake_root_put (f, "/sys/block/sdb/dev", "8:99999999\n");
  g_assert_false (lm_excluded_key_of ("sdb", &key));
  lm_fake_root_put (f, "/sys/block/sdb/dev", "-8:1\n");
  g_assert_false (lm_excluded_key_of ("sdb", &key));

  /* A disk without a usable number is still left out where names are
   * compared (tracefs, block_dump). */
  const char *nvme[] = { "nvme0n1", NULL };
  g_assert_true (lm_excluded_set (nvme));
  g_assert_true (lm_excluded_has ("nvme0n1"));
}

#if LM_HAVE_BPF
static gboolean
in_map (int fd, guint32 key)
{
  guint8 v;
  return bpf_map_lookup_elem (fd, &key, &v) == 0 && v == 1;
}

static guint
map_size (int fd)
{
  guint32 key, next, *prev = NULL;
  guint n = 0;
  while (bpf_map_get_next_key (fd, prev, &next) == 0)
    {
      key = next;
      prev = &key;
      n++;
    }
  return n;
}

/* Real kernel maps, as the programs have them: filled when added, kept
 * equal to the set, and a disk watched again gets "last I/O: now". */
static void
test_maps (LmFakeRoot *f, gconstpointer data)
{
  const char *sda[] = { "sda", NULL };
  const char *sdb[] = { "sdb", NULL };
  int excluded = bpf_map_create (BPF_MAP_TYPE_HASH, "lm_test_excl", 4, 1, 64, NULL);
  int last_io = bpf_map_create (BPF_MAP_TYPE_HASH, "lm_test_last", 4, 8, 64, NULL);
  guint64 t = 0;
  guint32 key;
  struct timespec ts;

  if (excluded < 0 || last_io < 0)
    {
      /* Not a skip: the suite runs as root on a kernel with BPF. */
      g_error ("bpf_map_create: %s", g_strerror (errno));
    }
  g_assert_true (lm_excluded_set (sda));
  lm_excluded_add_map (excluded, last_io, -1);
  g_assert_cmpuint (map_size (excluded), ==, 3); /* sda, dm-0, md0 */
  g_assert_true (in_map (excluded, KEY (8, 0)));
  g_assert_true (in_map (excluded, KEY (253, 0)));
  g_assert_true (in_map (excluded, KEY (9, 0)));
  g_assert_cmpuint (map_size (last_io), ==, 0);

  clock_gettime (CLOCK_BOOTTIME, &ts);
  guint64 before = (guint64) ts.tv_sec * 1000000000u + (guint64) ts.tv_nsec;
  g_assert_true (lm_excluded_set (sdb));
  g_assert_cmpuint (map_size (excluded), ==, 1);
  g_assert_true (in_map (excluded, KEY (8, 16)));
  g_assert_cmpuint (map_size (last_io), ==, 3);
  key = KEY (253, 0);
  g_assert_cmpint (bpf_map_lookup_elem (last_io, &key, &t), ==, 0);
  g_assert_cmpuint (t, >=, before);

  /* Removed maps are left alone. */
  lm_excluded_remove_map (excluded);
  g_assert_true (lm_excluded_set (sda));
  g_assert_true (in_map (excluded, KEY (8, 16)));
  g_assert_cmpuint (map_size (excluded), ==, 1);
  close (excluded);
  close (last_io);
}
#endif

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(name, fn) g_test_add ("/excluded/" name, LmFakeRoot, NULL, setup_sysfs, fn, teardown)
  ADD ("stacked", test_stacked);
  ADD ("keys", test_keys);
#if LM_HAVE_BPF
  ADD ("maps", test_maps);
#endif
  return g_test_run ();
}
