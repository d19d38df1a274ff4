/* lm-ledger-record.c: encoding and parsing of ledger records. A pure
 * function of its bytes (fuzzed by tests/fuzz/fuzz-ledger.c); never does I/O. */
#define _GNU_SOURCE /* memmem */
#include "config.h"

#include "lm-ledger-record.h"

#include <string.h>

/* CRC-32 (IEEE 802.3, reflected 0xEDB88320), as zlib's crc32(); this file
 * has no other reason to link zlib. The table is what zlib's make_crc_table()
 * computes (test-ledger checks crc32("123456789") = 0xCBF43926). */
static const guint32 crc_table[256] = {
  0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu, 0xe963a535u,
  0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u, 0x09b64c2bu, 0x7eb17cbdu,
  0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u, 0xf3b97148u, 0x84be41deu, 0x1adad47du,
  0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u, 0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu,
  0x14015c4fu, 0x63066cd9u, 0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u,
  0xa2677172u, 0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
  0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u, 0x26d930acu,
  0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u, 0xcfba9599u, 0xb8bda50fu,
  0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u, 0x2f6f7c87u, 0x58684c11u, 0xc1611dabu,
  0xb6662d3du, 0x76dc4190u, 0x01db7106u, 0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu,
  0x9fbfe4a5u, 0xe8b8d433u, 0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu,
  0x086d3d2du, 0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
  0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u, 0x8bbeb8eau,
  0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u, 0x4db26158u, 0x3ab551ceu,
  0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u, 0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au,
  0x346ed9fcu, 0xad678846u, 0xda60b8d0u, 0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u,
  0x5005713cu, 0x270241aau, 0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u,
  0xce61e49fu, 0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
  0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au, 0xead54739u,
  0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u, 0x0d6d6a3eu, 0x7a6a5aa8u,
  0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u, 0xf00f9344u, 0x8708a3d2u, 0x1e01f268u,
  0x6906c2feu, 0xf762575du, 0x806567cbu, 0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u,
  0x10da7a5au, 0x67dd4accu, 0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u,
  0xa1d1937eu, 0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
  0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u, 0x316e8eefu,
  0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u, 0xcc0c7795u, 0xbb0b4703u,
  0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u, 0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u,
  0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du, 0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au,
  0x9c0906a9u, 0xeb0e363fu, 0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu,
  0x0cb61b38u, 0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
  0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u, 0x88085ae6u,
  0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u, 0x616bffd3u, 0x166ccf45u,
  0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u, 0xa7672661u, 0xd06016f7u, 0x4969474du,
  0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu, 0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u,
  0x47b2cf7fu, 0x30b5ffe9u, 0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u,
  0xcdd70693u, 0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
  0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

guint32
lm_ledger_crc32 (const guint8 *data, gsize length)
{
  guint32 crc = 0xFFFFFFFFu;

  for (gsize i = 0; i < length; i++)
    crc = crc_table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

static void
put_u16 (guint8 *p, guint16 v)
{
  v = GUINT16_TO_LE (v);
  memcpy (p, &v, 2);
}

static void
put_u32 (guint8 *p, guint32 v)
{
  v = GUINT32_TO_LE (v);
  memcpy (p, &v, 4);
}

static void
put_u64 (guint8 *p, guint64 v)
{
  v = GUINT64_TO_LE (v);
  memcpy (p, &v, 8);
}

static guint16
get_u16 (const guint8 *p)
{
  guint16 v;
  memcpy (&v, p, 2);
  return GUINT16_FROM_LE (v);
}

static guint32
get_u32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, 4);
  return GUINT32_FROM_LE (v);
}

static guint64
get_u64 (const guint8 *p)
{
  guint64 v;
  memcpy (&v, p, 8);
  return GUINT64_FROM_LE (v);
}

