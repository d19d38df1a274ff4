/* test-nvme-residency.c: the APST walk and the energy sum on the hand-made
 * 5-state drive of tests/data/nvme, with and without IDLP/ACTP, from its
 * bytes through the Disks keys to seconds and watt-hours by hand. */
#include <math.h>

#include "lm-disk-nvme.h"
#include "lm-nvme-residency.h"
#include "lm-nvme.h"
#include "lm-replay.h"
#include "test-nvme-data.h"

/* The recorded bytes, parsed as the daemon does, published as the Disks
 * property has them, and read back as the report reads them. */
static void
table_from (const char *identify, gboolean apst_on, LmResidencyTable *table)
{
  gsize len = 0;
  g_autofree guint8 *id = load (identify, &len);
  g_autofree guint8 *apst = NULL;
  g_autoptr (GError) error = NULL;
  LmNvmeReading reading = { 0 };
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

  g_assert_true (lm_nvme_parse_identify (id, len, &reading.identify, &error));
  g_assert_no_error (error);
  reading.have_identify = TRUE;
  apst = load ("synthetic-apst-table.bin", &len);
  g_assert_true (lm_nvme_parse_apst (apst_on ? 1 : 0, apst, len, &reading.apst, &error));
  reading.have_apst = TRUE;
  reading.have_state = TRUE;
  reading.state = 0;
  lm_nvme_reading_add_props (&reading, &b);
  g_autoptr (GVariant) disk = g_variant_ref_sink (g_variant_builder_end (&b));
  g_assert_true (lm_residency_table_from_disk (disk, table));
}

#define EPS 1e-9

/* I/O in seconds 10, 11 and 50 of [0, 100): idle gaps of 10, 38 and 49 s.
 * Each gap: 0.071 s in ps0 (ITPT of (210 + 1200 + 19) / 20 ms), 0.5 s in
 * ps3 ((2000 + 8000 + 19) / 20 ms), the rest in ps4. */
static void
walk (const LmResidencyTable *table, LmResidency *r)
{
  gint64 io[] = { 50, 10, 11, 11, -5, 100, 10 }; /* any order, repeats, outside */

  lm_residency_walk (table, io, G_N_ELEMENTS (io), 0, 100, r);
}

static void
test_walk_max_power (void)
{
  LmResidencyTable t;
  LmResidency r;

  table_from ("synthetic-identify-5ps.bin", TRUE, &t);
  g_assert_cmpuint (t.n_states, ==, 5);
  g_assert_cmpint (t.apst, ==, LM_APST_ENABLED);
  g_assert_cmpuint (t.states[0].idle_ms, ==, 71);
  g_assert_cmpuint (t.states[3].idle_ms, ==, 500);
  g_assert_cmpuint (lm_residency_deepest (&t), ==, 4);
  walk (&t, &r);
  g_assert_cmpfloat_with_epsilon (r.active_s, 3, EPS);
  g_assert_cmpfloat_with_epsilon (r.state_s[0], 3 * 0.071, EPS);
  g_assert_cmpfloat_with_epsilon (r.state_s[1] + r.state_s[2], 0, EPS);
  g_assert_cmpfloat_with_epsilon (r.state_s[3], 3 * 0.5, EPS);
  g_assert_cmpfloat_with_epsilon (r.state_s[4], 97 - 3 * 0.571, EPS);
  /* 3 s × 7.02 W + 0.213 s × 7.02 W + 1.5 s × 0.076 W + 95.287 s × 0.005 W
   * = 23.145695 J. */
  g_assert_cmpfloat_with_epsilon (r.energy_wh, 23.145695 / 3600, EPS);
  g_assert_cmpstr (lm_residency_energy_source (&r), ==, "max_power");
}

