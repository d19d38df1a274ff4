/* test-kmsg.c: the block_dump line parser on every historical format, on
 * the captures from the patched 6.12 kernel and on garbage (fuzzed). */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "lm-attrib.h"
#include "lm-kmsg.h"
#include "lm-paths.h"
#include "test-fakeroot.h"

static LmKmsgKind
parse (const char *line, LmKmsgRecord *r)
{
  /* An exact-size copy without a terminating NUL, so that a read past the
   * end is caught by ASan or valgrind. */
  gsize n = strlen (line);
  g_autofree char *copy = g_malloc (n ? n : 1);
  memcpy (copy, line, n);
  return lm_kmsg_parse_line (copy, n, r);
}

static void
test_historical_bio (void)
{
  LmKmsgRecord r;

  g_assert_cmpint (parse ("kjournald(1234): WRITE block 7716904 on sda1", &r), ==, LM_KMSG_BIO);
  g_assert_cmpstr (r.comm, ==, "kjournald");
  g_assert_cmpuint (r.pid, ==, 1234);
  g_assert_true (r.write);
  g_assert_cmpuint (r.sector, ==, 7716904);
  g_assert_cmpstr (r.dev, ==, "sda1");
  g_assert_cmpuint (r.sectors, ==, 0);
  g_assert_cmpint (r.usec, ==, -1);

  g_assert_cmpint (parse ("[  313.002116] Web Content(4400): READ block 502712 on dm-0", &r), ==,
                   LM_KMSG_BIO);
  g_assert_cmpstr (r.comm, ==, "Web Content");
  g_assert_false (r.write);
  g_assert_cmpint (r.usec, ==, 313002116);
  g_assert_cmpstr (r.dev, ==, "dm-0");

  g_assert_cmpint (
      parse ("<7>[  314.117200] kjournald(1234): WRITE block 7716920 on sda1 (8 sectors)", &r), ==,
      LM_KMSG_BIO);
  g_assert_cmpuint (r.sectors, ==, 8);
  g_assert_cmpint (r.usec, ==, 314117200);

  g_assert_cmpint (parse ("7,210,1936799,-;cat(39): READ block 9026 on vda (256 sectors)\n", &r),
                   ==, LM_KMSG_BIO);
  g_assert_cmpstr (r.comm, ==, "cat");
  g_assert_cmpint (r.usec, ==, 1936799);
  g_assert_cmpuint (r.sectors, ==, 256);
}

static void
test_historical_dirtied (void)
{
  LmKmsgRecord r;

  g_assert_cmpint (parse ("bash(2345): dirtied inode 20934 (.bash_history) on sda1", &r), ==,
                   LM_KMSG_DIRTIED);
  g_assert_cmpint (r.object, ==, LM_KMSG_OBJECT_INODE);
  g_assert_cmpuint (r.number, ==, 20934);
  g_assert_cmpstr (r.name, ==, ".bash_history");
  g_assert_cmpstr (r.dev, ==, "sda1");

  g_assert_cmpint (parse ("mutt(3100): dirtied inode 131090 (my notes (draft).txt) on sda3", &r),
                   ==, LM_KMSG_DIRTIED);
  g_assert_cmpstr (r.name, ==, "my notes (draft).txt");
  g_assert_cmpint (parse ("vi(2999): dirtied inode 20977 (?) on sda1", &r), ==, LM_KMSG_DIRTIED);
  g_assert_cmpstr (r.name, ==, "?");
  g_assert_cmpint (parse ("x(1): dirtied inode 7 () on sda1", &r), ==, LM_KMSG_DIRTIED);
  g_assert_cmpstr (r.name, ==, "");

  /* The 2.6.0 patch's buffer and page lines, with and without a number. */
  g_assert_cmpint (parse ("kupdated(7): dirtied buffer 1234 on hda1", &r), ==, LM_KMSG_DIRTIED);
  g_assert_cmpint (r.object, ==, LM_KMSG_OBJECT_BUFFER);
  g_assert_true (r.has_number);
  g_assert_cmpuint (r.number, ==, 1234);
  g_assert_cmpint (parse ("vi(99): dirtied page on hda3", &r), ==, LM_KMSG_DIRTIED);
  g_assert_cmpint (r.object, ==, LM_KMSG_OBJECT_PAGE);
  g_assert_false (r.has_number);
  g_assert_cmpstr (r.dev, ==, "hda3");

  g_assert_cmpint (parse ("4,714,14244311,-;block_dump_printk: 1428 callbacks suppressed", &r), ==,
                   LM_KMSG_SUPPRESSED);
  g_assert_cmpuint (r.suppressed, ==, 1428);
}

