/*
 * NVTX ranges: the open instances by id, the recently closed ones, the row
 * of each range name (names that differ only in their sequence numbers
 * share one, gma_nvtx_base_len), and the sums of an allocation's range and
 * its ancestors.
 */
#ifndef GMA_RANGES_H
#define GMA_RANGES_H

#include "replay_int.h"

/* Adds an alloc or free of a range instance to the rows of the range and
 * its ancestors (acc: accounted); returns the range's name. */
uint32_t gma_range_account(gma_replay *r, uint64_t range, uint64_t bytes, int is_alloc, uint64_t live_after, int acc);
/* RANGE_BEGIN and RANGE_END records. */
void gma_on_range_begin(gma_replay *r, const gmt_range *g);
void gma_on_range_end(gma_replay *r, const gmt_range *g);
/* Entry e, live at its device's current peak, is freed by m: its
 * lifetime class and owner for the hints (gma.h, GMA_HC_*). */
void gma_range_class_at_free(const gma_replay *r, gma_entry *e, const gmt_mem *m);
/* Closes open instance i at ts (its end, or the trace's). */
void gma_range_close(gma_replay *r, uint32_t i, uint64_t ts);

/* gma_range_account's common case inline: no range rows to add to (the default
 * tables) and the same range instance as the previous event (chain_hit:
 * the cached instance when that holds, else 0). */
static inline uint32_t range_of_event(gma_replay *r, uint64_t range, uint64_t bytes, int is_alloc, uint64_t live_after,
                                      int acc)
{
    if (range && range == r->chain_hit)
        return r->chain_name;
    return gma_range_account(r, range, bytes, is_alloc, live_after, acc);
}

#endif
