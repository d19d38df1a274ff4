/* test-ctl-measure.c: laptop-modectl measure's statistics.
 * Student's t against its table, and the comparison of two arms: Welch's
 * interval by hand, and "measurable" only when it excludes zero. */
#include <glib.h>
#include <math.h>

#include "lm-ctl.h"

static void
test_t95 (void)
{
  g_assert_cmpfloat_with_epsilon (lm_ctl_measure_t95 (1), 12.706, 1e-9);
  g_assert_cmpfloat_with_epsilon (lm_ctl_measure_t95 (4), 2.776, 1e-9);
  g_assert_cmpfloat_with_epsilon (lm_ctl_measure_t95 (30), 2.042, 1e-9);
  /* Between rows (11 lies between 10 and 12): within the two. */
  double t11 = lm_ctl_measure_t95 (11);
  g_assert_cmpfloat (t11, <, 2.228);
  g_assert_cmpfloat (t11, >, 2.179);
  g_assert_cmpfloat_with_epsilon (t11, 2.201, 0.002);
  g_assert_cmpfloat_with_epsilon (lm_ctl_measure_t95 (1e9), 1.960, 1e-6);
  /* Below one degree of freedom: the widest. */
  g_assert_cmpfloat_with_epsilon (lm_ctl_measure_t95 (0.3), 12.706, 1e-9);
  for (double df = 1; df < 500; df += 0.25)
    g_assert_cmpfloat (lm_ctl_measure_t95 (df + 0.25), <=, lm_ctl_measure_t95 (df));
}

static void
test_compare_not_measurable (void)
{
  const double a[] = { 1, 2, 3, 4 }, b[] = { 3, 4, 5, 6 };
  LmCtlMeasureStats st;

  lm_ctl_measure_compare (a, 4, b, 4, &st);
  g_assert_cmpfloat_with_epsilon (st.a.mean, 2.5, 1e-12);
  g_assert_cmpfloat_with_epsilon (st.diff, 2.0, 1e-12);
  /* Variances 5/3 each: SE sqrt(5/6), Welch's df 6, t 2.447. */
  g_assert_cmpfloat_with_epsilon (st.half, 2.447 * sqrt (5.0 / 6.0), 1e-9);
  g_assert_false (st.measurable);
  g_assert_cmpfloat_with_epsilon (st.a.half, 3.182 * sqrt (5.0 / 3.0 / 4.0), 1e-9);
}

static void
test_compare_measurable_both_ways (void)
{
  const double on[] = { 7.0, 7.1, 6.9, 7.0 }, off[] = { 7.5, 7.4, 7.6, 7.5 };
  LmCtlMeasureStats st;

  lm_ctl_measure_compare (on, 4, off, 4, &st);
  g_assert_true (st.measurable);
  g_assert_cmpfloat_with_epsilon (st.diff, 0.5, 1e-12);
  g_assert_cmpfloat (fabs (st.diff - 0.5), <=, st.half);
  lm_ctl_measure_compare (off, 4, on, 4, &st);
  g_assert_true (st.measurable);
  g_assert_cmpfloat_with_epsilon (st.diff, -0.5, 1e-12);
}

static void
test_compare_too_few (void)
{
  const double a[] = { 7.0 }, b[] = { 9.0, 9.1 };
  LmCtlMeasureStats st;

  /* One window of an arm: no interval, never measurable. */
  lm_ctl_measure_compare (a, 1, b, 2, &st);
  g_assert_true (isnan (st.half));
  g_assert_true (isnan (st.a.half));
  g_assert_false (st.measurable);
  lm_ctl_measure_compare (a, 0, b, 2, &st);
  g_assert_false (st.measurable);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/measure/t95", test_t95);
  g_test_add_func ("/measure/compare/not-measurable", test_compare_not_measurable);
  g_test_add_func ("/measure/compare/both-ways", test_compare_measurable_both_ways);
  g_test_add_func ("/measure/compare/too-few", test_compare_too_few);
  return g_test_run ();
}