static void
test_tricky (void)
{
  LmKmsgRecord r;

  /* Names with parentheses, slashes, colons; the pid is the last "(N): ". */
  g_assert_cmpint (parse ("(sd-pam)(100): READ block 1 on sda", &r), ==, LM_KMSG_BIO);
  g_assert_cmpstr (r.comm, ==, "(sd-pam)");
  g_assert_cmpint (parse ("a(3): b(4): READ block 1 on sda", &r), ==, LM_KMSG_BIO);
  g_assert_cmpstr (r.comm, ==, "a(3): b");
  g_assert_cmpuint (r.pid, ==, 4);
  g_assert_cmpint (parse ("kworker/u4:0(10): WRITE block 51202 on vda (2048 sectors)", &r), ==,
                   LM_KMSG_BIO);
  g_assert_cmpstr (r.comm, ==, "kworker/u4:0");
  g_assert_cmpint (parse ("jbd2/vda-8(34): WRITE block 32770 on vda (2 sectors)", &r), ==,
                   LM_KMSG_BIO);
  g_assert_cmpstr (r.comm, ==, "jbd2/vda-8");

  /* A file name that looks like a block_dump line stays a file name. */
  g_assert_cmpint (parse ("bash(1): dirtied inode 5 (a(2): READ block 1 on sda) on sda1", &r), ==,
                   LM_KMSG_DIRTIED);
  g_assert_cmpstr (r.comm, ==, "bash");
  g_assert_cmpstr (r.name, ==, "a(2): READ block 1 on sda");
  g_assert_cmpstr (r.dev, ==, "sda1");

  /* Written into /dev/kmsg by a user process (facility LOG_USER): forged. */
  g_assert_cmpint (parse ("13,5,100,-;cat(1): READ block 1 on sda", &r), ==, LM_KMSG_NONE);
  /* Block device pseudo-inodes are never a dirtier. */
  g_assert_cmpint (parse ("jbd2/vda-8(36): dirtied inode 266338304 () on bdev", &r), ==,
                   LM_KMSG_NONE);

  const char *bad[] = {
    "",
    "\n",
    " SUBSYSTEM=pci",
    "cat(39): READ block on vda",
    "cat(39): READ block 99999999999999999999999 on vda",
    "cat(39): READ block 12 on ",
    "cat(39): READ block 12 on vda (2 sectors) trailing",
    "cat(39): READ block 12 on vda (x sectors)",
    "cat(39): READ block -12 on vda",
    "cat(-39): READ block 12 on vda",
    "cat(39):READ block 12 on vda",
    "cat(39): READA block 12 on vda",
    "averyveryverylongname(39): READ block 12 on vda",
    "cat(39): dirtied inode 12 (data.bin on vda",
    "cat(39): dirtied inode (data.bin) on vda",
    "cat(39): dirtied inode 12 (x) on ",
    "cat(99999999999): READ block 1 on vda",
    "block_dump_printk: callbacks suppressed",
    "EXT4-fs (vda): mounted filesystem",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_test_message ("line %s", bad[i]);
      g_assert_cmpint (parse (bad[i], &r), ==, LM_KMSG_NONE);
    }
}

