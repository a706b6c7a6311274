/*
 * gmt_synth: a deterministic synthetic "training-like" trace.
 *
 * The model is a small transformer trained with a torch.profiler-like
 * schedule (wait, warmup, active steps, repeated): one host thread launches
 * per active step a forward pass (embedding, `layers` x 11 kernels), a
 * backward pass (about twice as many), an optimizer step and a loss, with
 * allocations from a stream-ordered pool (cudaMallocAsync-like, exact sizes,
 * the lowest free address of a size first, as PyTorch's allocator picks, so
 * a steady loop reuses the same addresses every step) made just before the
 * kernel that writes them and freed after their last use.  Weights, gradients and AdamW state
 * are allocated before the first window and reported as the baseline of
 * every window.  NVTX ranges nest forward > layer.N, backward > layer.N,
 * optimizer; TAG snapshots mark the start and end of each active step;
 * MEMSAMPLE records come every 100 ms (the profiler's default period) inside
 * windows.  Timing:
 * host API calls cost a few microseconds with jitter (ns resolution), GPU
 * kernel times are multiples of 32 ns with about 2 % jitter, and the host
 * runs ahead of the GPU as in a GPU-bound training loop.
 *
 * Same options, same seed: the same records, byte for byte.
 * docs/trace-format.md describes the stream and its measured size.
 */
#ifndef GMEMPROF_GMT_SYNTH_H
#define GMEMPROF_GMT_SYNTH_H

#include <stdint.h>

#include "gmt_io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gmt_synth_opts {
    uint64_t events;   /* stop after about this many records (0: no limit) */
    uint64_t steps;    /* stop after this many steps, all phases (0: no limit) */
    uint64_t seed;     /* any value; 0 is a valid seed */
    unsigned wait;     /* schedule: steps per phase; all three 0 means 1,1,3 */
    unsigned warmup;
    unsigned active;
    unsigned layers;   /* transformer layers, 1..256; 0 means 12 */
    /* one rank of a data-parallel run: the header's rank and world size;
     * the rank drives device rank % 8 and allocates (rank % 8 + 1) x 8 MiB
     * of its own with cudaMalloc before the first window (part of the
     * baseline), as NCCL does. has_rank 0: no rank, as before. */
    int has_rank;
    uint64_t rank;
    uint64_t world_size; /* 0: unset */
} gmt_synth_opts;

typedef struct gmt_synth_summary {
    uint64_t records;                       /* records emitted */
    uint64_t by_type[GMT_REC_TYPE_MAX_];    /* records per type */
    uint64_t steps;                         /* STEP records */
    uint64_t windows;                       /* WINDOW_BEGIN records */
    uint64_t frame_edges;                   /* times the generator asked for a frame end */
    uint64_t first_ts, last_ts;             /* trace clock, ns */
    uint64_t baseline_bytes;                /* live at the first window begin */
    uint64_t alloc_bytes;                   /* ALLOC bytes in windows, baseline excluded */
    uint64_t free_bytes;                    /* FREE bytes in windows */
    uint64_t peak_live_bytes;               /* device bytes live at the peak, baseline included */
    uint64_t peak_step;                     /* step of that peak */
    /* filled by gmt_synth_write only */
    uint64_t bytes_in;                      /* encoded bytes before compression */
    uint64_t bytes_out;                     /* compressed bytes (the file size) */
    uint64_t frames;
    double gen_seconds;                     /* wall time of the whole run */
} gmt_synth_summary;

/* Receives each record in order; r == NULL asks for a frame end here (a
 * window edge, or one second of trace time since the last edge), as the
 * profiler does.  A status other than GMT_OK stops the generator. */
typedef gmt_status (*gmt_synth_sink)(void *ctx, const gmt_record *r);

void gmt_synth_opts_default(gmt_synth_opts *o);

/* Generates the trace into sink (NULL sink: generate and count only).
 * GMT_E_ARG when neither events nor steps is set or an option is out of
 * range.  *sum (optional) is filled even on error. */
gmt_status gmt_synth_run(const gmt_synth_opts *o, gmt_synth_sink sink, void *ctx, gmt_synth_summary *sum);

/* Runs the generator into w, ending frames where it asks; does not close w. */
gmt_status gmt_synth_to_writer(const gmt_synth_opts *o, gmt_writer *w, gmt_synth_summary *sum);

/* Writes a whole trace to path (created/truncated).  wo may be NULL. */
gmt_status gmt_synth_write(const char *path, const gmt_synth_opts *o, const gmt_writer_opts *wo,
                           gmt_synth_summary *sum);

#ifdef __cplusplus
}
#endif
#endif
