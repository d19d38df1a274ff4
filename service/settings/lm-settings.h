/* lm-settings.h: the user's settings, their defaults, ranges and validation.
 * Owns the one table of setting keys used by Configure() and the config file;
 * never applies anything to the system. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define LM_SETTINGS_GROUP "LaptopMode"

typedef struct
{
  char *mode;   /* "off", "on", "auto": the mode at start-up */
  char *engine; /* "auto", "kernel", "userspace" */
  guint max_lost_work;
  guint laptop_mode_seconds;
  guint dirty_ratio;
  guint dirty_background_ratio;
  guint low_battery_percent; /* sysfs only: UPower has its own levels */
  gboolean remount;          /* remount journaled filesystems with commit= */
  char **remount_types;      /* filesystem types to remount */
  char **no_remount;         /* mount points never to remount */
  char *attribution;         /* "auto", "bpf", "tracefs", "block_dump", "none" */
  guint spinup_idle;         /* seconds without I/O after which a disk counts as asleep */
  gboolean spinup_history;   /* monitor spin-ups even with no subscriber */
  guint disk_recheck; /* seconds between looks at a sleeping disk without attribution; 0: auto */
  gboolean follow_power_profile; /* mode auto: on while the profile is power-saver */
  gboolean defer_maintenance;    /* WaitAwake waits; FALSE: it returns at once */
  GHashTable *disks;      /* [Disk ID] sections: stable id → LmDiskPolicy (lm-disk-policy.h) */
  char *sata_link_policy; /* link_power_management_policy while on; "keep"/"": untouched */
  gboolean runtime_pm;    /* power/control=auto for disks and their controllers */
  guint runtime_pm_autosuspend_ms; /* power/autosuspend_delay_ms while on; 0: untouched */
  char *nvme_latency_tolerance;    /* power/pm_qos_latency_tolerance_us; "keep": untouched */
} LmSettings;

LmSettings *lm_settings_new (void);
LmSettings *lm_settings_copy (const LmSettings *settings);
void lm_settings_free (LmSettings *settings);
gboolean lm_settings_equal (const LmSettings *a, const LmSettings *b);

gboolean lm_settings_check_bounds (GVariant *asv, GError **error);
gboolean lm_settings_update (LmSettings *settings, GVariant *asv, GError **error);
gboolean lm_settings_load_key_file (LmSettings *settings, GKeyFile *key_file, const char *origin,
                                    GError **error);
LmSettings *lm_settings_load (const char *path, GError **error);
gboolean lm_settings_save (const LmSettings *settings, const char *path, GError **error);

gboolean lm_settings_valid_mode (const char *mode);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmSettings, lm_settings_free)

G_END_DECLS
