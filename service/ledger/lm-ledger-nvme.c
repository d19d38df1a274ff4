/* lm-ledger-nvme.c: LedgerSummary's NVMe keys: today's activity of an NVMe
 * disk walked through its APST table (from the Disks property), with laptop
 * mode and under the stock-writeback replay, and the energy that implies. */
#include "config.h"

#include "lm-ledger-private.h"
#include "lm-nvme-residency.h"
#include "lm-replay.h"

void
lm_ledger_nvme_note_run (LmLedger *self, DiskDay *d, const LmLedgerRecord *r)
{
  LmReplayRun run = { r->time_us, r->end_us, r->reads, r->writes, r->dirtied };

  if (r->kind != LM_LEDGER_ACTIVITY || r->end_us <= self->day_start_us)
    return;
  if (d->runs_today == NULL)
    d->runs_today = g_array_new (FALSE, FALSE, sizeof (LmReplayRun));
  /* Bounded by the ledger's own budget of activity records a day. */
  if (d->runs_today->len < 2 * LM_LEDGER_ACTIVITY_PER_DAY)
    g_array_append_val (d->runs_today, run);
}

void
lm_ledger_nvme_summary (LmLedger *self, const char *disk, DiskDay *d, gint64 now_us,
                        GVariant *disks, guint max_lost, GVariantBuilder *e)
{
  g_autoptr (GVariant) info = NULL;
  LmResidencyTable table;

  if (disks == NULL || (info = g_variant_lookup_value (disks, disk, G_VARIANT_TYPE_VARDICT)) == NULL
      || !lm_residency_table_from_disk (info, &table))
    return;
  guint deep = lm_residency_deepest (&table);
  g_variant_builder_add (e, "{sv}", "Apst",
                         g_variant_new_string (lm_apst_mode_to_string (table.apst)));
  g_variant_builder_add (e, "{sv}", "DeepestState", g_variant_new_uint32 (deep));

  g_autoptr (GArray) runs = g_array_new (FALSE, FALSE, sizeof (LmReplayRun));
  if (d->runs_today != NULL)
    g_array_append_vals (runs, d->runs_today->data, d->runs_today->len);
  if (d->has_open)
    {
      LmReplayRun open
          = { d->open.time_us, d->open.end_us, d->open.reads, d->open.writes, d->open.dirtied };
      g_array_append_val (runs, open);
    }
  if (runs->len == 0)
    return;
  /* From midnight, or from when the ledger first saw the disk today. */
  gint64 since_us = self->start_us;
  for (guint i = 0; i < runs->len; i++)
    since_us = MIN (since_us, g_array_index (runs, LmReplayRun, i).start_us);
  since_us = MAX (since_us, self->day_start_us);
  gint64 since_s = since_us / G_USEC_PER_SEC, until_s = now_us / G_USEC_PER_SEC;
  if (until_s <= since_s)
    return;
  g_autoptr (GArray) laptop_io
      = lm_replay_laptop_io ((LmReplayRun *) runs->data, runs->len, since_us, now_us, max_lost);
  g_autoptr (GArray) stock_io
      = lm_replay_stock_io ((LmReplayRun *) runs->data, runs->len, since_us, now_us);
  LmResidency laptop, stock;
  lm_residency_walk (&table, (gint64 *) laptop_io->data, laptop_io->len, since_s, until_s, &laptop);
  lm_residency_walk (&table, (gint64 *) stock_io->data, stock_io->len, since_s, until_s, &stock);
  double span = (double) (until_s - since_s);
  g_variant_builder_add (e, "{sv}", "DeepIdleShareToday",
                         g_variant_new_double (laptop.state_s[deep] / span));
  g_variant_builder_add (e, "{sv}", "DeepIdleShareStockToday",
                         g_variant_new_double (stock.state_s[deep] / span));
  g_variant_builder_add (e, "{sv}", "EnergyWhToday", g_variant_new_double (laptop.energy_wh));
  g_variant_builder_add (e, "{sv}", "EnergyWhStockToday", g_variant_new_double (stock.energy_wh));
  g_variant_builder_add (e, "{sv}", "EnergySource",
                         g_variant_new_string (lm_residency_energy_source (&laptop)));
}
