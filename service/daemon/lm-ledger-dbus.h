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

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmLedgerDbus, lm_ledger_dbus_free)

G_END_DECLS
