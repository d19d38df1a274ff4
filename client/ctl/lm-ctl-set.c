/* lm-ctl-set.c: laptop-modectl set KEY=VALUE….
 * Owns reading the command line into one Configure call, all or nothing;
 * the daemon validates and names what is wrong. */
#include "config.h"

#include <stdlib.h>

#include "lm-ctl.h"

int
lm_ctl_set (int argc, char **argv)
{
  if (!lm_ctl_parse_options (
          &argc, &argv, " KEY=VALUE…",
          "Change settings, all or nothing, and save them to the configuration file.\n"
          "Keys: Mode (off|on|auto), LowBatteryPercent, Engine (auto|kernel|userspace),\n"
          "MaxLostWork, LaptopModeSeconds, DirtyRatio, DirtyBackgroundRatio,\n"
          "Remount (true|false), RemountTypes (comma-separated: ext3,ext4,reiserfs,btrfs),\n"
          "NoRemount (comma-separated mount points),\n"
          "Attribution (auto|bpf|tracefs|block_dump|none), SpinUpIdle, SpinUpHistory "
          "(true|false),\n"
          "DiskRecheck, FollowPowerProfile (true|false), DeferMaintenance (true|false), "
          "DiskSettings (GVariant text, e.g. "
          "\"{'sda': {'APM': <uint32 128>}}\"),\n"
          "SataLinkPolicy (med_power_with_dipm|max_performance|medium_power|min_power|\n"
          "min_power_with_partial|keep), RuntimePM (true|false), RuntimePMAutosuspendMs,\n"
          "NvmeLatencyToleranceUs (keep|auto|any|microseconds).\n"
          "Each value is read as the type of the property of the same name.",
          NULL))
    return LM_CTL_EXIT_USAGE;
  if (argc < 2)
    return lm_ctl_usage_error ("%s", "set needs at least one KEY=VALUE");

  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  for (int i = 1; i < argc; i++)
    {
      const char *eq = strchr (argv[i], '=');
      g_autoptr (GError) error = NULL;
      const char *canonical;

      if (eq == NULL || eq == argv[i])
        {
          g_autofree char *got = lm_ctl_safe (argv[i]);
          return lm_ctl_usage_error ("expected KEY=VALUE, got “%s”", got);
        }
      g_autofree char *key = g_strndup (argv[i], (gsize) (eq - argv[i]));
      GVariant *value = lm_ctl_parse_setting (key, eq + 1, &canonical, &error);
      if (value == NULL)
        {
          g_printerr ("%s: %s\n", lm_ctl_prog, error->message);
          return LM_CTL_EXIT_USAGE;
        }
      g_variant_builder_add (&b, "{sv}", canonical, value);
    }
  return lm_ctl_call_and_report ("Configure", g_variant_new ("(a{sv})", &b));
}
