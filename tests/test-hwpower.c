/* test-hwpower.c: SATA link power, runtime PM and NVMe latency tolerance
 * against a fake sysfs laid out as the kernel lays it out: apply, restore,
 * a crash between any two steps, someone else's change, a refused write. */
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "lm-disk-policy.h"
#include "lm-hwpower.h"
#include "lm-journal-private.h"
#include "lm-limits.h"
#include "test-fakeroot.h"

#define AHCI "/sys/devices/pci0000:00/0000:00:1f.2"
#define HOST0 AHCI "/ata1/host0/scsi_host/host0/link_power_management_policy"
#define HOST1 AHCI "/ata2/host1/scsi_host/host1/link_power_management_policy"
#define HOST3 AHCI "/ata4/host3/scsi_host/host3/link_power_management_policy"
#define SDA_DEV AHCI "/ata1/host0/target0:0:0/0:0:0:0"
#define NVME_PCI "/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0"
#define NVME0 NVME_PCI "/nvme/nvme0"
#define NVME1_PCI "/sys/devices/pci0000:00/0000:00:1d.4/0000:3e:00.0"
#define NVME1 NVME1_PCI "/nvme/nvme1"

static void
put_dir (LmFakeRoot *f, const char *rel)
{
  g_autofree char *path = g_build_filename (f->root, rel, NULL);
  g_assert_cmpint (g_mkdir_with_parents (path, 0755), ==, 0);
}

/* Relative links as sysfs has them; "../" counts are from the link's
 * directory up to /sys. */
static void
pci_function (LmFakeRoot *f, const char *dev, guint depth, const char *control)
{
  g_autofree char *sub = g_strconcat (dev, "/subsystem", NULL);
  g_autoptr (GString) up = g_string_new (NULL);
  for (guint i = 0; i < depth; i++)
    g_string_append (up, "../");
  g_string_append (up, "bus/pci");
  lm_fake_root_link (f, sub, up->str);
  g_autofree char *ctl = g_strconcat (dev, "/power/control", NULL);
  lm_fake_root_put (f, ctl, control);
}

/* An AHCI controller with four ports: host0 holds sda, host1 is empty and
 * at keep_firmware_settings, host2 (a USB bridge) has no policy file,
 * host3 is a hot-plug port. An NVMe drive with APST (nvme0n1) and one
 * without (nvme1n1: no pm_qos_latency_tolerance_us). */
static void
setup_sysfs (LmFakeRoot *f, gconstpointer data)
{
  lm_fake_root_setup (f, data);
  put_dir (f, "/sys/bus/pci/devices");
  put_dir (f, "/sys/devices/pci0000:00/power");
  pci_function (f, AHCI, 3, "on\n");
  lm_fake_root_put (f, HOST0, "max_performance\n");
  lm_fake_root_put (f, AHCI "/ata1/host0/scsi_host/host0/ahci_port_cmd", "400006\n");
  lm_fake_root_put (f, HOST1, "keep_firmware_settings\n");
  put_dir (f, AHCI "/ata3/host2/scsi_host/host2");
  lm_fake_root_put (f, HOST3, "max_performance\n");
  lm_fake_root_put (f, AHCI "/ata4/host3/scsi_host/host3/ahci_port_cmd", "6c0016\n");
  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *cls = g_strdup_printf ("/sys/class/scsi_host/host%u", i);
      g_autofree char *target = g_strdup_printf (
          "../../devices/pci0000:00/0000:00:1f.2/ata%u/host%u/scsi_host/host%u", i + 1, i, i);
      lm_fake_root_link (f, cls, target);
    }
  /* sda: the SCSI device has runtime PM (delay -1: blk_pm_runtime_init). */
  lm_fake_root_put (f, SDA_DEV "/power/control", "on\n");
  lm_fake_root_put (f, SDA_DEV "/power/autosuspend_delay_ms", "-1\n");
  lm_fake_root_put (f, SDA_DEV "/block/sda/stat", "1 0 0 0 0 0 0 0 0 0 0\n");
  lm_fake_root_link (f, SDA_DEV "/block/sda/device", "../../../0:0:0:0");
  lm_fake_root_link (f, "/sys/block/sda",
                     "../devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda");

  pci_function (f, "/sys/devices/pci0000:00/0000:00:1d.0", 3, "on\n");
  pci_function (f, NVME_PCI, 4, "on\n");
  lm_fake_root_put (f, NVME0 "/power/pm_qos_latency_tolerance_us", "100000\n");
  put_dir (f, NVME0 "/nvme0n1");
  lm_fake_root_link (f, NVME0 "/nvme0n1/device", "../../nvme0");
  lm_fake_root_link (f, "/sys/class/nvme/nvme0",
                     "../../devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0");
  lm_fake_root_link (f, "/sys/block/nvme0n1",
                     "../devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1");
  pci_function (f, NVME1_PCI, 4, "auto\n");
  put_dir (f, NVME1 "/power");
  put_dir (f, NVME1 "/nvme1n1");
  lm_fake_root_link (f, NVME1 "/nvme1n1/device", "../../nvme1");
  lm_fake_root_link (f, "/sys/class/nvme/nvme1",
                     "../../devices/pci0000:00/0000:00:1d.4/0000:3e:00.0/nvme/nvme1");
  lm_fake_root_link (f, "/sys/block/nvme1n1",
                     "../devices/pci0000:00/0000:00:1d.4/0000:3e:00.0/nvme/nvme1/nvme1n1");
}