typedef struct
{
  guint bio, dirtied, suppressed, none;
} Counts;

static Counts
parse_file (const char *name, const char *from, const char *to, guint *between)
{
  /* The shared vectors of tests/data/block_dump, also used by kernel-patch/. */
  const char *srcdir = g_getenv ("LM_SRCDIR");
  g_autofree char *path
      = srcdir != NULL ? g_build_filename (srcdir, "tests", "data", "block_dump", name, NULL)
                       : g_test_build_filename (G_TEST_DIST, "data", "block_dump", name, NULL);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  Counts c = { 0 };
  gboolean inside = FALSE;

  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      LmKmsgRecord r;
      LmKmsgKind k = parse (lines[i], &r);

      if (from != NULL && strstr (lines[i], from) != NULL)
        inside = TRUE;
      if (to != NULL && strstr (lines[i], to) != NULL)
        inside = FALSE;
      if (inside && k != LM_KMSG_NONE)
        (*between)++;
      switch (k)
        {
          case LM_KMSG_BIO:
            c.bio++;
            g_assert_cmpuint (strlen (r.comm), <=, 15);
            g_assert_cmpuint (strlen (r.dev), >, 0);
            break;
          case LM_KMSG_DIRTIED:
            c.dirtied++;
            break;
          case LM_KMSG_SUPPRESSED:
            c.suppressed++;
            break;
          default:
            c.none++;
        }
    }
  return c;
}

static void
test_captures (void)
{
  guint between = 0;
  Counts h = parse_file ("historical-2.6-format.txt", NULL, NULL, &between);
  /* Every line of the historical file is a block_dump line. */
  g_assert_cmpuint (h.bio + h.dirtied, ==, 11);

  /* The README counts 745 block_dump lines plus one rate-limit line in
   * each capture; nothing between the markers of the vm.block_dump=0 phase. */
  Counts d = parse_file ("linux-6.12-guest-dmesg.txt", "LMTEST: block_dump off",
                         "LMTEST: block_dump off end", &between);
  g_assert_cmpuint (d.bio + d.dirtied, ==, 745);
  g_assert_cmpuint (d.suppressed, ==, 1);
  g_assert_cmpuint (between, ==, 0);

  Counts k = parse_file ("linux-6.12-guest-kmsg.txt", "LMTEST: block_dump off",
                         "LMTEST: block_dump off end", &between);
  g_assert_cmpuint (k.bio, ==, d.bio);
  g_assert_cmpuint (k.dirtied, ==, d.dirtied);
  g_assert_cmpuint (k.suppressed, ==, 1);
  g_assert_cmpuint (between, ==, 0);

  /* The negative control: pseudo-filesystems parse (the model ignores them
   * as they are no disk), "on bdev" does not. */
  Counts u = parse_file ("linux-6.12-unfiltered-excerpt.txt", NULL, NULL, &between);
  g_assert_cmpuint (u.dirtied, ==, 13);
  g_assert_cmpuint (u.none, >=, 2);
}

/* Random bytes, and valid lines with bytes flipped, cut or inserted: the
 * parser must return without reading outside the line, and what it returns
 * must be well formed. Seeded, so a failure can be replayed with --seed. */
