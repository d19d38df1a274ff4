/* lm-kmsg.h: parser of the kernel's block_dump log lines.
 * Owns turning one line of /dev/kmsg or dmesg into a record; it never reads
 * a file, keeps no state and must never crash or allocate on any input. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  LM_KMSG_NONE,       /* not a block_dump line: skip it */
  LM_KMSG_BIO,        /* comm(pid): READ|WRITE block N on dev [(n sectors)] */
  LM_KMSG_DIRTIED,    /* comm(pid): dirtied inode|buffer|page ... on dev */
  LM_KMSG_SUPPRESSED, /* block_dump_printk: N callbacks suppressed */
} LmKmsgKind;

typedef enum
{
  LM_KMSG_OBJECT_INODE,
  LM_KMSG_OBJECT_BUFFER,
  LM_KMSG_OBJECT_PAGE,
} LmKmsgObject;

typedef struct
{
  LmKmsgKind kind;
  gint64 usec;   /* time since boot from the kmsg or dmesg prefix; -1 if none */
  char comm[16]; /* task name, at most 15 bytes as in the kernel */
  guint32 pid;
  gboolean write;      /* BIO */
  guint64 sector;      /* BIO: 512-byte sectors, relative to dev */
  guint32 sectors;     /* BIO: size; 0 when the kernel did not print it */
  LmKmsgObject object; /* DIRTIED */
  gboolean has_number; /* DIRTIED: inode, buffer or page number printed */
  guint64 number;
  char name[256];     /* DIRTIED inode: dentry name, "?" when it had none */
  char dev[32];       /* partition, disk or the filesystem's s_id */
  guint64 suppressed; /* SUPPRESSED: messages the rate limit dropped */
} LmKmsgRecord;

LmKmsgKind lm_kmsg_parse_line (const char *line, gsize length, LmKmsgRecord *record);

G_END_DECLS
