/*
 * The framework layer: with the PyTorch bridge a trace holds two views of
 * device memory, the allocator's blocks (tensors; BLOCK records) and what
 * CUDA handed out (CUPTI's ALLOC/FREE: the allocator's segments plus every
 * other library's memory). The who-tables take one of them as their
 * allocations (--layer); this module keeps the other numbers that make
 * "how much" whole: reserved bytes (the allocator's segments), memory
 * outside the allocator, the driver's used memory, and their values at the
 * allocated peak, with the free holes of the segments there.
 *
 * Pure bookkeeping, one instance per replay; no I/O.
 */
#ifndef GMEMPROF_ANALYZER_LAYER_H
#define GMEMPROF_ANALYZER_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "gmemprof/trace_format.h"

#define GMA_LAYER_DEVICES 64
#define GMA_LAYER_HOLES 3 /* the largest free holes kept at the peak */

typedef enum gma_layer_kind {
    GMA_LAYER_AUTO = 0,     /* blocks when the trace has them, else CUDA's allocations */
    GMA_LAYER_BLOCKS = 1,   /* the framework allocator's blocks */
    GMA_LAYER_SEGMENTS = 2, /* what CUDA handed out (CUPTI) */
    GMA_LAYER_COUNT_
} gma_layer_kind;
extern const char *const gma_layer_names[GMA_LAYER_COUNT_]; /* "auto", "blocks", "segments" */

/* Holes at the peak: computed only where segments are whole allocations
 * (not expandable segments, whose MAP/UNMAP pieces need not line up). */
typedef enum gma_holes_state {
    GMA_HOLES_NONE = 0,       /* no peak or no segment seen */
    GMA_HOLES_OK = 1,
    GMA_HOLES_EXPANDABLE = 2, /* the device maps segments piecewise */
    GMA_HOLES_BUDGET = 3      /* too many peaks to recompute them all */
} gma_holes_state;

typedef struct gma_layer_dev {
    uint64_t allocated, allocated_peak, allocated_peak_ts;
    uint64_t reserved, reserved_peak;
    uint64_t cuda, cuda_peak;           /* CUPTI's device bytes live */
    /* at the allocated peak */
    uint64_t at_peak_reserved, at_peak_cuda;
    uint64_t blocks, frees_pending;     /* live blocks; freed but not yet reusable (record_stream) */
    uint64_t ooms, oom_bytes;           /* failed requests, the largest */
    /* the driver's used memory at the sample nearest the allocated peak */
    uint64_t last_sample_ts, last_sample_used, peak_used, peak_used_ts;
    int has_sample, has_peak_used, want_after;
    /* free holes in the segments at the allocated peak */
    int holes_state, holes_dirty, expandable;
    uint64_t holes[GMA_LAYER_HOLES]; /* largest first, 0 unused */
    uint64_t holes_count, holes_bytes;
} gma_layer_dev;

/* (device, address) -> bytes, open addressing */
typedef struct gma_amap {
    uint64_t *keys, *vals;
    size_t cap, n;
} gma_amap;

typedef struct gma_layer {
    int seen;      /* the trace has BLOCK records */
    int err;       /* out of memory */
    gma_layer_dev dev[GMA_LAYER_DEVICES];
    gma_amap cudamap; /* CUPTI allocations: FREE records carry no size */
    gma_amap blockmap, segmap;
    uint64_t holes_work; /* entries sorted for holes so far (bounded) */
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
/* A reading of the driver's used memory (MEMSAMPLE, TAG). */
void gma_layer_sample(gma_layer *l, uint64_t device, uint64_t ts, uint64_t used);
/* The end of the trace: settles the holes of a peak reached last. */
void gma_layer_finish(gma_layer *l);
/* The block as the ALLOC/FREE the replay takes (source GMT_SRC_FRAMEWORK). */
void gma_layer_as_mem(const gmt_block *b, gmt_mem *m);
/* Bytes outside the framework's allocator: CUDA's live bytes less its
 * reserved bytes (0 when the reserve is larger: records in flight). */
static inline uint64_t gma_layer_outside(uint64_t cuda, uint64_t reserved) { return cuda > reserved ? cuda - reserved : 0; }
/* Reserved but not allocated at the allocated peak (cached or fragmented). */
static inline uint64_t gma_layer_unallocated(const gma_layer_dev *d)
{
    return d->at_peak_reserved > d->allocated_peak ? d->at_peak_reserved - d->allocated_peak : 0;
}
/* A device the layer has numbers for. */
static inline int gma_layer_dev_used(const gma_layer_dev *d) { return d->allocated_peak || d->reserved_peak; }

#endif
