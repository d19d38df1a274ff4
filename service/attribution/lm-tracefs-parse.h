/* lm-tracefs-parse.h: parser of the lines of a tracefs trace_pipe.
 * Owns turning one block_bio_queue, block_rq_issue, writeback_mark_inode_dirty,
 * task_newtask or task_rename line into a record; it never reads a file,
 * keeps no state and never trusts a field. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  LM_TRACEFS_NONE,        /* not an event we follow, or malformed: skip it */
  LM_TRACEFS_BIO,         /* block_bio_queue with data */
  LM_TRACEFS_DIRTIED,     /* writeback_mark_inode_dirty */
  LM_TRACEFS_WB_START,    /* writeback_single_inode_start: this thread writes ino now */
  LM_TRACEFS_WB_END,      /* writeback_single_inode: done with ino (clean or not) */
  LM_TRACEFS_PASSTHROUGH, /* block_rq_issue of a driver-private request (SG_IO, NVMe) */
  LM_TRACEFS_NEWTASK,     /* task_newtask: pid (the creator) made task_pid */
  LM_TRACEFS_RENAME,      /* task_rename: task_pid is task_name now */
  LM_TRACEFS_LOST,        /* ftrace's own "CPU:1 [LOST 12 EVENTS]": events were dropped */
} LmTracefsKind;

typedef struct
{
  LmTracefsKind kind;
  gint64 usec;   /* the trace clock's time stamp */
  char comm[16]; /* task name as ftrace printed it ("<...>" when unknown) */
  guint32 pid;
  guint32 major; /* the device: the partition or disk (BIO), the bdi (DIRTIED),
                  * the whole disk (PASSTHROUGH) */
  guint32 minor;
  gboolean write;      /* BIO */
  guint64 sector;      /* BIO */
  guint32 sectors;     /* BIO: never 0 (a pure flush is NONE) */
  guint64 ino;         /* DIRTIED, WB_START, WB_END */
  gboolean pages;      /* DIRTIED: its pages (data) were dirtied, not only its times */
  gboolean dirty;      /* WB_END: still dirty after this writeback */
  char bdi[32];        /* DIRTIED, WB_*: the bdi's name when it is no device number
                        * (btrfs's own, "btrfs-1"; major and minor are 0), else "" */
  guint32 bytes;       /* PASSTHROUGH: the command's data */
  guint32 task_pid;    /* NEWTASK: the new task; RENAME: the renamed (an exec renames
                        * the task after its file, with the leader's pid) */
  char task_name[16];  /* NEWTASK: its name (its creator's); RENAME: the new name */
  guint64 clone_flags; /* NEWTASK */
} LmTracefsRecord;

LmTracefsKind lm_tracefs_parse_line (const char *line, gsize length, LmTracefsRecord *record);

G_END_DECLS
