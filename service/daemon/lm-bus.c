/* lm-bus.c: the daemon's connection to the bus, read through a guard.
 * GDBus reads a whole message into one buffer it never shrinks and parses
 * it on the one worker thread all connections share, one GVariant per
 * value, before any handler runs: a caller's 30 MiB Configure() would cost
 * a third of a second with every other call queued behind it, and keep
 * 30 MiB resident for good. And a message GDBus cannot decode (dbus-daemon
 * lets through some that GLib 2.74 refuses, e.g. a body of type aa{yg})
 * makes GDBus close the whole connection: any local user could stop the
 * daemon with one unicast signal. The guard reads each message's fixed
 * header first: one larger than LM_LIMIT_MESSAGE is discarded as it
 * arrives, without being kept; any other is read whole, its values counted
 * if it is larger than WALK_FROM, and then decoded by GDBus's own decoder:
 * only a message that decodes is handed on. A refused call is answered
 * with InvalidArgs. The guard must never hand GDBus a partial message, nor
 * change one it lets through. The connection carries no file descriptors
 * (GDBus passes them only on a socket it reads itself). */
#include "config.h"

#include "lm-bus.h"

#include <string.h>
#include <unistd.h>

#include "lm-dbus-wire.h"
#include "lm-limits.h"
#include "lm-names.h"

#define DBUS_METHOD_CALL 1
#define DBUS_NO_REPLY_EXPECTED 0x1
#define WALK_FROM (64 * 1024) /* smaller messages cost GDBus little however made */
#define WALK_BUDGET 8192      /* values; the largest call within the bounds has ~5000 */
#define FIELDS_KEPT 4096      /* of a refused message: enough to find its sender */
#define SCRATCH (256 * 1024)

/* Why a message was refused. */
typedef enum
{
  WHY_SIZE,   /* larger than LM_LIMIT_MESSAGE */
  WHY_VALUES, /* more than WALK_BUDGET values */
  WHY_DECODE, /* GDBus cannot decode it */
} Why;

#define LM_TYPE_GUARD_INPUT (lm_guard_input_get_type ())
G_DECLARE_FINAL_TYPE (LmGuardInput, lm_guard_input, LM, GUARD_INPUT, GFilterInputStream)

struct _LmGuardInput
{
  GFilterInputStream parent_instance;

  guint8 header[FIXED_HEADER]; /* the fixed header of the message being read */
  gsize header_have;           /* bytes of it read */
  gsize header_out;            /* bytes of it handed on (FIXED_HEADER: none pending) */
  guint64 pass;                /* bytes after the header of a message let through */
  guint64 drop;                /* bytes after the header of a refused message */
  guint8 *whole;               /* a message, read whole to be judged */
  gsize whole_size;
  gsize whole_have; /* bytes read into it */
  gsize whole_out;  /* bytes of it handed on, once let through */

  /* The refused message, for the reply. */
  guint64 refused_size;
  int refused_why;      /* Why */
  char *refused_detail; /* GDBus's reason, bounded, for the log */
  guint32 refused_serial;
  gboolean refused_wants_reply;
  gboolean little_endian;
  guint8 fields[FIELDS_KEPT];
  gsize fields_have;
  gsize fields_want;

  guint8 *scratch;
  GMainContext *context; /* where replies are sent from */
  GWeakRef connection;
};

G_DEFINE_TYPE (LmGuardInput, lm_guard_input, G_TYPE_FILTER_INPUT_STREAM)

typedef struct
{
  GDBusConnection *connection;
  char *sender;
  guint32 serial;
  guint64 size;
  Why why;
  char *detail;
} Refusal;

