/* lm-gate.c: method calls that come before the daemon is in charge.
 * GDBus asks ::g-authorize-method on a worker thread of its own; the
 * handler here touches nothing but an atomic flag there, and hands every
 * call that came too early to the main context, where the queue lives.
 * Once open, the handler is disconnected: GDBus then dispatches in the
 * main context directly, with no thread in between. A call addressed to a
 * unique name (not routed to us because we own the well-known name) is
 * refused while closed: before lm_daemon_start() another daemon may be in
 * charge (--replace). */
#include "config.h"

#include "lm-gate.h"

#include "lm-error.h"

#define LM_STARTING_TEXT "laptop-moded is still starting; try again in a moment"

struct _LmGate
{
  gatomicrefcount ref;
  int open;                         /* atomic: read on GDBus's threads */
  GDBusInterfaceSkeleton *skeleton; /* main context only, from here on */
  GMainContext *context;
  GQueue waiting; /* GDBusMethodInvocation, oldest first */
  gulong handler;
};

static LmGate *
gate_ref (LmGate *gate)
{
  g_atomic_ref_count_inc (&gate->ref);
  return gate;
}

static void
gate_unref (gpointer data)
{
  LmGate *gate = data;

  if (!g_atomic_ref_count_dec (&gate->ref))
    return;
  g_main_context_unref (gate->context);
  g_free (gate);
}

static void
gate_closure_notify (gpointer data, GClosure *closure)
{
  gate_unref (data);
}

static void
dispatch (LmGate *gate, GDBusMethodInvocation *invocation)
{
  const GDBusInterfaceVTable *vtable = g_dbus_interface_skeleton_get_vtable (gate->skeleton);

  vtable->method_call (g_dbus_method_invocation_get_connection (invocation),
                       g_dbus_method_invocation_get_sender (invocation),
                       g_dbus_method_invocation_get_object_path (invocation),
                       g_dbus_method_invocation_get_interface_name (invocation),
                       g_dbus_method_invocation_get_method_name (invocation),
                       g_dbus_method_invocation_get_parameters (invocation), invocation,
                       gate->skeleton);
}

typedef struct
{
  LmGate *gate;
  GDBusMethodInvocation *invocation;
} Handoff;

static void
handoff_free (gpointer data)
{
  Handoff *h = data;

  g_clear_object (&h->invocation);
  gate_unref (h->gate);
  g_free (h);
}

/* In the main context: the gate's state is decided here only. */
static gboolean
on_handoff (gpointer data)
{
  Handoff *h = data;
  LmGate *gate = h->gate;
  GDBusMessage *message = g_dbus_method_invocation_get_message (h->invocation);
  const char *destination = g_dbus_message_get_destination (message);

  if (gate->skeleton == NULL)
    g_dbus_method_invocation_return_error_literal (g_steal_pointer (&h->invocation), LM_ERROR,
                                                   LM_ERROR_FAILED, "laptop-moded is stopping");
  else if (g_atomic_int_get (&gate->open))
    dispatch (gate, g_steal_pointer (&h->invocation));
  else if (destination != NULL && destination[0] != ':'
           && gate->waiting.length < LM_GATE_MAX_WAITING)
    {
      g_debug ("%s from %s waits for start-up to finish",
               g_dbus_method_invocation_get_method_name (h->invocation),
               g_dbus_method_invocation_get_sender (h->invocation));
      g_queue_push_tail (&gate->waiting, g_steal_pointer (&h->invocation));
    }
  else
    g_dbus_method_invocation_return_error_literal (g_steal_pointer (&h->invocation), LM_ERROR,
                                                   LM_ERROR_FAILED, LM_STARTING_TEXT);
  return G_SOURCE_REMOVE;
}

/* On a GDBus worker thread. */
static gboolean
on_authorize_method (GDBusInterfaceSkeleton *skeleton, GDBusMethodInvocation *invocation,
                     gpointer user_data)
{
  LmGate *gate = user_data;
  Handoff *h;

  if (g_atomic_int_get (&gate->open))
    return TRUE;
  h = g_new0 (Handoff, 1);
  h->gate = gate_ref (gate);
  h->invocation = g_object_ref (invocation);
  /* FALSE: GDBus forgets the call; it is ours now, answered or run from
   * the main context. */
  g_main_context_invoke_full (gate->context, G_PRIORITY_DEFAULT, on_handoff, h, handoff_free);
  return FALSE;
}

LmGate *
lm_gate_new (GDBusInterfaceSkeleton *skeleton)
{
  LmGate *gate = g_new0 (LmGate, 1);

  g_atomic_ref_count_init (&gate->ref);
  gate->skeleton = skeleton;
  gate->context = g_main_context_ref_thread_default ();
  g_queue_init (&gate->waiting);
  /* The closure holds a reference: a worker thread may still be in the
   * handler when it is disconnected. */
  gate->handler
      = g_signal_connect_data (skeleton, "g-authorize-method", G_CALLBACK (on_authorize_method),
                               gate_ref (gate), gate_closure_notify, 0);
  return gate;
}

void
lm_gate_open (LmGate *gate)
{
  GDBusMethodInvocation *invocation;

  g_atomic_int_set (&gate->open, TRUE);
  if (gate->waiting.length > 0)
    g_debug ("Running %u calls that came before the name was ours", gate->waiting.length);
  while ((invocation = g_queue_pop_head (&gate->waiting)) != NULL)
    dispatch (gate, invocation);
  /* Calls already handed off still come through on_handoff(), open. */
  g_clear_signal_handler (&gate->handler, gate->skeleton);
}

void
lm_gate_free (LmGate *gate)
{
  GDBusMethodInvocation *invocation;

  if (gate == NULL)
    return;
  g_clear_signal_handler (&gate->handler, gate->skeleton);
  while ((invocation = g_queue_pop_head (&gate->waiting)) != NULL)
    g_dbus_method_invocation_return_error_literal (invocation, LM_ERROR, LM_ERROR_FAILED,
                                                   "laptop-moded is stopping");
  gate->skeleton = NULL;
  gate_unref (gate);
}
