/* lm-spinup-monitor.c: spin-up monitoring: which backend, when it runs, and the
 * last spin-ups. The bpf backend (its filter runs in the kernel) runs all
 * the time; the others only while they have readers (subscribers on the
 * bus, daemon/lm-spinup-dbus.c) or SpinUpHistory asks for it. Never
 * touches D-Bus: the records and the backend chosen go up through funcs. */
#include "config.h"

#include "lm-spinup-monitor.h"

#include "lm-advice.h"
#include "lm-attrib.h"
#include "lm-error.h"

#define HISTORY_MAX 256

struct _LmSpinupMonitor
{
  LmState *state;                 /* not owned */
  const LmAttribBackend *backend; /* chosen; NULL for none */
  char *why_none;                 /* what the probes said, for Subscribe's error */
  char *setting;                  /* the Attribution setting it was chosen for */
  guint idle_s;
  gboolean history_wanted;
  guint readers; /* subscribers on the bus */
  LmAttrib *running;
  GQueue history;             /* GVariant a{sv}, oldest first */
  const LmAdvice *advice;     /* the table of known causes, not owned; may be NULL */
  LmSpinupWakeFunc wake_func; /* the disks' accounting */
  gpointer wake_data;
  LmSpinUpFunc record_func; /* the ledger */
  gpointer record_data;
  LmActivityFunc activity_func; /* the ledger */
  gpointer activity_data;
  LmSpinupMonitorFunc monitor_func; /* the disks: no re-check while event-driven */
  gpointer monitor_data;
  LmSpinupPublishFunc publish_func; /* the subscribers */
  gpointer publish_data;
  LmSpinupBackendFunc backend_func; /* the Attribution properties */
  gpointer backend_data;
};

static void
tell_monitoring (LmSpinupMonitor *self)
{
  if (self->monitor_func != NULL)
    self->monitor_func (self->running != NULL && self->backend->event_driven, self->monitor_data);
}

static GVariant *
spinup_to_variant (const LmSpinUp *s, const char *backend)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

  g_variant_builder_add (&b, "{sv}", "Disk", g_variant_new_string (s->disk));
  g_variant_builder_add (&b, "{sv}", "Time", g_variant_new_int64 (s->time_us));
  g_variant_builder_add (&b, "{sv}", "Pid", g_variant_new_uint32 (s->pid));
  /* Task names are bytes; D-Bus strings must be UTF-8. */
  g_autofree char *comm = g_utf8_make_valid (s->comm, -1);
  g_autofree char *submitter = g_utf8_make_valid (s->submitter_comm, -1);
  g_variant_builder_add (&b, "{sv}", "Comm", g_variant_new_string (comm));
  if (s->thread[0] != '\0')
    {
      g_autofree char *thread = g_utf8_make_valid (s->thread, -1);
      g_variant_builder_add (&b, "{sv}", "Thread", g_variant_new_string (thread));
    }
  if (s->unit[0] != '\0')
    {
      g_autofree char *unit = g_utf8_make_valid (s->unit, -1);
      g_variant_builder_add (&b, "{sv}", "Unit", g_variant_new_string (unit));
    }
  if (s->note[0] != '\0')
    g_variant_builder_add (&b, "{sv}", "Note", g_variant_new_string (s->note));
  if (s->uid >= 0)
    g_variant_builder_add (&b, "{sv}", "Uid", g_variant_new_uint32 ((guint32) s->uid));
  g_variant_builder_add (&b, "{sv}", "Operation",
                         g_variant_new_string (s->write ? "write" : "read"));
  g_variant_builder_add (&b, "{sv}", "Sector", g_variant_new_uint64 (s->sector));
  if (s->inode != 0)
    g_variant_builder_add (&b, "{sv}", "Inode", g_variant_new_uint64 (s->inode));
  if (s->path[0] != '\0')
    {
      g_autofree char *path = g_utf8_make_valid (s->path, -1);
      g_variant_builder_add (&b, "{sv}", "Path", g_variant_new_string (path));
    }
  g_variant_builder_add (&b, "{sv}", "Via", g_variant_new_string (lm_via_to_string (s->via)));
  g_variant_builder_add (&b, "{sv}", "SubmitterPid", g_variant_new_uint32 (s->submitter_pid));
  g_variant_builder_add (&b, "{sv}", "SubmitterComm", g_variant_new_string (submitter));
  g_variant_builder_add (&b, "{sv}", "Backend", g_variant_new_string (backend));
  return g_variant_ref_sink (g_variant_builder_end (&b));
}

