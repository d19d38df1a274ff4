/* lm-ledger-dbus.c: the ledger's D-Bus members: GetLedger and GetLedgerPage
 * (records as the caller may see them, lm_auth_redact, a page at a time,
 * within each caller's budget) and the LedgerSummary property, published
 * whenever the ledger says it changed. Never touches the file. */
#define _GNU_SOURCE
#include "config.h"

#include "lm-ledger-dbus.h"

#include "lm-advice.h"

#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lm-auth.h"
#include "lm-budget.h"
#include "lm-error.h"
#include "lm-ledger-index.h"
#include "lm-limits.h"

G_STATIC_ASSERT (LM_LIMIT_CURSOR == LM_LEDGER_CURSOR_MAX);

struct _LmLedgerDbus
{
  LmLedger *ledger;               /* not owned */
  LmExportedLaptopMode *skeleton; /* not owned */
  gulong handlers[2];
  LmBudget *per_sender, *per_uid;
  /* One thread turns pages into their answers: the main loop only finds
   * and copies a page's bytes, so a property read never waits behind the
   * building of a thousand records. */
  GThreadPool *answers;
  const LmAdvice *advice; /* not owned */
};

/* A page on its way to its caller, off the main loop. */
typedef struct
{
  GDBusMethodInvocation *invocation; /* the reference its answer consumes */
  GBytes *records;
  const LmAdvice *advice; /* read only, from this thread too: never changed once loaded */
  char *next;             /* NULL: GetLedger, which has no cursor */
  LmAuthViewer viewer;
} Answer;

/* The pool's thread (exclusive) builds a page at nice 10, yielding the
 * CPU to the main loop and the bus's worker, which answer everyone else;
 * it sends at the main loop's priority, since GDBus serializes a message
 * under the connection's lock (a page: about 8 ms of CPU), which every
 * other answer waits for: sent at nice 10 on a busy machine, a property
 * read waited behind a page for 150 ms. */
static void
set_nice (int nice)
{
  setpriority (PRIO_PROCESS, (id_t) gettid (), nice);
}

/* Each spin-up with its Explanation where the table knows its cause; a
 * record alone has no rhythm, so none is said. */
static GVariant *
explain_records (GVariant *records, const LmAdvice *advice)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));
  GVariantIter iter;
  GVariant *rec;

  if (advice == NULL)
    return g_variant_ref (records);
  g_variant_iter_init (&iter, records);
  while ((rec = g_variant_iter_next_value (&iter)) != NULL)
    {
      const char *kind = NULL;
      g_autofree char *what
          = g_variant_lookup (rec, "Kind", "&s", &kind) && g_str_equal (kind, "spinup")
                ? lm_advice_explain (advice, rec, NULL)
                : NULL;
      g_autoptr (GVariant) out
          = what != NULL ? lm_advice_variant_with (rec, "Explanation", what) : g_variant_ref (rec);
      g_variant_builder_add_value (&b, out);
      g_variant_unref (rec);
    }
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static void
answer (gpointer data, gpointer user_data)
{
  Answer *a = data;

  set_nice (10);
  g_autoptr (GVariant) bare = lm_ledger_records_to_variant (a->records);
  g_autoptr (GVariant) all = explain_records (bare, a->advice);
  /* Another user's spin-ups without their process, unless monitor-all. */
  g_autoptr (GVariant) records = lm_auth_redact_list (all, &a->viewer);
  g_autoptr (GDBusConnection) connection
      = g_object_ref (g_dbus_method_invocation_get_connection (a->invocation));

  set_nice (0);
  if (a->next != NULL)
    g_dbus_method_invocation_return_value (a->invocation,
                                           g_variant_new ("(@aa{sv}s)", records, a->next));
  else
    g_dbus_method_invocation_return_value (a->invocation, g_variant_new ("(@aa{sv})", records));
  /* Written out before the next page is built: a connection's messages
   * leave in order, and a property's answer queued behind several pages
   * of a thousand records each waited for all of them. */
  g_dbus_connection_flush_sync (connection, NULL, NULL);
  g_bytes_unref (a->records);
  g_free (a->next);
  g_free (a);
}

/* The NVMe keys are walked through the APST table the Disks property
 * shows, with the MaxLostWork and LaptopModeSeconds in force. */
static void
publish (gpointer user_data)
{
  LmLedgerDbus *self = user_data;
  GVariant *disks = lm_exported_laptop_mode_get_disks (self->skeleton);
  guint max_lost = lm_exported_laptop_mode_get_max_lost_work (self->skeleton);
  guint delay = lm_exported_laptop_mode_get_laptop_mode_seconds (self->skeleton);

  lm_exported_laptop_mode_set_ledger_summary (
      self->skeleton, lm_ledger_summary (self->ledger, disks, max_lost, delay));
}

/* --- the budget ------------------------------------------------------------ */

static gboolean
within_budget (LmLedgerDbus *self, const char *sender, guint32 uid, GError **error)
{
  gint64 now = g_get_monotonic_time ();
  char key[16];

  g_snprintf (key, sizeof key, "%u", uid);
  return lm_budget_check (self->per_sender, sender, now, error)
         && lm_budget_check (self->per_uid, key, now, error);
}

static gboolean
admit (const char *sender, guint32 uid, gpointer user_data, GError **error)
{
  return within_budget (user_data, sender, uid, error);
}

static void
charge (LmLedgerDbus *self, const char *sender, guint32 uid, guint records)
{
  gint64 now = g_get_monotonic_time ();
  char key[16];

  g_snprintf (key, sizeof key, "%u", uid);
  lm_budget_charge (self->per_sender, sender, LM_LIMIT_LEDGER_CALL_COST + records, now);
  lm_budget_charge (self->per_uid, key, LM_LIMIT_LEDGER_CALL_COST + records, now);
}

