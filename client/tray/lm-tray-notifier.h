/* lm-tray-notifier.h: desktop notifications of the tray, through libnotify.
 * Owns how often a popup appears and which one it replaces; never decides
 * whether the user wants them (the caller does), nor their words (lm-tray-view). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _LmTrayNotifier LmTrayNotifier;

/* At most one spin-up popup per @interval_seconds; those in between are
 * summed up in one popup when the interval ends. */
LmTrayNotifier *lm_tray_notifier_new (guint interval_seconds);
void lm_tray_notifier_free (LmTrayNotifier *notifier);
/* @spinup: a{sv} as laptop-moded's SpinUp signal carries it. */
void lm_tray_notifier_spin_up (LmTrayNotifier *notifier, GVariant *spinup);
/* Forget spin-ups waiting for the end of the interval. */
void lm_tray_notifier_drop_pending (LmTrayNotifier *notifier);
/* Something the user asked for failed; replaces the previous problem. */
void lm_tray_notifier_problem (LmTrayNotifier *notifier, const char *summary, const char *body);
/* A disk wearing out its heads; its words from lm_tray_view_wear_text. */
void lm_tray_notifier_wear (LmTrayNotifier *notifier, const char *summary, const char *body);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmTrayNotifier, lm_tray_notifier_free)

G_END_DECLS
