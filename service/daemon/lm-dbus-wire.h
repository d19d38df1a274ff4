/* lm-dbus-wire.h: the few parts of the D-Bus wire format the bus guard
 * reads before GDBus does (header fields, how many values a body holds). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define FIXED_HEADER 16 /* endianness, type, flags, version, body length, serial, fields length */
#define DBUS_FIELD_SENDER 7
#define DBUS_FIELD_SIGNATURE 8

guint32 lm_wire_u32 (const guint8 *p, gboolean little);
/* A string-typed header field @wanted from the header fields @f (@len
 * bytes); NULL when absent or when the fields are not well formed. */
char *lm_wire_find_field (const guint8 *f, gsize len, gboolean little, guint8 wanted);
/* The SENDER field when it is a unique name (the bus sets it). */
char *lm_wire_find_sender (const guint8 *f, gsize len, gboolean little);
/* Whether the body of the whole message @msg (@total bytes, its fixed
 * header's fields length already checked against @total) holds at most
 * @budget values. */
gboolean lm_wire_few_values (const guint8 *msg, gsize total, gboolean little, guint budget);

G_END_DECLS
