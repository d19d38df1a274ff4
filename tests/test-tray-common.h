/* test-tray-common.h: what test-tray-view.c and test-tray-words.c share:
 * a fixed "now", a state on battery, a spin-up, and the checks that words
 * carry no control bytes. */
#pragma once

#include <glib.h>
#include <string.h>

#include "lm-names.h"
#include "lm-tray-view.h"

/* 2026-12-03 09:37:05 UTC, in µs. */
#define NOW_US (G_GINT64_CONSTANT (1796290625) * G_USEC_PER_SEC)

static inline LmTrayState
on_battery (void)
{
  LmTrayState s = { .available = TRUE,
                    .active = TRUE,
                    .mode = "auto",
                    .reason = LM_REASON_ON_BATTERY,
                    .max_lost_work = 600,
                    .monitor = LM_TRAY_MONITOR_ALLOWED };
  return s;
}

static inline void
assert_contains (const char *haystack, const char *needle)
{
  if (strstr (haystack, needle) == NULL)
    g_error ("'%s' not in '%s'", needle, haystack);
}

static inline void
assert_lacks (const char *haystack, const char *needle)
{
  if (strstr (haystack, needle) != NULL)
    g_error ("'%s' in '%s'", needle, haystack);
}

/* No byte of the view may drive a terminal or a notification server. */
static inline void
assert_printable (const char *text)
{
  g_assert_true (g_utf8_validate (text, -1, NULL));
  for (const char *p = text; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      g_assert_true (c == '\n' || (c >= 0x20 && c != 0x7f && !(c >= 0x80 && c <= 0x9f)));
    }
}

static inline void
assert_view_printable (const LmTrayView *v)
{
  assert_printable (v->title);
  assert_printable (v->body);
  for (gsize i = 0; v->spinup_lines[i] != NULL; i++)
    {
      assert_printable (v->spinup_lines[i]);
      g_assert_null (strchr (v->spinup_lines[i], '\n'));
    }
}

static inline LmTraySpinUp
spin_up (gint64 time_us, const char *disk, const char *comm, guint32 pid, const char *op)
{
  LmTraySpinUp s = { .time_us = time_us, .disk = disk, .comm = comm, .pid = pid, .operation = op };
  return s;
}
