/* lm-inhibitors.c: holds that keep laptop mode off.
 * Each hold belongs to the bus connection that took it and ends when that
 * connection leaves the bus, so a crashed backup script cannot leave laptop
 * mode off forever. Cookies come from the kernel's random source so one
 * client cannot guess and release another's hold. Also owns the quiet
 * period after the last hold (lm-inhibitors.h) and the log of holders:
 * each holder once, repeats summed up, never a line per hold. A hold
 * lasts as long as its reason: when logind says sessions changed, each
 * holder is asked of polkit again, and one no longer allowed (its session
 * closed or went inactive) loses its holds, told by HoldDropped. */
#include "lm-inhibitors.h"

#include <string.h>
#include <sys/random.h>

#include "lm-auth.h"
#include "lm-error.h"
#include "lm-limits.h"
#include "lm-logind.h"
#include "lm-names.h"

typedef struct
{
  guint32 cookie;
  char *sender;
  guint32 uid;
  char *application;
  char *reason;
  guint watch;
  gint64 since; /* monotonic µs: a hold counts once it has lasted the settle time */
} LmInhibitor;

struct _LmInhibitors
{
  GDBusConnection *bus;
  GPtrArray *holds; /* LmInhibitor, in the order taken */
  LmInhibitorsFunc changed;
  gpointer user_data;
  gint64 quiet_us;           /* the quiet period now */
  gint64 last_change;        /* monotonic µs a hold last came or went; 0: never */
  GHashTable *holders;       /* "uid:application" → repeats not yet logged */
  guint others;              /* holds by holders past LM_HOLD_HOLDERS_LOGGED */
  LmLogind *logind;          /* from the first hold on: sessions changed */
  GCancellable *cancellable; /* re-checks in flight */
};

static void
inhibitor_free (LmInhibitor *inh)
{
  g_clear_handle_id (&inh->watch, g_bus_unwatch_name);
  g_free (inh->sender);
  g_free (inh->application);
  g_free (inh->reason);
  g_free (inh);
}

LmInhibitors *
lm_inhibitors_new (GDBusConnection *bus, LmInhibitorsFunc changed, gpointer user_data)
{
  LmInhibitors *self = g_new0 (LmInhibitors, 1);

  self->bus = bus != NULL ? g_object_ref (bus) : NULL;
  self->holds = g_ptr_array_new_with_free_func ((GDestroyNotify) inhibitor_free);
  self->changed = changed;
  self->user_data = user_data;
  self->quiet_us = LM_HOLD_QUIET_MIN_MS * G_TIME_SPAN_MILLISECOND;
  self->holders = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->cancellable = g_cancellable_new ();
  return self;
}

void
lm_inhibitors_free (LmInhibitors *self)
{
  if (self == NULL)
    return;
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->logind, lm_logind_free);
  g_ptr_array_unref (self->holds);
  g_hash_table_unref (self->holders);
  g_clear_object (&self->bus);
  g_free (self);
}

/* Embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069):
 * shown by the tray, GNOME and the CLI, they would reorder the text
 * around them ("backup" that reads as something else). */
static gboolean
bidi_control (gunichar c)
{
  return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

static gboolean
printable (const char *s)
{
  for (const char *p = s; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      if (g_unichar_iscntrl (c) || bidi_control (c))
        return FALSE;
    }
  return TRUE;
}

/* One string's bounds: bytes first (strnlen reads at most the bound, so a
 * 30 MiB argument costs no more than a short one), then characters. D-Bus
 * strings are UTF-8 already; the check stays for callers from C. */
static gboolean
valid_text (const char *text, int max_chars)
{
  gsize max_bytes = LM_LIMIT_UTF8_BYTES (max_chars);
  gsize n = strnlen (text, max_bytes + 1);

  return n > 0 && n <= max_bytes && g_utf8_validate (text, n, NULL)
         && g_utf8_strlen (text, n) <= max_chars && printable (text);
}

gboolean
lm_inhibitors_validate (const char *application, const char *reason, GError **error)
{
  if (!valid_text (application, LM_LIMIT_APPLICATION))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "Application must be 1 to %d printable characters of UTF-8 (no "
                   "bidirectional overrides)",
                   LM_LIMIT_APPLICATION);
      return FALSE;
    }
  if (!valid_text (reason, LM_LIMIT_REASON))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "Reason must be 1 to %d printable characters of UTF-8 (no bidirectional "
                   "overrides)",
                   LM_LIMIT_REASON);
      return FALSE;
    }
  return TRUE;
}

