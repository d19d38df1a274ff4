/* lm-advice.c: the table of known causes of wake-ups (see lm-advice.h).
 * Owns parsing and bounding the table's key files and matching a cause
 * against them; prints nothing. */
#include "config.h"

#include "lm-advice.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lm-paths.h"

#define MAX_PATTERN 256

static const char *const vias[] = { "direct", "writeback", "kernel", "passthrough" };
static const char *const rhythms[] = { "periodic", "daily", "irregular" };
static const LmRhythmKind rhythm_kinds[]
    = { LM_RHYTHM_PERIODIC, LM_RHYTHM_DAILY, LM_RHYTHM_IRREGULAR };
static const char *const placeholders[] = { "program", "unit", "file", "rhythm", "device" };
static const char *const keys[]
    = { "Programs", "Units", "Files", "Via", "Rhythm", "OneFile", "Disabled", "What", "Avoid" };

typedef struct
{
  char *id;
  gboolean disabled;
  GPtrArray *programs, *units, *files; /* GPatternSpec; NULL: any */
  guint via_mask;                      /* bit i: vias[i]; 0: any */
  gint rhythm;                         /* LmRhythmKind, -1: any */
  gboolean one_file;
  char *what, *avoid;
} Entry;

struct _LmAdvice
{
  GPtrArray *entries; /* Entry, in precedence order */
  GHashTable *ids;    /* id -> Entry (borrowed) */
};

static void
entry_free (gpointer p)
{
  Entry *e = p;

  g_free (e->id);
  g_clear_pointer (&e->programs, g_ptr_array_unref);
  g_clear_pointer (&e->units, g_ptr_array_unref);
  g_clear_pointer (&e->files, g_ptr_array_unref);
  g_free (e->what);
  g_free (e->avoid);
  g_free (e);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Entry, entry_free)

LmAdvice *
lm_advice_new (void)
{
  LmAdvice *a = g_new0 (LmAdvice, 1);

  a->entries = g_ptr_array_new_with_free_func (entry_free);
  a->ids = g_hash_table_new (g_str_hash, g_str_equal);
  return a;
}

void
lm_advice_free (LmAdvice *advice)
{
  if (advice == NULL)
    return;
  g_hash_table_unref (advice->ids);
  g_ptr_array_unref (advice->entries);
  g_free (advice);
}

guint
lm_advice_size (const LmAdvice *advice)
{
  return advice->entries->len;
}

static gboolean
has_control (const char *text)
{
  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    if (g_unichar_iscntrl (g_utf8_get_char (p)))
      return TRUE;
  return FALSE;
}

static gboolean
valid_id (const char *id)
{
  gsize n = strlen (id);

  if (n == 0 || n > LM_ADVICE_MAX_ID)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    if (!g_ascii_isalnum (id[i]) && id[i] != '-' && id[i] != '_' && id[i] != '.')
      return FALSE;
  return TRUE;
}

/* A sentence: bounded, printable, and its braces only around a known
 * placeholder (a stray one is a typo the output would show). */
static gboolean
valid_template (const char *text, GError **error)
{
  if (*text == '\0' || strlen (text) > LM_ADVICE_MAX_TEXT || has_control (text))
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                   "empty, longer than %d bytes, or with control characters", LM_ADVICE_MAX_TEXT);
      return FALSE;
    }
  for (const char *p = strpbrk (text, "{}"); p != NULL; p = strpbrk (p + 1, "{}"))
    {
      gboolean known = FALSE;
      for (gsize i = 0; *p == '{' && i < G_N_ELEMENTS (placeholders) && !known; i++)
        {
          gsize n = strlen (placeholders[i]);
          if (strncmp (p + 1, placeholders[i], n) == 0 && p[1 + n] == '}')
            {
              known = TRUE;
              p += n + 1;
            }
        }
      if (!known)
        {
          g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                       "a brace that is not {program}, {unit}, {file}, {rhythm} or {device}");
          return FALSE;
        }
    }
  return TRUE;
}

static GPtrArray *
get_patterns (GKeyFile *kf, const char *group, const char *key, GError **error)
{
  gsize n = 0;
  g_auto (GStrv) list = g_key_file_get_string_list (kf, group, key, &n, error);

  if (list == NULL)
    return NULL;
  if (n == 0 || n > LM_ADVICE_MAX_PATTERNS)
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE, "%s: 1 to %d patterns",
                   key, LM_ADVICE_MAX_PATTERNS);
      return NULL;
    }
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_pattern_spec_free);
  for (gsize i = 0; i < n; i++)
    {
      if (*list[i] == '\0' || strlen (list[i]) > MAX_PATTERN || has_control (list[i]))
        {
          g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                       "%s: a pattern empty, longer than %d bytes or with control characters", key,
                       MAX_PATTERN);
          return NULL;
        }
      g_ptr_array_add (out, g_pattern_spec_new (list[i]));
    }
  return g_steal_pointer (&out);
}