static void
test_fuzz (void)
{
  static const char *seeds[] = {
    "7,210,1936799,-;cat(39): READ block 9026 on vda (256 sectors)",
    "<7>[  314.117200] kjournald(1234): WRITE block 7716920 on sda1 (8 sectors)",
    "mutt(3100): dirtied inode 131090 (my notes (draft).txt) on sda3",
    "kupdated(7): dirtied buffer 1234 on hda1",
    "4,714,14244311,-;block_dump_printk: 1428 callbacks suppressed",
  };
  guint iterations = g_test_perf () || g_test_slow () ? 2000000 : 200000;
  guint parsed = 0;

  for (guint i = 0; i < iterations; i++)
    {
      char buf[300];
      gsize n;

      if (g_test_rand_bit ())
        {
          n = (gsize) g_test_rand_int_range (0, sizeof buf);
          for (gsize j = 0; j < n; j++)
            buf[j] = (char) g_test_rand_int_range (0, 256);
        }
      else
        {
          const char *s = seeds[g_test_rand_int_range (0, G_N_ELEMENTS (seeds))];
          n = strlen (s);
          memcpy (buf, s, n);
          for (int m = g_test_rand_int_range (0, 4); m > 0 && n > 0; m--)
            {
              gsize at = (gsize) g_test_rand_int_range (0, (gint32) n);
              switch (g_test_rand_int_range (0, 3))
                {
                  case 0:
                    buf[at] = (char) g_test_rand_int_range (0, 256);
                    break;
                  case 1:
                    n = at;
                    break;
                  default:
                    if (n < sizeof buf - 1)
                      {
                        memmove (buf + at + 1, buf + at, n - at);
                        buf[at] = "(): 0123456789 ;,[]<>"[g_test_rand_int_range (0, 21)];
                        n++;
                      }
                }
            }
        }
      g_autofree char *exact = g_memdup2 (buf, n ? n : 1);
      LmKmsgRecord r;
      LmKmsgKind k = lm_kmsg_parse_line (exact, n, &r);
      if (k == LM_KMSG_BIO || k == LM_KMSG_DIRTIED)
        {
          parsed++;
          g_assert_cmpuint (strnlen (r.comm, sizeof r.comm), <, sizeof r.comm);
          g_assert_cmpuint (strnlen (r.dev, sizeof r.dev), <, sizeof r.dev);
          g_assert_cmpuint (strlen (r.dev), >, 0);
          g_assert_cmpuint (strnlen (r.name, sizeof r.name), <, sizeof r.name);
        }
    }
  /* The mutations leave many lines valid: the loop did reach the parser's
   * accepting paths, not only its first check. */
  g_assert_cmpuint (parsed, >, iterations / 20);
}

/* The block_dump backend's path on the captured log: parser, then the
 * spin-up model, with a 10 ms idle time (the capture's phases are tens of
 * milliseconds apart). The root is an empty directory, so sysfs and /proc
 * are not the build machine's: kernel threads are told by name. */
static void
test_model_on_capture (void)
{
  g_autofree char *root = g_dir_make_tmp ("lm-kmsg-XXXXXX", NULL);
  const char *srcdir = g_getenv ("LM_SRCDIR");
  g_autofree char *path = srcdir != NULL
                              ? g_build_filename (srcdir, "tests", "data", "block_dump",
                                                  "linux-6.12-guest-kmsg.txt", NULL)
                              : g_test_build_filename (G_TEST_DIST, "data", "block_dump",
                                                       "linux-6.12-guest-kmsg.txt", NULL);
  g_autofree char *text = NULL;
  g_autoptr (LmAttribModel) model = lm_attrib_model_new (10, 0);
  g_autoptr (GPtrArray) phase = g_ptr_array_new_with_free_func (g_free);
  guint cat_spinups = 0, dd_writeback = 0, blamed_on_kworker = 0;
  const char *current = "";

  g_setenv ("LAPTOP_MODED_ROOT", root, TRUE);
  lm_paths_reset ();
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      LmKmsgRecord r;
      LmSpinUp s;
      const char *marker = strstr (lines[i], "LMTEST: ");

      if (marker != NULL)
        current = marker + strlen ("LMTEST: ");
      switch (lm_kmsg_parse_line (lines[i], strlen (lines[i]), &r))
        {
          case LM_KMSG_DIRTIED:
            lm_attrib_model_dirtied (model, r.dev, r.usec, r.pid, r.comm, r.number, r.name);
            break;
          case LM_KMSG_BIO:
            if (!lm_attrib_model_io (model, r.dev, r.usec, r.pid, r.comm, r.write, r.sector, &s))
              break;
            if (g_str_has_prefix (s.comm, "kworker"))
              blamed_on_kworker++;
            if (g_str_equal (current, "read of an uncached file"))
              {
                cat_spinups++;
                g_assert_cmpstr (s.comm, ==, "cat");
                g_assert_cmpuint (s.pid, ==, 39);
                g_assert_cmpstr (s.disk, ==, "vda");
                g_assert_false (s.write);
                g_assert_cmpint (s.via, ==, LM_VIA_DIRECT);
              }
            if (g_str_equal (current, "buffered write, then sync") && s.via == LM_VIA_WRITEBACK)
              {
                dd_writeback++;
                g_assert_cmpstr (s.comm, ==, "dd");
                g_assert_cmpuint (s.pid, ==, 43);
                g_assert_cmpstr (s.submitter_comm, ==, "kworker/u4:0");
                g_assert_cmpuint (s.inode, ==, 14);
                g_assert_cmpstr (s.path, ==, "written.bin");
              }
            break;
          default:
            break;
        }
    }
  g_assert_cmpuint (cat_spinups, ==, 1);
  g_assert_cmpuint (dd_writeback, ==, 1);
  g_assert_cmpuint (blamed_on_kworker, ==, 0);
  g_rmdir (root);
  g_unsetenv ("LAPTOP_MODED_ROOT");
  lm_paths_reset ();
}

