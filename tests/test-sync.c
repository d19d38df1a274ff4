/* test-sync.c: the Sync method's sync(2): one in flight, callers share it.
 * Callers that came while one ran are served by the next, never by the one under way. */
#include "lm-sync.h"

typedef struct
{
  guint done;
  guint seen_count; /* lm_sync_get_count() when the callback ran */
} Caller;

static void
on_synced (gpointer user_data)
{
  Caller *c = user_data;

  c->done++;
  c->seen_count = lm_sync_get_count ();
}

static void
wait_for (Caller *callers, guint n)
{
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  for (;;)
    {
      guint done = 0;
      for (guint i = 0; i < n; i++)
        done += callers[i].done;
      if (done == n)
        return;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, TRUE);
    }
}

static void
test_one_in_flight (void)
{
  Caller first[1] = { 0 };
  Caller later[64] = { 0 };
  guint before = lm_sync_get_count ();

  /* The first starts a sync(); 64 more come while it runs. */
  lm_sync_request (on_synced, &first[0]);
  for (guint i = 0; i < G_N_ELEMENTS (later); i++)
    lm_sync_request (on_synced, &later[i]);
  wait_for (first, 1);
  wait_for (later, G_N_ELEMENTS (later));

  g_assert_cmpuint (first[0].done, ==, 1);
  g_assert_cmpuint (first[0].seen_count, ==, before + 1);
  for (guint i = 0; i < G_N_ELEMENTS (later); i++)
    {
      g_assert_cmpuint (later[i].done, ==, 1);
      /* Served by a sync() that began after their call. */
      g_assert_cmpuint (later[i].seen_count, ==, before + 2);
    }
  g_assert_cmpuint (lm_sync_get_count (), ==, before + 2);
  g_assert_cmpuint (lm_sync_get_max_in_flight (), ==, 1);

  /* Idle again: the next caller starts one of its own. */
  Caller again[1] = { 0 };
  lm_sync_request (on_synced, &again[0]);
  wait_for (again, 1);
  g_assert_cmpuint (lm_sync_get_count (), ==, before + 3);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sync/one-in-flight", test_one_in_flight);
  return g_test_run ();
}
