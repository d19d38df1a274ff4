/* test-nvme-parse.c: NVMe commands and answers as bytes (lm-nvme.c) on
 * recorded pages (tests/data/nvme: qemu 7.2's emulated controller, and a
 * hand-made one with APST and non-operational states), hostile ones, and
 * when a read is allowed at all. */
#include <errno.h>
#include <string.h>

#include "lm-disk-nvme.h"
#include "lm-error.h"
#include "lm-nvme.h"
#include "test-nvme-data.h"

static void
test_commands (void)
{
  LmNvmeCommand cmd;

  lm_nvme_command_identify (&cmd);
  g_assert_cmpuint (cmd.opcode, ==, 0x06);
  g_assert_cmpuint (cmd.cdw10, ==, 0x01);
  g_assert_cmpuint (cmd.nsid, ==, 0);
  g_assert_cmpuint (cmd.data_len, ==, 4096);
  lm_nvme_command_get_features (&cmd, LM_NVME_FEAT_APST);
  g_assert_cmpuint (cmd.opcode, ==, 0x0A);
  g_assert_cmpuint (cmd.cdw10, ==, 0x0C);
  g_assert_cmpuint (cmd.data_len, ==, 256);
  lm_nvme_command_get_features (&cmd, LM_NVME_FEAT_POWER_MGMT);
  g_assert_cmpuint (cmd.cdw10, ==, 0x02);
  g_assert_cmpuint (cmd.data_len, ==, 0);
}

/* What tests/qemu-nvme-capture recorded from qemu 7.2's -device nvme; the
 * values are also the ones qemu's hw/nvme/ctrl.c sets (psd[0]: mp 0x9c4,
 * enlat 0x10, exlat 0x4) and the probe printed in the guest. */
