/* lm-engines.h: the ways laptop mode can be done, named by the tunables
 * backends (which their kernel supports), the engine and the participants'
 * rows; no code. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Each tunables backend says which of them its kernel supports; lm-engine.c
 * picks one and runs what it needs. */
typedef enum
{
  LM_ENGINE_NONE = 0,
  LM_ENGINE_KERNEL = 1 << 0,    /* the kernel's own vm.laptop_mode timer */
  LM_ENGINE_USERSPACE = 1 << 1, /* the daemon's flush (lm-flush.c) */
  LM_ENGINE_BDFLUSH = 1 << 2,   /* Linux 2.4: only the flush interval */
} LmEngine;

G_END_DECLS
