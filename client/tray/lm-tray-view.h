/* lm-tray-view.h: what laptop-mode-tray shows, as a pure function of the daemon's state.
 * Owns the icon, tooltip, menu labels and notification words; never talks to
 * a bus, keeps no state and reads no clock but the one it is given. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether the user may read spin-ups (polkit's monitor action), as the
 * daemon last answered a call that needs it without asking for a password. */
typedef enum
{
  LM_TRAY_MONITOR_UNKNOWN = 0,
  LM_TRAY_MONITOR_ALLOWED,
  LM_TRAY_MONITOR_DENIED,
} LmTrayMonitor;

/* One spin-up as the SpinUp signal and GetSpinUps carry it; strings are
 * borrowed from that variant, NULL where the daemon did not say. */
typedef struct
{
  gint64 time_us; /* 0: unknown */
  const char *disk;
  const char *comm;   /* the program */
  const char *thread; /* its thread that did it, where named apart */
  guint32 pid;
  const char *operation;
  const char *via;
  const char *path;
  const char *submitter;
  const char *unit;        /* its systemd unit or application, NULL: not known */
  const char *explanation; /* the daemon's one line on what the cause is, NULL: none */
} LmTraySpinUp;

/* One disk of LedgerSummary; @top_waker from GetLedgerPage, NULL if unknown. */
typedef struct
{
  const char *disk;
  guint spinups_today;
  double asleep_share; /* 0 to 1 */
  guint64 last_wake_us;
  const char *top_waker;
  /* NVMe only (LedgerSummary's Apst and DeepIdle* keys); apst NULL else. */
  const char *apst;
  guint deepest_state;
  gboolean have_deep; /* activity recorded today: the shares and energy below */
  double deep_share, deep_share_stock, energy_wh, energy_wh_stock;
  const char *energy_source;
  const char *estimate_unsure; /* why the estimate is less sure, or NULL */
} LmTrayDiskDay;

typedef struct
{
  gboolean available; /* laptop-moded is on the bus */
  gboolean active;
  const char *mode;
  const char *reason;
  /* The first hold on laptop mode, and how many there are. */
  guint n_holds;
  const char *hold_who;
  const char *hold_why;
  guint max_lost_work; /* seconds */
  LmTrayMonitor monitor;
  gboolean spinups_unsupported;
  const LmTraySpinUp *recent; /* newest first */
  gsize n_recent;
  const LmTrayDiskDay *days; /* any order */
  gsize n_days;
  gboolean report_running;
} LmTrayState;

/* Every string in it is safe to show: outside text is escaped with
 * lm_escape. Markup and mnemonics are the item's and the menu's business. */
typedef struct
{
  const char *icon_name;
  const char *status; /* StatusNotifierItem Status: "Active" or "Passive" */
  char *title;
  char *body;
  gboolean can_switch;
  gboolean toggle_checked;
  const char *mode_checked;  /* NULL: none */
  char **spinup_lines;       /* newest first, NULL-terminated, may be empty */
  const char *spinups_empty; /* shown when there are no lines */
  const char *report_label;
  gboolean report_sensitive;
} LmTrayView;

#define LM_TRAY_VIEW_MAX_DISKS 4
#define LM_TRAY_REPORT_LABEL "Open _today's report"

void lm_tray_view_build (const LmTrayState *state, LmTrayView *view);
void lm_tray_view_clear (LmTrayView *view);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (LmTrayView, lm_tray_view_clear)

/* Reads @spinup (a{sv}) into @out, borrowing its strings. */
void lm_tray_spin_up_from_variant (GVariant *spinup, LmTraySpinUp *out);

/* LedgerSummary (a{sa{sv}}) as LmTrayDiskDay, strings borrowed from
 * @summary and @top_wakers (disk → comm); empty if NULL or of another type. */
GArray *lm_tray_disk_days_from_variant (GVariant *summary, GHashTable *top_wakers);

/* "sda woken by firefox (1234): read", for popups, tooltip and menu. */
char *lm_tray_view_spin_up_text (const LmTraySpinUp *spinup);
/* The popup's details: "At 12:00:01, file a.txt, written back by dd". */
char *lm_tray_view_spin_up_details (const LmTraySpinUp *spinup);
/* "4 spin-ups: cron ×3, firefox ×1" from comm → count. */
char *lm_tray_view_burst_text (GHashTable *counts, guint total);
/* The notification for a disk whose heads park so often that it would
 * reach its rated load cycles within five years (Disks' LoadCycleWarning):
 * NULL when @info (its a{sv}) does not say so. @body: what helps. */
char *lm_tray_view_wear_text (const char *disk, GVariant *info, char **body);

/* A call to laptop-moded failed: @denied when polkit refused it; @message
 * the daemon's (escaped again here). */
void lm_tray_view_call_failed (const char *method, gboolean denied, const char *message,
                               char **summary, char **body);

/* A click that needs laptop-moded while it is not on the bus. */
void lm_tray_view_no_daemon (const char *method, char **summary, char **body);

typedef enum
{
  LM_TRAY_REPORT_WRITE,
  LM_TRAY_REPORT_OPEN,
} LmTrayReportStep;

void lm_tray_view_report_failed (LmTrayReportStep step, const char *message, char **summary,
                                 char **body);

/* The local day around @now_us, as GetLedgerPage's range: [midnight, next). */
void lm_tray_view_today (gint64 now_us, guint64 *since_us, guint64 *until_us);
/* disk → the process that woke it most often in @records (GetLedgerPage's
 * aa{sv}); ties go to the name first in byte order. */
GHashTable *lm_tray_view_top_wakers (GVariant *records);

G_END_DECLS