static void
test_identify_qemu (void)
{
  gsize len;
  g_autofree guint8 *data = load ("qemu-7.2-identify-ctrl.bin", &len);
  g_autoptr (GError) error = NULL;
  LmNvmeIdentify id;

  g_assert_cmpuint (len, ==, 4096);
  g_assert_true (lm_nvme_parse_identify (data, len, &id, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (id.model, ==, "QEMU NVMe Ctrl");
  g_assert_cmpstr (id.serial, ==, "LMTESTNVME01");
  g_assert_cmpstr (id.firmware, ==, "7.2.22");
  g_assert_cmpuint (id.n_states, ==, 1);
  g_assert_false (id.apst_supported);
  g_assert_cmpuint (id.states[0].max_power_uw, ==, 25000000);
  g_assert_cmpuint (id.states[0].entry_lat_us, ==, 16);
  g_assert_cmpuint (id.states[0].exit_lat_us, ==, 4);
  g_assert_true (id.states[0].operational);

  /* The probe's own parse in the guest said the same. */
  g_autofree char *facts = (char *) load ("qemu-7.2-probe.txt", &len);
  g_assert_nonnull (strstr (facts, "\nps0=mp_uw:25000000 enlat:16 exlat:4 operational:1\n"));
  g_assert_nonnull (strstr (facts, "\nstates=1\n"));
}

static void
test_identify_synthetic (void)
{
  gsize len;
  g_autofree guint8 *data = load ("synthetic-identify-5ps.bin", &len);
  g_autoptr (GError) error = NULL;
  LmNvmeIdentify id;
  static const struct
  {
    guint32 uw, enlat, exlat;
    gboolean op;
  } want[] = {
    { 7020000, 0, 0, TRUE },     { 6300000, 0, 0, TRUE },     { 3500000, 0, 0, TRUE },
    { 76000, 210, 1200, FALSE }, { 5000, 2000, 8000, FALSE },
  };

  g_assert_true (lm_nvme_parse_identify (data, len, &id, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (id.n_states, ==, 5);
  g_assert_true (id.apst_supported);
  g_assert_cmpstr (id.model, ==, "laptop-moded synthetic NVMe SSD");
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      g_assert_cmpuint (id.states[i].max_power_uw, ==, want[i].uw);
      g_assert_cmpuint (id.states[i].entry_lat_us, ==, want[i].enlat);
      g_assert_cmpuint (id.states[i].exit_lat_us, ==, want[i].exlat);
      g_assert_cmpint (id.states[i].operational, ==, want[i].op);
    }
  /* Past NPSS nothing is read. */
  g_assert_cmpuint (id.states[5].max_power_uw, ==, 0);
}

static void
test_identify_malformed (void)
{
  gsize len;
  g_autofree guint8 *data = load ("synthetic-identify-5ps.bin", &len);
  LmNvmeIdentify id;

  for (gsize short_len = 0; short_len < 4096; short_len += 511)
    {
      g_autoptr (GError) error = NULL;
      g_assert_false (lm_nvme_parse_identify (data, short_len, &id, &error));
      g_assert_error (error, LM_ERROR, LM_ERROR_KERNEL);
      g_assert_nonnull (strstr (error->message, "expected 4096"));
      g_assert_cmpuint (id.n_states, ==, 0);
    }
  {
    g_autoptr (GError) error = NULL;
    g_assert_false (lm_nvme_parse_identify (NULL, 4096, &id, &error));
    g_assert_error (error, LM_ERROR, LM_ERROR_KERNEL);
  }
  /* NPSS 31 is the last that fits; 32 and up are refused, not overrun. */
  data[263] = 31;
  g_assert_true (lm_nvme_parse_identify (data, len, &id, NULL));
  g_assert_cmpuint (id.n_states, ==, 32);
  for (guint npss = 32; npss < 256; npss += 37)
    {
      g_autoptr (GError) error = NULL;
      data[263] = (guint8) npss;
      g_assert_false (lm_nvme_parse_identify (data, len, &id, &error));
      g_assert_nonnull (strstr (error->message, "at most 32"));
    }
  /* Unprintable bytes in the model never reach D-Bus. */
  data[263] = 4;
  data[24] = 0xFF;
  data[25] = '\n';
  g_assert_true (lm_nvme_parse_identify (data, len, &id, NULL));
  g_assert_true (g_str_has_prefix (id.model, "??ptop-moded"));
  /* All-0xFF: the largest power and latencies, MPS and NOPS set. */
  memset (data + 2048, 0xFF, 32);
  g_assert_true (lm_nvme_parse_identify (data, len, &id, NULL));
  g_assert_cmpuint (id.states[0].max_power_uw, ==, 65535u * 100);
  g_assert_cmpuint (id.states[0].entry_lat_us, ==, G_MAXUINT32);
  g_assert_false (id.states[0].operational);
}

static void
test_apst (void)
{
  gsize len;
  g_autofree guint8 *data = load ("synthetic-apst-table.bin", &len);
  g_autoptr (GError) error = NULL;
  LmNvmeApst apst;

  g_assert_true (lm_nvme_parse_apst (0x1, data, len, &apst, &error));
  g_assert_no_error (error);
  g_assert_true (apst.enabled);
  for (guint i = 0; i < 3; i++)
    {
      g_assert_cmpuint (apst.entries[i].target, ==, 3);
      g_assert_cmpuint (apst.entries[i].idle_ms, ==, 71);
    }
  g_assert_cmpuint (apst.entries[3].target, ==, 4);
  g_assert_cmpuint (apst.entries[3].idle_ms, ==, 500);
  for (guint i = 4; i < 32; i++)
    g_assert_cmpuint (apst.entries[i].idle_ms, ==, 0);
  /* APSTE is bit 0 only. */
  g_assert_true (lm_nvme_parse_apst (0xFFFFFFFE, data, len, &apst, NULL));
  g_assert_false (apst.enabled);
  /* Reserved bits (2:0 and 63:32) are ignored; ITPT is 24 bits. */
  memset (data, 0xFF, 8);
  g_assert_true (lm_nvme_parse_apst (1, data, len, &apst, NULL));
  g_assert_cmpuint (apst.entries[0].target, ==, 31);
  g_assert_cmpuint (apst.entries[0].idle_ms, ==, 0xFFFFFF);
  for (gsize short_len = 0; short_len < 256; short_len += 51)
    {
      g_autoptr (GError) short_error = NULL;
      g_assert_false (lm_nvme_parse_apst (1, data, short_len, &apst, &short_error));
      g_assert_error (short_error, LM_ERROR, LM_ERROR_KERNEL);
      g_assert_false (apst.enabled);
    }
}

static void
test_power_mgmt (void)
{
  guint ps, wh;

  lm_nvme_parse_power_mgmt (0, &ps, &wh);
  g_assert_cmpuint (ps, ==, 0);
  g_assert_cmpuint (wh, ==, 0);
  lm_nvme_parse_power_mgmt (0x23, &ps, &wh);
  g_assert_cmpuint (ps, ==, 3);
  g_assert_cmpuint (wh, ==, 1);
  lm_nvme_parse_power_mgmt (0xFFFFFFFF, &ps, &wh);
  g_assert_cmpuint (ps, ==, 31);
  g_assert_cmpuint (wh, ==, 7);
  lm_nvme_parse_power_mgmt (0x04, &ps, NULL);
  g_assert_cmpuint (ps, ==, 4);
}

static void
test_describe (void)
{
  static const struct
  {
    guint32 uw;
    const char *text;
  } cases[] = {
    { 25000000, "25.00 W" }, { 76000, "0.0760 W" }, { 5000, "0.0050 W" },
    { 0, "0.00 W" },         { 7020000, "7.02 W" }, { 655350000, "655.35 W" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = lm_nvme_power_describe (cases[i].uw);
      g_assert_cmpstr (text, ==, cases[i].text);
    }
}

static void
test_due (void)
{
  gint64 now = 1000 * G_USEC_PER_SEC;
  LmNvmeDue base = { .io_seen = TRUE, .now_mono = now };
  LmNvmeDue d;

  /* Never read: due as soon as I/O is seen. */
  g_assert_true (lm_nvme_refresh_due (&base));
  d = base, d.io_seen = FALSE;
  g_assert_false (lm_nvme_refresh_due (&d)); /* may be asleep */
  d = base, d.runtime_suspended = TRUE;
  g_assert_false (lm_nvme_refresh_due (&d)); /* the PCI function is off */
  d = base, d.excluded = TRUE;
  g_assert_false (lm_nvme_refresh_due (&d));
  d = base, d.busy = TRUE;
  g_assert_false (lm_nvme_refresh_due (&d));
  /* Read a moment ago: not again until LM_NVME_REFRESH_S. */
  d = base, d.have_identify = TRUE, d.last_mono = now - 1;
  g_assert_false (lm_nvme_refresh_due (&d));
  d.last_mono = now - (gint64) LM_NVME_REFRESH_S * G_USEC_PER_SEC + 1;
  g_assert_false (lm_nvme_refresh_due (&d));
  d.last_mono = now - (gint64) LM_NVME_REFRESH_S * G_USEC_PER_SEC;
  g_assert_true (lm_nvme_refresh_due (&d));
  /* Identify never came (a failed first read): retried at the next I/O. */
  d = base, d.have_identify = FALSE, d.last_mono = now - 1;
  g_assert_true (lm_nvme_refresh_due (&d));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/nvme/commands", test_commands);
  g_test_add_func ("/nvme/identify/qemu", test_identify_qemu);
  g_test_add_func ("/nvme/identify/synthetic", test_identify_synthetic);
  g_test_add_func ("/nvme/identify/malformed", test_identify_malformed);
  g_test_add_func ("/nvme/apst", test_apst);
  g_test_add_func ("/nvme/power-mgmt", test_power_mgmt);
  g_test_add_func ("/nvme/describe", test_describe);
  g_test_add_func ("/nvme/due", test_due);
  return g_test_run ();
}
