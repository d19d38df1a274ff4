/* lm-tray-spinups.c: the tray's spin-ups (the subscription, the recent
 * list) and today's wakers from the ledger, for the tooltip; what a user may
 * see is learnt from the answers, never asked with a password dialog. */
#include "config.h"

#include "lm-names.h"
#include "lm-tray-app-private.h"

/* --- spin-ups --------------------------------------------------------- */

/* The user may monitor (or not): known from any call that needs the right,
 * made without a password dialog. Becoming allowed reads today's wakers. */
void
lm_tray_app_set_monitor (LmTrayApp *app, LmTrayMonitor monitor)
{
  gboolean newly_allowed
      = monitor == LM_TRAY_MONITOR_ALLOWED && app->monitor != LM_TRAY_MONITOR_ALLOWED;

  app->monitor = monitor;
  if (monitor != LM_TRAY_MONITOR_ALLOWED)
    g_hash_table_remove_all (app->top_wakers);
  if (newly_allowed)
    lm_tray_app_fetch_ledger (app);
}

static void
got_spinups (LmTrayApp *app, GVariant *reply, const GError *error)
{
  g_autoptr (GVariant) list = NULL;
  gsize n;

  if (reply == NULL)
    {
      /* Said in the menu only: the subscription already explains a denial. */
      if (lm_tray_app_is_denied (error))
        lm_tray_app_set_monitor (app, LM_TRAY_MONITOR_DENIED);
      else if (lm_tray_app_is_remote_error (error, LM_ERROR_NAME_NOT_SUPPORTED))
        app->spinups_unsupported = TRUE;
      else
        g_debug ("GetSpinUps failed: %s", error->message);
      lm_tray_app_update (app);
      return;
    }
  lm_tray_app_set_monitor (app, LM_TRAY_MONITOR_ALLOWED);
  list = g_variant_get_child_value (reply, 0);
  n = g_variant_n_children (list);
  g_ptr_array_set_size (app->recent, 0);
  /* The daemon lists oldest first; the menu shows newest first. */
  for (gsize i = n; i > 0 && app->recent->len < RECENT_MAX; i--)
    g_ptr_array_add (app->recent, g_variant_get_child_value (list, i - 1));
  lm_tray_app_update (app);
}

void
lm_tray_app_fetch_spinups (LmTrayApp *app)
{
  if (app->proxy != NULL)
    lm_tray_app_call_full (app, "GetSpinUps", NULL, FALSE, got_spinups);
}

void
lm_tray_app_on_spin_up (LmExportedLaptopMode *proxy, GVariant *spinup, gpointer user_data)
{
  LmTrayApp *app = user_data;

  LmTraySpinUp s;

  lm_tray_spin_up_from_variant (spinup, &s);
  g_autofree char *text = lm_tray_view_spin_up_text (&s);
  g_debug ("Spin-up: %s", text);
  g_ptr_array_insert (app->recent, 0, g_variant_ref (spinup));
  if (app->recent->len > RECENT_MAX)
    g_ptr_array_remove_index (app->recent, app->recent->len - 1);
  lm_tray_app_update (app);
  if (app->notify)
    lm_tray_notifier_spin_up (app->notifier, spinup);
}

static void
subscribed (LmTrayApp *app, GVariant *reply, const GError *error)
{
  if (reply != NULL)
    {
      g_debug ("Subscribed to spin-ups");
      app->subscribed = TRUE;
      lm_tray_app_set_monitor (app, LM_TRAY_MONITOR_ALLOWED);
      /* Notifications were turned off while the call was on its way. */
      if (!app->notify && app->proxy != NULL)
        {
          lm_tray_app_call (app, "Unsubscribe", NULL, NULL);
          app->subscribed = FALSE;
        }
      return;
    }
  if (lm_tray_app_is_remote_error (error, LM_ERROR_NAME_NOT_SUPPORTED))
    {
      g_message ("No spin-up notifications: %s", error->message);
      app->spinups_unsupported = TRUE;
      lm_tray_app_update (app);
      return;
    }
  if (lm_tray_app_is_denied (error))
    lm_tray_app_set_monitor (app, LM_TRAY_MONITOR_DENIED);
  if (lm_tray_app_is_denied (error) && app->told_monitor_denied)
    return;
  if (lm_tray_app_is_denied (error))
    app->told_monitor_denied = TRUE;
  lm_tray_app_report (app, "Subscribe", error);
}

