/*
 * Hints: the default report's short section, the part of --insights
 * (insights.h) that costs the replay nothing it does not already keep.
 *
 * The classes of --insights need, for each allocation live at the peak, its
 * op and step at both ends. The replay already keeps every allocation live
 * at a device's peak (the "Live at the peak" section: entries freed after
 * the peak they were live at stay in the pool, GMA_E_KEEP_PEAK). An entry
 * freed while it was live at the current peak was live at the final peak or
 * at none: the final peak, if it holds the entry, was set before the free.
 * So the class can be decided at that free, once per kept entry, from what
 * the entry noted at its allocation (thread, launch count, range instance:
 * three stores) and what the free record says; the replay does it
 * (ranges.h, gma_range_class_at_free), since the rule needs its ops.
 * Entries still live, or dropped without a free, are persistent.
 *
 * gma_hints_build then sums the classes (the same bytes as --insights's
 * persistent, step-scoped, temporary and outside classes; reserved but
 * unallocated from the layer's numbers) and keeps a hint only when its
 * number crosses its threshold below. Growth uses the steps' live bytes
 * that the replay keeps for --by step.
 */
#ifndef GMA_HINTS_H
#define GMA_HINTS_H

#include <stdio.h>

#include "gma.h"

/* Thresholds: a hint is shown when its number reaches them. */
#define GMA_HINT_TEMP_PCT 20u     /* temporaries, % of the peak */
#define GMA_HINT_STEP_PCT 50u     /* step-scoped, % of the peak */
#define GMA_HINT_RESERVED_PCT 20u /* reserved but unallocated, % of the reserve (the bridge) */
#define GMA_HINT_GROWTH_PCT 5u    /* growth over the complete steps, % of the peak */
#define GMA_MAX_HINTS 6           /* lines at most */

typedef enum gma_hint_kind {
    GMA_HINT_TEMP,
    GMA_HINT_STEP,
    GMA_HINT_RESERVED,
    GMA_HINT_GROWTH,
    GMA_HINT_KINDS_
} gma_hint_kind;

extern const char *const gma_hint_names[GMA_HINT_KINDS_];

typedef struct gma_hint {
    unsigned device;          /* GMA_HINT_ALL_DEVICES: growth over several devices */
    gma_hint_kind kind;
    uint64_t bytes;           /* the number */
    uint64_t whole;           /* what its share is of: the peak, or the reserve */
    char owner[200];          /* the first owner ("" none) and its bytes */
    uint64_t owner_bytes;
    /* growth: live bytes at the end of the complete steps of the peak's window */
    uint64_t step_first, step_last, first, last, grew;
    int64_t slope;            /* bytes per step, least squares */
} gma_hint;
#define GMA_HINT_ALL_DEVICES 0xFFFFFFFFu

/* The classes at one device's peak, whether or not a hint is shown. */
typedef struct gma_hint_dev {
    unsigned device;
    uint64_t peak;
    uint64_t persistent, step, temp, outside, reserved;
    uint64_t reserve;         /* with the bridge: reserved at the allocated peak */
    int outside_known, reserved_known;
} gma_hint_dev;

typedef struct gma_hints {
    gma_hint_dev dev[GMA_MAX_DEVICES];
    size_t ndev;
    gma_hint hint[GMA_MAX_HINTS];
    size_t n;
} gma_hints;

/* The hints of a finished replay. 0, or -1 on OOM. */
int gma_hints_build(gma_hints *h, const gma_replay *r);
/* The share of a hint, 0..1. */
double gma_hint_share(const gma_hint *h);
/* Its reason and what to try, as text (for the table and the JSON). */
void gma_hint_reason(const gma_hint *h, char *out, size_t cap);
const char *gma_hint_try(const gma_hint *h);


#endif
