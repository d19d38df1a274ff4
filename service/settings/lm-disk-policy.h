/* lm-disk-policy.h: per-disk settings ([Disk ID] sections, Configure's
 * DiskSettings) and their validation; never touches a disk. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define LM_DISK_GROUP_PREFIX "Disk "

/* Every field is -1 when not set. */
typedef struct
{
  gint standby_seconds;    /* ATA standby timer while laptop mode is on */
  gint ac_standby_seconds; /* timer sent when it ends (ATA cannot read the old one) */
  gint apm;                /* 1–254, 255 = off */
  gint readahead_kib;      /* /sys/block/X/queue/read_ahead_kb while on */
  gint exclude;            /* 1: never touched, not even asked its power state */
  gint runtime_pm;         /* 1/0: power/control=auto for it and its controller (lm-hwpower.c) */
  gint load_cycle_rating;  /* the drive's rated load cycles, for the wear projection only */
} LmDiskPolicy;

/* Tables map a stable id ("ata-WDC_…", or a kernel name) to LmDiskPolicy. */
GHashTable *lm_disk_policies_new (void);
GHashTable *lm_disk_policies_copy (GHashTable *policies);
gboolean lm_disk_policies_equal (GHashTable *a, GHashTable *b);

gboolean lm_disk_policies_load_group (GHashTable *policies, GKeyFile *key_file, const char *group,
                                      const char *origin, GError **error);
void lm_disk_policies_save (GHashTable *policies, GKeyFile *key_file);
gboolean lm_disk_policies_update (GHashTable *policies, GVariant *value, GError **error);
GVariant *lm_disk_policies_to_variant (GHashTable *policies);

const LmDiskPolicy *lm_disk_policies_lookup (GHashTable *policies, const char *id,
                                             const char *name);
gboolean lm_disk_policy_excluded (const LmDiskPolicy *policy);
gboolean lm_disk_policy_is_empty (const LmDiskPolicy *policy);

G_END_DECLS
