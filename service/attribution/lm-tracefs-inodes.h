/* lm-tracefs-inodes.h: for the tracefs backend, who dirtied each inode and
 * which inode each writeback thread is writing, so that a kernel thread's
 * bio is blamed on the owner of its data, as the BPF program does from
 * the bio's pages. Keeps no file open; never reads /proc. */
#pragma once

#include <glib.h>

#include "lm-attrib.h"

G_BEGIN_DECLS

/* As lm-inodes.bpf.h: the bound, and how long after its writeback a clean
 * inode's dirtier still stands for its data. */
#define LM_TRACEFS_INODES_MAX 16384
#define LM_TRACEFS_CLEAN_GRACE_US (30 * G_USEC_PER_SEC)

typedef struct _LmTracefsInodes LmTracefsInodes;

LmTracefsInodes *lm_tracefs_inodes_new (guint max_entries);
void lm_tracefs_inodes_free (LmTracefsInodes *inodes);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmTracefsInodes, lm_tracefs_inodes_free)

/* In trace order. @bdi: "maj:min" or a bdi's name ("btrfs-1"). A kernel
 * thread's dirtying is never recorded: its data is nobody's. */
void lm_tracefs_inodes_dirtied (LmTracefsInodes *inodes, const char *bdi, guint64 ino,
                                const LmAttribTask *task, gint64 usec);
void lm_tracefs_inodes_wb_start (LmTracefsInodes *inodes, guint32 tid, const char *bdi,
                                 guint64 ino);
void lm_tracefs_inodes_wb_end (LmTracefsInodes *inodes, guint32 tid, const char *bdi, guint64 ino,
                               gboolean still_dirty, gint64 usec);
/* The owner of the data thread @tid writes at @usec: the dirtier of the
 * inode it is writing back, if known and not clean for long. */
gboolean lm_tracefs_inodes_owner (LmTracefsInodes *inodes, guint32 tid, gint64 usec,
                                  LmAttribTask *owner, guint64 *ino);
guint lm_tracefs_inodes_size (LmTracefsInodes *inodes);

G_END_DECLS
