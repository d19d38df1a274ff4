/* lm-tray-settings.c: the tray's own per-user settings file.
 * Owns $XDG_CONFIG_HOME/laptop-mode-tray/settings.ini; never holds anything
 * of laptop-moded's configuration, which is the daemon's. */
#include "lm-tray-settings.h"

#include <errno.h>

#include <glib/gstdio.h>

#define GROUP "Tray"
#define KEY_NOTIFY "NotifySpinUps"

static char *
settings_dir (void)
{
  return g_build_filename (g_get_user_config_dir (), "laptop-mode-tray", NULL);
}

static char *
settings_path (void)
{
  g_autofree char *dir = settings_dir ();

  return g_build_filename (dir, "settings.ini", NULL);
}

/* A missing or broken file means defaults, never a failure to start. */
static GKeyFile *
load (void)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *path = settings_path ();
  g_autoptr (GError) error = NULL;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_KEEP_COMMENTS, &error)
      && !g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    g_warning ("Ignoring %s: %s", path, error->message);
  return g_steal_pointer (&kf);
}

gboolean
lm_tray_settings_get_notify (void)
{
  g_autoptr (GKeyFile) kf = load ();
  g_autoptr (GError) error = NULL;
  gboolean notify = g_key_file_get_boolean (kf, GROUP, KEY_NOTIFY, &error);

  return error != NULL ? TRUE : notify;
}

gboolean
lm_tray_settings_set_notify (gboolean notify, GError **error)
{
  g_autoptr (GKeyFile) kf = load ();
  g_autofree char *dir = settings_dir ();
  g_autofree char *path = settings_path ();

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "Cannot create %s: %s",
                   dir, g_strerror (saved));
      return FALSE;
    }
  g_key_file_set_boolean (kf, GROUP, KEY_NOTIFY, notify);
  /* g_key_file_save_to_file() writes a temporary file and renames it. */
  return g_key_file_save_to_file (kf, path, error);
}
