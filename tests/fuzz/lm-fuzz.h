/* lm-fuzz.h: what every fuzz target shares: the libFuzzer entry point and
 * a failure that both libFuzzer and the standalone corpus driver report. */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* A broken invariant (a round trip that did not come back) is a crash:
 * abort() makes libFuzzer save the input and the driver fail. */
#define LM_FUZZ_CHECK(cond)                                                                        \
  do                                                                                               \
    {                                                                                              \
      if (!(cond))                                                                                 \
        {                                                                                          \
          fprintf (stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond);       \
          abort ();                                                                                \
        }                                                                                          \
    }                                                                                              \
  while (0)

/* The input as a NUL-terminated string in a buffer of exactly that size,
 * so AddressSanitizer sees any read past the end. NULs inside are kept. */
static inline char *
lm_fuzz_strndup (const uint8_t *data, size_t size)
{
  char *s = g_malloc (size + 1);

  if (size > 0)
    memcpy (s, data, size);
  s[size] = '\0';
  return s;
}

/* A private scratch directory on tmpfs where there is one (the key-file
 * targets write and read back files thousands of times a second). */
const char *lm_fuzz_scratch_dir (void);
