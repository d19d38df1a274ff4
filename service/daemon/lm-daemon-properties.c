/* lm-daemon-properties.c: what the org.laptopmode.LaptopMode1 object
 * publishes, from the daemon's state; never decides or changes anything. */
#include "config.h"

#include "lm-daemon-private.h"
#include "lm-disk-policy.h"
#include "lm-remount.h"

/* The skeleton coalesces these into one PropertiesChanged per idle. */
void
lm_daemon_sync_properties (LmDaemon *self)
{
  LmExportedLaptopMode *s = self->skeleton;

  lm_exported_laptop_mode_set_active (s, self->active);
  lm_exported_laptop_mode_set_mode (s, self->mode);
  lm_exported_laptop_mode_set_engine (s, lm_engine_to_string (self->engine));
  lm_exported_laptop_mode_set_tunables_backend (s, self->backend ? self->backend->name : "none");
  lm_exported_laptop_mode_set_max_lost_work (s, self->settings->max_lost_work);
  lm_exported_laptop_mode_set_laptop_mode_seconds (s, self->settings->laptop_mode_seconds);
  lm_exported_laptop_mode_set_dirty_ratio (s, self->settings->dirty_ratio);
  lm_exported_laptop_mode_set_dirty_background_ratio (s, self->settings->dirty_background_ratio);
  lm_exported_laptop_mode_set_remount (s, self->settings->remount);
  lm_exported_laptop_mode_set_remount_types (s,
                                             (const char *const *) self->settings->remount_types);
  lm_exported_laptop_mode_set_no_remount (s, (const char *const *) self->settings->no_remount);
  lm_exported_laptop_mode_set_remounted (s, lm_remount_list (self->state));
  lm_exported_laptop_mode_set_conflicts (s, lm_conflicts_to_variant (self->conflicts));
  lm_exported_laptop_mode_set_conflict_writers (s,
                                                lm_conflicts_writers_to_variant (self->conflicts));
  lm_exported_laptop_mode_set_reason (s, self->reason);
  lm_exported_laptop_mode_set_on_battery (s, self->power && lm_power_get_on_battery (self->power));
  lm_exported_laptop_mode_set_power_source (s, self->power ? lm_power_get_source (self->power)
                                                           : "sysfs");
  lm_exported_laptop_mode_set_low_battery_percent (s, self->settings->low_battery_percent);
  lm_exported_laptop_mode_set_inhibitors (
      s, self->inhibitors ? lm_inhibitors_to_variant (self->inhibitors)
                          : g_variant_new_array (G_VARIANT_TYPE ("(ssu)"), NULL, 0));
  lm_exported_laptop_mode_set_disk_settings (s,
                                             lm_disk_policies_to_variant (self->settings->disks));
  /* Every Configure key is a property of the same name (clients take its type from it). */
  lm_exported_laptop_mode_set_spin_up_idle (s, self->settings->spinup_idle);
  lm_exported_laptop_mode_set_spin_up_history (s, self->settings->spinup_history);
  lm_exported_laptop_mode_set_follow_power_profile (s, self->settings->follow_power_profile);
  lm_exported_laptop_mode_set_defer_maintenance (s, self->settings->defer_maintenance);
  lm_exported_laptop_mode_set_disk_recheck (s, self->settings->disk_recheck);
  lm_exported_laptop_mode_set_sata_link_policy (s, self->settings->sata_link_policy);
  lm_exported_laptop_mode_set_runtime_pm (s, self->settings->runtime_pm);
  lm_exported_laptop_mode_set_runtime_pmautosuspend_ms (s,
                                                        self->settings->runtime_pm_autosuspend_ms);
  lm_exported_laptop_mode_set_nvme_latency_tolerance_us (s, self->settings->nvme_latency_tolerance);
  /* What is published is what WaitAwake's callers go by. */
  lm_waiters_recheck (self->waiters);
}
