/* lm-disk-smart.c: reads a spinning disk's wear counters (SMART 4, 9, 12,
 * 193) right after it was seen busy, never from standby: CHECK POWER MODE
 * first, which never wakes it. Changes nothing on the disk; a disk that
 * parks so often it would reach its rated load cycles within five years is
 * logged once and flagged in Disks, with what would help. */
#include "config.h"

#include "lm-disk-smart.h"

#include "lm-error.h"
#include "lm-sgio.h"

struct _LmDiskSmart
{
  gint64 last_mono; /* the last read tried, 0: never */
  gboolean have;
  LmSmartWear wear;
  gint64 read_real;
  guint rating;
  double per_day;   /* load cycles a day over the ledger's span, -1 unknown */
  double days_left; /* to the rating at that rate, -1 unknown */
  gint64 span_s;    /* the span the rate is over */
  gboolean warned;  /* logged once */
  char *error;
};

gboolean
lm_disk_smart_due (gint64 last_mono, gint64 now_mono)
{
  return last_mono == 0
         || now_mono - last_mono >= (gint64) LM_DISK_SMART_INTERVAL_S * G_USEC_PER_SEC;
}

LmDiskSmart *
lm_disk_smart_new (void)
{
  LmDiskSmart *s = g_new0 (LmDiskSmart, 1);

  s->per_day = s->days_left = -1;
  return s;
}

void
lm_disk_smart_free (LmDiskSmart *s)
{
  if (s == NULL)
    return;
  g_free (s->error);
  g_free (s);
}

static gboolean
set_error (LmDiskSmart *s, const char *message)
{
  if (g_strcmp0 (s->error, message) == 0)
    return FALSE;
  g_free (s->error);
  s->error = g_strdup (message);
  return TRUE;
}

/* Only an awake disk is read: CHECK POWER MODE and SMART READ DATA in one
 * step (lm_sgio_command_awake); TRUE with @wear filled when it was.
 * @took_us: how long the read took once sent (0: not sent). */
static gboolean
read_awake (const char *name, const char *path, LmSmartWear *wear, gboolean *asleep,
            gint64 *took_us, GError **error)
{
  g_autoptr (LmSgio) dev = lm_sgio_open (path, error);
  guint8 page[LM_ATA_SMART_LEN];
  LmAtaPower power = LM_ATA_POWER_UNKNOWN;
  g_autoptr (GError) local_error = NULL;

  *took_us = 0;
  if (dev == NULL)
    return FALSE;
  if (!lm_sgio_read_smart (dev, page, &power, took_us, &local_error))
    {
      *asleep = g_error_matches (local_error, LM_ERROR, LM_ERROR_BUSY);
      if (*asleep)
        {
          g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                       "%s is %s: SMART is read only while it is awake", name,
                       lm_ata_power_to_string (power));
          return FALSE;
        }
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return lm_smart_parse (page, sizeof page, wear, error);
}

static void
project (LmDiskSmart *s, const char *name, gint64 first_us, guint32 first_cycles)
{
  gint64 span_us = s->read_real - first_us;

  s->span_s = span_us / G_USEC_PER_SEC;
  /* Less than a day apart says little about a daily rate. */
  if (span_us < (gint64) 24 * 3600 * G_USEC_PER_SEC)
    return;
  s->per_day = lm_smart_cycles_per_day (first_cycles, s->wear.load_cycles,
                                        (double) span_us / (24.0 * 3600 * G_USEC_PER_SEC));
  s->days_left = lm_smart_days_to_rating (s->wear.load_cycles, s->per_day, s->rating);
  if (s->warned || s->days_left < 0 || s->days_left >= LM_SMART_WARN_DAYS)
    return;
  s->warned = TRUE;
  g_warning ("Disk %s parks its heads %.0f times a day (SMART 193, over %.1f days): at this rate "
             "it reaches its rating of %u load cycles in %.0f days. A higher APM level "
             "(DiskSettings APM, e.g. 254) or a longer idle timer in the drive's firmware "
             "parks it less; laptop-moded changes nothing by itself",
             name, s->per_day, span_us / (24.0 * 3600 * G_USEC_PER_SEC), s->rating, s->days_left);
}

