/* lm-ctl-status.c: laptop-modectl status, as words or as JSON.
 * Owns how the daemon's properties are shown; every string that a user or
 * the system chose (holders, mount points, types) is printed escaped. */
#include "config.h"

#include <stdlib.h>

#include "lm-ctl.h"

static const char *
reason_text (const char *reason)
{
  static const struct
  {
    const char *reason, *text;
  } texts[] = {
    { LM_REASON_MANUAL, "set by hand" },
    { LM_REASON_ON_BATTERY, "on battery" },
    { LM_REASON_AC, "on AC" },
    { LM_REASON_LOW_BATTERY, "battery low: off until charging" },
    { LM_REASON_INHIBITED, "held off by a program" },
    { LM_REASON_POWER_SAVER, "power profile power-saver" },
  };

  for (gsize i = 0; reason != NULL && i < G_N_ELEMENTS (texts); i++)
    if (g_str_equal (texts[i].reason, reason))
      return texts[i].text;
  return NULL;
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char *const *) a, *(const char *const *) b);
}

/* Every property, sorted by name: new properties appear without code here.
 * Remounted a(ss) reads better as [{"MountPoint": …, "Options": …}]. */
static JsonNode *
properties_json (GDBusProxy *proxy)
{
  g_auto (GStrv) names = g_dbus_proxy_get_cached_property_names (proxy);
  g_autoptr (JsonBuilder) b = json_builder_new ();

  if (names != NULL)
    qsort (names, g_strv_length (names), sizeof (char *), compare_names);
  json_builder_begin_object (b);
  for (guint i = 0; names != NULL && names[i] != NULL; i++)
    {
      g_autoptr (GVariant) value = g_dbus_proxy_get_cached_property (proxy, names[i]);

      json_builder_set_member_name (b, names[i]);
      if (g_str_equal (names[i], "Remounted")
          && g_variant_is_of_type (value, G_VARIANT_TYPE ("a(ss)")))
        {
          GVariantIter iter;
          const char *mount_point, *options;

          json_builder_begin_array (b);
          g_variant_iter_init (&iter, value);
          while (g_variant_iter_next (&iter, "(&s&s)", &mount_point, &options))
            {
              json_builder_begin_object (b);
              json_builder_set_member_name (b, "MountPoint");
              json_builder_add_string_value (b, mount_point);
              json_builder_set_member_name (b, "Options");
              json_builder_add_string_value (b, options);
              json_builder_end_object (b);
            }
          json_builder_end_array (b);
        }
      else
        json_builder_add_value (b, json_gvariant_serialize (value));
    }
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

static void
print_inhibitors (GVariant *holds)
{
  GVariantIter iter;
  const char *application, *why;
  guint32 uid;
  gboolean first = TRUE;

  if (holds == NULL || !g_variant_is_of_type (holds, G_VARIANT_TYPE ("a(ssu)")))
    return;
  g_variant_iter_init (&iter, holds);
  while (g_variant_iter_next (&iter, "(&s&su)", &application, &why, &uid))
    {
      g_autofree char *app = lm_ctl_safe (application);
      g_autofree char *reason = lm_ctl_safe (why);
      g_print ("%s%s (uid %u): %s\n", first ? "Held off by:         " : "                     ",
               app, uid, reason);
      first = FALSE;
    }
}

static char *
safe_list (const char *const *items)
{
  g_autoptr (GPtrArray) safe = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; items != NULL && items[i] != NULL; i++)
    g_ptr_array_add (safe, lm_ctl_safe (items[i]));
  g_ptr_array_add (safe, NULL);
  return g_strjoinv (", ", (char **) safe->pdata);
}

static void
print_remounted (GVariant *remounted)
{
  GVariantIter iter;
  const char *mount_point, *options;
  gboolean first = TRUE;

  if (remounted == NULL || !g_variant_is_of_type (remounted, G_VARIANT_TYPE ("a(ss)")))
    return;
  g_variant_iter_init (&iter, remounted);
  while (g_variant_iter_next (&iter, "(&s&s)", &mount_point, &options))
    {
      /* The daemon writes these \xNN-escaped already. */
      g_autofree char *mp = lm_escape (mount_point, -1, LM_ESCAPE_KEEP_BACKSLASH);
      g_autofree char *opts = lm_escape (options, -1, LM_ESCAPE_KEEP_BACKSLASH);
      g_print ("%s%s (was %s)\n", first ? "Remounted:           " : "                     ", mp,
               opts);
      first = FALSE;
    }
}

