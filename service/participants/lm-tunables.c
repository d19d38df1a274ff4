/* lm-tunables.c: the tunables participant: what to write over a backend,
 * all or nothing, through the journal's transaction (lm-journal-apply.c);
 * never writes a name outside the fixed set, nor journals by hand. */
#include "lm-tunables.h"

#include <string.h>

#include "lm-error.h"
#include "lm-escape.h"
#include "lm-io.h"
#include "lm-journal.h"
#include "lm-participants.h"
#include "lm-paths.h"

/* The journal part; its originals are group "Tunables" in the state file. */
#define PART "Tunables"

LmTunable *
lm_tunable_new (const char *name, const char *value)
{
  LmTunable *t = g_new0 (LmTunable, 1);

  t->name = g_strdup (name);
  t->value = g_strdup (value);
  return t;
}

void
lm_tunable_free (LmTunable *tunable)
{
  if (tunable == NULL)
    return;
  g_free (tunable->name);
  g_free (tunable->value);
  g_free (tunable);
}

/* Every file under /proc/sys/vm a backend writes or saves: the state file
 * names no other (a hand-made "../kernel/core_pattern" is refused). */
static const char *const known_tunables[] = { "laptop_mode",
                                              "dirty_writeback_centisecs",
                                              "dirty_expire_centisecs",
                                              "dirty_ratio",
                                              "dirty_background_ratio",
                                              "dirty_bytes",
                                              "dirty_background_bytes",
                                              "bdflush",
                                              NULL };

gboolean
lm_tunables_is_known (const char *name)
{
  return name != NULL && g_strv_contains (known_tunables, name);
}

/* What the kernel gives back for those files: numbers separated by spaces
 * (bdflush has nine), nothing else. */
static gboolean
plausible_value (const char *value)
{
  gsize len = strlen (value);

  if (len == 0 || len > 256)
    return FALSE;
  for (const char *p = value; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p) && *p != ' ' && *p != '-')
      return FALSE;
  return TRUE;
}

char *
lm_tunables_path (const char *name)
{
  g_autofree char *system_path = g_build_filename ("/proc/sys/vm", name, NULL);
  return lm_path (system_path);
}

/* Probe order matters: a 2.6+ kernel never has bdflush, but be explicit. */
const LmTunablesBackend *
lm_tunables_probe (void)
{
  static const LmTunablesBackend *const backends[] = { &lm_tunables_sysctl, &lm_tunables_bdflush };

  for (gsize i = 0; i < G_N_ELEMENTS (backends); i++)
    if (backends[i]->probe ())
      return backends[i];
  return NULL;
}

/* The kernel reports 0 for the ratio whose byte twin is in use, and refuses
 * 0 for the byte twins; writing such a 0 back would be wrong or fail. */
static gboolean
skip_write_back (const char *name, const char *value)
{
  static const char *const paired[]
      = { "dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes", NULL };

  return g_str_equal (value, "0") && g_strv_contains (paired, name);
}

static gboolean
write_tunable (const char *name, const char *value, gpointer data, GError **error)
{
  if (!lm_tunables_is_known (name))
    {
      g_autofree char *shown = lm_escape (name, -1, LM_ESCAPE_DEFAULT);
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Refusing to write vm.%s: not a tunable",
                   shown);
      return FALSE;
    }
  g_autofree char *path = lm_tunables_path (name);
  /* Already so: not written again, so a re-apply (or a restore) that
   * changes nothing costs nothing. */
  g_autofree char *now = lm_io_read_value (path, NULL);
  if (now != NULL && g_str_equal (now, value))
    return TRUE;
  return lm_io_write_value (path, value, error);
}

/* Its byte twin carries the real value and puts it back. */
static gboolean
put_back_tunable (const char *name, const char *original, gpointer data, GError **error)
{
  if (skip_write_back (name, original))
    return TRUE;
  return write_tunable (name, original, data, error);
}

static char *
read_tunable (const char *name, gpointer data, GError **error)
{
  g_autofree char *path = lm_tunables_path (name);
  return lm_io_read_value (path, error);
}

/* Only names and values this daemon writes (a hand-made
 * "../kernel/core_pattern" is refused). */
static gboolean
valid_entry (const char *name, const char *original)
{
  return lm_tunables_is_known (name) && plausible_value (original);
}

static char *
shown_name (const char *name)
{
  return g_strconcat ("vm.", name, NULL);
}

static const LmJournalPart journal_part = {
  .part = PART,
  .what = "tunable",
  .mode = LM_JOURNAL_ALL_OR_NOTHING,
  .keep_failed = TRUE,
  .theirs = LM_JOURNAL_LEAVE_CHANGED,
  .write = write_tunable,
  .put_back = put_back_tunable,
  .read = read_tunable,
  .valid = valid_entry,
  .name = shown_name,
};

/* What to change for @plan: every planned value (one someone else
 * rewrote since we applied it the journal leaves as they wrote it, and
 * lm-conflicts.c reports), then the side effects, remembered only.
 * NULL when a file is missing: before any change. */
static GPtrArray *
changes_for (const LmTunablesBackend *backend, GPtrArray *plan, GError **error)
{
  g_autoptr (GPtrArray) changes = lm_journal_changes_new ();

  for (guint i = 0; i < plan->len; i++)
    {
      LmTunable *t = g_ptr_array_index (plan, i);
      g_autofree char *current = read_tunable (t->name, NULL, error);

      if (current == NULL)
        return NULL;
      g_ptr_array_add (changes, lm_journal_change_new (t->name, current, t->value));
    }
  for (guint i = 0; backend->side_effects != NULL && backend->side_effects[i] != NULL; i++)
    {
      const char *name = backend->side_effects[i];
      g_autofree char *current = read_tunable (name, NULL, NULL);

      if (current != NULL) /* else an older kernel without the byte twins */
        g_ptr_array_add (changes, lm_journal_change_new (name, current, NULL));
    }
  return g_steal_pointer (&changes);
}

gboolean
lm_tunables_apply (const LmTunablesBackend *backend, const LmSettings *settings, LmEngine engine,
                   LmState *state, GError **error)
{
  g_autoptr (GPtrArray) plan = backend->plan (settings, engine, error);
  g_autoptr (GPtrArray) changes = NULL;

  if (plan == NULL)
    return FALSE;
  changes = changes_for (backend, plan, error);
  if (changes == NULL)
    return FALSE;
  /* All or nothing: a refused write puts back the ones made. */
  return lm_journal_apply (state, &journal_part, changes, NULL, NULL, error);
}

gboolean
lm_tunables_saved (LmState *state)
{
  return lm_journal_saved (state, &journal_part);
}

gboolean
lm_tunables_restore (LmState *state, GError **error)
{
  return lm_journal_restore (state, &journal_part, NULL, error);
}

/* --- the participant ------------------------------------------------------ */

static gboolean
tunables_apply (const LmSystem *sys, const LmSettings *settings, LmEngine engine, GError **error)
{
  return lm_tunables_apply (sys->backend, settings, engine, sys->state, error);
}

static gboolean
tunables_restore (const LmSystem *sys, GError **error)
{
  return lm_tunables_restore (sys->state, error);
}

const LmParticipant lm_participant_tunables = {
  .name = "tunables",
  .must_succeed = TRUE,
  .apply = tunables_apply,
  .restore = tunables_restore,
  .journal = &journal_part,
};
