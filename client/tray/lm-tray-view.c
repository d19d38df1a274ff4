/* lm-tray-view.c: what laptop-mode-tray shows, as a pure function of the daemon's state.
 * Owns the icon, tooltip, menu labels and notification words; never talks to
 * a bus, keeps no state and reads no clock but the one it is given. */
#include "lm-tray-view.h"

#include <math.h>
#include <string.h>

#include "lm-escape.h"
#include "lm-estimates.h"
#include "lm-names.h"

/* Which right each call needs, in words a user can pass on to an admin. */
static const struct
{
  const char *method;
  const char *right;
  const char *what;
} rights[] = {
  { "Start", LM_ACTION_SWITCH, "switch laptop mode on" },
  { "Stop", LM_ACTION_SWITCH, "switch laptop mode off" },
  { "SetMode", LM_ACTION_SWITCH, "change the laptop mode setting" },
  { "Subscribe", LM_ACTION_MONITOR, "watch disk spin-ups" },
  { "GetSpinUps", LM_ACTION_MONITOR, "see recent disk spin-ups" },
  { "GetLedger", LM_ACTION_MONITOR, "see what woke the disks today" },
  { "GetLedgerPage", LM_ACTION_MONITOR, "see what woke the disks today" },
  { "Report", LM_ACTION_MONITOR, "write today's report" },
};

static const struct
{
  const char *reason;
  const char *words;
} reasons[] = {
  { LM_REASON_MANUAL, "set by hand" },
  { LM_REASON_ON_BATTERY, "running on battery" },
  { LM_REASON_AC, "running on AC power" },
  { LM_REASON_LOW_BATTERY, "battery low" },
  { LM_REASON_INHIBITED, "held off by a program" },
};

/* Any user names its processes and holds: ESC or BEL must not reach a
 * terminal through the log, nor confuse a notification server. */
static char *
safe (const char *text, const char *unknown)
{
  return lm_escape (text != NULL ? text : unknown, -1, LM_ESCAPE_DEFAULT);
}

static const char *
right_for (const char *method, const char **what)
{
  for (gsize i = 0; i < G_N_ELEMENTS (rights); i++)
    if (g_strcmp0 (rights[i].method, method) == 0)
      {
        *what = rights[i].what;
        return rights[i].right;
      }
  *what = method != NULL ? method : "do that";
  return "unknown";
}

static const char *
reason_words (const char *reason)
{
  for (gsize i = 0; i < G_N_ELEMENTS (reasons); i++)
    if (g_strcmp0 (reasons[i].reason, reason) == 0)
      return reasons[i].words;
  return reason != NULL ? reason : "unknown";
}

static char *
duration_words (guint seconds)
{
  if (seconds >= 60 && seconds % 60 == 0)
    return g_strdup_printf ("%u min", seconds / 60);
  return g_strdup_printf ("%u s", seconds);
}

/* --- spin-ups ------------------------------------------------------------ */

void
lm_tray_spin_up_from_variant (GVariant *spinup, LmTraySpinUp *out)
{
  memset (out, 0, sizeof *out);
  g_variant_lookup (spinup, "Time", "x", &out->time_us);
  g_variant_lookup (spinup, "Disk", "&s", &out->disk);
  g_variant_lookup (spinup, "Comm", "&s", &out->comm);
  g_variant_lookup (spinup, "Thread", "&s", &out->thread);
  g_variant_lookup (spinup, "Pid", "u", &out->pid);
  g_variant_lookup (spinup, "Operation", "&s", &out->operation);
  g_variant_lookup (spinup, "Via", "&s", &out->via);
  g_variant_lookup (spinup, "Path", "&s", &out->path);
  g_variant_lookup (spinup, "SubmitterComm", "&s", &out->submitter);
  g_variant_lookup (spinup, "Unit", "&s", &out->unit);
  g_variant_lookup (spinup, "Explanation", "&s", &out->explanation);
  gboolean other = FALSE;
  if (g_variant_lookup (spinup, "OtherUser", "b", &other) && other)
    out->comm = LM_OTHER_USER_TEXT;
}

