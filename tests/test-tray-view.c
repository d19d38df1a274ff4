/* test-tray-view.c: what laptop-mode-tray shows for each state of the daemon
 * (client/tray/lm-tray-view.c). Icon, status, tooltip, menu and notification words, with outside
 * names carrying control bytes; no bus, no desktop. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "test-tray-common.h"

static void
test_unavailable (void)
{
  LmTrayState s = { .available = FALSE, .mode = "on", .active = TRUE };
  g_auto (LmTrayView) v = { 0 };

  lm_tray_view_build (&s, &v);
  g_assert_cmpstr (v.icon_name, ==, "laptop-mode-unavailable");
  /* Worth seeing: hosts may hide passive items. */
  g_assert_cmpstr (v.status, ==, "Active");
  g_assert_cmpstr (v.title, ==, "Laptop mode unavailable");
  g_assert_cmpstr (v.body, ==, "laptop-moded is not running.");
  g_assert_false (v.can_switch);
  g_assert_false (v.toggle_checked);
  g_assert_null (v.mode_checked);
  g_assert_false (v.report_sensitive);
  g_assert_cmpstr (v.report_label, ==, LM_TRAY_REPORT_LABEL);
  g_assert_nonnull (v.spinup_lines);
  g_assert_null (v.spinup_lines[0]);
  g_assert_cmpstr (v.spinups_empty, ==, "None yet");
}

