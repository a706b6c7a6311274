/*
 * The devices of a trace and its time span, as the replay meets them: the
 * device of a record (the last one kept, one compare per record), the first
 * and last time seen, and the driver's view of used memory.
 */
#ifndef GMA_DEVTIME_H
#define GMA_DEVTIME_H

#include "replay_int.h"

/* The device d, marked present (a device event to the consumers the first
 * time); NULL past GMA_MAX_DEVICES. */
gma_dev *gma_dev_get_slow(gma_replay *r, uint64_t d);
/* The first time seen: out of line, see note_ts. */
void gma_note_first(gma_replay *r, uint64_t ts);
/* A reading of the driver's used memory on device D at ts. */
void gma_sample_update(gma_dev *D, uint64_t ts, uint64_t used, uint64_t total);

/* The device of a record, NULL past GMA_MAX_DEVICES. The last one's id is
 * kept (not its address: the rows are inside the replay, which its owner
 * may move between records): one compare instead of the range test and the
 * present flag. */
static inline gma_dev *dev_get(gma_replay *r, uint64_t d)
{
    if (d == r->last_dev)
        return &r->dev[d];
    return gma_dev_get_slow(r, d);
}

/* The first time seen is out of line (gma_note_first): first_ts starts at
 * UINT64_MAX, so that the hot path below is two compares and no has_ts test. */
static inline void note_ts(gma_replay *r, uint64_t ts)
{
    /* <=: a time of UINT64_MAX still counts as seen */
    if (__builtin_expect(ts <= r->first_ts, 0))
        gma_note_first(r, ts);
    if (ts > r->last_ts)
        r->last_ts = ts;
}

/* note_ts(a) then note_ts(b), as a kernel's start and end: one test each
 * way on their min and max. */
static inline void note_ts2(gma_replay *r, uint64_t a, uint64_t b)
{
    uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
    if (__builtin_expect(lo <= r->first_ts, 0)) {
        note_ts(r, a);
        note_ts(r, b);
        return;
    }
    if (hi > r->last_ts)
        r->last_ts = hi;
}

#endif
