/* lm-mountfd.h: a mount point held as an O_PATH file descriptor, opened
 * without following any symlink, and its superblock's commit= set through
 * that descriptor. Never resolves a mount point's path a second time. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* How a superblock was (or will be) reconfigured through a held mount. */
typedef enum
{
  LM_MOUNTFD_FSPICK,  /* fspick() + fsconfig(), Linux 5.2 and later */
  LM_MOUNTFD_PROC_FD, /* mount(2) MS_REMOUNT on /proc/self/fd/N of the held fd, with its
                       * own flags as fstatvfs() shows them */
} LmMountfdMethod;

int lm_mountfd_open (const char *path, GError **error);
gboolean lm_mountfd_identify (int fd, int *mount_id, gboolean *is_root, GError **error);
LmMountfdMethod lm_mountfd_method (void);
gboolean lm_mountfd_set_commit (int fd, const char *commit, GError **error);
gboolean lm_mountfd_remount_commit (int fd, const char *commit, const char *undo_commit,
                                    gboolean lazytime, GError **error);
gboolean lm_mountfd_not_available (int err);
unsigned long lm_mountfd_ms_flags (unsigned long f_flag);
char *lm_mountfd_describe_flags (unsigned long f_flag);
char *lm_mountfd_proc_path (int fd);
const char *lm_mountfd_method_name (LmMountfdMethod method);

#ifdef LM_REMOUNT_TEST_HOOKS
/* Only in the test binary that compiles this file itself
 * (tests/test-remount-race.c): take the fallbacks of kernels before 5.6,
 * the component-by-component open and mount(2) on /proc/self/fd/N. */
void lm_mountfd_test_force_fallback (gboolean force);
#endif

G_END_DECLS
