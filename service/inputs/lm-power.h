/* lm-power.h: where the power comes from: AC or battery, and whether the
 * battery is low. Owns watching UPower or sysfs; never decides the mode. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _LmPower LmPower;

/* Told when the source, AC/battery or the low-battery latch changed. */
typedef void (*LmPowerFunc) (LmPower *power, gpointer user_data);

LmPower *lm_power_new (GDBusConnection *bus, guint low_percent, LmPowerFunc func,
                       gpointer user_data);
gboolean lm_power_get_on_battery (LmPower *power);
gboolean lm_power_get_low_battery (LmPower *power);
const char *lm_power_get_source (LmPower *power);
void lm_power_set_low_percent (LmPower *power, guint low_percent);
void lm_power_free (LmPower *power);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmPower, lm_power_free)

typedef struct
{
  gboolean on_battery;
  gboolean battery_present;
  gint percentage; /* -1 when unknown */
} LmPowerSysfs;

void lm_power_read_sysfs (LmPowerSysfs *out);

G_END_DECLS
