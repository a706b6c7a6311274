/*
 * The N largest allocations of a pass, with their lifetimes, in memory
 * bounded by N: what the bounded Chrome export (--chrome-largest N) draws.
 *
 * A min-heap on (bytes, then the later first) holds the N kept so far; a
 * larger allocation takes the place of the smallest, an equal one does not
 * (of equal sizes, the earliest are kept). A map from the allocation's key
 * (device and address) to its slot finds it again at its free. An
 * allocation a window's baseline repeats (the same key and size, recorded
 * again at the window's start) goes on as the same allocation rather than
 * counting twice. gma_largest_finish sorts the kept ones by device and
 * start and puts each in a lane of its device where it overlaps no other,
 * since a viewer draws the slices of one track nested or apart, never
 * crossing (Perfetto's FAQ: overlapping JSON slices are not supported).
 */
#ifndef GMA_LARGEST_H
#define GMA_LARGEST_H

#include <stddef.h>
#include <stdint.h>

#include "util/gma_util.h"

/* A kept allocation. */
typedef struct gma_big {
    uint64_t key;          /* device and address (gma_largest_key) */
    uint64_t bytes;
    uint64_t t0, t1;       /* allocated, freed (t1 valid when state is not OPEN) */
    uint64_t live0, live1; /* the device's live bytes right after each (live1 valid when FREED) */
    uint64_t seq;          /* order of arrival */
    uint64_t step;
    uint32_t kname;        /* the kernel that made it (string id, GMA_NAME_*) */
    uint32_t entry;        /* its live entry in the replay while OPEN */
    uint32_t hpos;         /* its place in the heap */
    uint32_t lane;         /* gma_largest_finish: its lane in its device */
    uint8_t dev, state;
    uint8_t mapped;        /* its key is in the map */
} gma_big;

#define GMA_BIG_OPEN 0u    /* still live */
#define GMA_BIG_FREED 1u
#define GMA_BIG_DROPPED 2u /* its free was lost, or a window began without it */

typedef struct gma_largest {
    uint64_t cap;          /* N */
    gma_big *slot;         /* the kept allocations, at stable places */
    uint32_t *heap;        /* slot numbers, smallest at the top */
    size_t n, room;
    gma_map at;            /* key -> slot, while OPEN or DROPPED */
    uint64_t seq;
    uint64_t offered;      /* allocations seen (a repeated baseline once) */
    uint64_t bytes_offered;
} gma_largest;

static inline uint64_t gma_largest_key(uint64_t dev, uint64_t addr) { return addr ^ (dev << 58); }

void gma_largest_init(gma_largest *l, uint64_t n);
void gma_largest_release(gma_largest *l);

/* An allocation starts. baseline: it was recorded at a window's start (a
 * repeat of one already live, when the same key and size are kept open or
 * dropped); first_baseline: that window is the first one counted, whose
 * baseline is new. 0, or -1 out of memory. */
int gma_largest_alloc(gma_largest *l, const gma_big *b, int baseline, int first_baseline);
/* It ends: freed at ts with the device's live bytes after it, or dropped. */
void gma_largest_freed(gma_largest *l, uint64_t key, uint64_t ts, uint64_t live1, uint32_t kname);
void gma_largest_dropped(gma_largest *l, uint64_t key, uint64_t ts, uint32_t kname);

/* The kept allocations sorted by device, then start, then arrival, each
 * with its lane (those still open end at end_ts); *nlanes[dev] the lanes
 * of each device (an array of at least 256). NULL when none or out of
 * memory (*oom set). The result belongs to l. */
const gma_big *gma_largest_finish(gma_largest *l, uint64_t end_ts, uint32_t *nlanes, size_t *n, int *oom);

#endif