GArray *
lm_tray_disk_days_from_variant (GVariant *summary, GHashTable *top_wakers)
{
  GArray *days = g_array_new (FALSE, TRUE, sizeof (LmTrayDiskDay));
  GVariantIter iter;
  const char *disk;
  GVariant *fields;

  if (summary == NULL || !g_variant_is_of_type (summary, G_VARIANT_TYPE ("a{sa{sv}}")))
    return days;
  g_variant_iter_init (&iter, summary);
  while (g_variant_iter_loop (&iter, "{&s@a{sv}}", &disk, &fields))
    {
      LmTrayDiskDay d = { .disk = disk };
      g_variant_lookup (fields, "SpinUpsToday", "u", &d.spinups_today);
      g_variant_lookup (fields, "AsleepShareToday", "d", &d.asleep_share);
      g_variant_lookup (fields, "LastWake", "t", &d.last_wake_us);
      g_variant_lookup (fields, "Apst", "&s", &d.apst);
      g_variant_lookup (fields, "DeepestState", "u", &d.deepest_state);
      /* The estimate's keys; a daemon from before they were named so has
       * only the unsuffixed ones, with the same values. */
      d.have_deep
          = (g_variant_lookup (fields, LM_EST_DBUS_DEEP_SHARE, "d", &d.deep_share)
             || g_variant_lookup (fields, "DeepIdleShareToday", "d", &d.deep_share))
            && (g_variant_lookup (fields, LM_EST_DBUS_DEEP_SHARE_STOCK, "d", &d.deep_share_stock)
                || g_variant_lookup (fields, "DeepIdleShareStockToday", "d", &d.deep_share_stock))
            && (g_variant_lookup (fields, LM_EST_DBUS_ENERGY, "d", &d.energy_wh)
                || g_variant_lookup (fields, "EnergyWhToday", "d", &d.energy_wh))
            && (g_variant_lookup (fields, LM_EST_DBUS_ENERGY_STOCK, "d", &d.energy_wh_stock)
                || g_variant_lookup (fields, "EnergyWhStockToday", "d", &d.energy_wh_stock))
            && g_variant_lookup (fields, "EnergySource", "&s", &d.energy_source);
      g_variant_lookup (fields, "EstimateUnsure", "&s", &d.estimate_unsure);
      if (top_wakers != NULL)
        d.top_waker = g_hash_table_lookup (top_wakers, disk);
      g_array_append_val (days, d);
    }
  return days;
}

char *
lm_tray_view_spin_up_text (const LmTraySpinUp *s)
{
  g_autofree char *disk = safe (s->disk, "?");
  g_autofree char *comm = safe (s->comm, "?");
  g_autofree char *op = safe (s->operation, "I/O");

  /* Sent without a pid: none to show. */
  if (g_strcmp0 (s->comm, LM_OTHER_USER_TEXT) == 0)
    return g_strdup_printf ("%s woken by %s: %s", disk, comm, op);
  return g_strdup_printf ("%s woken by %s (%u): %s", disk, comm, s->pid, op);
}

static char *
clock_time (gint64 usec)
{
  if (usec <= 0)
    return NULL;
  g_autoptr (GDateTime) t = g_date_time_new_from_unix_local (usec / G_USEC_PER_SEC);
  return t != NULL ? g_date_time_format (t, "%X") : NULL;
}

/* "12:00:01  sda woken by firefox (1234): read": the menu's and tooltip's. */
static char *
spin_up_line (const LmTraySpinUp *s)
{
  g_autofree char *text = lm_tray_view_spin_up_text (s);
  g_autofree char *when = clock_time (s->time_us);

  if (when == NULL)
    return g_steal_pointer (&text);
  return g_strdup_printf ("%s  %s", when, text);
}