static gboolean
send_refusal (gpointer user_data)
{
  Refusal *r = user_data;
  g_autoptr (GDBusMessage) reply = g_dbus_message_new ();
  g_autoptr (GError) error = NULL;

  g_autofree char *text = NULL;

  if (r->why == WHY_VALUES)
    text = g_strdup_printf ("The call holds more than %d values; a message to laptop-moded "
                            "larger than %d bytes holds at most %d",
                            WALK_BUDGET, WALK_FROM, WALK_BUDGET);
  else if (r->why == WHY_DECODE)
    text = g_strdup ("The call cannot be decoded (its body does not match its signature as "
                     "GDBus reads it)");
  else
    text = g_strdup_printf ("The call is %" G_GUINT64_FORMAT " bytes long; a message to "
                            "laptop-moded is at most %d bytes (2 MiB)",
                            r->size, LM_LIMIT_MESSAGE);
  g_message ("Refused a %" G_GUINT64_FORMAT "-byte call from %s: %s%s%s", r->size, r->sender, text,
             r->detail != NULL ? ": " : "", r->detail != NULL ? r->detail : "");
  g_dbus_message_set_message_type (reply, G_DBUS_MESSAGE_TYPE_ERROR);
  g_dbus_message_set_flags (reply, G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED);
  g_dbus_message_set_reply_serial (reply, r->serial);
  g_dbus_message_set_destination (reply, r->sender);
  g_dbus_message_set_error_name (reply, LM_ERROR_NAME_INVALID_ARGS);
  g_dbus_message_set_body (reply, g_variant_new ("(s)", text));
  if (!g_dbus_connection_send_message (r->connection, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, NULL,
                                       &error))
    g_debug ("Cannot refuse a call: %s", error->message);
  g_object_unref (r->connection);
  g_free (r->sender);
  g_free (r->detail);
  g_free (r);
  return G_SOURCE_REMOVE;
}

/* Called on the reading thread once a refused message is gone. */
static void
refused (LmGuardInput *self)
{
  g_autofree char *sender
      = lm_wire_find_sender (self->fields, self->fields_have, self->little_endian);
  g_autoptr (GDBusConnection) connection = g_weak_ref_get (&self->connection);

  if (!self->refused_wants_reply || sender == NULL || connection == NULL)
    {
      g_autofree char *from = sender != NULL ? g_strdup (sender) : g_strdup ("an unknown sender");

      if (self->refused_why == WHY_SIZE)
        g_message ("Dropped a %" G_GUINT64_FORMAT "-byte message from %s unread (at most %d "
                   "bytes)",
                   self->refused_size, from, LM_LIMIT_MESSAGE);
      else if (self->refused_why == WHY_VALUES)
        g_message ("Dropped a %" G_GUINT64_FORMAT "-byte message from %s: more than %d values",
                   self->refused_size, from, WALK_BUDGET);
      else
        g_message ("Dropped a %" G_GUINT64_FORMAT "-byte message from %s: it cannot be decoded: "
                   "%s",
                   self->refused_size, from, self->refused_detail);
      return;
    }
  Refusal *r = g_new0 (Refusal, 1);
  r->connection = g_steal_pointer (&connection);
  r->sender = g_steal_pointer (&sender);
  r->serial = self->refused_serial;
  r->size = self->refused_size;
  r->why = (Why) self->refused_why;
  r->detail = g_strdup (self->refused_detail);
  g_main_context_invoke (self->context, send_refusal, r);
}

static void judge_whole (LmGuardInput *self);

/* A new message's fixed header is complete: let it through or refuse it. */
static void
judge (LmGuardInput *self)
{
  const guint8 *h = self->header;
  gboolean little = h[0] == 'l';
  guint64 fields = lm_wire_u32 (h + 12, little);
  guint64 total = FIXED_HEADER + ((fields + 7) & ~(guint64) 7) + lm_wire_u32 (h + 4, little);

  self->header_have = 0;
  /* Not D-Bus at all: GDBus reports the broken stream and closes it. */
  if (h[0] != 'l' && h[0] != 'B')
    {
      self->header_out = 0;
      self->pass = total - FIXED_HEADER;
      return;
    }
  self->refused_size = total;
  self->refused_why = WHY_SIZE;
  g_clear_pointer (&self->refused_detail, g_free);
  self->refused_serial = lm_wire_u32 (h + 8, little);
  self->refused_wants_reply = h[1] == DBUS_METHOD_CALL && !(h[2] & DBUS_NO_REPLY_EXPECTED);
  self->little_endian = little;
  if (total <= LM_LIMIT_MESSAGE)
    {
      self->whole = g_malloc (total);
      self->whole_size = total;
      memcpy (self->whole, h, FIXED_HEADER);
      self->whole_have = FIXED_HEADER;
      self->whole_out = total; /* nothing to hand on until it is judged */
      if (total == FIXED_HEADER)
        judge_whole (self);
      return;
    }
  g_debug ("Discarding a %" G_GUINT64_FORMAT "-byte message as it arrives", total);
  self->drop = total - FIXED_HEADER;
  self->fields_have = 0;
  self->fields_want = MIN (fields, FIELDS_KEPT);
}

/* A message is all read: let it through if its values are few (when it is
 * large) and GDBus can decode it, which costs a small one little. GDBus
 * decodes it once more when it reads it: the guard hands on the bytes, not
 * its own GDBusMessage, so that nothing it lets through is changed. */
