/*
 * Failures (oom.c): what the replay finds at each OOM record of a trace (a
 * flight recorder's dump, or a failure in a trace), and the section that
 * the report prints first: what was asked, what was free, what held the
 * device's memory at that moment by lifetime class and by owner, and how
 * the steps before it grew.
 *
 * A consumer of the replay (consumer.h), registered on every replay: at an
 * OOM record it takes the live set as it is at that point, and it counts
 * the LIVE records after it. It takes only these rare records, so a trace
 * without failures costs nothing and the default run stays plain.
 */
#ifndef GMA_OOM_H
#define GMA_OOM_H

#include <stdio.h>

#include "gma.h"

#define GMA_OOM_TOP 8 /* owners shown */

/* Lifetime classes at the failure (the names of insights' classes). */
enum { GMA_OOM_PERSISTENT, GMA_OOM_STEP, GMA_OOM_TEMP, GMA_OOM_RESERVED, GMA_OOM_NCLASS };

typedef struct gma_oom_owner {
    char name[96];
    uint64_t bytes, count;
} gma_oom_owner;

typedef struct gma_oom_fail {
    gmt_oom o;
    char op[128], api[64];
    uint64_t dev_total;             /* the DEVICE record's total memory, 0 unknown */
    uint64_t live_count, live_bytes; /* the replay's live set on the device at the failure */
    uint64_t cls_bytes[GMA_OOM_NCLASS], cls_count[GMA_OOM_NCLASS];
    gma_oom_owner top[GMA_OOM_TOP];
    size_t ntop;
    uint64_t owners;                /* distinct owners */
    /* PyTorch's terms, where the trace has module ranges (has_module) or
     * frames (has_line): the module the failed request was made in, and
     * the live bytes by module and by source line */
    int has_module, has_line;
    char module[96];
    gma_oom_owner top_module[GMA_OOM_TOP], top_line[GMA_OOM_TOP];
    size_t ntop_module, ntop_line;
    uint64_t modules, lines;        /* distinct ones */
    uint64_t seen_count, seen_bytes; /* LIVE records after it: the dump's own list */
    int outside;                    /* a trace's failure (no LIVE list) outside every window */
    char dump_file[1024];           /* a trace's failure: its dump's file, named from the trace's ("" none) */
    int dump_found;                 /* ... and that file is there */
} gma_oom_fail;

typedef struct gma_oom {
    gma_oom_fail *f;
    size_t n, cap;
} gma_oom;

/* Why a failure happened: each cause that the numbers support, ranked by
 * how surely it alone explains the failure (gma_oom_explain). */
typedef enum gma_oom_why {
    GMA_WHY_FRAGMENTATION, /* the request fit in the free and cached bytes together, not in one piece */
    GMA_WHY_GROWTH,        /* the failing step needed much more than the steps before, which grew */
    GMA_WHY_SPIKE,         /* one op's request is the difference from steady steps */
    GMA_WHY_OUTSIDE,       /* memory outside the allocator (libraries, other processes) */
    GMA_WHY_COUNT_
} gma_oom_why;

extern const char *const gma_oom_why_names[GMA_WHY_COUNT_];

typedef struct gma_oom_reason {
    gma_oom_why why;
    unsigned score;         /* the rank: higher first */
    uint64_t bytes;         /* the number it rests on (the cache, the step's need, the request, outside) */
    char text[512];         /* the reason, with its numbers */
    char try_[512];         /* the one thing to try */
} gma_oom_reason;

typedef struct gma_oom_reasons {
    gma_oom_reason r[GMA_WHY_COUNT_];
    size_t n;
    char conf[160];         /* the allocator's settings the process ran with ("" none) */
} gma_oom_reasons;

/* The causes of failure f of r (a CUDA or framework failure; none for a
 * dump asked by signal or at exit), most likely first. */
void gma_oom_explain(const gma_replay *r, const gma_oom_fail *f, gma_oom_reasons *out);

/* Registers the failures' consumer on r (gma_replay_init does, for every
 * replay): each OOM record taken from the live set, and the dump's LIVE
 * records after it counted. 0, or -1 out of memory. */
int gma_oom_open(gma_replay *r);

/* Bytes as the failure section writes them ("1.5 GiB", "512 B"). */
const char *gma_oom_bytes(uint64_t b, char *out, size_t cap);

/* ---- the section, as the printers take it (print.h) ---------------------------- */

/* A step before a failure. */
typedef struct gma_oom_step {
    uint64_t step, alloc_bytes, free_bytes, live_end, peak;
    int has_live;
} gma_oom_step;

typedef struct gma_oom_section {
    const gma_oom_fail *f;
    gma_oom_reasons why;    /* most likely first */
    gma_vec steps;          /* gma_oom_step: from the dump's first step (or the three before) to the failing one */
} gma_oom_section;

/* The failures of a finished replay (n = 0: none, and no format prints
 * the section, so other traces keep their bytes). */
typedef struct gma_oom_view {
    gma_oom_section *s;     /* one a failure, in trace order */
    size_t n;
} gma_oom_view;

/* The failures of a finished replay as data. 0, or -1 out of memory. The
 * view points into r's failures: free it first. */
int gma_oom_view_build(gma_oom_view *v, const gma_replay *r);
void gma_oom_view_free(gma_oom_view *v);

#endif
