/* test-nvme.c: NVMe parsing on recorded bytes (tests/data/nvme: qemu 7.2's
 * emulated controller, and a hand-made one with APST and non-operational
 * states): the controller lookup in sysfs, the admin reads through the
 * ioctl seam, and the disk's worker; the bytes alone in test-nvme-parse.c. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "lm-disk-nvme.h"
#include "lm-error.h"
#include "lm-nvme-admin.h"
#include "lm-nvme.h"
#include "test-fakeroot.h"
#include "test-nvme-data.h"

/* --- the controller in sysfs ------------------------------------------- */

#define PCI "sys/devices/pci0000:00/0000:00:02.0"

static void
test_controller (LmFakeRoot *f, gconstpointer data)
{
  lm_fake_root_put (f, PCI "/nvme/nvme0/dev", "241:0\n");
  lm_fake_root_put (f, PCI "/nvme/nvme0/nvme0n1/dev", "259:0\n");
  lm_fake_root_link (f, "sys/block/nvme0n1",
                     "../devices/pci0000:00/0000:00:02.0/nvme/nvme0/nvme0n1");
  lm_fake_root_link (f, PCI "/nvme/nvme0/nvme0n1/device", "../../nvme0");
  g_autofree char *want = g_build_filename (f->root, "dev", "nvme0", NULL);
  g_autofree char *got = lm_nvme_admin_controller ("nvme0n1");
  g_assert_cmpstr (got, ==, want);

  /* Native multipath: nvme1n1 hangs off nvme-subsys1; nvme1 is resetting,
   * nvme2 live. */
#define SUBSYS "sys/devices/virtual/nvme-subsystem/nvme-subsys1"
  lm_fake_root_put (f, SUBSYS "/nvme1n1/dev", "259:1\n");
  lm_fake_root_link (f, "sys/block/nvme1n1",
                     "../devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1");
  lm_fake_root_link (f, SUBSYS "/nvme1n1/device", "../../nvme-subsys1");
  lm_fake_root_put (f, PCI "/nvme/nvme1/dev", "241:1\n");
  lm_fake_root_put (f, PCI "/nvme/nvme1/state", "resetting\n");
  lm_fake_root_put (f, PCI "/nvme/nvme2/dev", "241:2\n");
  lm_fake_root_put (f, PCI "/nvme/nvme2/state", "live\n");
  lm_fake_root_link (f, SUBSYS "/nvme1", "../../../pci0000:00/0000:00:02.0/nvme/nvme1");
  lm_fake_root_link (f, SUBSYS "/nvme2", "../../../pci0000:00/0000:00:02.0/nvme/nvme2");
  g_autofree char *want2 = g_build_filename (f->root, "dev", "nvme2", NULL);
  g_autofree char *got2 = lm_nvme_admin_controller ("nvme1n1");
  g_assert_cmpstr (got2, ==, want2);

  /* Not NVMe, gone, or a name with a path in it. */
  lm_fake_root_put (f, "sys/block/sda/dev", "8:0\n");
  g_assert_null (lm_nvme_admin_controller ("sda"));
  g_assert_null (lm_nvme_admin_controller ("nvme9n1"));
  g_assert_null (lm_nvme_admin_controller ("nvme0n1/../../x"));
}

/* --- the admin reads through the seam ------------------------------------- */

typedef struct
{
  guint8 *identify;
  gsize identify_len;
  guint8 *apst;
  guint32 apst_result;
  int apst_rc;
  guint32 pm_result;
  int pm_rc;
  GPtrArray *log; /* "06/1", "0A/C", ... */
  GThread *thread;
  gboolean open_fails;
} Fake;

static Fake fake;

static gpointer
fake_open (const char *path, GError **error)
{
  if (fake.open_fails)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "Cannot open %s: No such device", path);
      return NULL;
    }
  return &fake;
}

static int
fake_admin (gpointer handle, const LmNvmeCommand *cmd, guint8 *data, guint32 *result)
{
  fake.thread = g_thread_self ();
  g_ptr_array_add (fake.log, g_strdup_printf ("%02X/%X", cmd->opcode, cmd->cdw10));
  if (cmd->opcode == LM_NVME_ADMIN_IDENTIFY)
    {
      g_assert_nonnull (data);
      g_assert_cmpuint (cmd->data_len, ==, 4096);
      memcpy (data, fake.identify, MIN (fake.identify_len, 4096));
      return 0;
    }
  if (cmd->cdw10 == LM_NVME_FEAT_APST)
    {
      g_assert_nonnull (data);
      g_assert_cmpuint (cmd->data_len, ==, 256);
      if (fake.apst_rc != 0)
        return fake.apst_rc;
      memcpy (data, fake.apst, 256);
      *result = fake.apst_result;
      return 0;
    }
  g_assert_null (data);
  *result = fake.pm_result;
  return fake.pm_rc;
}

