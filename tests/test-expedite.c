/* test-expedite.c: the expedited-grace-period window around a batch of
 * remounts, on a fake /sys/kernel/rcu_expedited: set and put back, left
 * alone when it is not ours, and undone after a crash inside the window. */
#include <glib.h>

#include "lm-expedite.h"
#include "lm-journal-private.h"
#include "lm-state.h"
#include "test-fakeroot.h"

#define FILE_REL "sys/kernel/rcu_expedited"

static LmState *
new_state (LmFakeRoot *f)
{
  g_autofree char *path = g_build_filename (f->root, "state", NULL);
  LmState *state = lm_state_new (path);
  g_assert_true (lm_state_load (state, NULL));
  return state;
}

static void
test_window (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) state = NULL;

  lm_fake_root_put (f, FILE_REL, "0\n");
  state = new_state (f);
  g_assert_true (lm_expedite_begin (state));
  g_autofree char *during = lm_fake_root_get (f, FILE_REL);
  g_assert_cmpstr (during, ==, "1");
  g_assert_true (lm_expedite_saved (state));
  lm_expedite_end (state);
  g_autofree char *after = lm_fake_root_get (f, FILE_REL);
  g_assert_cmpstr (after, ==, "0");
  g_assert_false (lm_expedite_saved (state));
}

static void
test_not_ours (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) state = new_state (f);

  /* Missing (tiny RCU, or no such file in this root): nothing done. */
  g_assert_false (lm_expedite_begin (state));
  g_assert_false (lm_expedite_saved (state));
  /* Already on, by someone else: left on, nothing recorded. */
  lm_fake_root_put (f, FILE_REL, "1\n");
  g_assert_false (lm_expedite_begin (state));
  g_assert_false (lm_expedite_saved (state));
  lm_expedite_end (state);
  g_autofree char *v = lm_fake_root_get (f, FILE_REL);
  g_assert_cmpstr (v, ==, "1");
}

static void
test_crash_inside (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) dying = NULL;

  lm_fake_root_put (f, FILE_REL, "0\n");
  /* "kill -9" inside the window: no end. The journal was durable before
   * the write, so the next daemon, reading the file, sees it. */
  dying = new_state (f);
  g_assert_true (lm_expedite_begin (dying));
  g_autoptr (LmState) next = new_state (f);
  g_assert_true (lm_expedite_saved (next));
  lm_expedite_end (next);
  g_autofree char *v = lm_fake_root_get (f, FILE_REL);
  g_assert_cmpstr (v, ==, "0");
  g_assert_false (lm_expedite_saved (next));
}

static void
test_changed_meanwhile (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) state = NULL;

  lm_fake_root_put (f, FILE_REL, "0\n");
  state = new_state (f);
  g_assert_true (lm_expedite_begin (state));
  /* Someone else wrote a value of their own inside the window. */
  lm_fake_root_put (f, FILE_REL, "0\n");
  lm_expedite_end (state);
  g_autofree char *v = lm_fake_root_get (f, FILE_REL);
  g_assert_cmpstr (v, ==, "0");
  g_assert_false (lm_expedite_saved (state));
}

/* In two steps inside a caller's transaction: nothing is written before
 * the commit, and a transaction dropped before it forgets the plan. */
static void
test_plan_in_transaction (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmState) state = NULL;

  lm_fake_root_put (f, FILE_REL, "0\n");
  state = new_state (f);
  {
    g_autoptr (LmJournalTx) dropped = lm_journal_begin (state);
    g_assert_true (lm_expedite_plan (state));
  }
  g_assert_false (lm_expedite_saved (state));

  g_autoptr (LmJournalTx) tx = lm_journal_begin (state);
  g_assert_true (lm_expedite_plan (state));
  g_autofree char *before = lm_fake_root_get (f, FILE_REL);
  g_assert_cmpstr (before, ==, "0");
  g_assert_true (lm_journal_commit (tx, NULL));
  g_assert_true (lm_expedite_start (state));
  g_autofree char *during = lm_fake_root_get (f, FILE_REL);
  g_assert_cmpstr (during, ==, "1");
  lm_expedite_end (state);
  g_autofree char *after = lm_fake_root_get (f, FILE_REL);
  g_assert_cmpstr (after, ==, "0");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/expedite/window", LmFakeRoot, NULL, lm_fake_root_setup, test_window,
              lm_fake_root_teardown);
  g_test_add ("/expedite/not-ours", LmFakeRoot, NULL, lm_fake_root_setup, test_not_ours,
              lm_fake_root_teardown);
  g_test_add ("/expedite/crash-inside", LmFakeRoot, NULL, lm_fake_root_setup, test_crash_inside,
              lm_fake_root_teardown);
  g_test_add ("/expedite/changed-meanwhile", LmFakeRoot, NULL, lm_fake_root_setup,
              test_changed_meanwhile, lm_fake_root_teardown);
  g_test_add ("/expedite/plan-in-transaction", LmFakeRoot, NULL, lm_fake_root_setup,
              test_plan_in_transaction, lm_fake_root_teardown);
  return g_test_run ();
}
