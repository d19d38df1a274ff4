/* test-advice.c: the table of known causes (common/lm-advice.c): the
 * shipped data/causes.conf names each cause issue 50 lists, and nothing it
 * does not know; the administrator's files come first, replace and hide
 * shipped entries; bad entries and files are refused with a message. */
#include "config.h"

#include <fcntl.h>
#include <glib.h>
#include <string.h>
#include <glib/gstdio.h>
#include <sys/stat.h>

#include "lm-advice.h"
#include "lm-paths.h"

static LmAdvice *
shipped (void)
{
  g_autofree char *path = g_build_filename (g_getenv ("LM_SRCDIR"), "data", "causes.conf", NULL);
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  LmAdvice *advice = lm_advice_new ();

  g_assert_true (g_file_get_contents (path, &text, &len, &error));
  g_assert_cmpint (lm_advice_add_data (advice, text, len, path, warnings, &error), >, 20);
  g_assert_no_error (error);
  /* The shipped file has no entry that is refused. */
  g_assert_cmpuint (warnings->len, ==, 0);
  return advice;
}

typedef struct
{
  const char *comm, *thread, *via;
  const char *file;     /* one file, NULL: none */
  LmRhythmKind rhythm;  /* LM_RHYTHM_TOO_FEW: not known */
  const char *id;       /* the entry expected, NULL: none */
  const char *what_has; /* a part of What= filled in */
} Case;

/* Each cause the issue lists, as the ledger names it. */
static const Case cases[] = {
  { "jbd2/sda1-8", NULL, "kernel", NULL, LM_RHYTHM_PERIODIC, "ext4-journal", "journal on sda1" },
  { "jbd2/nvme0n1p2-8", NULL, "kernel", NULL, LM_RHYTHM_TOO_FEW, "ext4-journal", "nvme0n1p2" },
  { "xfsaild/sdb1", NULL, "kernel", NULL, LM_RHYTHM_PERIODIC, "xfs-log", "xfs on sdb1" },
  { "btrfs-transacti", NULL, "kernel", NULL, LM_RHYTHM_PERIODIC, "btrfs-commit", "on sda" },
  { "kworker/u8:3", NULL, "kernel", "/home/ann/notes.txt", LM_RHYTHM_TOO_FEW, "atime",
    "times of /home/ann/notes.txt" },
  { "kswapd0", NULL, "kernel", NULL, LM_RHYTHM_IRREGULAR, "swap", "swap" },
  { "smartd", NULL, "passthrough", NULL, LM_RHYTHM_PERIODIC, "smartd", "every 30 min" },
  { "udisksd", NULL, "passthrough", NULL, LM_RHYTHM_PERIODIC, "udisks-smart", "udisks" },
  { "laptop-moded", NULL, "passthrough", NULL, LM_RHYTHM_TOO_FEW, "laptop-moded-smart",
    "laptop-moded itself" },
  { "hdparm", NULL, "passthrough", NULL, LM_RHYTHM_TOO_FEW, "hdparm-apm", "hdparm sent" },
  { "fstrim", NULL, "direct", NULL, LM_RHYTHM_TOO_FEW, "fstrim", "fstrim" },
  { "mandb", NULL, "direct", "/var/cache/man/index.db", LM_RHYTHM_DAILY, "man-db", "man-db" },
  { "updatedb.plocat", NULL, "direct", NULL, LM_RHYTHM_DAILY, "updatedb", "locate" },
  { "apt-get", NULL, "writeback", "/var/lib/apt/lists/x", LM_RHYTHM_DAILY, "apt-daily", "apt-get" },
  { "unattended-upgr", NULL, "direct", NULL, LM_RHYTHM_DAILY, "apt-daily", "updates" },
  { "firefox-esr", "Cache2 I/O", "writeback",
    "/home/ann/.mozilla/firefox/x.default/sessionstore-backups/recovery.jsonlz4",
    LM_RHYTHM_PERIODIC, "firefox-session", "every 30 min" },
  { "firefox", NULL, "writeback", "places.sqlite-wal", LM_RHYTHM_IRREGULAR, "firefox-places",
    "history" },
  { "chromium", "ThreadPoolForeg", "writeback", "/home/ann/.config/chromium/Default/Sessions/x",
    LM_RHYTHM_IRREGULAR, "chromium-session", "chromium saving" },
  { "thunderbird", NULL, "writeback", "global-messages-db.sqlite", LM_RHYTHM_PERIODIC, "mail",
    "thunderbird checking" },
  { "evolution-sourc", NULL, "writeback", NULL, LM_RHYTHM_IRREGULAR, "mail", "evolution" },
  { "syncthing", NULL, "writeback", "/home/ann/Sync/.stfolder", LM_RHYTHM_PERIODIC, "sync-clients",
    "syncthing" },
  { "dropbox", NULL, "direct", NULL, LM_RHYTHM_IRREGULAR, "sync-clients", "irregularly" },
  { "systemd-journal", NULL, "direct", "/var/log/journal/abc/system.journal", LM_RHYTHM_PERIODIC,
    "journald", "journald" },
  { "cron", NULL, "direct", "/etc/crontab", LM_RHYTHM_DAILY, "cron", "at 06:25 daily" },
  /* A program the table does not name, writing one file on a period. */
  { "myapp", NULL, "writeback", "/home/ann/.local/state/myapp/state.json", LM_RHYTHM_PERIODIC,
    "periodic-one-file", "myapp writing /home/ann/.local/state/myapp/state.json every 30 min" },
  /* The same, irregular: unknown, never a guess. */
  { "myapp", NULL, "writeback", "/home/ann/.local/state/myapp/state.json", LM_RHYTHM_IRREGULAR,
    NULL, NULL },
  { "python3", NULL, "direct", NULL, LM_RHYTHM_PERIODIC, NULL, NULL },
  { "smartctl", NULL, "passthrough", NULL, LM_RHYTHM_TOO_FEW, NULL, NULL },
};

