/* lm-tracefs-parse.c: parser of the lines of a tracefs trace_pipe.
 * A line is "<comm>-<pid> [<cpu>] <flags> <secs>.<usecs>: <event>: <fields>";
 * the task name may hold spaces and dashes, so it is parsed backwards.
 * The events followed print no text a process chose beyond its task name
 * (15 bytes, too short for a marker and a line): sched_process_exec's
 * file name could hold newlines and whole forged lines, so it is not
 * followed (lm-attrib-tracefs.c). */
#include "lm-tracefs-parse.h"

#include <string.h>

#define BIO_MARKER ": block_bio_queue: "
#define DIRTY_MARKER ": writeback_mark_inode_dirty: "
#define WB_START_MARKER ": writeback_single_inode_start: "
#define WB_END_MARKER ": writeback_single_inode: "
#define RQ_ISSUE_MARKER ": block_rq_issue: "
#define NEWTASK_MARKER ": task_newtask: "
#define RENAME_MARKER ": task_rename: "
/* ftrace right-aligns the task name in 16 columns: a name of its own
 * choosing (": task_rename: " fits in 15 bytes) is never taken for the
 * event's name when the search starts past them. */
#define NAME_COLUMNS 16

/* The latency flags between the CPU and the time stamp ("d..1." and the
 * like, irq-info on; absent with it off): one short word, no field's text. */
static gboolean
is_flags (const char *word)
{
  gsize n = strlen (word);

  return n > 0 && n <= 8
         && strspn (word, ".0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == n;
}

/* The header before the marker; @line is a private copy, cut in place.
 * Exactly "<comm>-<pid> [<cpu>] [<flags>] <secs>.<usecs>" and nothing
 * else before the marker: an event's field that held a marker (text a
 * process chose) leaves more words there and is refused. */
static gboolean
split_header (char *line, LmTracefsRecord *r)
{
  char *ts = strrchr (line, ' ');
  if (ts == NULL)
    return FALSE;
  *ts++ = '\0';
  g_auto (GStrv) secs = g_strsplit (ts, ".", 2);
  guint64 s, us;
  if (g_strv_length (secs) != 2
      || !g_ascii_string_to_unsigned (secs[0], 10, 0, G_MAXINT32, &s, NULL)
      || !g_ascii_string_to_unsigned (secs[1], 10, 0, 999999, &us, NULL))
    return FALSE;
  r->usec = (gint64) (s * G_USEC_PER_SEC + us);
  g_strchomp (line);
  char *flags = strrchr (line, ' ');
  if (flags != NULL && flags > line && flags[-1] == ']' && is_flags (flags + 1))
    *flags = '\0';
  gsize len = strlen (line);
  char *cpu = strrchr (line, '[');
  if (cpu == NULL || cpu == line || len == 0 || line[len - 1] != ']'
      || strspn (cpu + 1, "0123456789") != (gsize) (line + len - 1 - (cpu + 1))
      || cpu + 1 == line + len - 1)
    return FALSE;
  *cpu = '\0';
  g_strchomp (line);
  char *dash = strrchr (line, '-');
  guint64 p;
  /* A pid_t, as parse_pid: a rename without "pid=" takes this one for
   * the renamed task (the fuzzer's 2677454220 went through before). */
  if (dash == NULL || !g_ascii_string_to_unsigned (dash + 1, 10, 0, G_MAXINT32, &p, NULL))
    return FALSE;
  *dash = '\0';
  g_strlcpy (r->comm, g_strchug (line), sizeof r->comm);
  r->pid = (guint32) p;
  return TRUE;
}

/* "maj,min" (block) or "maj:min" (bdi). */
static gboolean
parse_devnum (const char *text, LmTracefsRecord *r)
{
  g_auto (GStrv) parts = g_strsplit_set (text, ",:", 3);
  guint64 major, minor;

  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXUINT32, &major, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT32, &minor, NULL))
    return FALSE;
  r->major = (guint32) major;
  r->minor = (guint32) minor;
  return TRUE;
}

