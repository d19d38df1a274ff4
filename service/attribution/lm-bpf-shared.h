/* lm-bpf-shared.h: the daemon's one BPF object (lm-attrib.bpf.c), loaded
 * and attached once for the bpf attribution backend and the user-space
 * engine together, so that every tracepoint runs one program whatever is
 * on. Each user takes a reference and turns its part on; the object goes
 * when the last reference does. Main thread only. */
#pragma once

#include "lm-attrib-config.h"

#include <glib.h>

#if LM_HAVE_BPF
#include <linux/types.h>

#include "lm-attrib-bpf-event.h"
#include "lm-attrib.skel.h"

G_BEGIN_DECLS

/* Loaded, with the daemon's pid namespace, its pid and the kernel's jiffy
 * set, and attached: both parts off until a user turns its own on. */
struct lm_attrib_bpf *lm_bpf_shared_ref (const char *program, GError **error);
void lm_bpf_shared_unref (void);
/* Loading is the only honest test; done once, its answer kept. */
gboolean lm_bpf_shared_probe (const char *program, GError **error);

/* Disk @key's slot (lm-disks.bpf.h) where the programs read and write it,
 * or NULL when they have not met the disk yet. The programs write it
 * meanwhile: user space reads and writes one field at a time, with
 * __atomic builtins, never the whole slot. */
struct lm_attrib_disk *lm_bpf_shared_disk (guint32 key);
/* @func on every disk's slot, in place as above. */
typedef void (*LmBpfDiskFunc) (struct lm_attrib_disk *d, gpointer user_data);
void lm_bpf_shared_disks_foreach (LmBpfDiskFunc func, gpointer user_data);

/* The engine's part on (counted: an engine being replaced may overlap its
 * successor) or off. From off to on, every disk is disarmed and the
 * removable filesystems forgotten, as in a freshly loaded object. */
void lm_bpf_shared_engine (gboolean on);

G_END_DECLS
#endif

G_BEGIN_DECLS
/* Who last wrote the sysctl or sysfs file @name in directory @dir, itself
 * in @up ("sys", "vm", "dirty_expire_centisecs"), since the daemon did,
 * where the loaded object saw it: "tlp[1234]" (raw: escape it for
 * output). NULL when not loaded, not watched or not written since. */
char *lm_bpf_shared_setting_writer (const char *up, const char *dir, const char *name);
G_END_DECLS