static void
test_walk_idlp_actp (void)
{
  LmResidencyTable t;
  LmResidency r;

  table_from ("synthetic-identify-5ps-idlp.bin", TRUE, &t);
  g_assert_cmpfloat_with_epsilon (t.states[0].idle_power_w, 0.90, EPS);
  g_assert_cmpfloat_with_epsilon (t.states[0].active_power_w, 5.20, EPS);
  g_assert_cmpfloat_with_epsilon (t.states[3].idle_power_w, 0.045, EPS);
  g_assert_cmpfloat (t.states[3].active_power_w, <, 0);
  g_assert_cmpfloat_with_epsilon (t.states[4].idle_power_w, 0.003, EPS);
  walk (&t, &r);
  /* 3 s × 5.20 W + 0.213 s × 0.90 W + 1.5 s × 0.045 W + 95.287 s × 0.003 W
   * = 16.145061 J: every term the drive's own. */
  g_assert_cmpfloat_with_epsilon (r.energy_wh, 16.145061 / 3600, EPS);
  g_assert_cmpstr (lm_residency_energy_source (&r), ==, "idlp_actp");
}

/* APST off: an idle drive stays in ps0 (0.90 W here) the whole time. */
static void
test_walk_apst_off (void)
{
  LmResidencyTable t;
  LmResidency r;

  table_from ("synthetic-identify-5ps-idlp.bin", FALSE, &t);
  g_assert_cmpint (t.apst, ==, LM_APST_DISABLED);
  g_assert_cmpuint (lm_residency_deepest (&t), ==, 0);
  walk (&t, &r);
  g_assert_cmpfloat_with_epsilon (r.state_s[0], 97, EPS);
  g_assert_cmpfloat_with_epsilon (r.state_s[4], 0, EPS);
  g_assert_cmpfloat_with_epsilon (r.energy_wh, (3 * 5.20 + 97 * 0.90) / 3600, EPS);
}

/* qemu 7.2's controller: one state, no APST; no I/O at all: the window is
 * one idle gap at MP. */
static void
test_walk_qemu (void)
{
  gsize len = 0;
  g_autofree guint8 *id = load ("qemu-7.2-identify-ctrl.bin", &len);
  LmNvmeReading reading = { 0 };
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  LmResidencyTable t;
  LmResidency r;

  g_assert_true (lm_nvme_parse_identify (id, len, &reading.identify, NULL));
  reading.have_identify = TRUE;
  lm_nvme_reading_add_props (&reading, &b);
  g_autoptr (GVariant) disk = g_variant_ref_sink (g_variant_builder_end (&b));
  g_assert_true (lm_residency_table_from_disk (disk, &t));
  g_assert_cmpint (t.apst, ==, LM_APST_ABSENT);
  g_assert_cmpstr (lm_apst_mode_to_string (t.apst), ==, "absent");
  lm_residency_walk (&t, NULL, 0, 0, 3600, &r);
  g_assert_cmpfloat_with_epsilon (r.state_s[0], 3600, EPS);
  g_assert_cmpfloat_with_epsilon (r.energy_wh, 25.0, EPS);
}

/* Hostile tables end: a loop (3 → 4 → 3), a target past the table, a
 * work state past it, no states. */
static void
test_walk_hostile (void)
{
  LmResidencyTable t = { .n_states = 5, .apst = LM_APST_ENABLED };
  LmResidency r;

  for (guint i = 0; i < 5; i++)
    t.states[i].max_power_w = 1;
  t.states[0] = (LmResidencyState){ 1, -1, -1, 1000, 3, FALSE };
  t.states[3] = (LmResidencyState){ 1, -1, -1, 1000, 4, FALSE };
  t.states[4] = (LmResidencyState){ 1, -1, -1, 1000, 3, FALSE };
  lm_residency_walk (&t, NULL, 0, 0, 100, &r);
  g_assert_cmpfloat_with_epsilon (r.state_s[0] + r.state_s[3] + r.state_s[4], 100, EPS);
  g_assert_cmpfloat_with_epsilon (r.energy_wh, 100.0 / 3600, EPS);
  t.states[4].target = 31;
  lm_residency_walk (&t, NULL, 0, 0, 100, &r);
  g_assert_cmpfloat_with_epsilon (r.state_s[4], 98, EPS);
  t.work_state = 7;
  lm_residency_walk (&t, NULL, 0, 0, 100, &r);
  g_assert_cmpfloat_with_epsilon (r.energy_wh, 0, EPS);
  t.n_states = 0;
  lm_residency_walk (&t, NULL, 0, 0, 100, &r);
  g_assert_cmpfloat_with_epsilon (r.energy_wh, 0, EPS);
}

