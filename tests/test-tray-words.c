/* test-tray-words.c: the words laptop-mode-tray says in notifications and
 * problem reports (client/tray/lm-tray-view.c): spin-ups, bursts, failed
 * calls and reports, with outside names carrying control bytes. */
#include "test-tray-common.h"

static void
test_spin_up_words (void)
{
  g_auto (GVariantDict) dict = G_VARIANT_DICT_INIT (NULL);
  g_variant_dict_insert (&dict, "Time", "x", NOW_US);
  g_variant_dict_insert (&dict, "Disk", "s", "sda");
  g_variant_dict_insert (&dict, "Comm", "s", "kworker/u8:1");
  g_variant_dict_insert (&dict, "Pid", "u", 99);
  g_variant_dict_insert (&dict, "Operation", "s", "write");
  g_variant_dict_insert (&dict, "Via", "s", "writeback");
  g_variant_dict_insert (&dict, "Path", "s", "out\033.bin");
  g_variant_dict_insert (&dict, "SubmitterComm", "s", "dd\a");
  g_autoptr (GVariant) v = g_variant_ref_sink (g_variant_dict_end (&dict));
  LmTraySpinUp s;

  lm_tray_spin_up_from_variant (v, &s);
  g_assert_cmpint (s.time_us, ==, NOW_US);
  g_assert_cmpuint (s.pid, ==, 99);
  g_autofree char *text = lm_tray_view_spin_up_text (&s);
  g_assert_cmpstr (text, ==, "sda woken by kworker/u8:1 (99): write");
  g_autofree char *details = lm_tray_view_spin_up_details (&s);
  g_assert_cmpstr (details, ==, "At 09:37:05, file out\\x1b.bin, written back by dd\\x07");

  /* A direct read names no submitter, even if one came along. */
  s.via = "direct";
  s.path = NULL;
  s.time_us = 0;
  g_autofree char *direct = lm_tray_view_spin_up_details (&s);
  g_assert_cmpstr (direct, ==, "");

  /* Another user's, as a caller without monitor-all gets it. */
  g_autoptr (GVariant) other = g_variant_ref_sink (
      g_variant_new_parsed ("@a{sv} {'Disk': <'sda'>, 'Uid': <uint32 1001>, 'Operation': <'read'>, "
                            "'Via': <'direct'>, 'OtherUser': <true>}"));
  lm_tray_spin_up_from_variant (other, &s);
  g_autofree char *other_text = lm_tray_view_spin_up_text (&s);
  g_assert_cmpstr (other_text, ==, "sda woken by another user's process: read");
  g_autoptr (GVariant) records = g_variant_ref_sink (
      g_variant_new_parsed ("[@a{sv} {'Kind': <'spinup'>, 'Disk': <'sda'>, 'OtherUser': <true>}]"));
  g_autoptr (GHashTable) top = lm_tray_view_top_wakers (records);
  g_assert_cmpstr (g_hash_table_lookup (top, "sda"), ==, "another user's process");
  /* A program's named thread: the program is named, the thread a detail. */
  g_autoptr (GVariant) threaded = g_variant_ref_sink (g_variant_new_parsed (
      "{'Time': <int64 %x>, 'Disk': <'sda'>, 'Comm': <'firefox-esr'>, 'Thread': <'Cache2 I/O'>,"
      " 'Pid': <uint32 4242>, 'Operation': <'read'>, 'Via': <'direct'>}",
      (gint64) NOW_US));
  lm_tray_spin_up_from_variant (threaded, &s);
  g_autofree char *program = lm_tray_view_spin_up_text (&s);
  g_assert_cmpstr (program, ==, "sda woken by firefox-esr (4242): read");
  g_autofree char *thread = lm_tray_view_spin_up_details (&s);
  g_assert_cmpstr (thread, ==, "At 09:37:05, thread Cache2 I/O");
  /* The daemon's explanation first, and the unit (issue 50), escaped. */
  g_autoptr (GVariant) explained = g_variant_ref_sink (g_variant_new_parsed (
      "{'Time': <int64 %x>, 'Disk': <'sda'>, 'Comm': <'smartd'>, 'Pid': <uint32 700>,"
      " 'Operation': <'read'>, 'Via': <'passthrough'>, 'Unit': <'smartmontools.service'>,"
      " 'Explanation': <'smartd checking the disk\\'s health every 30 min.\x1b'>}",
      (gint64) NOW_US));
  lm_tray_spin_up_from_variant (explained, &s);
  g_autofree char *why = lm_tray_view_spin_up_details (&s);
  g_assert_cmpstr (why, ==,
                   "smartd checking the disk's health every 30 min.\\x1b\n"
                   "At 09:37:05, unit smartmontools.service");
  s.time_us = 0;
  g_autofree char *why_no_time = lm_tray_view_spin_up_details (&s);
  g_assert_cmpstr (
      why_no_time, ==,
      "smartd checking the disk's health every 30 min.\\x1b\nunit smartmontools.service");

  g_autoptr (GVariant) empty = g_variant_ref_sink (g_variant_new_parsed ("@a{sv} {}"));
  lm_tray_spin_up_from_variant (empty, &s);
  g_assert_null (s.disk);
  g_assert_cmpint (s.time_us, ==, 0);
}