static LmInhibitor *
find (LmInhibitors *self, guint32 cookie, guint *index)
{
  for (guint i = 0; i < self->holds->len; i++)
    {
      LmInhibitor *inh = g_ptr_array_index (self->holds, i);
      if (inh->cookie == cookie)
        {
          *index = i;
          return inh;
        }
    }
  return NULL;
}

static void
notify (LmInhibitors *self)
{
  if (self->changed != NULL)
    self->changed (self, self->user_data);
}

static void
holder_vanished (GDBusConnection *bus, const char *name, gpointer user_data)
{
  LmInhibitors *self = user_data;
  gboolean removed = FALSE;

  for (guint i = self->holds->len; i > 0; i--)
    {
      LmInhibitor *inh = g_ptr_array_index (self->holds, i - 1);
      if (g_str_equal (inh->sender, name))
        {
          g_debug ("%s (%s) left the bus; its hold on laptop mode is released", inh->application,
                   name);
          g_ptr_array_remove_index (self->holds, i - 1);
          removed = TRUE;
        }
    }
  if (removed)
    {
      self->last_change = g_get_monotonic_time ();
      notify (self);
    }
}

/* --- re-checks ---------------------------------------------------------- */

typedef struct
{
  LmInhibitors *self;
  char *sender;
} LmHoldRecheck;

static void
hold_recheck_free (gpointer data)
{
  LmHoldRecheck *r = data;

  g_free (r->sender);
  g_free (r);
}

static void
hold_rechecked (LmAuthVerdict verdict, const LmAuthViewer *viewer, const char *why,
                gpointer user_data)
{
  LmHoldRecheck *r = user_data;
  LmInhibitors *self = r->self;
  gboolean removed = FALSE;

  /* No answer is not a refusal (polkitd restarting, too many checks):
   * the holds stay, as subscriptions do. */
  if (verdict != LM_AUTH_DENIED)
    {
      if (verdict != LM_AUTH_ALLOWED)
        g_message ("Holder %s: %s; its holds stay", r->sender, why);
      return;
    }
  g_autofree char *reason = g_strdup_printf (
      "No longer authorized to hold laptop mode off after a session change: %s", why);
  for (guint i = self->holds->len; i > 0; i--)
    {
      LmInhibitor *inh = g_ptr_array_index (self->holds, i - 1);
      g_autoptr (GError) error = NULL;
      if (!g_str_equal (inh->sender, r->sender))
        continue;
      g_message ("Dropped the hold of %s (%s, uid %u, \"%s\"): %s", inh->application, inh->sender,
                 inh->uid, inh->reason, why);
      if (!g_dbus_connection_emit_signal (self->bus, inh->sender, LM_OBJECT_PATH, LM_INTERFACE,
                                          "HoldDropped",
                                          g_variant_new ("(us)", inh->cookie, reason), &error))
        g_debug ("Cannot send HoldDropped to %s: %s", inh->sender, error->message);
      g_ptr_array_remove_index (self->holds, i - 1);
      removed = TRUE;
    }
  if (removed)
    {
      self->last_change = g_get_monotonic_time ();
      notify (self);
    }
}

/* Sessions or seats changed: each holder's inhibit action is asked again,
 * without interaction and without the call's details (as Release). */
