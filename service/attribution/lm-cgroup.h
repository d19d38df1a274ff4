/* lm-cgroup.h: the systemd unit or desktop application a blamed process
 * ran in ("cron.service", "firefox" from app-gnome-firefox-1234.scope,
 * "user@1000.service"), from its cgroup v2 path. Owns reading that path
 * from a cgroup's id (the v2 tree, or the BPF program's map of removed
 * cgroups) or from a live process's /proc/PID/cgroup. Asked once per
 * spin-up, never per I/O. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define LM_UNIT_LEN 128

/* Pure: the user whose slice holds @path ("/user.slice/user-1000.slice/
 * ..."), or -1. */
gint64 lm_cgroup_user_of_path (const char *path);

/* Pure: the unit a cgroup path names, NULL where it names none (the root,
 * a cgroup outside systemd's naming, a name of LM_UNIT_LEN or more). */
char *lm_cgroup_unit_of_path (const char *path);

/* The path (from the v2 root) of the live cgroup whose id is @id, found
 * in the cgroup2 mount under the root (bounded walk, remembered); NULL
 * when there is none. */
char *lm_cgroup_path_of_id (guint64 id);

/* @pid's v2 cgroup path from /proc/PID/cgroup, only while that pid is
 * still the process named @comm (a pid reused since names nobody). */
char *lm_cgroup_path_of_pid (guint32 pid, const char *comm);

/* Forgets what lm_cgroup_path_of_id() remembered (tests). */
void lm_cgroup_reset (void);

G_END_DECLS