int
lm_ctl_status (int argc, char **argv)
{
  gboolean json = FALSE;
  const GOptionEntry entries[]
      = { { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print machine-readable JSON", NULL },
          { NULL } };

  if (!lm_ctl_parse_options (&argc, &argv, NULL, "Show whether laptop mode is on and its settings.",
                             entries))
    return LM_CTL_EXIT_USAGE;
  if (argc > 1)
    return lm_ctl_no_arguments (argc, argv);

  g_autoptr (LmExportedLaptopMode) p = lm_ctl_get_proxy ();
  if (p == NULL)
    return EXIT_FAILURE;

  const char *mode = lm_exported_laptop_mode_get_mode (p);
  const char *engine = lm_exported_laptop_mode_get_engine (p);
  const char *backend = lm_exported_laptop_mode_get_tunables_backend (p);
  const char *version = lm_exported_laptop_mode_get_version (p);
  if (mode == NULL || engine == NULL || backend == NULL || version == NULL)
    {
      g_printerr ("%s: laptop-moded did not answer with its properties\n", lm_ctl_prog);
      return EXIT_FAILURE;
    }

  if (json)
    {
      g_autoptr (JsonNode) node = properties_json (G_DBUS_PROXY (p));
      lm_ctl_print_json (node);
      return EXIT_SUCCESS;
    }

  const char *reason = lm_exported_laptop_mode_get_reason (p);
  g_autofree char *safe_mode = lm_ctl_safe (mode);
  g_autofree char *safe_reason = lm_ctl_safe (reason_text (reason) ? reason_text (reason)
                                              : reason             ? reason
                                                                   : "?");
  g_autofree char *source = lm_ctl_safe (lm_exported_laptop_mode_get_power_source (p));
  g_autofree char *safe_engine = lm_ctl_safe (engine);
  g_autofree char *safe_backend = lm_ctl_safe (backend);
  g_autofree char *safe_version = lm_ctl_safe (version);

  g_print ("Laptop mode:         %s\n", lm_exported_laptop_mode_get_active (p) ? "on" : "off");
  g_print ("Mode:                %s (%s)\n", safe_mode, safe_reason);
  g_print ("Power:               %s (from %s)\n",
           lm_exported_laptop_mode_get_on_battery (p) ? "battery" : "AC", source ? source : "?");
  print_inhibitors (lm_exported_laptop_mode_get_inhibitors (p));
  g_print ("Engine:              %s (tunables via %s)\n", safe_engine, safe_backend);
  g_print ("Max lost work:       %u s\n", lm_exported_laptop_mode_get_max_lost_work (p));
  g_print ("Flush delay:         %u s after disk activity\n",
           lm_exported_laptop_mode_get_laptop_mode_seconds (p));
  g_print ("Dirty ratio:         %u %% (background %u %%)\n",
           lm_exported_laptop_mode_get_dirty_ratio (p),
           lm_exported_laptop_mode_get_dirty_background_ratio (p));
  if (lm_exported_laptop_mode_get_remount (p))
    {
      g_autofree char *list = safe_list (lm_exported_laptop_mode_get_remount_types (p));
      g_print ("Remount:             %s with commit=%u while on\n", *list ? list : "(no types)",
               lm_exported_laptop_mode_get_max_lost_work (p));
    }
  else
    g_print ("Remount:             off\n");
  const char *const *no = lm_exported_laptop_mode_get_no_remount (p);
  if (no != NULL && no[0] != NULL)
    {
      g_autofree char *list = safe_list (no);
      g_print ("Never remounted:     %s\n", list);
    }
  print_remounted (lm_exported_laptop_mode_get_remounted (p));
  lm_ctl_print_conflicts (lm_exported_laptop_mode_get_conflicts (p),
                          lm_exported_laptop_mode_get_conflict_writers (p));
  g_print ("Daemon version:      %s\n", safe_version);
  return EXIT_SUCCESS;
}
