/* lm-tracefs-parse.c: parser of the lines of a tracefs trace_pipe.
 * A line is "<comm>-<pid> [<cpu>] <flags> <secs>.<usecs>: <event>: <fields>";
 * the task name may hold spaces and dashes, so it is parsed backwards. */
#include "lm-tracefs-parse.h"

#include <string.h>

#define BIO_MARKER ": block_bio_queue: "
#define DIRTY_MARKER ": writeback_mark_inode_dirty: "
#define RQ_ISSUE_MARKER ": block_rq_issue: "

/* The header before the marker; @line is a private copy, cut in place. */
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
  char *cpu = strrchr (line, '[');
  if (cpu == NULL || cpu == line)
    return FALSE;
  *cpu = '\0';
  g_strchomp (line);
  char *dash = strrchr (line, '-');
  guint64 p;
  if (dash == NULL || !g_ascii_string_to_unsigned (dash + 1, 10, 0, G_MAXUINT32, &p, NULL))
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

/* "bdi 7:0: ino=12 state=… flags=…", or "bdi btrfs-1: …" for a filesystem
 * with a bdi of its own. */
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

/* @line need not be NUL-terminated; a NUL inside it ends it. */
LmTracefsKind
lm_tracefs_parse_line (const char *line, gsize length, LmTracefsRecord *record)
{
  /* g_strndup (NULL, 0) is NULL: an empty line is still a string. */
  g_autofree char *copy = line != NULL ? g_strndup (line, length) : g_strdup ("");
  char *m;
  gboolean ok = FALSE;

  memset (record, 0, sizeof *record);
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
  else if ((m = strstr (copy, RQ_ISSUE_MARKER)) != NULL)
    {
      *m = '\0';
      ok = parse_passthrough (m + strlen (RQ_ISSUE_MARKER), record) && split_header (copy, record);
      record->kind = LM_TRACEFS_PASSTHROUGH;
    }
  if (!ok)
    memset (record, 0, sizeof *record);
  return record->kind;
}
