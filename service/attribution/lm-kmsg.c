/* lm-kmsg.c: parser of the kernel's block_dump log lines.
 * Works on a (pointer, length) span and never looks past it, so a garbage
 * or truncated line is skipped, never a crash; it allocates nothing. */
#include "lm-kmsg.h"

#include <string.h>

/* TASK_COMM_LEN - 1 in every kernel that had block_dump: the "(pid): "
 * after the name starts at most here, which keeps a file name that looks
 * like a block_dump line from being taken for one. */
#define COMM_MAX 15

typedef struct
{
  const char *p;
  const char *end;
} Span;

static gboolean
eat (Span *s, const char *word)
{
  gsize n = strlen (word);

  if ((gsize) (s->end - s->p) < n || memcmp (s->p, word, n) != 0)
    return FALSE;
  s->p += n;
  return TRUE;
}

/* Decimal digits only, no sign, no overflow. */
static gboolean
eat_u64 (Span *s, guint64 *out)
{
  guint64 v = 0;
  const char *start = s->p;

  while (s->p < s->end && g_ascii_isdigit (*s->p))
    {
      guint d = (guint) (*s->p - '0');
      if (v > (G_MAXUINT64 - d) / 10)
        return FALSE;
      v = v * 10 + d;
      s->p++;
    }
  *out = v;
  return s->p > start;
}

static void
copy_span (char *dst, gsize size, const char *src, gsize n)
{
  if (n >= size)
    n = size - 1;
  memcpy (dst, src, n);
  dst[n] = '\0';
}

/* A device or filesystem name: one word of printable bytes. */
static gboolean
eat_word_to_end (Span *s, char *dst, gsize size)
{
  const char *start = s->p;

  while (s->p<s->end && * s->p> ' ' && *s->p != 0x7f)
    s->p++;
  if (s->p == start || (gsize) (s->p - start) >= size)
    return FALSE;
  copy_span (dst, size, start, (gsize) (s->p - start));
  return TRUE;
}

/* "<lvl>,<seq>,<usec>,<flags>[,…];" of /dev/kmsg. Only facility 0, the
 * kernel: a user process may write "cat(1): READ…" into /dev/kmsg, and its
 * record carries its own facility (LOG_USER by default). */
static gboolean
eat_kmsg_prefix (Span *s, gint64 *usec, gboolean *is_kernel)
{
  Span t = *s;
  guint64 level, seq, us;
  const char *semi;

  if (!eat_u64 (&t, &level) || !eat (&t, ",") || !eat_u64 (&t, &seq) || !eat (&t, ",")
      || !eat_u64 (&t, &us) || !eat (&t, ","))
    return FALSE;
  semi = memchr (t.p, ';', (gsize) (t.end - t.p));
  if (semi == NULL)
    return FALSE;
  *usec = us > G_MAXINT64 ? -1 : (gint64) us;
  *is_kernel = (level >> 3) == 0;
  s->p = semi + 1;
  return TRUE;
}

/* dmesg's "<7>" (dmesg -r) and "[ 1234.567890] " prefixes, each optional. */
static void
eat_dmesg_prefix (Span *s, gint64 *usec)
{
  Span t = *s;
  guint64 v, secs, frac;

  if (eat (&t, "<") && eat_u64 (&t, &v) && eat (&t, ">"))
    *s = t;
  t = *s;
  if (!eat (&t, "["))
    return;
  while (t.p < t.end && *t.p == ' ')
    t.p++;
  const char *frac_start;
  if (!eat_u64 (&t, &secs) || !eat (&t, "."))
    return;
  frac_start = t.p;
  if (!eat_u64 (&t, &frac) || !eat (&t, "]"))
    return;
  /* The fraction is printed with 6 digits; scale anything else to µs. */
  gsize digits = (gsize) (t.p - 1 - frac_start);
  for (gsize i = digits; i < 6; i++)
    frac *= 10;
  for (gsize i = 6; i < digits; i++)
    frac /= 10;
  if (secs < G_MAXINT64 / 1000000 - 1)
    *usec = (gint64) (secs * 1000000 + frac);
  eat (&t, " ");
  *s = t;
}

static gboolean
parse_bio (Span s, LmKmsgRecord *r)
{
  if (eat (&s, "READ block "))
    r->write = FALSE;
  else if (eat (&s, "WRITE block "))
    r->write = TRUE;
  else
    return FALSE;
  if (!eat_u64 (&s, &r->sector) || !eat (&s, " on ")
      || !eat_word_to_end (&s, r->dev, sizeof r->dev))
    return FALSE;
  r->sectors = 0;
  if (s.p == s.end)
    return TRUE;
  guint64 n;
  if (!eat (&s, " (") || !eat_u64 (&s, &n) || n > G_MAXUINT32 || !eat (&s, " sectors)")
      || s.p != s.end)
    return FALSE;
  r->sectors = (guint32) n;
  return TRUE;
}

