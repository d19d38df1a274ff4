/* lm-sync.c: the Sync method's sync(2), one in flight, shared by every caller waiting.
 * Dozens of concurrent Sync calls cost at most two sync() calls in a row and one
 * thread, not a worker each from the pool that also carries the authorizations. */
#include "lm-io.h"
#include "lm-sync.h"

#include <unistd.h>

typedef struct
{
  LmSyncFunc func;
  gpointer user_data;
} Waiter;

/* Main context only; the thread touches none of it. */
static struct
{
  gboolean running;
  GArray *current; /* served by the sync() running now */
  GArray *next;    /* came while it ran: served by the next one */
  GMainContext *context;
  guint count;
  gint max_in_flight; /* atomic, as in_flight */
  gint in_flight;
} sync_state;

static void start (void);

static gboolean
finished (gpointer data)
{
  g_autoptr (GArray) served = sync_state.current;

  sync_state.current = NULL;
  sync_state.running = FALSE;
  sync_state.count++;
  if (sync_state.next != NULL && sync_state.next->len > 0)
    {
      sync_state.current = g_steal_pointer (&sync_state.next);
      start ();
    }
  for (guint i = 0; i < served->len; i++)
    {
      Waiter *w = &g_array_index (served, Waiter, i);
      w->func (w->user_data);
    }
  return G_SOURCE_REMOVE;
}

static gpointer
sync_thread (gpointer data)
{
  gint now = g_atomic_int_add (&sync_state.in_flight, 1) + 1;
  gint max = g_atomic_int_get (&sync_state.max_in_flight);

  while (now > max && !g_atomic_int_compare_and_exchange (&sync_state.max_in_flight, max, now))
    max = g_atomic_int_get (&sync_state.max_in_flight);
  lm_io_sync_all ();
  g_atomic_int_add (&sync_state.in_flight, -1);
  g_main_context_invoke (sync_state.context, finished, NULL);
  return NULL;
}

static void
start (void)
{
  g_autoptr (GError) error = NULL;
  GThread *thread;

  sync_state.running = TRUE;
  thread = g_thread_try_new ("lm-sync", sync_thread, NULL, &error);
  if (thread == NULL)
    {
      /* No thread to be had: sync here rather than not at all. */
      g_warning ("Cannot start a thread for sync(): %s; syncing on the main loop", error->message);
      lm_io_sync_all ();
      g_idle_add (finished, NULL);
      return;
    }
  g_thread_unref (thread);
}

void
lm_sync_request (LmSyncFunc func, gpointer user_data)
{
  Waiter w = { func, user_data };

  if (sync_state.context == NULL)
    sync_state.context = g_main_context_ref_thread_default ();
  if (sync_state.running)
    {
      if (sync_state.next == NULL)
        sync_state.next = g_array_new (FALSE, FALSE, sizeof (Waiter));
      g_array_append_val (sync_state.next, w);
      return;
    }
  sync_state.current = g_array_new (FALSE, FALSE, sizeof (Waiter));
  g_array_append_val (sync_state.current, w);
  start ();
}

guint
lm_sync_get_count (void)
{
  return sync_state.count;
}

guint
lm_sync_get_max_in_flight (void)
{
  return (guint) g_atomic_int_get (&sync_state.max_in_flight);
}
