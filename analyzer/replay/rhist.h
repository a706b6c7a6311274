/*
 * The recently closed ranges: a range id's value (a uint32 the consumer
 * chooses: a module node, an index into its own records) stays findable
 * while the range is open and for the next `cap` closes after its own.
 * The PyTorch bridge's blocks reach the trace after the op that made them
 * has ended (their sizes wait for the allocator's next reading) and still
 * name the op's range, so a consumer that walks a block's ranges keeps its
 * values in one of these, one instance per consumer.
 *
 * The window is bounded because a trace of 10^8 ranges would otherwise keep
 * 10^8 map entries (4 GiB of buckets at load 1/2); with cap 65536 it keeps
 * the open ranges and 65536 closed ones: a 512 KiB ring of ids and 2 to
 * 4 MiB of map. Per event: one map probe or two, no allocation
 * beyond the map's own growth.
 *
 * Range id 0 (no range, trace_format.h) is never kept. A closed id takes a
 * ring slot at each close while it is kept (an id closed twice, or reused
 * and closed again): the first of its slots to fall out forgets it, even if
 * it was put again since.
 */
#ifndef GMA_RHIST_H
#define GMA_RHIST_H

#include <stddef.h>
#include <stdint.h>

#include "util/gma_util.h"

typedef struct gma_rhist {
    gma_map of;     /* id -> value: the ranges put and not yet fallen out */
    uint64_t *ring; /* the ids closed while kept, oldest at next & (cap - 1); 0 empty */
    size_t cap, next;
} gma_rhist;

/* cap: the closes an id is kept for, a power of two. 0, or -1 when cap is
 * not one or out of memory (h is then empty; gma_rhist_free is safe). */
int gma_rhist_init(gma_rhist *h, size_t cap);
void gma_rhist_free(gma_rhist *h);

/* The ids kept now (0: nothing to look up, a cheap early out). */
static inline size_t gma_rhist_count(const gma_rhist *h) { return h->of.count; }

/* Keeps id -> value (a range opens, or a consumer decides to remember it);
 * an id kept already takes the new value. 0, or -1 out of memory. */
static inline int gma_rhist_put(gma_rhist *h, uint64_t id, uint32_t value)
{
    return id ? gma_map_put(&h->of, id, value) : 0;
}

/* 1 and *value when id is kept, else 0. */
static inline int gma_rhist_get(const gma_rhist *h, uint64_t id, uint32_t *value)
{
    return gma_map_get(&h->of, id, value);
}

/* Range id closed: when it is kept, it starts its last cap closes, and the
 * id closed cap closes ago falls out. Returns 1 and *evicted (may be NULL)
 * with the value of the id that fell out, for the consumer to recycle; 0
 * when none did (id not kept, the ring not full yet, or that id forgotten
 * already). */
static inline int gma_rhist_closed(gma_rhist *h, uint64_t id, uint32_t *evicted)
{
    uint32_t v;
    if (!id || !gma_map_get(&h->of, id, &v))
        return 0;
    uint64_t *slot = &h->ring[h->next++ & (h->cap - 1)];
    uint64_t old = *slot;
    *slot = id;
    return old && gma_map_del(&h->of, old, evicted);
}

#endif
