/* test-decide.c: lm_daemon_decide() over its whole matrix of inputs: every
 * mode against holds, a low battery, the power source and the power
 * profile. Owns the order of precedence among the reasons; needs no bus,
 * clock or file (the function is pure). */
#include "lm-daemon-decide.h"
#include "lm-names.h"

typedef struct
{
  const char *mode;
  guint holds;
  gboolean low, battery, follow, saver;
  gboolean on;
  const char *reason;
} Row;

/* Holds, then a low battery, then the mode, then the power source, then the
 * profile: what protects data first, the user's explicit word next. */
static const Row rows[] = {
  /* mode    holds low    battery follow saver   on     reason */
  { "off", 0, FALSE, FALSE, FALSE, FALSE, FALSE, LM_REASON_MANUAL },
  { "off", 0, FALSE, TRUE, TRUE, TRUE, FALSE, LM_REASON_MANUAL },
  { "on", 0, FALSE, FALSE, FALSE, FALSE, TRUE, LM_REASON_MANUAL },
  { "on", 0, FALSE, TRUE, FALSE, FALSE, TRUE, LM_REASON_MANUAL },
  { "auto", 0, FALSE, FALSE, FALSE, FALSE, FALSE, LM_REASON_AC },
  { "auto", 0, FALSE, TRUE, FALSE, FALSE, TRUE, LM_REASON_ON_BATTERY },
  /* The profile counts only when followed, and only on AC (battery says more). */
  { "auto", 0, FALSE, FALSE, TRUE, TRUE, TRUE, LM_REASON_POWER_SAVER },
  { "auto", 0, FALSE, FALSE, FALSE, TRUE, FALSE, LM_REASON_AC },
  { "auto", 0, FALSE, FALSE, TRUE, FALSE, FALSE, LM_REASON_AC },
  { "auto", 0, FALSE, TRUE, TRUE, TRUE, TRUE, LM_REASON_ON_BATTERY },
  /* A low battery wins over every mode... */
  { "on", 0, TRUE, TRUE, FALSE, FALSE, FALSE, LM_REASON_LOW_BATTERY },
  { "auto", 0, TRUE, TRUE, TRUE, TRUE, FALSE, LM_REASON_LOW_BATTERY },
  { "off", 0, TRUE, TRUE, FALSE, FALSE, FALSE, LM_REASON_LOW_BATTERY },
  /* ...and a settled hold over everything, a low battery too. */
  { "on", 1, FALSE, FALSE, FALSE, FALSE, FALSE, LM_REASON_INHIBITED },
  { "auto", 3, FALSE, TRUE, TRUE, TRUE, FALSE, LM_REASON_INHIBITED },
  { "off", 1, FALSE, FALSE, FALSE, FALSE, FALSE, LM_REASON_INHIBITED },
  { "on", 1, TRUE, TRUE, FALSE, FALSE, FALSE, LM_REASON_INHIBITED },
};

static void
test_table (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      const Row *r = &rows[i];
      LmDecideInputs in = { r->mode, r->holds, r->low, r->battery, r->follow, r->saver };
      gboolean on = !r->on; /* must be set either way */
      const char *reason = lm_daemon_decide (&in, &on);

      g_test_message ("row %" G_GSIZE_FORMAT ": %s holds=%u low=%d battery=%d follow=%d "
                      "saver=%d -> %s %s",
                      i, r->mode, r->holds, r->low, r->battery, r->follow, r->saver,
                      on ? "on" : "off", reason);
      g_assert_cmpstr (reason, ==, r->reason);
      g_assert_cmpint (on, ==, r->on);
    }
}

/* Every combination: the answer is on exactly for the three reasons that
 * mean on, and a hold or a low battery always means off. */
static void
test_matrix (void)
{
  static const char *const modes[] = { "off", "on", "auto" };

  for (gsize m = 0; m < G_N_ELEMENTS (modes); m++)
    for (guint bits = 0; bits < 32; bits++)
      {
        LmDecideInputs in = { modes[m],        bits & 1,        (bits >> 1) & 1,
                              (bits >> 2) & 1, (bits >> 3) & 1, (bits >> 4) & 1 };
        gboolean on;
        const char *reason = lm_daemon_decide (&in, &on);
        gboolean means_on = g_str_equal (reason, LM_REASON_ON_BATTERY)
                            || g_str_equal (reason, LM_REASON_POWER_SAVER)
                            || (g_str_equal (reason, LM_REASON_MANUAL) && m == 1);

        g_assert_cmpint (on, ==, means_on);
        if (in.settled_holds > 0 || in.low_battery)
          g_assert_false (on);
        if (in.settled_holds == 0 && !in.low_battery && m != 2)
          g_assert_cmpstr (reason, ==, LM_REASON_MANUAL);
      }
}

/* After holds: off, as inhibited, while their quiet period runs, whatever
 * the mode and the power; then the inputs decide again. */
static void
test_hold_quiet (void)
{
  static const char *const modes[] = { "off", "on", "auto" };

  for (gsize m = 0; m < G_N_ELEMENTS (modes); m++)
    {
      LmDecideInputs in = { .mode = modes[m], .on_battery = TRUE, .hold_quiet = TRUE };
      gboolean on = TRUE;

      g_assert_cmpstr (lm_daemon_decide (&in, &on), ==, LM_REASON_INHIBITED);
      g_assert_false (on);
      in.hold_quiet = FALSE;
      g_assert_cmpstr (lm_daemon_decide (&in, &on), !=, LM_REASON_INHIBITED);
      g_assert_cmpint (on, ==, m != 0);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/decide/table", test_table);
  g_test_add_func ("/decide/matrix", test_matrix);
  g_test_add_func ("/decide/hold-quiet", test_hold_quiet);
  return g_test_run ();
}