char *
lm_tray_view_spin_up_details (const LmTraySpinUp *s)
{
  g_autoptr (GString) body = g_string_new (NULL);
  g_autofree char *when = clock_time (s->time_us);

  /* What the cause is, where the daemon's table knows it: first. */
  if (s->explanation != NULL && *s->explanation != '\0')
    {
      g_autofree char *explanation = safe (s->explanation, NULL);
      g_string_append_printf (body, "%s\n", explanation);
    }
  gsize from = body->len;
  if (when != NULL)
    g_string_append_printf (body, "At %s", when);
  if (s->unit != NULL && *s->unit != '\0')
    {
      g_autofree char *unit = safe (s->unit, NULL);
      g_string_append_printf (body, "%sunit %s", body->len > from ? ", " : "", unit);
    }
  if (s->thread != NULL && *s->thread != '\0')
    {
      g_autofree char *thread = safe (s->thread, NULL);
      g_string_append_printf (body, "%sthread %s", body->len > from ? ", " : "", thread);
    }
  if (s->path != NULL)
    {
      g_autofree char *path = safe (s->path, NULL);
      g_string_append_printf (body, "%sfile %s", body->len > from ? ", " : "", path);
    }
  if (g_strcmp0 (s->via, "writeback") == 0 && s->submitter != NULL)
    {
      g_autofree char *submitter = safe (s->submitter, NULL);
      g_string_append_printf (body, "%swritten back by %s", body->len > from ? ", " : "",
                              submitter);
    }
  return g_string_free (g_steal_pointer (&body), FALSE);
}

static int
by_count (gconstpointer a, gconstpointer b, gpointer user_data)
{
  GHashTable *counts = user_data;
  guint ca = GPOINTER_TO_UINT (g_hash_table_lookup (counts, *(const char **) a));
  guint cb = GPOINTER_TO_UINT (g_hash_table_lookup (counts, *(const char **) b));

  if (ca != cb)
    return ca > cb ? -1 : 1;
  return g_strcmp0 (*(const char **) a, *(const char **) b);
}

char *
lm_tray_view_wear_text (const char *disk, GVariant *info, char **body)
{
  gboolean warning = FALSE;
  double per_day = 0, days_left = 0;
  guint32 rating = 0;

  if (!g_variant_lookup (info, "LoadCycleWarning", "b", &warning) || !warning
      || !g_variant_lookup (info, "LoadCyclesPerDay", "d", &per_day)
      || !g_variant_lookup (info, "LoadCycleDaysLeft", "d", &days_left))
    return NULL;
  g_variant_lookup (info, "LoadCycleRating", "u", &rating);
  g_autofree char *name = safe (disk, NULL);
  *body
      = g_strdup_printf ("It parks its heads %.0f times a day: at this rate it reaches its "
                         "rating of %u load cycles in %.1f years. A higher APM level "
                         "(laptop-modectl set, DiskSettings APM 254) or a longer idle timer in "
                         "the drive's firmware would help; laptop mode changes nothing by itself.",
                         per_day, rating, days_left / 365.0);
  return g_strdup_printf ("%s wears out its heads", name);
}