static char *
get (LmFakeRoot *f, const char *rel)
{
  char *v = lm_fake_root_get (f, rel);
  g_assert_nonnull (v);
  return v;
}

#define assert_file(f, rel, want)                                                                  \
  do                                                                                               \
    {                                                                                              \
      g_autofree char *_v = get (f, rel);                                                          \
      g_assert_cmpstr (_v, ==, want);                                                              \
    }                                                                                              \
  while (0)

static char *
state_path (LmFakeRoot *f)
{
  return g_build_filename (f->root, "var/lib/laptop-moded/state", NULL);
}

/* What a daemon started after a crash would find. */
static LmState *
reload (LmFakeRoot *f)
{
  g_autofree char *path = state_path (f);
  LmState *s = lm_state_new (path);
  g_assert_true (lm_state_load (s, NULL));
  return s;
}

static LmSettings *
on_settings (void)
{
  LmSettings *s = lm_settings_new ();
  g_free (s->nvme_latency_tolerance);
  s->nvme_latency_tolerance = g_strdup ("any");
  s->runtime_pm_autosuspend_ms = 15000;
  return s;
}

static void
assert_originals (LmFakeRoot *f)
{
  assert_file (f, HOST0, "max_performance");
  /* keep_firmware_settings takes no write: the nearest is what comes back. */
  assert_file (f, HOST1, "max_performance");
  assert_file (f, HOST3, "max_performance");
  assert_file (f, AHCI "/power/control", "on");
  assert_file (f, SDA_DEV "/power/control", "on");
  assert_file (f, SDA_DEV "/power/autosuspend_delay_ms", "-1");
  assert_file (f, NVME0 "/power/pm_qos_latency_tolerance_us", "100000");
  assert_file (f, NVME_PCI "/power/control", "on");
  assert_file (f, NVME1_PCI "/power/control", "auto");
  assert_file (f, "/sys/devices/pci0000:00/0000:00:1d.0/power/control", "on");
}

static void
assert_applied (LmFakeRoot *f)
{
  assert_file (f, HOST0, "med_power_with_dipm");
  assert_file (f, HOST1, "med_power_with_dipm");
  assert_file (f, HOST3, "max_performance"); /* hot-plug port */
  assert_file (f, AHCI "/power/control", "auto");
  assert_file (f, SDA_DEV "/power/control", "auto");
  assert_file (f, SDA_DEV "/power/autosuspend_delay_ms", "15000");
  assert_file (f, NVME0 "/power/pm_qos_latency_tolerance_us", "any");
  assert_file (f, NVME_PCI "/power/control", "auto");
  /* A bridge above the controller is not the disk's controller. */
  assert_file (f, "/sys/devices/pci0000:00/0000:00:1d.0/power/control", "on");
}

