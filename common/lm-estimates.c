/* lm-estimates.c: the table of model-derived figures (lm-estimates.h) and
 * the words that mark one. Pure; never does I/O. */
#include "lm-estimates.h"

#include <string.h>

const LmFigure lm_model_figures[] = {
  { "dbus", LM_EST_DBUS_DEEP_SHARE, LM_FIGURE_ESTIMATE },
  { "dbus", LM_EST_DBUS_DEEP_SHARE_STOCK, LM_FIGURE_ESTIMATE },
  { "dbus", LM_EST_DBUS_ENERGY, LM_FIGURE_ESTIMATE },
  { "dbus", LM_EST_DBUS_ENERGY_STOCK, LM_FIGURE_ESTIMATE },
  { "json", LM_EST_JSON_LAPTOP, LM_FIGURE_ESTIMATE },
  { "json", LM_EST_JSON_STOCK, LM_FIGURE_ESTIMATE },
  { "json", LM_EST_JSON_NO_APST, LM_FIGURE_BOUND },
  { "metric", LM_EST_METRIC_STATE, LM_FIGURE_ESTIMATE },
  { "metric", LM_EST_METRIC_ENERGY, LM_FIGURE_ESTIMATE },
  { "tray", LM_EST_TRAY_DEEP, LM_FIGURE_ESTIMATE },
  { "report", LM_EST_TEXT_DEEP, LM_FIGURE_ESTIMATE },
  { "report", LM_EST_TEXT_NO_APST, LM_FIGURE_BOUND },
  { "report", LM_EST_TEXT_STOCK, LM_FIGURE_ESTIMATE },
  { "report", LM_EST_HTML_SAVED, LM_FIGURE_ESTIMATE },
  { "report", LM_EST_HTML_HEADING, LM_FIGURE_ESTIMATE },
  { "report", LM_EST_HTML_BAR_LAPTOP, LM_FIGURE_ESTIMATE },
  { "report", LM_EST_HTML_BAR_STOCK, LM_FIGURE_ESTIMATE },
  { NULL, NULL, 0 },
};

gboolean
lm_figure_says_estimate (const char *text)
{
  g_autofree char *lower = g_ascii_strdown (text, -1);

  return strstr (lower, "estimate") != NULL || strstr (lower, "about ") != NULL
         || strstr (text, "≈") != NULL;
}

gboolean
lm_figure_says_bound (const char *text)
{
  g_autofree char *lower = g_ascii_strdown (text, -1);

  return strstr (lower, "upper bound") != NULL || strstr (lower, "upper_bound") != NULL
         || strstr (lower, "at most") != NULL || strstr (lower, "at_most") != NULL;
}