/* Payload: kind u8, via u8, disk length u8, comm length u8, path length
 * u16, extension length u16, time i64, end i64, pid u32, uid i64, flushed
 * u32, then the extension, then the disk, comm and path bytes, no NULs. All
 * little-endian. The extension was a reserved 0 in the first files, so they
 * still parse: it is 0 for intervals, 16 for activity (reads u32, writes
 * u32, dirtied u32, the filesystems dirtied u32; 12 without them: in
 * files written before, and where none was seen), 16 for wear (load cycles, start/stop count, power
 * cycles, power-on hours: u32 each), 4 for a deferred run (why its wait
 * ended: u32) and, for a spin-up, the thread's name (0 to 15 bytes, no NUL;
 * 0 when the process's name says it all), then, where its unit is known, a
 * NUL and the unit's name (1 to 127 bytes, no NUL). */
static gsize
extension_size (const LmLedgerRecord *r)
{
  if (r->kind == LM_LEDGER_SPINUP)
    {
      gsize unit = strnlen (r->unit, sizeof r->unit - 1);
      return strnlen (r->thread, sizeof r->thread - 1) + (unit > 0 ? 1 + unit : 0);
    }
  /* Activity without filesystems in the older shape: one encoding per
   * record, so a file's records read back to their very bytes. */
  if (r->kind == LM_LEDGER_ACTIVITY && r->fs == 0)
    return LM_LEDGER_ACTIVITY_EXT_V1;
  if (r->kind == LM_LEDGER_ACTIVITY && r->spells_known)
    return LM_LEDGER_ACTIVITY_EXT_SPELLS;
  return r->kind == LM_LEDGER_ACTIVITY   ? LM_LEDGER_ACTIVITY_EXT
         : r->kind == LM_LEDGER_WEAR     ? LM_LEDGER_WEAR_EXT
         : r->kind == LM_LEDGER_DEFERRED ? LM_LEDGER_DEFERRED_EXT
                                         : 0;
}

static gboolean
extension_valid (guint kind, gsize ext)
{
  if (kind == LM_LEDGER_SPINUP)
    return ext <= LM_LEDGER_SPINUP_EXT;
  if (kind == LM_LEDGER_ACTIVITY
      && (ext == LM_LEDGER_ACTIVITY_EXT_V1 || ext == LM_LEDGER_ACTIVITY_EXT_SPELLS))
    return TRUE;
  return ext
         == (kind == LM_LEDGER_ACTIVITY   ? LM_LEDGER_ACTIVITY_EXT
             : kind == LM_LEDGER_WEAR     ? LM_LEDGER_WEAR_EXT
             : kind == LM_LEDGER_DEFERRED ? LM_LEDGER_DEFERRED_EXT
                                          : 0);
}

void
lm_ledger_record_encode (const LmLedgerRecord *r, GByteArray *out)
{
  gsize disk_len = strnlen (r->disk, sizeof r->disk - 1);
  gsize comm_len = strnlen (r->comm, sizeof r->comm - 1);
  gsize path_len = strnlen (r->path, sizeof r->path - 1);
  gsize ext = extension_size (r);
  gsize payload = LM_LEDGER_FIXED_SIZE + ext + disk_len + comm_len + path_len;
  guint8 buf[LM_LEDGER_MAX_RECORD];
  guint8 *p = buf + LM_LEDGER_HEADER_SIZE;

  memset (buf, 0, sizeof buf);
  memcpy (buf, LM_LEDGER_MAGIC, 4);
  put_u32 (buf + 4, (guint32) payload);
  p[0] = (guint8) r->kind;
  p[1] = (guint8) r->via;
  p[2] = (guint8) disk_len;
  p[3] = (guint8) comm_len;
  put_u16 (p + 4, (guint16) path_len);
  put_u16 (p + 6, (guint16) ext);
  put_u64 (p + 8, (guint64) r->time_us);
  put_u64 (p + 16, (guint64) r->end_us);
  put_u32 (p + 24, r->pid);
  put_u64 (p + 28, (guint64) r->uid);
  put_u32 (p + 36, r->flushed);
  p += LM_LEDGER_FIXED_SIZE;
  if (r->kind == LM_LEDGER_SPINUP)
    {
      gsize thread = strnlen (r->thread, sizeof r->thread - 1);
      memcpy (p, r->thread, thread);
      if (ext > thread)
        {
          p[thread] = '\0';
          memcpy (p + thread + 1, r->unit, ext - thread - 1);
        }
    }
  else if (r->kind == LM_LEDGER_ACTIVITY)
    {
      put_u32 (p, r->reads);
      put_u32 (p + 4, r->writes);
      put_u32 (p + 8, r->dirtied);
      put_u32 (p + 12, r->fs);
      if (ext >= LM_LEDGER_ACTIVITY_EXT_SPELLS)
        put_u32 (p + 16, r->spells);
    }
  else if (r->kind == LM_LEDGER_WEAR)
    {
      put_u32 (p, r->load_cycles);
      put_u32 (p + 4, r->start_stop);
      put_u32 (p + 8, r->power_cycles);
      put_u32 (p + 12, r->power_on_hours);
    }
  else if (r->kind == LM_LEDGER_DEFERRED)
    put_u32 (p, (guint32) r->reason);
  p += ext;
  memcpy (p, r->disk, disk_len);
  memcpy (p + disk_len, r->comm, comm_len);
  memcpy (p + disk_len + comm_len, r->path, path_len);
  put_u32 (buf + 8, lm_ledger_crc32 (buf + LM_LEDGER_HEADER_SIZE, payload));
  g_byte_array_append (out, buf, LM_LEDGER_HEADER_SIZE + payload);
}

