/* lm-attrib-stack.h: where a kernel thread's write to a disk under a stack
 * came from, for the bpf backend's rare path (a spin-up). */
#pragma once

#include <glib.h>

#include "lm-attrib.h"

G_BEGIN_DECLS

/* The BPF programs' dirtier keys (the kernel's packing: major << 20 | minor)
 * of every mounted superblock whose I/O lands on whole disk @major:@minor
 * through a stack: a dm or md device over it (LUKS, LVM, RAID) or a
 * filesystem with an anonymous device number (btrfs) on it or on such a
 * stack, then every dm or md device stacked on the disk (sysfs holders/).
 * The disk's own key is never among them (the program looked it up
 * already). Each once; empty when nothing is stacked. */
GArray *lm_attrib_stack_keys (guint major, guint minor);

/* The owner of the data each upper device's (dm, md) latest woken bio
 * carried, handed down to the disk beneath: a stacking driver's worker
 * (dm-crypt's kcryptd) writes bounce pages that are no file's. A note of
 * "nobody's" (a journal's write through the stack) counts as well, so an
 * older owner is never taken for a later write. Times on one clock, in µs. */
typedef struct _LmAttribUppers LmAttribUppers;

LmAttribUppers *lm_attrib_uppers_new (void);
void lm_attrib_uppers_free (LmAttribUppers *uppers);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmAttribUppers, lm_attrib_uppers_free)
/* Upper device @key's bio at @usec carried @owner's data (NULL: nobody's),
 * of inode @ino (0 when not known). */
void lm_attrib_uppers_note (LmAttribUppers *uppers, guint32 key, gint64 usec,
                            const LmAttribTask *owner, guint64 ino);
/* Upper device @key's latest note, made without an owner at most two
 * seconds before @usec, gets @owner: the kernel's bio that woke it
 * carried nobody's data, the same pass's next one @owner's. */
void lm_attrib_uppers_amend (LmAttribUppers *uppers, guint32 key, gint64 usec,
                             const LmAttribTask *owner, guint64 ino);
/* A kernel thread's spin-up that carried nobody's data (the flusher
 * writing a block device's own pages, a superblock, before the files whose
 * expiry started its pass) is the pass's: for LM_ATTRIB_SEEK_US the first
 * kernel thread's bio on the disk that carries a process's data names it.
 * Both backends hold such a spin-up back LM_ATTRIB_HOLD_MS (the seek, and
 * a margin for the ring or the trace pipe). lm-attrib.bpf.c's LM_SEEK_NS
 * is the same second. */
#define LM_ATTRIB_SEEK_US G_USEC_PER_SEC
#define LM_ATTRIB_HOLD_MS 1500

/* The owner for a kernel thread's write at @usec to whole disk @disk: the
 * latest note of a device stacked on it, if made at most two seconds
 * before (a stacking driver's queueing) and naming somebody. */
gboolean lm_attrib_uppers_owner (LmAttribUppers *uppers, const char *disk, gint64 usec,
                                 LmAttribTask *owner, guint64 *ino);

G_END_DECLS
