/* lm-disk-nvme.c: an NVMe disk's power states and APST, read through
 * lm-nvme-admin.c in a worker thread right after the disk monitor saw I/O
 * (the drive is awake anyway), cached and shown in Disks. It never sends a
 * command to a drive that may be asleep, nor from the main loop. */
#include "lm-disk-nvme.h"

#include <gio/gio.h>
#include <string.h>

#include "lm-nvme-admin.h"
#include "lm-paths.h"

struct _LmDiskNvme
{
  char *disk;
  char *controller;     /* /dev/nvmeN under the root */
  char *runtime_status; /* the controller's PCI function power/runtime_status */
  GFunc publish;
  gpointer publish_data;
  GCancellable *cancel; /* cancelled when the disk goes */
  gboolean busy;
  gint64 last_mono;
  gint64 read_real; /* when the current state was read, µs since the epoch */
  LmNvmeReading reading;
  char *error;
  guint reads;
};

/* Reads that finished after their disk was gone (tests). */
static guint dropped;

typedef struct
{
  char *controller;
  LmNvmeReading reading;
  GError *error;
} Job;

static void
job_free (Job *job)
{
  g_free (job->controller);
  g_clear_error (&job->error);
  g_free (job);
}

gboolean
lm_nvme_refresh_due (const LmNvmeDue *due)
{
  if (due->excluded || due->busy || !due->io_seen || due->runtime_suspended)
    return FALSE;
  if (!due->have_identify || due->last_mono == 0)
    return TRUE;
  return due->now_mono - due->last_mono >= (gint64) LM_NVME_REFRESH_S * G_USEC_PER_SEC;
}

static void
nvme_clear (gpointer data)
{
  LmDiskNvme *self = data;

  g_free (self->disk);
  g_free (self->controller);
  g_free (self->runtime_status);
  g_free (self->error);
  g_clear_object (&self->cancel);
}

LmDiskNvme *
lm_disk_nvme_new (const char *disk, GFunc publish, gpointer user_data)
{
  g_autofree char *controller = lm_nvme_admin_controller (disk);

  if (controller == NULL)
    return NULL;
  LmDiskNvme *self = g_atomic_rc_box_new0 (LmDiskNvme);
  g_autofree char *base = g_path_get_basename (controller);
  g_autofree char *status
      = g_strconcat ("/sys/class/nvme/", base, "/device/power/runtime_status", NULL);

  self->disk = g_strdup (disk);
  self->controller = g_steal_pointer (&controller);
  self->runtime_status = lm_path (status);
  self->publish = publish;
  self->publish_data = user_data;
  self->cancel = g_cancellable_new ();
  g_message ("Disk %s: NVMe controller %s", disk, self->controller);
  return self;
}

void
lm_disk_nvme_free (LmDiskNvme *self)
{
  if (self == NULL)
    return;
  /* A read in flight still holds a reference; it sees the cancellation and
   * touches nothing of the disk. */
  g_cancellable_cancel (self->cancel);
  self->publish = NULL;
  g_atomic_rc_box_release_full (self, nvme_clear);
}

static void
read_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancel)
{
  Job *job = task_data;

  lm_nvme_admin_read (job->controller, &job->reading, &job->error);
  g_task_return_boolean (task, TRUE);
}

static void
read_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LmDiskNvme *self = user_data;
  Job *job = g_task_get_task_data (G_TASK (result));

  if (g_cancellable_is_cancelled (self->cancel))
    {
      dropped++;
      g_atomic_rc_box_release_full (self, nvme_clear);
      return;
    }
  self->busy = FALSE;
  gboolean had_state = self->reading.have_state;
  guint old_state = self->reading.state;
  self->reading = job->reading;
  /* A failed refresh keeps the last state read, with its time. */
  if (!self->reading.have_state && had_state)
    {
      self->reading.have_state = TRUE;
      self->reading.state = old_state;
    }
  else if (job->reading.have_state)
    self->read_real = g_get_real_time ();
  /* Logged once per new reason, not at every refresh. */
  const char *message = job->error != NULL ? job->error->message : NULL;
  if (message != NULL && g_strcmp0 (message, self->error) != 0)
    g_warning ("Disk %s: %s", self->disk, message);
  g_free (self->error);
  self->error = g_strdup (message);
  if (self->publish != NULL)
    self->publish (self->disk, self->publish_data);
  g_atomic_rc_box_release_full (self, nvme_clear);
}

