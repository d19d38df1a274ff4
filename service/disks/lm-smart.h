/* lm-smart.h: the wear counters of a SMART READ DATA page (attributes 4, 9,
 * 12, 193) and the load-cycle projection. Pure: never sends anything. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define LM_SMART_START_STOP 4
#define LM_SMART_POWER_ON_HOURS 9
#define LM_SMART_POWER_CYCLES 12
#define LM_SMART_LOAD_CYCLES 193

#define LM_SMART_DEFAULT_LOAD_CYCLE_RATING 300000
/* A disk that would reach its rating within this many days is reported. */
#define LM_SMART_WARN_DAYS (5 * 365)

/* Each counter is the low 32 bits of the attribute's raw value, where most
 * drives keep it (some pack vendor fields above: those are left out). */
typedef struct
{
  gboolean have_start_stop, have_power_on_hours, have_power_cycles, have_load_cycles;
  guint32 start_stop, power_on_hours, power_cycles, load_cycles;
} LmSmartWear;

/* @len is what the drive transferred; fewer than 512 bytes, or a page whose
 * bytes do not sum to 0 (its checksum), is refused. */
gboolean lm_smart_parse (const guint8 *data, gsize len, LmSmartWear *wear, GError **error);

/* Load cycles per day between two readings @days apart (> 0), and the days
 * from @now_cycles until @rating at that rate: -1 when the rate is 0 or
 * not known, 0 when the rating is reached already. */
double lm_smart_cycles_per_day (guint32 then_cycles, guint32 now_cycles, double days);
double lm_smart_days_to_rating (guint32 now_cycles, double per_day, guint32 rating);

G_END_DECLS