static void
test_apply_restore (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = state_path (f);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (LmSettings) on = on_settings ();
  g_autoptr (GError) error = NULL;

  g_assert_true (lm_hwpower_apply (on, s, &error));
  g_assert_no_error (error);
  assert_applied (f);
  g_assert_true (lm_hwpower_saved (s));

  /* The pairs a conflict check compares against. */
  g_autoptr (GHashTable) applied = lm_hwpower_applied (s);
  g_assert_cmpuint (g_hash_table_size (applied), ==, 7);
  g_assert_cmpstr (g_hash_table_lookup (applied, HOST0), ==, "med_power_with_dipm");
  g_assert_cmpstr (g_hash_table_lookup (applied, NVME0 "/power/pm_qos_latency_tolerance_us"), ==,
                   "any");

  /* A second apply keeps the first originals. */
  g_free (on->sata_link_policy);
  on->sata_link_policy = g_strdup ("min_power");
  g_assert_true (lm_hwpower_apply (on, s, &error));
  assert_file (f, HOST0, "min_power");
  g_autofree char *orig = lm_journal_original (s, LM_HWPOWER_PART, HOST0);
  g_assert_cmpstr (orig, ==, "max_performance");

  g_assert_true (lm_hwpower_restore (s, &error));
  g_assert_no_error (error);
  assert_originals (f);
  g_assert_false (lm_hwpower_saved (s));
  g_autoptr (LmState) after = reload (f);
  g_assert_true (lm_state_is_empty (after));
}

/* Settings that no longer want a file put it back on the next apply. */
static void
test_reapply_drops (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = state_path (f);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (LmSettings) on = on_settings ();

  g_assert_true (lm_hwpower_apply (on, s, NULL));
  g_free (on->nvme_latency_tolerance);
  on->nvme_latency_tolerance = g_strdup ("keep");
  g_free (on->sata_link_policy);
  on->sata_link_policy = g_strdup ("");
  on->runtime_pm_autosuspend_ms = 0;
  g_assert_true (lm_hwpower_apply (on, s, NULL));
  assert_file (f, NVME0 "/power/pm_qos_latency_tolerance_us", "100000");
  assert_file (f, HOST0, "max_performance");
  assert_file (f, SDA_DEV "/power/autosuspend_delay_ms", "-1");
  assert_file (f, SDA_DEV "/power/control", "auto");
  on->runtime_pm = FALSE;
  g_assert_true (lm_hwpower_apply (on, s, NULL));
  g_assert_false (lm_hwpower_saved (s));
  assert_originals (f);
}

/* A crash leaves one of: journal not yet durable (nothing changed), journal
 * durable and sysfs not (yet) written, sysfs written, or a restore that
 * wrote some originals before it could forget them. The next start's
 * restore puts back exactly the originals in each. */
static void
put_originals (LmFakeRoot *f, gboolean all)
{
  lm_fake_root_put (f, HOST0, "max_performance\n");
  lm_fake_root_put (f, NVME0 "/power/pm_qos_latency_tolerance_us", "100000\n");
  if (all)
    {
      lm_fake_root_put (f, HOST1, "keep_firmware_settings\n");
      lm_fake_root_put (f, AHCI "/power/control", "on\n");
      lm_fake_root_put (f, SDA_DEV "/power/control", "on\n");
      lm_fake_root_put (f, SDA_DEV "/power/autosuspend_delay_ms", "-1\n");
      lm_fake_root_put (f, NVME_PCI "/power/control", "on\n");
    }
}

static void
test_crash (LmFakeRoot *f, gconstpointer data)
{
  static const char *const points[]
      = { "before-commit", "after-commit", "after-writes", "mid-restore" };

  for (gsize i = 0; i < G_N_ELEMENTS (points); i++)
    {
      g_autofree char *path = state_path (f);
      g_autoptr (LmSettings) on = on_settings ();
      g_autoptr (GError) error = NULL;

      g_test_message ("crash %s", points[i]);
      {
        g_autoptr (LmState) s = lm_state_new (path);
        g_assert_true (lm_hwpower_apply (on, s, NULL));
      }
      if (g_str_equal (points[i], "before-commit"))
        {
          /* Nothing durable, nothing written. */
          g_unlink (path);
          put_originals (f, TRUE);
        }
      else if (g_str_equal (points[i], "after-commit"))
        put_originals (f, TRUE); /* the journal is there, the writes never came */
      else if (g_str_equal (points[i], "mid-restore"))
        put_originals (f, FALSE); /* two originals back, none forgotten */

      g_autoptr (LmState) s = reload (f);
      g_assert_true (lm_hwpower_restore (s, &error));
      g_assert_no_error (error);
      if (g_str_equal (points[i], "before-commit") || g_str_equal (points[i], "after-commit"))
        assert_file (f, HOST1, "keep_firmware_settings");
      else
        assert_originals (f);
      lm_fake_root_put (f, HOST1, "keep_firmware_settings\n");
      g_autoptr (LmState) after = reload (f);
      g_assert_true (lm_state_is_empty (after));
    }
}

