/* test-smart.c: the wear counters out of SMART READ DATA pages (hand-made
 * in the layout drives use, and broken ones) and the load-cycle
 * projection, by hand. */
#include <string.h>

#include "lm-ata.h"
#include "lm-error.h"
#include "lm-smart.h"

static void
put_attr (guint8 *page, guint slot, guint8 id, guint64 raw)
{
  guint8 *a = page + 2 + slot * 12;

  a[0] = id;
  a[1] = 0x32;
  a[3] = 100;
  a[4] = 100;
  for (guint b = 0; b < 6; b++)
    a[5 + b] = (guint8) (raw >> (8 * b));
}

static void
seal (guint8 *page)
{
  guint8 sum = 0;

  for (guint i = 0; i < LM_ATA_SMART_LEN - 1; i++)
    sum += page[i];
  page[LM_ATA_SMART_LEN - 1] = (guint8) (0x100 - sum);
}

static void
test_parse (void)
{
  guint8 page[LM_ATA_SMART_LEN] = { 0x10, 0x00 };
  g_autoptr (GError) error = NULL;
  LmSmartWear w;

  /* A laptop disk's order: 1, 3, 4, 5, 7, 9, 10, 12, ..., 193, 194. */
  put_attr (page, 0, 1, 0);
  put_attr (page, 1, 3, 0);
  put_attr (page, 2, LM_SMART_START_STOP, 5123);
  put_attr (page, 3, 5, 0);
  /* Power-on hours with minutes packed above 32 bits, as some drives do:
   * only the low 32 bits count. */
  put_attr (page, 4, LM_SMART_POWER_ON_HOURS, G_GUINT64_CONSTANT (0x003A00004E20));
  put_attr (page, 5, LM_SMART_POWER_CYCLES, 2011);
  put_attr (page, 6, LM_SMART_LOAD_CYCLES, 246810);
  put_attr (page, 7, 194, G_GUINT64_CONSTANT (0x0032001E0023));
  /* A second 193 is not the drive's counter. */
  put_attr (page, 29, LM_SMART_LOAD_CYCLES, 1);
  seal (page);
  g_assert_true (lm_smart_parse (page, sizeof page, &w, &error));
  g_assert_no_error (error);
  g_assert_true (w.have_start_stop && w.have_power_on_hours && w.have_power_cycles
                 && w.have_load_cycles);
  g_assert_cmpuint (w.start_stop, ==, 5123);
  g_assert_cmpuint (w.power_on_hours, ==, 20000);
  g_assert_cmpuint (w.power_cycles, ==, 2011);
  g_assert_cmpuint (w.load_cycles, ==, 246810);

  /* An SSD's page: none of the four. */
  memset (page, 0, sizeof page);
  put_attr (page, 0, 173, 40);
  seal (page);
  g_assert_true (lm_smart_parse (page, sizeof page, &w, &error));
  g_assert_false (w.have_start_stop || w.have_power_on_hours || w.have_power_cycles
                  || w.have_load_cycles);
}

static void
test_parse_broken (void)
{
  guint8 page[LM_ATA_SMART_LEN] = { 0x10 };
  LmSmartWear w;

  put_attr (page, 0, LM_SMART_LOAD_CYCLES, 1000);
  seal (page);
  for (gsize len = 0; len < LM_ATA_SMART_LEN; len += 97)
    {
      g_autoptr (GError) error = NULL;
      g_assert_false (lm_smart_parse (page, len, &w, &error));
      g_assert_error (error, LM_ERROR, LM_ERROR_KERNEL);
      g_assert_false (w.have_load_cycles);
    }
  /* One bit flipped in transit: the checksum refuses it. */
  page[7] ^= 0x01;
  g_autoptr (GError) error = NULL;
  g_assert_false (lm_smart_parse (page, sizeof page, &w, &error));
  g_assert_nonnull (strstr (error->message, "checksum"));
}

/* 4,000 load cycles in 10 days is 400 a day; from 120,000 to a 300,000
 * rating that is 180,000 / 400 = 450 days. */
static void
test_projection (void)
{
  double rate = lm_smart_cycles_per_day (116000, 120000, 10);

  g_assert_cmpfloat_with_epsilon (rate, 400, 1e-9);
  g_assert_cmpfloat_with_epsilon (lm_smart_days_to_rating (120000, rate, 300000), 450, 1e-9);
  g_assert_cmpfloat (lm_smart_days_to_rating (120000, rate, 300000), <, LM_SMART_WARN_DAYS);
  /* 40 a day: 4,500 days, past five years. */
  g_assert_cmpfloat (lm_smart_days_to_rating (120000, 40, 300000), >, LM_SMART_WARN_DAYS);
  g_assert_cmpfloat (lm_smart_days_to_rating (300001, 40, 300000), ==, 0);
  g_assert_cmpfloat (lm_smart_days_to_rating (1000, 0, 300000), <, 0);
  /* A counter that went back, or no time between: no rate. */
  g_assert_cmpfloat (lm_smart_cycles_per_day (120000, 5, 10), <, 0);
  g_assert_cmpfloat (lm_smart_cycles_per_day (1, 5, 0), <, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/smart/parse", test_parse);
  g_test_add_func ("/smart/parse-broken", test_parse_broken);
  g_test_add_func ("/smart/projection", test_projection);
  return g_test_run ();
}
