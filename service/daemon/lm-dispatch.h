/* lm-dispatch.h: the LaptopMode1 skeleton the daemon exports. Owns what
 * happens to a method call before its handler: a method without a row in
 * the authorization table (lm-auth-rules.c) is refused there, so a method
 * added to the interface is denied until someone decides who may call it. */
#pragma once

#include "lm-generated.h"

G_BEGIN_DECLS

/* The polkit action of @method, NULL when the table has no row for it. */
typedef const char *(*LmDispatchRuleFunc) (const char *method);

/* A subclass of the generated skeleton (its class holds the wrapped
 * vtable, so it is declared by hand, not with G_DECLARE_FINAL_TYPE). */
typedef struct _LmDispatchSkeleton LmDispatchSkeleton;
GType lm_dispatch_skeleton_get_type (void);

/* A skeleton whose calls reach their handle-* signal only when @rule
 * knows the method (the daemon: lm_auth_action_for_method; a test may
 * leave one out); any other is answered AccessDenied at dispatch. */
LmExportedLaptopMode *lm_dispatch_skeleton_new (LmDispatchRuleFunc rule);

G_END_DECLS
