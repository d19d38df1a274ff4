/* lm-tray-report.h: today's HTML report, written by laptop-modectl and opened in a browser.
 * Owns the report's file in $XDG_RUNTIME_DIR and the two children; never
 * renders anything itself and never runs a shell. */
#pragma once

#include <gio/gio.h>

#include "lm-tray-view.h"

G_BEGIN_DECLS

#define LM_TRAY_REPORT_FILE "laptop-moded-report.html"

/* @error NULL: the report is open; else @step says what failed. Not called
 * when @cancellable was cancelled. */
typedef void (*LmTrayReportDone) (LmTrayReportStep step, const GError *error, gpointer user_data);

/* Runs `laptop-modectl report --html FILE --since 1d` (the laptop-modectl
 * next to this program, else the one on PATH), then opens FILE with the
 * desktop's default handler for it. */
void lm_tray_report_open (GCancellable *cancellable, LmTrayReportDone done, gpointer user_data);

G_END_DECLS
