/* lm-fake-ata.h: the scripted fake ATA drive for tests (lm-fake-ata.c):
 * never part of the daemon; tests and laptop-moded-test install it. */
#pragma once

#include "lm-sgio.h"

/* From now on lm_sgio_open() of a regular file that starts with
 * "# laptop-moded fake ATA device" talks to the scripted drive. */
void lm_fake_ata_install (void);
