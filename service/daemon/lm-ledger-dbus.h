/* lm-ledger-dbus.h: the ledger on D-Bus: GetLedger and the LedgerSummary
 * property. Owns nothing of the ledger itself; never writes it. */
#pragma once

#include "lm-generated.h"
#include "lm-ledger.h"

G_BEGIN_DECLS

typedef struct _LmLedgerDbus LmLedgerDbus;

/* Serves @ledger's members on @skeleton (neither owned) until freed; free
 * it before either. */
LmLedgerDbus *lm_ledger_dbus_new (LmLedger *ledger, LmExportedLaptopMode *skeleton);
void lm_ledger_dbus_free (LmLedgerDbus *dbus);
/* The table each spin-up record's Explanation comes from (not owned). */
typedef struct _LmAdvice LmAdvice;
void lm_ledger_dbus_set_advice (LmLedgerDbus *dbus, const LmAdvice *advice);
/* GetLedgerPage's arguments within their bounds (lm-limits.h) and a
 * cursor @ledger handed out; else LM_ERROR_INVALID_ARGS naming the bound.
 * Pure apart from reading the cursor's epoch: for the unit test. */
gboolean lm_ledger_dbus_check_page (LmLedger *ledger, const char *cursor, guint32 limit,
                                    GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmLedgerDbus, lm_ledger_dbus_free)

G_END_DECLS