/* Processes, not threads: the model (tracefs and block_dump) is told a
 * thread's id and name; /proc says whose thread it is. A thread /proc no
 * longer shows, or shows under another name (its tid reused), stays as
 * the kernel printed it. */
/* /proc/PID/stat of a task started @ticks after boot. */
static char *
stat_line (guint pid, guint64 ticks)
{
  return g_strdup_printf ("%u (x) S 1 %u %u 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %" G_GUINT64_FORMAT
                          " 1000 100 18446744073709551615\n",
                          pid, pid, pid, ticks);
}

static void
test_model_threads (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmAttribModel) model = lm_attrib_model_new (10, 0);
  static const guint boot_tasks[] = { 1301, 1234, 77 };
  LmSpinUp s;

  lm_fake_root_put (f, "proc/1301/comm", "Cache2 I/O\n");
  lm_fake_root_put (f, "proc/1301/status",
                    "Name:\tCache2 I/O\nUmask:\t0022\nTgid:\t1234\nPid:\t1301\n");
  lm_fake_root_put (f, "proc/1234/comm", "firefox-esr\n");
  lm_fake_root_put (f, "proc/1234/status",
                    "Name:\tfirefox-esr\nTgid:\t1234\nPid:\t1234\nUid:\t1000\t1000\n");
  lm_fake_root_put (f, "proc/77/comm", "other\n");
  lm_fake_root_put (f, "proc/77/status", "Name:\tother\nTgid:\t1\n");
  /* Started at boot: there when the lines below were logged. */
  for (guint i = 0; i < G_N_ELEMENTS (boot_tasks); i++)
    {
      g_autofree char *path = g_strdup_printf ("proc/%u/stat", boot_tasks[i]);
      g_autofree char *stat = stat_line (boot_tasks[i], 0);
      lm_fake_root_put (f, path, stat);
    }

  g_assert_true (lm_attrib_model_io (model, "sda", 100000, 1301, "Cache2 I/O", FALSE, 8, &s));
  g_assert_cmpstr (s.comm, ==, "firefox-esr");
  g_assert_cmpuint (s.pid, ==, 1234);
  g_assert_cmpstr (s.thread, ==, "Cache2 I/O");
  g_assert_cmpstr (s.submitter_comm, ==, "Cache2 I/O");
  g_assert_cmpint (s.via, ==, LM_VIA_DIRECT);

  /* The main thread itself: no Thread. */
  g_assert_true (lm_attrib_model_io (model, "sdb", 100000, 1234, "firefox-esr", FALSE, 8, &s));
  g_assert_cmpstr (s.comm, ==, "firefox-esr");
  g_assert_cmpstr (s.thread, ==, "");

  /* Dirtied by the thread, written by the flusher. */
  lm_attrib_model_dirtied (model, "sdc", -1, 1301, "Cache2 I/O", 12, "cache-entry");
  g_assert_true (lm_attrib_model_io (model, "sdc", 100000, 40, "kworker/u8:0", TRUE, 8, &s));
  g_assert_cmpint (s.via, ==, LM_VIA_WRITEBACK);
  g_assert_cmpstr (s.comm, ==, "firefox-esr");
  g_assert_cmpuint (s.pid, ==, 1234);
  g_assert_cmpstr (s.thread, ==, "Cache2 I/O");
  g_assert_cmpstr (s.submitter_comm, ==, "kworker/u8:0");
  g_assert_cmpuint (s.submitter_pid, ==, 40);
  g_assert_cmpstr (s.note, ==, "");

  /* kswapd's page-out is reclaim: kernel, with a note, never the dirtier. */
  g_assert_true (lm_attrib_model_io (model, "sdc", 200000, 35, "kswapd0", TRUE, 8, &s));
  g_assert_cmpint (s.via, ==, LM_VIA_KERNEL);
  g_assert_cmpstr (s.comm, ==, "kswapd0");
  g_assert_cmpstr (s.thread, ==, "");
  g_assert_cmpstr (s.note, ==, "swap: page-out by kswapd, reclaiming memory");

  /* Gone, or the tid someone else's now: as printed. */
  g_assert_true (lm_attrib_model_io (model, "sdd", 100000, 1302, "DOM Worker", FALSE, 8, &s));
  g_assert_cmpstr (s.comm, ==, "DOM Worker");
  g_assert_cmpuint (s.pid, ==, 1302);
  g_assert_cmpstr (s.thread, ==, "");
  g_assert_true (lm_attrib_model_io (model, "sde", 100000, 77, "renamed", FALSE, 8, &s));
  g_assert_cmpstr (s.comm, ==, "renamed");
  g_assert_cmpuint (s.pid, ==, 77);
}