char *
lm_tray_view_burst_text (GHashTable *counts, guint total)
{
  g_autoptr (GPtrArray) comms = g_ptr_array_new ();
  g_autoptr (GString) s = g_string_new (NULL);
  GHashTableIter iter;
  gpointer comm;

  g_hash_table_iter_init (&iter, counts);
  while (g_hash_table_iter_next (&iter, &comm, NULL))
    g_ptr_array_add (comms, comm);
  g_ptr_array_sort_with_data (comms, by_count, counts);
  g_string_printf (s, "%u spin-ups: ", total);
  for (guint i = 0; i < comms->len; i++)
    {
      g_autofree char *name = safe (comms->pdata[i], "?");
      g_string_append_printf (s, "%s%s ×%u", i ? ", " : "", name,
                              GPOINTER_TO_UINT (g_hash_table_lookup (counts, comms->pdata[i])));
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* --- today --------------------------------------------------------------- */

void
lm_tray_view_today (gint64 now_us, guint64 *since_us, guint64 *until_us)
{
  g_autoptr (GDateTime) now = g_date_time_new_from_unix_local (now_us / G_USEC_PER_SEC);
  g_autoptr (GDateTime) midnight
      = g_date_time_new_local (g_date_time_get_year (now), g_date_time_get_month (now),
                               g_date_time_get_day_of_month (now), 0, 0, 0);
  g_autoptr (GDateTime) next = g_date_time_add_days (midnight, 1);

  /* The whole day, not up to now: a spin-up's time comes from the kernel's
   * clock and may run a little ahead of ours. */
  *since_us = (guint64) MAX (0, g_date_time_to_unix (midnight)) * G_USEC_PER_SEC;
  *until_us = (guint64) MAX (0, g_date_time_to_unix (next)) * G_USEC_PER_SEC;
}

GHashTable *
lm_tray_view_top_wakers (GVariant *records)
{
  /* disk → (comm → count) */
  g_autoptr (GHashTable) counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                         (GDestroyNotify) g_hash_table_unref);
  GHashTable *top = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  GVariantIter iter;
  GVariant *record;
  GHashTableIter disks;
  const char *disk;
  GHashTable *comms;

  g_variant_iter_init (&iter, records);
  while ((record = g_variant_iter_next_value (&iter)) != NULL)
    {
      g_autoptr (GVariant) owned = record;
      const char *kind = NULL, *comm = NULL;
      gboolean other = FALSE;

      if (g_variant_lookup (record, "OtherUser", "b", &other) && other)
        comm = LM_OTHER_USER_TEXT;
      if (!g_variant_lookup (record, "Kind", "&s", &kind) || g_strcmp0 (kind, "spinup") != 0
          || !g_variant_lookup (record, "Disk", "&s", &disk)
          || (comm == NULL && !g_variant_lookup (record, "Comm", "&s", &comm)))
        continue;
      comms = g_hash_table_lookup (counts, disk);
      if (comms == NULL)
        {
          comms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
          g_hash_table_insert (counts, g_strdup (disk), comms);
        }
      g_hash_table_insert (
          comms, g_strdup (comm),
          GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (comms, comm)) + 1));
    }

  g_hash_table_iter_init (&disks, counts);
  while (g_hash_table_iter_next (&disks, (gpointer *) &disk, (gpointer *) &comms))
    {
      GHashTableIter it;
      const char *comm, *best = NULL;
      gpointer n;
      guint most = 0;

      g_hash_table_iter_init (&it, comms);
      while (g_hash_table_iter_next (&it, (gpointer *) &comm, &n))
        if (GPOINTER_TO_UINT (n) > most
            || (GPOINTER_TO_UINT (n) == most && strcmp (comm, best) < 0))
          {
            most = GPOINTER_TO_UINT (n);
            best = comm;
          }
      g_hash_table_insert (top, g_strdup (disk), g_strdup (best));
    }
  return top;
}

static int
by_disk (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (((const LmTrayDiskDay *) a)->disk, ((const LmTrayDiskDay *) b)->disk);
}

static double
share_of (double share)
{
  return isfinite (share) ? CLAMP (share, 0.0, 1.0) : 0.0;
}

/* An NVMe disk: "nvme0n1: PS4 about 41 % of today, estimated (stock
 * writeback about 12 %), about 1.90 Wh against 2.60 Wh, from the drive's
 * IDLP/ACTP", or why it has no deep idle. Every figure is the replay's. */
