/*
 * The framework layer: with the PyTorch bridge a trace holds two views of
 * device memory, the allocator's blocks (tensors; BLOCK records) and what
 * CUDA handed out (CUPTI's ALLOC/FREE: the allocator's segments plus every
 * other library's memory). The who-tables take one of them as their
 * allocations (--layer); this module keeps the other numbers that make
 * "how much" whole: reserved bytes (the allocator's segments), memory
 * outside the allocator, and their values at the allocated peak.
 *
 * Pure bookkeeping, one instance per replay; no I/O.
 */
#ifndef GMEMPROF_ANALYZER_LAYER_H
#define GMEMPROF_ANALYZER_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "gmemprof/trace_format.h"

#define GMA_LAYER_DEVICES 64

typedef enum gma_layer_kind {
    GMA_LAYER_AUTO = 0,     /* blocks when the trace has them, else CUDA's allocations */
    GMA_LAYER_BLOCKS = 1,   /* the framework allocator's blocks */
    GMA_LAYER_SEGMENTS = 2  /* what CUDA handed out (CUPTI) */
} gma_layer_kind;

typedef struct gma_layer_dev {
    uint64_t allocated, allocated_peak, allocated_peak_ts;
    uint64_t reserved, reserved_peak;
    uint64_t cuda, cuda_peak;           /* CUPTI's device bytes live */
    /* at the allocated peak */
    uint64_t at_peak_reserved, at_peak_cuda;
    uint64_t blocks, frees_pending;     /* live blocks; freed but not yet reusable (record_stream) */
    uint64_t ooms, oom_bytes;           /* failed requests, the largest */
} gma_layer_dev;

typedef struct gma_layer {
    int seen;      /* the trace has BLOCK records */
    gma_layer_dev dev[GMA_LAYER_DEVICES];
    /* CUPTI allocations by (device, address) -> bytes, for FREE records
     * that carry no size: open addressing */
    uint64_t *keys, *vals;
    size_t cap, n;
} gma_layer;

void gma_layer_init(gma_layer *l);
void gma_layer_free(gma_layer *l);
/* A BLOCK record. Returns 1 when it is a block alloc or free that the
 * blocks layer replays as an allocation (the caller does that), else 0. */
int gma_layer_block(gma_layer *l, const gmt_block *b);
/* A window begins: its baseline records say again what is live. */
void gma_layer_window_begin(gma_layer *l);
/* A CUPTI ALLOC (is_alloc) or FREE of device memory. -1 out of memory. */
int gma_layer_cuda(gma_layer *l, const gmt_mem *m, int is_alloc);
/* The block as the ALLOC/FREE the replay takes (source GMT_SRC_FRAMEWORK). */
void gma_layer_as_mem(const gmt_block *b, gmt_mem *m);
/* Bytes outside the framework's allocator: CUDA's live bytes less its
 * reserved bytes (0 when the reserve is larger: records in flight). */
static inline uint64_t gma_layer_outside(uint64_t cuda, uint64_t reserved) { return cuda > reserved ? cuda - reserved : 0; }

#endif
