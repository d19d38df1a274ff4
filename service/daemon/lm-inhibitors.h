/* lm-inhibitors.h: holds that keep laptop mode off (a backup, an upgrade).
 * Owns the table of holds and their holders' lifetimes; never decides the
 * mode itself. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define LM_INHIBITORS_PER_CLIENT 16 /* per bus connection */
#define LM_INHIBITORS_PER_UID 64    /* per user, all connections */
#define LM_INHIBITORS_MAX 256

typedef struct _LmInhibitors LmInhibitors;

/* Told when a hold was added, released or dropped with its holder. */
typedef void (*LmInhibitorsFunc) (LmInhibitors *inhibitors, gpointer user_data);

LmInhibitors *lm_inhibitors_new (GDBusConnection *bus, LmInhibitorsFunc changed,
                                 gpointer user_data);
void lm_inhibitors_free (LmInhibitors *self);

gboolean lm_inhibitors_validate (const char *application, const char *reason, GError **error);
gboolean lm_inhibitors_add (LmInhibitors *self, const char *sender, guint32 uid,
                            const char *application, const char *reason, guint32 *cookie,
                            GError **error);
gboolean lm_inhibitors_release (LmInhibitors *self, const char *sender, guint32 cookie,
                                GError **error);
guint lm_inhibitors_count (LmInhibitors *self);
guint lm_inhibitors_count_settled (LmInhibitors *self, gint64 now, gint64 settle_us,
                                   gint64 *next_due);
GVariant *lm_inhibitors_to_variant (LmInhibitors *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmInhibitors, lm_inhibitors_free)

G_END_DECLS