static void
test_shipped_causes (void)
{
  g_autoptr (LmAdvice) advice = shipped ();

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const Case *c = &cases[i];
      const char *files[] = { c->file, NULL };
      LmRhythm r = { c->rhythm, 1800, 1800, 6 * 60 + 25 };
      LmAdviceCause q = {
        c->comm, c->thread, NULL, c->via, files, "sda", c->rhythm == LM_RHYTHM_TOO_FEW ? NULL : &r
      };
      LmAdviceMatch m;
      gboolean found = lm_advice_match (advice, &q, &m);
      g_test_message ("%s (%s): %s", c->comm, c->via, found ? m.id : "no entry");
      g_assert_cmpstr (found ? m.id : NULL, ==, c->id);
      if (found)
        {
          g_assert_nonnull (strstr (m.what, c->what_has));
          /* Every placeholder filled in. */
          g_assert_null (strchr (m.what, '{'));
          g_assert_null (strchr (m.avoid, '{'));
        }
      lm_advice_match_clear (&m);
    }
}

static void
test_device_of (void)
{
  const char *const pairs[][2] = {
    { "jbd2/sda1-8", "sda1" },  { "jbd2/dm-0-8", "dm-0" },
    { "xfsaild/sdb2", "sdb2" }, { "jbd2/nvme0n1p3-8", "nvme0n1p3" },
    { "kworker/u8:1", NULL },   { "btrfs-transacti", NULL },
    { "jbd2/", NULL },          { "", NULL },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (pairs); i++)
    {
      g_autofree char *dev = lm_advice_device_of (pairs[i][0]);
      g_assert_cmpstr (dev, ==, pairs[i][1]);
    }
}

/* A program named like a placeholder is said as it is, not filled again. */
static void
test_names_filled_once (void)
{
  const char *table = "[x]\nPrograms=*\nWhat={program} wrote {file}\nAvoid=stop {unit}\n";
  g_autoptr (LmAdvice) advice = lm_advice_new ();
  const char *files[] = { "{device}", NULL };
  LmAdviceCause q = { "{file}", NULL, NULL, "direct", files, "sda", NULL };
  LmAdviceMatch m;

  g_assert_cmpint (lm_advice_add_data (advice, table, strlen (table), "t", NULL, NULL), ==, 1);
  g_assert_true (lm_advice_match (advice, &q, &m));
  g_assert_cmpstr (m.what, ==, "{file} wrote {device}");
  g_assert_cmpstr (m.avoid, ==, "stop {file}");
  lm_advice_match_clear (&m);
}

