/* lm-ctl-spinups.c: laptop-modectl watch and spinups.
 * Owns how a spin-up reads, one line each, as words or as JSON; the
 * process and file names in it come from any user and are printed escaped. */
#include "config.h"

#include <glib-unix.h>
#include <stdio.h>
#include <stdlib.h>

#include "lm-ctl-report-model.h"
#include "lm-ctl.h"

static char *
spinup_text (GVariant *dict)
{
  const char *disk = "?", *comm = "?", *op = "?", *via = "direct", *path = NULL, *sub = NULL;
  const char *thread = NULL, *note = NULL;
  guint32 pid = 0, uid = 0, sub_pid = 0;
  gint64 time_us = 0;
  guint64 sector = 0, inode = 0;

  g_variant_lookup (dict, "Disk", "&s", &disk);
  g_variant_lookup (dict, "Comm", "&s", &comm);
  g_variant_lookup (dict, "Thread", "&s", &thread);
  g_variant_lookup (dict, "Note", "&s", &note);
  g_variant_lookup (dict, "Operation", "&s", &op);
  g_variant_lookup (dict, "Via", "&s", &via);
  g_variant_lookup (dict, "Path", "&s", &path);
  g_variant_lookup (dict, "SubmitterComm", "&s", &sub);
  g_variant_lookup (dict, "Pid", "u", &pid);
  g_variant_lookup (dict, "SubmitterPid", "u", &sub_pid);
  g_variant_lookup (dict, "Time", "x", &time_us);
  g_variant_lookup (dict, "Sector", "t", &sector);
  gboolean has_uid = g_variant_lookup (dict, "Uid", "u", &uid);
  gboolean has_inode = g_variant_lookup (dict, "Inode", "t", &inode);
  gboolean other = FALSE;
  g_variant_lookup (dict, "OtherUser", "b", &other);

  g_autoptr (GDateTime) secs = g_date_time_new_from_unix_local (time_us / G_USEC_PER_SEC);
  g_autoptr (GDateTime) dt = secs != NULL ? g_date_time_add (secs, time_us % G_USEC_PER_SEC) : NULL;
  g_autofree char *when = dt != NULL ? g_date_time_format (dt, "%F %T.%f") : g_strdup ("?");
  g_autofree char *s_disk = lm_ctl_safe (disk);
  g_autofree char *s_op = lm_ctl_safe (op);
  g_autofree char *s_comm = lm_ctl_safe (comm);
  g_autoptr (GString) out = g_string_new (NULL);
  if (other)
    {
      /* Sent without its process, pid or file: say so, nothing more. */
      g_string_printf (out, "%s  %-8s %-5s %s", when, s_disk, s_op, LM_OTHER_USER_TEXT);
      if (has_uid)
        g_string_append_printf (out, " uid %u", uid);
      return g_string_free (g_steal_pointer (&out), FALSE);
    }
  g_string_printf (out, "%s  %-8s %-5s %s[%u]", when, s_disk, s_op, s_comm, pid);
  if (thread != NULL)
    {
      g_autofree char *s_thread = lm_ctl_safe (thread);
      g_string_append_printf (out, " thread %s", s_thread);
    }
  if (has_uid)
    g_string_append_printf (out, " uid %u", uid);
  /* A passthrough command has no sector. */
  if (!g_str_equal (via, "passthrough"))
    g_string_append_printf (out, " sector %" G_GUINT64_FORMAT, sector);
  if (g_str_equal (via, "writeback"))
    {
      g_autofree char *s_sub = lm_ctl_safe (sub ? sub : "?");
      g_string_append_printf (out, " via writeback by %s[%u]", s_sub, sub_pid);
    }
  else if (!g_str_equal (via, "direct"))
    {
      g_autofree char *s_via = lm_ctl_safe (via);
      g_string_append_printf (out, " via %s", s_via);
    }
  if (has_inode)
    g_string_append_printf (out, " inode %" G_GUINT64_FORMAT, inode);
  if (path != NULL)
    {
      g_autofree char *s_path = lm_ctl_safe (path);
      g_string_append_printf (out, " (%s)", s_path);
    }
  /* What else is known: the daemon's own command, kswapd's page-out. */
  if (note != NULL)
    {
      g_autofree char *s_note = lm_ctl_safe (note);
      g_string_append_printf (out, ": %s", s_note);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* As JSON: the D-Bus keys as they are, so scripts and the interface
 * documentation agree, and the names' real characters JSON-escaped. */
static void
print_spinup (GVariant *dict, gboolean json)
{
  if (json)
    {
      lm_ctl_print_variant_json (dict);
      return;
    }
  g_autofree char *line = spinup_text (dict);
  g_print ("%s\n", line);
  fflush (stdout);
}

typedef struct
{
  GMainLoop *loop;
  gboolean json;
  int status;
} LmWatch;

static void
on_spin_up (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
            const char *signal, GVariant *params, gpointer user_data)
{
  LmWatch *w = user_data;
  g_autoptr (GVariant) dict = NULL;

  if (!g_variant_is_of_type (params, G_VARIANT_TYPE ("(a{sv})")))
    return;
  g_variant_get (params, "(@a{sv})", &dict);
  print_spinup (dict, w->json);
}

static void
on_daemon_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  LmWatch *w = user_data;

  g_printerr ("%s: laptop-moded left the bus\n", lm_ctl_prog);
  w->status = EXIT_FAILURE;
  g_main_loop_quit (w->loop);
}

static gboolean
on_quit_signal (gpointer user_data)
{
  LmWatch *w = user_data;

  /* Kept: lm_ctl_watch removes both handlers after the loop. */
  g_main_loop_quit (w->loop);
  return G_SOURCE_CONTINUE;
}

static char *
attribution (LmExportedLaptopMode *proxy)
{
  const char *a = lm_exported_laptop_mode_get_attribution (proxy);

  return lm_ctl_safe (a != NULL ? a : "?");
}

int
lm_ctl_watch (int argc, char **argv)
{
  LmWatch w = { 0 };
  const GOptionEntry entries[]
      = { { "json", 'j', 0, G_OPTION_ARG_NONE, &w.json, "Print one JSON object per line", NULL },
          { NULL } };
  g_autoptr (GError) error = NULL;

  if (!lm_ctl_parse_options (
          &argc, &argv, NULL,
          "Print each disk spin-up as it happens: which process woke which disk.\n"
          "Needs the monitor right, as it shows every user's process names.",
          entries))
    return LM_CTL_EXIT_USAGE;
  if (argc > 1)
    return lm_ctl_no_arguments (argc, argv);

  g_autoptr (LmExportedLaptopMode) proxy = lm_ctl_get_proxy ();
  if (proxy == NULL)
    return EXIT_FAILURE;
  GDBusConnection *connection = g_dbus_proxy_get_connection (G_DBUS_PROXY (proxy));
  g_autofree char *owner = g_dbus_proxy_get_name_owner (G_DBUS_PROXY (proxy));

  w.loop = g_main_loop_new (NULL, FALSE);
  /* Listen before subscribing, so that no spin-up falls in between. The
   * signal comes from the daemon's unique name, addressed to us alone. */
  guint sub = g_dbus_connection_signal_subscribe (connection, owner, LM_INTERFACE, "SpinUp",
                                                  LM_OBJECT_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                  on_spin_up, &w, NULL);
  guint watch = g_bus_watch_name_on_connection (connection, owner, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                NULL, on_daemon_vanished, &w, NULL);
  g_autoptr (GVariant) reply = lm_ctl_call (proxy, "Subscribe", NULL, &error);
  if (reply == NULL)
    {
      lm_ctl_print_error ("cannot watch spin-ups", error);
      g_dbus_connection_signal_unsubscribe (connection, sub);
      g_bus_unwatch_name (watch);
      g_main_loop_unref (w.loop);
      return EXIT_FAILURE;
    }
  g_autofree char *how = attribution (proxy);
  g_printerr ("Watching spin-ups (attribution: %s); Ctrl+C stops\n", how);
  guint sigint = g_unix_signal_add (SIGINT, on_quit_signal, &w);
  guint sigterm = g_unix_signal_add (SIGTERM, on_quit_signal, &w);
  g_main_loop_run (w.loop);
  g_source_remove (sigint);
  g_source_remove (sigterm);
  g_dbus_connection_signal_unsubscribe (connection, sub);
  g_bus_unwatch_name (watch);
  g_main_loop_unref (w.loop);
  return w.status;
}

typedef struct
{
  char *comm;
  guint32 pid;
  guint reads, writes, writeback;
} LmSpinupSummary;

static void
summary_free (gpointer p)
{
  LmSpinupSummary *s = p;

  g_free (s->comm);
  g_free (s);
}

static gint
by_count (gconstpointer a, gconstpointer b)
{
  const LmSpinupSummary *x = *(LmSpinupSummary *const *) a;
  const LmSpinupSummary *y = *(LmSpinupSummary *const *) b;

  return (gint) (y->reads + y->writes) - (gint) (x->reads + x->writes);
}

/* @by_unit: rows per systemd unit (or application), not per process. */
static void
count (GHashTable *per_process, GVariant *d, gboolean by_unit)
{
  const char *comm = "?", *op = "read", *via = "direct", *unit = NULL;
  guint32 pid = 0;

  gboolean other = FALSE;

  g_variant_lookup (d, "Comm", "&s", &comm);
  g_variant_lookup (d, "Pid", "u", &pid);
  g_variant_lookup (d, "Operation", "&s", &op);
  if (g_variant_lookup (d, "OtherUser", "b", &other) && other)
    comm = LM_OTHER_USER_TEXT;
  g_variant_lookup (d, "Via", "&s", &via);
  if (by_unit)
    {
      g_variant_lookup (d, "Unit", "&s", &unit);
      comm = unit != NULL ? unit : other ? LM_OTHER_USER_TEXT : "(no unit known)";
      pid = 0;
    }
  /* By comm and pid: two processes of one name are two rows. */
  g_autofree char *key = g_strdup_printf ("%s[%u]", comm, pid);
  LmSpinupSummary *s = g_hash_table_lookup (per_process, key);
  if (s == NULL)
    {
      s = g_new0 (LmSpinupSummary, 1);
      s->comm = g_strdup (comm);
      s->pid = pid;
      g_hash_table_insert (per_process, g_steal_pointer (&key), s);
    }
  if (g_str_equal (op, "write"))
    s->writes++;
  else
    s->reads++;
  if (g_str_equal (via, "writeback"))
    s->writeback++;
}

static void
print_summary (GHashTable *per_process, gboolean by_unit)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new ();
  GHashTableIter hi;
  gpointer row;

  g_hash_table_iter_init (&hi, per_process);
  while (g_hash_table_iter_next (&hi, NULL, &row))
    g_ptr_array_add (rows, row);
  g_ptr_array_sort (rows, by_count);
  g_print (by_unit ? "\nSpin-ups per unit:\n" : "\nSpin-ups per process:\n");
  for (guint i = 0; i < rows->len; i++)
    {
      LmSpinupSummary *s = rows->pdata[i];
      g_autofree char *comm = lm_ctl_safe (s->comm);
      g_autofree char *who = by_unit ? g_strdup (comm) : g_strdup_printf ("%s[%u]", comm, s->pid);
      g_print ("  %5u  %-24s %u read, %u write (%u via writeback)\n", s->reads + s->writes, who,
               s->reads, s->writes, s->writeback);
    }
}

