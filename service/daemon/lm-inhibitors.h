/* lm-inhibitors.h: holds that keep laptop mode off (a backup, an upgrade).
 * Owns the table of holds and their holders' lifetimes; never decides the
 * mode itself. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define LM_INHIBITORS_PER_CLIENT 16 /* per bus connection */
#define LM_INHIBITORS_PER_UID 64    /* per user, all connections */
#define LM_INHIBITORS_MAX 256

/* The quiet period: after the last hold ends, laptop mode comes back only
 * once no hold has come or gone for this long. Each turn back on remounts,
 * writes sysctls and may send disk commands, so a caller taking holds in
 * a loop must not get one turn per hold: the period starts at 2 s (a
 * single backup costs a second more than before), grows fourfold with each
 * hold that comes within LM_HOLD_QUIET_RESET_MS of the previous hold's
 * start or end (so however a loop times its holds, it gets at most three
 * turns in two minutes: 2 + 8 + 32 s, the next after 128 s more), stops
 * growing at 4 minutes (a hold-free stretch that long ends any loop's
 * effect) and is 2 s again after 10 minutes without holds. */
#define LM_HOLD_QUIET_MIN_MS 2000
#define LM_HOLD_QUIET_GROWTH 4
#define LM_HOLD_QUIET_MAX_MS (4 * 60 * 1000)
#define LM_HOLD_QUIET_RESET_MS (10 * 60 * 1000)
/* Holders (application and uid) remembered for the log while holds keep
 * coming: the first hold of each is logged, repeats are counted and
 * summed up when laptop mode comes back. Past this many distinct holders
 * the rest are counted together, so varied names cannot grow the table. */
#define LM_HOLD_HOLDERS_LOGGED 32

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
guint lm_inhibitors_count_settled (LmInhibitors *self, gint64 now, gint64 settle_us,
                                   gint64 *next_due);
GVariant *lm_inhibitors_to_variant (LmInhibitors *self);
/* Monotonic µs until which laptop mode stays off after the last hold
 * ended (the quiet period); 0 while holds are held or none ever came. */
gint64 lm_inhibitors_quiet_until (LmInhibitors *self);
/* The quiet period now, in ms. */
gint64 lm_inhibitors_quiet_ms (LmInhibitors *self);
/* Log how many more holds each holder took since its first was logged
 * (nothing when there were none); called when laptop mode comes back. */
void lm_inhibitors_summarise (LmInhibitors *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmInhibitors, lm_inhibitors_free)

G_END_DECLS