static gboolean
copy_string (char *dst, gsize dst_size, const guint8 *src, gsize len)
{
  if (len >= dst_size || memchr (src, '\0', len) != NULL)
    return FALSE;
  memcpy (dst, src, len);
  dst[len] = '\0';
  return TRUE;
}

gssize
lm_ledger_record_decode (const guint8 *data, gsize length, LmLedgerRecord *out)
{
  LmLedgerRecord r = { 0 };

  if (length < 4)
    return memcmp (data, LM_LEDGER_MAGIC, length) == 0 ? 0 : -1;
  if (memcmp (data, LM_LEDGER_MAGIC, 4) != 0)
    return -1;
  if (length < LM_LEDGER_HEADER_SIZE)
    return 0;
  guint32 payload = get_u32 (data + 4);
  if (payload < LM_LEDGER_FIXED_SIZE || payload > LM_LEDGER_MAX_RECORD - LM_LEDGER_HEADER_SIZE)
    return -1;
  if (length - LM_LEDGER_HEADER_SIZE < payload)
    return 0;
  const guint8 *p = data + LM_LEDGER_HEADER_SIZE;
  if (lm_ledger_crc32 (p, payload) != get_u32 (data + 8))
    return -1;

  gsize disk_len = p[2], comm_len = p[3], path_len = get_u16 (p + 4), ext = get_u16 (p + 6);
  if (p[0] < LM_LEDGER_SPINUP || p[0] > LM_LEDGER_DEFERRED || p[1] > LM_VIA_PASSTHROUGH)
    return -1;
  if (!extension_valid (p[0], ext)
      || LM_LEDGER_FIXED_SIZE + ext + disk_len + comm_len + path_len != payload)
    return -1;
  r.kind = p[0];
  r.via = p[1];
  r.time_us = (gint64) get_u64 (p + 8);
  r.end_us = (gint64) get_u64 (p + 16);
  r.pid = get_u32 (p + 24);
  r.uid = (gint64) get_u64 (p + 28);
  r.flushed = get_u32 (p + 36);
  if (r.end_us < r.time_us || disk_len == 0)
    return -1;
  p += LM_LEDGER_FIXED_SIZE;
  if (r.kind == LM_LEDGER_SPINUP)
    {
      /* The thread, then a NUL and a unit that is never empty: one
       * encoding per record. */
      const guint8 *nul = memchr (p, '\0', ext);
      gsize thread = nul != NULL ? (gsize) (nul - p) : ext;
      if (!copy_string (r.thread, sizeof r.thread, p, thread))
        return -1;
      if (nul != NULL
          && (ext - thread - 1 == 0
              || !copy_string (r.unit, sizeof r.unit, nul + 1, ext - thread - 1)))
        return -1;
    }
  else if (r.kind == LM_LEDGER_ACTIVITY)
    {
      r.reads = get_u32 (p);
      r.writes = get_u32 (p + 4);
      r.dirtied = get_u32 (p + 8);
      r.fs = ext >= LM_LEDGER_ACTIVITY_EXT ? get_u32 (p + 12) : 0;
      if (ext >= LM_LEDGER_ACTIVITY_EXT && r.fs == 0)
        return -1; /* written in the older shape, never so */
      r.spells_known = ext >= LM_LEDGER_ACTIVITY_EXT_SPELLS;
      r.spells = r.spells_known ? get_u32 (p + 16) : 0;
    }
  else if (r.kind == LM_LEDGER_WEAR)
    {
      r.load_cycles = get_u32 (p);
      r.start_stop = get_u32 (p + 4);
      r.power_cycles = get_u32 (p + 8);
      r.power_on_hours = get_u32 (p + 12);
    }
  else if (r.kind == LM_LEDGER_DEFERRED)
    {
      guint32 reason = get_u32 (p);
      if (reason > LM_LEDGER_REASON_DISABLED)
        return -1;
      r.reason = (LmLedgerReason) reason;
    }
  p += ext;
  if (!copy_string (r.disk, sizeof r.disk, p, disk_len)
      || !copy_string (r.comm, sizeof r.comm, p + disk_len, comm_len)
      || !copy_string (r.path, sizeof r.path, p + disk_len + comm_len, path_len))
    return -1;
  if (out != NULL)
    *out = r;
  return LM_LEDGER_HEADER_SIZE + payload;
}