static void
test_someone_else (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = state_path (f);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (LmSettings) on = on_settings ();

  g_assert_true (lm_hwpower_apply (on, s, NULL));
  /* powertop, TLP or an admin, while laptop mode is on. */
  lm_fake_root_put (f, HOST0, "min_power\n");
  lm_fake_root_put (f, SDA_DEV "/power/autosuspend_delay_ms", "2000\n");
  /* A re-apply leaves theirs alone too. */
  g_assert_true (lm_hwpower_apply (on, s, NULL));
  assert_file (f, HOST0, "min_power");
  g_assert_true (lm_hwpower_restore (s, NULL));
  assert_file (f, HOST0, "min_power");
  assert_file (f, SDA_DEV "/power/autosuspend_delay_ms", "2000");
  assert_file (f, SDA_DEV "/power/control", "on");
  assert_file (f, NVME0 "/power/pm_qos_latency_tolerance_us", "100000");
  g_assert_false (lm_hwpower_saved (s));
}

static void
test_excluded (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = state_path (f);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (LmSettings) on = on_settings ();
  g_autoptr (GVariant) policy
      = g_variant_ref_sink (g_variant_new_parsed ("{'sda': {'Exclude': <true>}, 'nvme0n1': "
                                                  "{'RuntimePM': <false>}}"));

  g_assert_true (lm_disk_policies_update (on->disks, policy, NULL));
  g_assert_true (lm_hwpower_apply (on, s, NULL));
  /* Nothing on sda's host or controller; host1 is on the same controller
   * but holds no excluded disk. */
  assert_file (f, HOST0, "max_performance");
  assert_file (f, SDA_DEV "/power/control", "on");
  assert_file (f, AHCI "/power/control", "on");
  assert_file (f, HOST1, "med_power_with_dipm");
  /* nvme0n1: its tolerance, but no runtime PM. */
  assert_file (f, NVME0 "/power/pm_qos_latency_tolerance_us", "any");
  assert_file (f, NVME_PCI "/power/control", "on");
  g_assert_true (lm_hwpower_restore (s, NULL));
  assert_originals (f);
}

/* After a reboot the daemon may restore before a disk's host is probed:
 * a saved file that is not there (yet) is no tampering, so no warning
 * (fatal here): the entry is dropped quietly, the kernel starts it
 * afresh. A file that is there but reached through a link elsewhere still
 * is refused (test_link_out_of_root). */