/* @index: where @name sits in @names, -1 when it is not there. */
static gint
index_of (const char *const *names, gsize n, const char *name)
{
  for (gsize i = 0; i < n; i++)
    if (g_str_equal (names[i], name))
      return (gint) i;
  return -1;
}

static Entry *
parse_entry (GKeyFile *kf, const char *group, GError **error)
{
  g_autoptr (Entry) e = g_new0 (Entry, 1);
  g_auto (GStrv) present = g_key_file_get_keys (kf, group, NULL, NULL);

  e->id = g_strdup (group);
  e->rhythm = -1;
  if (!valid_id (group))
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                   "a name of letters, digits, '-', '_' and '.', at most %d", LM_ADVICE_MAX_ID);
      return NULL;
    }
  for (gsize i = 0; present != NULL && present[i] != NULL; i++)
    if (index_of (keys, G_N_ELEMENTS (keys), present[i]) < 0)
      {
        g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND, "unknown key %s",
                     present[i]);
        return NULL;
      }
  if (g_key_file_has_key (kf, group, "Disabled", NULL))
    {
      e->disabled = g_key_file_get_boolean (kf, group, "Disabled", error);
      if (*error != NULL)
        return NULL;
      if (e->disabled)
        return g_steal_pointer (&e);
    }
  GPtrArray **lists[] = { &e->programs, &e->units, &e->files };
  for (gsize i = 0; i < G_N_ELEMENTS (lists); i++)
    if (g_key_file_has_key (kf, group, keys[i], NULL)
        && (*lists[i] = get_patterns (kf, group, keys[i], error)) == NULL)
      return NULL;
  if (g_key_file_has_key (kf, group, "Via", NULL))
    {
      gsize n = 0;
      g_auto (GStrv) list = g_key_file_get_string_list (kf, group, "Via", &n, error);
      for (gsize i = 0; list != NULL && i < n; i++)
        {
          gint k = index_of (vias, G_N_ELEMENTS (vias), list[i]);
          if (k < 0)
            {
              g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                           "Via: direct, writeback, kernel or passthrough");
              return NULL;
            }
          e->via_mask |= 1u << k;
        }
      if (list == NULL)
        return NULL;
    }
  if (g_key_file_has_key (kf, group, "Rhythm", NULL))
    {
      g_autofree char *r = g_key_file_get_string (kf, group, "Rhythm", error);
      gint k = r != NULL ? index_of (rhythms, G_N_ELEMENTS (rhythms), r) : -1;
      if (k < 0)
        {
          if (*error == NULL)
            g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                         "Rhythm: periodic, daily or irregular");
          return NULL;
        }
      e->rhythm = (gint) rhythm_kinds[k];
    }
  if (g_key_file_has_key (kf, group, "OneFile", NULL))
    {
      e->one_file = g_key_file_get_boolean (kf, group, "OneFile", error);
      if (*error != NULL)
        return NULL;
    }
  if (e->programs == NULL && e->units == NULL && e->files == NULL && e->rhythm < 0 && !e->one_file)
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND,
                   "matches everything: give Programs, Units, Files, Rhythm or OneFile");
      return NULL;
    }
  char **texts[] = { &e->what, &e->avoid };
  for (gsize i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      const char *key = i == 0 ? "What" : "Avoid";
      *texts[i] = g_key_file_get_string (kf, group, key, error);
      if (*texts[i] == NULL)
        return NULL;
      if (!valid_template (*texts[i], error))
        {
          g_prefix_error (error, "%s: ", key);
          return NULL;
        }
    }
  return g_steal_pointer (&e);
}

