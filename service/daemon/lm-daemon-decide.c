/* lm-daemon-decide.c: whether laptop mode should be on, and why, from the
 * inputs alone; never reads or changes anything (the table in test-decide.c
 * covers every row). */
#include "config.h"

#include "lm-daemon-decide.h"

#include "lm-names.h"

/* Holds and a low battery win over any mode: they are about not losing
 * data. A mode of "on" or "off" wins over the power source; "auto" follows
 * the battery, and the power-saver profile when FollowPowerProfile is set. */
const char *
lm_daemon_decide (const LmDecideInputs *in, gboolean *on)
{
  *on = FALSE;
  if (in->settled_holds > 0 || in->hold_quiet)
    return LM_REASON_INHIBITED;
  if (in->low_battery)
    return LM_REASON_LOW_BATTERY;
  if (g_str_equal (in->mode, "on"))
    {
      *on = TRUE;
      return LM_REASON_MANUAL;
    }
  if (g_str_equal (in->mode, "off"))
    return LM_REASON_MANUAL;
  if (in->on_battery)
    {
      *on = TRUE;
      return LM_REASON_ON_BATTERY;
    }
  if (in->follow_profile && in->power_saver)
    {
      *on = TRUE;
      return LM_REASON_POWER_SAVER;
    }
  return LM_REASON_AC;
}
