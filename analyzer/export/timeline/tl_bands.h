/*
 * The allocations a memory timeline draws, one band each: address, size,
 * alloc and free times, the kernel and range that made it, its step and
 * its layer. Filled during the replay (export_timeline.c calls these from
 * the replay's alloc/free/kernel hooks), read once at the end.
 *
 * A layer is one set of allocations seen by one allocator level: the CUPTI
 * allocations, or with the PyTorch bridge the allocator's blocks (tensors);
 * the bridge's reserved segments and CUDA's own allocations beside them are
 * further sets (export_timeline.c keeps one gtb_set per layer: a block and
 * its segment share an address).
 *
 * Memory: one 72-byte band per allocation, up to max bands, in a map of
 * a temporary file (spill.h: gma_big); later allocations are counted
 * (left_out) but not kept.
 */
#ifndef GTB_BANDS_H
#define GTB_BANDS_H

#include <stddef.h>
#include <stdint.h>

#include "util/gma_util.h"

#define GTB_OPEN UINT64_MAX /* t1 of a band never freed */

typedef struct gtb_band {
    uint64_t addr, bytes;
    uint64_t t0, t1;       /* alloc and free, trace clock ns; t1 GTB_OPEN: never freed */
    uint64_t step;
    uint64_t seq;          /* order of its gtb_alloc: ties of t0 keep it */
    uint32_t kname, rname; /* kernel and range string ids (GMA_NAME_* allowed) */
    uint32_t stream;
    uint32_t pend_next;    /* next band waiting for the same kernel, index + 1 */
    uint8_t device, layer;
    uint8_t source;        /* gmt_mem_source: the CUDA allocations of a layer */
    uint8_t pad_[5];
} gtb_band;

typedef struct gtb_set {
    gtb_band *b;
    size_t n, cap, max;
    uint64_t left_out, left_out_bytes; /* allocations past max */
    gma_map open;          /* (device, address) -> band */
    gma_map pend;          /* kernel wait key -> newest band waiting for it */
    int err;               /* an allocation failed: bands are missing */
} gtb_set;

/* max: most bands kept (0: a default of 1 << 24). */
void gtb_init(gtb_set *s, size_t max);
void gtb_free(gtb_set *s);
/* A new allocation (b: every field but t1, seq and pend_next). baseline: a
 * window's repetition of the live set; an open band of the same address
 * and size goes on instead of a new one. pending: the kernel is not known
 * yet and comes with gtb_settle(key). 0, or -1 out of memory (s->err). */
int gtb_alloc(gtb_set *s, const gtb_band *b, int baseline, int pending, uint64_t key);
/* The allocation at (device, addr) was freed at ts (ignored when unknown). */
void gtb_release(gtb_set *s, unsigned device, uint64_t addr, uint64_t ts);
/* The range [addr, addr + bytes) of device was released at ts (expandable
 * segments unmap part of a mapping, or several at once): every open band
 * it touches ends, and the parts of them outside the range go on as new
 * bands from ts. 0, or -1 out of memory (s->err). */
int gtb_release_range(gtb_set *s, unsigned device, uint64_t addr, uint64_t bytes, uint64_t ts);
/* The bands waiting for key learn their kernel. */
void gtb_settle(gtb_set *s, uint64_t key, uint32_t kname);

#endif
