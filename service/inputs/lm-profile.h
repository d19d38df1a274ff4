/* lm-profile.h: power-profiles-daemon's ActiveProfile, followed by signal.
 * Owns watching the profile names on the bus; never decides the mode. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _LmProfile LmProfile;

/* Called when whether the power-saver profile is active changes. */
typedef void (*LmProfileFunc) (LmProfile *profile, gpointer user_data);

LmProfile *lm_profile_new (GDBusConnection *bus, LmProfileFunc func, gpointer user_data);
/* TRUE while a power-profiles service is on the bus with ActiveProfile
 * "power-saver"; FALSE when none is there. */
gboolean lm_profile_get_power_saver (LmProfile *profile);
void lm_profile_free (LmProfile *profile);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmProfile, lm_profile_free)

G_END_DECLS
