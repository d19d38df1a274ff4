/* lm-budget.h: a cost budget per key (a caller's unique name, a uid),
 * refilled evenly over time and worked out when asked: never a timer. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _LmBudget LmBudget;

/* @capacity units per key, refilled over @refill_s seconds; @whose names
 * the key in errors ("this connection", "this user"), @what the budget
 * ("GetLedger's budget of records"). Both are static strings. */
LmBudget *lm_budget_new (const char *whose, const char *what, guint capacity, guint refill_s);
void lm_budget_free (LmBudget *budget);

/* Whether @key has some budget left at @now_us (monotonic time); if not,
 * LM_ERROR_LIMIT_EXCEEDED says whose, the bound, and when to try again. */
gboolean lm_budget_check (LmBudget *budget, const char *key, gint64 now_us, GError **error);
/* Takes @cost from @key (it may go below zero: the next call then waits
 * until it has been paid back). */
void lm_budget_charge (LmBudget *budget, const char *key, guint cost, gint64 now_us);
/* What @key has left at @now_us (for tests). */
double lm_budget_left (LmBudget *budget, const char *key, gint64 now_us);
/* Keys tracked: only those not refilled yet. */
guint lm_budget_size (LmBudget *budget);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmBudget, lm_budget_free)

G_END_DECLS
