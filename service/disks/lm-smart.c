/* lm-smart.c: reads the wear counters out of a SMART attribute page and
 * projects load cycles against a rating. Pure arithmetic over bytes. */
#include "lm-smart.h"

#include <string.h>

#include "lm-ata.h"
#include "lm-error.h"

/* ATA/ATAPI-8's SMART READ DATA layout (vendor-specific but universal):
 * a revision word, then 30 attribute entries of 12 bytes (id, flags,
 * current, worst, 6 raw bytes, reserved), checksum in the last byte. */
#define ATTR_OFFSET 2
#define ATTR_LEN 12
#define ATTR_COUNT 30
#define ATTR_RAW 5

gboolean
lm_smart_parse (const guint8 *data, gsize len, LmSmartWear *wear, GError **error)
{
  guint8 sum = 0;

  memset (wear, 0, sizeof *wear);
  if (len < LM_ATA_SMART_LEN)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL,
                   "SMART data is %zu bytes, not %d: the answer is incomplete", len,
                   LM_ATA_SMART_LEN);
      return FALSE;
    }
  for (gsize i = 0; i < LM_ATA_SMART_LEN; i++)
    sum += data[i];
  if (sum != 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL,
                   "SMART data checksum is wrong (sum 0x%02X): the page is not read", sum);
      return FALSE;
    }
  for (guint i = 0; i < ATTR_COUNT; i++)
    {
      const guint8 *a = data + ATTR_OFFSET + i * ATTR_LEN;
      guint32 raw = (guint32) a[ATTR_RAW] | (guint32) a[ATTR_RAW + 1] << 8
                    | (guint32) a[ATTR_RAW + 2] << 16 | (guint32) a[ATTR_RAW + 3] << 24;
      gboolean *have = NULL;
      guint32 *value = NULL;

      switch (a[0])
        {
          case LM_SMART_START_STOP:
            have = &wear->have_start_stop, value = &wear->start_stop;
            break;
          case LM_SMART_POWER_ON_HOURS:
            have = &wear->have_power_on_hours, value = &wear->power_on_hours;
            break;
          case LM_SMART_POWER_CYCLES:
            have = &wear->have_power_cycles, value = &wear->power_cycles;
            break;
          case LM_SMART_LOAD_CYCLES:
            have = &wear->have_load_cycles, value = &wear->load_cycles;
            break;
          default:
            continue;
        }
      /* The first entry with an id counts; a duplicate is ignored. */
      if (*have)
        continue;
      *have = TRUE;
      *value = raw;
    }
  return TRUE;
}

double
lm_smart_cycles_per_day (guint32 then_cycles, guint32 now_cycles, double days)
{
  /* A counter that went back (a reset, another drive): no rate. */
  if (!(days > 0) || now_cycles < then_cycles)
    return -1;
  return (now_cycles - then_cycles) / days;
}

double
lm_smart_days_to_rating (guint32 now_cycles, double per_day, guint32 rating)
{
  if (now_cycles >= rating)
    return 0;
  if (!(per_day > 0))
    return -1;
  return (rating - now_cycles) / per_day;
}