/* block_dump: a pid /proc shows owned by a task started after the line
 * (another user's program exited; the pid went to this user's): neither
 * its uid nor its process is the line's. As the kernel printed it, uid
 * unknown, so a view of one's own processes redacts it. */
static void
test_model_reused_pid (LmFakeRoot *f, gconstpointer data)
{
  g_autoptr (LmAttribModel) model = lm_attrib_model_new (10, 0);
  long hz = sysconf (_SC_CLK_TCK);
  struct timespec boot;
  LmSpinUp s;

  g_assert_cmpint (clock_gettime (CLOCK_BOOTTIME, &boot), ==, 0);
  /* Started a second ago; the line was logged at 100 ms after boot. */
  guint64 now_ticks = (guint64) (boot.tv_sec - 1) * (guint64) hz;
  g_autofree char *late = stat_line (1400, now_ticks);
  g_autofree char *early = stat_line (1401, 0);
  for (guint pid = 1400; pid <= 1401; pid++)
    {
      g_autofree char *comm = g_strdup_printf ("proc/%u/comm", pid);
      g_autofree char *status = g_strdup_printf ("proc/%u/status", pid);
      g_autofree char *text
          = g_strdup_printf ("Name:\tsecret\nTgid:\t%u\nPid:\t%u\nUid:\t1000\t1000\n", pid, pid);
      lm_fake_root_put (f, comm, "secret\n");
      lm_fake_root_put (f, status, text);
    }
  lm_fake_root_put (f, "proc/1400/stat", late);
  lm_fake_root_put (f, "proc/1401/stat", early);

  g_assert_true (lm_attrib_model_io (model, "sda", 100000, 1400, "secret", FALSE, 8, &s));
  g_assert_cmpint (s.uid, ==, -1);
  g_assert_cmpuint (s.pid, ==, 1400);
  /* Its dirtying, written back later: not the new owner's either. */
  lm_attrib_model_dirtied (model, "sdb", 100000, 1400, "secret", 12, "notes.txt");
  g_assert_true (lm_attrib_model_io (model, "sdb", 200000, 40, "kworker/u8:0", TRUE, 8, &s));
  g_assert_cmpint (s.via, ==, LM_VIA_WRITEBACK);
  g_assert_cmpint (s.uid, ==, -1);
  /* The control: the same, started before the line, is trusted. */
  g_assert_true (lm_attrib_model_io (model, "sdc", 100000, 1401, "secret", FALSE, 8, &s));
  g_assert_cmpint (s.uid, ==, 1000);
  /* No stat at all (gone between the reads): not trusted. */
  lm_fake_root_put (f, "proc/1402/comm", "secret\n");
  lm_fake_root_put (f, "proc/1402/status", "Name:\tsecret\nTgid:\t1402\nUid:\t1000\t1000\n");
  g_assert_true (lm_attrib_model_io (model, "sdd", 100000, 1402, "secret", FALSE, 8, &s));
  g_assert_cmpint (s.uid, ==, -1);
}