static void
test_gone_at_boot (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = state_path (f);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (LmSettings) on = on_settings ();
  g_autofree char *host = g_build_filename (f->root, AHCI "/ata1", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_true (lm_hwpower_apply (on, s, &error));
  g_assert_no_error (error);
  g_assert_true (lm_hwpower_saved (s));
  /* The reboot: a new daemon reads the state file; host0 not probed yet. */
  g_autoptr (LmState) after = reload (f);
  g_autofree char *moved = g_strconcat (host, ".away", NULL);
  g_assert_cmpint (g_rename (host, moved), ==, 0);
  g_assert_true (lm_hwpower_restore (after, &error));
  g_assert_no_error (error);
  g_autofree char *orig = lm_journal_original (after, LM_HWPOWER_PART, HOST0);
  g_assert_null (orig);
  g_assert_cmpint (g_rename (moved, host), ==, 0);
  /* The ports that are there are put back (keep_firmware_settings takes
   * no write: the nearest). */
  assert_file (f, HOST1, "max_performance");
}

/* A link out of the root (absolute, as a tampered tree could have) is
 * never followed to a write. */
static void
test_link_out_of_root (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *outside = g_dir_make_tmp ("lm-outside-XXXXXX", NULL);
  g_autofree char *file = g_build_filename (outside, "link_power_management_policy", NULL);
  g_autofree char *path = state_path (f);
  g_autoptr (LmState) s = lm_state_new (path);
  g_autoptr (LmSettings) on = on_settings ();
  g_autofree char *contents = NULL;

  g_assert_true (g_file_set_contents (file, "max_performance\n", -1, NULL));
  lm_fake_root_link (f, "/sys/class/scsi_host/host9", outside);
  g_assert_true (lm_hwpower_apply (on, s, NULL));
  g_assert_true (g_file_get_contents (file, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "max_performance\n");
  g_autoptr (GHashTable) applied = lm_hwpower_applied (s);
  GHashTableIter iter;
  gpointer key;
  g_hash_table_iter_init (&iter, applied);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_assert_true (g_str_has_prefix (key, "/sys/devices/"));
  g_assert_true (lm_hwpower_restore (s, NULL));
  g_unlink (file);
  g_rmdir (outside);
}

/* Without CAP_DAC_OVERRIDE (dropped in a child), a read-only file is a
 * write the kernel refuses: it stays as it was and leaves the journal. */
static void
drop_dac_override (void)
{
  struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct caps[2];

  g_assert_cmpint (syscall (SYS_capget, &hdr, caps), ==, 0);
  caps[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_FOWNER));
  g_assert_cmpint (syscall (SYS_capset, &hdr, caps), ==, 0);
}

static void
test_refused (LmFakeRoot *f, gconstpointer data)
{
  g_autofree char *path = state_path (f);
  g_autofree char *host0 = g_build_filename (f->root, HOST0, NULL);
  g_autoptr (LmSettings) on = on_settings ();

  if (g_test_subprocess ())
    {
      g_autoptr (LmState) s = lm_state_new (path);
      g_autoptr (GError) error = NULL;

      drop_dac_override ();
      g_assert_cmpint (chmod (host0, 0444), ==, 0);
      g_assert_false (lm_hwpower_apply (on, s, &error));
      g_assert_nonnull (strstr (error->message, "link_power_management_policy"));
      assert_file (f, HOST0, "max_performance");
      assert_file (f, HOST1, "med_power_with_dipm");
      g_autoptr (LmState) disk = reload (f);
      g_autofree char *orig = lm_journal_original (disk, LM_HWPOWER_PART, HOST0);
      g_autofree char *orig1 = lm_journal_original (disk, LM_HWPOWER_PART, HOST1);
      g_assert_null (orig);
      g_assert_cmpstr (orig1, ==, "keep_firmware_settings");
      g_assert_true (lm_hwpower_restore (s, NULL));
      assert_file (f, HOST1, "max_performance");
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_describe (LmFakeRoot *f, gconstpointer data)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  const char *v = NULL;

  lm_hwpower_describe_disk ("sda", &b);
  g_autoptr (GVariant) d = g_variant_ref_sink (g_variant_builder_end (&b));
  g_assert_true (g_variant_lookup (d, "SataHost", "&s", &v));
  g_assert_cmpstr (v, ==, "host0");
  g_assert_true (g_variant_lookup (d, "LinkPolicy", "&s", &v));
  g_assert_cmpstr (v, ==, "max_performance");
  g_assert_true (g_variant_lookup (d, "RuntimePM", "&s", &v));
  g_assert_cmpstr (v, ==, "on");
  g_assert_true (g_variant_lookup (d, "Controller", "&s", &v));
  g_assert_cmpstr (v, ==, "0000:00:1f.2");
  g_assert_false (g_variant_lookup (d, "NvmeLatencyToleranceUs", "&s", &v));

  g_auto (GVariantBuilder) n = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  lm_hwpower_describe_disk ("nvme0n1", &n);
  g_autoptr (GVariant) nd = g_variant_ref_sink (g_variant_builder_end (&n));
  g_assert_true (g_variant_lookup (nd, "NvmeLatencyToleranceUs", "&s", &v));
  g_assert_cmpstr (v, ==, "100000");
  g_assert_true (g_variant_lookup (nd, "Controller", "&s", &v));
  g_assert_cmpstr (v, ==, "0000:3d:00.0");
  g_assert_false (g_variant_lookup (nd, "SataHost", "&s", &v));
}

static void
test_check_latency (void)
{
  static const char *const good[] = { "keep", "", "auto", "any", "0", "100000", "2147483647" };
  static const char *const bad[] = { "-1", "2147483648", "0x10", "10us", "sideways", " 5" };

  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    g_assert_true (lm_limits_check_latency (good[i], NULL));
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_false (lm_limits_check_latency (bad[i], &error));
      g_assert_nonnull (strstr (error->message, "NvmeLatencyToleranceUs"));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(name, fn)                                                                              \
  g_test_add ("/hwpower/" name, LmFakeRoot, NULL, setup_sysfs, fn, lm_fake_root_teardown)
  ADD ("apply-restore", test_apply_restore);
  ADD ("reapply-drops", test_reapply_drops);
  ADD ("crash", test_crash);
  ADD ("someone-else", test_someone_else);
  ADD ("excluded", test_excluded);
  ADD ("link-out-of-root", test_link_out_of_root);
  ADD ("gone-at-boot", test_gone_at_boot);
  ADD ("refused", test_refused);
  ADD ("describe", test_describe);
  g_test_add_func ("/hwpower/check-latency", test_check_latency);
  return g_test_run ();
}