static void
append_deep_idle (GString *out, const char *disk, const LmTrayDiskDay *d)
{
  if (d->apst == NULL)
    return;
  if (!g_str_equal (d->apst, "enabled"))
    {
      g_autofree char *apst = safe (d->apst, "?");
      g_string_append_printf (out, "\n%s: APST %s, no deep idle when quiet", disk, apst);
      return;
    }
  if (!d->have_deep)
    return;
  const char *source = g_strcmp0 (d->energy_source, "idlp_actp") == 0 ? "the drive's IDLP/ACTP"
                       : g_strcmp0 (d->energy_source, "max_power") == 0
                           ? "maximum power, an upper bound"
                           : "IDLP/ACTP and maximum power";
  double wh = isfinite (d->energy_wh) ? d->energy_wh : 0;
  double wh_stock = isfinite (d->energy_wh_stock) ? d->energy_wh_stock : 0;
  /* Early in the day the energy is small: enough digits to tell them apart. */
  int digits = MAX (wh, wh_stock) < 0.1 ? 4 : 2;
  g_string_append_printf (out, LM_EST_TRAY_DEEP, disk, d->deepest_state,
                          (int) lround (share_of (d->deep_share) * 100.0),
                          (int) lround (share_of (d->deep_share_stock) * 100.0), digits, wh, digits,
                          wh_stock, source);
  if (d->estimate_unsure != NULL)
    {
      g_autofree char *why = safe (d->estimate_unsure, NULL);
      g_string_append_printf (out, " (less sure: %s)", why);
    }
}

/* "sda: 6 spin-ups today, asleep 71 %, most by firefox"; the name only for
 * a user who may see processes, even if the caller got one. */
static void
append_day (GString *out, const LmTrayDiskDay *d, LmTrayMonitor monitor)
{
  g_autofree char *disk = safe (d->disk, "?");
  double share = isfinite (d->asleep_share) ? CLAMP (d->asleep_share, 0.0, 1.0) : 0.0;

  g_string_append_printf (out, "\n%s: %u spin-up%s today, asleep %d %%", disk, d->spinups_today,
                          d->spinups_today == 1 ? "" : "s", (int) lround (share * 100.0));
  if (monitor == LM_TRAY_MONITOR_ALLOWED && d->spinups_today > 0 && d->top_waker != NULL)
    {
      g_autofree char *who = safe (d->top_waker, NULL);
      g_string_append_printf (out, ", most by %s", who);
    }
  append_deep_idle (out, disk, d);
}

static void
append_days (GString *out, const LmTrayState *state)
{
  g_autofree LmTrayDiskDay *days = NULL;
  gsize shown;

  if (state->n_days == 0)
    return;
  days = g_memdup2 (state->days, state->n_days * sizeof *days);
  qsort (days, state->n_days, sizeof *days, by_disk);
  shown = MIN (state->n_days, LM_TRAY_VIEW_MAX_DISKS);
  for (gsize i = 0; i < shown; i++)
    append_day (out, &days[i], state->monitor);
  if (state->n_days > shown)
    g_string_append_printf (out, "\nand %" G_GSIZE_FORMAT " more disk%s (laptop-modectl report)",
                            state->n_days - shown, state->n_days - shown == 1 ? "" : "s");
}

/* --- the view ------------------------------------------------------------ */

static void
build_unavailable (LmTrayView *view)
{
  view->icon_name = "laptop-mode-unavailable";
  /* Active, not Passive: hosts may hide passive items, and a missing daemon
   * is worth seeing. */
  view->status = "Active";
  view->title = g_strdup ("Laptop mode unavailable");
  view->body = g_strdup ("laptop-moded is not running.");
}

static const char *
icon_for (const LmTrayState *state)
{
  if (g_strcmp0 (state->reason, LM_REASON_INHIBITED) == 0)
    return "laptop-mode-inhibited";
  if (g_strcmp0 (state->reason, LM_REASON_LOW_BATTERY) == 0)
    return "laptop-mode-low-battery";
  return state->active ? "laptop-mode-on" : "laptop-mode-off";
}

