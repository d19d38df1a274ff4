/* lm-conflicts.c: each participant's journal entries compared with what the
 * system holds now, through its row's journal part (its read and name); what
 * differs from what we applied is listed and logged once, and left as it is. */
#include "lm-conflicts.h"

#include <stdlib.h>
#include <string.h>

#include "lm-escape.h"
#include "lm-paths.h"
#include "lm-journal.h"
#include "lm-limits.h"
#include "lm-participants.h"

/* At most this many listed: a tool rewriting hundreds of values must not
 * grow the property without bound. */
#define LM_CONFLICTS_MAX 64

typedef struct
{
  char *what;
  gint64 when; /* µs since the epoch, when first found */
  char *expected;
  char *found;
  char *by; /* who changed it, or what is known of who might have */
} LmConflict;

struct _LmConflicts
{
  GPtrArray *list;  /* of LmConflict, in the order found */
  GHashTable *seen; /* "what\nfound": logged already */
  LmConflictsWriterFunc writer;
};

static void
conflict_free (gpointer data)
{
  LmConflict *c = data;

  g_free (c->what);
  g_free (c->expected);
  g_free (c->found);
  g_free (c->by);
  g_free (c);
}

LmConflicts *
lm_conflicts_new (void)
{
  LmConflicts *self = g_new0 (LmConflicts, 1);

  self->list = g_ptr_array_new_with_free_func (conflict_free);
  self->seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return self;
}

void
lm_conflicts_free (LmConflicts *self)
{
  if (self == NULL)
    return;
  g_ptr_array_unref (self->list);
  g_hash_table_unref (self->seen);
  g_free (self);
}

void
lm_conflicts_set_writer_func (LmConflicts *self, LmConflictsWriterFunc func)
{
  self->writer = func;
}

/* The tools that set what laptop mode sets, by the program each installs. */
static const struct
{
  const char *path, *name;
} power_tools[] = {
  { "/usr/sbin/tlp", "TLP" },
  { "/usr/sbin/powertop", "powertop" },
  { "/usr/sbin/tuned", "tuned" },
  { "/usr/bin/system76-power", "system76-power" },
  { "/usr/sbin/laptop_mode", "laptop-mode-tools" },
};

char *
lm_conflicts_power_tools (void)
{
  g_autoptr (GPtrArray) found = g_ptr_array_new ();

  for (gsize i = 0; i < G_N_ELEMENTS (power_tools); i++)
    {
      g_autofree char *path = lm_path (power_tools[i].path);
      if (g_file_test (path, G_FILE_TEST_EXISTS))
        g_ptr_array_add (found, (gpointer) power_tools[i].name);
    }
  if (found->len == 0)
    return NULL;
  GString *s = g_string_new (found->pdata[0]);
  for (guint i = 1; i < found->len; i++)
    g_string_append_printf (s, "%s%s", i + 1 == found->len ? " and " : ", ",
                            (const char *) found->pdata[i]);
  return g_string_free (s, FALSE);
}

gboolean
lm_conflicts_file_of (const char *what, char **up, char **dir, char **name)
{
  *up = *dir = *name = NULL;
  if (what == NULL || *what == '\0')
    return FALSE;
  if (what[0] == '/')
    {
      /* The path written through may hold symlinks (/sys/class/...); the
       * kernel's names are the last three parts of the real one. */
      g_autofree char *real = realpath (what, NULL);
      const char *path = real != NULL ? real : what;
      g_autofree char *parent = g_path_get_dirname (path);
      g_autofree char *grand = g_path_get_dirname (parent);
      *name = g_path_get_basename (path);
      *dir = g_path_get_basename (parent);
      *up = g_path_get_basename (grand);
    }
  else
    {
      /* A sysctl: "vm.dirty_expire_centisecs" is /proc/sys/vm/…. */
      g_auto (GStrv) parts = g_strsplit (what, ".", -1);
      guint n = g_strv_length (parts);
      if (n < 2)
        return FALSE;
      for (guint i = 0; i < n; i++)
        if (*parts[i] == '\0')
          return FALSE;
      *name = g_strdup (parts[n - 1]);
      *dir = g_strdup (parts[n - 2]);
      *up = g_strdup (n >= 3 ? parts[n - 3] : "sys");
    }
  return TRUE;
}

/* "tlp[1234]" where the write was seen, else what is known. */
static char *
writer_of (LmConflicts *self, const char *what)
{
  g_autofree char *up = NULL, *dir = NULL, *name = NULL;
  char *who = NULL;

  if (self->writer != NULL && lm_conflicts_file_of (what, &up, &dir, &name))
    who = self->writer (up, dir, name);
  if (who != NULL)
    return who;
  g_autofree char *tools = lm_conflicts_power_tools ();
  return tools != NULL ? g_strdup_printf ("unknown; %s %s installed", tools,
                                          strstr (tools, " and ") != NULL ? "are" : "is")
                       : g_strdup ("unknown");
}

