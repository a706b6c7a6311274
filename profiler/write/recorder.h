/*
 * The flight recorder's ring (recorder.c): the last steps of the trace,
 * compressed as the trace is, in memory, so that a failure can write them
 * (wthread.c, rsink.c). Pure data structure: no thread, lock, clock or CUDA call;
 * the writer thread owns it.
 *
 * The ring is a list of chunks, oldest first. A chunk begins at a step (its
 * STEP record) or at a split (the chunk grew past a quarter of the cap, or,
 * in a program without steps, a quarter of the time span passed), and
 * holds two streams of whole zstd frames made by writers without a
 * preamble: its baseline (a WINDOW_BEGIN and the allocations live when it
 * began) and its records. Any chunk's baseline followed by the records of
 * it and of every later chunk is a window; a dump writes the oldest one's.
 *
 * What is kept: when a step begins, the chunks before the one where the
 * (steps + 1)-th newest step began are dropped (the failing step and the
 * `steps` steps before it stay); when no step beyond the first was ever
 * seen, the chunks that ended more than span_ns ago; and, whatever the
 * steps, the oldest chunks while the memory held exceeds cap_bytes. The
 * chunk being filled is never dropped: its bytes past the cap are not kept
 * (counted in gmp_rec_stats.lost_bytes; the writer splits well before).
 */
#ifndef GMEMPROF_PROFILER_RECORDER_H
#define GMEMPROF_PROFILER_RECORDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct gmp_rec gmp_rec;

/* NULL when out of memory. */
gmp_rec *gmp_rec_create(uint64_t steps, uint64_t span_ns, uint64_t cap_bytes);
void gmp_rec_destroy(gmp_rec *r);

/* The writers' sinks (gmt_sink_fn, ctx = the ring): bytes of the current
 * chunk's records, and of its baseline. Never fail. */
int gmp_rec_sink_records(void *ctx, const uint8_t *bytes, size_t n);
int gmp_rec_sink_baseline(void *ctx, const uint8_t *bytes, size_t n);

/* Ends the current chunk (if any) and begins one at step (is_step: at the
 * step's STEP record; 0: a split), at ts, the trace-clock time of the
 * record that begins it; drops what the rules say. Times are the records'
 * own, never the writer's clock when it gets to them, so what a dump keeps
 * depends on when things happened, not on when the writer ran. -1 when
 * out of memory (the current chunk then goes on). */
int gmp_rec_begin(gmp_rec *r, uint64_t step, int is_step, uint64_t ts);
/* The counts of the current chunk so far: its baseline's records and
 * frames, its own. */
void gmp_rec_set_counts(gmp_rec *r, uint64_t base_records, uint64_t base_frames, uint64_t records,
                        uint64_t frames);

/* The current chunk: its bytes (baseline included) and when it began. */
size_t gmp_rec_current_bytes(const gmp_rec *r);
uint64_t gmp_rec_current_start(const gmp_rec *r);

typedef struct gmp_rec_chunk {
    const uint8_t *base, *recs;
    size_t base_n, recs_n;
    uint64_t base_records, base_frames, records, frames;
    uint64_t step;
    int is_step;
} gmp_rec_chunk;

/* Chunks kept, oldest first; 0 with *c filled, -1 for i out of range. */
size_t gmp_rec_count(const gmp_rec *r);
int gmp_rec_get(const gmp_rec *r, size_t i, gmp_rec_chunk *c);

typedef struct gmp_rec_stats {
    size_t bytes;        /* memory held now: the chunks' buffers */
    size_t peak;         /* the most it held */
    size_t cap;          /* the cap */
    uint64_t trimmed;    /* chunks dropped by the cap that the step or time rule would have kept */
    uint64_t lost_bytes; /* bytes of the current chunk not kept (over the cap on its own) */
} gmp_rec_stats;
void gmp_rec_get_stats(const gmp_rec *r, gmp_rec_stats *out);

#endif