static void
test_icon_and_status (void)
{
  static const struct
  {
    gboolean active;
    const char *reason;
    const char *icon;
    const char *status;
    const char *title;
  } cases[] = {
    { TRUE, LM_REASON_ON_BATTERY, "laptop-mode-on", "Active", "Laptop mode is on" },
    { TRUE, LM_REASON_MANUAL, "laptop-mode-on", "Active", "Laptop mode is on" },
    { FALSE, LM_REASON_MANUAL, "laptop-mode-off", "Passive", "Laptop mode is off" },
    { FALSE, LM_REASON_AC, "laptop-mode-off", "Passive", "Laptop mode is off" },
    /* Held off or low battery: off, and not what the user chose. */
    { FALSE, LM_REASON_INHIBITED, "laptop-mode-inhibited", "Active", "Laptop mode is off" },
    { FALSE, LM_REASON_LOW_BATTERY, "laptop-mode-low-battery", "Active", "Laptop mode is off" },
    { TRUE, LM_REASON_LOW_BATTERY, "laptop-mode-low-battery", "Active", "Laptop mode is on" },
    { FALSE, "something-new", "laptop-mode-off", "Active", "Laptop mode is off" },
    { FALSE, NULL, "laptop-mode-off", "Active", "Laptop mode is off" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      LmTrayState s = on_battery ();
      g_auto (LmTrayView) v = { 0 };

      s.active = cases[i].active;
      s.reason = cases[i].reason;
      lm_tray_view_build (&s, &v);
      g_assert_cmpstr (v.icon_name, ==, cases[i].icon);
      g_assert_cmpstr (v.status, ==, cases[i].status);
      g_assert_cmpstr (v.title, ==, cases[i].title);
      g_assert_true (v.can_switch);
      g_assert_cmpint (v.toggle_checked, ==, cases[i].active);
      g_assert_cmpstr (v.mode_checked, ==, "auto");
      g_assert_true (v.report_sensitive);
    }
}

static void
test_body_words (void)
{
  LmTrayState s = on_battery ();
  g_auto (LmTrayView) v = { 0 };

  lm_tray_view_build (&s, &v);
  g_assert_cmpstr (v.body, ==, "Mode: auto (running on battery)\nMax lost work: 10 min");

  static const struct
  {
    guint seconds;
    const char *words;
  } lost[] = { { 600, "10 min" }, { 60, "1 min" }, { 45, "45 s" }, { 90, "90 s" }, { 0, "0 s" } };
  for (gsize i = 0; i < G_N_ELEMENTS (lost); i++)
    {
      g_auto (LmTrayView) w = { 0 };
      g_autofree char *want = g_strdup_printf ("Max lost work: %s", lost[i].words);
      s.max_lost_work = lost[i].seconds;
      lm_tray_view_build (&s, &w);
      assert_contains (w.body, want);
    }

  /* An unknown reason is shown as the daemon spelled it, escaped. */
  g_auto (LmTrayView) u = { 0 };
  s.reason = "new\033[2Jreason";
  s.mode = NULL;
  lm_tray_view_build (&s, &u);
  assert_contains (u.body, "Mode: unknown (new\\x1b[2Jreason)");
  assert_view_printable (&u);
}

static void
test_holds (void)
{
  LmTrayState s = on_battery ();
  g_auto (LmTrayView) one = { 0 };
  g_auto (LmTrayView) three = { 0 };

  s.active = FALSE;
  s.reason = LM_REASON_INHIBITED;
  s.n_holds = 1;
  s.hold_who = "backup\a";
  s.hold_why = "copying\033]0;owned\007 files\nnow";
  lm_tray_view_build (&s, &one);
  assert_contains (one.body,
                   "\nHeld off by backup\\x07: copying\\x1b]0;owned\\x07 files\\x0anow\n");
  assert_lacks (one.body, "more)");
  assert_view_printable (&one);

  s.n_holds = 3;
  lm_tray_view_build (&s, &three);
  assert_contains (three.body, "files\\x0anow (and 2 more)\n");
}

static LmTrayDiskDay
day (const char *disk, guint spinups, double share, const char *top)
{
  LmTrayDiskDay d
      = { .disk = disk, .spinups_today = spinups, .asleep_share = share, .top_waker = top };
  return d;
}

static void
test_today_with_monitor_right (void)
{
  LmTrayState s = on_battery ();
  LmTrayDiskDay days[] = { day ("sdb", 1, 0.5, "cron"), day ("sda", 6, 0.714, "firefox"),
                           day ("sdc", 0, 1.0, "ghost") };
  g_auto (LmTrayView) v = { 0 };

  s.days = days;
  s.n_days = G_N_ELEMENTS (days);
  lm_tray_view_build (&s, &v);
  /* In disk order; one spin-up is not plural; no spin-up, no waker. */
  g_assert_cmpstr (v.body, ==,
                   "Mode: auto (running on battery)\nMax lost work: 10 min\n"
                   "sda: 6 spin-ups today, asleep 71 %, most by firefox\n"
                   "sdb: 1 spin-up today, asleep 50 %, most by cron\n"
                   "sdc: 0 spin-ups today, asleep 100 %");
}

static void
test_today_without_names (void)
{
  LmTrayDiskDay days[] = { day ("sda", 6, 0.714, "firefox") };
  /* Denied or not known yet: no name, even if one was left over. */
  LmTrayMonitor monitors[] = { LM_TRAY_MONITOR_DENIED, LM_TRAY_MONITOR_UNKNOWN };

  for (gsize i = 0; i < G_N_ELEMENTS (monitors); i++)
    {
      LmTrayState s = on_battery ();
      g_auto (LmTrayView) v = { 0 };

      s.monitor = monitors[i];
      s.days = days;
      s.n_days = 1;
      lm_tray_view_build (&s, &v);
      assert_contains (v.body, "\nsda: 6 spin-ups today, asleep 71 %");
      assert_lacks (v.body, "firefox");
      assert_lacks (v.body, "most by");
    }

  /* Allowed, but GetLedger has not answered yet. */
  LmTrayState s = on_battery ();
  LmTrayDiskDay unknown[] = { day ("sda", 6, 0.714, NULL) };
  g_auto (LmTrayView) v = { 0 };
  s.days = unknown;
  s.n_days = 1;
  lm_tray_view_build (&s, &v);
  g_assert_true (g_str_has_suffix (v.body, "\nsda: 6 spin-ups today, asleep 71 %"));
}

static void
test_today_shares_and_limits (void)
{
  static const struct
  {
    double share;
    const char *words;
  } shares[] = { { 0.0, "asleep 0 %" },     { 0.004, "asleep 0 %" }, { 0.996, "asleep 100 %" },
                 { 1.7, "asleep 100 %" },   { -0.2, "asleep 0 %" },  { NAN, "asleep 0 %" },
                 { INFINITY, "asleep 0 %" } };

  for (gsize i = 0; i < G_N_ELEMENTS (shares); i++)
    {
      LmTrayState s = on_battery ();
      LmTrayDiskDay d = day ("sda", 2, shares[i].share, NULL);
      g_auto (LmTrayView) v = { 0 };
      s.days = &d;
      s.n_days = 1;
      lm_tray_view_build (&s, &v);
      assert_contains (v.body, shares[i].words);
    }

  /* Many disks: the first few by name, and how many more. */
  LmTrayState s = on_battery ();
  LmTrayDiskDay many[]
      = { day ("loop5", 0, 1, NULL), day ("sdb", 0, 1, NULL),     day ("loop1", 0, 1, NULL),
          day ("sda", 3, 0.2, "a"),  day ("nvme0n1", 0, 1, NULL), day ("loop0", 0, 1, NULL) };
  g_auto (LmTrayView) v = { 0 };
  s.days = many;
  s.n_days = G_N_ELEMENTS (many);
  lm_tray_view_build (&s, &v);
  assert_contains (v.body, "\nloop0: ");
  assert_contains (v.body, "\nnvme0n1: ");
  assert_lacks (v.body, "sda:");
  g_assert_true (g_str_has_suffix (v.body, "\nand 2 more disks (laptop-modectl report)"));
  /* The caller's array is left in its order. */
  g_assert_cmpstr (many[0].disk, ==, "loop5");
}

static void
test_today_names_escaped (void)
{
  LmTrayState s = on_battery ();
  LmTrayDiskDay d = day ("sd\033[31ma", 2, 0.5, "evil\033]0;x\007\r\nfox\342\200\256");
  g_auto (LmTrayView) v = { 0 };

  s.days = &d;
  s.n_days = 1;
  lm_tray_view_build (&s, &v);
  assert_contains (v.body, "sd\\x1b[31ma: 2 spin-ups today, asleep 50 %, most by "
                           "evil\\x1b]0;x\\x07\\x0d\\x0afox\\xe2\\x80\\xae");
  assert_view_printable (&v);
}

static void
test_recent_spinups (void)
{
  LmTrayState s = on_battery ();
  LmTraySpinUp recent[]
      = { spin_up (NOW_US, "sda", "cron", 13, "read"), spin_up (0, NULL, NULL, 0, NULL),
          spin_up (NOW_US - G_USEC_PER_SEC, "sda", "bad\033[2J\nname", 7, "write") };
  g_auto (LmTrayView) v = { 0 };

  s.recent = recent;
  s.n_recent = G_N_ELEMENTS (recent);
  lm_tray_view_build (&s, &v);
  g_assert_cmpuint (g_strv_length (v.spinup_lines), ==, 3);
  g_assert_cmpstr (v.spinup_lines[0], ==, "09:37:05  sda woken by cron (13): read");
  /* What the daemon left out shows as unknown, not as nothing. */
  g_assert_cmpstr (v.spinup_lines[1], ==, "? woken by ? (0): I/O");
  g_assert_cmpstr (v.spinup_lines[2], ==, "09:37:04  sda woken by bad\\x1b[2J\\x0aname (7): write");
  g_assert_true (
      g_str_has_suffix (v.body, "\nLast spin-up: 09:37:05  sda woken by cron (13): read"));
  assert_view_printable (&v);
}

static void
test_spinups_empty (void)
{
  static const struct
  {
    LmTrayMonitor monitor;
    gboolean unsupported;
    const char *words;
  } cases[] = {
    { LM_TRAY_MONITOR_UNKNOWN, FALSE, "None yet" },
    { LM_TRAY_MONITOR_ALLOWED, FALSE, "None yet" },
    { LM_TRAY_MONITOR_DENIED, FALSE, "Not allowed (needs " LM_ACTION_MONITOR ")" },
    { LM_TRAY_MONITOR_DENIED, TRUE, "Not allowed (needs " LM_ACTION_MONITOR ")" },
    { LM_TRAY_MONITOR_ALLOWED, TRUE, "Not available on this kernel" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      LmTrayState s = on_battery ();
      g_auto (LmTrayView) v = { 0 };
      s.monitor = cases[i].monitor;
      s.spinups_unsupported = cases[i].unsupported;
      lm_tray_view_build (&s, &v);
      g_assert_cmpstr (v.spinups_empty, ==, cases[i].words);
    }
}

static void
test_report_item (void)
{
  LmTrayState s = on_battery ();
  g_auto (LmTrayView) idle = { 0 };
  g_auto (LmTrayView) busy = { 0 };
  g_auto (LmTrayView) denied = { 0 };

  lm_tray_view_build (&s, &idle);
  g_assert_cmpstr (idle.report_label, ==, "Open _today's report");
  g_assert_true (idle.report_sensitive);
  s.report_running = TRUE;
  lm_tray_view_build (&s, &busy);
  g_assert_cmpstr (busy.report_label, ==, "Writing today's report…");
  g_assert_false (busy.report_sensitive);
  /* Without the monitor right the report still has the summary. */
  s.report_running = FALSE;
  s.monitor = LM_TRAY_MONITOR_DENIED;
  lm_tray_view_build (&s, &denied);
  g_assert_true (denied.report_sensitive);
}

static void
test_today_range (void)
{
  guint64 since, until;
  gint64 midnight = G_GINT64_CONSTANT (1796256000) * G_USEC_PER_SEC;

  lm_tray_view_today (NOW_US, &since, &until);
  g_assert_cmpuint (since, ==, (guint64) midnight);
  g_assert_cmpuint (until, ==, (guint64) midnight + G_GUINT64_CONSTANT (86400) * G_USEC_PER_SEC);
  lm_tray_view_today (midnight, &since, &until);
  g_assert_cmpuint (since, ==, (guint64) midnight);
}

static void
test_top_wakers (void)
{
  g_autoptr (GVariant) records = g_variant_ref_sink (
      g_variant_new_parsed ("[{'Kind': <'spinup'>, 'Disk': <'sda'>, 'Comm': <'firefox'>},"
                            " {'Kind': <'spinup'>, 'Disk': <'sda'>, 'Comm': <'cron'>},"
                            " {'Kind': <'spinup'>, 'Disk': <'sda'>, 'Comm': <'firefox'>},"
                            " {'Kind': <'asleep'>, 'Disk': <'sda'>, 'Comm': <'cron'>},"
                            " {'Kind': <'awake'>, 'Disk': <'sdb'>},"
                            " {'Kind': <'spinup'>, 'Disk': <'sdb'>, 'Comm': <'zsh'>},"
                            " {'Kind': <'spinup'>, 'Disk': <'sdb'>, 'Comm': <'bash'>},"
                            " {'Kind': <'spinup'>, 'Disk': <'sdc'>},"
                            " {'Disk': <'sdd'>, 'Comm': <'nokind'>}]"));
  g_autoptr (GHashTable) top = lm_tray_view_top_wakers (records);

  g_assert_cmpuint (g_hash_table_size (top), ==, 2);
  g_assert_cmpstr (g_hash_table_lookup (top, "sda"), ==, "firefox");
  /* A tie goes to the first name in byte order, so it does not flicker. */
  g_assert_cmpstr (g_hash_table_lookup (top, "sdb"), ==, "bash");

  g_autoptr (GVariant) none = g_variant_ref_sink (g_variant_new_parsed ("@aa{sv} []"));
  g_autoptr (GHashTable) empty = lm_tray_view_top_wakers (none);
  g_assert_cmpuint (g_hash_table_size (empty), ==, 0);
}

/* An NVMe-only laptop: the tooltip says about how long the drive sat in
 * its deepest state and the energy, estimated, from which table; or that
 * APST is off. nvme0n1 comes from a daemon that names its estimates,
 * nvme2n1 from one that sends only the older unsuffixed keys. */
static void
test_today_nvme (void)
{
  LmTrayState s = on_battery ();
  g_autoptr (GVariant) summary = g_variant_ref_sink (g_variant_new_parsed (
      "{'nvme0n1': {'SpinUpsToday': <uint32 3>, 'AsleepShareToday': <0.9>, "
      "'Apst': <'enabled'>, 'DeepestState': <uint32 4>, 'DeepIdleShareTodayEstimate': <0.414>, "
      "'DeepIdleShareStockTodayEstimate': <0.12>, 'EnergyWhTodayEstimate': <1.9>, "
      "'EnergyWhStockTodayEstimate': <2.6>, 'EnergySource': <'idlp_actp'>}, "
      "'nvme1n1': {'SpinUpsToday': <uint32 0>, 'AsleepShareToday': <1.0>, "
      "'Apst': <'absent'>, 'DeepestState': <uint32 0>}, "
      "'nvme2n1': {'SpinUpsToday': <uint32 1>, 'AsleepShareToday': <0.5>, "
      "'Apst': <'enabled'>, 'DeepestState': <uint32 3>, 'DeepIdleShareToday': <0.5>, "
      "'DeepIdleShareStockToday': <0.25>, 'EnergyWhToday': <0.5>, "
      "'EnergyWhStockToday': <0.75>, 'EnergySource': <'max_power'>, "
      "'EstimateUnsure': <'some data went to a filesystem the estimate has no model of "
      "(taken as ext4\\'s)'>}}"));
  g_autoptr (GArray) days = lm_tray_disk_days_from_variant (summary, NULL);
  g_auto (LmTrayView) v = { 0 };

  s.days = (const LmTrayDiskDay *) days->data;
  s.n_days = days->len;
  lm_tray_view_build (&s, &v);
  g_assert_cmpstr (v.body, ==,
                   "Mode: auto (running on battery)\nMax lost work: 10 min\n"
                   "nvme0n1: 3 spin-ups today, asleep 90 %\n"
                   "nvme0n1: PS4 about 41 % of today, estimated (stock writeback about 12 %), "
                   "about 1.90 Wh against 2.60 Wh, from the drive's IDLP/ACTP\n"
                   "nvme1n1: 0 spin-ups today, asleep 100 %\n"
                   "nvme1n1: APST absent, no deep idle when quiet\n"
                   "nvme2n1: 1 spin-up today, asleep 50 %\n"
                   "nvme2n1: PS3 about 50 % of today, estimated (stock writeback about 25 %), "
                   "about 0.50 Wh against 0.75 Wh, from maximum power, an upper bound "
                   "(less sure: some data went to a filesystem the estimate has no model of "
                   "(taken as ext4's))");
}

static void
test_days_from_summary (void)
{
  g_autoptr (GVariant) summary = g_variant_ref_sink (
      g_variant_new_parsed ("{'sda': {'SpinUpsToday': <uint32 6>, 'AsleepShareToday': <0.71>, "
                            "'LastWake': <uint64 5>}, 'sdb': @a{sv} {}}"));
  g_autoptr (GHashTable) top = g_hash_table_new (g_str_hash, g_str_equal);
  g_hash_table_insert (top, "sda", "firefox");
  g_autoptr (GArray) days = lm_tray_disk_days_from_variant (summary, top);

  g_assert_cmpuint (days->len, ==, 2);
  for (guint i = 0; i < days->len; i++)
    {
      LmTrayDiskDay *d = &g_array_index (days, LmTrayDiskDay, i);
      if (g_str_equal (d->disk, "sda"))
        {
          g_assert_cmpuint (d->spinups_today, ==, 6);
          g_assert_cmpfloat_with_epsilon (d->asleep_share, 0.71, 1e-9);
          g_assert_cmpuint (d->last_wake_us, ==, 5);
          g_assert_cmpstr (d->top_waker, ==, "firefox");
        }
      else
        {
          g_assert_cmpstr (d->disk, ==, "sdb");
          g_assert_cmpuint (d->spinups_today, ==, 0);
          g_assert_null (d->top_waker);
        }
    }

  g_autoptr (GVariant) wrong = g_variant_ref_sink (g_variant_new_parsed ("@a{sv} {}"));
  g_autoptr (GArray) none = lm_tray_disk_days_from_variant (wrong, NULL);
  g_assert_cmpuint (none->len, ==, 0);
  g_autoptr (GArray) null = lm_tray_disk_days_from_variant (NULL, NULL);
  g_assert_cmpuint (null->len, ==, 0);
}

int
main (int argc, char **argv)
{
  /* Clock times and midnight are local: the test's locality is UTC. */
  g_setenv ("TZ", "UTC", TRUE);
  g_setenv ("LC_ALL", "C", TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tray-view/unavailable", test_unavailable);
  g_test_add_func ("/tray-view/icon-and-status", test_icon_and_status);
  g_test_add_func ("/tray-view/body-words", test_body_words);
  g_test_add_func ("/tray-view/holds", test_holds);
  g_test_add_func ("/tray-view/today-with-monitor-right", test_today_with_monitor_right);
  g_test_add_func ("/tray-view/today-without-names", test_today_without_names);
  g_test_add_func ("/tray-view/today-shares-and-limits", test_today_shares_and_limits);
  g_test_add_func ("/tray-view/today-names-escaped", test_today_names_escaped);
  g_test_add_func ("/tray-view/recent-spinups", test_recent_spinups);
  g_test_add_func ("/tray-view/spinups-empty", test_spinups_empty);
  g_test_add_func ("/tray-view/report-item", test_report_item);
  g_test_add_func ("/tray-view/today-range", test_today_range);
  g_test_add_func ("/tray-view/top-wakers", test_top_wakers);
  g_test_add_func ("/tray-view/days-from-summary", test_days_from_summary);
  g_test_add_func ("/tray-view/today-nvme", test_today_nvme);
  return g_test_run ();
}