/* "7,0 R 2048 + 8 [cat]" */
static gboolean
parse_bio (const char *fields, LmTracefsRecord *r)
{
  g_auto (GStrv) f = g_strsplit (fields, " ", 6);
  guint64 sector, count;

  /* A count of 0 is a pure flush: no data, no spin-up by itself. */
  if (g_strv_length (f) < 5 || !parse_devnum (f[0], r)
      || !g_ascii_string_to_unsigned (f[2], 10, 0, G_MAXUINT64, &sector, NULL)
      || !g_ascii_string_to_unsigned (f[4], 10, 0, G_MAXUINT32, &count, NULL) || count == 0)
    return FALSE;
  r->write = strpbrk (f[1], "WD") != NULL;
  r->sector = sector;
  r->sectors = (guint32) count;
  return TRUE;
}

/* The word after " @key=" in @fields, up to a space (or the end). */
static char *
field_word (const char *fields, const char *key)
{
  g_autofree char *needle = g_strdup_printf (" %s=", key);
  const char *at = strstr (fields, needle);

  if (at == NULL)
    return NULL;
  at += strlen (needle);
  return g_strndup (at, strcspn (at, " "));
}

/* "bdi 7:0: ino=12 state=… flags=…", or "bdi btrfs-1: …" for a filesystem
 * with a bdi of its own; the writeback events print the same start. */
