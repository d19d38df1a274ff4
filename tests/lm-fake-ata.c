/* lm-fake-ata.c: the scripted fake ATA drive the tests put under a fake
 * root, behind LmSgioOps; linked only into tests and laptop-moded-test.
 *
 * A regular file standing in for /dev/sdX under a fake LAPTOP_MODED_ROOT:
 *
 *   # laptop-moded fake ATA device
 *   [FakeAta]
 *   Power=active          active, idle, standby or sleeping
 *   APM=128               level IDENTIFY reports; absent: APM not supported
 *   Interface=sgio        sgio, or drive_cmd (SG_IO says ENOTTY)
 *   AbortCheckPowerMode=false   true: abort 0xE5 as an ATA-1 drive, answer 0x98
 *   Refuse=false          true: abort every command
 *   IdentifyLength=512    bytes of IDENTIFY data the "bridge" transfers; the
 *                         rest of the buffer is left as it was (filled with
 *                         0xFF first, as stale memory would be)
 *   SpinUpMs=0            a drive in standby sent anything but CHECK POWER
 *                         MODE spins up: it answers after this many ms and
 *                         is active (Power= rewritten); 0: it answers at
 *                         once and stays in standby
 *   StandbyBefore=B0      once, when a command with this opcode (hex)
 *                         arrives, its timer has just run out: it is in
 *                         standby for it (a spin-down between the daemon's
 *                         CHECK POWER MODE and the command); then forgotten
 *
 * The file is read again for each command, so a test changes the drive's
 * answers by rewriting it. Each command received is appended to
 * "<path>.log" as "<interface> <command> <feature> <count>" in hex, e.g.
 * "sgio E3 00 04"; SET FEATURES APM also sets APM= in the file, as the
 * drive would remember it. SMART READ DATA answers from Smart= (see
 * fake_smart). */

#include "lm-fake-ata.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAKE_MAGIC "# laptop-moded fake ATA device"
#define FAKE_GROUP "FakeAta"

typedef struct
{
  char *path;
} FakeDevice;

static gboolean
is_fake (const char *path)
{
  struct stat st;
  char head[sizeof FAKE_MAGIC - 1];
  gboolean fake = FALSE;

  if (stat (path, &st) < 0 || !S_ISREG (st.st_mode))
    return FALSE;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return FALSE;
  fake = read (fd, head, sizeof head) == (ssize_t) sizeof head
         && memcmp (head, FAKE_MAGIC, sizeof head) == 0;
  close (fd);
  return fake;
}

static gpointer
fake_open (const char *path, GError **error)
{
  FakeDevice *dev = g_new0 (FakeDevice, 1);

  dev->path = g_strdup (path);
  return dev;
}