static gboolean
same_string (GVariant *a, GVariant *b, const char *key)
{
  const char *x = NULL, *y = NULL;

  g_variant_lookup (a, key, "&s", &x);
  g_variant_lookup (b, key, "&s", &y);
  return g_strcmp0 (x, y) == 0;
}

/* @v with its Explanation (the table's sentence), the rhythm taken from
 * the history's spin-ups of the same program, how and unit. */
static GVariant *
explained (LmSpinupMonitor *self, GVariant *v)
{
  g_autoptr (GArray) times = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 t = 0;
  LmRhythm rhythm;

  if (self->advice == NULL)
    return g_variant_ref (v);
  for (GList *l = self->history.head; l != NULL; l = l->next)
    if (same_string (l->data, v, "Comm") && same_string (l->data, v, "Via")
        && same_string (l->data, v, "Unit") && same_string (l->data, v, "Disk")
        && g_variant_lookup (l->data, "Time", "x", &t))
      g_array_append_val (times, t);
  if (g_variant_lookup (v, "Time", "x", &t))
    g_array_append_val (times, t);
  lm_rhythm_find ((const gint64 *) times->data, times->len, NULL, &rhythm);
  g_autofree char *what
      = lm_advice_explain (self->advice, v, rhythm.kind == LM_RHYTHM_TOO_FEW ? NULL : &rhythm);
  return what != NULL ? lm_advice_variant_with (v, "Explanation", what) : g_variant_ref (v);
}

void
lm_spinup_monitor_set_advice (LmSpinupMonitor *self, const LmAdvice *advice)
{
  self->advice = advice;
}

/* @wake: tell the disks (not for the daemon's own: they counted it). */
static void
report (LmSpinupMonitor *self, const LmSpinUp *s, gboolean wake)
{
  g_autoptr (GVariant) bare = spinup_to_variant (s, self->backend->name);
  g_autoptr (GVariant) v = explained (self, bare);

  g_debug ("Spin-up of %s by %s[%u] (%s)", s->disk, s->comm, s->pid, lm_via_to_string (s->via));
  if (wake && self->wake_func != NULL)
    self->wake_func (s->disk, s->quiet_since_us, self->wake_data);
  if (self->record_func != NULL)
    self->record_func (s, self->record_data);
  g_queue_push_tail (&self->history, g_variant_ref (v));
  while (self->history.length > HISTORY_MAX)
    g_variant_unref (g_queue_pop_head (&self->history));
  if (self->publish_func != NULL)
    self->publish_func (v, self->publish_data);
}

static void
on_spinup (const LmSpinUp *s, gpointer user_data)
{
  report (user_data, s, TRUE);
}

gboolean
lm_spinup_monitor_last_io (const char *disk, gint64 *mono_us, gpointer user_data)
{
  LmSpinupMonitor *self = user_data;

  return self->running != NULL && self->backend->last_io != NULL
         && self->backend->last_io (self->running, disk, mono_us);
}

void
lm_spinup_monitor_own_command (LmSpinupMonitor *self, const char *disk, const char *command,
                               gint64 time_us)
{
  LmSpinUp s;

  if (self->running == NULL)
    return;
  if (self->backend->own_io != NULL)
    self->backend->own_io (self->running, disk);
  lm_attrib_own_spinup (&s, disk, command, time_us);
  report (self, &s, FALSE);
}

static void
stop_monitoring (LmSpinupMonitor *self)
{
  if (self->running == NULL)
    return;
  self->backend->stop (g_steal_pointer (&self->running));
  g_message ("Spin-up monitoring stopped (%s)", self->backend->name);
  tell_monitoring (self);
}

gboolean
lm_spinup_monitor_start_monitoring (LmSpinupMonitor *self, GError **error)
{
  if (self->running != NULL)
    return TRUE;
  if (self->backend == NULL)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED, "No spin-up attribution here: %s",
                   self->why_none);
      return FALSE;
    }
  LmAttribConfig config = {
    .func = on_spinup,
    .user_data = self,
    .idle_ms = self->idle_s * 1000,
    .state = self->state,
    .activity_func = self->activity_func,
    .activity_data = self->activity_data,
  };
  self->running = self->backend->start (&config, error);
  if (self->running == NULL)
    return FALSE;
  g_message ("Spin-up monitoring started (%s, disks idle after %u s%s)", self->backend->name,
             self->idle_s, self->backend->event_driven ? ", always on" : "");
  tell_monitoring (self);
  return TRUE;
}

/* tracefs and block_dump copy every I/O to user space: run them only while
 * they have a reader. The bpf backend filters in the kernel and wakes the
 * daemon only for a spin-up, which costs less than the disks' periodic
 * re-check it replaces: it runs all the time, for the ledger. */
