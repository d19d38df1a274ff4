/* lm-sgio.h: sending ATA commands to a disk: SG_IO, then HDIO_DRIVE_CMD.
 * Owns the device handle and the ioctl layer (real, or whatever a test
 * puts behind LmSgioOps); never decides what to send. */
#pragma once

#include <glib.h>

#include "lm-ata.h"

G_BEGIN_DECLS

/* The ioctl layer. Each call returns 0 or a negative errno. sg_io sets
 * @data_got to the bytes the device actually transferred (dxfer_len -
 * resid): a short transfer leaves the rest of @data as it was. */
typedef struct
{
  const char *name;
  gpointer (*open) (const char *path, GError **error);
  int (*sg_io) (gpointer handle, const guint8 cdb[LM_ATA_CDB_LEN], guint8 *data, gsize data_len,
                gsize *data_got, guint8 *sense, gsize *sense_len);
  int (*drive_cmd) (gpointer handle, guint8 *args, gsize args_len);
  void (*close) (gpointer handle);
} LmSgioOps;

extern const LmSgioOps lm_sgio_real;

/* Tests only: the backend for the device at @path, NULL for the real one.
 * Nothing in the daemon sets it. */
typedef const LmSgioOps *(*LmSgioChooser) (const char *path);
void lm_sgio_set_chooser (LmSgioChooser choose);

typedef struct _LmSgio LmSgio;

LmSgio *lm_sgio_open (const char *path, GError **error);
void lm_sgio_close (LmSgio *dev);
const char *lm_sgio_backend (LmSgio *dev);

gboolean lm_sgio_command (LmSgio *dev, const guint8 cdb[LM_ATA_CDB_LEN], guint8 *data,
                          gsize data_len, LmAtaRegs *regs, GError **error);
gboolean lm_sgio_check_power (LmSgio *dev, LmAtaPower *power, GError **error);
gboolean lm_sgio_read_apm (LmSgio *dev, guint *level, GError **error);
/* SMART READ DATA: the 512-byte attribute page, not parsed (lm-smart.c),
 * through lm_sgio_command_awake(): never sent to a drive in standby. */
gboolean lm_sgio_read_smart (LmSgio *dev, guint8 data[LM_ATA_SMART_LEN], LmAtaPower *before,
                             gint64 *took_us, GError **error);

/* The daemon's own command to a drive that is awake: CHECK POWER MODE
 * (which never wakes it), then at once @cdb, only if it did not say
 * standby or sleeping (then FALSE, LM_ERROR_BUSY, nothing sent). A drive
 * that cannot say is sent @cdb all the same unless @need_answer (then
 * FALSE with the check's error). @before: what it said; @took_us: how
 * long @cdb took, for lm_ata_command_woke() (a spin-down between the two
 * lands there); 0 when not sent. */
gboolean lm_sgio_command_awake (LmSgio *dev, const guint8 cdb[LM_ATA_CDB_LEN], guint8 *data,
                                gsize data_len, gboolean need_answer, LmAtaRegs *regs,
                                LmAtaPower *before, gint64 *took_us, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LmSgio, lm_sgio_close)

G_END_DECLS