static void
fake_log (FakeDevice *dev, const char *interface, guint8 command, guint8 feature, guint8 count)
{
  g_autofree char *log = g_strconcat (dev->path, ".log", NULL);
  g_autofree char *line
      = g_strdup_printf ("%s %02X %02X %02X\n", interface, command, feature, count);
  int fd = open (log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

  if (fd < 0)
    return;
  if (write (fd, line, strlen (line)) < 0)
    g_debug ("Cannot log to %s: %s", log, g_strerror (errno));
  close (fd);
}

/* SMART READ DATA from "Smart=ID:RAW;ID:RAW" (a page with those
 * attributes and a good checksum), or the 512 bytes of "SmartPage=" (a
 * file, e.g. a recorded page); no Smart key: SMART is aborted. */
static gboolean
fake_smart (GKeyFile *kf, guint8 feature, guint8 *data, gsize data_len, gsize *data_got,
            LmAtaRegs *regs)
{
  g_autofree char *page_file = g_key_file_get_string (kf, FAKE_GROUP, "SmartPage", NULL);
  g_auto (GStrv) attrs = g_key_file_get_string_list (kf, FAKE_GROUP, "Smart", NULL, NULL);
  guint8 page[LM_ATA_SMART_LEN] = { 0 };

  if (feature != LM_ATA_SMART_READ_DATA || data == NULL || data_len < sizeof page
      || (attrs == NULL && page_file == NULL))
    {
      regs->status = 0x51;
      regs->error = 0x04;
      return FALSE;
    }
  if (page_file != NULL)
    {
      g_autofree char *bytes = NULL;
      gsize len = 0;
      if (g_file_get_contents (page_file, &bytes, &len, NULL))
        memcpy (page, bytes, MIN (len, sizeof page));
    }
  else
    {
      page[0] = 0x10; /* revision */
      for (guint i = 0; attrs[i] != NULL && i < 30; i++)
        {
          guint8 *a = page + 2 + i * 12;
          guint64 id = 0, raw = 0;
          g_auto (GStrv) kv = g_strsplit (attrs[i], ":", 2);
          if (kv[0] == NULL || kv[1] == NULL)
            continue;
          id = g_ascii_strtoull (kv[0], NULL, 10);
          raw = g_ascii_strtoull (kv[1], NULL, 10);
          a[0] = (guint8) id;
          a[1] = 0x32;
          a[3] = 100;
          a[4] = 100;
          for (guint b = 0; b < 6; b++)
            a[5 + b] = (guint8) (raw >> (8 * b));
        }
      guint8 sum = 0;
      for (guint i = 0; i < sizeof page - 1; i++)
        sum += page[i];
      page[sizeof page - 1] = (guint8) (0x100 - sum);
    }
  memcpy (data, page, sizeof page);
  *data_got = sizeof page;
  return TRUE;
}

/* Run one command against the scripted drive: fills @regs, returns 0 or
 * -EIO when the drive does not answer at all (SLEEP). */
static int
fake_execute (FakeDevice *dev, const char *interface, guint8 command, guint8 feature, guint8 count,
              guint8 *data, gsize data_len, gsize *data_got, LmAtaRegs *regs)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  memset (regs, 0, sizeof *regs);
  *data_got = data_len;

  fake_log (dev, interface, command, feature, count);
  if (!g_key_file_load_from_file (kf, dev->path, G_KEY_FILE_KEEP_COMMENTS, NULL))
    return -EIO;
  g_autofree char *power = g_key_file_get_string (kf, FAKE_GROUP, "Power", NULL);
  gboolean refuse = g_key_file_get_boolean (kf, FAKE_GROUP, "Refuse", NULL);
  gboolean old = g_key_file_get_boolean (kf, FAKE_GROUP, "AbortCheckPowerMode", NULL);

  if (g_strcmp0 (power, "sleeping") == 0)
    return -EIO;
  gboolean check = command == LM_ATA_CHECK_POWER_MODE || command == LM_ATA_CHECK_POWER_MODE_OLD;
  g_autofree char *standby_before = g_key_file_get_string (kf, FAKE_GROUP, "StandbyBefore", NULL);
  if (standby_before != NULL && g_ascii_strtoull (standby_before, NULL, 16) == command)
    {
      g_free (power);
      power = g_strdup ("standby");
      g_key_file_set_string (kf, FAKE_GROUP, "Power", power);
      g_key_file_remove_key (kf, FAKE_GROUP, "StandbyBefore", NULL);
      if (!g_key_file_save_to_file (kf, dev->path, NULL))
        return -EIO;
    }
  int spin_up_ms = g_key_file_get_integer (kf, FAKE_GROUP, "SpinUpMs", NULL);
  if (!check && spin_up_ms > 0 && g_strcmp0 (power, "standby") == 0)
    {
      g_usleep ((gulong) spin_up_ms * 1000);
      g_free (power);
      power = g_strdup ("active");
      g_key_file_set_string (kf, FAKE_GROUP, "Power", power);
      if (!g_key_file_save_to_file (kf, dev->path, NULL))
        return -EIO;
    }
  regs->status = 0x50; /* DRDY, DSC */
  if (refuse || (old && command == LM_ATA_CHECK_POWER_MODE))
    {
      regs->status = 0x51;
      regs->error = 0x04;
      return 0;
    }
  switch (command)
    {
      case LM_ATA_CHECK_POWER_MODE:
      case LM_ATA_CHECK_POWER_MODE_OLD:
        regs->count = g_strcmp0 (power, "standby") == 0 ? 0x00
                      : g_strcmp0 (power, "idle") == 0  ? 0x80
                                                        : 0xFF;
        break;
      case LM_ATA_SET_FEATURES:
        if (feature == LM_ATA_FEATURE_APM_ENABLE)
          g_key_file_set_integer (kf, FAKE_GROUP, "APM", count);
        else if (feature == LM_ATA_FEATURE_APM_DISABLE)
          g_key_file_set_integer (kf, FAKE_GROUP, "APM", LM_ATA_APM_OFF);
        if (!g_key_file_save_to_file (kf, dev->path, NULL))
          return -EIO;
        break;
      case LM_ATA_IDENTIFY_DEVICE:
        if (data != NULL && data_len >= LM_ATA_IDENTIFY_LEN)
          {
            guint8 answer[LM_ATA_IDENTIFY_LEN] = { 0 };
            gsize length = LM_ATA_IDENTIFY_LEN;

            if (g_key_file_has_key (kf, FAKE_GROUP, "IdentifyLength", NULL))
              length
                  = (gsize) CLAMP (g_key_file_get_integer (kf, FAKE_GROUP, "IdentifyLength", NULL),
                                   0, LM_ATA_IDENTIFY_LEN);
            if (g_key_file_has_key (kf, FAKE_GROUP, "APM", NULL))
              {
                int apm = g_key_file_get_integer (kf, FAKE_GROUP, "APM", NULL);
                answer[83 * 2] = 0x08;
                answer[83 * 2 + 1] = 0x40;
                if (apm > 0 && apm < LM_ATA_APM_OFF)
                  {
                    answer[86 * 2] = 0x08;
                    answer[91 * 2] = (guint8) apm;
                  }
              }
            /* Stale memory past a short transfer, as a real buffer has. */
            memset (data, 0xFF, data_len);
            memcpy (data, answer, length);
            *data_got = length;
          }
        break;
      case LM_ATA_SMART:
        if (!fake_smart (kf, feature, data, data_len, data_got, regs))
          return 0;
        break;
      default:
        break;
    }
  return 0;
}

