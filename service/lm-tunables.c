/* lm-tunables.c: the save-apply-restore transaction over a tunables backend.
 * Originals go to the state file (durably) before the first write; a failed
 * write rolls back the ones already made; restore puts back exactly what was
 * saved and leaves alone a value someone else changed since. */
#include "lm-tunables.h"

#include <string.h>

#include "lm-error.h"
#include "lm-escape.h"
#include "lm-io.h"
#include "lm-journal.h"
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
write_tunable (const char *name, const char *value, GError **error)
{
  if (!lm_tunables_is_known (name))
    {
      g_autofree char *shown = lm_escape (name, -1, LM_ESCAPE_DEFAULT);
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED, "Refusing to write vm.%s: not a tunable",
                   shown);
      return FALSE;
    }
  g_autofree char *path = lm_tunables_path (name);
  return lm_io_write_value (path, value, error);
}

static char *
read_tunable (const char *name, GError **error)
{
  g_autofree char *path = lm_tunables_path (name);
  return lm_io_read_value (path, error);
}

/* Best effort: used while already failing, so only log. */
static void
roll_back (GPtrArray *previous)
{
  for (guint i = previous->len; i > 0; i--)
    {
      LmTunable *t = g_ptr_array_index (previous, i - 1);
      g_autoptr (GError) error = NULL;

      if (skip_write_back (t->name, t->value))
        continue;
      if (!write_tunable (t->name, t->value, &error))
        g_warning ("Rolling back vm.%s failed: %s", t->name, error->message);
    }
}

gboolean
lm_tunables_apply (const LmTunablesBackend *backend, const LmSettings *settings, LmEngine engine,
                   LmState *state, GError **error)
{
  g_autoptr (LmJournalTx) tx = lm_journal_begin (state);
  g_autoptr (GPtrArray) plan = NULL;
  g_autoptr (GPtrArray) previous
      = g_ptr_array_new_with_free_func ((GDestroyNotify) lm_tunable_free);
  guint written = 0;

  plan = backend->plan (settings, engine, error);
  if (plan == NULL)
    return FALSE;

  /* 1. Read everything first: a missing file fails before any change. */
  for (guint i = 0; i < plan->len; i++)
    {
      LmTunable *t = g_ptr_array_index (plan, i);
      g_autofree char *current = read_tunable (t->name, error);

      if (current == NULL)
        return FALSE; /* the uncommitted journal entries go with tx */
      /* Someone else rewrote a value we applied (lm-conflicts.c reports
       * it): a new apply while on leaves it as they wrote it. */
      if (lm_journal_check (state, PART, t->name, current) == LM_JOURNAL_CHANGED)
        {
          g_ptr_array_remove_index (plan, i--);
          continue;
        }
      g_ptr_array_add (previous, lm_tunable_new (t->name, current));
      lm_journal_remember (state, PART, t->name, current);
      lm_journal_mark (state, PART, t->name, t->value);
    }
  for (guint i = 0; backend->side_effects != NULL && backend->side_effects[i] != NULL; i++)
    {
      const char *name = backend->side_effects[i];
      g_autofree char *current = read_tunable (name, NULL);

      if (current == NULL)
        continue; /* an older kernel without the byte twins */
      g_ptr_array_add (previous, lm_tunable_new (name, current));
      lm_journal_remember (state, PART, name, current);
    }

  /* 2. Make the originals durable before touching anything. */
  if (!lm_journal_commit (tx, error))
    return FALSE;

  /* 3. Write; on failure undo what was written, in reverse order. */
  for (guint i = 0; i < plan->len; i++, written++)
    {
      LmTunable *t = g_ptr_array_index (plan, i);
      g_autoptr (GError) local_error = NULL;

      if (!write_tunable (t->name, t->value, &local_error))
        {
          /* The plan's writes so far, then the side effects they caused. */
          g_autoptr (GPtrArray) undo = g_ptr_array_new ();
          for (guint j = 0; j < previous->len; j++)
            if (j < written || j >= plan->len)
              g_ptr_array_add (undo, g_ptr_array_index (previous, j));
          roll_back (undo);
          lm_journal_undo (tx);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
    }

  /* 4. Record what the kernel made of the side effects, for the
   * "changed by someone else" check at restore. */
  for (guint i = 0; backend->side_effects != NULL && backend->side_effects[i] != NULL; i++)
    {
      g_autofree char *now = read_tunable (backend->side_effects[i], NULL);
      if (now != NULL)
        lm_journal_mark (state, PART, backend->side_effects[i], now);
    }
  lm_state_save_soon (state); /* not needed for an exact restore */
  return TRUE;
}

gboolean
lm_tunables_saved (LmState *state)
{
  return lm_journal_has_pending (state, PART);
}

gboolean
lm_tunables_restore (LmState *state, GError **error)
{
  g_auto (GStrv) names = lm_journal_pending (state, PART);
  g_autoptr (GString) failures = g_string_new (NULL);

  for (guint i = 0; names[i] != NULL; i++)
    {
      const char *name = names[i];
      g_autofree char *original = lm_journal_original (state, PART, name);
      g_autoptr (GError) local_error = NULL;

      if (!lm_tunables_is_known (name) || original == NULL || !plausible_value (original))
        {
          /* Not something this daemon wrote: the file was tampered with. */
          g_autofree char *shown = lm_escape (name, -1, LM_ESCAPE_DEFAULT);
          g_autofree char *value = lm_escape (original, -1, LM_ESCAPE_DEFAULT);
          g_warning ("Refusing the saved tunable “%s” (original “%s”) in %s: laptop-moded "
                     "writes no such name or value; dropping it",
                     shown, value != NULL ? value : "", lm_state_get_path (state));
          lm_journal_forget (state, PART, name);
          continue;
        }
      g_autofree char *current = read_tunable (name, &local_error);

      if (current == NULL)
        {
          g_string_append_printf (failures, "%s%s", failures->len ? "; " : "",
                                  local_error->message);
          continue;
        }
      if (skip_write_back (name, original))
        {
          /* Its byte twin carries the real value and restores it. */
        }
      else if (lm_journal_check (state, PART, name, current) == LM_JOURNAL_CHANGED)
        {
          g_message ("vm.%s was changed to %s by someone else while laptop mode was on; "
                     "leaving it (original was %s)",
                     name, current, original);
        }
      else if (!g_str_equal (current, original) && !write_tunable (name, original, &local_error))
        {
          g_string_append_printf (failures, "%s%s", failures->len ? "; " : "",
                                  local_error->message);
          continue;
        }
      lm_journal_forget (state, PART, name);
    }

  g_autoptr (GError) save_error = NULL;
  if (!lm_state_save (state, &save_error))
    g_string_append_printf (failures, "%s%s", failures->len ? "; " : "", save_error->message);

  if (failures->len > 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_KERNEL, "Could not restore every tunable: %s",
                   failures->str);
      return FALSE;
    }
  return TRUE;
}
