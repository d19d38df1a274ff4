/* lm-gate.h: method calls that come before the daemon is in charge wait,
 * in the main context, until lm_gate_open(); never run one before it. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Calls kept until the gate opens; more are refused. dbus-daemon starts
 * the daemon for the first call of bus activation and queues the others:
 * a boot may bring dozens at once. */
#define LM_GATE_MAX_WAITING 256

typedef struct _LmGate LmGate;

/* Gates every method of @skeleton until lm_gate_open(). Created and used
 * on the thread of the main context. */
LmGate *lm_gate_new (GDBusInterfaceSkeleton *skeleton);
/* Runs the calls that waited, in order, and lets later ones straight
 * through. */
void lm_gate_open (LmGate *gate);
/* Refuses what still waits and lets go of the skeleton. */
void lm_gate_free (LmGate *gate);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmGate, lm_gate_free)

G_END_DECLS
