/* laptop-moded-test.c: makes laptop-moded-test (main.c, the daemon's library
 * and this) talk to the scripted fake ATA drive and NVMe controller. */
#include "lm-fake-ata.h"
#include "lm-fake-nvme.h"

__attribute__ ((constructor)) static void
install_fake_ata (void)
{
  lm_fake_ata_install ();
  lm_fake_nvme_install ();
}
