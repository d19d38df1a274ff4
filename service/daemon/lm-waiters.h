/* lm-waiters.h: WaitAwake's callers, each waiting until a disk is awake
 * anyway; owns their replies, timeouts and bus watches, never a disk. */
#pragma once

#include <gio/gio.h>

#include "lm-disks.h"
#include "lm-generated.h"

G_BEGIN_DECLS

typedef struct _LmWaiters LmWaiters;

/* Why a wait ends now whatever the disk does ("disabled", "ac",
 * "inactive"), or NULL to wait. Asked at each call and at each recheck. */
typedef const char *(*LmWaitersWhyNowFunc) (gpointer user_data);

/* A wait that ended with an answer: what the ledger keeps of it. */
typedef struct
{
  const char *disk;        /* the first disk it waited for */
  gint64 start_us, end_us; /* realtime */
  guint32 pid, uid;        /* pid 0: not known */
  const char *comm;        /* the caller's process name, "" when not known */
  const char *unit;        /* its systemd service, "" when none */
  const char *reason;      /* WaitAwake's reply */
} LmWaitersRun;

typedef void (*LmWaitersDoneFunc) (const LmWaitersRun *run, gpointer user_data);

LmWaiters *lm_waiters_new (LmExportedLaptopMode *skeleton, LmDisks *disks,
                           LmWaitersWhyNowFunc why_now, gpointer user_data);
void lm_waiters_set_done_func (LmWaiters *waiters, LmWaitersDoneFunc func, gpointer user_data);
/* Answers every waiter left with an error: the daemon is stopping. */
void lm_waiters_free (LmWaiters *waiters);

/* The daemon's state changed: waiters whose wait no longer applies end. */
void lm_waiters_recheck (LmWaiters *waiters);
/* Disk @name (kernel name) counts as awake now: its waiters end. */
void lm_waiters_disk_awake (LmWaiters *waiters, const char *name);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmWaiters, lm_waiters_free)

/* The systemd unit a cgroup file (/proc/PID/cgroup) places its process in:
 * "man-db.service" for the system's own (system.slice), "NAME.service of
 * user UID" for one of a user's manager, else "" (plain ASCII, at most
 * @size - 1 bytes). */
void lm_waiters_unit_from_cgroup (const char *text, char *unit, gsize size);

G_END_DECLS