static void
judge_whole (LmGuardInput *self)
{
  guint32 fields = lm_wire_u32 (self->whole + 12, self->little_endian);
  g_autoptr (GError) error = NULL;
  g_autoptr (GDBusMessage) decoded = NULL;

  self->refused_why = WHY_VALUES;
  if (FIXED_HEADER + (gsize) fields <= self->whole_size
      && (self->whole_size <= WALK_FROM
          || lm_wire_few_values (self->whole, self->whole_size, self->little_endian, WALK_BUDGET)))
    {
      self->refused_why = WHY_DECODE;
      decoded = g_dbus_message_new_from_blob (self->whole, self->whole_size,
                                              G_DBUS_CAPABILITY_FLAGS_NONE, &error);
      if (decoded != NULL)
        {
          self->whole_out = 0;
          return;
        }
      /* GDBus's reason may quote the signature: bounded and escaped. */
      g_free (self->refused_detail);
      self->refused_detail = lm_limits_escape (error->message);
    }
  self->fields_have = MIN ((gsize) fields, MIN (FIELDS_KEPT, self->whole_size - FIXED_HEADER));
  memcpy (self->fields, self->whole + FIXED_HEADER, self->fields_have);
  g_clear_pointer (&self->whole, g_free);
  refused (self);
}

static gssize
lm_guard_input_read (GInputStream *stream, void *buffer, gsize count, GCancellable *cancellable,
                     GError **error)
{
  LmGuardInput *self = LM_GUARD_INPUT (stream);
  GInputStream *base = g_filter_input_stream_get_base_stream (G_FILTER_INPUT_STREAM (stream));

  for (;;)
    {
      if (self->header_out < FIXED_HEADER)
        {
          gsize n = MIN (count, FIXED_HEADER - self->header_out);
          memcpy (buffer, self->header + self->header_out, n);
          self->header_out += n;
          return (gssize) n;
        }
      if (self->whole != NULL && self->whole_have < self->whole_size)
        {
          gssize n = g_input_stream_read (base, self->whole + self->whole_have,
                                          self->whole_size - self->whole_have, cancellable, error);
          if (n <= 0)
            return n;
          self->whole_have += (gsize) n;
          if (self->whole_have == self->whole_size)
            judge_whole (self);
          continue;
        }
      if (self->whole != NULL)
        {
          gsize n = MIN (count, self->whole_size - self->whole_out);
          memcpy (buffer, self->whole + self->whole_out, n);
          self->whole_out += n;
          if (self->whole_out == self->whole_size)
            g_clear_pointer (&self->whole, g_free);
          return (gssize) n;
        }
      if (self->pass > 0)
        {
          gssize n
              = g_input_stream_read (base, buffer, MIN (count, self->pass), cancellable, error);
          if (n > 0)
            self->pass -= (guint64) n;
          return n;
        }
      if (self->drop > 0)
        {
          gssize n = g_input_stream_read (base, self->scratch, MIN (SCRATCH, self->drop),
                                          cancellable, error);
          if (n <= 0)
            return n;
          if (self->fields_have < self->fields_want)
            {
              gsize keep = MIN ((gsize) n, self->fields_want - self->fields_have);
              memcpy (self->fields + self->fields_have, self->scratch, keep);
              self->fields_have += keep;
            }
          self->drop -= (guint64) n;
          if (self->drop == 0)
            refused (self);
          continue;
        }
      gssize n = g_input_stream_read (base, self->header + self->header_have,
                                      FIXED_HEADER - self->header_have, cancellable, error);
      if (n <= 0)
        return n;
      self->header_have += (gsize) n;
      if (self->header_have == FIXED_HEADER)
        judge (self);
    }
}

static void
lm_guard_input_finalize (GObject *object)
{
  LmGuardInput *self = LM_GUARD_INPUT (object);

  g_free (self->scratch);
  g_free (self->whole);
  g_free (self->refused_detail);
  g_weak_ref_clear (&self->connection);
  g_main_context_unref (self->context);
  G_OBJECT_CLASS (lm_guard_input_parent_class)->finalize (object);
}

static void
lm_guard_input_class_init (LmGuardInputClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = lm_guard_input_finalize;
  G_INPUT_STREAM_CLASS (klass)->read_fn = lm_guard_input_read;
}

static void
lm_guard_input_init (LmGuardInput *self)
{
  self->header_out = FIXED_HEADER;
  self->scratch = g_malloc (SCRATCH);
  self->context = g_main_context_ref_thread_default ();
  g_weak_ref_init (&self->connection, NULL);
}

