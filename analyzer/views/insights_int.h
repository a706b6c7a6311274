/*
 * The insights module's own state, shared by its files (insights.c collects
 * during the pass, insights_build.c computes, insights_print.c formats).
 */
#ifndef GMA_INSIGHTS_INT_H
#define GMA_INSIGHTS_INT_H

#include "insights.h"
#include "spill.h"

#define GMI_RING 65536u             /* range instances remembered (an op's children find it) */
#define GMI_MAX_RECS (1u << 24)     /* device allocations kept (152 bytes each, in a file); later ones are counted */
#define GMI_WINDOW (1u << 16)       /* records in memory while they may change (GMEM_ANALYZE_TEST_SPILL_WINDOW) */
#define GMI_SORT_RUN (1u << 20)     /* elements sorted in memory at once (GMEM_ANALYZE_TEST_SPILL_RUN) */
#define GMI_TRIM (1u << 18)         /* records read between drops of the mapped pages */
#define GMI_MAX_KERNELS (1u << 24)

#define GMI_BASELINE 0x1u
#define GMI_FREED 0x2u
#define GMI_OWNED 0x4u /* an OWNER record named its module (the first one counts) */
#define GMI_DROPPED 0x4u

/* One device allocation. Its lifetime is [ord, free_ord) in memory-event
 * ordinals: live at the peak P when ord <= P < free_ord. */
typedef struct gmi_rec {
    uint64_t addr, bytes, ts, free_ts;
    uint64_t ord, free_ord;     /* UINT64_MAX: never freed */
    uint64_t step, free_step, stream;
    uint64_t tid, free_tid, seq, free_seq;
    uint64_t op, free_op;       /* op (outermost range) instances, 0 none */
    uint64_t early_ts;          /* when the op holding the free (or the last op before it) began, 0 none */
    uint32_t kname, opname;     /* kernel name id; the op's range name id, 0 none */
    uint32_t owner;             /* who it is shown under: its innermost module's name id (with
                                 * GMI_OWNER_BWD for autograd's), else its op's; 0 none */
    uint32_t window, next;      /* next: pending kernel chain (record + 1) */
    uint8_t device, source, flags;
} gmi_rec;

/* An allocator segment (or a mapped piece of an expandable one), with the
 * bridge: live at the peak P when ord <= P < free_ord. */
typedef struct gmi_seg {
    uint64_t addr, bytes, ord, free_ord;
    uint8_t device;
} gmi_seg;

typedef struct gmi_range {
    uint64_t id, op, begin_ts;   /* begin_ts: the op's */
    uint32_t name;
    uint32_t owner;              /* the innermost module around it (or itself), else the op's name */
} gmi_range;

/* gmi_rec.owner: a module's backward (name ids stay below GMA_MAX_STRING_ID) */
#define GMI_OWNER_BWD 0x80000000u

#define GMI_THREAD_OPS 64u          /* op begins remembered per thread */

/* Memory records can reach the trace later than the ranges around them
 * (CUPTI's activity buffers), so an op is found by time, not by order. */
typedef struct gmi_thread {
    uint64_t tid;
    uint64_t op_ts[GMI_THREAD_OPS]; /* begin times of its last ops, a ring */
    uint64_t nops;
} gmi_thread;

/* An op (outermost range instance) and its extent; end 0 while open or
 * when its end was not seen. */
typedef struct gmi_op {
    uint64_t id, tid, begin, end;
    uint64_t step;               /* the replay's step when it began */
    uint32_t name;
} gmi_op;

typedef struct gmi_kernel {
    uint64_t tid, stream, start, end;
} gmi_kernel;

typedef struct gma_insights {
    gma_spill recs;      /* gmi_rec, in allocation order */
    gma_map live;        /* entry ord -> record, while live */
    gma_map pending;     /* kernel wait key -> newest waiting record */
    gma_xsort kernels;   /* gmi_kernel, sorted by gmi_kernel_cmp */
    gma_spill ksorted;   /* the same in order, once built */
    uint64_t nkernels;
    size_t sort_run;     /* GMI_SORT_RUN */
    int kdone;           /* ksorted built */
    gma_vec segs;        /* gmi_seg */
    gma_map seg_of;      /* (device, address) -> live segment */
    gma_vec ops;         /* gmi_op, in begin order (at most GMI_MAX_RECS) */
    gma_map op_idx;      /* op id -> ops index */
    gma_map op_at;       /* hash of (thread, begin time) -> ops index: range_closed names no id */
    gma_vec threads;     /* gmi_thread */
    gma_map thread_of;
    gmi_range *ring;     /* range instances by id % GMI_RING */
    int ranges;          /* the trace has ranges */
    int modules;         /* ... and module ranges or OWNER records: owners are modules */
    int oom;
    uint64_t dropped_recs;
} gma_insights;

/* Kernels by thread, stream and start: each (thread, stream) a sorted run. */
int gmi_kernel_cmp(const void *pa, const void *pb, void *ctx);

/* The insights' state on r: the context of their consumer (NULL: not open). */
gma_insights *gma_insights_of(const gma_replay *r);

#endif
