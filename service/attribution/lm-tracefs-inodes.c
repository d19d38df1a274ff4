/* lm-tracefs-inodes.c: for the tracefs backend, who dirtied each inode
 * (bounded, least recently dirtied out first) and which inode each thread
 * is writing back (between writeback_single_inode_start and
 * writeback_single_inode). Pure bookkeeping of the events it is told. */
#include "lm-tracefs-inodes.h"

#include <string.h>

typedef struct
{
  GList link; /* in the queue, most recently dirtied first; data is the entry */
  char *key;  /* "bdi/ino" */
  LmAttribTask owner;
  gint64 clean_us; /* 0 while dirty */
} Entry;

/* A thread's writeback window. */
typedef struct
{
  char *key;
} Window;

/* Threads writing back at once: the flushers, a few per bdi. */
#define WINDOWS_MAX 256

struct _LmTracefsInodes
{
  GHashTable *by_key; /* key → Entry, owned */
  GQueue lru;
  guint max;
  GHashTable *windows; /* tid → key (owned) */
};

static void
entry_free (gpointer p)
{
  Entry *e = p;

  g_free (e->key);
  g_free (e);
}

LmTracefsInodes *
lm_tracefs_inodes_new (guint max_entries)
{
  LmTracefsInodes *t = g_new0 (LmTracefsInodes, 1);

  t->max = MAX (max_entries, 1);
  t->by_key = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, entry_free);
  g_queue_init (&t->lru);
  t->windows = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  return t;
}

void
lm_tracefs_inodes_free (LmTracefsInodes *t)
{
  if (t == NULL)
    return;
  g_hash_table_unref (t->by_key);
  g_hash_table_unref (t->windows);
  g_free (t);
}

guint
lm_tracefs_inodes_size (LmTracefsInodes *t)
{
  return g_hash_table_size (t->by_key);
}

static char *
make_key (const char *bdi, guint64 ino)
{
  return g_strdup_printf ("%s/%" G_GUINT64_FORMAT, bdi, ino);
}

static void
forget (LmTracefsInodes *t, Entry *e)
{
  g_queue_unlink (&t->lru, &e->link);
  g_hash_table_remove (t->by_key, e->key);
}

void
lm_tracefs_inodes_dirtied (LmTracefsInodes *t, const char *bdi, guint64 ino,
                           const LmAttribTask *task, gint64 usec)
{
  g_autofree char *key = NULL;
  Entry *e;

  if (task->kthread)
    return;
  key = make_key (bdi, ino);
  e = g_hash_table_lookup (t->by_key, key);
  if (e != NULL)
    {
      g_queue_unlink (&t->lru, &e->link);
      g_queue_push_head_link (&t->lru, &e->link);
    }
  else
    {
      while (g_hash_table_size (t->by_key) >= t->max)
        forget (t, g_queue_peek_tail (&t->lru));
      e = g_new0 (Entry, 1);
      e->key = g_steal_pointer (&key);
      e->link.data = e;
      g_hash_table_insert (t->by_key, e->key, e);
      g_queue_push_head_link (&t->lru, &e->link);
    }
  e->owner = *task;
  e->clean_us = 0;
}

void
lm_tracefs_inodes_wb_start (LmTracefsInodes *t, guint32 tid, const char *bdi, guint64 ino)
{
  if (g_hash_table_size (t->windows) >= WINDOWS_MAX
      && !g_hash_table_contains (t->windows, GUINT_TO_POINTER (tid)))
    g_hash_table_remove_all (t->windows);
  g_hash_table_replace (t->windows, GUINT_TO_POINTER (tid), make_key (bdi, ino));
}

void
lm_tracefs_inodes_wb_end (LmTracefsInodes *t, guint32 tid, const char *bdi, guint64 ino,
                          gboolean still_dirty, gint64 usec)
{
  g_autofree char *key = make_key (bdi, ino);
  Entry *e = g_hash_table_lookup (t->by_key, key);

  g_hash_table_remove (t->windows, GUINT_TO_POINTER (tid));
  if (e != NULL && !still_dirty && e->clean_us == 0)
    e->clean_us = usec;
}

gboolean
lm_tracefs_inodes_owner (LmTracefsInodes *t, guint32 tid, gint64 usec, LmAttribTask *owner,
                         guint64 *ino)
{
  const char *key = g_hash_table_lookup (t->windows, GUINT_TO_POINTER (tid));
  Entry *e = key != NULL ? g_hash_table_lookup (t->by_key, key) : NULL;

  if (e == NULL || (e->clean_us != 0 && usec > e->clean_us + LM_TRACEFS_CLEAN_GRACE_US))
    return FALSE;
  *owner = e->owner;
  *ino = g_ascii_strtoull (strrchr (e->key, '/') + 1, NULL, 10);
  return TRUE;
}