gint
lm_advice_add_data (LmAdvice *advice, const char *data, gsize len, const char *origin,
                    GPtrArray *warnings, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  gint taken = 0;

  if (len > LM_ADVICE_MAX_FILE_BYTES)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: larger than %d bytes", origin,
                   LM_ADVICE_MAX_FILE_BYTES);
      return -1;
    }
  /* GKeyFile reads up to a NUL; one inside the data is refused, not cut. */
  if (len > 0 && memchr (data, '\0', len) != NULL)
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE, "%s: a NUL byte", origin);
      return -1;
    }
  if (len > 0 && !g_key_file_load_from_data (kf, data, len, G_KEY_FILE_NONE, error))
    {
      g_prefix_error (error, "%s: ", origin);
      return -1;
    }
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  for (gsize i = 0; groups[i] != NULL; i++)
    {
      g_autoptr (GError) local = NULL;
      if (g_hash_table_contains (advice->ids, groups[i]))
        continue;
      if (advice->entries->len >= LM_ADVICE_MAX_ENTRIES)
        {
          if (warnings != NULL)
            g_ptr_array_add (warnings, g_strdup_printf ("%s: more than %d entries in all; "
                                                        "the rest is ignored",
                                                        origin, LM_ADVICE_MAX_ENTRIES));
          break;
        }
      Entry *e = parse_entry (kf, groups[i], &local);
      if (e == NULL)
        {
          if (warnings != NULL)
            g_ptr_array_add (warnings, g_strdup_printf ("%s: [%s] ignored: %s", origin, groups[i],
                                                        local->message));
          continue;
        }
      g_ptr_array_add (advice->entries, e);
      g_hash_table_insert (advice->ids, e->id, e);
      taken++;
    }
  return taken;
}

/* A regular file of at most the table's bound, read through one
 * descriptor (a FIFO or a device under /etc never blocks the command). */
static char *
read_bounded (const char *path, gsize *len, GError **error)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  struct stat st;

  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "%s: %s", path,
                   g_strerror (saved));
      return NULL;
    }
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_size > LM_ADVICE_MAX_FILE_BYTES)
    {
      close (fd);
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                   "%s: not a regular file of at most %d bytes", path, LM_ADVICE_MAX_FILE_BYTES);
      return NULL;
    }
  g_autofree char *buf = g_malloc (LM_ADVICE_MAX_FILE_BYTES + 1);
  gsize n = 0;
  while (n <= LM_ADVICE_MAX_FILE_BYTES)
    {
      ssize_t r = read (fd, buf + n, LM_ADVICE_MAX_FILE_BYTES + 1 - n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      n += (gsize) r;
    }
  close (fd);
  *len = n;
  buf[MIN (n, (gsize) LM_ADVICE_MAX_FILE_BYTES)] = '\0';
  return g_steal_pointer (&buf);
}

static void
load_file (LmAdvice *advice, const char *path, GPtrArray *warnings)
{
  g_autoptr (GError) error = NULL;
  gsize len = 0;
  g_autofree char *data = read_bounded (path, &len, &error);

  if (data == NULL || lm_advice_add_data (advice, data, len, path, warnings, &error) < 0)
    g_ptr_array_add (warnings, g_strdup (error->message));
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

LmAdvice *
lm_advice_load (GPtrArray *warnings)
{
  g_autoptr (LmAdvice) advice = lm_advice_new ();
  g_autofree char *dir = lm_path (LM_CAUSES_DIR);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name, *env = g_getenv ("LAPTOP_MODED_CAUSES");

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, ".conf") && name[0] != '.')
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  if (names->len > LM_ADVICE_MAX_FILES)
    {
      g_ptr_array_add (warnings, g_strdup_printf ("%s: only the first %d files are read", dir,
                                                  LM_ADVICE_MAX_FILES));
      g_ptr_array_set_size (names, LM_ADVICE_MAX_FILES);
    }
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir, names->pdata[i], NULL);
      load_file (advice, path, warnings);
    }
  if (env != NULL && *env != '\0')
    load_file (advice, env, warnings);
  else
    {
      g_autofree char *shipped = lm_path (LM_CAUSES_FILE);
      load_file (advice, shipped, warnings);
    }
  return g_steal_pointer (&advice);
}

static gboolean
any_match (GPtrArray *patterns, const char *text)
{
  for (guint i = 0; text != NULL && i < patterns->len; i++)
    if (g_pattern_spec_match_string (patterns->pdata[i], text))
      return TRUE;
  return FALSE;
}

static gboolean
entry_matches (const Entry *e, const LmAdviceCause *c)
{
  gsize n_files = 0;

  while (c->files != NULL && c->files[n_files] != NULL)
    n_files++;
  if (e->disabled)
    return FALSE;
  if (e->programs != NULL && !any_match (e->programs, c->comm)
      && !any_match (e->programs, c->thread))
    return FALSE;
  if (e->units != NULL && !any_match (e->units, c->unit))
    return FALSE;
  if (e->files != NULL)
    {
      gboolean found = FALSE;
      for (gsize i = 0; i < n_files && !found; i++)
        found = any_match (e->files, c->files[i]);
      if (!found)
        return FALSE;
    }
  if (e->via_mask != 0)
    {
      gint k = c->via != NULL ? index_of (vias, G_N_ELEMENTS (vias), c->via) : -1;
      if (k < 0 || !(e->via_mask & (1u << k)))
        return FALSE;
    }
  if (e->rhythm >= 0 && (c->rhythm == NULL || (gint) c->rhythm->kind != e->rhythm))
    return FALSE;
  if (e->one_file && n_files != 1)
    return FALSE;
  return TRUE;
}

