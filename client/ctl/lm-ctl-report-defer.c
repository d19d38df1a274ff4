/* lm-ctl-report-defer.c: the report's deferred runs: what waited for a disk
 * to be awake anyway (laptop-modectl defer, a maintenance unit's
 * wait-awake), how long, and whose spin-up it ran in, joined here from the
 * ledger's spin-ups; one sentence for the terminal and `spinups`. */
#include "config.h"

#include "lm-ctl-report-model.h"
#include "lm-names.h"

/* A spin-up reported a moment after the waits it ended (a kernel thread's
 * is held back up to 1.5 s to be named) still belongs to them. */
#define RODE_SLACK_US (2 * G_USEC_PER_SEC)

void
lm_report_deferred_free (gpointer p)
{
  LmReportDeferred *r = p;

  g_free (r->name);
  g_free (r->reason);
  g_free (r->rode);
  g_free (r);
}

void
lm_report_add_deferred (LmReportDisk *d, GVariant *rec, gint64 start_us, gint64 end_us)
{
  LmReportDeferred *r = g_new0 (LmReportDeferred, 1);
  const char *unit = NULL, *comm = NULL, *reason = NULL;
  gboolean other = FALSE;

  g_variant_lookup (rec, "Unit", "&s", &unit);
  g_variant_lookup (rec, "Comm", "&s", &comm);
  g_variant_lookup (rec, "Reason", "&s", &reason);
  g_variant_lookup (rec, "OtherUser", "b", &other);
  r->start_us = start_us;
  r->end_us = end_us;
  if (!other)
    r->name = g_strdup (unit != NULL && *unit != '\0'   ? unit
                        : comm != NULL && *comm != '\0' ? comm
                                                        : "a deferred job");
  r->reason = g_strdup (reason != NULL ? reason : "awake");
  g_ptr_array_add (d->deferred, r);
}

static int
cmp_deferred (gconstpointer a, gconstpointer b)
{
  const LmReportDeferred *x = *(LmReportDeferred *const *) a;
  const LmReportDeferred *y = *(LmReportDeferred *const *) b;

  return x->end_us < y->end_us ? -1 : x->end_us > y->end_us;
}

void
lm_report_link_deferred (LmReportDisk *d)
{
  g_ptr_array_sort (d->deferred, cmp_deferred);
  for (guint i = 0; i < d->deferred->len; i++)
    {
      LmReportDeferred *r = g_ptr_array_index (d->deferred, i);
      const LmReportSpinUp *rode = NULL;

      if (!g_str_equal (r->reason, "awake"))
        continue;
      /* The latest spin-up of its wait: the one that ended it. */
      for (guint k = 0; k < d->spinups->len; k++)
        {
          const LmReportSpinUp *s = g_ptr_array_index (d->spinups, k);
          if (s->time_us > r->end_us + RODE_SLACK_US)
            break;
          if (s->time_us >= r->start_us)
            rode = s;
        }
      if (rode != NULL)
        r->rode = g_strdup (rode->comm);
    }
}

/* "47 min", "2 h 5 min", "12 s". */
static char *
duration_text (gint64 us)
{
  gint64 s = MAX (0, us) / G_USEC_PER_SEC;

  if (s < 120)
    return g_strdup_printf ("%" G_GINT64_FORMAT " s", s);
  if (s < 3600)
    return g_strdup_printf ("%" G_GINT64_FORMAT " min", (s + 30) / 60);
  return g_strdup_printf ("%" G_GINT64_FORMAT " h %" G_GINT64_FORMAT " min", s / 3600,
                          (s % 3600 + 30) / 60);
}

char *
lm_report_deferred_sentence (const LmReportDeferred *r)
{
  g_autofree char *waited = duration_text (r->end_us - r->start_us);
  const char *who = r->name != NULL ? r->name : "another user's job";

  if (g_str_equal (r->reason, "awake"))
    {
      if (r->rode == NULL)
        return g_strdup_printf ("%s waited %s and ran while the disk was awake", who, waited);
      if (g_str_equal (r->rode, LM_OTHER_USER_TEXT))
        return g_strdup_printf ("%s waited %s and ran in a spin-up of another user's process", who,
                                waited);
      return g_strdup_printf ("%s waited %s and ran in %s's spin-up", who, waited, r->rode);
    }
  if (g_str_equal (r->reason, "timeout"))
    return g_strdup_printf ("%s waited %s, its longest wait, and woke the disk itself", who,
                            waited);
  if (g_str_equal (r->reason, "inactive"))
    return g_strdup_printf ("%s waited %s and ran when laptop mode went off", who, waited);
  if (g_str_equal (r->reason, "ac"))
    return g_strdup_printf ("%s waited %s and ran on AC power", who, waited);
  return g_strdup_printf ("%s waited %s and ran when deferring was turned off", who, waited);
}

void
lm_report_deferred_text (const LmReportDisk *d)
{
  if (d->deferred->len == 0)
    return;
  g_print ("  deferred runs:\n");
  for (guint i = 0; i < d->deferred->len; i++)
    {
      const LmReportDeferred *r = g_ptr_array_index (d->deferred, i);
      g_autofree char *when = lm_ctl_format_time (r->end_us);
      g_autofree char *sentence = lm_report_deferred_sentence (r);
      g_autofree char *safe = lm_ctl_safe (sentence);
      g_print ("    %s  %s\n", when, safe);
    }
}

void
lm_report_deferred_json (JsonBuilder *b, const LmReportDisk *d)
{
  json_builder_set_member_name (b, "deferred");
  json_builder_begin_array (b);
  for (guint i = 0; i < d->deferred->len; i++)
    {
      const LmReportDeferred *r = g_ptr_array_index (d->deferred, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "start_us");
      json_builder_add_int_value (b, r->start_us);
      json_builder_set_member_name (b, "end_us");
      json_builder_add_int_value (b, r->end_us);
      json_builder_set_member_name (b, "name");
      if (r->name != NULL)
        json_builder_add_string_value (b, r->name);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "reason");
      json_builder_add_string_value (b, r->reason);
      json_builder_set_member_name (b, "rode");
      if (r->rode != NULL)
        json_builder_add_string_value (b, r->rode);
      else
        json_builder_add_null_value (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}
