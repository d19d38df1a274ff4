/* lm-ledger-nvme.c: LedgerSummary's NVMe keys: today's activity of an NVMe
 * disk walked through its APST table (from the Disks property), with laptop
 * mode and under the stock-writeback replay, and the energy that implies:
 * estimates, all of them, and named so. */
#include "config.h"

#include "lm-estimates.h"
#include "lm-ledger-private.h"
#include "lm-nvme-residency.h"
#include "lm-replay.h"

void
lm_ledger_nvme_note_run (LmLedger *self, DiskDay *d, const LmLedgerRecord *r)
{
  LmReplayRun run = { r->time_us, r->end_us, r->reads,  r->writes,
                      r->dirtied, r->fs,     r->spells, r->spells_known };

  if (r->kind != LM_LEDGER_ACTIVITY || r->end_us <= self->day_start_us)
    return;
  if (d->runs_today == NULL)
    d->runs_today = g_array_new (FALSE, FALSE, sizeof (LmReplayRun));
  /* Bounded by the ledger's own budget of activity records a day. */
  if (d->runs_today->len < 2 * LM_LEDGER_ACTIVITY_PER_DAY)
    g_array_append_val (d->runs_today, run);
}

/* [since_s, until_s) without the time the daemon was stopped before it
 * started and today's suspends: the spans the estimates walk, as pairs of
 * seconds. */
static GArray *
watched_spans (LmLedger *self, gint64 since_s, gint64 until_s)
{
  GArray *spans = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) gaps = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 from = since_s;

  if (self->stopped_from_us > 0 && self->stopped_from_us < self->start_us)
    {
      gint64 stopped[2] = { self->stopped_from_us, self->start_us };
      g_array_append_vals (gaps, stopped, 2);
    }
  g_array_append_vals (gaps, self->paused->data, self->paused->len);
  for (guint i = 0; i + 1 < gaps->len; i += 2)
    {
      gint64 a = g_array_index (gaps, gint64, i) / G_USEC_PER_SEC;
      gint64 b = (g_array_index (gaps, gint64, i + 1) + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC;
      if (b <= from || a >= until_s)
        continue;
      if (a > from)
        {
          gint64 span[2] = { from, a };
          g_array_append_vals (spans, span, 2);
        }
      from = MAX (from, b);
    }
  if (self->paused_since != 0)
    until_s = MIN (until_s, self->paused_since / G_USEC_PER_SEC);
  if (until_s > from)
    {
      gint64 span[2] = { from, until_s };
      g_array_append_vals (spans, span, 2);
    }
  return spans;
}

void
lm_ledger_nvme_summary (LmLedger *self, const char *disk, DiskDay *d, gint64 now_us, guint delay_s,
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
      LmReplayRun open = { d->open.time_us, d->open.end_us, d->open.reads,  d->open.writes,
                           d->open.dirtied, d->open.fs,     d->open.spells, d->open.spells_known };
      g_array_append_val (runs, open);
    }
  if (runs->len == 0)
    return;
  /* From midnight, or from when the ledger first saw the disk today; the
   * time the daemon was stopped is cut out below. */
  gint64 since_us = self->start_us;
  for (guint i = 0; i < runs->len; i++)
    since_us = MIN (since_us, g_array_index (runs, LmReplayRun, i).start_us);
  since_us = MAX (since_us, self->day_start_us);
  gint64 since_s = since_us / G_USEC_PER_SEC, until_s = now_us / G_USEC_PER_SEC;
  if (until_s <= since_s)
    return;
  g_autoptr (GArray) spans = watched_spans (self, since_s, until_s);
  g_autoptr (GArray) laptop_io = lm_replay_laptop_io ((LmReplayRun *) runs->data, runs->len,
                                                      since_us, now_us, max_lost, delay_s);
  g_autoptr (GArray) stock_io
      = lm_replay_stock_io ((LmReplayRun *) runs->data, runs->len, since_us, now_us);
  LmResidency laptop, stock;
  lm_residency_walk_spans (&table, (gint64 *) laptop_io->data, laptop_io->len,
                           (const gint64 *) spans->data, spans->len / 2, &laptop);
  lm_residency_walk_spans (&table, (gint64 *) stock_io->data, stock_io->len,
                           (const gint64 *) spans->data, spans->len / 2, &stock);
  if (laptop.window_s <= 0)
    return;
  double span = (double) laptop.window_s;
  double share = laptop.state_s[deep] / span, share_stock = stock.state_s[deep] / span;
  /* Every figure here is the replay's, walked through the APST table: an
   * estimate, named so. The unsuffixed keys stay for older clients. */
  g_variant_builder_add (e, "{sv}", LM_EST_DBUS_DEEP_SHARE, g_variant_new_double (share));
  g_variant_builder_add (e, "{sv}", LM_EST_DBUS_DEEP_SHARE_STOCK,
                         g_variant_new_double (share_stock));
  g_variant_builder_add (e, "{sv}", LM_EST_DBUS_ENERGY, g_variant_new_double (laptop.energy_wh));
  g_variant_builder_add (e, "{sv}", LM_EST_DBUS_ENERGY_STOCK,
                         g_variant_new_double (stock.energy_wh));
  g_variant_builder_add (e, "{sv}", "DeepIdleShareToday", g_variant_new_double (share));
  g_variant_builder_add (e, "{sv}", "DeepIdleShareStockToday", g_variant_new_double (share_stock));
  g_variant_builder_add (e, "{sv}", "EnergyWhToday", g_variant_new_double (laptop.energy_wh));
  g_variant_builder_add (e, "{sv}", "EnergyWhStockToday", g_variant_new_double (stock.energy_wh));
  g_variant_builder_add (e, "{sv}", "EstimatedSeconds", g_variant_new_int64 (laptop.window_s));
  g_variant_builder_add (e, "{sv}", "EnergySource",
                         g_variant_new_string (lm_residency_energy_source (&laptop)));
  /* What the stock replay had to assume (an older record, a filesystem it
   * has no model of): said beside the figures, not hidden in them. */
  const char *unsure
      = lm_replay_unsure_to_string (lm_replay_unsure ((LmReplayRun *) runs->data, runs->len));
  if (unsure != NULL)
    g_variant_builder_add (e, "{sv}", "EstimateUnsure", g_variant_new_string (unsure));
}