static void
on_sessions_changed (gpointer user_data)
{
  LmInhibitors *self = user_data;
  g_autoptr (GHashTable) asked = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < self->holds->len; i++)
    {
      LmInhibitor *inh = g_ptr_array_index (self->holds, i);
      if (!g_hash_table_add (asked, inh->sender))
        continue;
      LmHoldRecheck *r = g_new0 (LmHoldRecheck, 1);
      r->self = self;
      r->sender = g_strdup (inh->sender);
      lm_auth_recheck (self->bus, inh->sender, "Release", self->cancellable, hold_rechecked, r,
                       hold_recheck_free);
    }
  if (g_hash_table_size (asked) > 0)
    g_debug ("Sessions changed; checking %u holders again", g_hash_table_size (asked));
}

static guint32
new_cookie (LmInhibitors *self)
{
  for (;;)
    {
      guint32 cookie;
      guint unused;
      if (getrandom (&cookie, sizeof cookie, 0) != sizeof cookie)
        cookie = g_random_int ();
      if (cookie != 0 && find (self, cookie, &unused) == NULL)
        return cookie;
    }
}

/* A hold came at @now: the quiet period grows fourfold when the previous hold
 * came or went within LM_HOLD_QUIET_RESET_MS, else it starts over (and so
 * does the log of holders). */
static void
grow_quiet (LmInhibitors *self, gint64 now)
{
  gint64 max_us = (gint64) LM_HOLD_QUIET_MAX_MS * G_TIME_SPAN_MILLISECOND;

  if (self->last_change != 0
      && now - self->last_change < (gint64) LM_HOLD_QUIET_RESET_MS * G_TIME_SPAN_MILLISECOND)
    self->quiet_us = MIN (self->quiet_us * LM_HOLD_QUIET_GROWTH, max_us);
  else
    {
      lm_inhibitors_summarise (self);
      g_hash_table_remove_all (self->holders);
      self->quiet_us = LM_HOLD_QUIET_MIN_MS * G_TIME_SPAN_MILLISECOND;
    }
  self->last_change = now;
}

/* The first hold of a holder is logged; later ones are counted. */
static void
log_holder (LmInhibitors *self, guint32 uid, const char *application, const char *reason)
{
  g_autofree char *key = g_strdup_printf ("%u:%s", uid, application);
  gpointer repeats;

  if (g_hash_table_lookup_extended (self->holders, key, NULL, &repeats))
    {
      g_hash_table_insert (self->holders, g_steal_pointer (&key),
                           GUINT_TO_POINTER (GPOINTER_TO_UINT (repeats) + 1));
      return;
    }
  if (g_hash_table_size (self->holders) >= LM_HOLD_HOLDERS_LOGGED)
    {
      self->others++;
      return;
    }
  g_hash_table_insert (self->holders, g_steal_pointer (&key), GUINT_TO_POINTER (0));
  g_message ("%s (uid %u) holds laptop mode off: %s (further holds of it are counted, not "
             "logged)",
             application, uid, reason);
}

void
lm_inhibitors_summarise (LmInhibitors *self)
{
  GHashTableIter iter;
  gpointer key, repeats;

  g_hash_table_iter_init (&iter, self->holders);
  while (g_hash_table_iter_next (&iter, &key, &repeats))
    {
      const char *colon = strchr (key, ':');
      if (GPOINTER_TO_UINT (repeats) == 0)
        continue;
      g_message ("%s (uid %.*s) took %u more holds on laptop mode", colon + 1,
                 (int) (colon - (const char *) key), (const char *) key,
                 GPOINTER_TO_UINT (repeats));
      g_hash_table_iter_replace (&iter, GUINT_TO_POINTER (0));
    }
  if (self->others > 0)
    g_message ("%u more holds on laptop mode by other holders", self->others);
  self->others = 0;
}

gint64
lm_inhibitors_quiet_until (LmInhibitors *self)
{
  if (self->holds->len > 0 || self->last_change == 0)
    return 0;
  return self->last_change + self->quiet_us;
}

gint64
lm_inhibitors_quiet_ms (LmInhibitors *self)
{
  return self->quiet_us / G_TIME_SPAN_MILLISECOND;
}