/* What waited for a disk to be awake since @since_us, from the ledger:
 * a line each, the wait's end and the spin-up it ran in. */
static void
print_deferred (LmExportedLaptopMode *proxy, gint64 since_us)
{
  g_autoptr (GError) error = NULL;
  gint64 now = g_get_real_time ();
  g_autoptr (GVariant) records = lm_report_fetch_ledger (proxy, since_us, now, &error);
  gboolean header = FALSE;

  if (records == NULL)
    {
      g_debug ("No deferred runs: %s", error->message);
      return;
    }
  g_autoptr (LmReport) report = lm_report_build (records, since_us, now, NULL, 0, NULL);
  for (guint i = 0; i < report->disks->len; i++)
    {
      const LmReportDisk *d = g_ptr_array_index (report->disks, i);
      g_autofree char *disk = lm_ctl_safe (d->name);
      for (guint k = 0; k < d->deferred->len; k++)
        {
          const LmReportDeferred *r = g_ptr_array_index (d->deferred, k);
          g_autofree char *when = lm_ctl_format_time (r->end_us);
          g_autofree char *sentence = lm_report_deferred_sentence (r);
          g_autofree char *safe = lm_ctl_safe (sentence);
          if (!header)
            g_print ("\nDeferred runs (laptop-modectl defer, maintenance units):\n");
          header = TRUE;
          g_print ("  %s  %-8s %s\n", when, disk, safe);
        }
    }
}

