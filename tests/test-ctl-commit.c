/* test-ctl-commit.c: explain's sentence on whether laptop mode's commit=
 * applies to a journal's filesystem (client/ctl/lm-ctl-commit.c), for
 * every reason it may not. */
#include <glib.h>

#include "lm-ctl-report-model.h"

static void
test_reasons (void)
{
  const char *const types[] = { "ext4", "btrfs", NULL };
  const char *const no_remount[] = { "/srv", NULL };
  const char *const remounted[] = { "/home", NULL };
  const char *const none[] = { NULL };
  LmCommitSettings on = { TRUE, TRUE, types, no_remount, remounted };
  struct
  {
    LmCommitSettings s;
    const char *target, *fstype, *options, *expect;
  } cases[] = {
    { on, "/home", "ext4", "rw,commit=600",
      "sda1 (/home) is remounted by laptop mode with commit=600: each commit that woke the disk "
      "carried changes other programs made there." },
    { { FALSE, TRUE, types, no_remount, none },
      "/home",
      "ext4",
      "rw",
      "sda1 (/home) commits every 5 s, the default: laptop mode's commit= does not apply: laptop "
      "mode is off." },
    { { TRUE, FALSE, types, no_remount, none },
      "/home",
      "ext4",
      "rw",
      "sda1 (/home) commits every 5 s, the default: laptop mode's commit= does not apply: Remount "
      "is off." },
    { { TRUE, TRUE, (const char *const[]){ "btrfs", NULL }, no_remount, none },
      "/home",
      "ext4",
      "rw",
      "sda1 (/home) commits every 5 s, the default: laptop mode's commit= does not apply: ext4 is "
      "not in RemountTypes." },
    { { TRUE, TRUE, types, no_remount, none },
      "/srv",
      "ext4",
      "rw,commit=30",
      "sda1 (/srv) commits every 30 s (commit=30, its own mount option); laptop mode's does not "
      "apply: /srv is in NoRemount." },
    { { TRUE, TRUE, types, no_remount, none },
      "/data",
      "ext4",
      "rw",
      "sda1 (/data) commits every 5 s, the default: laptop mode's commit= does not apply: it was "
      "not remounted (laptop-moded's journal says why)." },
    { on, "/home", "xfs", "rw", NULL },
    { on, NULL, "ext4", "rw", NULL },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *got = lm_ctl_commit_fact ("sda1", cases[i].target, cases[i].fstype,
                                                 cases[i].options, &cases[i].s);
      g_assert_cmpstr (got, ==, cases[i].expect);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ctl-commit/reasons", test_reasons);
  return g_test_run ();
}