gboolean
lm_inhibitors_add (LmInhibitors *self, const char *sender, guint32 uid, const char *application,
                   const char *reason, guint32 *cookie, GError **error)
{
  guint mine = 0, users = 0;

  if (!lm_inhibitors_validate (application, reason, error))
    return FALSE;
  /* At most LM_INHIBITORS_MAX holds: a linear count is bounded. */
  for (guint i = 0; i < self->holds->len; i++)
    {
      LmInhibitor *inh = g_ptr_array_index (self->holds, i);
      mine += g_str_equal (inh->sender, sender);
      users += inh->uid == uid;
    }
  if (mine >= LM_INHIBITORS_PER_CLIENT)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED,
                   "Too many holds: a client may hold at most %d; release one first",
                   LM_INHIBITORS_PER_CLIENT);
      return FALSE;
    }
  /* Else one user with many connections could take all LM_INHIBITORS_MAX
   * and lock everyone else out of holding laptop mode off. */
  if (users >= LM_INHIBITORS_PER_UID)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED,
                   "Too many holds: one user may hold at most %d, on all connections; release "
                   "one first",
                   LM_INHIBITORS_PER_UID);
      return FALSE;
    }
  if (self->holds->len >= LM_INHIBITORS_MAX)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_FAILED,
                   "Too many holds on laptop mode in all (%d); try again later", LM_INHIBITORS_MAX);
      return FALSE;
    }

  LmInhibitor *inh = g_new0 (LmInhibitor, 1);
  inh->cookie = new_cookie (self);
  inh->sender = g_strdup (sender);
  inh->uid = uid;
  inh->application = g_strdup (application);
  inh->reason = g_strdup (reason);
  inh->since = g_get_monotonic_time ();
  grow_quiet (self, inh->since);
  if (self->bus != NULL)
    inh->watch = g_bus_watch_name_on_connection (self->bus, sender, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                 NULL, holder_vanished, self, NULL);
  if (self->bus != NULL && self->logind == NULL)
    self->logind = lm_logind_new (self->bus, on_sessions_changed, self);
  g_ptr_array_add (self->holds, inh);
  *cookie = inh->cookie;
  log_holder (self, uid, application, reason);
  notify (self);
  return TRUE;
}

gboolean
lm_inhibitors_release (LmInhibitors *self, const char *sender, guint32 cookie, GError **error)
{
  guint index;
  LmInhibitor *inh = find (self, cookie, &index);

  /* The same answer for "no such cookie" and "not yours": no probing. */
  if (inh == NULL || !g_str_equal (inh->sender, sender))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_INVALID_ARGS,
                   "No hold with cookie %u was taken by this connection", cookie);
      return FALSE;
    }
  g_ptr_array_remove_index (self->holds, index);
  self->last_change = g_get_monotonic_time ();
  notify (self);
  return TRUE;
}

/* Holds that have lasted @settle_us by @now; *@next_due is when the next
 * younger one will have (0 when there is none), for the caller to look
 * again then. A hold released sooner was never counted: no remount for it. */
guint
lm_inhibitors_count_settled (LmInhibitors *self, gint64 now, gint64 settle_us, gint64 *next_due)
{
  guint n = 0;

  *next_due = 0;
  for (guint i = 0; i < self->holds->len; i++)
    {
      LmInhibitor *inh = g_ptr_array_index (self->holds, i);
      gint64 due = inh->since + settle_us;

      if (due <= now)
        n++;
      else if (*next_due == 0 || due < *next_due)
        *next_due = due;
    }
  return n;
}

GVariant *
lm_inhibitors_to_variant (LmInhibitors *self)
{
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(ssu)"));
  for (guint i = 0; i < self->holds->len; i++)
    {
      LmInhibitor *inh = g_ptr_array_index (self->holds, i);
      g_variant_builder_add (&b, "(ssu)", inh->application, inh->reason, inh->uid);
    }
  return g_variant_builder_end (&b);
}