static void
lm_spinup_monitor_update_monitoring (LmSpinupMonitor *self)
{
  g_autoptr (GError) error = NULL;

  if (self->readers == 0 && !self->history_wanted
      && (self->backend == NULL || !self->backend->event_driven))
    stop_monitoring (self);
  else if (!lm_spinup_monitor_start_monitoring (self, &error))
    g_warning ("Cannot monitor spin-ups: %s", error->message);
}

/* --- life cycle -------------------------------------------------------- */

LmSpinupMonitor *
lm_spinup_monitor_new (LmState *state)
{
  LmSpinupMonitor *self = g_new0 (LmSpinupMonitor, 1);

  self->state = state;
  g_queue_init (&self->history);
  return self;
}

/* Choose the backend for @settings; a running one is restarted when the
 * backend or the idle time changed. */
void
lm_spinup_monitor_configure (LmSpinupMonitor *self, const LmSettings *settings)
{
  gboolean same = g_strcmp0 (self->setting, settings->attribution) == 0
                  && self->idle_s == settings->spinup_idle;

  self->history_wanted = settings->spinup_history;
  if (!same)
    {
      g_autoptr (GError) error = NULL;

      stop_monitoring (self);
      g_free (self->setting);
      self->setting = g_strdup (settings->attribution);
      self->idle_s = settings->spinup_idle;
      self->backend = lm_attrib_choose (settings->attribution, &error);
      g_free (self->why_none);
      self->why_none = error != NULL ? g_strdup (error->message)
                                     : g_strdup ("the Attribution setting is “none”");
      if (self->backend == NULL)
        g_message ("No spin-up attribution: %s", self->why_none);
      else
        g_message ("Spin-up attribution backend %s", self->backend->name);
      g_autofree char *note = lm_attrib_note (self->backend);
      if (*note != '\0')
        g_warning ("%s", note);
      if (self->backend_func != NULL)
        self->backend_func (self->backend ? self->backend->name : "none", note, self->backend_data);
    }
  lm_spinup_monitor_update_monitoring (self);
}

void
lm_spinup_monitor_shutdown (LmSpinupMonitor *self)
{
  self->readers = 0;
  stop_monitoring (self);
}

void
lm_spinup_monitor_free (LmSpinupMonitor *self)
{
  if (self == NULL)
    return;
  lm_spinup_monitor_shutdown (self);
  g_queue_clear_full (&self->history, (GDestroyNotify) g_variant_unref);
  g_free (self->setting);
  g_free (self->why_none);
  g_free (self);
}

void
lm_spinup_monitor_set_wake_func (LmSpinupMonitor *self, LmSpinupWakeFunc func, gpointer user_data)
{
  self->wake_func = func;
  self->wake_data = user_data;
}

void
lm_spinup_monitor_add_recovery (LmJournalRecovery *recovery)
{
  lm_attrib_add_recovery (recovery);
}

void
lm_spinup_monitor_set_record_func (LmSpinupMonitor *self, LmSpinUpFunc func, gpointer user_data)
{
  self->record_func = func;
  self->record_data = user_data;
}

void
lm_spinup_monitor_set_activity_func (LmSpinupMonitor *self, LmActivityFunc func, gpointer user_data)
{
  self->activity_func = func;
  self->activity_data = user_data;
}

void
lm_spinup_monitor_set_monitor_func (LmSpinupMonitor *self, LmSpinupMonitorFunc func,
                                    gpointer user_data)
{
  self->monitor_func = func;
  self->monitor_data = user_data;
  tell_monitoring (self);
}

void
lm_spinup_monitor_drain (gpointer user_data)
{
  LmSpinupMonitor *self = user_data;

  if (self->running != NULL && self->backend->drain != NULL)
    self->backend->drain (self->running);
}

void
lm_spinup_monitor_set_publish_func (LmSpinupMonitor *self, LmSpinupPublishFunc func,
                                    gpointer user_data)
{
  self->publish_func = func;
  self->publish_data = user_data;
}

void
lm_spinup_monitor_set_backend_func (LmSpinupMonitor *self, LmSpinupBackendFunc func,
                                    gpointer user_data)
{
  self->backend_func = func;
  self->backend_data = user_data;
}

void
lm_spinup_monitor_set_readers (LmSpinupMonitor *self, guint readers)
{
  self->readers = readers;
  lm_spinup_monitor_update_monitoring (self);
}

const GList *
lm_spinup_monitor_history (LmSpinupMonitor *self)
{
  return self->history.head;
}
