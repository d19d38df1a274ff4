/* lm-bpf.c: what the daemon's BPF programs share.
 * The ring buffer is read from a GLib fd source, so the daemon sleeps until
 * the kernel-side filter has something to say: no polling. */
#include "lm-bpf.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>

#include "lm-error.h"
#include "lm-paths.h"

/* Checked before loading, for an error a user can act on; the load itself
 * is the real test (verifier, BTF, tracepoint names). */
gboolean
lm_bpf_check_possible (const char *program, GError **error)
{
  g_autofree char *btf = lm_path ("/sys/kernel/btf/vmlinux");

  if (!LM_HAVE_BPF)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                   "laptop-moded was built without BPF (clang, bpftool and libbpf were missing), "
                   "which %s needs",
                   program);
      return FALSE;
    }
  if (!g_file_test (btf, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                   "%s is missing: the kernel has no BTF (CONFIG_DEBUG_INFO_BTF), which %s needs",
                   btf, program);
      return FALSE;
    }
  if (geteuid () != 0)
    {
      g_set_error (error, LM_ERROR, LM_ERROR_NOT_SUPPORTED,
                   "%s loads a BPF program, which needs root", program);
      return FALSE;
    }
  return TRUE;
}

gboolean
lm_bpf_set_error (GError **error, int err, const char *what, const char *program)
{
  g_set_error (error, LM_ERROR, LM_ERROR_FAILED,
               "Cannot %s the BPF program of %s: %s (needs root, a kernel with BTF and the "
               "block_bio_queue tracepoint; run with --verbose for libbpf's reason)",
               what, program, g_strerror (err < 0 ? -err : err));
  return FALSE;
}

#if LM_HAVE_BPF

/* libbpf explains a failed load (the verifier, a missing tracepoint) on
 * its print hook; keep it for the debug log instead of stderr. */
static int
libbpf_log (enum libbpf_print_level level, const char *format, va_list args)
{
  if (level == LIBBPF_DEBUG)
    return 0;
  g_autofree char *msg = g_strdup_vprintf (format, args);
  g_debug ("libbpf: %s", g_strchomp (msg));
  return 0;
}

void
lm_bpf_log_to_glib (void)
{
  libbpf_set_print (libbpf_log);
}

/* PROC_PID_INIT_INO (include/linux/proc_ns.h): the initial pid
 * namespace's inode, fixed since 3.8. */
#define LM_PROC_PID_INIT_INO 0xEFFFFFFCU

void
lm_bpf_pidns (__u64 *dev, __u64 *ino)
{
  struct stat st;

  *dev = 0;
  *ino = 0;
  /* Not lm_path(): the namespace is the process's own, never a test root's. */
  if (stat ("/proc/self/ns/pid", &st) != 0)
    {
      g_debug ("Cannot tell the daemon's pid namespace: %s; taking the initial one",
               g_strerror (errno));
      return;
    }
  if (st.st_ino == LM_PROC_PID_INIT_INO)
    return;
  g_debug ("In pid namespace %lu (not the initial one): BPF programs report its pids",
           (unsigned long) st.st_ino);
  *dev = (__u64) st.st_dev;
  *ino = (__u64) st.st_ino;
}

static guint64
hz_in (GInputStream *in)
{
  g_autoptr (GDataInputStream) data = g_data_input_stream_new (in);
  char *line;

  while ((line = g_data_input_stream_read_line (data, NULL, NULL, NULL)) != NULL)
    {
      g_autofree char *owned = line;
      guint64 hz;
      if (g_str_has_prefix (line, "CONFIG_HZ=")
          && g_ascii_string_to_unsigned (line + 10, 10, 24, 10000, &hz, NULL))
        return hz;
    }
  return 0;
}

/* Read once: the kernel does not change under us. Not lm_path(): the
 * running kernel's, never a test root's. */
__u64
lm_bpf_ns_per_jiffy (void)
{
  static gsize cached = 0;

  if (g_once_init_enter (&cached))
    {
      struct utsname u;
      guint64 hz = 0;

      if (uname (&u) == 0)
        {
          g_autofree char *boot = g_strdup_printf ("/boot/config-%s", u.release);
          g_autoptr (GFile) f = g_file_new_for_path (boot);
          g_autoptr (GFileInputStream) in = g_file_read (f, NULL, NULL);
          if (in != NULL)
            hz = hz_in (G_INPUT_STREAM (in));
        }
      if (hz == 0)
        {
          g_autoptr (GFile) f = g_file_new_for_path ("/proc/config.gz");
          g_autoptr (GFileInputStream) in = g_file_read (f, NULL, NULL);
          if (in != NULL)
            {
              g_autoptr (GZlibDecompressor) gz
                  = g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP);
              g_autoptr (GInputStream) plain
                  = g_converter_input_stream_new (G_INPUT_STREAM (in), G_CONVERTER (gz));
              hz = hz_in (plain);
            }
        }
      if (hz == 0)
        g_debug ("The kernel's CONFIG_HZ is unknown: the BPF programs read the precise clock "
                 "for every I/O");
      g_once_init_leave (&cached, hz != 0 ? 1000000000 / hz + 1 : 1);
    }
  return cached - 1;
}

static gboolean
on_ring_readable (int fd, GIOCondition condition, gpointer user_data)
{
  LmBpfRing *ring = user_data;

  if (ring_buffer__consume (ring->ring) < 0)
    g_debug ("Reading the ring buffer of %s failed", ring->program);
  return G_SOURCE_CONTINUE;
}

gboolean
lm_bpf_ring_open (LmBpfRing *ring, int map_fd, ring_buffer_sample_fn sample, void *ctx,
                  const char *program, GError **error)
{
  ring->program = program;
  ring->ring = ring_buffer__new (map_fd, sample, ctx, NULL);
  if (ring->ring == NULL)
    return lm_bpf_set_error (error, errno, "read the ring buffer of", program);
  ring->source
      = g_unix_fd_add (ring_buffer__epoll_fd (ring->ring), G_IO_IN, on_ring_readable, ring);
  return TRUE;
}

void
lm_bpf_ring_close (LmBpfRing *ring)
{
  g_clear_handle_id (&ring->source, g_source_remove);
  g_clear_pointer (&ring->ring, ring_buffer__free);
}

#endif
