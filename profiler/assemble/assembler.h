/*
 * The assembler (assembler.c): turns what the sources hand over into trace
 * records, in order. Pure: no thread, no lock, no global state, no CUDA or
 * CUPTI call, no I/O of its own. The writer thread (wthread.c) feeds it and
 * writes what it emits; tests/profiler/test_assembler.c feeds it synthetic
 * CUPTI records and events.
 *
 * Inputs, each round:
 *   1. the ring's events (gmp_asm_event_slot / _event_added / _events_done),
 *   2. the published schedule epochs (gmp_asm_take_epochs),
 *   3. CUPTI activity records (gmp_asm_stage, gmp_asm_stage_buffer),
 * then gmp_asm_drain. Records are joined with their API call through the
 * correlation table (thread, epoch, launch seq, range, API family), staged,
 * merged with the events in (epoch, time) order, gated by the window of
 * their epoch, and emitted through the io table; the live-allocation table,
 * the open NVTX ranges and the VMM address ranges are the assembler's own.
 */
#ifndef GMEMPROF_PROFILER_ASSEMBLER_H
#define GMEMPROF_PROFILER_ASSEMBLER_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "corrtab.h"
#include "epoch.h"
#include "evring.h"
#include "gmemprof/trace_format.h"

/* Everything the assembler needs from outside, as calls. */
typedef struct gmp_asm_io {
    void *ctx;
    void (*put)(void *ctx, const gmt_record *r);              /* one record to the trace */
    uint64_t (*intern)(void *ctx, const char *s, size_t n);   /* a string's id (n <= GMT_MAX_STRING) */
    void (*end_frame)(void *ctx);                              /* end the current frame */
    void (*stats)(void *ctx);                                  /* write a STATS record */
    /* a DEVICE record's fields for device d (name valid until the next call) */
    void (*device)(void *ctx, unsigned d, gmt_device *out);
    /* driver memory of device d now: 0, or -1 none */
    int (*meminfo)(void *ctx, unsigned d, uint64_t *free_b, uint64_t *total_b);
    /* the snapshot of a ticket: 1 with *out filled, 0 gone or none */
    int (*snapshot)(void *ctx, uint64_t ticket, gmp_snap *out);
    uint64_t (*now)(void *ctx);  /* the trace clock (ns) */
    uint64_t (*mono)(void *ctx); /* a monotonic clock (ns), for the sample period */
    void (*synced)(void *ctx, uint64_t ticket); /* a SYNC event was reached (its frame ended) */
    /* An allocation failed out of memory (a CUDA call, or the framework's
     * allocator): *o is filled as gmp_asm_fill_failure does, at the failure's
     * place in the order. NULL: failures are not reported. */
    void (*failure)(void *ctx, gmt_oom *o);
    /* What an io call asked for (GMP_ASM_ASK_*) is about to be written
     * through put and end_frame (begin 1), or was (begin 0): the io may
     * send it to a writer of its own. NULL: nothing is ever asked. */
    void (*asked)(void *ctx, int what, int begin);
} gmp_asm_io;

enum { GMP_ASM_ASK_BASELINE = 1, GMP_ASM_ASK_LIVE = 2 };

/* A record the gating rule keeps out of the trace (gmp_asm_set_aside). */
typedef void (*gmp_asm_aside_fn)(void *ctx, const gmt_record *r);

typedef struct gmp_asm gmp_asm;

/* Staging bytes for a host budget (activity records and events of a round). */
size_t gmp_asm_staging_bytes(size_t host_budget_bytes);
/* NULL when out of memory. corr: the correlation table the callbacks fill. */
gmp_asm *gmp_asm_create(const gmp_asm_io *io, const gmp_corrtab *corr, size_t host_budget_bytes);
void gmp_asm_destroy(gmp_asm *a);

/* ---- a round ---- */
/* Starts a round: `now` (the trace clock before the ring is read) is the
 * horizon no record of this round may pass unless the next round allows. */
void gmp_asm_round_begin(gmp_asm *a, uint64_t now);
/* A slot for the next event popped from the ring (NULL: the batch is full);
 * gmp_asm_event_added once it is filled, with what gmp_ring_pop returned
 * (GMP_RING_MARKED: its producer marked it). */
gmp_ev *gmp_asm_event_slot(gmp_asm *a);
void gmp_asm_event_added(gmp_asm *a, int popped);
/* The ring was read (`published`: the epoch published before the read). */
void gmp_asm_events_done(gmp_asm *a, uint32_t published);
/* 1 when epochs newer than those known were published (up to `published`). */
int gmp_asm_wants_epochs(const gmp_asm *a, uint32_t published);
/* Copies epochs up to `published` from the history ring `hist` (of
 * GMP_EPOCH_HIST entries, indexed by epoch modulo its size). */