/* --- the methods ----------------------------------------------------------- */

static void
get_ledger_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller,
                    gpointer user_data)
{
  LmLedgerDbus *self = user_data;
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  gboolean paged
      = g_str_equal (g_dbus_method_invocation_get_method_name (invocation), "GetLedgerPage");
  GVariant *params = g_dbus_method_invocation_get_parameters (invocation);
  g_autoptr (GError) error = NULL;
  g_autofree char *next = NULL;
  guint64 since, until;
  const char *cursor = "";
  guint32 limit = LM_LIMIT_LEDGER_ANSWER;

  if (paged)
    g_variant_get (params, "(tt&su)", &since, &until, &cursor, &limit);
  else
    g_variant_get (params, "(tt)", &since, &until);
  /* At most a page's worth, asked more or not: the next cursor goes on. */
  limit = MIN (limit, LM_LIMIT_LEDGER_ANSWER);
  /* Other calls of this caller may have used the budget while polkit
   * thought about this one. */
  if (!within_budget (self, sender, caller->uid, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return;
    }
  guint count = 0;
  GBytes *page = lm_ledger_page (self->ledger, (gint64) MIN (since, (guint64) G_MAXINT64),
                                 (gint64) MIN (until, (guint64) G_MAXINT64), cursor, limit, &next,
                                 &count, &error);
  if (page == NULL)
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return;
    }
  charge (self, sender, caller->uid, count);
  Answer *a = g_new0 (Answer, 1);
  /* Handed on with the reference an answer consumes: the thread answers. */
  a->invocation = invocation;
  a->records = page;
  a->next = paged ? g_steal_pointer (&next) : NULL;
  a->viewer = *caller;
  a->advice = self->advice;
  g_thread_pool_push (self->answers, a, NULL);
}

/* Before polkit is asked: the caller's connection must have budget left
 * (its user's is asked once the bus has said who it is). */
static gboolean
start_check (LmLedgerDbus *self, GDBusMethodInvocation *invocation)
{
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autoptr (GError) error = NULL;

  if (sender != NULL
      && !lm_budget_check (self->per_sender, sender, g_get_monotonic_time (), &error))
    {
      g_debug ("Refused %s to %s: %s", g_dbus_method_invocation_get_method_name (invocation),
               sender, error->message);
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  lm_auth_check_admit (invocation, admit, get_ledger_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_ledger (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, guint64 since,
                   guint64 until, LmLedgerDbus *self)
{
  return start_check (self, invocation);
}

/* The bounds by size first, then the cursor's form: no other work. */
gboolean
lm_ledger_dbus_check_page (LmLedger *ledger, const char *cursor, guint32 limit, GError **error)
{
  if (strnlen (cursor, LM_LIMIT_CURSOR + 1) > LM_LIMIT_CURSOR)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "cursor: at most %d bytes (the cursor a page returned, or \"\" to start)",
                   LM_LIMIT_CURSOR);
      return FALSE;
    }
  if (limit < 1 || limit > LM_LIMIT_LEDGER_PAGE)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS, "limit: 1 to %d records, not %u",
                   LM_LIMIT_LEDGER_PAGE, limit);
      return FALSE;
    }
  return lm_ledger_check_cursor (ledger, cursor, error);
}

static gboolean
handle_get_ledger_page (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation,
                        guint64 since, guint64 until, const char *cursor, guint limit,
                        LmLedgerDbus *self)
{
  g_autoptr (GError) error = NULL;

  if (!lm_ledger_dbus_check_page (self->ledger, cursor, limit, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  return start_check (self, invocation);
}

/* --- life cycle ------------------------------------------------------------ */

LmLedgerDbus *
lm_ledger_dbus_new (LmLedger *ledger, LmExportedLaptopMode *skeleton)
{
  LmLedgerDbus *self = g_new0 (LmLedgerDbus, 1);

  self->ledger = ledger;
  self->skeleton = skeleton;
  self->per_sender = lm_budget_new ("this connection", "GetLedger's budget of records",
                                    LM_LIMIT_LEDGER_BUDGET_SENDER, LM_LIMIT_LEDGER_REFILL_S);
  self->per_uid = lm_budget_new ("this user", "GetLedger's budget of records",
                                 LM_LIMIT_LEDGER_BUDGET_UID, LM_LIMIT_LEDGER_REFILL_S);
  self->answers = g_thread_pool_new (answer, NULL, 1, TRUE, NULL);
  self->handlers[0]
      = g_signal_connect (skeleton, "handle-get-ledger", G_CALLBACK (handle_get_ledger), self);
  self->handlers[1] = g_signal_connect (skeleton, "handle-get-ledger-page",
                                        G_CALLBACK (handle_get_ledger_page), self);
  lm_ledger_set_changed_func (ledger, publish, self);
  publish (self);
  return self;
}

void
lm_ledger_dbus_set_advice (LmLedgerDbus *self, const LmAdvice *advice)
{
  self->advice = advice;
}

void
lm_ledger_dbus_free (LmLedgerDbus *self)
{
  if (self == NULL)
    return;
  lm_ledger_set_changed_func (self->ledger, NULL, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (self->handlers); i++)
    g_signal_handler_disconnect (self->skeleton, self->handlers[i]);
  /* Pages on their way are answered first. */
  g_thread_pool_free (self->answers, FALSE, TRUE);
  lm_budget_free (self->per_sender);
  lm_budget_free (self->per_uid);
  g_free (self);
}