static gboolean
parse_dirtied (const char *fields, LmTracefsRecord *r)
{
  g_auto (GStrv) f = g_strsplit (fields, " ", 4);
  guint64 ino;

  if (g_strv_length (f) < 3 || !g_str_equal (f[0], "bdi") || !g_str_has_suffix (f[1], ":")
      || !g_str_has_prefix (f[2], "ino=")
      || !g_ascii_string_to_unsigned (f[2] + 4, 10, 0, G_MAXUINT64, &ino, NULL))
    return FALSE;
  f[1][strlen (f[1]) - 1] = '\0';
  if (!parse_devnum (f[1], r))
    {
      /* A name, used for a sysfs link's: nothing that could walk a path. */
      if (*f[1] == '\0' || *f[1] == '.' || strlen (f[1]) >= sizeof r->bdi
          || strspn (f[1], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
                 != strlen (f[1]))
        return FALSE;
      r->major = r->minor = 0;
      g_strlcpy (r->bdi, f[1], sizeof r->bdi);
    }
  r->ino = ino;
  g_autofree char *flags = field_word (fields, "flags");
  g_autofree char *state = field_word (fields, "state");
  r->pages = flags != NULL && strstr (flags, "I_DIRTY_PAGES") != NULL;
  r->dirty = state != NULL && strstr (state, "I_DIRTY") != NULL;
  return TRUE;
}

/* "8,0 N 512 () 0 + 0 [hdparm]" (6.1), "254,0 N 20 () 0 + 0 none,0,0 [cat]"
 * (6.10+, with the I/O priority). A driver-private request prints as "N"
 * (blk_fill_rwbs's "other") with no sectors; the command in parentheses is
 * empty since 5.x but held the CDB's bytes, with spaces, before. */
static gboolean
parse_passthrough (const char *fields, LmTracefsRecord *r)
{
  const char *open = strchr (fields, '(');
  const char *close = open != NULL ? strchr (open, ')') : NULL;
  guint64 bytes, sector, count;

  if (open == NULL || close == NULL || close[1] != ' ')
    return FALSE;
  g_autofree char *head = g_strndup (fields, (gsize) (open - fields));
  g_auto (GStrv) h = g_strsplit (g_strchomp (head), " ", 4);
  g_auto (GStrv) t = g_strsplit (close + 2, " ", 4);
  if (g_strv_length (h) != 3 || !parse_devnum (h[0], r) || !g_str_equal (h[1], "N")
      || !g_ascii_string_to_unsigned (h[2], 10, 0, G_MAXUINT32, &bytes, NULL)
      || g_strv_length (t) < 3 || !g_str_equal (t[1], "+")
      || !g_ascii_string_to_unsigned (t[0], 10, 0, G_MAXUINT64, &sector, NULL)
      || !g_ascii_string_to_unsigned (t[2], 10, 0, G_MAXUINT32, &count, NULL))
    return FALSE;
  /* Zone management and write-zeroes print "N" too, with sectors. */
  if (sector != 0 || count != 0)
    return FALSE;
  r->bytes = (guint32) bytes;
  return TRUE;
}

static gboolean
parse_pid (const char *text, guint32 *pid)
{
  guint64 v;

  if (!g_ascii_string_to_unsigned (text, 10, 0, G_MAXINT32, &v, NULL))
    return FALSE;
  *pid = (guint32) v;
  return TRUE;
}

/* A task name between two fields; the kernel's are at most 15 bytes. */
static gboolean
take_name (const char *start, const char *end, LmTracefsRecord *r)
{
  if (end < start || (gsize) (end - start) >= sizeof r->task_name)
    return FALSE;
  memcpy (r->task_name, start, (gsize) (end - start));
  r->task_name[end - start] = '\0';
  return TRUE;
}

/* The last @needle in @haystack before @end, or NULL. */
static char *
last_before (char *haystack, const char *end, const char *needle)
{
  char *found = NULL;

  for (char *p = strstr (haystack, needle); p != NULL && p < end; p = strstr (p + 1, needle))
    found = p;
  return found;
}

/* "pid=812 comm=Cache2 I/O clone_flags=3d0f00 oom_score_adj=0": names hold
 * spaces, so the fields after the name are found from the end. */
static gboolean
parse_newtask (char *fields, LmTracefsRecord *r)
{
  char *comm = strstr (fields, " comm=");
  char *oom = last_before (fields, fields + strlen (fields), " oom_score_adj=");
  char *flags = oom != NULL ? last_before (fields, oom, " clone_flags=") : NULL;
  guint64 v;

  if (!g_str_has_prefix (fields, "pid=") || comm == NULL || flags == NULL || flags < comm)
    return FALSE;
  *comm = *flags = *oom = '\0';
  if (!parse_pid (fields + 4, &r->task_pid) || !take_name (comm + 6, flags, r)
      || !g_ascii_string_to_unsigned (flags + 13, 16, 0, G_MAXUINT64, &v, NULL))
    return FALSE;
  r->clone_flags = v;
  return TRUE;
}

/* "pid=812 oldcomm=python3 newcomm=Cache2 I/O oom_score_adj=0"; kernels
 * that leave out the pid (it is always the caller's) rename the task
 * that printed the line. A name holding " newcomm=" can make this one
 * ambiguous; only a task naming itself can do that, so it can only
 * mislead about itself, which any name it chooses does anyway. */
static gboolean
parse_rename (char *fields, LmTracefsRecord *r)
{
  char *old = strstr (fields, "oldcomm=");
  char *oom = last_before (fields, fields + strlen (fields), " oom_score_adj=");
  char *newcomm = old != NULL ? strstr (old, " newcomm=") : NULL;

  if (old == NULL || newcomm == NULL || oom == NULL || newcomm > oom)
    return FALSE;
  /* The first " newcomm=" that leaves a name the kernel could have. */
  while (oom - (newcomm + 9) >= (gssize) sizeof r->task_name)
    {
      char *next = strstr (newcomm + 1, " newcomm=");
      if (next == NULL || next > oom)
        return FALSE;
      newcomm = next;
    }
  if (old != fields)
    {
      if (!g_str_has_prefix (fields, "pid=") || old[-1] != ' ')
        return FALSE;
      old[-1] = '\0';
      if (!parse_pid (fields + 4, &r->task_pid))
        return FALSE;
    }
  else
    r->task_pid = r->pid;
  return take_name (newcomm + 9, oom, r);
}

/* "CPU:<n> [LOST <n> EVENTS]" or "CPU:<n> [LOST EVENTS]", the whole line. */
static gboolean
is_lost_note (const char *line)
{
  const char *p;

  /* strncmp, not g_str_has_prefix: GCC 14's -Wnull-dereference reads the
   * macro's NULL test as a possible NULL after it. */
  if (line == NULL || strncmp (line, "CPU:", 4) != 0)
    return FALSE;
  p = line + 4;
  if (!g_ascii_isdigit (*p))
    return FALSE;
  while (g_ascii_isdigit (*p))
    p++;
  if (strncmp (p, " [LOST ", 7) != 0)
    return FALSE;
  p += 7;
  if (g_ascii_isdigit (*p))
    {
      while (g_ascii_isdigit (*p))
        p++;
      if (*p++ != ' ')
        return FALSE;
    }
  return g_str_equal (p, "EVENTS]");
}

/* Where @marker starts in @line, searched past the task name's columns. */
static char *
find_task_marker (char *line, const char *marker)
{
  gsize len = strlen (line);

  return strstr (line + MIN (len, (gsize) NAME_COLUMNS), marker);
}

/* @line need not be NUL-terminated; a NUL inside it ends it. */
LmTracefsKind
lm_tracefs_parse_line (const char *line, gsize length, LmTracefsRecord *record)
{
  /* g_strndup (NULL, 0) is NULL: an empty line is still a string. */
  g_autofree char *copy = line != NULL ? g_strndup (line, length) : g_strdup ("");
  char *m;
  gboolean ok = FALSE;

  memset (record, 0, sizeof *record);
  /* ftrace's own note, exactly: "CPU:1 [LOST 12 EVENTS]" or, when it
   * could not count, "CPU:1 [LOST EVENTS]". A task's line starts with its
   * name right-aligned in 16 columns, so with a space. */
  if (is_lost_note (copy))
    {
      record->kind = LM_TRACEFS_LOST;
      return record->kind;
    }
  if ((m = strstr (copy, BIO_MARKER)) != NULL)
    {
      *m = '\0';
      ok = parse_bio (m + strlen (BIO_MARKER), record) && split_header (copy, record);
      record->kind = LM_TRACEFS_BIO;
    }
  else if ((m = strstr (copy, DIRTY_MARKER)) != NULL)
    {
      *m = '\0';
      ok = parse_dirtied (m + strlen (DIRTY_MARKER), record) && split_header (copy, record);
      record->kind = LM_TRACEFS_DIRTIED;
    }
  else if ((m = strstr (copy, WB_START_MARKER)) != NULL)
    {
      *m = '\0';
      ok = parse_dirtied (m + strlen (WB_START_MARKER), record) && split_header (copy, record);
      record->kind = LM_TRACEFS_WB_START;
    }
  else if ((m = strstr (copy, WB_END_MARKER)) != NULL)
    {
      *m = '\0';
      ok = parse_dirtied (m + strlen (WB_END_MARKER), record) && split_header (copy, record);
      record->kind = LM_TRACEFS_WB_END;
    }
  else if ((m = strstr (copy, RQ_ISSUE_MARKER)) != NULL)
    {
      *m = '\0';
      ok = parse_passthrough (m + strlen (RQ_ISSUE_MARKER), record) && split_header (copy, record);
      record->kind = LM_TRACEFS_PASSTHROUGH;
    }
  else if ((m = find_task_marker (copy, NEWTASK_MARKER)) != NULL)
    {
      *m = '\0';
      ok = parse_newtask (m + strlen (NEWTASK_MARKER), record) && split_header (copy, record);
      record->kind = LM_TRACEFS_NEWTASK;
    }
  /* Last: the one marker short enough to be a task's name. */
  else if ((m = find_task_marker (copy, RENAME_MARKER)) != NULL)
    {
      *m = '\0';
      /* The header first: a rename without a pid field is the printer's. */
      ok = split_header (copy, record) && parse_rename (m + strlen (RENAME_MARKER), record);
      record->kind = LM_TRACEFS_RENAME;
    }
  if (!ok)
    memset (record, 0, sizeof *record);
  return record->kind;
}