void gmp_asm_take_epochs(gmp_asm *a, const gmp_epoch_info *hist, uint32_t published);
/* One activity record; makes room first by draining what can be written. */
void gmp_asm_stage(gmp_asm *a, const CUpti_Activity *rec);
/* Every record of a CUPTI buffer, read with next (cuptiActivityGetNextRecord). */
typedef CUptiResult (*gmp_asm_next_fn)(uint8_t *buf, size_t valid, CUpti_Activity **rec);
void gmp_asm_stage_buffer(gmp_asm *a, uint8_t *buf, size_t valid, gmp_asm_next_fn next);
/* Emits what is due: force (the end) emits everything. */
void gmp_asm_drain(gmp_asm *a, int force);
/* As gmp_asm_drain(a, 0) when buffers of this round were left for a later
 * one (an end request, a signal's deadline): a transition is applied, and an
 * event written, only before a staged record, since a buffer left may hold
 * records made before them. */
void gmp_asm_drain_held(gmp_asm *a);

/* ---- the writer's other calls ---- */
/* 1 while a transition that is known is not yet applied. */
int gmp_asm_epochs_pending(const gmp_asm *a);
/* The end: everything left, then WINDOW_END (with a STATS and a frame end)
 * or a STATS. */
void gmp_asm_finish(gmp_asm *a, int reason);
/* A MEMSAMPLE of every device when inside a window (or, with a put_aside,
 * outside one: aside) and period_ns have passed since the last one (mono:
 * the io's monotonic clock). */
void gmp_asm_sample_due(gmp_asm *a, uint64_t mono, uint64_t period_ns);

/* ---- the flight recorder (wthread.c, rsink.c, recorder.c) ---- */
/* WINDOW_BEGIN (window, step, ts) and the baseline of the live tables at
 * this moment through put, as a window begin writes them; changes nothing. */
void gmp_asm_put_baseline(gmp_asm *a, uint64_t ts, uint64_t window, uint64_t step);
/* From inside an io call (put, stats, a put_aside): the io wants a
 * baseline (as gmp_asm_put_baseline(ts, 0, step) writes it) of the tables
 * as they are now. The assembler writes it as soon as that call returns,
 * between io.asked(ctx, GMP_ASM_ASK_BASELINE, 1) and (..., 0), before
 * anything else: an io call never re-enters the assembler to write. */
void gmp_asm_ask_baseline(gmp_asm *a, uint64_t ts, uint64_t step);
/* The same from inside io.failure for the live set (gmp_asm_put_live), as
 * it is at the failure: a flight recorder's dump. */
void gmp_asm_ask_live(gmp_asm *a);
/* Fills what the assembler knows of a failure now: the op (the name of
 * o->range when open), the step when o->step is 0, the live count and
 * bytes, the framework allocator's allocated and reserved bytes. */
void gmp_asm_fill_failure(gmp_asm *a, gmt_oom *o);
/* One LIVE record per live allocation (device memory, then the framework's
 * live blocks), oldest first, through put. Returns the records written. */
uint64_t gmp_asm_put_live(gmp_asm *a);
/* The current step. */
uint64_t gmp_asm_step(const gmp_asm *a);
/* Where the records the gating rule keeps out of the trace (steps outside
 * every active window) go: to put_aside (with the io's ctx), for the flight
 * recorder beside a schedule of windows, which records the whole run;
 * KERNEL/MEMCPY/MEMSET too only when kernels. NULL (the default): such
 * records are not made. They are counted in `outside` either way: the
 * trace's accounting does not change. */
void gmp_asm_set_aside(gmp_asm *a, gmp_asm_aside_fn put_aside, int kernels);

/* How the name of a range begun outside every window is interned: no
 * record of the trace may ever name it, so intern_held (called with the
 * io's ctx) gives its id and holds its STRING back until a RANGE_BEGIN (a
 * window's baseline) or an OOM (its op) put names it. NULL (the default):
 * io.intern. */
typedef uint64_t (*gmp_asm_intern_fn)(void *ctx, const char *s, size_t n);
void gmp_asm_set_intern_held(gmp_asm *a, gmp_asm_intern_fn intern_held);

typedef struct gmp_asm_counts {
    uint64_t windows;       /* windows begun */
    uint64_t unmatched;     /* records whose API call was not found */
    uint64_t bad_records;   /* unreadable records, failed tables */
    uint64_t late;          /* records written after their window's WINDOW_END (not a drop) */
    uint64_t outside;       /* ALLOC/FREE/KERNEL/MEMCPY/MEMSET of steps outside every active window */
    uint64_t lost_epochs;   /* transitions lost to a writer far behind */
    uint64_t block_events;  /* framework allocator events */
    int fw_seen;            /* a framework allocator reported */
    size_t host_bytes;      /* the assembler's tables (STATS own_host_bytes) */
} gmp_asm_counts;
void gmp_asm_get_counts(const gmp_asm *a, gmp_asm_counts *out);

#endif
