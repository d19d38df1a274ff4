/* lm-fake-nvme.h: a scripted fake NVMe controller for tests (lm-fake-nvme.c):
 * never part of the daemon; laptop-moded-test installs it. */
#pragma once

#include "lm-nvme-admin.h"

/* From now on a controller device that is a regular file starting with
 * "# laptop-moded fake NVMe controller" answers from the files it names;
 * any other goes to the real ioctls. */
void lm_fake_nvme_install (void);
