/* lm-sleep.h: suspend, hibernate and shutdown through logind.
 * Owns the delay inhibitor lock; never flushes or restores by itself (it
 * asks its owner and waits for the answer). */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _LmSleep LmSleep;

typedef enum
{
  LM_SLEEP_SUSPEND,  /* about to suspend or hibernate */
  LM_SLEEP_SHUTDOWN, /* about to power off */
  LM_SLEEP_RESUMED,  /* back from suspend: drives may have forgotten settings */
} LmSleepEvent;

/* For SUSPEND and SHUTDOWN, call lm_sleep_done() when the data is safe;
 * the lock is held until then. RESUMED needs no answer. */
typedef void (*LmSleepFunc) (LmSleep *sleep, LmSleepEvent event, gpointer user_data);

/* @address is @bus's (lm_bus_get_address()), for the connection of its own
 * the lock is taken on; NULL for the system bus's. */
LmSleep *lm_sleep_new (GDBusConnection *bus, const char *address, LmSleepFunc func,
                       gpointer user_data);
void lm_sleep_done (LmSleep *sleep);
void lm_sleep_free (LmSleep *sleep);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmSleep, lm_sleep_free)

G_END_DECLS
