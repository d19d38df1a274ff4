/* lm-attrib-stack.h: where a kernel thread's write to a disk under a stack
 * came from, for the bpf backend's rare path (a spin-up). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The BPF programs' dirtier keys (the kernel's packing: major << 20 | minor)
 * of every mounted superblock whose I/O lands on whole disk @major:@minor
 * through a stack: a dm or md device over it (LUKS, LVM, RAID) or a
 * filesystem with an anonymous device number (btrfs) on it or on such a
 * stack, then every dm or md device stacked on the disk (sysfs holders/).
 * The disk's own key is never among them (the program looked it up
 * already). Each once; empty when nothing is stacked. */
GArray *lm_attrib_stack_keys (guint major, guint minor);

G_END_DECLS