static void
test_burst_words (void)
{
  g_autoptr (GHashTable) counts = g_hash_table_new (g_str_hash, g_str_equal);
  g_hash_table_insert (counts, "firefox", GUINT_TO_POINTER (2));
  g_hash_table_insert (counts, "cron", GUINT_TO_POINTER (3));
  g_hash_table_insert (counts, "at\033d", GUINT_TO_POINTER (2));
  g_autofree char *text = lm_tray_view_burst_text (counts, 7);

  /* Most first, then by name. */
  g_assert_cmpstr (text, ==, "7 spin-ups: cron ×3, at\\x1bd ×2, firefox ×2");
}

static void
test_call_failed_words (void)
{
  g_autofree char *summary = NULL, *body = NULL;
  g_autofree char *s2 = NULL, *b2 = NULL;
  g_autofree char *s3 = NULL, *b3 = NULL;
  g_autofree char *s4 = NULL, *b4 = NULL;

  lm_tray_view_call_failed ("Subscribe", TRUE, "Not authorized\033[2J", &summary, &body);
  g_assert_cmpstr (summary, ==, "Not allowed to watch disk spin-ups");
  assert_contains (body, "lacks the right " LM_ACTION_MONITOR ".");
  assert_contains (body, "\nNot authorized\\x1b[2J");

  /* The daemon escaped its input already: a backslash stays one. */
  lm_tray_view_call_failed ("SetMode", FALSE, "Unknown mode “a\\x07b”", &s2, &b2);
  g_assert_cmpstr (s2, ==, "Could not change the laptop mode setting");
  g_assert_cmpstr (b2, ==, "Unknown mode “a\\x07b”");

  lm_tray_view_call_failed ("Start", TRUE, NULL, &s3, &b3);
  g_assert_cmpstr (s3, ==, "Not allowed to switch laptop mode on");
  assert_contains (b3, LM_ACTION_SWITCH);

  lm_tray_view_no_daemon ("SetMode", &s4, &b4);
  g_assert_cmpstr (s4, ==, "Laptop mode is unavailable");
  g_assert_cmpstr (
      b4, ==, "laptop-moded is not running, so the tray cannot change the laptop mode setting.");
}

static void
test_report_failed_words (void)
{
  g_autofree char *s1 = NULL, *b1 = NULL, *s2 = NULL, *b2 = NULL;

  lm_tray_view_report_failed (LM_TRAY_REPORT_WRITE, "laptop-modectl report failed\033[2J", &s1,
                              &b1);
  g_assert_cmpstr (s1, ==, "Could not write today's report");
  g_assert_cmpstr (b1, ==, "laptop-modectl report failed\\x1b[2J");
  lm_tray_view_report_failed (LM_TRAY_REPORT_OPEN, "No handler", &s2, &b2);
  g_assert_cmpstr (s2, ==, "Could not open today's report");
  g_assert_cmpstr (b2, ==, "No handler");
}

int
main (int argc, char **argv)
{
  /* Clock times are local: the test's locality is UTC. */
  g_setenv ("TZ", "UTC", TRUE);
  g_setenv ("LC_ALL", "C", TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tray-view/spin-up-words", test_spin_up_words);
  g_test_add_func ("/tray-view/burst-words", test_burst_words);
  g_test_add_func ("/tray-view/call-failed-words", test_call_failed_words);
  g_test_add_func ("/tray-view/report-failed-words", test_report_failed_words);
  return g_test_run ();
}
