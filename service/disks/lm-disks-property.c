/* lm-disks-property.c: the Disks property, each disk's counters, the
 * settings applied to it and what sysfs holds; reads, never changes. */
#include "config.h"

#include "lm-disks.h"
#include "lm-disks-private.h"

#include <string.h>

#include "lm-ata.h"

void
lm_disks_set_describe_func (LmDisks *self, LmDisksDescribeFunc func, gpointer user_data)
{
  self->describe_func = func;
  self->describe_data = user_data;
}

static GVariant *
disk_to_variant (LmDisks *self, LmDisk *d)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  gint64 now = g_get_monotonic_time ();
  double hours = (double) (now - d->start_mono) / (3600.0 * G_USEC_PER_SEC);
  const char *state = d->ata ? lm_ata_power_to_string (d->power) : "unknown";

  lm_disk_account (d, now);
  g_variant_builder_add (&b, "{sv}", "Id", g_variant_new_string (d->id));
  g_variant_builder_add (&b, "{sv}", "Model", g_variant_new_string (d->model));
  g_variant_builder_add (&b, "{sv}", "Rotational", g_variant_new_boolean (d->rotational));
  g_variant_builder_add (&b, "{sv}", "Removable", g_variant_new_boolean (d->removable));
  g_variant_builder_add (&b, "{sv}", "Ata", g_variant_new_boolean (d->ata));
  g_variant_builder_add (&b, "{sv}", "Excluded", g_variant_new_boolean (d->excluded));
  g_variant_builder_add (&b, "{sv}", "State", g_variant_new_string (state));
  g_variant_builder_add (&b, "{sv}", "Asleep", g_variant_new_boolean (d->asleep));
  g_variant_builder_add (&b, "{sv}", "Inferred", g_variant_new_boolean (!d->ata));
  g_variant_builder_add (&b, "{sv}", "Since", g_variant_new_int64 (d->since_real));
  /* The counts below run to now: a reader adds the time since this, not
   * since Since (the property is sent again without a change of state). */
  g_variant_builder_add (&b, "{sv}", "CountedUntil", g_variant_new_int64 (g_get_real_time ()));
  g_variant_builder_add (&b, "{sv}", "ActiveSeconds",
                         g_variant_new_uint64 (d->active_us / G_USEC_PER_SEC));
  g_variant_builder_add (&b, "{sv}", "StandbySeconds",
                         g_variant_new_uint64 (d->standby_us / G_USEC_PER_SEC));
  g_variant_builder_add (&b, "{sv}", "Transitions", g_variant_new_uint32 (d->transitions));
  g_variant_builder_add (&b, "{sv}", "SpinUps", g_variant_new_uint32 (d->spinups));
  g_variant_builder_add (&b, "{sv}", "SpinUpsPerHour",
                         g_variant_new_double (hours > 0 ? d->spinups / hours : 0.0));
  if (d->applied_standby >= 0)
    {
      g_autofree char *text = lm_ata_standby_describe ((guint8) d->applied_standby);
      g_variant_builder_add (&b, "{sv}", "StandbyTimer", g_variant_new_string (text));
    }
  if (d->applied_apm >= 0)
    g_variant_builder_add (&b, "{sv}", "APM", g_variant_new_uint32 ((guint) d->applied_apm));
  if (d->applied_readahead >= 0)
    g_variant_builder_add (&b, "{sv}", "ReadaheadKiB",
                           g_variant_new_uint32 ((guint) d->applied_readahead));
  if (d->error != NULL)
    g_variant_builder_add (&b, "{sv}", "Error", g_variant_new_string (d->error));
  if (!d->excluded && self->describe_func != NULL)
    self->describe_func (d->name, &b, self->describe_data);
  if (d->nvme != NULL)
    lm_disk_nvme_add_props (d->nvme, &b);
  if (d->smart != NULL)
    lm_disk_smart_add_props (d->smart, &b);
  return g_variant_builder_end (&b);
}

/* Counters are as of the last state change; a reader adds the time since
 * Since to the current state. So the property changes on state changes,
 * not on every tick. */
void
lm_disks_publish (LmDisks *self)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a{sa{sv}}"));
  g_autoptr (GList) names
      = g_list_sort (g_hash_table_get_keys (self->disks), (GCompareFunc) strcmp);

  for (GList *l = names; l != NULL; l = l->next)
    g_variant_builder_add (&b, "{s@a{sv}}", (const char *) l->data,
                           disk_to_variant (self, g_hash_table_lookup (self->disks, l->data)));
  self->publish (g_variant_builder_end (&b), self->publish_data);
}
