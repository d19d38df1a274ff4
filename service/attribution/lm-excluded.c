/* lm-excluded.c: the set of excluded disks and stacked devices, by name
 * and by the BPF programs' key, and the maps kept equal to it. The set is
 * small (a few disks), so a change rewrites every map whole. */
#include "config.h"

#include "lm-attrib-config.h"

#include "lm-excluded.h"

#include <string.h>
#include <time.h>

#include "lm-blockdev.h"
#include "lm-paths.h"

#if LM_HAVE_BPF
#include <bpf/bpf.h>
#endif

typedef struct
{
  int excluded_fd;
  int last_io_fd;
  int dirtiers_fd;
  int index_fd;  /* a program's disk → slot map, or -1 (lm_excluded_add_disks_map) */
  guint8 *slots; /* its slots, mapped */
  gsize stride;
  guint n_slots;
  gssize excluded_off;
  gssize last_io_off;
} Map;

static GHashTable *names; /* name → GUINT_TO_POINTER (key + 1); 0: no key */
static GArray *maps;      /* of Map */

static void add_map (const Map *m);

gboolean
lm_excluded_key_of (const char *name, guint32 *key)
{
  g_autofree char *dev = lm_blockdev_read (name, "dev");
  guint64 major, minor;
  g_auto (GStrv) parts = NULL;

  if (dev == NULL)
    return FALSE;
  parts = g_strsplit (dev, ":", 3);
  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[0], 10, 0, 0xfff, &major, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 0, 0xfffff, &minor, NULL))
    return FALSE;
  *key = (guint32) (major << 20 | minor);
  return TRUE;
}

static guint64
boot_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_BOOTTIME, &ts);
  return (guint64) ts.tv_sec * 1000000000u + (guint64) ts.tv_nsec;
}

#if LM_HAVE_BPF
static gboolean
key_in (GHashTable *set, guint32 key)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, set);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (value != NULL && GPOINTER_TO_UINT (value) - 1 == key)
      return TRUE;
  return FALSE;
}

/* The programs resolve "excluded" once per disk, into a flag of its slot
 * in their per-disk map, instead of hashing every bio's disk: rewrite the
 * flags that changed, in place, field by field (the programs write the
 * slot's other fields meanwhile). A disk watched again gets "last I/O:
 * now" before its flag clears, so its first bio never sees the time
 * before the exclusion. */
static void
sync_disks (const Map *m, GHashTable *now)
{
  __u32 key, next, slot;
  __u32 *prev = NULL;

  while (bpf_map_get_next_key (m->index_fd, prev, &next) == 0)
    {
      key = next;
      prev = &key;
      if (bpf_map_lookup_elem (m->index_fd, &key, &slot) != 0 || slot >= m->n_slots)
        continue;
      guint8 *value = m->slots + (gsize) slot * m->stride;
      guint32 *flag = (guint32 *) (value + m->excluded_off);
      guint32 want = key_in (now, key) ? 1 : 0;
      if (__atomic_load_n (flag, __ATOMIC_SEQ_CST) == want)
        continue;
      if (want == 0 && m->last_io_off >= 0)
        __atomic_store_n ((guint64 *) (value + m->last_io_off), boot_ns (), __ATOMIC_SEQ_CST);
      __atomic_store_n (flag, want, __ATOMIC_SEQ_CST);
    }
}
#endif

/* Make @m hold the keys of @now; keys of @before that are gone are
 * watched again from this moment. */
static void
sync_map (const Map *m, GHashTable *before, GHashTable *now)
{
#if LM_HAVE_BPF
  GHashTableIter iter;
  gpointer name, value;
  guint8 one = 1;

  if (before != NULL)
    {
      g_hash_table_iter_init (&iter, before);
      while (g_hash_table_iter_next (&iter, &name, &value))
        {
          guint32 key = GPOINTER_TO_UINT (value) - 1;
          if (value == NULL || g_hash_table_lookup (now, name) == value)
            continue;
          /* "Last I/O: now" before the filter lets its I/O through, so the
           * first bio after it never sees the time before the exclusion. */
          if (m->last_io_fd >= 0)
            {
              guint64 t = boot_ns ();
              bpf_map_update_elem (m->last_io_fd, &key, &t, BPF_ANY);
            }
          if (m->dirtiers_fd >= 0)
            bpf_map_delete_elem (m->dirtiers_fd, &key);
          bpf_map_delete_elem (m->excluded_fd, &key);
        }
    }
  g_hash_table_iter_init (&iter, now);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      guint32 key = GPOINTER_TO_UINT (value) - 1;
      if (value == NULL)
        continue;
      if (bpf_map_update_elem (m->excluded_fd, &key, &one, BPF_ANY) != 0)
        g_warning ("Could not tell the kernel to ignore device %u:%u", key >> 20, key & 0xfffff);
    }
  /* After the hash: a disk the program meets from now on reads the new
   * set from it; one it met before has its copy of the flag rewritten. */
  if (m->index_fd >= 0)
    sync_disks (m, now);