guint
lm_ledger_parse (const guint8 *data, gsize length, LmLedgerRecordFunc func, gpointer user_data,
                 gsize *skipped)
{
  gsize pos = 0, lost = 0;
  guint count = 0;

  while (pos < length)
    {
      LmLedgerRecord r;
      gssize n = lm_ledger_record_decode (data + pos, length - pos, &r);

      if (n > 0)
        {
          if (func != NULL)
            func (&r, pos, (gsize) n, user_data);
          count++;
          pos += (gsize) n;
          continue;
        }
      /* Corrupt, or torn (n == 0): a torn record may also be a corrupt
       * length in front of whole records, so resume at the next magic. */
      const guint8 *next = memmem (data + pos + 1, length - pos - 1, LM_LEDGER_MAGIC, 4);
      gsize to = next != NULL ? (gsize) (next - data) : length;
      lost += to - pos;
      pos = to;
    }
  if (skipped != NULL)
    *skipped = lost;
  return count;
}

const char *
lm_ledger_kind_to_string (LmLedgerKind kind)
{
  switch (kind)
    {
      case LM_LEDGER_SPINUP:
        return "spinup";
      case LM_LEDGER_ASLEEP:
        return "asleep";
      case LM_LEDGER_AWAKE:
        return "awake";
      case LM_LEDGER_ACTIVITY:
        return "activity";
      case LM_LEDGER_WEAR:
        return "wear";
      case LM_LEDGER_DEFERRED:
        return "deferred";
    }
  return "unknown";
}

/* Indexed by LmLedgerReason. */
static const char *const reasons[] = { "awake", "timeout", "inactive", "ac", "disabled" };

gboolean
lm_ledger_reason_from_string (const char *word, LmLedgerReason *reason)
{
  for (guint i = 0; i < G_N_ELEMENTS (reasons); i++)
    if (g_strcmp0 (word, reasons[i]) == 0)
      {
        *reason = (LmLedgerReason) i;
        return TRUE;
      }
  return FALSE;
}

const char *
lm_ledger_reason_to_string (LmLedgerReason reason)
{
  return (guint) reason < G_N_ELEMENTS (reasons) ? reasons[reason] : "unknown";
}

