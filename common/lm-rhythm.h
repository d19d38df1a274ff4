/* lm-rhythm.h: how regular a cause's wake-ups are ("every 30 s", "every
 * 15–16 min", "at 06:25 daily", "irregular"), from their times alone.
 * Pure; never does I/O. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  LM_RHYTHM_TOO_FEW,   /* fewer than LM_RHYTHM_MIN_EVENTS: nothing to say */
  LM_RHYTHM_PERIODIC,  /* most intervals alike: every period_lo..period_hi s */
  LM_RHYTHM_DAILY,     /* about once a day at one time of day (local) */
  LM_RHYTHM_IRREGULAR, /* neither */
} LmRhythmKind;

#define LM_RHYTHM_MIN_EVENTS 3

typedef struct
{
  LmRhythmKind kind;
  gint64 period_lo_s, period_hi_s; /* PERIODIC: the range of the alike intervals */
  guint minute_of_day;             /* DAILY: local time, minutes after midnight */
} LmRhythm;

/* @times_us: realtime µs, in any order; @n of them. @tz: the local time
 * zone for DAILY (NULL: the process's). */
void lm_rhythm_find (const gint64 *times_us, gsize n, GTimeZone *tz, LmRhythm *out);
/* "every 30 s", "every 15–16 min", "every 2 h", "at 06:25 daily",
 * "irregular", or NULL for TOO_FEW. */
char *lm_rhythm_to_string (const LmRhythm *r);

G_END_DECLS