/* Laptop mode's I/O instants: dirtied data is written LaptopModeSeconds
 * after the next read or write within MaxLostWork (the engine waits for
 * the disk to be quiet that long, not the same second), else MaxLostWork
 * after it was dirtied. */
static void
test_laptop_io (void)
{
  LmReplayRun runs[] = {
    { 100 * G_USEC_PER_SEC, 101 * G_USEC_PER_SEC, 0, 0, 1 },   /* dirtied at 100 */
    { 200 * G_USEC_PER_SEC, 201 * G_USEC_PER_SEC, 1, 0, 0 },   /* a read at 200 */
    { 1000 * G_USEC_PER_SEC, 1001 * G_USEC_PER_SEC, 0, 0, 1 }, /* dirtied at 1000 */
    { 1100 * G_USEC_PER_SEC, 1101 * G_USEC_PER_SEC, 0, 0, 1 }, /* joins its flush */
  };
  g_autoptr (GArray) io
      = lm_replay_laptop_io (runs, G_N_ELEMENTS (runs), 0, (gint64) 3600 * G_USEC_PER_SEC, 600, 2);

  g_assert_cmpuint (io->len, ==, 3);
  g_assert_cmpint (g_array_index (io, gint64, 0), ==, 200);
  g_assert_cmpint (g_array_index (io, gint64, 1), ==, 202); /* the flush, 2 s after the read */
  g_assert_cmpint (g_array_index (io, gint64, 2), ==, 1600);

  /* A flush that would come after MaxLostWork comes at MaxLostWork. */
  g_autoptr (GArray) late
      = lm_replay_laptop_io (runs, 2, 0, (gint64) 3600 * G_USEC_PER_SEC, 101, 30);
  g_assert_cmpuint (late->len, ==, 2);
  g_assert_cmpint (g_array_index (late, gint64, 1), ==, 201);

  g_autoptr (GArray) stock
      = lm_replay_stock_io (runs, G_N_ELEMENTS (runs), 0, (gint64) 3600 * G_USEC_PER_SEC);
  /* The read, and per dirtied second (each its own dirty spell: 100,
   * 1000, 1100 are 30 s apart and more) its writeback, its commit and the
   * commit of the blocks its writeback allocated (ext4, as not recorded). */
  g_assert_cmpuint (stock->len, ==, 10);
}

/* Time between the spans (suspended, or the daemon stopped) is no idle
 * time: not in any state, not in the window. */
static void
test_walk_spans (void)
{
  LmResidencyTable t = { .n_states = 2, .apst = LM_APST_ENABLED };
  t.states[0] = (LmResidencyState){ 5, 1, 5, 10000, 1, TRUE };
  t.states[1] = (LmResidencyState){ 0.5, 0.01, -1, 0, 0, FALSE };
  gint64 spans[] = { 0, 100, 1000, 1100 };
  gint64 io[] = { 50, 500, 1050 }; /* 500 is in the gap: never walked */
  LmResidency r;

  lm_residency_walk_spans (&t, io, G_N_ELEMENTS (io), spans, 2, &r);
  g_assert_cmpint (r.window_s, ==, 200);
  g_assert_cmpfloat (r.active_s, ==, 2);
  /* Each span: 10 s in PS0 before and after each I/O second, the rest PS1. */
  g_assert_cmpfloat (r.state_s[0] + r.state_s[1] + r.active_s, ==, 200);
  g_assert_cmpfloat (r.state_s[0], ==, 40);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/nvme-residency/walk/max-power", test_walk_max_power);
  g_test_add_func ("/nvme-residency/walk/idlp-actp", test_walk_idlp_actp);
  g_test_add_func ("/nvme-residency/walk/apst-off", test_walk_apst_off);
  g_test_add_func ("/nvme-residency/walk/qemu", test_walk_qemu);
  g_test_add_func ("/nvme-residency/walk/hostile", test_walk_hostile);
  g_test_add_func ("/nvme-residency/laptop-io", test_laptop_io);
  g_test_add_func ("/nvme-residency/walk/spans", test_walk_spans);
  return g_test_run ();
}
