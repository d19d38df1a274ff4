/* lm-dispatch.c: deny by default at dispatch. The skeleton's vtable is
 * the generated one with method_call wrapped: the method's row is looked
 * up before GDBus emits its handle-* signal, and a call without one never
 * reaches a handler (nor argument parsing, nor polkit). Done in the vtable
 * and not in ::g-authorize-method, which GDBus runs on a worker thread of
 * its own for every call. */
#include "config.h"

#include "lm-dispatch.h"

#include "lm-names.h"

struct _LmDispatchSkeleton
{
  LmExportedLaptopModeSkeleton parent;
  LmDispatchRuleFunc rule;
};

/* The wrapped vtable lives in the class: built once, in class_init, from
 * the generated class's. */
typedef struct
{
  LmExportedLaptopModeSkeletonClass parent_class;
  GDBusInterfaceVTable vtable;
  const GDBusInterfaceVTable *generated;
} LmDispatchSkeletonClass;

G_DEFINE_FINAL_TYPE (LmDispatchSkeleton, lm_dispatch_skeleton,
                     LM_TYPE_EXPORTED_LAPTOP_MODE_SKELETON)

#define DISPATCH_CLASS(obj) ((LmDispatchSkeletonClass *) G_OBJECT_GET_CLASS (obj))

static void
dispatch_method_call (GDBusConnection *connection, const char *sender, const char *object_path,
                      const char *interface_name, const char *method_name, GVariant *parameters,
                      GDBusMethodInvocation *invocation, gpointer user_data)
{
  LmDispatchSkeleton *self = G_TYPE_CHECK_INSTANCE_CAST (
      user_data, lm_dispatch_skeleton_get_type (), LmDispatchSkeleton);

  if (self->rule (method_name) == NULL)
    {
      g_warning ("Refused %s from %s: no row in the authorization table", method_name,
                 sender != NULL ? sender : "(peer)");
      g_dbus_method_invocation_return_dbus_error (
          invocation, LM_ERROR_NAME_ACCESS_DENIED,
          "laptop-moded refuses a method that has no authorization rule");
      return;
    }
  DISPATCH_CLASS (self)->generated->method_call (connection, sender, object_path, interface_name,
                                                 method_name, parameters, invocation, user_data);
}

static GDBusInterfaceVTable *
dispatch_get_vtable (GDBusInterfaceSkeleton *skeleton)
{
  return &DISPATCH_CLASS (skeleton)->vtable;
}

static void
lm_dispatch_skeleton_class_init (LmDispatchSkeletonClass *klass)
{
  GDBusInterfaceSkeletonClass *parent
      = G_DBUS_INTERFACE_SKELETON_CLASS (lm_dispatch_skeleton_parent_class);

  /* The generated get_vtable ignores its argument and returns its own
   * static table. */
  klass->generated = parent->get_vtable (NULL);
  klass->vtable = *klass->generated;
  klass->vtable.method_call = dispatch_method_call;
  G_DBUS_INTERFACE_SKELETON_CLASS (klass)->get_vtable = dispatch_get_vtable;
}

static void
lm_dispatch_skeleton_init (LmDispatchSkeleton *self)
{
}

LmExportedLaptopMode *
lm_dispatch_skeleton_new (LmDispatchRuleFunc rule)
{
  LmDispatchSkeleton *self = g_object_new (lm_dispatch_skeleton_get_type (), NULL);

  self->rule = rule;
  return LM_EXPORTED_LAPTOP_MODE (self);
}
