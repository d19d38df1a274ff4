/* lm-ledger-dbus.c: the ledger's D-Bus members: GetLedger (records as the
 * caller may see them, lm_auth_redact) and the LedgerSummary property,
 * published whenever the ledger says it changed. Never touches the file. */
#include "config.h"

#include "lm-ledger-dbus.h"

#include "lm-auth.h"

struct _LmLedgerDbus
{
  LmLedger *ledger;               /* not owned */
  LmExportedLaptopMode *skeleton; /* not owned */
  gulong handler;
};

/* The NVMe keys are walked through the APST table the Disks property
 * shows, with the MaxLostWork in force. */
static void
publish (gpointer user_data)
{
  LmLedgerDbus *self = user_data;
  GVariant *disks = lm_exported_laptop_mode_get_disks (self->skeleton);
  guint max_lost = lm_exported_laptop_mode_get_max_lost_work (self->skeleton);

  lm_exported_laptop_mode_set_ledger_summary (self->skeleton,
                                              lm_ledger_summary (self->ledger, disks, max_lost));
}

static void
get_ledger_allowed (GDBusMethodInvocation *invocation, const LmAuthViewer *caller,
                    gpointer user_data)
{
  LmLedgerDbus *self = user_data;
  guint64 since, until;

  g_variant_get (g_dbus_method_invocation_get_parameters (invocation), "(tt)", &since, &until);
  g_autoptr (GVariant) all = g_variant_ref_sink (
      lm_ledger_query (self->ledger, (gint64) MIN (since, (guint64) G_MAXINT64),
                       (gint64) MIN (until, (guint64) G_MAXINT64), LM_LEDGER_MAX_QUERY));
  /* Another user's spin-ups without their process, unless monitor-all. */
  GVariant *records = lm_auth_redact_list (all, caller);
  g_dbus_method_invocation_return_value (invocation, g_variant_new_tuple (&records, 1));
  g_variant_unref (records);
}

static gboolean
handle_get_ledger (LmExportedLaptopMode *skeleton, GDBusMethodInvocation *invocation, guint64 since,
                   guint64 until, LmLedgerDbus *self)
{
  lm_auth_check (invocation, get_ledger_allowed, self, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

LmLedgerDbus *
lm_ledger_dbus_new (LmLedger *ledger, LmExportedLaptopMode *skeleton)
{
  LmLedgerDbus *self = g_new0 (LmLedgerDbus, 1);

  self->ledger = ledger;
  self->skeleton = skeleton;
  self->handler
      = g_signal_connect (skeleton, "handle-get-ledger", G_CALLBACK (handle_get_ledger), self);
  lm_ledger_set_changed_func (ledger, publish, self);
  publish (self);
  return self;
}

void
lm_ledger_dbus_free (LmLedgerDbus *self)
{
  if (self == NULL)
    return;
  lm_ledger_set_changed_func (self->ledger, NULL, NULL);
  g_signal_handler_disconnect (self->skeleton, self->handler);
  g_free (self);
}
