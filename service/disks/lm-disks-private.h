/* lm-disks-private.h: what disks/ files share about each disk: lm-disks.c
 * (the list), lm-disk-watch.c (power state, accounting, timers),
 * lm-disks-property.c (Disks) and lm-disk-settings.c (timer, APM,
 * readahead while on); nothing outside disks/ includes it. */
#pragma once

#include "lm-disks.h"
#include "lm-ata.h"
#include "lm-disk-nvme.h"
#include "lm-disk-smart.h"
#include "lm-uevent.h"

G_BEGIN_DECLS

typedef struct
{
  LmDisks *owner;
  char *name; /* kernel name: "sda", "vda", "loop3" */
  char *id;   /* /dev/disk/by-id name, or the kernel name */
  char *model;
  gboolean rotational, removable;
  gboolean ata;      /* answers CHECK POWER MODE */
  gboolean excluded; /* never sent a command */
  LmAtaPower power;  /* last answer (ATA only) */
  gboolean asleep;   /* counted as standby: ATA standby/sleeping, or quiet */
  guint64 io;        /* I/O counters from stat, summed */
  gint64 io_mono;    /* monotonic µs when io was last seen to move */
  gint64 since_mono, since_real, start_mono;
  guint64 active_us, standby_us;
  guint transitions, spinups;
  guint idle_id, recheck_id;
  guint sleep_checks;     /* event-driven: ATA checks since it woke */
  char *error;            /* the last command's failure, for the property */
  gint applied_standby;   /* what we sent while on, -1 none */
  gint applied_apm;       /* -1 none */
  gint applied_readahead; /* -1 none */
  /* A disk in standby is sent nothing (a command spins it up): what laptop
   * mode would send or put back waits for its next wake (lm_disk_woken). */
  gboolean apply_pending;   /* its settings go out when it wakes */
  gboolean restore_pending; /* its originals go back when it wakes (the
                             * journal keeps them until then) */
  LmDiskNvme *nvme;         /* NVMe power states; NULL for other disks */
  LmDiskSmart *smart;       /* wear counters; NULL but for spinning ATA disks */
} LmDisk;

struct _LmDisks
{
  LmDisksPublishFunc publish; /* Disks, to the bus */
  gpointer publish_data;
  LmState *state;       /* not owned */
  GHashTable *disks;    /* name → LmDisk */
  GHashTable *policies; /* id → LmDiskPolicy, as applied or to apply */
  guint idle_s;
  guint recheck_s; /* 0: automatic */
  gboolean active; /* laptop mode on: per-disk settings applied */
  gboolean started;
  gboolean event_driven; /* spin-ups come from the kernel: no re-check */
  LmUevent *uevent;
  guint rescan_id;
  guint settle_id;
  LmDisksPowerFunc power_func; /* the ledger */
  gpointer power_data;
  LmDisksWearFunc wear_func; /* the ledger */
  gpointer wear_data;
  LmDisksOwnWakeFunc own_wake_func; /* attribution: the daemon's own spin-ups */
  gpointer own_wake_data;
  LmDisksExcludedFunc excluded_func; /* attribution: disks not watched */
  gpointer excluded_data;
  LmDisksDescribeFunc describe_func; /* hardware power: more of a disk's entry */
  gpointer describe_data;
  LmDisksLastIoFunc last_io_func; /* attribution: the kernel's last I/O time */
  gpointer last_io_data;
  GPtrArray *power_notes; /* changes found while asked, told from an idle */
  guint power_notes_id;
};

/* Just listed: @d is asked (ATA) or taken as awake, and watched
 * (lm-disk-watch.c). */
void lm_disk_watch_begin (LmDisk *d);
/* Exclude=true changed for @d: its timers stop, or it is watched again
 * from now on. Called before its policy is applied. */
void lm_disk_set_excluded (LmDisk *d, gboolean excluded);
/* Tell lm-excluded.c the disks now excluded (logged when that changed). */
void lm_disks_update_excluded (LmDisks *self);
void lm_disk_set_error (LmDisk *d, const char *message);
/* Add the time since the last change to @d's active or standby counter. */
void lm_disk_account (LmDisk *d, gint64 now);
/* Apply @d's policy, originals saved first (lm-disk-settings.c); a disk
 * in standby waits for its next wake. */
void lm_disk_apply (LmDisks *self, LmDisk *d);
/* TRUE when ATA disk @d says it is in standby or asleep now (CHECK POWER
 * MODE, which never wakes a disk); FALSE for other disks, or when it
 * cannot be asked. */
gboolean lm_disk_in_standby (LmDisk *d);
/* The daemon's own command @what woke @d (it took @took_us): counted as a
 * spin-up, and told to own_wake_func (attribution), which names the daemon. */
void lm_disk_own_wake (LmDisk *d, const char *what, gint64 took_us);
/* Send @cdb (@what, a LM_DISKS_CMD_* name) to ATA disk @d only while it is
 * awake: CHECK POWER MODE first, in the same step (LM_ERROR_BUSY when it
 * said standby); a wake the command caused all the same goes to
 * lm_disk_own_wake(). */
gboolean lm_disk_send (LmDisk *d, const char *what, const guint8 cdb[LM_ATA_CDB_LEN],
                       GError **error);
/* @d woke (its first I/O after a quiet while): send what waited for that
 * (lm-disk-settings.c). */
void lm_disk_woken (LmDisks *self, LmDisk *d);

G_END_DECLS