int
lm_ctl_spinups (int argc, char **argv)
{
  gboolean json = FALSE, by_unit = FALSE;
  const GOptionEntry entries[]
      = { { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print one JSON object per line, no summary",
            NULL },
          { "by-unit", 0, 0, G_OPTION_ARG_NONE, &by_unit,
            "Sum up per systemd unit (or application) instead of per process", NULL },
          { NULL } };
  g_autoptr (GError) error = NULL;

  if (!lm_ctl_parse_options (&argc, &argv, NULL,
                             "Show the recent spin-ups (the last 256, newest last) and which "
                             "processes caused them.",
                             entries))
    return LM_CTL_EXIT_USAGE;
  if (argc > 1)
    return lm_ctl_no_arguments (argc, argv);
  if (by_unit && json)
    return lm_ctl_usage_error ("--by-unit sums up; --json prints each spin-up (with its Unit)");

  g_autoptr (LmExportedLaptopMode) proxy = lm_ctl_get_proxy ();
  if (proxy == NULL)
    return EXIT_FAILURE;
  g_autoptr (GVariant) reply = g_dbus_proxy_call_sync (G_DBUS_PROXY (proxy), "GetSpinUps", NULL,
                                                       lm_ctl_call_flags (), -1, NULL, &error);
  if (reply == NULL)
    {
      lm_ctl_print_error ("cannot read the spin-ups", error);
      return EXIT_FAILURE;
    }

  g_autoptr (GVariant) list = g_variant_get_child_value (reply, 0);
  g_autoptr (GHashTable) per_process
      = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, summary_free);
  GVariantIter iter;
  GVariant *dict;

  g_variant_iter_init (&iter, list);
  while ((dict = g_variant_iter_next_value (&iter)) != NULL)
    {
      g_autoptr (GVariant) d = dict;

      print_spinup (d, json);
      count (per_process, d, by_unit);
    }
  if (json)
    return EXIT_SUCCESS;
  if (g_variant_n_children (list) == 0)
    {
      g_autofree char *how = attribution (proxy);
      g_print ("No spin-ups recorded (attribution: %s).\n", how);
      return EXIT_SUCCESS;
    }
  print_summary (per_process, by_unit);
  /* Since the oldest spin-up listed: the runs that rode them. */
  g_autoptr (GVariant) oldest = g_variant_get_child_value (list, 0);
  gint64 since_us = 0;
  if (g_variant_lookup (oldest, "Time", "x", &since_us))
    print_deferred (proxy, since_us);
  return EXIT_SUCCESS;
}
