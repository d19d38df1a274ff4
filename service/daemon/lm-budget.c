/* lm-budget.c: token buckets per caller, kept as (what was left, when):
 * the refill is worked out at the next look, so an idle daemon runs no
 * timer for them. Must never hold a key that has refilled for long. */
#include "config.h"

#include "lm-budget.h"

#include "lm-error.h"

/* Past this many keys, refilled ones are swept out at the next charge. */
#define SWEEP_AT 256

typedef struct
{
  double left;
  gint64 when_us;
} Bucket;

struct _LmBudget
{
  const char *whose, *what;
  double capacity;
  double per_us;       /* refill rate */
  GHashTable *buckets; /* key → Bucket; a key not in it has all of its budget */
};

LmBudget *
lm_budget_new (const char *whose, const char *what, guint capacity, guint refill_s)
{
  LmBudget *self = g_new0 (LmBudget, 1);

  self->whose = whose;
  self->what = what;
  self->capacity = capacity;
  self->per_us = (double) capacity / ((double) MAX (1u, refill_s) * G_USEC_PER_SEC);
  self->buckets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return self;
}

void
lm_budget_free (LmBudget *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->buckets);
  g_free (self);
}

static double
refilled (LmBudget *self, const Bucket *b, gint64 now_us)
{
  gint64 since = MAX (0, now_us - b->when_us);

  return MIN (self->capacity, b->left + (double) since * self->per_us);
}

double
lm_budget_left (LmBudget *self, const char *key, gint64 now_us)
{
  const Bucket *b = g_hash_table_lookup (self->buckets, key);

  return b == NULL ? self->capacity : refilled (self, b, now_us);
}

gboolean
lm_budget_check (LmBudget *self, const char *key, gint64 now_us, GError **error)
{
  double left = lm_budget_left (self, key, now_us);

  if (left >= self->capacity)
    {
      g_hash_table_remove (self->buckets, key);
      return TRUE;
    }
  if (left > 0)
    return TRUE;
  /* Whole seconds, rounded up: "try again in 0 s" would be wrong. */
  gint64 wait_s = (gint64) ((-left + 1) / self->per_us / G_USEC_PER_SEC) + 1;
  g_set_error (error, LM_ERROR, LM_ERROR_LIMIT_EXCEEDED,
               "%s used up by %s: %.0f every %.0f s; try again in %" G_GINT64_FORMAT " s",
               self->what, self->whose, self->capacity,
               self->capacity / self->per_us / G_USEC_PER_SEC, wait_s);
  return FALSE;
}

static void
sweep (LmBudget *self, gint64 now_us)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->buckets);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (refilled (self, value, now_us) >= self->capacity)
      g_hash_table_iter_remove (&iter);
}

void
lm_budget_charge (LmBudget *self, const char *key, guint cost, gint64 now_us)
{
  Bucket *b = g_hash_table_lookup (self->buckets, key);

  if (b == NULL)
    {
      if (g_hash_table_size (self->buckets) >= SWEEP_AT)
        sweep (self, now_us);
      b = g_new0 (Bucket, 1);
      b->left = self->capacity;
      b->when_us = now_us;
      g_hash_table_insert (self->buckets, g_strdup (key), b);
    }
  b->left = refilled (self, b, now_us) - cost;
  b->when_us = MAX (b->when_us, now_us);
}

guint
lm_budget_size (LmBudget *self)
{
  return g_hash_table_size (self->buckets);
}