/* The daemon's own spin-up names it and the command, via passthrough,
 * and blames nobody else; its wake is the disk's last I/O in the model,
 * so the next program's read a moment later is no spin-up. */
static void
test_own_spinup (void)
{
  g_autoptr (LmAttribModel) model = lm_attrib_model_new (1000, 0);
  LmSpinUp s;

  lm_attrib_own_spinup (&s, "sda", "SMART READ DATA", 1234567);
  g_assert_cmpstr (s.disk, ==, "sda");
  g_assert_cmpint (s.time_us, ==, 1234567);
  g_assert_cmpuint (s.pid, ==, (guint32) getpid ());
  g_assert_cmpuint (s.submitter_pid, ==, (guint32) getpid ());
  g_assert_cmpstr (s.comm, ==, LM_ATTRIB_OWN_COMM);
  g_assert_cmpstr (s.submitter_comm, ==, LM_ATTRIB_OWN_COMM);
  g_assert_cmpstr (s.thread, ==, "");
  g_assert_cmpstr (s.note, ==, "SMART READ DATA");
  g_assert_cmpint (s.via, ==, LM_VIA_PASSTHROUGH);
  g_assert_cmpuint (s.inode, ==, 0);
  g_assert_cmpint (s.uid, ==, (gint64) geteuid ());

  /* Quiet since start; the daemon's wake at 10 s (what own_io does), a
   * read 0.3 s later: no spin-up; a read after a quiet second: one. */
  g_assert_true (lm_attrib_model_gap (model, "sda", 10000000));
  g_assert_false (lm_attrib_model_io (model, "sda", 10300000, 4242, "cat", FALSE, 8, &s));
  g_assert_true (lm_attrib_model_io (model, "sda", 12000000, 7, "marker", FALSE, 8, &s));
  g_assert_cmpstr (s.comm, ==, "marker");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kmsg/historical-bio", test_historical_bio);
  g_test_add_func ("/kmsg/historical-dirtied", test_historical_dirtied);
  g_test_add_func ("/kmsg/tricky", test_tricky);
  g_test_add_func ("/kmsg/captures", test_captures);
  g_test_add_func ("/kmsg/fuzz", test_fuzz);
  g_test_add_func ("/kmsg/model-on-capture", test_model_on_capture);
  g_test_add_func ("/kmsg/own-spinup", test_own_spinup);
  g_test_add ("/kmsg/model-threads", LmFakeRoot, NULL, lm_fake_root_setup, test_model_threads,
              lm_fake_root_teardown);
  g_test_add ("/kmsg/model-reused-pid", LmFakeRoot, NULL, lm_fake_root_setup, test_model_reused_pid,
              lm_fake_root_teardown);
  return g_test_run ();
}
