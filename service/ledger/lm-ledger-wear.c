/* lm-ledger-wear.c: a spinning disk's SMART wear counters in the ledger,
 * one record per disk and local day, and the oldest one still held, which
 * the load-cycle rate is measured from. */
#include "config.h"

#include "lm-ledger-private.h"

void
lm_ledger_count_wear (LmLedger *self, DiskDay *d, const LmLedgerRecord *r)
{
  if (r->load_cycles != LM_LEDGER_NO_WEAR && (!d->has_first_wear || r->time_us < d->first_wear_us))
    {
      d->has_first_wear = TRUE;
      d->first_wear_us = r->time_us;
      d->first_load_cycles = r->load_cycles;
    }
  d->wear_day = MAX (d->wear_day, lm_ledger_local_midnight_us (r->time_us));
}

gboolean
lm_ledger_note_wear (const char *disk, const LmSmartWear *w, gint64 now_us, gint64 *first_us,
                     guint32 *first_load_cycles, gpointer user_data)
{
  LmLedger *self = user_data;
  DiskDay *d = lm_ledger_day_of (self, disk);

  if (d->wear_day != lm_ledger_local_midnight_us (now_us))
    {
      LmLedgerRecord r = {
        .kind = LM_LEDGER_WEAR,
        .time_us = now_us,
        .end_us = now_us,
        .uid = -1,
        .load_cycles = w->have_load_cycles ? w->load_cycles : LM_LEDGER_NO_WEAR,
        .start_stop = w->have_start_stop ? w->start_stop : LM_LEDGER_NO_WEAR,
        .power_cycles = w->have_power_cycles ? w->power_cycles : LM_LEDGER_NO_WEAR,
        .power_on_hours = w->have_power_on_hours ? w->power_on_hours : LM_LEDGER_NO_WEAR,
      };
      g_strlcpy (r.disk, disk, sizeof r.disk);
      lm_ledger_append (self, &r);
    }
  if (!d->has_first_wear || d->first_wear_us >= now_us)
    return FALSE;
  *first_us = d->first_wear_us;
  *first_load_cycles = d->first_load_cycles;
  return TRUE;
}
