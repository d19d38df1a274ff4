/* lm-tray-app-private.h: the tray's daemon link, shared by lm-tray-app.c
 * (connection, calls, state) and lm-tray-spinups.c (spin-ups and today's
 * ledger); for nothing else. */
#pragma once

#include <gio/gio.h>

#include "lm-generated.h"
#include "lm-tray-app.h"
#include "lm-tray-item.h"
#include "lm-tray-menu.h"
#include "lm-tray-notifier.h"
#include "lm-tray-view.h"

/* The menu shows the last few; the daemon keeps more for laptop-modectl. */
#define RECENT_MAX 8

struct _LmTrayApp
{
  GMainLoop *loop;
  int exit_status;
  LmTrayItem *item;
  LmTrayMenu *menu;
  LmTrayNotifier *notifier;
  guint daemon_watch;
  /* Calls to the daemon now on the bus; cancelled when it goes away. */
  GCancellable *cancellable;
  LmExportedLaptopMode *proxy;
  gboolean notify;
  gboolean subscribed;
  /* A denied subscription is explained once, not at every reconnection. */
  gboolean told_monitor_denied;
  LmTrayMonitor monitor;
  gboolean spinups_unsupported;
  GPtrArray *recent; /* GVariant a{sv}, newest first */
  /* disk → the process that woke it most today (GetLedgerPage), and
   * whether a read of today's ledger is on its way (its pages so far, its
   * range) or should be asked again when it is back. */
  GHashTable *top_wakers;
  gboolean ledger_busy;
  gboolean ledger_again;
  GPtrArray *ledger_records; /* GVariant a{sv} of the pages read so far */
  guint ledger_pages;
  guint64 ledger_since, ledger_until;
  GCancellable *report_cancellable;
  gboolean report_running;
  GHashTable *wear_told; /* disks whose head wear was notified: once each */
};

typedef void (*CallDone) (LmTrayApp *app, GVariant *reply, const GError *error);

typedef struct
{
  LmTrayApp *app;
  const char *method;
  CallDone done;
} Call;

gboolean lm_tray_app_is_remote_error (const GError *error, const char *name);
gboolean lm_tray_app_is_denied (const GError *error);
void lm_tray_app_report (LmTrayApp *app, const char *method, const GError *error);
void lm_tray_app_call_full (LmTrayApp *app, const char *method, GVariant *params,
                            gboolean interactive, CallDone done);
void lm_tray_app_call (LmTrayApp *app, const char *method, GVariant *params, CallDone done);
void lm_tray_app_update (LmTrayApp *app);

/* lm-tray-spinups.c */
void lm_tray_app_set_monitor (LmTrayApp *app, LmTrayMonitor monitor);
void lm_tray_app_fetch_spinups (LmTrayApp *app);
void lm_tray_app_on_spin_up (LmExportedLaptopMode *proxy, GVariant *spinup, gpointer user_data);
void lm_tray_app_subscribe (LmTrayApp *app, gboolean interactive);
void lm_tray_app_fetch_ledger (LmTrayApp *app);
