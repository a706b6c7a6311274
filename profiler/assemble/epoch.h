/*
 * What the application side hands the writer besides events and activity
 * records: schedule epochs (steps.c publishes them, the assembler applies
 * them) and driver memory snapshots (devices.c takes them, the assembler
 * writes them). Types only.
 */
#ifndef GMEMPROF_PROFILER_EPOCH_H
#define GMEMPROF_PROFILER_EPOCH_H

#include <stdint.h>

#define GMP_MAX_DEVICES 64

/* One schedule transition. Epoch 0 is gmp_sched_init; every later step,
 * capture edge or time tick that the schedule sees makes the next epoch.
 * Application threads stamp every API call and event with the current epoch,
 * so the writer knows exactly which step and phase each record belongs to,
 * however late it arrives. */
#define GMP_EPOCH_HIST 4096u
enum gmp_tr_kind { GMP_TR_INIT = 0, GMP_TR_STEP = 1, GMP_TR_CAPTURE = 2, GMP_TR_TICK = 3 };

typedef struct gmp_epoch_info {
    uint32_t epoch;
    uint32_t ev;       /* GMP_SCHED_EV_* */
    uint64_t ts;
    uint64_t step;     /* step number from this epoch on */
    uint64_t window;   /* sched.window after the transition (windows begun) */
    uint8_t phase;     /* gmt_phase from this epoch on */
    uint8_t source;    /* gmt_step_source */
    uint8_t kind;      /* gmp_tr_kind */
    uint8_t in_window; /* sched.in_window after the transition */
    uint64_t snap;     /* driver memory at the transition (gmp_snapshot_take), 0 none */
} gmp_epoch_info;

/* Driver memory (cuMemGetInfo) of every device with a context, taken on the
 * thread that makes a step or a tag, at that moment: the writer handles the
 * event later, and what the driver says then is not what it said at the
 * boundary. Kept in a small ring; a ticket the ring has overwritten makes
 * the writer sample when it gets there instead. */
#define GMP_SNAPS 64u
typedef struct gmp_snap {
    uint64_t ticket;
    uint64_t ts;
    uint64_t mask; /* devices sampled */
    uint64_t free_b[GMP_MAX_DEVICES];
    uint64_t total_b[GMP_MAX_DEVICES];
} gmp_snap;

#endif
