/* test-escape.c: the \xNN escaping of outside text (common/lm-escape.c).
 * What must be escaped, what must not, and that every escaped text reads
 * back as exactly the bytes it came from. */
#include <glib.h>
#include <string.h>

#include "lm-escape.h"

static void
assert_escapes (const char *in, gssize len, LmEscapeFlags flags, const char *want)
{
  g_autofree char *got = lm_escape (in, len, flags);
  gsize n = len < 0 ? strlen (in) : (gsize) len;
  gboolean same = strlen (got) == n && memcmp (got, in, n) == 0;

  g_assert_cmpstr (got, ==, want);
  g_assert_true (g_utf8_validate (got, -1, NULL));
  g_assert_cmpint (lm_escape_needed (in, len, flags), ==, !same);
}

static void
test_plain_text_unchanged (void)
{
  assert_escapes ("firefox", -1, 0, "firefox");
  assert_escapes ("kworker/u8:2", -1, 0, "kworker/u8:2");
  assert_escapes ("", -1, 0, "");
  /* Printable UTF-8 is not escaped: names in other scripts stay readable. */
  assert_escapes ("Grüße ディスク", -1, 0, "Grüße ディスク");
  g_assert_false (lm_escape_needed ("Grüße", -1, 0));
  g_assert_null (lm_escape (NULL, -1, 0));
}

static void
test_terminal_controls (void)
{
  /* ESC [ 2 J clears the screen, BEL rings, ESC ] sets the title. */
  assert_escapes ("evil\033[2J\a", -1, 0, "evil\\x1b[2J\\x07");
  assert_escapes ("\033]0;owned\007", -1, 0, "\\x1b]0;owned\\x07");
  assert_escapes ("a\nb\rc\td", -1, 0, "a\\x0ab\\x0dc\\x09d");
  assert_escapes ("del\177", -1, 0, "del\\x7f");
  /* C1 controls in UTF-8 (U+009B is CSI on terminals that take 8-bit
   * controls): each byte of the sequence. */
  assert_escapes ("x\302\233"
                  "2J",
                  -1, 0, "x\\xc2\\x9b2J");
  /* A name that would show reversed (U+202E, right-to-left override). */
  assert_escapes ("abc\342\200\256txt", -1, 0, "abc\\xe2\\x80\\xaetxt");
  g_assert_true (lm_escape_needed ("\033", -1, 0));
}

static void
test_invalid_utf8 (void)
{
  assert_escapes ("caf\351", -1, 0, "caf\\xe9");
  /* A truncated sequence, then valid text again. */
  assert_escapes ("\342\202x", -1, 0, "\\xe2\\x82x");
  assert_escapes ("\377\376", -1, 0, "\\xff\\xfe");
  /* With a length, a NUL is a byte like another. */
  assert_escapes ("a\0b", 3, 0, "a\\x00b");
}

static void
test_backslash (void)
{
  /* Escaped, so that a name holding the text "\x1b" cannot pass for ESC. */
  assert_escapes ("a\\x1b", -1, 0, "a\\x5cx1b");
  /* Text escaped already (the daemon's Remounted): not twice. */
  assert_escapes ("/mnt/a\\x20b", -1, LM_ESCAPE_KEEP_BACKSLASH, "/mnt/a\\x20b");
  assert_escapes ("x\033\\", -1, LM_ESCAPE_KEEP_BACKSLASH, "x\\x1b\\");
}

static void
check_round_trip (const char *bytes, gsize len)
{
  g_autofree char *escaped = lm_escape (bytes, (gssize) len, 0);
  gsize back_len;
  g_autofree char *back = lm_unescape (escaped, &back_len);

  g_assert_true (g_utf8_validate (escaped, -1, NULL));
  for (const char *p = escaped; *p; p = g_utf8_next_char (p))
    g_assert_false (lm_escape_is_unsafe (g_utf8_get_char (p)));
  g_assert_cmpmem (back, back_len, bytes, len);
}

/* Unambiguous: any bytes at all escape to safe UTF-8 and read back. */
static void
test_round_trip_random (void)
{
  GRand *rand = g_rand_new_with_seed (1234);

  for (int i = 0; i < 20000; i++)
    {
      char buf[32];
      gsize len = (gsize) g_rand_int_range (rand, 0, sizeof buf);

      for (gsize k = 0; k < len; k++)
        {
          /* Mostly the interesting bytes: controls, backslash, x, high. */
          static const char pick[] = { '\\', 'x', '1', 'b', '\033', '\a', 0, '\177', 'a' };
          guint32 r = g_rand_int (rand);
          buf[k] = (r & 1) ? pick[(r >> 1) % sizeof pick] : (char) (r >> 8);
        }
      check_round_trip (buf, len);
    }
  g_rand_free (rand);
  check_round_trip ("\\x41", 4);
  check_round_trip ("\\\\x", 3);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/escape/plain", test_plain_text_unchanged);
  g_test_add_func ("/escape/terminal-controls", test_terminal_controls);
  g_test_add_func ("/escape/invalid-utf8", test_invalid_utf8);
  g_test_add_func ("/escape/backslash", test_backslash);
  g_test_add_func ("/escape/round-trip", test_round_trip_random);
  return g_test_run ();
}
