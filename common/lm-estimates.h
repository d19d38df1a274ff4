/* lm-estimates.h: the one table of every figure laptop-moded's programs
 * show that comes from a model (the replay of recorded I/O, the APST walk)
 * rather than a measurement, and the names they show it under. Names only;
 * the producers use these macros, and tests/test-estimate-words.c checks
 * that each says what it is. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* LedgerSummary's NVMe keys (dbus/org.laptopmode.LaptopMode1.xml). The
 * unsuffixed keys of earlier releases stay beside them, with the same
 * values, for clients that read them. */
#define LM_EST_DBUS_DEEP_SHARE "DeepIdleShareTodayEstimate"
#define LM_EST_DBUS_DEEP_SHARE_STOCK "DeepIdleShareStockTodayEstimate"
#define LM_EST_DBUS_ENERGY "EnergyWhTodayEstimate"
#define LM_EST_DBUS_ENERGY_STOCK "EnergyWhStockTodayEstimate"

/* laptop-modectl report --json, per NVMe disk. */
#define LM_EST_JSON_LAPTOP "laptop_mode_estimate"
#define LM_EST_JSON_STOCK "stock_estimate"
#define LM_EST_JSON_NO_APST "no_apst_cost_wh_upper_bound_estimate"
/* laptop-modectl report --openmetrics. */
#define LM_EST_METRIC_STATE "laptop_mode_nvme_state_seconds_estimate"
#define LM_EST_METRIC_ENERGY "laptop_mode_nvme_energy_wh_estimate"

/* The tray's tooltip line for an NVMe disk (client/tray/lm-tray-view.c). */
#define LM_EST_TRAY_DEEP                                                                           \
  "\n%s: PS%u about %d %% of today, estimated (stock writeback about %d %%), about %.*f Wh "       \
  "against %.*f Wh, from %s"

/* The report's headings and labels (text and HTML). */
#define LM_EST_TEXT_DEEP                                                                           \
  "  PS%u (deepest), estimated: about %.0f %% of the watched time with laptop mode, about "        \
  "%.0f %% under stock writeback; about %.2f Wh against %.2f Wh\n"
#define LM_EST_TEXT_NO_APST                                                                        \
  "; estimated at most %.2f Wh more than in its lowest idle state (an upper bound)"
#define LM_EST_TEXT_STOCK                                                                          \
  "  stock writeback, estimated: about %u spin-ups and %" G_GINT64_FORMAT                          \
  " s awake (recorded with laptop mode: %u, %" G_GINT64_FORMAT " s)\n"
#define LM_EST_HTML_SAVED "<h2>What laptop mode saved (estimate)</h2>\n"
#define LM_EST_HTML_HEADING "<h3>NVMe power states (estimate)</h3>\n"
#define LM_EST_HTML_BAR_LAPTOP "laptop mode (estimate)"
#define LM_EST_HTML_BAR_STOCK "stock (estimate)"

typedef enum
{
  LM_FIGURE_ESTIMATE, /* from a model: says "estimate", "estimated", "about" or "≈" */
  LM_FIGURE_BOUND,    /* a model's bound: says so as well ("upper bound", "at most") */
} LmFigureKind;

typedef struct
{
  const char *where; /* "dbus", "json", "metric", "tray", "report" */
  const char *name;
  LmFigureKind kind;
} LmFigure;

/* Every model-derived figure's name, ended by { NULL }. */
extern const LmFigure lm_model_figures[];

/* Whether @text carries the word its kind needs. */
gboolean lm_figure_says_estimate (const char *text);
gboolean lm_figure_says_bound (const char *text);

G_END_DECLS