char *
lm_advice_device_of (const char *comm)
{
  const char *slash = comm != NULL ? strchr (comm, '/') : NULL;

  if (slash == NULL || slash[1] == '\0' || g_str_has_prefix (comm, "kworker/"))
    return NULL;
  const char *start = slash + 1, *end = start + strlen (start);
  /* jbd2/sda1-8: the journal's inode number follows the last '-'. */
  const char *dash = strrchr (start, '-');
  if (dash != NULL && dash[1] != '\0' && strspn (dash + 1, "0123456789") == strlen (dash + 1))
    end = dash;
  return end > start ? g_strndup (start, (gsize) (end - start)) : NULL;
}

static char *
fill (const char *template, const LmAdviceCause *c)
{
  GString *out = g_string_new (NULL);
  /* Said as an adverb in a sentence: "irregular" would not read. */
  g_autofree char *rhythm = c->rhythm == NULL ? NULL
                            : c->rhythm->kind == LM_RHYTHM_IRREGULAR
                                ? g_strdup ("irregularly")
                                : lm_rhythm_to_string (c->rhythm);
  g_autofree char *device = lm_advice_device_of (c->comm);
  const char *values[] = {
    c->comm,
    c->unit != NULL ? c->unit : c->comm,
    c->files != NULL && c->files[0] != NULL ? c->files[0] : "its files",
    rhythm != NULL ? rhythm : "now and then",
    device != NULL ? device : (c->disk != NULL ? c->disk : "the disk"),
  };

  for (const char *p = template; *p != '\0'; p++)
    {
      gboolean done = FALSE;
      for (gsize i = 0; *p == '{' && i < G_N_ELEMENTS (placeholders) && !done; i++)
        {
          gsize n = strlen (placeholders[i]);
          if (strncmp (p + 1, placeholders[i], n) == 0 && p[1 + n] == '}')
            {
              g_string_append (out, values[i]);
              p += n + 1;
              done = TRUE;
            }
        }
      if (!done)
        g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

gboolean
lm_advice_match (const LmAdvice *advice, const LmAdviceCause *cause, LmAdviceMatch *out)
{
  memset (out, 0, sizeof *out);
  for (guint i = 0; i < advice->entries->len; i++)
    {
      const Entry *e = advice->entries->pdata[i];
      if (!entry_matches (e, cause))
        continue;
      out->id = g_strdup (e->id);
      out->what = fill (e->what, cause);
      out->avoid = fill (e->avoid, cause);
      return TRUE;
    }
  return FALSE;
}

char *
lm_advice_explain (const LmAdvice *advice, GVariant *spinup, const LmRhythm *rhythm)
{
  const char *comm = NULL, *thread = NULL, *unit = NULL, *via = NULL, *path = NULL, *disk = NULL;
  gboolean other = FALSE;
  LmAdviceMatch m;

  if (advice == NULL || spinup == NULL || !g_variant_is_of_type (spinup, G_VARIANT_TYPE_VARDICT)
      || (g_variant_lookup (spinup, "OtherUser", "b", &other) && other)
      || !g_variant_lookup (spinup, "Comm", "&s", &comm))
    return NULL;
  g_variant_lookup (spinup, "Thread", "&s", &thread);
  g_variant_lookup (spinup, "Unit", "&s", &unit);
  g_variant_lookup (spinup, "Via", "&s", &via);
  g_variant_lookup (spinup, "Path", "&s", &path);
  g_variant_lookup (spinup, "Disk", "&s", &disk);
  const char *files[] = { path, NULL };
  LmAdviceCause q = { comm, thread, unit, via, path != NULL ? files : NULL, disk, rhythm };
  if (!lm_advice_match (advice, &q, &m))
    return NULL;
  char *what = g_steal_pointer (&m.what);
  lm_advice_match_clear (&m);
  return what;
}

GVariant *
lm_advice_variant_with (GVariant *dict, const char *key, const char *value)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  GVariantIter iter;
  const char *k;
  GVariant *v;

  g_variant_iter_init (&iter, dict);
  while (g_variant_iter_next (&iter, "{&sv}", &k, &v))
    {
      if (!g_str_equal (k, key))
        g_variant_builder_add (&b, "{sv}", k, v);
      g_variant_unref (v);
    }
  g_variant_builder_add (&b, "{sv}", key, g_variant_new_string (value));
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

void
lm_advice_match_clear (LmAdviceMatch *m)
{
  g_clear_pointer (&m->id, g_free);
  g_clear_pointer (&m->what, g_free);
  g_clear_pointer (&m->avoid, g_free);
}