static void
fake_close (gpointer handle)
{
}

static const LmNvmeAdminOps fake_ops = { "fake", fake_open, fake_admin, fake_close };

static void
fake_setup (const char *identify)
{
  gsize len;

  memset (&fake, 0, sizeof fake);
  fake.identify = load (identify, &fake.identify_len);
  fake.apst = load ("synthetic-apst-table.bin", &len);
  fake.apst_result = 1;
  fake.pm_result = 0x23;
  fake.log = g_ptr_array_new_with_free_func (g_free);
  lm_nvme_admin_set_ops (&fake_ops);
}

static void
fake_teardown (void)
{
  lm_nvme_admin_set_ops (NULL);
  g_free (fake.identify);
  g_free (fake.apst);
  g_ptr_array_unref (fake.log);
}

static char *
fake_log (void)
{
  g_ptr_array_add (fake.log, NULL);
  char *text = g_strjoinv (" ", (char **) fake.log->pdata);
  g_ptr_array_remove_index (fake.log, fake.log->len - 1);
  return text;
}

static void
test_read (void)
{
  LmNvmeReading r = { 0 };
  g_autoptr (GError) error = NULL;

  fake_setup ("synthetic-identify-5ps.bin");
  g_assert_true (lm_nvme_admin_read ("/dev/nvme0", &r, &error));
  g_assert_no_error (error);
  g_autofree char *log = fake_log ();
  g_assert_cmpstr (log, ==, "06/1 0A/C 0A/2");
  g_assert_true (r.have_identify && r.have_apst && r.have_state);
  g_assert_cmpuint (r.identify.n_states, ==, 5);
  g_assert_true (r.apst.enabled);
  g_assert_cmpuint (r.apst.entries[0].target, ==, 3);
  g_assert_cmpuint (r.state, ==, 3);
  g_assert_cmpuint (r.workload_hint, ==, 1);

  /* Identify is read once per device. */
  fake.pm_result = 0x04;
  g_assert_true (lm_nvme_admin_read ("/dev/nvme0", &r, NULL));
  g_autofree char *log2 = fake_log ();
  g_assert_cmpstr (log2, ==, "06/1 0A/C 0A/2 0A/C 0A/2");
  g_assert_cmpuint (r.state, ==, 4);

  /* The current state unreadable: FALSE, the reason with the path. */
  fake.pm_rc = -EIO;
  g_assert_false (lm_nvme_admin_read ("/dev/nvme0", &r, &error));
  g_assert_error (error, LM_ERROR, LM_ERROR_KERNEL);
  g_assert_nonnull (strstr (error->message, "/dev/nvme0"));
  g_assert_false (r.have_state);
  g_clear_error (&error);

  /* The controller's own status comes back as a refusal. */
  fake.pm_rc = 0x4002;
  g_assert_false (lm_nvme_admin_read ("/dev/nvme0", &r, &error));
  g_assert_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "code 0x02"));
  g_clear_error (&error);

  fake.open_fails = TRUE;
  g_assert_false (lm_nvme_admin_read ("/dev/nvme0", &r, &error));
  g_assert_nonnull (strstr (error->message, "Cannot open /dev/nvme0"));
  fake_teardown ();
}

/* qemu 7.2: no APST (APSTA clear), so Get Features APST is never sent. */
static void
test_read_qemu (void)
{
  LmNvmeReading r = { 0 };
  g_autoptr (GError) error = NULL;

  fake_setup ("qemu-7.2-identify-ctrl.bin");
  fake.pm_result = 0;
  g_assert_true (lm_nvme_admin_read ("/dev/nvme0", &r, &error));
  g_autofree char *log = fake_log ();
  g_assert_cmpstr (log, ==, "06/1 0A/2");
  g_assert_false (r.have_apst);
  g_assert_true (r.have_state);
  g_assert_cmpuint (r.state, ==, 0);
  fake_teardown ();
}

/* An APST-capable controller that still refuses the feature (as qemu's
 * answers 0x4002 when asked): the state is read anyway. */
