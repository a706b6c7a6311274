/*
 * The report of one finished replay: what every output format prints,
 * computed once -- the summary totals, the ranked table of --by rows
 * (tables.h), the allocations live at each device's peak, the leaks, and
 * the warnings. The printing layer (print.h) formats it.
 */
#ifndef GMA_REPORT_H
#define GMA_REPORT_H

#include "category.h"
#include "gma.h"
#include "hints.h"
#include "oom.h"
#include "owners.h"
#include "table.h"

/* ---- live at the peak, leaks ---------------------------------------------- */

typedef struct gma_group {
    size_t name;            /* offset in the report's strs */
    uint64_t bytes, count;
} gma_group;

typedef struct gma_peakview {
    unsigned device;
    uint64_t peak, ts, step, window;
    size_t kernel, range;   /* display names (report strs) */
    uint64_t count, bytes;  /* allocations live at the peak; bytes == peak */
    uint64_t baseline_bytes, baseline_count;
    gma_vec by_kernel, by_range;  /* gma_group, largest first, baseline excluded */
    uint64_t more_kernels, more_ranges; /* groups beyond --top */
    /* PyTorch's terms (owners.h): the peak's module and line (report strs,
     * 0 not named), the groups by module and line, and the bytes of each
     * category at the peak (has_cats: the trace's blocks were classified) */
    size_t module, line;
    gma_owngroups own;
    int has_cats;
    uint64_t cats[GMA_CAT_COUNT_];
} gma_peakview;

typedef struct gma_leakview {
    uint64_t bytes, count;
    int at_trace_end;       /* a window had no end: measured at the trace end */
    gma_vec by_kernel, by_range;
    uint64_t more_kernels, more_ranges;
    gma_owngroups own;      /* by module and line (owners.h) */
    gma_vec growth;         /* gma_growth: owners that leaked in several steps */
    uint64_t more_growth;
} gma_leakview;

/* ---- the whole report ----------------------------------------------------- */

#define GMA_MAX_WARN 12
#define GMA_WARN_LEN 400 /* bytes of one warning, its NUL included */

typedef struct gma_report {
    const gma_replay *r;
    gma_table table;
    gma_peakview peaks[GMA_MAX_DEVICES];
    size_t npeaks;
    gma_leakview leaks;
    gma_hints hints;        /* the short section of --insights (hints.h) */
    gma_oom_view oom;       /* the trace's failures, printed first (oom.h) */
    gma_strs strs;
    char warn[GMA_MAX_WARN][GMA_WARN_LEN];
    size_t nwarn;
    char notes[GMA_MAX_WARN][300];  /* analyzer notes (anomalies it met) */
    size_t nnotes;
    /* totals over the selected windows and devices (device memory) */
    uint64_t alloc_bytes, free_bytes, alloc_count, free_count, leaked_bytes, leaked_count;
    uint64_t baseline_bytes, baseline_count, kernels, kernel_ns;
    uint64_t windows_selected, steps_count, step_first, step_last;
    uint64_t host_peak;
    gma_mode mode;
} gma_report;

int gma_report_build(gma_report *rep, const gma_replay *r);
void gma_report_free(gma_report *rep);
static inline const char *gma_rep_str(const gma_report *rep, size_t off) { return gma_strs_get(&rep->strs, off); }

#endif
