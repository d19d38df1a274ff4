/* lm-flush.h: the user-space laptop-mode engine: flush a disk's filesystems
 * a few seconds after it went quiet. Owns its BPF program, its timers and
 * its flush threads; never touches tunables, mounts or another disk. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _LmFlush LmFlush;

gboolean lm_flush_probe (GError **error);
/* Told after each flush how much it wrote to the disk: the KiB of write
 * sectors in the disk's /sys/block/X/stat, read before and after the
 * syncfs() calls (the ledger's Flushed); also with @disk NULL when the
 * engine starts (@kib 1) and stops (0). Never after lm_flush_free(). */
typedef void (*LmFlushReportFunc) (const char *disk, guint32 kib, gpointer user_data);

/* @report may be NULL; @report_data must outlive the flush. */
LmFlush *lm_flush_new (guint laptop_mode_seconds, LmFlushReportFunc report, gpointer report_data,
                       GError **error);
void lm_flush_set_seconds (LmFlush *flush, guint laptop_mode_seconds);
void lm_flush_free (LmFlush *flush);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmFlush, lm_flush_free)

G_END_DECLS