static void
test_read_apst_refused (void)
{
  LmNvmeReading r = { 0 };
  g_autoptr (GError) error = NULL;

  fake_setup ("synthetic-identify-5ps.bin");
  fake.apst_rc = 0x4002;
  g_assert_true (lm_nvme_admin_read ("/dev/nvme0", &r, &error));
  g_assert_no_error (error);
  g_assert_false (r.have_apst);
  g_assert_true (r.have_state);

  /* Identify too short is refused and nothing else is sent. */
  LmNvmeReading r2 = { 0 };
  fake.identify[263] = 77;
  g_assert_false (lm_nvme_admin_read ("/dev/nvme0", &r2, &error));
  g_assert_nonnull (strstr (error->message, "78 power states"));
  g_assert_false (r2.have_identify);
  fake_teardown ();
}

/* --- the disk: worker thread, cache, when ------------------------------- */

static void
on_publish (gpointer disk, gpointer user_data)
{
  guint *published = user_data;

  g_assert_true (g_thread_self () == g_thread_self ()); /* main loop */
  g_assert_cmpstr (disk, ==, "nvme0n1");
  (*published)++;
}

static void
wait_published (guint *published, guint want)
{
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (*published < want && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (*published, ==, want);
}

static GVariant *
props (LmDiskNvme *nvme)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  lm_disk_nvme_add_props (nvme, &b);
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static void
test_disk (LmFakeRoot *f, gconstpointer data)
{
  guint published = 0;

  lm_fake_root_put (f, PCI "/nvme/nvme0/dev", "241:0\n");
  lm_fake_root_put (f, PCI "/nvme/nvme0/nvme0n1/dev", "259:0\n");
  lm_fake_root_put (f, PCI "/power/runtime_status", "active\n");
  lm_fake_root_link (f, "sys/block/nvme0n1",
                     "../devices/pci0000:00/0000:00:02.0/nvme/nvme0/nvme0n1");
  lm_fake_root_link (f, PCI "/nvme/nvme0/nvme0n1/device", "../../nvme0");
  lm_fake_root_link (f, PCI "/nvme/nvme0/device", "../../../0000:00:02.0");
  lm_fake_root_link (f, "sys/class/nvme/nvme0", "../../devices/pci0000:00/0000:00:02.0/nvme/nvme0");
  fake_setup ("synthetic-identify-5ps.bin");

  g_assert_null (lm_disk_nvme_new ("sda", on_publish, &published));
  LmDiskNvme *nvme = lm_disk_nvme_new ("nvme0n1", on_publish, &published);
  g_assert_nonnull (nvme);
  /* Before any I/O nothing was sent, and Disks says only where it is. */
  g_assert_cmpuint (fake.log->len, ==, 0);
  g_autoptr (GVariant) before = props (nvme);
  g_assert_true (g_variant_lookup (before, "NvmeController", "&s", NULL));
  g_assert_false (g_variant_lookup (before, "NvmePowerStates", "@aa{sv}", NULL));

  /* Excluded: never. */
  lm_disk_nvme_io_seen (nvme, TRUE);
  g_assert_cmpuint (lm_disk_nvme_reads (nvme), ==, 0);

  /* I/O seen: one read, in a worker thread, published on the main loop. */
  gint64 t0 = g_get_real_time ();
  lm_disk_nvme_io_seen (nvme, FALSE);
  lm_disk_nvme_io_seen (nvme, FALSE); /* in flight: not a second one */
  g_assert_cmpuint (lm_disk_nvme_reads (nvme), ==, 1);
  wait_published (&published, 1);
  g_assert_nonnull (fake.thread);
  g_assert_true (fake.thread != g_thread_self ());
  g_autofree char *log = fake_log ();
  g_assert_cmpstr (log, ==, "06/1 0A/C 0A/2");

  g_autoptr (GVariant) p = props (nvme);
  g_autoptr (GVariant) states = NULL;
  g_assert_true (g_variant_lookup (p, "NvmePowerStates", "@aa{sv}", &states));
  g_assert_cmpuint (g_variant_n_children (states), ==, 5);
  g_autoptr (GVariant) ps3 = g_variant_get_child_value (states, 3);
  guint32 u;
  double w;
  gboolean b;
  g_assert_true (g_variant_lookup (ps3, "State", "u", &u) && u == 3);
  g_assert_true (g_variant_lookup (ps3, "MaxPowerW", "d", &w));
  g_assert_cmpfloat_with_epsilon (w, 0.076, 1e-9);
  g_assert_true (g_variant_lookup (ps3, "EntryLatencyUs", "u", &u) && u == 210);
  g_assert_true (g_variant_lookup (ps3, "ExitLatencyUs", "u", &u) && u == 1200);
  g_assert_true (g_variant_lookup (ps3, "Operational", "b", &b) && !b);
  g_assert_true (g_variant_lookup (p, "NvmeApst", "b", &b) && b);
  g_assert_true (g_variant_lookup (p, "NvmeApstSupported", "b", &b) && b);
  g_autoptr (GVariant) table = NULL;
  g_assert_true (g_variant_lookup (p, "NvmeApstTable", "@a(uu)", &table));
  g_assert_cmpuint (g_variant_n_children (table), ==, 5);
  guint32 idle, target;
  g_variant_get_child (table, 3, "(uu)", &idle, &target);
  g_assert_cmpuint (idle, ==, 500);
  g_assert_cmpuint (target, ==, 4);
  g_assert_true (g_variant_lookup (p, "NvmePowerState", "u", &u) && u == 3);
  gint64 when;
  g_assert_true (g_variant_lookup (p, "NvmePowerStateRead", "x", &when));
  g_assert_cmpint (when, >=, t0);
  g_assert_false (g_variant_lookup (p, "NvmeError", "&s", NULL));

  /* Cached: more I/O within LM_NVME_REFRESH_S sends nothing. */
  lm_disk_nvme_io_seen (nvme, FALSE);
  g_assert_cmpuint (lm_disk_nvme_reads (nvme), ==, 1);
  lm_disk_nvme_free (nvme);

  /* A runtime-suspended controller is never asked. */
  lm_fake_root_put (f, PCI "/power/runtime_status", "suspended\n");
  nvme = lm_disk_nvme_new ("nvme0n1", on_publish, &published);
  lm_disk_nvme_io_seen (nvme, FALSE);
  g_assert_cmpuint (lm_disk_nvme_reads (nvme), ==, 0);

  /* Gone while a read is in flight: the read finishes and touches nothing. */
  lm_fake_root_put (f, PCI "/power/runtime_status", "active\n");
  lm_disk_nvme_io_seen (nvme, FALSE);
  g_assert_cmpuint (lm_disk_nvme_reads (nvme), ==, 1);
  guint dropped = lm_disk_nvme_dropped_reads ();
  lm_disk_nvme_free (nvme);
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (lm_disk_nvme_dropped_reads () == dropped && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (lm_disk_nvme_dropped_reads (), ==, dropped + 1);
  g_assert_cmpuint (published, ==, 1);
  fake_teardown ();
}

/* A failed first read is shown, and retried at the next I/O. */
static void
test_disk_error (LmFakeRoot *f, gconstpointer data)
{
  guint published = 0;

  lm_fake_root_put (f, PCI "/nvme/nvme0/dev", "241:0\n");
  lm_fake_root_link (f, "sys/block/nvme0n1",
                     "../devices/pci0000:00/0000:00:02.0/nvme/nvme0/nvme0n1");
  lm_fake_root_link (f, PCI "/nvme/nvme0/nvme0n1/device", "../../nvme0");
  fake_setup ("synthetic-identify-5ps.bin");
  fake.open_fails = TRUE;
  LmDiskNvme *nvme = lm_disk_nvme_new ("nvme0n1", on_publish, &published);
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_WARNING, "Disk nvme0n1: Cannot open *");
  lm_disk_nvme_io_seen (nvme, FALSE);
  wait_published (&published, 1);
  g_test_assert_expected_messages ();
  g_autoptr (GVariant) p = props (nvme);
  const char *message;
  g_assert_true (g_variant_lookup (p, "NvmeError", "&s", &message));
  g_assert_nonnull (strstr (message, "Cannot open"));
  g_assert_false (g_variant_lookup (p, "NvmePowerStates", "@aa{sv}", NULL));

  fake.open_fails = FALSE;
  lm_disk_nvme_io_seen (nvme, FALSE);
  wait_published (&published, 2);
  g_autoptr (GVariant) p2 = props (nvme);
  g_assert_false (g_variant_lookup (p2, "NvmeError", "&s", NULL));
  g_assert_true (g_variant_lookup (p2, "NvmePowerStates", "@aa{sv}", NULL));
  lm_disk_nvme_free (nvme);
  fake_teardown ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/nvme/controller", LmFakeRoot, NULL, lm_fake_root_setup, test_controller,
              lm_fake_root_teardown);
  g_test_add_func ("/nvme/read", test_read);
  g_test_add_func ("/nvme/read/qemu", test_read_qemu);
  g_test_add_func ("/nvme/read/apst-refused", test_read_apst_refused);
  g_test_add ("/nvme/disk", LmFakeRoot, NULL, lm_fake_root_setup, test_disk, lm_fake_root_teardown);
  g_test_add ("/nvme/disk/error", LmFakeRoot, NULL, lm_fake_root_setup, test_disk_error,
              lm_fake_root_teardown);
  return g_test_run ();
}
