/* lm-auth-private.h: what lm-auth.c (asking polkit) and lm-auth-rules.c (the
 * table it asks by) share. Not for anyone else: callers use lm-auth.h. */
#pragma once

#include "lm-auth.h"

G_BEGIN_DECLS

/* The details a rule sees: key to value, both owned. */
typedef GHashTable PolkitDetails;

/* Adds to @details what a polkit rule may want to decide on, taken from the
 * call's (already validated) @parameters. */
typedef void (*LmAuthDetailsFunc) (GVariant *parameters, PolkitDetails *details);

typedef struct
{
  const char *method;
  const char *action;
  LmAuthDetailsFunc add_details;
  gboolean scoped; /* monitor-all is asked too (LmAuthViewer.all) */
} LmAuthRule;

/* @method's row of the table, NULL when it has none (then it is denied). */
const LmAuthRule *lm_auth_rule_for_method (const char *method);

G_END_DECLS
