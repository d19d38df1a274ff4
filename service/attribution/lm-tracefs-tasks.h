/* lm-tracefs-tasks.h: the tracefs backend's map from a thread to its process.
 * Owns a bounded pid → (tgid, name) map fed, in trace order, from task
 * events and from /proc at first sight; it never opens tracefs. */
#pragma once

#include "lm-attrib.h"

G_BEGIN_DECLS

/* A cap on memory, not on correctness: an evicted task is looked up in
 * /proc again when it is next seen. */
#define LM_TRACEFS_TASKS_MAX 8192

typedef struct _LmTracefsTasks LmTracefsTasks;

LmTracefsTasks *lm_tracefs_tasks_new (guint max_entries);
void lm_tracefs_tasks_free (LmTracefsTasks *tasks);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmTracefsTasks, lm_tracefs_tasks_free)

/* Events, told in the order the trace gives them; @mono_us is the
 * event's time stamp (CLOCK_MONOTONIC). @parent made @child, named
 * @name (the parent's name, copied), with clone(2)'s @clone_flags. */
void lm_tracefs_tasks_newtask (LmTracefsTasks *tasks, guint32 parent, guint32 child,
                               const char *name, guint64 clone_flags, gint64 mono_us);
/* @pid is named @name now: a rename, or an exec (under the leader's pid;
 * the exec'ing thread's own pid is free from then on). */
void lm_tracefs_tasks_rename (LmTracefsTasks *tasks, guint32 pid, const char *name, gint64 mono_us);
/* Who @pid was at @mono_us: its process and names, from the map, else from
 * /proc when /proc still shows that task (not a later owner of the pid).
 * FALSE when neither knows it: @out is then the thread as printed
 * (@printed_comm), its own process, its uid unknown. */
gboolean lm_tracefs_tasks_lookup (LmTracefsTasks *tasks, guint32 pid, const char *printed_comm,
                                  gint64 mono_us, LmAttribTask *out);
guint lm_tracefs_tasks_size (LmTracefsTasks *tasks);
/* Forget every task: the trace dropped events, and any task may have
 * exited and its pid gone to another since; /proc is asked again. */
void lm_tracefs_tasks_clear (LmTracefsTasks *tasks);

G_END_DECLS