#endif
}

static void
add_name (GHashTable *set, const char *name)
{
  guint32 key;

  if (g_hash_table_contains (set, name))
    return;
  g_hash_table_insert (set, g_strdup (name),
                       lm_excluded_key_of (name, &key) ? GUINT_TO_POINTER (key + 1) : NULL);
}

/* A stacked device is left out when it lives on an excluded disk and on
 * no watched one: its I/O lands on excluded disks only. */
static void
add_stacked (GHashTable *set, const char *const *disks)
{
  g_autofree char *block = lm_path ("/sys/block");
  g_autoptr (GDir) dir = g_dir_open (block, 0, NULL);
  g_autoptr (GPtrArray) stacked = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) watched = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *slaves = g_strdup_printf ("%s/slaves", name);
      g_autofree char *sys = g_build_filename (block, slaves, NULL);
      g_autoptr (GDir) below = g_dir_open (sys, 0, NULL);
      if (below != NULL && g_dir_read_name (below) != NULL)
        g_ptr_array_add (stacked, g_strdup (name));
      else if (!g_strv_contains (disks, name))
        g_ptr_array_add (watched, g_strdup (name));
    }
  for (guint i = 0; i < stacked->len; i++)
    {
      const char *s = stacked->pdata[i];
      gboolean on_excluded = FALSE, on_watched = FALSE;
      for (guint j = 0; disks[j] != NULL && !on_excluded; j++)
        on_excluded = lm_blockdev_is_on (s, disks[j]);
      for (guint j = 0; j < watched->len && on_excluded && !on_watched; j++)
        on_watched = lm_blockdev_is_on (s, watched->pdata[j]);
      if (on_excluded && !on_watched)
        add_name (set, s);
    }
}

static gboolean
same_set (GHashTable *a, GHashTable *b)
{
  GHashTableIter iter;
  gpointer key, value;

  if (g_hash_table_size (a) != g_hash_table_size (b))
    return FALSE;
  g_hash_table_iter_init (&iter, a);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      gpointer other;
      if (!g_hash_table_lookup_extended (b, key, NULL, &other) || other != value)
        return FALSE;
    }
  return TRUE;
}

gboolean
lm_excluded_set (const char *const *disks)
{
  g_autoptr (GHashTable) set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) before = names;

  for (guint i = 0; disks[i] != NULL; i++)
    add_name (set, disks[i]);
  if (disks[0] != NULL)
    add_stacked (set, disks);
  names = g_steal_pointer (&set);
  if (before != NULL && same_set (before, names))
    return FALSE;
  for (guint i = 0; maps != NULL && i < maps->len; i++)
    sync_map (&g_array_index (maps, Map, i), before, names);
  return before != NULL || g_hash_table_size (names) > 0;
}

gboolean
lm_excluded_has (const char *name)
{
  return names != NULL && name != NULL && g_hash_table_contains (names, name);
}

void
lm_excluded_add_map (int excluded_fd, int last_io_fd, int dirtiers_fd)
{
  Map m = { .excluded_fd = excluded_fd,
            .last_io_fd = last_io_fd,
            .dirtiers_fd = dirtiers_fd,
            .index_fd = -1,
            .excluded_off = -1,
            .last_io_off = -1 };

  add_map (&m);
}

void
lm_excluded_add_disks_map (int excluded_fd, int index_fd, guint8 *slots, gsize stride,
                           guint n_slots, gssize excluded_off, gssize last_io_off, int dirtiers_fd)
{
  Map m = { .excluded_fd = excluded_fd,
            .last_io_fd = -1,
            .dirtiers_fd = dirtiers_fd,
            .index_fd = index_fd,
            .slots = slots,
            .stride = stride,
            .n_slots = n_slots,
            .excluded_off = excluded_off,
            .last_io_off = last_io_off };

  add_map (&m);
}

static void
add_map (const Map *src)
{
  Map m = *src;

  if (maps == NULL)
    maps = g_array_new (FALSE, FALSE, sizeof (Map));
  g_array_append_val (maps, m);
  if (names != NULL)
    sync_map (&m, NULL, names);
}

void
lm_excluded_remove_map (int excluded_fd)
{
  for (guint i = 0; maps != NULL && i < maps->len; i++)
    if (g_array_index (maps, Map, i).excluded_fd == excluded_fd)
      {
        g_array_remove_index_fast (maps, i);
        return;
      }
}

void
lm_excluded_reset (void)
{
  g_clear_pointer (&names, g_hash_table_unref);
  g_clear_pointer (&maps, g_array_unref);
}
