/* lm-nvme-residency.h: where an NVMe drive's idle time goes under its APST
 * table, and the energy that implies from its power state descriptors.
 * Pure arithmetic, shared by the daemon's LedgerSummary and the report. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define LM_RESIDENCY_MAX_STATES 32

typedef struct
{
  double max_power_w;    /* MP: an upper bound for the state */
  double idle_power_w;   /* IDLP, < 0 where the drive does not report it */
  double active_power_w; /* ACTP, < 0 where not reported */
  guint32 idle_ms;       /* APST ITPT: idle time in this state before it moves, 0: never */
  guint target;          /* APST ITPS: the state it moves to */
  gboolean operational;  /* NOPS clear: the host may work in it */
} LmResidencyState;

typedef enum
{
  LM_APST_ABSENT,   /* the controller has no APST (APSTA clear) */
  LM_APST_DISABLED, /* supported but off, or its table not read */
  LM_APST_ENABLED,
} LmApstMode;

typedef struct
{
  guint n_states;
  LmApstMode apst;
  guint work_state; /* the operational state the host set (Power Management PS) */
  LmResidencyState states[LM_RESIDENCY_MAX_STATES];
} LmResidencyTable;

typedef struct
{
  double state_s[LM_RESIDENCY_MAX_STATES]; /* idle seconds in each state */
  double active_s;                         /* seconds with I/O, in work_state */
  double energy_wh;
  guint max_power_terms; /* how many terms fell back to MP */
  guint reported_terms;  /* how many used IDLP or ACTP */
  gint64 window_s;       /* the seconds walked: the spans' total */
} LmResidency;

/* Walks [@since_s, @until_s) with the drive doing I/O in each second of
 * @io_s (seconds, any order, repeats and instants outside ignored; sorted
 * in place): an I/O second is spent in work_state at ACTP (else MP); each
 * idle gap starts in work_state and, with APST enabled, moves on to a
 * state's target once it has been idle there for its ITPT, as the drive's
 * APST does; idle time costs each state's IDLP (else MP). The window
 * starts as if the drive had just finished I/O. */
void lm_residency_walk (const LmResidencyTable *table, gint64 *io_s, gsize n, gint64 since_s,
                        gint64 until_s, LmResidency *out);
/* The same over @n_spans spans [@spans[2k], @spans[2k+1]) (seconds, sorted,
 * not overlapping): the time the ledger watched the disk while the machine
 * ran. Time between spans (suspended, or the daemon stopped) is walked as
 * nothing, never as idle; each span starts as if I/O had just finished. */
void lm_residency_walk_spans (const LmResidencyTable *table, gint64 *io_s, gsize n,
                              const gint64 *spans, gsize n_spans, LmResidency *out);

/* The deepest state an idle drive reaches under @table (work_state where
 * APST is not enabled). */
guint lm_residency_deepest (const LmResidencyTable *table);

/* "idlp_actp" (every term from the drive's own IDLP/ACTP), "max_power"
 * (every term from MP: an upper bound) or "mixed". */
const char *lm_residency_energy_source (const LmResidency *r);

const char *lm_apst_mode_to_string (LmApstMode mode);

/* The table from a disk's entry in the Disks property (a{sv}: its
 * NvmePowerStates, NvmeApstSupported, NvmeApst, NvmeApstTable,
 * NvmePowerState): FALSE where it has no power states (not NVMe, or
 * Identify not read yet). */
gboolean lm_residency_table_from_disk (GVariant *disk, LmResidencyTable *table);

G_END_DECLS
