/* lm-nvme-residency.c: walks recorded idle gaps through an NVMe drive's
 * APST table and sums energy over its power states. Pure arithmetic. */
#include "lm-nvme-residency.h"

#include <stdlib.h>
#include <string.h>

static int
cmp_i64 (const void *a, const void *b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

static double
power_of (const LmResidencyState *s, gboolean active, LmResidency *out)
{
  double reported = active ? s->active_power_w : s->idle_power_w;

  if (reported >= 0)
    {
      out->reported_terms++;
      return reported;
    }
  out->max_power_terms++;
  return s->max_power_w;
}

static void
spend (const LmResidencyTable *t, guint state, double seconds, gboolean active, LmResidency *out)
{
  if (seconds <= 0)
    return;
  if (active)
    out->active_s += seconds;
  else
    out->state_s[state] += seconds;
  out->energy_wh += power_of (&t->states[state], active, out) * seconds / 3600.0;
}

/* A gap of @gap seconds without I/O: state by state down the table, at
 * most once through each state so a table with a loop ends. */
static void
walk_gap (const LmResidencyTable *t, double gap, LmResidency *out)
{
  guint state = t->work_state;
  double left = gap;

  if (t->apst == LM_APST_ENABLED)
    for (guint steps = 0; steps < t->n_states; steps++)
      {
        const LmResidencyState *s = &t->states[state];
        double itpt = s->idle_ms / 1000.0;
        if (s->idle_ms == 0 || s->target >= t->n_states || s->target == state || left < itpt)
          break;
        spend (t, state, itpt, FALSE, out);
        left -= itpt;
        state = s->target;
      }
  spend (t, state, left, FALSE, out);
}

void
lm_residency_walk (const LmResidencyTable *t, gint64 *io_s, gsize n, gint64 since_s, gint64 until_s,
                   LmResidency *out)
{
  gint64 window[2] = { since_s, until_s };

  lm_residency_walk_spans (t, io_s, n, window, 1, out);
}

void
lm_residency_walk_spans (const LmResidencyTable *t, gint64 *io_s, gsize n, const gint64 *spans,
                         gsize n_spans, LmResidency *out)
{
  gsize i = 0;

  memset (out, 0, sizeof *out);
  if (t->n_states == 0 || t->n_states > LM_RESIDENCY_MAX_STATES || t->work_state >= t->n_states)
    return;
  if (n > 0)
    qsort (io_s, n, sizeof *io_s, cmp_i64);
  for (gsize k = 0; k < n_spans; k++)
    {
      gint64 since_s = spans[2 * k], until_s = spans[2 * k + 1];
      gint64 idle_from = since_s;
      if (until_s <= since_s)
        continue;
      /* Each span starts as if the drive had just finished I/O: the time
       * before it (suspended, or nobody watching) is no idle time at all. */
      for (; i < n && io_s[i] < until_s; i++)
        {
          gint64 s = io_s[i];
          if (s < idle_from)
            continue; /* before the span, or a repeat of a second counted */
          walk_gap (t, (double) (s - idle_from), out);
          spend (t, t->work_state, 1, TRUE, out);
          idle_from = s + 1;
        }
      if (idle_from < until_s)
        walk_gap (t, (double) (until_s - idle_from), out);
      out->window_s += until_s - since_s;
    }
}

guint
lm_residency_deepest (const LmResidencyTable *t)
{
  guint state = t->work_state;

  if (t->apst != LM_APST_ENABLED)
    return state;
  for (guint steps = 0; steps < t->n_states && state < t->n_states; steps++)
    {
      const LmResidencyState *s = &t->states[state];
      if (s->idle_ms == 0 || s->target >= t->n_states || s->target == state)
        break;
      state = s->target;
    }
  return state;
}

const char *
lm_residency_energy_source (const LmResidency *r)
{
  if (r->max_power_terms == 0)
    return "idlp_actp";
  if (r->reported_terms == 0)
    return "max_power";
  return "mixed";
}

const char *
lm_apst_mode_to_string (LmApstMode mode)
{
  switch (mode)
    {
      case LM_APST_ENABLED:
        return "enabled";
      case LM_APST_DISABLED:
        return "disabled";
      default:
        return "absent";
    }
}

gboolean
lm_residency_table_from_disk (GVariant *disk, LmResidencyTable *t)
{
  g_autoptr (GVariant) states = NULL;
  g_autoptr (GVariant) apst = NULL;
  gboolean supported = FALSE, enabled = FALSE;
  guint32 work = 0;
  gboolean operational[LM_RESIDENCY_MAX_STATES] = { FALSE };

  memset (t, 0, sizeof *t);
  states = g_variant_lookup_value (disk, "NvmePowerStates", G_VARIANT_TYPE ("aa{sv}"));
  if (states == NULL || g_variant_n_children (states) == 0)
    return FALSE;
  t->n_states = MIN (g_variant_n_children (states), LM_RESIDENCY_MAX_STATES);
  for (guint i = 0; i < t->n_states; i++)
    {
      g_autoptr (GVariant) ps = g_variant_get_child_value (states, i);
      LmResidencyState *s = &t->states[i];
      if (!g_variant_lookup (ps, "MaxPowerW", "d", &s->max_power_w))
        s->max_power_w = 0;
      if (!g_variant_lookup (ps, "IdlePowerW", "d", &s->idle_power_w))
        s->idle_power_w = -1;
      if (!g_variant_lookup (ps, "ActivePowerW", "d", &s->active_power_w))
        s->active_power_w = -1;
      g_variant_lookup (ps, "Operational", "b", &operational[i]);
      s->operational = operational[i];
    }
  g_variant_lookup (disk, "NvmeApstSupported", "b", &supported);
  g_variant_lookup (disk, "NvmeApst", "b", &enabled);
  apst = g_variant_lookup_value (disk, "NvmeApstTable", G_VARIANT_TYPE ("a(uu)"));
  t->apst = !supported                ? LM_APST_ABSENT
            : enabled && apst != NULL ? LM_APST_ENABLED
                                      : LM_APST_DISABLED;
  for (guint i = 0; apst != NULL && i < MIN (g_variant_n_children (apst), t->n_states); i++)
    g_variant_get_child (apst, i, "(uu)", &t->states[i].idle_ms, &t->states[i].target);
  /* The operational state the host chose (read right after I/O): the
   * drive works there and its idle gaps start there. */
  if (g_variant_lookup (disk, "NvmePowerState", "u", &work) && work < t->n_states
      && operational[work])
    t->work_state = work;
  return TRUE;
}
