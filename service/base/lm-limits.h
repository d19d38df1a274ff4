/* lm-limits.h: the bounds of every D-Bus argument, part of the interface's
 * contract (dbus/org.laptopmode.LaptopMode1.xml); the one place they live. */
#pragma once

#include <limits.h>

#include <glib.h>

G_BEGIN_DECLS

/* Checked by size alone, before any other look at a value and before
 * polkit is asked: a refused call costs the same whatever it carries. */
#define LM_LIMIT_SETTINGS 32 /* keys in one Configure() */
#define LM_LIMIT_NAME 64     /* bytes in a setting's name or a word value (Mode, Engine…) */
#define LM_LIMIT_LIST 256    /* entries in a list setting (NoRemount, RemountTypes) */
#define LM_LIMIT_PATH (PATH_MAX - 1) /* bytes in a mount point: PATH_MAX less its NUL */
#define LM_LIMIT_DISKS 64            /* disks in one DiskSettings */
#define LM_LIMIT_DISK_KEYS 16        /* settings per disk in DiskSettings */
#define LM_LIMIT_DISK_ID 255         /* bytes in a disk id */
#define LM_LIMIT_APPLICATION 64      /* characters in Inhibit's application */
#define LM_LIMIT_REASON 256          /* characters in Inhibit's reason */
/* UTF-8 takes at most 4 bytes a character: the byte bound checked first. */
#define LM_LIMIT_UTF8_BYTES(chars) ((chars) *4)

/* GetLedgerPage: the largest limit a caller may ask, and bytes in a
 * cursor. */
#define LM_LIMIT_LEDGER_PAGE 1000
#define LM_LIMIT_CURSOR 64
/* Records in one answer (GetLedger's, and GetLedgerPage's whatever its
 * limit): GDBus builds a reply's bytes under its connection's lock, which
 * every other answer waits for, about 2 ms for 250 spin-ups on the test
 * machine (8 ms for 1000: a property read waited up to 136 ms behind such
 * pages on a loaded 2-core machine, 57 ms at most with 250). */
#define LM_LIMIT_LEDGER_ANSWER 250
/* GetLedger's budget, in records: a call costs LM_LIMIT_LEDGER_CALL_COST
 * plus the records it returns, taken from the caller's connection and from
 * its user; each holds LM_LIMIT_LEDGER_BUDGET_SENDER (a full ledger, about
 * 40,000 records at 2 MiB, read in one go) and LM_LIMIT_LEDGER_BUDGET_UID,
 * refilled evenly over LM_LIMIT_LEDGER_REFILL_S seconds. Past it the call
 * fails with Error.LimitExceeded, before polkit is asked. Kept lazily: no
 * timer runs. */
#define LM_LIMIT_LEDGER_CALL_COST 10
#define LM_LIMIT_LEDGER_BUDGET_SENDER 45000
#define LM_LIMIT_LEDGER_BUDGET_UID 60000
#define LM_LIMIT_LEDGER_REFILL_S 60
/* Spin-up subscribers (Subscribe): a connection is subscribed once; at most
 * this many per user and in all, counting subscribers the daemon dropped
 * and still watches. Each costs a NameOwnerChanged match rule on the
 * daemon's own connection, and dbus-daemon refuses past 512 per connection
 * on the system bus (max_match_rules_per_connection) without the daemon
 * being told: 128 subscribers, plus 256 holders (Inhibit) and the daemon's
 * own watches (UPower, logind, power-profiles-daemon), stay well below. */
#define LM_LIMIT_SUBSCRIBERS_PER_UID 16
#define LM_LIMIT_SUBSCRIBERS 128
/* WaitAwake: its max_seconds (a day), and waiters per connection and in
 * all. Each connection waiting costs a match rule (its watch), as
 * a subscriber does: 64 more stay below the bus's 512 with those above. */
#define LM_LIMIT_WAIT_SECONDS 86400
#define LM_LIMIT_WAITERS_PER_SENDER 4
#define LM_LIMIT_WAITERS 64
/* The 64 in classes, so that none crowds out another: people's accounts
 * (uid 1000 and up, Debian's UID_MIN; nobody among them) together 32,
 * system accounts (1 to 999: man-db.service runs as man) 16, root (the
 * drop-ins' updatedb, fstrim) 16. Two users can fill their own class, never
 * the waits of the system's maintenance jobs. */
#define LM_LIMIT_WAITERS_USERS 32
#define LM_LIMIT_WAITERS_SYSTEM 16
#define LM_LIMIT_WAITERS_ROOT 16
#define LM_FIRST_USER_UID 1000
/* Waits kept in the ledger per user, refilled over an hour: Debian's
 * timers are a handful a day; a caller looping on short waits must not
 * push a month of spin-ups out of its 2 MiB. */
#define LM_LIMIT_DEFERRED_RECORDS_UID 60
#define LM_LIMIT_DEFERRED_REFILL_S 3600

/* At most this many bytes of a refused value are quoted in an error or a
 * log line: enough to recognise it, never enough to grow a reply past what
 * the bus carries. */
#define LM_LIMIT_ECHO 64

/* A whole message to the daemon (lm-bus.c): larger than any call within
 * the bounds above (256 mount points of PATH_MAX are 1 MiB), and small,
 * as GDBus keeps a read buffer as large as the largest message it read. */
#define LM_LIMIT_MESSAGE (2 * 1024 * 1024)

/* NvmeLatencyToleranceUs: "keep", "", "auto", "any" or 0–2147483647;
 * what it (and a disk's latency) accepts, in words. */
#define LM_LIMIT_LATENCY_SYNTAX                                                                    \
  "“keep”, “auto”, “any” or a whole number of microseconds from 0 to 2147483647"
gboolean lm_limits_check_latency (const char *value, GError **error);
/* StandbySeconds: the timers an ATA drive can be given (hdparm -S's
 * encoding, disks/lm-ata.c): 0 (off), 5 to 1200 in steps of 5, 1260, 1275,
 * 1800 to 19800 in steps of 1800. */
#define LM_LIMIT_STANDBY_252_SECONDS (21 * 60)
#define LM_LIMIT_STANDBY_255_SECONDS (21 * 60 + 15)
gboolean lm_limits_check_standby (guint seconds, GError **error);

char *lm_limits_escape (const char *value);
char *lm_limits_quote (const char *value);

G_END_DECLS