void
lm_tray_app_subscribe (LmTrayApp *app, gboolean interactive)
{
  if (app->proxy != NULL && !app->subscribed)
    lm_tray_app_call_full (app, "Subscribe", NULL, interactive, subscribed);
}

/* --- today's ledger ---------------------------------------------------- */

/* Today's records come a page at a time (at most 250: the daemon's
 * LM_LIMIT_LEDGER_ANSWER); a day of a busy laptop is a few pages, and the
 * tooltip needs no more than this many. */
#define LEDGER_PAGE 250
#define LEDGER_MAX_PAGES 64

static void ask_page (LmTrayApp *app, const char *cursor);

static void
ledger_done (LmTrayApp *app)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));

  for (guint i = 0; i < app->ledger_records->len; i++)
    g_variant_builder_add_value (&b, g_ptr_array_index (app->ledger_records, i));
  g_autoptr (GVariant) records = g_variant_ref_sink (g_variant_builder_end (&b));
  g_clear_pointer (&app->top_wakers, g_hash_table_unref);
  app->top_wakers = lm_tray_view_top_wakers (records);
  g_debug ("Today's ledger: %u records in %u pages", app->ledger_records->len, app->ledger_pages);
  g_ptr_array_set_size (app->ledger_records, 0);
}

static void
got_ledger (LmTrayApp *app, GVariant *reply, const GError *error)
{
  if (reply != NULL)
    {
      g_autoptr (GVariant) records = g_variant_get_child_value (reply, 0);
      const char *next = NULL;
      GVariantIter iter;
      GVariant *record;

      g_variant_get_child (reply, 1, "&s", &next);
      g_variant_iter_init (&iter, records);
      while ((record = g_variant_iter_next_value (&iter)) != NULL)
        g_ptr_array_add (app->ledger_records, record);
      if (next[0] != '\0' && ++app->ledger_pages < LEDGER_MAX_PAGES)
        {
          ask_page (app, next);
          return;
        }
      ledger_done (app);
    }
  else if (lm_tray_app_is_denied (error))
    lm_tray_app_set_monitor (app, LM_TRAY_MONITOR_DENIED);
  else
    g_debug ("GetLedgerPage failed: %s", error->message);
  g_ptr_array_set_size (app->ledger_records, 0);
  app->ledger_busy = FALSE;
  lm_tray_app_update (app);
  if (app->ledger_again)
    {
      app->ledger_again = FALSE;
      lm_tray_app_fetch_ledger (app);
    }
}

static void
ask_page (LmTrayApp *app, const char *cursor)
{
  lm_tray_app_call_full (
      app, "GetLedgerPage",
      g_variant_new ("(ttsu)", app->ledger_since, app->ledger_until, cursor, (guint32) LEDGER_PAGE),
      FALSE, got_ledger);
}

/* Who woke each disk today, for the tooltip. Asked only of a daemon that
 * lets this user see processes, and only when LedgerSummary changed (or the
 * right became known): never on a timer. */
void
lm_tray_app_fetch_ledger (LmTrayApp *app)
{
  if (app->proxy == NULL || app->monitor != LM_TRAY_MONITOR_ALLOWED)
    return;
  if (app->ledger_busy)
    {
      app->ledger_again = TRUE;
      return;
    }
  app->ledger_busy = TRUE;
  app->ledger_pages = 0;
  g_ptr_array_set_size (app->ledger_records, 0);
  lm_tray_view_today (g_get_real_time (), &app->ledger_since, &app->ledger_until);
  ask_page (app, "");
}