/* The name ends at the last ") on ": it may itself hold parentheses,
 * spaces and even ") on ". */
static gboolean
parse_dirtied_inode (Span s, LmKmsgRecord *r)
{
  const char *close = NULL;

  r->object = LM_KMSG_OBJECT_INODE;
  if (!eat_u64 (&s, &r->number) || !eat (&s, " ("))
    return FALSE;
  r->has_number = TRUE;
  for (const char *q = s.p; q + 5 <= s.end; q++)
    if (memcmp (q, ") on ", 5) == 0)
      close = q;
  if (close == NULL)
    return FALSE;
  copy_span (r->name, sizeof r->name, s.p, (gsize) (close - s.p));
  s.p = close + 5;
  if (!eat_word_to_end (&s, r->dev, sizeof r->dev) || s.p != s.end)
    return FALSE;
  /* Block device pseudo-inodes: the data is the device itself, whose
   * writes show up as bio lines anyway (see tests/data/block_dump/README.md). */
  return !g_str_equal (r->dev, "bdev");
}

/* The 2.6.0 patch's "dirtied buffer|page [N] on dev". */
static gboolean
parse_dirtied_other (Span s, LmKmsgRecord *r)
{
  Span t = s;

  if (eat (&t, " ") && eat_u64 (&t, &r->number))
    {
      r->has_number = TRUE;
      s = t;
    }
  if (!eat (&s, " on ") || !eat_word_to_end (&s, r->dev, sizeof r->dev))
    return FALSE;
  return s.p == s.end;
}

static gboolean
parse_dirtied (Span s, LmKmsgRecord *r)
{
  if (eat (&s, "dirtied inode "))
    return parse_dirtied_inode (s, r);
  if (eat (&s, "dirtied buffer"))
    r->object = LM_KMSG_OBJECT_BUFFER;
  else if (eat (&s, "dirtied page"))
    r->object = LM_KMSG_OBJECT_PAGE;
  else
    return FALSE;
  return parse_dirtied_other (s, r);
}

/* "comm(pid): " with the pid taken from the right, as the name may contain
 * "(", ")" and digits. Tries each "(" from the rightmost possible one. */
static LmKmsgKind
parse_task_line (Span msg, LmKmsgRecord *r)
{
  gsize len = (gsize) (msg.end - msg.p);
  gsize last = MIN (len, (gsize) COMM_MAX + 1);

  for (gsize i = last; i-- > 0;)
    {
      Span s = { msg.p + i, msg.end };
      guint64 pid;

      if (*s.p != '(')
        continue;
      s.p++;
      if (!eat_u64 (&s, &pid) || pid > G_MAXUINT32 || !eat (&s, "): "))
        continue;
      copy_span (r->comm, sizeof r->comm, msg.p, i);
      r->pid = (guint32) pid;
      if (parse_bio (s, r))
        return r->kind = LM_KMSG_BIO;
      if (parse_dirtied (s, r))
        return r->kind = LM_KMSG_DIRTIED;
    }
  return LM_KMSG_NONE;
}

LmKmsgKind
lm_kmsg_parse_line (const char *line, gsize length, LmKmsgRecord *record)
{
  LmKmsgRecord r = { 0 };
  gboolean is_kernel = TRUE;

  /* Checked before any arithmetic: NULL + 0 is already undefined. */
  if (line == NULL || record == NULL)
    return LM_KMSG_NONE;
  Span s = { line, line + length };
  r.usec = -1;
  while (s.end > s.p && (s.end[-1] == '\n' || s.end[-1] == '\r'))
    s.end--;
  /* Continuation lines of a kmsg record (" SUBSYSTEM=…") and empty lines. */
  if (s.p == s.end || *s.p == ' ')
    return LM_KMSG_NONE;
  if (!eat_kmsg_prefix (&s, &r.usec, &is_kernel))
    eat_dmesg_prefix (&s, &r.usec);
  if (!is_kernel)
    return LM_KMSG_NONE;

  Span t = s;
  guint64 n;
  if (eat (&t, "block_dump_printk: ") && eat_u64 (&t, &n) && eat (&t, " callbacks suppressed")
      && t.p == t.end)
    {
      r.kind = LM_KMSG_SUPPRESSED;
      r.suppressed = n;
    }
  else if (parse_task_line (s, &r) == LM_KMSG_NONE)
    return LM_KMSG_NONE;
  *record = r;
  return r.kind;
}
