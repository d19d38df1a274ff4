/* fuzz-wire.c: what the bus guard reads of a message before GDBus does
 * (lm-dbus-wire.c), from bytes any local user can send. Reads must stay
 * inside the buffer (ASan), and a message the value count lets through
 * must not hold more values when GDBus decodes it. */
#include "lm-dbus-wire.h"
#include "lm-fuzz.h"

#include <gio/gio.h>

/* Every value in @v, containers included, as the guard counts them. */
static guint
count_values (GVariant *v, guint limit)
{
  guint n = 1;

  if (g_variant_is_container (v))
    for (gsize i = 0; i < g_variant_n_children (v) && n <= limit; i++)
      {
        g_autoptr (GVariant) child = g_variant_get_child_value (v, i);
        n += count_values (child, limit);
      }
  return n;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* An exact-size copy: ASan sees any read past the end. */
  g_autofree guint8 *msg = g_memdup2 (data, size);
  gboolean little = size > 0 && msg[0] == 'l';

  /* Header fields alone, of any length. */
  g_free (lm_wire_find_field (msg, size, little, DBUS_FIELD_SIGNATURE));
  char *sender = lm_wire_find_sender (msg, size, little);
  LM_FUZZ_CHECK (sender == NULL || g_dbus_is_unique_name (sender));
  g_free (sender);

  /* A whole message, as the guard holds it: the total length its fixed
   * header gives must be the buffer's, and the fields must fit. */
  if (size < FIXED_HEADER)
    return 0;
  guint64 fields = lm_wire_u32 (msg + 12, little);
  guint64 total = FIXED_HEADER + ((fields + 7) & ~(guint64) 7) + lm_wire_u32 (msg + 4, little);
  if (total != size)
    return 0;
  gboolean few = lm_wire_few_values (msg, size, little, 64);
  g_autoptr (GDBusMessage) m = g_dbus_message_new_from_blob (msg, size, 0, NULL);
  GVariant *body = m != NULL ? g_dbus_message_get_body (m) : NULL;
  /* Let through as few: GDBus must not find more values than the budget
   * (the body's tuple itself is not one the guard counts). The guard may
   * refuse more than GDBus would (odd header fields): that is safe. */
  if (few && body != NULL)
    LM_FUZZ_CHECK (count_values (body, 1000) - 1 <= 64);
  return 0;
}
