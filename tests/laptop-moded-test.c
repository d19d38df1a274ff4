/* laptop-moded-test.c: makes laptop-moded-test (main.c, the daemon's library
 * and this) talk to the scripted fake ATA drive before main() runs. */
#include "lm-fake-ata.h"

__attribute__ ((constructor)) static void
install_fake_ata (void)
{
  lm_fake_ata_install ();
}