/* The administrator's file first: it replaces a shipped entry by name,
 * hides one with Disabled=true and adds its own. */
static void
test_admin_first (void)
{
  const char *admin = "[smartd]\nPrograms=smartd\nWhat=our smartd\nAvoid=ask ops\n"
                      "[cron]\nDisabled=true\n"
                      "[backup]\nPrograms=restic\nUnits=backup.service\nWhat=backups\n"
                      "Avoid=run them on AC\n";
  g_autoptr (LmAdvice) advice = lm_advice_new ();
  g_autofree char *path = g_build_filename (g_getenv ("LM_SRCDIR"), "data", "causes.conf", NULL);
  g_autofree char *text = NULL;
  gsize len;
  LmAdviceMatch m;

  g_assert_cmpint (lm_advice_add_data (advice, admin, strlen (admin), "admin", NULL, NULL), ==, 3);
  g_assert_true (g_file_get_contents (path, &text, &len, NULL));
  g_assert_cmpint (lm_advice_add_data (advice, text, len, "shipped", NULL, NULL), >, 15);
  LmAdviceCause smartd = { "smartd", NULL, NULL, "passthrough", NULL, "sda", NULL };
  g_assert_true (lm_advice_match (advice, &smartd, &m));
  g_assert_cmpstr (m.what, ==, "our smartd");
  lm_advice_match_clear (&m);
  LmAdviceCause cron = { "cron", NULL, NULL, "direct", NULL, "sda", NULL };
  g_assert_false (lm_advice_match (advice, &cron, &m));
  /* Units= needs the unit: restic alone is not the backup unit. */
  LmAdviceCause restic = { "restic", NULL, NULL, "direct", NULL, "sda", NULL };
  g_assert_false (lm_advice_match (advice, &restic, &m));
  restic.unit = "backup.service";
  g_assert_true (lm_advice_match (advice, &restic, &m));
  g_assert_cmpstr (m.id, ==, "backup");
  lm_advice_match_clear (&m);
}

/* Each bad entry is skipped with a line naming it; the good one stays. */
static void
test_bad_entries (void)
{
  g_autofree char *longtext = g_strnfill (LM_ADVICE_MAX_TEXT + 1, 'a');
  g_autofree char *table
      = g_strdup_printf ("[good]\nPrograms=a\nWhat=w\nAvoid=v\n"
                         "[unknown-key]\nPrograms=a\nWhat=w\nAvoid=v\nColour=red\n"
                         "[brace]\nPrograms=a\nWhat={prog}\nAvoid=v\n"
                         "[via]\nPrograms=a\nVia=sideways\nWhat=w\nAvoid=v\n"
                         "[rhythm]\nRhythm=sometimes\nWhat=w\nAvoid=v\n"
                         "[everything]\nVia=direct\nWhat=w\nAvoid=v\n"
                         "[no-avoid]\nPrograms=a\nWhat=w\n"
                         "[control]\nPrograms=a\nWhat=w\\tx\nAvoid=v\n"
                         "[long]\nPrograms=a\nWhat=%s\nAvoid=v\n"
                         "[bad name!]\nPrograms=a\nWhat=w\nAvoid=v\n",
                         longtext);
  g_autoptr (LmAdvice) advice = lm_advice_new ();
  g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (lm_advice_add_data (advice, table, strlen (table), "t.conf", warnings, &error),
                   ==, 1);
  g_assert_no_error (error);
  g_assert_cmpuint (warnings->len, ==, 9);
  for (guint i = 0; i < warnings->len; i++)
    {
      g_test_message ("%s", (char *) warnings->pdata[i]);
      g_assert_true (g_str_has_prefix (warnings->pdata[i], "t.conf: ["));
    }
  g_assert_nonnull (strstr (warnings->pdata[0], "unknown key Colour"));
}