gboolean
lm_disk_smart_io_seen (LmDiskSmart *s, const char *name, const char *path, guint rating,
                       LmDisksWearFunc func, gpointer user_data, gint64 *woke_us)
{
  g_autoptr (GError) error = NULL;
  gint64 now = g_get_monotonic_time ();
  gint64 before = s->last_mono;
  gboolean asleep = FALSE;
  gint64 took_us = 0;
  LmSmartWear wear;

  *woke_us = 0;
  if (!lm_disk_smart_due (s->last_mono, now))
    return FALSE;
  s->last_mono = now;
  gboolean read = read_awake (name, path, &wear, &asleep, &took_us, &error);
  /* It said active a moment before, yet took as long as a spin-up: it
   * went to standby in between and this read woke it. */
  if (took_us > 0 && lm_ata_command_woke (LM_ATA_POWER_ACTIVE, took_us))
    *woke_us = took_us;
  if (!read)
    {
      g_debug ("Disk %s: no SMART read: %s", name, error->message);
      /* Not awake after all: the next I/O may ask again. */
      if (asleep)
        s->last_mono = before;
      /* A drive without SMART, or asleep: not an error to show. */
      return !g_error_matches (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED)
             && set_error (s, error->message);
    }
  set_error (s, NULL);
  s->have = TRUE;
  s->wear = wear;
  s->read_real = g_get_real_time ();
  s->rating = rating;
  s->per_day = s->days_left = -1;
  gint64 first_us = 0;
  guint32 first_cycles = 0;
  if (wear.have_load_cycles && func != NULL
      && func (name, &wear, s->read_real, &first_us, &first_cycles, user_data))
    project (s, name, first_us, first_cycles);
  return TRUE;
}

void
lm_disk_smart_add_props (LmDiskSmart *s, GVariantBuilder *b)
{
  if (s->error != NULL)
    g_variant_builder_add (b, "{sv}", "SmartError", g_variant_new_string (s->error));
  if (!s->have)
    return;
  g_variant_builder_add (b, "{sv}", "SmartRead", g_variant_new_int64 (s->read_real));
  if (s->wear.have_load_cycles)
    g_variant_builder_add (b, "{sv}", "LoadCycles", g_variant_new_uint32 (s->wear.load_cycles));
  if (s->wear.have_start_stop)
    g_variant_builder_add (b, "{sv}", "StartStopCount", g_variant_new_uint32 (s->wear.start_stop));
  if (s->wear.have_power_cycles)
    g_variant_builder_add (b, "{sv}", "PowerCycles", g_variant_new_uint32 (s->wear.power_cycles));
  if (s->wear.have_power_on_hours)
    g_variant_builder_add (b, "{sv}", "PowerOnHours",
                           g_variant_new_uint32 (s->wear.power_on_hours));
  if (!s->wear.have_load_cycles)
    return;
  g_variant_builder_add (b, "{sv}", "LoadCycleRating", g_variant_new_uint32 (s->rating));
  if (s->per_day < 0)
    return;
  g_variant_builder_add (b, "{sv}", "LoadCyclesPerDay", g_variant_new_double (s->per_day));
  g_variant_builder_add (b, "{sv}", "LoadCycleSpanSeconds", g_variant_new_int64 (s->span_s));
  if (s->days_left >= 0)
    g_variant_builder_add (b, "{sv}", "LoadCycleDaysLeft", g_variant_new_double (s->days_left));
  g_variant_builder_add (
      b, "{sv}", "LoadCycleWarning",
      g_variant_new_boolean (s->days_left >= 0 && s->days_left < LM_SMART_WARN_DAYS));
}