static gboolean
runtime_suspended (LmDiskNvme *self)
{
  g_autofree char *status = NULL;

  if (!g_file_get_contents (self->runtime_status, &status, NULL, NULL))
    return FALSE;
  return g_str_has_prefix (status, "suspend"); /* "suspended", "suspending" */
}

void
lm_disk_nvme_io_seen (LmDiskNvme *self, gboolean excluded)
{
  LmNvmeDue due = {
    .io_seen = TRUE,
    .excluded = excluded,
    .busy = self->busy,
    .have_identify = self->reading.have_identify,
    .last_mono = self->last_mono,
    .now_mono = g_get_monotonic_time (),
  };

  if (!lm_nvme_refresh_due (&due))
    return;
  due.runtime_suspended = runtime_suspended (self);
  if (!lm_nvme_refresh_due (&due))
    return;
  Job *job = g_new0 (Job, 1);
  job->controller = g_strdup (self->controller);
  job->reading = self->reading; /* Identify, when read, is not asked again */
  self->busy = TRUE;
  self->last_mono = due.now_mono;
  self->reads++;
  g_autoptr (GTask) task = g_task_new (NULL, NULL, read_done, g_atomic_rc_box_acquire (self));
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  g_task_set_name (task, "nvme-admin-read");
  g_task_run_in_thread (task, read_thread);
}

guint
lm_disk_nvme_dropped_reads (void)
{
  return dropped;
}

guint
lm_disk_nvme_reads (LmDiskNvme *self)
{
  return self->reads;
}

void
lm_nvme_reading_add_props (const LmNvmeReading *reading, GVariantBuilder *b)
{
  const LmNvmeIdentify *id = &reading->identify;

  if (!reading->have_identify)
    return;
  g_auto (GVariantBuilder) states = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));
  for (guint i = 0; i < id->n_states; i++)
    {
      const LmNvmePowerState *ps = &id->states[i];
      g_variant_builder_open (&states, G_VARIANT_TYPE_VARDICT);
      g_variant_builder_add (&states, "{sv}", "State", g_variant_new_uint32 (i));
      g_variant_builder_add (&states, "{sv}", "MaxPowerW",
                             g_variant_new_double (ps->max_power_uw / 1e6));
      g_variant_builder_add (&states, "{sv}", "EntryLatencyUs",
                             g_variant_new_uint32 (ps->entry_lat_us));
      g_variant_builder_add (&states, "{sv}", "ExitLatencyUs",
                             g_variant_new_uint32 (ps->exit_lat_us));
      g_variant_builder_add (&states, "{sv}", "Operational",
                             g_variant_new_boolean (ps->operational));
      if (ps->have_idle_power)
        g_variant_builder_add (&states, "{sv}", "IdlePowerW",
                               g_variant_new_double (ps->idle_power_uw / 1e6));
      if (ps->have_active_power)
        g_variant_builder_add (&states, "{sv}", "ActivePowerW",
                               g_variant_new_double (ps->active_power_uw / 1e6));
      g_variant_builder_close (&states);
    }
  g_variant_builder_add (b, "{sv}", "NvmePowerStates", g_variant_builder_end (&states));
  g_variant_builder_add (b, "{sv}", "NvmeApstSupported",
                         g_variant_new_boolean (id->apst_supported));
  if (reading->have_apst)
    {
      g_auto (GVariantBuilder) table = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(uu)"));
      /* Entry N is what state N goes to; states past NPSS do not exist. */
      for (guint i = 0; i < id->n_states; i++)
        g_variant_builder_add (&table, "(uu)", reading->apst.entries[i].idle_ms,
                               reading->apst.entries[i].target);
      g_variant_builder_add (b, "{sv}", "NvmeApst", g_variant_new_boolean (reading->apst.enabled));
      g_variant_builder_add (b, "{sv}", "NvmeApstTable", g_variant_builder_end (&table));
    }
  if (reading->have_state)
    g_variant_builder_add (b, "{sv}", "NvmePowerState", g_variant_new_uint32 (reading->state));
}

void
lm_disk_nvme_add_props (LmDiskNvme *self, GVariantBuilder *b)
{
  g_variant_builder_add (b, "{sv}", "NvmeController", g_variant_new_string (self->controller));
  if (self->error != NULL)
    g_variant_builder_add (b, "{sv}", "NvmeError", g_variant_new_string (self->error));
  lm_nvme_reading_add_props (&self->reading, b);
  if (self->reading.have_identify && self->reading.have_state)
    g_variant_builder_add (b, "{sv}", "NvmePowerStateRead", g_variant_new_int64 (self->read_real));
}