GVariant *
lm_ledger_record_to_variant (const LmLedgerRecord *r)
{
  g_auto (GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autofree char *disk = g_utf8_make_valid (r->disk, -1);

  g_variant_builder_add (&b, "{sv}", "Kind",
                         g_variant_new_string (lm_ledger_kind_to_string (r->kind)));
  g_variant_builder_add (&b, "{sv}", "Disk", g_variant_new_string (disk));
  g_variant_builder_add (&b, "{sv}", "Time", g_variant_new_uint64 ((guint64) MAX (0, r->time_us)));
  if (r->kind == LM_LEDGER_DEFERRED)
    {
      /* The caller's names are bytes from its /proc; D-Bus strings are UTF-8. */
      g_autofree char *comm = g_utf8_make_valid (r->comm, -1);
      g_variant_builder_add (&b, "{sv}", "End",
                             g_variant_new_uint64 ((guint64) MAX (0, r->end_us)));
      g_variant_builder_add (&b, "{sv}", "Reason",
                             g_variant_new_string (lm_ledger_reason_to_string (r->reason)));
      if (r->pid != 0)
        g_variant_builder_add (&b, "{sv}", "Pid", g_variant_new_uint32 (r->pid));
      g_variant_builder_add (&b, "{sv}", "Comm", g_variant_new_string (comm));
      if (r->uid >= 0 && r->uid <= G_MAXUINT32)
        g_variant_builder_add (&b, "{sv}", "Uid", g_variant_new_uint32 ((guint32) r->uid));
      if (r->path[0] != '\0')
        {
          g_autofree char *unit = g_utf8_make_valid (r->path, -1);
          g_variant_builder_add (&b, "{sv}", "Unit", g_variant_new_string (unit));
        }
      return g_variant_builder_end (&b);
    }
  if (r->kind != LM_LEDGER_SPINUP)
    {
      g_variant_builder_add (&b, "{sv}", "End",
                             g_variant_new_uint64 ((guint64) MAX (0, r->end_us)));
      if (r->kind == LM_LEDGER_ACTIVITY)
        {
          g_variant_builder_add (&b, "{sv}", "Reads", g_variant_new_uint32 (r->reads));
          g_variant_builder_add (&b, "{sv}", "Writes", g_variant_new_uint32 (r->writes));
          g_variant_builder_add (&b, "{sv}", "Dirtied", g_variant_new_uint32 (r->dirtied));
          if (r->fs != 0)
            g_variant_builder_add (&b, "{sv}", "Filesystems", g_variant_new_uint32 (r->fs));
          if (r->spells_known && r->fs != 0)
            g_variant_builder_add (&b, "{sv}", "Spells", g_variant_new_uint32 (r->spells));
        }
      else if (r->kind == LM_LEDGER_WEAR)
        {
          static const char *const keys[]
              = { "LoadCycles", "StartStopCount", "PowerCycles", "PowerOnHours" };
          const guint32 values[]
              = { r->load_cycles, r->start_stop, r->power_cycles, r->power_on_hours };
          for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
            if (values[i] != LM_LEDGER_NO_WEAR)
              g_variant_builder_add (&b, "{sv}", keys[i], g_variant_new_uint32 (values[i]));
        }
      return g_variant_builder_end (&b);
    }
  /* Task and file names are bytes; D-Bus strings must be UTF-8. */
  g_autofree char *comm = g_utf8_make_valid (r->comm, -1);
  g_variant_builder_add (&b, "{sv}", "Pid", g_variant_new_uint32 (r->pid));
  g_variant_builder_add (&b, "{sv}", "Comm", g_variant_new_string (comm));
  if (r->thread[0] != '\0')
    {
      g_autofree char *thread = g_utf8_make_valid (r->thread, -1);
      g_variant_builder_add (&b, "{sv}", "Thread", g_variant_new_string (thread));
    }
  if (r->unit[0] != '\0')
    {
      g_autofree char *unit = g_utf8_make_valid (r->unit, -1);
      g_variant_builder_add (&b, "{sv}", "Unit", g_variant_new_string (unit));
    }
  if (r->uid >= 0 && r->uid <= G_MAXUINT32)
    g_variant_builder_add (&b, "{sv}", "Uid", g_variant_new_uint32 ((guint32) r->uid));
  g_variant_builder_add (&b, "{sv}", "Via", g_variant_new_string (lm_via_to_string (r->via)));
  if (r->path[0] != '\0')
    {
      g_autofree char *path = g_utf8_make_valid (r->path, -1);
      g_variant_builder_add (&b, "{sv}", "Path", g_variant_new_string (path));
    }
  g_variant_builder_add (&b, "{sv}", "Flushed", g_variant_new_uint32 (r->flushed));
  return g_variant_builder_end (&b);
}
