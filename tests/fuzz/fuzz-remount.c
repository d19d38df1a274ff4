/* fuzz-remount.c: mount points and option strings as /proc/self/mountinfo
 * gives them (lm-mount-options.c's pure functions): escaping is reversible
 * and printable UTF-8; commit= read back is a number or nothing, never from
 * a btrfs subvolume's name; option rewriting keeps what it set. */
#include "lm-fuzz.h"
#include "lm-remount.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *bytes = lm_fuzz_strndup (data, size);

  g_autofree char *escaped = lm_remount_escape (bytes);
  LM_FUZZ_CHECK (g_utf8_validate (escaped, -1, NULL));
  for (const char *p = escaped; *p; p++)
    LM_FUZZ_CHECK ((guchar) *p >= 0x20 && *p != 0x7f);
  g_autofree char *back = lm_remount_unescape (escaped);
  LM_FUZZ_CHECK (g_str_equal (back, bytes));

  g_auto (GStrv) items = lm_remount_options_split (bytes);
  LM_FUZZ_CHECK (items != NULL);
  for (guint t = 0; t < 2; t++)
    {
      const char *fstype = t == 0 ? "ext4" : "btrfs";
      g_autofree char *shown = lm_remount_options_commit (fstype, bytes);
      g_autofree char *restore = lm_remount_options_commit_restore (fstype, bytes);
      LM_FUZZ_CHECK (restore != NULL && *restore != '\0');
      for (const char *p = restore; *p; p++)
        LM_FUZZ_CHECK (g_ascii_isdigit (*p));
      LM_FUZZ_CHECK (shown == NULL || g_str_equal (shown, restore));
      /* Whatever a subvolume is named, it cannot say commit=. */
      g_autofree char *hostile = g_strconcat ("rw,subvolid=256,subvol=/", bytes, NULL);
      g_autofree char *none = lm_remount_options_commit ("btrfs", hostile);
      LM_FUZZ_CHECK (none == NULL);
      LM_FUZZ_CHECK (!lm_remount_options_lazytime ("btrfs", hostile));
      g_autofree char *with = lm_remount_options_with_commit (fstype, bytes, "600");
      g_autofree char *again = lm_remount_options_commit (fstype, with);
      LM_FUZZ_CHECK (g_strcmp0 (again, "600") == 0);
    }
  g_autofree char *set = lm_remount_options_set (bytes, "commit", "600");
  g_autofree char *got = lm_remount_options_get (set, "commit");
  LM_FUZZ_CHECK (g_strcmp0 (got, "600") == 0);
  g_autofree char *removed = lm_remount_options_set (set, "commit", NULL);
  g_autofree char *none = lm_remount_options_get (removed, "commit");
  LM_FUZZ_CHECK (none == NULL);
  return 0;
}