static void
build_available (const LmTrayState *state, LmTrayView *view)
{
  g_autoptr (GString) body = g_string_new (NULL);
  g_autofree char *mode = safe (state->mode, "unknown");
  g_autofree char *reason = safe (reason_words (state->reason), NULL);
  g_autofree char *lost = duration_words (state->max_lost_work);

  view->icon_name = icon_for (state);
  /* Off by the user's choice or on AC is the quiet, expected state. */
  view->status = !state->active
                         && (g_strcmp0 (state->reason, LM_REASON_MANUAL) == 0
                             || g_strcmp0 (state->reason, LM_REASON_AC) == 0)
                     ? "Passive"
                     : "Active";
  view->title = g_strdup (state->active ? "Laptop mode is on" : "Laptop mode is off");
  view->can_switch = TRUE;
  view->toggle_checked = state->active;
  view->mode_checked = state->mode;

  g_string_append_printf (body, "Mode: %s (%s)", mode, reason);
  if (state->n_holds > 0)
    {
      g_autofree char *who = safe (state->hold_who, "?");
      g_autofree char *why = safe (state->hold_why, "");
      g_string_append_printf (body, "\nHeld off by %s: %s", who, why);
      if (state->n_holds > 1)
        g_string_append_printf (body, " (and %u more)", state->n_holds - 1);
    }
  g_string_append_printf (body, "\nMax lost work: %s", lost);
  append_days (body, state);
  if (state->n_recent > 0)
    {
      g_autofree char *last = spin_up_line (&state->recent[0]);
      g_string_append_printf (body, "\nLast spin-up: %s", last);
    }
  view->body = g_string_free (g_steal_pointer (&body), FALSE);
}

void
lm_tray_view_build (const LmTrayState *state, LmTrayView *view)
{
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);

  memset (view, 0, sizeof *view);
  if (state->available)
    build_available (state, view);
  else
    build_unavailable (view);

  for (gsize i = 0; i < state->n_recent; i++)
    g_ptr_array_add (lines, spin_up_line (&state->recent[i]));
  g_ptr_array_add (lines, NULL);
  view->spinup_lines = (char **) g_ptr_array_free (g_steal_pointer (&lines), FALSE);
  if (state->monitor == LM_TRAY_MONITOR_DENIED)
    view->spinups_empty = "Not allowed (needs " LM_ACTION_MONITOR ")";
  else if (state->spinups_unsupported)
    view->spinups_empty = "Not available on this kernel";
  else
    view->spinups_empty = "None yet";

  /* One report at a time: a second click would write the same file. */
  view->report_label = state->report_running ? "Writing today's report…" : LM_TRAY_REPORT_LABEL;
  view->report_sensitive = state->available && !state->report_running;
}

void
lm_tray_view_clear (LmTrayView *view)
{
  g_clear_pointer (&view->title, g_free);
  g_clear_pointer (&view->body, g_free);
  g_clear_pointer (&view->spinup_lines, g_strfreev);
}

/* --- notification words -------------------------------------------------- */

void
lm_tray_view_call_failed (const char *method, gboolean denied, const char *message, char **summary,
                          char **body)
{
  const char *what;
  const char *right = right_for (method, &what);
  /* The daemon quotes input escaped already: controls go, backslashes stay. */
  g_autofree char *said = lm_escape (message != NULL ? message : "", -1, LM_ESCAPE_KEEP_BACKSLASH);

  if (denied)
    {
      *summary = g_strdup_printf ("Not allowed to %s", what);
      *body = g_strdup_printf ("Your account lacks the right %s. An administrator can grant it "
                               "with a polkit rule (see laptop-mode-tray(1)).\n%s",
                               right, said);
    }
  else
    {
      *summary = g_strdup_printf ("Could not %s", what);
      *body = g_steal_pointer (&said);
    }
}

void
lm_tray_view_no_daemon (const char *method, char **summary, char **body)
{
  const char *what;

  right_for (method, &what);
  *summary = g_strdup ("Laptop mode is unavailable");
  *body = g_strdup_printf ("laptop-moded is not running, so the tray cannot %s.", what);
}

void
lm_tray_view_report_failed (LmTrayReportStep step, const char *message, char **summary, char **body)
{
  *summary = g_strdup (step == LM_TRAY_REPORT_OPEN ? "Could not open today's report"
                                                   : "Could not write today's report");
  /* laptop-modectl's words, which quote outside text escaped already. */
  *body = lm_escape (message != NULL ? message : "", -1, LM_ESCAPE_KEEP_BACKSLASH);
}