static LmConflict *
find (LmConflicts *self, const char *what)
{
  for (guint i = 0; i < self->list->len; i++)
    {
      LmConflict *c = g_ptr_array_index (self->list, i);
      if (g_str_equal (c->what, what))
        return c;
    }
  return NULL;
}

/* @found changed again (or for the first time): list it, log it once per
 * (what, found). */
static gboolean
note (LmConflicts *self, const char *what, const char *expected, const char *found)
{
  LmConflict *c = find (self, what);
  g_autofree char *seen_key = g_strconcat (what, "\n", found, NULL);

  if (c != NULL && g_str_equal (c->found, found) && g_str_equal (c->expected, expected))
    return FALSE;
  g_autofree char *by = writer_of (self, what);
  if (!g_hash_table_contains (self->seen, seen_key))
    {
      g_autofree char *safe_found = lm_escape (found, -1, LM_ESCAPE_DEFAULT);
      g_autofree char *safe_what = lm_escape (what, -1, LM_ESCAPE_DEFAULT);
      g_autofree char *safe_by = lm_escape (by, -1, LM_ESCAPE_DEFAULT);
      g_message ("%s was changed by someone else to %s (laptop mode set %s; written by %s); "
                 "leaving it",
                 safe_what, safe_found, expected, safe_by);
      g_hash_table_add (self->seen, g_steal_pointer (&seen_key));
    }
  if (c == NULL)
    {
      if (self->list->len >= LM_CONFLICTS_MAX)
        return FALSE;
      c = g_new0 (LmConflict, 1);
      c->what = g_strdup (what);
      g_ptr_array_add (self->list, c);
    }
  g_free (c->expected);
  g_free (c->found);
  c->expected = g_strdup (expected);
  c->found = g_strdup (found);
  g_free (c->by);
  c->by = g_steal_pointer (&by);
  c->when = g_get_real_time ();
  return TRUE;
}

/* @row's entries that someone else changed since they were applied. */
static gboolean
check_row (LmConflicts *self, LmState *state, const LmJournalPart *part)
{
  g_autoptr (GPtrArray) entries = lm_journal_entries (state, part);
  gboolean changed = FALSE;

  for (guint i = 0; i < entries->len; i++)
    {
      LmJournalEntry *e = g_ptr_array_index (entries, i);
      g_autofree char *what = NULL;
      g_autofree char *now = NULL;

      if (e->applied == NULL)
        continue; /* remembered only (a side effect): nothing to compare */
      now = part->read (e->key, NULL, NULL);
      if (now == NULL)
        continue;
      if (lm_journal_verdict (e->original, e->applied, now) != LM_JOURNAL_CHANGED)
        continue;
      /* Bounded: a value longer than a path is cut for the listing. */
      if (strlen (now) > LM_LIMIT_PATH)
        now[LM_LIMIT_PATH] = '\0';
      what = lm_journal_name (part, e->key);
      changed |= note (self, what, e->applied, now);
    }
  return changed;
}

gboolean
lm_conflicts_check (LmConflicts *self, LmState *state)
{
  gboolean changed = FALSE;
  const LmParticipant *p;

  for (guint n = 0; (p = lm_participants_get (n)) != NULL; n++)
    if (p->journal != NULL && p->journal->read != NULL)
      changed |= check_row (self, state, p->journal);
  return changed;
}

gboolean
lm_conflicts_clear (LmConflicts *self)
{
  gboolean had = self->list->len > 0;

  g_ptr_array_set_size (self->list, 0);
  g_hash_table_remove_all (self->seen);
  return had;
}

GVariant *
lm_conflicts_to_variant (LmConflicts *self)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(sxss)"));
  for (guint i = 0; i < self->list->len; i++)
    {
      LmConflict *c = g_ptr_array_index (self->list, i);
      g_autofree char *found = lm_escape (c->found, -1, LM_ESCAPE_DEFAULT);
      g_autofree char *expected = lm_escape (c->expected, -1, LM_ESCAPE_DEFAULT);
      g_variant_builder_add (&b, "(sxss)", c->what, c->when, expected, found);
    }
  return g_variant_builder_end (&b);
}

GVariant *
lm_conflicts_writers_to_variant (LmConflicts *self)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{ss}"));
  for (guint i = 0; i < self->list->len; i++)
    {
      LmConflict *c = g_ptr_array_index (self->list, i);
      g_autofree char *by = lm_escape (c->by, -1, LM_ESCAPE_DEFAULT);
      g_variant_builder_add (&b, "{ss}", c->what, by);
    }
  return g_variant_builder_end (&b);
}