/* The output side as it is, but not a GSocketOutputStream: GDBus writes
 * those through the socket of a GSocketConnection, which this is not. */
#define LM_TYPE_PLAIN_OUTPUT (lm_plain_output_get_type ())
G_DECLARE_FINAL_TYPE (LmPlainOutput, lm_plain_output, LM, PLAIN_OUTPUT, GFilterOutputStream)

struct _LmPlainOutput
{
  GFilterOutputStream parent_instance;
};

G_DEFINE_TYPE (LmPlainOutput, lm_plain_output, G_TYPE_FILTER_OUTPUT_STREAM)

static void
lm_plain_output_class_init (LmPlainOutputClass *klass)
{
}

static void
lm_plain_output_init (LmPlainOutput *self)
{
}

/* Read one line of the authentication exchange, byte by byte: nothing
 * after it may be taken from the socket before GDBus reads. */
static char *
read_line (GInputStream *in, GError **error)
{
  g_autoptr (GString) line = g_string_new (NULL);

  while (line->len < 1024)
    {
      char c;
      if (g_input_stream_read (in, &c, 1, NULL, error) != 1)
        {
          if (error != NULL && *error == NULL)
            g_set_error (error, G_IO_ERROR, G_IO_ERROR_CLOSED, "The bus closed the connection");
          return NULL;
        }
      if (c == '\n')
        {
          if (line->len > 0 && line->str[line->len - 1] == '\r')
            g_string_truncate (line, line->len - 1);
          return g_string_free (g_steal_pointer (&line), FALSE);
        }
      g_string_append_c (line, c);
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "The bus sent an overlong line");
  return NULL;
}

/* SASL EXTERNAL as the bus specification has it: the guard then sees only
 * messages. The bus takes our uid from the socket's credentials. */
static gboolean
authenticate (GIOStream *stream, GError **error)
{
  GOutputStream *out = g_io_stream_get_output_stream (stream);
  g_autofree char *uid = g_strdup_printf ("%u", (guint) geteuid ());
  g_autoptr (GString) hello = g_string_new_len ("\0AUTH EXTERNAL ", 15);

  for (const char *p = uid; *p; p++)
    g_string_append_printf (hello, "%02x", (guchar) *p);
  g_string_append (hello, "\r\n");
  if (!g_output_stream_write_all (out, hello->str, hello->len, NULL, NULL, error))
    return FALSE;
  g_autofree char *answer = read_line (g_io_stream_get_input_stream (stream), error);
  if (answer == NULL)
    return FALSE;
  if (!g_str_has_prefix (answer, "OK "))
    {
      g_autofree char *escaped = lm_limits_escape (answer);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "The bus refused authentication: %s", escaped);
      return FALSE;
    }
  return g_output_stream_write_all (out, "BEGIN\r\n", 7, NULL, NULL, error);
}

GDBusConnection *
lm_bus_connect (GBusType type, GError **error)
{
  g_autofree char *address = g_dbus_address_get_for_bus_sync (type, NULL, error);
  if (address == NULL)
    return NULL;
  g_autoptr (GIOStream) base = g_dbus_address_get_stream_sync (address, NULL, NULL, error);
  if (base == NULL)
    return NULL;
  if (!authenticate (base, error))
    return NULL;

  g_autoptr (LmGuardInput) in = g_object_new (LM_TYPE_GUARD_INPUT, "base-stream",
                                              g_io_stream_get_input_stream (base), NULL);
  g_autoptr (LmPlainOutput) out = g_object_new (LM_TYPE_PLAIN_OUTPUT, "base-stream",
                                                g_io_stream_get_output_stream (base), NULL);
  g_autoptr (GIOStream) guarded
      = g_simple_io_stream_new (G_INPUT_STREAM (in), G_OUTPUT_STREAM (out));
  /* The socket lives as long as the streams that use it. */
  g_object_set_data_full (G_OBJECT (guarded), "lm-base", g_object_ref (base), g_object_unref);

  GDBusConnection *connection = g_dbus_connection_new_sync (
      guarded, NULL, G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL, NULL, error);
  if (connection != NULL)
    {
      g_weak_ref_set (&in->connection, connection);
      g_object_set_data_full (G_OBJECT (connection), "lm-bus-address", g_steal_pointer (&address),
                              g_free);
    }
  return connection;
}

const char *
lm_bus_get_address (GDBusConnection *connection)
{
  return g_object_get_data (G_OBJECT (connection), "lm-bus-address");
}
