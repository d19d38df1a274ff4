/* lm-spinup-dbus.h: spin-up monitoring's D-Bus half: Subscribe,
 * Unsubscribe, GetSpinUps, SpinUp to each subscriber and the Attribution
 * properties, over the monitor (attribution/lm-spinup-monitor.c), which tells it
 * through funcs and never sees the bus. */
#pragma once

#include "lm-generated.h"
#include "lm-spinup-monitor.h"

G_BEGIN_DECLS

typedef struct _LmSpinupDbus LmSpinupDbus;

/* Handles the methods on @skeleton and takes @spinup's publish and backend
 * funcs; both outlive it. */
LmSpinupDbus *lm_spinup_dbus_new (LmExportedLaptopMode *skeleton, LmSpinupMonitor *spinup);
/* Ends every subscription and forgets re-checks in flight. */
void lm_spinup_dbus_shutdown (LmSpinupDbus *spinup_dbus);
void lm_spinup_dbus_free (LmSpinupDbus *spinup_dbus);

G_END_DECLS
