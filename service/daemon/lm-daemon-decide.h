/* lm-daemon-decide.h: whether laptop mode should be on, and why, from the
 * inputs alone. Pure: reads no object, the bus, the clock or a file. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What the decision depends on, read by the daemon at the moment it asks. */
typedef struct
{
  const char *mode;     /* what the user asked for: "off", "on" or "auto" */
  guint settled_holds;  /* holds that lasted the settle time */
  gboolean low_battery; /* latched until the machine is back on AC (lm-power.c) */
  gboolean on_battery;
  gboolean follow_profile; /* the FollowPowerProfile setting */
  gboolean power_saver;    /* power-profiles-daemon's profile is power-saver */
  gboolean hold_quiet;     /* off for holds until now, and the quiet period
                            * after the last one still runs (lm-inhibitors.h) */
} LmDecideInputs;

/* Sets *@on and returns the reason (an LM_REASON_* string, static). */
const char *lm_daemon_decide (const LmDecideInputs *inputs, gboolean *on);

G_END_DECLS