static gboolean
fake_uses_sgio (FakeDevice *dev)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();

  if (!g_key_file_load_from_file (kf, dev->path, G_KEY_FILE_NONE, NULL))
    return TRUE;
  g_autofree char *interface = g_key_file_get_string (kf, FAKE_GROUP, "Interface", NULL);
  return g_strcmp0 (interface, "drive_cmd") != 0;
}

/* Answers as libata does: descriptor sense with an ATA Status Return
 * descriptor, so the real parser reads the fake's answers. */
static int
fake_sg_io (gpointer handle, const guint8 cdb[LM_ATA_CDB_LEN], guint8 *data, gsize data_len,
            gsize *data_got, guint8 *sense, gsize *sense_len)
{
  FakeDevice *dev = handle;
  LmAtaRegs regs;

  if (!fake_uses_sgio (dev))
    return -ENOTTY;
  int rc = fake_execute (dev, "sgio", cdb[14], cdb[4], cdb[6], data, data_len, data_got, &regs);
  if (rc < 0)
    return rc;
  guint8 answer[22] = { 0x72, (regs.status & 0x01) ? 0x0B : 0x01,
                        0x00, (regs.status & 0x01) ? 0x00 : 0x1D,
                        0x00, 0x00,
                        0x00, 0x0E,
                        0x09, 0x0C,
                        0x00, regs.error,
                        0x00, regs.count,
                        0x00, 0x00,
                        0x00, 0x00,
                        0x00, 0x00,
                        0x40, regs.status };
  *sense_len = MIN (*sense_len, sizeof answer);
  memcpy (sense, answer, *sense_len);
  return 0;
}

static int
fake_drive_cmd (gpointer handle, guint8 *args, gsize args_len)
{
  FakeDevice *dev = handle;
  LmAtaRegs regs;
  gsize got;
  int rc
      = fake_execute (dev, "drive_cmd", args[0], args[2], args[1], args_len > 4 ? args + 4 : NULL,
                      args_len > 4 ? args_len - 4 : 0, &got, &regs);

  if (rc < 0)
    {
      /* As libata: nothing came back, the argument block stays zeroed. */
      memset (args, 0, 4);
      return rc;
    }
  args[0] = regs.status;
  args[1] = regs.error;
  args[2] = regs.count;
  return (regs.status & 0x01) ? -EIO : 0;
}

static void
fake_close (gpointer handle)
{
  FakeDevice *dev = handle;

  g_free (dev->path);
  g_free (dev);
}

static const LmSgioOps fake_ops = {
  .name = "fake",
  .open = fake_open,
  .sg_io = fake_sg_io,
  .drive_cmd = fake_drive_cmd,
  .close = fake_close,
};

/* The fake for a file that starts with the magic line, else the real
 * ioctls. */
static const LmSgioOps *
choose (const char *path)
{
  return is_fake (path) ? &fake_ops : NULL;
}

void
lm_fake_ata_install (void)
{
  lm_sgio_set_chooser (choose);
}
