/* lm-advice.h: the table of known causes of disk wake-ups and what would
 * avoid each (laptop-modectl explain). Owns the table's file format, its
 * bounds and the matching of a cause (program, unit, files, how, rhythm)
 * against it; the sentences are templates filled with raw names, which the
 * caller escapes for its output. Reads files only in lm_advice_load(). */
#pragma once

#include <glib.h>

#include "lm-rhythm.h"

G_BEGIN_DECLS

/* Bounds on what a table file may hold; a file or entry past them is
 * refused with a message, never cut. */
#define LM_ADVICE_MAX_FILE_BYTES (256 * 1024)
#define LM_ADVICE_MAX_FILES 64
#define LM_ADVICE_MAX_ENTRIES 512
#define LM_ADVICE_MAX_PATTERNS 32
#define LM_ADVICE_MAX_TEXT 1024
#define LM_ADVICE_MAX_ID 64

typedef struct _LmAdvice LmAdvice;

/* What is known of one cause: raw names from the ledger. */
typedef struct
{
  const char *comm;         /* the program (never NULL) */
  const char *thread;       /* its thread that did the I/O, NULL: the same */
  const char *unit;         /* its systemd unit or app, NULL: not known */
  const char *via;          /* "direct", "writeback", "kernel", "passthrough" */
  const char *const *files; /* the files it wrote or read, NULL-terminated; may be NULL */
  const char *disk;         /* the disk it woke, for {device} where the program names none */
  const LmRhythm *rhythm;   /* NULL: too few spin-ups to say */
} LmAdviceCause;

/* A matched entry's sentences, filled in: raw text, escape it for output. */
typedef struct
{
  char *id;    /* the entry's name, e.g. "ext4-journal" */
  char *what;  /* what the cause is */
  char *avoid; /* what would avoid it */
} LmAdviceMatch;

LmAdvice *lm_advice_new (void);
void lm_advice_free (LmAdvice *advice);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmAdvice, lm_advice_free)

/* Adds one file's entries from @data (@len bytes, need not end in NUL),
 * named @origin in messages. An entry whose name the table holds already
 * is ignored (the files are added first to last in precedence); one with
 * Disabled=true hides that name from the files added after it. FALSE with
 * @error when the file as a whole is refused (too big, not a key file);
 * bad entries are skipped, each with a line in @warnings (may be NULL).
 * Returns the number of entries taken. */
gint lm_advice_add_data (LmAdvice *advice, const char *data, gsize len, const char *origin,
                         GPtrArray *warnings, GError **error);
guint lm_advice_size (const LmAdvice *advice);

/* The administrator's files (LM_CAUSES_DIR/ *.conf, by name) before the
 * shipped one (LM_CAUSES_FILE, or $LAPTOP_MODED_CAUSES), under the root.
 * A file that cannot be read adds a line to @warnings; never fails. */
LmAdvice *lm_advice_load (GPtrArray *warnings);

/* The first entry that matches @cause, filled in; FALSE: none does. */
gboolean lm_advice_match (const LmAdvice *advice, const LmAdviceCause *cause, LmAdviceMatch *out);
void lm_advice_match_clear (LmAdviceMatch *m);

/* The explanation of one spin-up (a{sv} with SpinUp's or a ledger
 * record's keys: Comm, Thread, Unit, Via, Path, Disk), the matched entry's
 * What filled in; NULL where no entry matches or it names no process
 * (another user's, OtherUser). @rhythm may be NULL. Raw: escape it. */
char *lm_advice_explain (const LmAdvice *advice, GVariant *spinup, const LmRhythm *rhythm);
/* @dict (a{sv}) with @key set to the string @value (added or replaced). */
GVariant *lm_advice_variant_with (GVariant *dict, const char *key, const char *value);

/* "sda1" from "jbd2/sda1-8" and "xfsaild/sda2": the block device a kernel
 * thread names, NULL where it names none. */
char *lm_advice_device_of (const char *comm);

G_END_DECLS