/* A file refused whole: too big, a NUL inside, not a key file. */
static void
test_bad_files (void)
{
  g_autoptr (LmAdvice) advice = lm_advice_new ();
  g_autofree char *big = g_strnfill (LM_ADVICE_MAX_FILE_BYTES + 1, '#');
  const char nul[] = "[a]\nPrograms=a\0\nWhat=w\nAvoid=v\n";

  for (guint i = 0; i < 3; i++)
    {
      g_autoptr (GError) error = NULL;
      const char *data = i == 0 ? big : i == 1 ? nul : "not a key file\n";
      gsize len = i == 0 ? strlen (big) : i == 1 ? sizeof nul - 1 : strlen (data);
      g_assert_cmpint (lm_advice_add_data (advice, data, len, "f", NULL, &error), ==, -1);
      g_assert_nonnull (error);
      g_assert_true (g_str_has_prefix (error->message, "f: "));
    }
  g_assert_cmpuint (lm_advice_size (advice), ==, 0);
}

/* lm_advice_load(): the files under a fake root's /etc first, by name; a
 * FIFO there is refused without blocking; a file the table cannot read is
 * a warning, the rest is used. */
static void
test_load (void)
{
  g_autofree char *root = g_dir_make_tmp ("lm-advice-XXXXXX", NULL);
  g_autofree char *dir = g_build_filename (root, LM_CAUSES_DIR, NULL);
  g_autofree char *a = g_build_filename (dir, "10-a.conf", NULL);
  g_autofree char *b = g_build_filename (dir, "20-b.conf", NULL);
  g_autofree char *fifo = g_build_filename (dir, "30-fifo.conf", NULL);
  g_autofree char *shipped_file
      = g_build_filename (g_getenv ("LM_SRCDIR"), "data", "causes.conf", NULL);
  g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  LmAdviceMatch m;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (
      g_file_set_contents (a, "[smartd]\nPrograms=smartd\nWhat=from a\nAvoid=x\n", -1, NULL));
  g_assert_true (
      g_file_set_contents (b, "[smartd]\nPrograms=smartd\nWhat=from b\nAvoid=x\n", -1, NULL));
  g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
  g_setenv ("LAPTOP_MODED_ROOT", root, TRUE);
  g_setenv ("LAPTOP_MODED_CAUSES", shipped_file, TRUE);
  g_autoptr (LmAdvice) advice = lm_advice_load (warnings);
  g_unsetenv ("LAPTOP_MODED_ROOT");
  g_unsetenv ("LAPTOP_MODED_CAUSES");
  lm_paths_reset ();

  g_assert_cmpuint (warnings->len, ==, 1);
  g_assert_nonnull (strstr (warnings->pdata[0], "30-fifo.conf: not a regular file"));
  LmAdviceCause smartd = { "smartd", NULL, NULL, "passthrough", NULL, "sda", NULL };
  g_assert_true (lm_advice_match (advice, &smartd, &m));
  g_assert_cmpstr (m.what, ==, "from a");
  lm_advice_match_clear (&m);
  /* The shipped entries are there behind them. */
  LmAdviceCause jbd2 = { "jbd2/sda1-8", NULL, NULL, "kernel", NULL, "sda", NULL };
  g_assert_true (lm_advice_match (advice, &jbd2, &m));
  g_assert_cmpstr (m.id, ==, "ext4-journal");
  lm_advice_match_clear (&m);
  g_unlink (a);
  g_unlink (b);
  g_unlink (fifo);
  g_autofree char *p = g_strdup (dir);
  while (strlen (p) > strlen (root))
    {
      char *up = g_path_get_dirname (p);
      g_rmdir (p);
      g_free (p);
      p = up;
    }
  g_rmdir (root);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/advice/shipped-causes", test_shipped_causes);
  g_test_add_func ("/advice/device-of", test_device_of);
  g_test_add_func ("/advice/names-filled-once", test_names_filled_once);
  g_test_add_func ("/advice/admin-first", test_admin_first);
  g_test_add_func ("/advice/bad-entries", test_bad_entries);
  g_test_add_func ("/advice/bad-files", test_bad_files);
  g_test_add_func ("/advice/load", test_load);
  return g_test_run ();
}
