/* lm-remount-private.h: private to the remount transaction (lm-remount.c):
 * holding checked mount points, and remounting through them side by side. */
#pragma once

#include <glib.h>

#include "lm-journal.h"
#include "lm-mountfd.h"
#include "lm-mounts.h"
#include "lm-state.h"

G_BEGIN_DECLS

GPtrArray *lm_remount_read_mounts (GError **error);

/* lm-remount-restore.c: the journal's verdict on superblock @m saved as
 * entry @e, judged on its commit= alone; and the part's restore_all(),
 * given an LmRemountRestore. */
LmJournalVerdict lm_remount_commit_verdict (const LmJournalEntry *e, const LmMount *m);
typedef struct
{
  LmState *state;    /* for the grace-period switch */
  GPtrArray *mounts; /* the table, read by the caller; NULL: read it */
  gboolean check;    /* log a superblock that shows other options than its original after */
} LmRemountRestore;
gboolean lm_remount_restore_all (GPtrArray *entries, gpointer data, GString *failures,
                                 GError **error);

/* A journal key for a remount: "<major:minor> <mount point>" (the mount
 * point any bytes; lm-state encodes keys). */
char *lm_remount_record_key (const char *dev, const char *target);
gboolean lm_remount_record_split (const char *record, char **dev, char **target);
char *lm_remount_record_dev (const char *record);
/* The entry (of @entries) saved for superblock @dev, or NULL. */
LmJournalEntry *lm_remount_record_find (GPtrArray *entries, const char *dev);
/* The part's upgrade(): state files from before the journal
 * (lm-remount-record.c). */
void lm_remount_legacy_migrate (LmState *state, const LmJournalPart *part);

typedef struct
{
  LmMount *mount; /* owned; NULL when skipped */
  int fd;
  char *skip; /* why it is not the mount that was read */
} LmHeld;

void lm_held_free (LmHeld *held);
GPtrArray *lm_remount_hold (GPtrArray *wanted, const char *phase);
void lm_remount_log_skip (const LmMount *was, const LmHeld *held);

typedef struct
{
  const LmMount *mount; /* borrowed, as read while held */
  int fd;               /* borrowed from its LmHeld */
  char *commit;         /* the one thing set: commit=<this> */
  char *undo_commit;    /* what mount(2)'s check puts back if the flags moved */
  gboolean lazytime;    /* a superblock flag mount(2) must be given again */
  LmMountfdMethod method;
  int err;
  char *why; /* the failure in words, when more than strerror(err) */
} LmRemountJob;

LmRemountJob *lm_remount_job_new (const LmMount *m, int fd, const char *commit,
                                  const char *undo_commit);
void lm_remount_job_free (LmRemountJob *job);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmRemountJob, lm_remount_job_free)
void lm_remount_run_jobs (GPtrArray *jobs);
gboolean lm_remount_job_result (const LmRemountJob *job, GError **error);

G_END_DECLS
