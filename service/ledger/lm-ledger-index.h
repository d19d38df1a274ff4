/* lm-ledger-index.h: the ledger's records kept in memory since the last
 * write, indexed for paged reads (GetLedgerPage). Never does I/O. */
#pragma once

#include <gio/gio.h>

#include "lm-ledger-record.h"

G_BEGIN_DECLS

typedef struct _LmLedgerIndex LmLedgerIndex;

/* A cursor is "" (the first page) or "EPOCH.SEQ": the index's epoch (new
 * at each start and whenever the records were rewritten from other bytes
 * than those indexed) and the sequence number of the next record. */
#define LM_LEDGER_CURSOR_MAX 64

LmLedgerIndex *lm_ledger_index_new (void);
void lm_ledger_index_free (LmLedgerIndex *index);

/* Appends the records in @data (encoded records, as the file holds them);
 * each gets the next sequence number. */
void lm_ledger_index_add (LmLedgerIndex *index, const guint8 *data, gsize length);
/* Drops every byte from @length on, and the records in them. */
void lm_ledger_index_truncate (LmLedgerIndex *index, gsize length);
/* The bytes at @offset replaced by @length bytes of a record of the same
 * size (a record filled in place). */
void lm_ledger_index_patch (LmLedgerIndex *index, gsize offset, const guint8 *data, gsize length);
/* The records rewritten (compaction): @data holds the records of the
 * indexed bytes @old (@old_length) at @kept_offsets (@n_kept of them, in
 * order). Their sequence numbers stay when @old is what the index holds;
 * otherwise the epoch changes and older cursors become stale. */
void lm_ledger_index_replace (LmLedgerIndex *index, const guint8 *data, gsize length,
                              const guint8 *old, gsize old_length, const gsize *kept_offsets,
                              guint n_kept);
guint lm_ledger_index_count (LmLedgerIndex *index);
gsize lm_ledger_index_bytes (LmLedgerIndex *index);

/* The position the page starts at: @cursor parsed against this index.
 * Fails with LM_ERROR_INVALID_ARGS for a cursor that is not one of ours
 * (bogus, too long, from another epoch: stale). */
gboolean lm_ledger_index_parse_cursor (LmLedgerIndex *index, const char *cursor, guint64 *seq,
                                       GError **error);
char *lm_ledger_index_format_cursor (LmLedgerIndex *index, guint64 seq);

/* Called for each record of a page, with its encoded bytes (checked when
 * they were added: lm_ledger_record_decode() takes them). */
typedef void (*LmLedgerIndexFunc) (const guint8 *data, gsize size, gpointer user_data);

/* Up to @limit records overlapping [@since_us, @until_us] from position
 * @seq on, in sequence order, then @extra (@n_extra records still growing,
 * at the positions just past the indexed ones). Returns how many went to
 * @func; *@next gets the position to go on from, 0 when there is nothing
 * left. */
guint lm_ledger_index_page (LmLedgerIndex *index, gint64 since_us, gint64 until_us, guint64 seq,
                            guint limit, const LmLedgerRecord *extra, guint n_extra,
                            LmLedgerIndexFunc func, gpointer user_data, guint64 *next);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmLedgerIndex, lm_ledger_index_free)

G_END_DECLS
