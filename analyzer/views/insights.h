/*
 * Insights: what the peak is made of, and what to try (--insights).
 *
 * During the replay pass the module keeps one small record per device
 * allocation (its lifetime in memory events, its step, thread, kernel and
 * op at both ends), the kernels' times per thread and the op boundaries;
 * replay.c feeds it through the hooks below, as it feeds the timeline.
 * Once the replay has finished, gma_insights_build answers, per device:
 *   1. the peak by class, with the top owners of each class: on a trace
 *      with the PyTorch bridge's blocks the memory categories (category.h:
 *      parameter, gradient, optimizer state, activation, temporary, ...,
 *      allocator cache, outside the allocator); elsewhere, where categories
 *      cannot be known, by lifetime (persistent, step-scoped, temporary,
 *      outside the framework's allocator, reserved but unallocated);
 *   2. fragmentation at the peak (with the PyTorch bridge);
 *   3. growth across steps per owner, leak suspects ranked by slope;
 *   4. lifetime waste: allocations idle for most of their lifetime;
 *   5. what-if: the peak if the largest movable owner were freed one op
 *      earlier, and if one layer's activations were recomputed (a layer:
 *      an op found again in every step by its name and its number among
 *      the ops of that name in the step), by replaying the allocations.
 * The classes are defined in docs/analyzer.md ("Insights"); the default
 * report's hints (hints.h) are their cheap part.
 *
 * Memory: a 152-byte record per device allocation and 32 bytes per kernel,
 * in temporary files (spill.h), so RSS stays bounded; 48 bytes per op in
 * memory. The records are replayed several times over, so the section is
 * asked for (--insights), not part of every run.
 */
#ifndef GMA_INSIGHTS_H
#define GMA_INSIGHTS_H

#include <stdio.h>

#include "category.h"
#include "gma.h"
#include "table.h"

struct gma_insights;

/* Starts collecting on r (before its pass). 0, or -1 on OOM. */
int gma_insights_open(gma_replay *r);

/* ---- results ----------------------------------------------------------------- */

typedef enum gma_ins_class_id {
    GMA_IC_PERSISTENT,
    GMA_IC_STEP,
    GMA_IC_TEMP,
    GMA_IC_OUTSIDE,
    GMA_IC_RESERVED,
    GMA_IC_COUNT_
} gma_ins_class_id;

extern const char *const gma_ins_class_names[GMA_IC_COUNT_];

/* The most classes of a vocabulary: the categories' (gma_cat). */
#define GMA_INS_CLASSES GMA_CAT_COUNT_

/* 1 when r's insights speak categories: the trace has the bridge's blocks
 * and the replay collected their categories (gma_category_finish). */
int gma_insights_categories(const gma_replay *r);

typedef struct gma_ins_owner {
    size_t name;            /* offset in the result's strs */
    uint64_t bytes, count;
    int64_t slope;          /* growth: bytes per step */
    uint64_t first, last;   /* growth: live at the end of the first and last step */
    uint64_t grew;          /* growth: steps that ended higher than the one before */
} gma_ins_owner;

typedef struct gma_ins_class {
    int known;              /* the trace can tell this class apart */
    uint64_t bytes, count;
    gma_vec owners;         /* gma_ins_owner, largest first */
} gma_ins_class;

typedef struct gma_ins_dev {
    unsigned device;
    uint64_t peak, ts, step, window;
    int64_t peak_ns;        /* ts from the trace's origin */
    uint64_t live_sum;      /* bytes of the records live at the peak (== peak) */
    /* by the result's vocabulary: gma_ins_class_id, or gma_cat */
    gma_ins_class cls[GMA_INS_CLASSES];
    /* with categories: the lifetime split too (persistent, step-scoped,
     * temporary: bytes and count), what the report's hints use */
    uint64_t life[GMA_IC_OUTSIDE], life_count[GMA_IC_OUTSIDE];
    /* 2. fragmentation (has_fw: the bridge's numbers) */
    int has_fw, expandable;
    uint64_t fw_allocated, fw_reserved, fw_cuda, largest_request, oom_bytes, ooms;
    uint64_t largest_hole;  /* the largest free range inside a segment at the peak */
    uint64_t segments;      /* segments (or mapped pieces) live at the peak */
    /* 3. growth over the complete steps step_first..step_last */
    uint64_t step_first, step_last, nsteps;
    int64_t total_slope;
    uint64_t total_first, total_last;
    gma_vec growth;         /* gma_ins_owner, suspects by slope */
    /* 4. lifetime waste (a hint) */
    uint64_t idle_count, idle_bytes, idle_at_peak, idle_at_peak_count;
    gma_vec idle_owners;    /* gma_ins_owner: bytes at the peak */
    /* 5. what-if */
    int has_whatif;
    size_t whatif_owner;
    uint64_t whatif_count, whatif_moved_at_peak, whatif_base, whatif_peak;
    int has_base;           /* whatif_base computed */
    /* 5b. what-if: the activations of one layer recomputed in every step.
     * A layer is the rc_ordinal-th op (top-level range) named rc_layer of
     * each step; rc_begin..rc_end its forward in the peak's step, rc_back
     * when its backward window begins there */
    int has_recompute;
    size_t rc_layer;
    uint32_t rc_ordinal;
    uint64_t rc_begin, rc_end, rc_back;
    int64_t rc_begin_ns, rc_end_ns, rc_back_ns; /* the same from the trace's origin */
    uint64_t rc_count, rc_bytes, rc_steps, rc_at_peak, rc_peak;
    uint64_t unordered;     /* memory records older than the one before them (the replay's note) */
    uint64_t not_kept;      /* allocations past the records kept (GMI_MAX_RECS): the classes are partial */
} gma_ins_dev;

typedef struct gma_ins_result {
    const gma_replay *r;    /* while building; the printers read the fields below */
    const char *path;
    char warning[400];      /* the trace's warning (gma_trace_warning), "" none */
    gma_ins_dev dev[GMA_MAX_DEVICES];
    size_t ndev;
    gma_strs strs;
    const char *owner_kind; /* "module" with nn.Module ranges, "op" with NVTX ranges, else "kernel" */
    /* the classes' vocabulary: categories (gma_cat) or lifetimes
     * (gma_ins_class_id); its size, names, and where the two layers beside
     * the blocks are */
    int categories;
    unsigned ncls, ic_outside, ic_cache;
    const char *const *cls_names;
} gma_ins_result;

/* Builds the insights of a finished replay that collected (gma_insights_open),
 * in categories where r has them (gma_insights_categories). 0, or -1 on OOM. */
int gma_insights_build(gma_ins_result *res, const gma_replay *r);
/* The same in a vocabulary chosen (categories 0: lifetimes; 1: categories,
 * which r must have), for --diff: both runs in one. */
int gma_insights_build_in(gma_ins_result *res, const gma_replay *r, int categories);
void gma_insights_result_free(gma_ins_result *res);
static inline const char *gma_ins_str(const gma_ins_result *res, size_t off) { return gma_strs_get(&res->strs, off); }

/* The findings as one table: a row per class, owner, finding; every row a
 * number, a reason and what to try. b: --diff's other run (NULL none). */
int gma_insights_table(gma_table *t, const gma_ins_result *a, const gma_ins_result *b, uint64_t top);
/* Prints the insights with printer p (print.h; b: NULL, or --diff's other run). */
struct gma_printer;
int gma_insights_print(FILE *f, const struct gma_printer *p, const gma_replay *a, const gma_replay *b);

#endif
