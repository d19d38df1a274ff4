/* lm-logind.h: tells when logind's sessions or seats changed (one came,
 * went, or became active or inactive). Owns those subscriptions; never
 * decides what a change means for anyone's rights. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _LmLogind LmLogind;

/* Called on the main loop, once per burst of changes. */
typedef void (*LmLogindChangedFunc) (gpointer user_data);

LmLogind *lm_logind_new (GDBusConnection *bus, LmLogindChangedFunc func, gpointer user_data);
void lm_logind_free (LmLogind *logind);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmLogind, lm_logind_free)

G_END_DECLS
