/*
 * The --by tables (tables.h): the rows of a finished replay, ranked by the
 * --sort key and cut to --top.
 *
 * Ranking is deterministic: the key, then the display name, then the order
 * in which the row first appeared. Sorting is a stable merge sort run once
 * on the rows (distinct names), never per record.
 */
#include <stdlib.h>
#include <string.h>

#include "tables.h"
#include "liveset.h"
#include "names.h"
#include "modules.h"
#include "tracestr.h"

/* ---- sorting rows -------------------------------------------------------- */

typedef struct srow {
    int64_t key;
    uint64_t order;
    size_t name;      /* offset in the sort's name store */
    uint32_t idx;
} srow;

typedef struct sortctx {
    const gma_strs *names;
    int by_name;      /* name ascending first */
    int asc;          /* the key ascending (chronological) */
} sortctx;

static int srow_cmp(const void *pa, const void *pb, void *pc)
{
    const srow *a = pa, *b = pb;
    const sortctx *c = pc;
    if (!c->by_name && a->key != b->key) {
        if (c->asc)
            return a->key < b->key ? -1 : 1;
        return a->key > b->key ? -1 : 1;
    }
    int n = strcmp(gma_strs_get(c->names, a->name), gma_strs_get(c->names, b->name));
    if (n)
        return n;
    if (c->by_name && a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int64_t sat(uint64_t v) { return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v; }

/* ---- sort keys ----------------------------------------------------------- */

/* Each view's keys, indexed by gma_sort: what the key means, how it ranks,
 * the value it ranks by and the column that shows it (view.h). */

#define D_ GMA_ORDER_DESC
#define A_ GMA_ORDER_ASC
#define N_ GMA_ORDER_NAME

static int64_t zero(const gma_replay *r, const void *row) { (void)r, (void)row; return 0; }

#define KR_(x) ((const gma_krow *)(x))
static int64_t k_self(const gma_replay *r, const void *x) { (void)r; return (int64_t)(KR_(x)->alloc_bytes - KR_(x)->free_bytes); }
static int64_t k_peak(const gma_replay *r, const void *x) { (void)r; return sat(KR_(x)->peak); }
static int64_t k_alloc(const gma_replay *r, const void *x) { (void)r; return sat(KR_(x)->alloc_bytes); }
static int64_t k_calls(const gma_replay *r, const void *x) { (void)r; return sat(KR_(x)->calls); }
static int64_t k_time(const gma_replay *r, const void *x) { (void)r; return sat(KR_(x)->time_ns); }

static const gma_sortkey KERNEL_KEYS[GMA_SORT_COUNT_] = {
    { "mem", "self memory (allocated - freed)", D_, k_self, "self_bytes", GMA_SORT_MEM, "self memory", GMA_CT_SBYTES, NULL, 0 },
    { "peak", "peak reached while attributed", D_, k_peak, "peak_bytes", GMA_SORT_PEAK, "peak", GMA_CT_BYTES, NULL, 0 },
    { "alloc", "bytes allocated", D_, k_alloc, "alloc_bytes", GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "count", "calls", D_, k_calls, "calls", GMA_SORT_COUNT, "calls", GMA_CT_U64, NULL, 0 },
    { "time", "total time", D_, k_time, "time_ns", GMA_SORT_TIME, "time", GMA_CT_NS, NULL, 0 },
    { "name", "name", N_, k_self, NULL, GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    /* --diff only: the rows' bytes at the peak come from gma_held_each */
    { "held", NULL, D_, k_self, NULL, GMA_SORT_HELD, "bytes held at the peak", GMA_CT_BYTES, zero, 0 },
};

#define RR_(x) ((const gma_rrow *)(x))
static int64_t r_self(const gma_replay *r, const void *x) { (void)r; return (int64_t)(RR_(x)->self_alloc - RR_(x)->self_free); }
static int64_t r_peak(const gma_replay *r, const void *x) { (void)r; return sat(RR_(x)->peak); }
static int64_t r_alloc(const gma_replay *r, const void *x) { (void)r; return sat(RR_(x)->self_alloc); }
static int64_t r_calls(const gma_replay *r, const void *x) { (void)r; return sat(RR_(x)->calls); }
static int64_t r_time(const gma_replay *r, const void *x) { (void)r; return sat(RR_(x)->time_ns); }

static const gma_sortkey RANGE_KEYS[GMA_SORT_COUNT_] = {
    { "mem", "self memory (allocated - freed)", D_, r_self, "self_bytes", GMA_SORT_MEM, "self memory", GMA_CT_SBYTES, NULL, 0 },
    { "peak", "peak reached while attributed", D_, r_peak, "peak_bytes", GMA_SORT_PEAK, "peak", GMA_CT_BYTES, NULL, 0 },
    { "alloc", "bytes allocated", D_, r_alloc, "self_alloc_bytes", GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "count", "calls", D_, r_calls, "calls", GMA_SORT_COUNT, "calls", GMA_CT_U64, NULL, 0 },
    { "time", "total time", D_, r_time, "time_ns", GMA_SORT_TIME, "time", GMA_CT_NS, NULL, 0 },
    { "name", "name", N_, r_self, NULL, GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "held", NULL, D_, r_self, NULL, GMA_SORT_HELD, "bytes held at the peak", GMA_CT_BYTES, zero, 0 },
};

/* --by alloc ranks its entries while the replay runs (liveset.c); its name
 * is the device, then the address. */
#define ER_(x) ((const gma_entry *)(x))
static int64_t a_size(const gma_replay *r, const void *x) { (void)r; return sat(ER_(x)->bytes); }
static int64_t a_after(const gma_replay *r, const void *x) { (void)r; return sat(ER_(x)->live_after); }
static int64_t a_ord(const gma_replay *r, const void *x) { (void)r; return sat(ER_(x)->ord); }
static int64_t a_life(const gma_replay *r, const void *x)
{
    const gma_entry *e = x;
    uint64_t end = e->free_ts ? e->free_ts : r->last_ts;
    return sat(end > e->ts ? end - e->ts : 0);
}

static const gma_sortkey ALLOC_KEYS[GMA_SORT_COUNT_] = {
    { "mem", "size", D_, a_size, "bytes", GMA_SORT_MEM, "net bytes", GMA_CT_SBYTES, NULL, 0 },
    { "peak", "live bytes right after it", D_, a_after, "live_after_bytes", GMA_SORT_PEAK, "peak", GMA_CT_BYTES, NULL, 0 },
    { "alloc", "size", D_, a_size, "bytes", GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "count", "time allocated", A_, a_ord, "alloc_ns", GMA_SORT_COUNT, "count", GMA_CT_U64, NULL, 0 },
    { "time", "lifetime", D_, a_life, "lifetime_ns", GMA_SORT_TIME, "time", GMA_CT_NS, NULL, 1 },
    { "name", "address", N_, a_ord, NULL, GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "held", NULL, A_, a_ord, NULL, GMA_SORT_HELD, "bytes held at the peak", GMA_CT_BYTES, NULL, 0 },
};

#define SR_(x) ((const gma_steprow *)(x))
static int64_t s_net(const gma_replay *r, const void *x) { (void)r; return (int64_t)(SR_(x)->alloc_bytes - SR_(x)->free_bytes); }
static int64_t s_peak(const gma_replay *r, const void *x) { (void)r; return sat(SR_(x)->peak); }
static int64_t s_alloc(const gma_replay *r, const void *x) { (void)r; return sat(SR_(x)->alloc_bytes); }
static int64_t s_allocs(const gma_replay *r, const void *x) { (void)r; return sat(SR_(x)->alloc_count); }
static int64_t s_step(const gma_replay *r, const void *x) { (void)r; return sat(SR_(x)->step); }
static int64_t s_dur(const gma_replay *r, const void *x)
{
    (void)r;
    return sat(SR_(x)->end_ts > SR_(x)->start_ts ? SR_(x)->end_ts - SR_(x)->start_ts : 0);
}

/* time and name: step order; --diff compares a step's duration */
static const gma_sortkey STEP_KEYS[GMA_SORT_COUNT_] = {
    { "mem", "net bytes", D_, s_net, "net_bytes", GMA_SORT_MEM, "net bytes", GMA_CT_SBYTES, NULL, 0 },
    { "peak", "peak", D_, s_peak, "peak_bytes", GMA_SORT_PEAK, "peak", GMA_CT_BYTES, NULL, 0 },
    { "alloc", "bytes allocated", D_, s_alloc, "alloc_bytes", GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "count", "allocations", D_, s_allocs, "alloc_count", GMA_SORT_COUNT, "count", GMA_CT_U64, NULL, 0 },
    { "time", "step", A_, s_step, "step", GMA_SORT_TIME, "time", GMA_CT_NS, s_dur, 0 },
    { "name", "step", A_, s_step, "step", GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "held", NULL, D_, s_step, NULL, GMA_SORT_HELD, "bytes held at the peak", GMA_CT_BYTES, NULL, 0 },
};

/* A tag's bytes: PyTorch's allocated where the bridge gave them (the
 * table's main column), the live bytes otherwise; --diff compares the
 * live bytes, by max, under every key but peak. */
#define TR_(x) ((const gma_tagrow *)(x))
static int64_t t_main(const gma_replay *r, const void *x) { (void)r; return sat(TR_(x)->has_fw ? TR_(x)->fw_allocated : TR_(x)->live); }
static int64_t t_live(const gma_replay *r, const void *x) { (void)r; return sat(TR_(x)->live); }
static int64_t t_used(const gma_replay *r, const void *x) { (void)r; return sat(TR_(x)->driver_used); }
/* record order is time order */
static int64_t t_order(const gma_replay *r, const void *x) { return (int64_t)(TR_(x) - (const gma_tagrow *)r->tags.data); }

static const gma_sortkey TAG_KEYS[GMA_SORT_COUNT_] = {
    { "mem", "live bytes", D_, t_main, "live_bytes", GMA_SORT_MEM, "live bytes (max)", GMA_CT_SBYTES, t_live, 0 },
    { "peak", "driver used", D_, t_used, "driver_used_bytes", GMA_SORT_PEAK, "driver used (max)", GMA_CT_BYTES, NULL, 0 },
    { "alloc", "live bytes", D_, t_main, "live_bytes", GMA_SORT_ALLOC, "live bytes (max)", GMA_CT_BYTES, t_live, 0 },
    { "count", "time", A_, t_order, "time_ns", GMA_SORT_COUNT, "live bytes (max)", GMA_CT_U64, t_live, 0 },
    { "time", "time", A_, t_order, "time_ns", GMA_SORT_TIME, "live bytes (max)", GMA_CT_NS, t_live, 0 },
    { "name", "tag name", N_, t_order, NULL, GMA_SORT_ALLOC, "live bytes (max)", GMA_CT_BYTES, t_live, 0 },
    { "held", NULL, D_, t_order, NULL, GMA_SORT_HELD, "live bytes (max)", GMA_CT_BYTES, t_live, 0 },
};

#define STR_(x) ((const gma_streamrow *)(x))
static int64_t st_net(const gma_replay *r, const void *x) { (void)r; return (int64_t)(STR_(x)->alloc_bytes - STR_(x)->free_bytes); }
static int64_t st_peak(const gma_replay *r, const void *x) { (void)r; return sat(STR_(x)->peak); }
static int64_t st_alloc(const gma_replay *r, const void *x) { (void)r; return sat(STR_(x)->alloc_bytes); }
static int64_t st_kernels(const gma_replay *r, const void *x) { (void)r; return sat(STR_(x)->kernels); }
static int64_t st_time(const gma_replay *r, const void *x) { (void)r; return sat(STR_(x)->kernel_ns); }

static const gma_sortkey STREAM_KEYS[GMA_SORT_COUNT_] = {
    { "mem", "net bytes", D_, st_net, "net_bytes", GMA_SORT_MEM, "net bytes", GMA_CT_SBYTES, NULL, 0 },
    { "peak", "peak", D_, st_peak, "peak_bytes", GMA_SORT_PEAK, "peak", GMA_CT_BYTES, NULL, 0 },
    { "alloc", "bytes allocated", D_, st_alloc, "alloc_bytes", GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "count", "kernels", D_, st_kernels, "kernels", GMA_SORT_COUNT, "count", GMA_CT_U64, NULL, 0 },
    { "time", "kernel time", D_, st_time, "kernel_ns", GMA_SORT_TIME, "time", GMA_CT_NS, NULL, 0 },
    { "name", "device and stream", N_, st_net, NULL, GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "held", NULL, D_, st_net, NULL, GMA_SORT_HELD, "bytes held at the peak", GMA_CT_BYTES, NULL, 0 },
};

#define DR_(x) ((const gma_dev *)(x))
static int64_t d_peak(const gma_replay *r, const void *x) { (void)r; return sat(DR_(x)->peak); }
static int64_t d_alloc(const gma_replay *r, const void *x) { (void)r; return sat(DR_(x)->alloc_bytes); }
static int64_t d_kernels(const gma_replay *r, const void *x) { (void)r; return sat(DR_(x)->kernels); }
static int64_t d_time(const gma_replay *r, const void *x) { (void)r; return sat(DR_(x)->kernel_ns); }

/* mem and peak: the peak */
static const gma_sortkey DEVICE_KEYS[GMA_SORT_COUNT_] = {
    { "mem", "peak", D_, d_peak, "peak_bytes", GMA_SORT_MEM, "net bytes", GMA_CT_SBYTES, NULL, 0 },
    { "peak", "peak", D_, d_peak, "peak_bytes", GMA_SORT_PEAK, "peak", GMA_CT_BYTES, NULL, 0 },
    { "alloc", "bytes allocated", D_, d_alloc, "alloc_bytes", GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "count", "kernels", D_, d_kernels, "kernels", GMA_SORT_COUNT, "count", GMA_CT_U64, NULL, 0 },
    { "time", "kernel time", D_, d_time, "kernel_ns", GMA_SORT_TIME, "time", GMA_CT_NS, NULL, 0 },
    { "name", "device", N_, d_peak, NULL, GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "held", NULL, D_, d_peak, NULL, GMA_SORT_HELD, "bytes held at the peak", GMA_CT_BYTES, NULL, 0 },
};

#undef D_
#undef A_
#undef N_

/* ---- kernel labels ------------------------------------------------------------ */

/* first[i] = the first index with the same label as i (i itself when
 * first); returns how many labels are shared, -1 on OOM. */
static int label_groups(const gma_strs *strs, const size_t *offs, size_t n, size_t *first, uint32_t *count)
{
    gma_map m = { 0 };
    int shared = 0;
    for (size_t i = 0; i < n; i++)
        count[i] = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = gma_hash_str(gma_strs_get(strs, offs[i]));
        uint32_t f;
        if (gma_map_get(&m, h, &f) && strcmp(gma_strs_get(strs, offs[f]), gma_strs_get(strs, offs[i])) == 0) {
            first[i] = f;
        } else {
            first[i] = i;
            if (gma_map_put(&m, h, (uint32_t)i) != 0) {
                gma_map_free(&m);
                return -1;
            }
        }
        count[first[i]]++;
    }
    for (size_t i = 0; i < n; i++)
        shared += count[first[i]] > 1;
    gma_map_free(&m);
    return shared;
}

/* Display labels of kernel name ids, unique within one list: the trace's
 * labels (gma_kernel_labels_make: unique already), or full names, where
 * what still collides (one text under several ids) gets " #2", " #3"... in
 * list order. Appends each label to strs and its offset to offs[i]. */
int gma_kernel_labels(const gma_replay *r, const uint32_t *ids, size_t n, gma_strs *strs, size_t *offs)
{
    gma_buf b = { 0 };
    size_t *first = calloc(n ? n : 1, sizeof(*first));
    uint32_t *count = calloc(n ? n : 1, sizeof(*count));
    int err = !first || !count;
    for (size_t i = 0; i < n && !err; i++) {
        gma_buf_reset(&b);
        gma_kernel_display(r, ids[i], r->opt.full_names, &b);
        offs[i] = gma_strs_add(strs, gma_buf_str(&b), b.len);
        err |= offs[i] == (size_t)-1 || b.oom;
    }
    int shared = err ? -1 : label_groups(strs, offs, n, first, count);
    if (shared > 0) {
        /* numbered in list order; the first keeps its label */
        uint32_t *seen = calloc(n, sizeof(*seen));
        err |= !seen;
        for (size_t i = 0; i < n && !err; i++) {
            if (count[first[i]] < 2)
                continue;
            uint32_t k = ++seen[first[i]];
            if (k == 1)
                continue;
            gma_buf_reset(&b);
            gma_buf_printf(&b, "%s #%u", gma_strs_get(strs, offs[i]), k);
            offs[i] = gma_strs_add(strs, gma_buf_str(&b), b.len);
            err |= offs[i] == (size_t)-1 || b.oom;
        }
        free(seen);
    }
    err |= shared < 0;
    free(first);
    free(count);
    gma_buf_free(&b);
    return err ? -1 : 0;
}

/* ---- the --by tables --------------------------------------------------------- */

static const gma_col KCOLS[] = {
    { "kernel", "name", GMA_CT_STR, 1, 0 },           { "calls", "calls", GMA_CT_U64, 1, 0 },
    { "self", "self_bytes", GMA_CT_SBYTES, 1, 0 },    { "allocated", "alloc_bytes", GMA_CT_BYTES, 1, 0 },
    { "freed", "freed_bytes", GMA_CT_BYTES, 1, 0 },   { "peak", "peak_bytes", GMA_CT_BYTES, 1, 0 },
    { "allocs", "alloc_count", GMA_CT_U64, 0, 0 },    { "frees", "free_count", GMA_CT_U64, 0, 0 },
    { "time", "time_ns", GMA_CT_NS, 1, 0 },           { "mean", "mean_ns", GMA_CT_NS, 1, 0 },
    { "min", "min_ns", GMA_CT_NS, 0, 0 },             { "max", "max_ns", GMA_CT_NS, 0, 0 },
    { "regs", "registers", GMA_CT_U64, 1, 0 },        { "smem", "shared_mem_bytes", GMA_CT_BYTES, 1, 0 },
    { "local", "local_mem_bytes", GMA_CT_BYTES, 1, 0 },
};

static const gma_col RCOLS[] = {
    { "range", "name", GMA_CT_STR, 1, 0 },                  { "calls", "calls", GMA_CT_U64, 1, 0 },
    { "self", "self_bytes", GMA_CT_SBYTES, 1, 0 },          { "total", "total_bytes", GMA_CT_SBYTES, 1, 0 },
    { "self alloc", "self_alloc_bytes", GMA_CT_BYTES, 1, 0 }, { "self freed", "self_freed_bytes", GMA_CT_BYTES, 1, 0 },
    { "total alloc", "total_alloc_bytes", GMA_CT_BYTES, 0, 0 }, { "total freed", "total_freed_bytes", GMA_CT_BYTES, 0, 0 },
    { "allocs", "self_alloc_count", GMA_CT_U64, 0, 0 },     { "frees", "self_free_count", GMA_CT_U64, 0, 0 },
    { "peak", "peak_bytes", GMA_CT_BYTES, 1, 0 },           { "time", "time_ns", GMA_CT_NS, 1, 0 },
    { "mean", "mean_ns", GMA_CT_NS, 1, 0 },
};

static const gma_col ACOLS[] = {
    { "address", "address", GMA_CT_HEX, 1, 0 },      { "device", "device", GMA_CT_U64, 0, 0 },
    { "size", "bytes", GMA_CT_BYTES, 1, 0 },          { "kind", "kind", GMA_CT_STR, 1, 0 },
    { "source", "source", GMA_CT_STR, 1, 0 },         { "step", "step", GMA_CT_U64, 1, 0 },
    { "alloc ms", "alloc_ns", GMA_CT_TS, 1, 0 },      { "free ms", "free_ns", GMA_CT_TS, 1, 0 },
    { "lifetime", "lifetime_ns", GMA_CT_NS, 1, 0 },   { "live after", "live_after_bytes", GMA_CT_BYTES, 0, 0 },
    { "kernel", "kernel", GMA_CT_STR, 1, 0 },         { "range", "range", GMA_CT_STR, 1, 0 },
    { "state", "state", GMA_CT_STR, 1, 0 },
};

static const gma_col SCOLS[] = {
    { "step", "step", GMA_CT_U64, 1, 0 },            { "phase", "phase", GMA_CT_STR, 1, 0 },
    { "start ms", "start_ns", GMA_CT_TS, 1, 0 },     { "duration", "duration_ns", GMA_CT_NS, 1, 0 },
    { "allocs", "alloc_count", GMA_CT_U64, 1, 0 },   { "allocated", "alloc_bytes", GMA_CT_BYTES, 1, 0 },
    { "freed", "freed_bytes", GMA_CT_BYTES, 1, 0 },  { "frees", "free_count", GMA_CT_U64, 0, 0 },
    { "net", "net_bytes", GMA_CT_SBYTES, 1, 0 },     { "peak", "peak_bytes", GMA_CT_BYTES, 1, 0 },
    { "live at end", "live_end_bytes", GMA_CT_BYTES, 1, 0 }, { "growth", "growth_bytes", GMA_CT_DBYTES, 1, 0 },
    { "kernels", "kernels", GMA_CT_U64, 1, 0 },      { "kernel time", "kernel_ns", GMA_CT_NS, 1, 0 },
};

static const gma_col TCOLS[] = {
    { "tag", "name", GMA_CT_STR, 1, 0 },              { "device", "device", GMA_CT_U64, 1, 0 },
    { "step", "step", GMA_CT_U64, 1, 0 },             { "time ms", "time_ns", GMA_CT_TS, 1, 0 },
    { "live", "live_bytes", GMA_CT_BYTES, 1, 0 },     { "driver used", "driver_used_bytes", GMA_CT_BYTES, 1, 0 },
    { "driver total", "driver_total_bytes", GMA_CT_BYTES, 0, 0 },
    { "d live", "live_change_bytes", GMA_CT_DBYTES, 1, 0 }, { "d used", "used_change_bytes", GMA_CT_DBYTES, 1, 0 },
};

/* With the PyTorch bridge: the MemoryMonitor table (allocated, reserved,
 * outside the allocator, driver used, and the change since the tag before). */
static const gma_col TFCOLS[] = {
    { "tag", "name", GMA_CT_STR, 1, 0 },              { "device", "device", GMA_CT_U64, 1, 0 },
    { "step", "step", GMA_CT_U64, 1, 0 },             { "time ms", "time_ns", GMA_CT_TS, 1, 0 },
    { "allocated", "allocated_bytes", GMA_CT_BYTES, 1, 0 }, { "reserved", "reserved_bytes", GMA_CT_BYTES, 1, 0 },
    { "outside", "outside_allocator_bytes", GMA_CT_BYTES, 1, 0 },
    { "driver used", "driver_used_bytes", GMA_CT_BYTES, 1, 0 },
    { "driver total", "driver_total_bytes", GMA_CT_BYTES, 0, 0 },
    { "d allocated", "allocated_change_bytes", GMA_CT_DBYTES, 1, 0 },
    { "d reserved", "reserved_change_bytes", GMA_CT_DBYTES, 1, 0 },
    { "d used", "used_change_bytes", GMA_CT_DBYTES, 1, 0 },
};

static const gma_col STCOLS[] = {
    { "device", "device", GMA_CT_U64, 1, 0 },         { "stream", "stream", GMA_CT_STR, 1, 0 },
    { "kernels", "kernels", GMA_CT_U64, 1, 0 },       { "kernel time", "kernel_ns", GMA_CT_NS, 1, 0 },
    { "allocs", "alloc_count", GMA_CT_U64, 1, 0 },    { "allocated", "alloc_bytes", GMA_CT_BYTES, 1, 0 },
    { "freed", "freed_bytes", GMA_CT_BYTES, 1, 0 },   { "frees", "free_count", GMA_CT_U64, 0, 0 },
    { "net", "net_bytes", GMA_CT_SBYTES, 1, 0 },      { "peak", "peak_bytes", GMA_CT_BYTES, 1, 0 },
    { "copies", "copies", GMA_CT_U64, 1, 0 },         { "copy bytes", "copy_bytes", GMA_CT_BYTES, 1, 0 },
};

static const gma_col DCOLS[] = {
    { "device", "device", GMA_CT_U64, 1, 0 },         { "name", "name", GMA_CT_STR, 1, 0 },
    { "total", "total_bytes", GMA_CT_BYTES, 1, 0 },   { "baseline", "baseline_bytes", GMA_CT_BYTES, 1, 0 },
    { "peak", "peak_bytes", GMA_CT_BYTES, 1, 0 },     { "peak step", "peak_step", GMA_CT_U64, 1, 0 },
    { "peak ms", "peak_ns", GMA_CT_TS, 1, 0 },        { "allocated", "alloc_bytes", GMA_CT_BYTES, 1, 0 },
    { "freed", "freed_bytes", GMA_CT_BYTES, 1, 0 },   { "net", "net_bytes", GMA_CT_SBYTES, 1, 0 },
    { "leaked", "leaked_bytes", GMA_CT_BYTES, 1, 0 }, { "kernels", "kernels", GMA_CT_U64, 1, 0 },
    { "kernel time", "kernel_ns", GMA_CT_NS, 1, 0 },  { "driver used max", "driver_used_max_bytes", GMA_CT_BYTES, 1, 0 },
    { "pinned host peak", "pinned_host_peak_bytes", GMA_CT_BYTES, 0, 0 },
    { "copies", "copies", GMA_CT_U64, 0, 0 },         { "copy bytes", "copy_bytes", GMA_CT_BYTES, 0, 0 },
};

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

static void set_u(gma_cell *c, uint64_t v) { c->v.u = v; }
static void set_i(gma_cell *c, int64_t v) { c->v.i = v; }

/* Sorts rows by the --sort key of the table and keeps the first `top` (0:
 * all). Returns the kept count. */
static size_t rank(const gma_sortkey *k, srow *rows, size_t n, const gma_strs *names, uint64_t top, int *err)
{
    sortctx c = { names, k->compare == GMA_ORDER_NAME, k->compare == GMA_ORDER_ASC };
    if (gma_msort(rows, n, sizeof(srow), srow_cmp, &c) != 0)
        *err = 1;
    return top && top < n ? (size_t)top : n;
}

static int build_kernels(const gma_replay *r, gma_table *t, uint64_t top)
{
    gma_table_init(t, "Kernels", KCOLS, NCOLS(KCOLS));
    const gma_sortkey *key = &KERNEL_KEYS[r->opt.sort];
    size_t n = r->krows.len, m = 0;
    srow *rows = calloc(n ? n : 1, sizeof(*rows));
    uint32_t *ids = calloc(n ? n : 1, sizeof(*ids));
    size_t *offs = calloc(n ? n : 1, sizeof(*offs));
    gma_strs names = { 0 };
    int err = !rows || !ids || !offs;
    for (size_t i = 0; i < n && !err; i++) {
        const gma_krow *k = &GMA_VEC_AT(&r->krows, gma_krow, i);
        if (!k->calls && !k->alloc_count && !k->free_count)
            continue;
        ids[m] = i == 0 ? GMA_NAME_UNATTR : k->name;
        srow *s = &rows[m++];
        s->key = key->value(r, k);
        s->order = i;
        s->idx = (uint32_t)i;
    }
    if (!err)
        err = gma_kernel_labels(r, ids, m, &names, offs) != 0;
    for (size_t j = 0; j < m && !err; j++)
        rows[j].name = offs[j];
    t->total_rows = m;
    size_t keep = err ? 0 : rank(&KERNEL_KEYS[r->opt.sort], rows, m, &names, top, &err);
    for (size_t j = 0; j < keep && !err; j++) {
        const gma_krow *k = &GMA_VEC_AT(&r->krows, gma_krow, rows[j].idx);
        gma_cell *c = gma_table_row(t);
        if (!c) {
            err = 1;
            break;
        }
        gma_cell_str(t, &c[0], gma_strs_get(&names, rows[j].name));
        set_u(&c[1], k->calls);
        set_i(&c[2], (int64_t)(k->alloc_bytes - k->free_bytes));
        set_u(&c[3], k->alloc_bytes);
        set_u(&c[4], k->free_bytes);
        set_u(&c[5], k->peak);
        c[5].null = !k->alloc_count;
        set_u(&c[6], k->alloc_count);
        set_u(&c[7], k->free_count);
        set_u(&c[8], k->time_ns);
        set_u(&c[9], k->calls ? k->time_ns / k->calls : 0);
        set_u(&c[10], k->min_ns);
        set_u(&c[11], k->max_ns);
        set_u(&c[12], k->regs);
        set_u(&c[13], k->smem);
        set_u(&c[14], k->local_mem);
        /* the unattributed row has no launches; a kernel known only from its
         * launches (GMEMPROF_KERNELS=launch) has no GPU time, and no
         * registers or shared memory unless the profiler could ask the
         * driver (GMT_KERNF_ATTRS): "-" (table), empty (csv), null (json),
         * never 0 */
        for (int x = 8; x <= 14; x++)
            c[x].null = !k->calls || (x <= 11 ? k->launch_calls == k->calls : !k->attr_calls);
        c[1].null = !k->calls && rows[j].idx == 0;
    }
    free(rows);
    free(ids);
    free(offs);
    gma_strs_free(&names);
    return err ? -1 : 0;
}

static int build_ranges(const gma_replay *r, gma_table *t, uint64_t top)
{
    gma_table_init(t, "Ranges (PyTorch ops, NVTX ranges)", RCOLS, NCOLS(RCOLS));
    const gma_sortkey *key = &RANGE_KEYS[r->opt.sort];
    size_t n = r->rrows.len, m = 0;
    srow *rows = calloc(n ? n : 1, sizeof(*rows));
    gma_strs names = { 0 };
    gma_buf b = { 0 };
    int err = !rows;
    for (size_t i = 0; i < n && !err; i++) {
        const gma_rrow *k = &GMA_VEC_AT(&r->rrows, gma_rrow, i);
        if (!k->calls && !k->tot_alloc && !k->tot_free)
            continue;
        gma_buf_reset(&b);
        gma_range_display(r, i == 0 ? GMA_NAME_UNATTR : k->name, r->opt.full_names, &b);
        srow *s = &rows[m++];
        s->name = gma_strs_add(&names, gma_buf_str(&b), b.len);
        s->key = key->value(r, k);
        s->order = i;
        s->idx = (uint32_t)i;
        err |= s->name == (size_t)-1 || b.oom;
    }
    t->total_rows = m;
    size_t keep = err ? 0 : rank(&RANGE_KEYS[r->opt.sort], rows, m, &names, top, &err);
    for (size_t j = 0; j < keep && !err; j++) {
        const gma_rrow *k = &GMA_VEC_AT(&r->rrows, gma_rrow, rows[j].idx);
        gma_cell *c = gma_table_row(t);
        if (!c) {
            err = 1;
            break;
        }
        gma_cell_str(t, &c[0], gma_strs_get(&names, rows[j].name));
        set_u(&c[1], k->calls);
        set_i(&c[2], (int64_t)(k->self_alloc - k->self_free));
        set_i(&c[3], (int64_t)(k->tot_alloc - k->tot_free));
        set_u(&c[4], k->self_alloc);
        set_u(&c[5], k->self_free);
        set_u(&c[6], k->tot_alloc);
        set_u(&c[7], k->tot_free);
        set_u(&c[8], k->self_alloc_count);
        set_u(&c[9], k->self_free_count);
        set_u(&c[10], k->peak);
        c[10].null = !k->tot_alloc;
        set_u(&c[11], k->time_ns);
        set_u(&c[12], k->calls ? k->time_ns / k->calls : 0);
        if (rows[j].idx == 0)
            c[1].null = c[11].null = c[12].null = 1;
    }
    free(rows);
    gma_strs_free(&names);
    gma_buf_free(&b);
    return err ? -1 : 0;
}

static int arow_cmp(const void *pa, const void *pb, void *pc)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const gma_replay *r = pc;
    if (gma_arow_before(r, a, b))
        return -1;
    return gma_arow_before(r, b, a) ? 1 : 0;
}

/* Every accounted allocation: the rows of --by alloc before --top. */
uint64_t gma_alloc_rows_total(const gma_replay *r)
{
    uint64_t total = 0;
    for (size_t i = 0; i < r->windows.len; i++) {
        const gma_window *w = &GMA_VEC_AT(&r->windows, gma_window, i);
        if (r->opt.window < 0 || w->id == (uint64_t)r->opt.window)
            total += w->alloc_count + w->baseline_seen_count;
    }
    return total;
}

int gma_alloc_row(const gma_replay *r, gma_table *t, const gma_entry *e, gma_buf *b)
{
    gma_cell *c = gma_table_row(t);
    if (!c)
        return -1;
    set_u(&c[0], e->addr);
    set_u(&c[1], e->device);
    set_u(&c[2], e->bytes);
    gma_cell_str(t, &c[3], gma_kind_label(e->kind));
    gma_cell_str(t, &c[4], gma_source_label(e->source));
    set_u(&c[5], e->step);
    set_i(&c[6], gma_rel(r, e->ts));
    set_i(&c[7], gma_rel(r, e->free_ts));
    c[7].null = (e->flags & GMA_E_LIVE) || (e->flags & GMA_E_DROPPED) || !e->free_ts;
    uint64_t end = e->free_ts ? e->free_ts : r->last_ts;
    set_u(&c[8], end > e->ts ? end - e->ts : 0);
    set_u(&c[9], e->live_after);
    gma_buf_reset(b);
    gma_kernel_display(r, e->kname, r->opt.full_names, b);
    gma_cell_str(t, &c[10], gma_buf_str(b));
    gma_buf_reset(b);
    gma_range_display(r, e->rname, r->opt.full_names, b);
    gma_cell_str(t, &c[11], gma_buf_str(b));
    const char *state = (e->flags & GMA_E_LIVE) ? "live at end" : (e->flags & GMA_E_DROPPED) ? "dropped" : "freed";
    gma_buf_reset(b);
    gma_buf_puts(b, state);
    if (e->flags & GMA_E_BASELINE)
        gma_buf_puts(b, ",baseline");
    if (e->flags & GMA_E_LEAKED)
        gma_buf_puts(b, ",leak");
    gma_cell_str(t, &c[12], gma_buf_str(b));
    return b->oom ? -1 : 0;
}

void gma_alloc_table_init(gma_table *t) { gma_table_init(t, "Allocations", ACOLS, NCOLS(ACOLS)); }

static int build_allocs(const gma_replay *r, gma_table *t, uint64_t top)
{
    if (r->aspill && r->aspill_table) /* every row, spilled: made on demand (arows.c) */
        return r->aspill_table(r, t);
    gma_alloc_table_init(t);
    size_t n = r->arows.len;
    uint32_t *idx = malloc((n ? n : 1) * sizeof(*idx));
    if (!idx)
        return -1;
    if (n)
        memcpy(idx, r->arows.data, n * sizeof(*idx));
    int err = gma_msort(idx, n, sizeof(*idx), arow_cmp, (void *)r) != 0;
    /* total rows: every accounted allocation (the kept ones are the top) */
    uint64_t total = gma_alloc_rows_total(r);
    t->total_rows = total > n ? total : n;
    size_t keep = top && top < n ? (size_t)top : n;
    gma_buf b = { 0 };
    for (size_t j = 0; j < keep && !err; j++)
        err = gma_alloc_row(r, t, &GMA_VEC_AT(&r->entries, gma_entry, idx[j]), &b) != 0;
    gma_buf_free(&b);
    free(idx);
    return err ? -1 : 0;
}

static int build_steps(const gma_replay *r, gma_table *t, uint64_t top)
{
    gma_table_init(t, "Steps", SCOLS, NCOLS(SCOLS));
    size_t n = r->steps.len, m = 0;
    srow *rows = calloc(n ? n : 1, sizeof(*rows));
    gma_strs names = { 0 };
    int err = !rows;
    for (size_t i = 0; i < n && !err; i++) {
        const gma_steprow *s = &GMA_VEC_AT(&r->steps, gma_steprow, i);
        if (!s->in_window && !s->alloc_count && !s->free_count && !s->kernels)
            continue;
        char nm[32];
        snprintf(nm, sizeof(nm), "%020llu", (unsigned long long)s->step);
        srow *x = &rows[m++];
        x->name = gma_strs_add(&names, nm, strlen(nm));
        x->order = s->step;
        x->idx = (uint32_t)i;
        err |= x->name == (size_t)-1;
    }
    /* growth: live at end minus the previous step's live at end, in step
     * order (INT64_MIN: no previous step with memory events) */
    int64_t *growth = calloc(m ? m : 1, sizeof(*growth));
    err |= !growth;
    if (!err) {
        sortctx c = { &names, 1, 1 };
        err |= gma_msort(rows, m, sizeof(srow), srow_cmp, &c) != 0;
        uint64_t prev = 0;
        int have_prev = 0;
        for (size_t j = 0; j < m; j++) {
            const gma_steprow *s = &GMA_VEC_AT(&r->steps, gma_steprow, rows[j].idx);
            growth[j] = have_prev && s->has_live ? (int64_t)(s->live_end - prev) : INT64_MIN;
            if (s->has_live) {
                prev = s->live_end;
                have_prev = 1;
            }
            rows[j].order = j; /* step order: finds growth[] again after ranking */
            rows[j].key = STEP_KEYS[r->opt.sort].value(r, s);
        }
    }
    t->total_rows = m;
    size_t keep = err ? 0 : rank(&STEP_KEYS[r->opt.sort], rows, m, &names, top, &err);
    for (size_t j = 0; j < keep && !err; j++) {
        const gma_steprow *s = &GMA_VEC_AT(&r->steps, gma_steprow, rows[j].idx);
        gma_cell *c = gma_table_row(t);
        if (!c) {
            err = 1;
            break;
        }
        set_u(&c[0], s->step);
        gma_cell_str(t, &c[1], s->has_start ? gmt_phase_name(s->phase) : "-");
        set_i(&c[2], gma_rel(r, s->start_ts));
        c[2].null = !s->has_start;
        set_u(&c[3], s->end_ts > s->start_ts ? s->end_ts - s->start_ts : 0);
        c[3].null = !s->has_start;
        set_u(&c[4], s->alloc_count);
        set_u(&c[5], s->alloc_bytes);
        set_u(&c[6], s->free_bytes);
        set_u(&c[7], s->free_count);
        set_i(&c[8], (int64_t)(s->alloc_bytes - s->free_bytes));
        set_u(&c[9], s->peak);
        c[9].null = !s->has_live && !s->peak;
        set_u(&c[10], s->live_end);
        c[10].null = !s->has_live;
        set_i(&c[11], growth[rows[j].order]);
        c[11].null = growth[rows[j].order] == INT64_MIN;
        set_u(&c[12], s->kernels);
        set_u(&c[13], s->kernel_ns);
        c[13].null = gma_launch_times_only(r);
    }
    free(growth);
    free(rows);
    gma_strs_free(&names);
    return err ? -1 : 0;
}

/* A tag's values: in framework terms (TFCOLS) when the trace has them. */
typedef struct tagvals {
    uint64_t main, reserved, used; /* live bytes or allocated; reserved; driver used */
} tagvals;

static tagvals tag_vals(const gma_tagrow *g, int fw)
{
    tagvals v = { fw ? g->fw_allocated : g->live, g->fw_reserved, g->driver_used };
    return v;
}

static int build_tags(const gma_replay *r, gma_table *t, uint64_t top)
{
    size_t n = r->tags.len;
    int fw = 0;
    for (size_t i = 0; i < n; i++)
        fw |= GMA_VEC_AT(&r->tags, gma_tagrow, i).has_fw;
    if (fw)
        gma_table_init(t, "Tags (memory snapshots; PyTorch's allocated and reserved)", TFCOLS, NCOLS(TFCOLS));
    else
        gma_table_init(t, "Tags (memory snapshots)", TCOLS, NCOLS(TCOLS));
    srow *rows = calloc(n ? n : 1, sizeof(*rows));
    int64_t *dlive = calloc(n ? n : 1, sizeof(*dlive)), *dused = calloc(n ? n : 1, sizeof(*dused));
    int64_t *dres = calloc(n ? n : 1, sizeof(*dres));
    char *hasprev = calloc(n ? n : 1, 1);
    gma_strs names = { 0 };
    int err = !rows || !dlive || !dused || !dres || !hasprev;
    /* changes since the previous tag of the same device (record order is
     * time order); hasprev bit 1: both have a driver reading */
    struct {
        int have, nodev;
        tagvals v;
    } prev[GMA_MAX_DEVICES];
    memset(prev, 0, sizeof(prev));
    for (size_t i = 0; i < n && !err; i++) {
        const gma_tagrow *g = &GMA_VEC_AT(&r->tags, gma_tagrow, i);
        unsigned d = (unsigned)g->device;
        tagvals v = tag_vals(g, fw);
        if (prev[d].have) {
            dlive[i] = (int64_t)(v.main - prev[d].v.main);
            dres[i] = (int64_t)(v.reserved - prev[d].v.reserved);
            dused[i] = (int64_t)(v.used - prev[d].v.used);
            hasprev[i] = (char)(1 | (!g->nodev && !prev[d].nodev) << 1);
        }
        prev[d].have = 1;
        prev[d].nodev = g->nodev;
        prev[d].v = v;
        size_t len;
        const char *nm = gma_str(r, g->name, &len);
        srow *x = &rows[i];
        x->name = gma_strs_add(&names, nm, len);
        x->order = i;
        x->idx = (uint32_t)i;
        x->key = TAG_KEYS[r->opt.sort].value(r, g);
        err |= x->name == (size_t)-1;
    }
    t->total_rows = n;
    size_t keep = err ? 0 : rank(&TAG_KEYS[r->opt.sort], rows, n, &names, top, &err);
    for (size_t j = 0; j < keep && !err; j++) {
        size_t i = rows[j].idx;
        const gma_tagrow *g = &GMA_VEC_AT(&r->tags, gma_tagrow, i);
        gma_cell *c = gma_table_row(t);
        if (!c) {
            err = 1;
            break;
        }
        gma_cell_str(t, &c[0], gma_strs_get(&names, rows[j].name));
        set_u(&c[1], g->device);
        set_u(&c[2], g->step);
        set_i(&c[3], gma_rel(r, g->ts));
        if (fw) {
            set_u(&c[4], g->fw_allocated);
            set_u(&c[5], g->fw_reserved);
            set_u(&c[6], gma_layer_outside(g->live, g->fw_reserved));
            set_u(&c[7], g->driver_used);
            set_u(&c[8], g->driver_total);
            set_i(&c[9], dlive[i]);
            set_i(&c[10], dres[i]);
            set_i(&c[11], dused[i]);
            c[9].null = c[10].null = !hasprev[i];
            c[11].null = !(hasprev[i] & 2);
            c[7].null = c[8].null = g->nodev; /* before CUDA: no driver reading */
            continue;
        }
        set_u(&c[4], g->live);
        set_u(&c[5], g->driver_used);
        set_u(&c[6], g->driver_total);
        set_i(&c[7], dlive[i]);
        set_i(&c[8], dused[i]);
        c[7].null = !hasprev[i];
        c[8].null = !(hasprev[i] & 2);
        c[5].null = c[6].null = g->nodev;
    }
    free(rows);
    free(dlive);
    free(dused);
    free(dres);
    free(hasprev);
    gma_strs_free(&names);
    return err ? -1 : 0;
}

static int build_streams(const gma_replay *r, gma_table *t, uint64_t top)
{
    gma_table_init(t, "Streams", STCOLS, NCOLS(STCOLS));
    size_t n = r->streams.len;
    srow *rows = calloc(n ? n : 1, sizeof(*rows));
    gma_strs names = { 0 };
    int err = !rows;
    for (size_t i = 0; i < n && !err; i++) {
        const gma_streamrow *s = &GMA_VEC_AT(&r->streams, gma_streamrow, i);
        char nm[64];
        snprintf(nm, sizeof(nm), "%03llu/%020llu", (unsigned long long)s->device, (unsigned long long)s->stream);
        srow *x = &rows[i];
        x->name = gma_strs_add(&names, nm, strlen(nm));
        x->order = i;
        x->idx = (uint32_t)i;
        x->key = STREAM_KEYS[r->opt.sort].value(r, s);
        err |= x->name == (size_t)-1;
    }
    t->total_rows = n;
    size_t keep = err ? 0 : rank(&STREAM_KEYS[r->opt.sort], rows, n, &names, top, &err);
    for (size_t j = 0; j < keep && !err; j++) {
        const gma_streamrow *s = &GMA_VEC_AT(&r->streams, gma_streamrow, rows[j].idx);
        gma_cell *c = gma_table_row(t);
        if (!c) {
            err = 1;
            break;
        }
        set_u(&c[0], s->device);
        char nm[48];
        if (s->stream)
            snprintf(nm, sizeof(nm), "stream %llu", (unsigned long long)s->stream);
        else
            snprintf(nm, sizeof(nm), "(unattributed)");
        gma_cell_str(t, &c[1], nm);
        set_u(&c[2], s->kernels);
        set_u(&c[3], s->kernel_ns);
        c[3].null = gma_launch_times_only(r);
        set_u(&c[4], s->alloc_count);
        set_u(&c[5], s->alloc_bytes);
        set_u(&c[6], s->free_bytes);
        set_u(&c[7], s->free_count);
        set_i(&c[8], (int64_t)(s->alloc_bytes - s->free_bytes));
        set_u(&c[9], s->peak);
        c[9].null = !s->alloc_count;
        set_u(&c[10], s->copies);
        set_u(&c[11], s->copy_bytes);
    }
    free(rows);
    gma_strs_free(&names);
    return err ? -1 : 0;
}

static int build_devices(const gma_replay *r, gma_table *t, uint64_t top)
{
    gma_table_init(t, "Devices", DCOLS, NCOLS(DCOLS));
    srow rows[GMA_MAX_DEVICES];
    gma_strs names = { 0 };
    size_t m = 0;
    int err = 0;
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++) {
        const gma_dev *D = &r->dev[d];
        if (!D->present || !gma_dev_selected(r, d))
            continue;
        char nm[16];
        snprintf(nm, sizeof(nm), "%03u", d);
        srow *x = &rows[m++];
        x->name = gma_strs_add(&names, nm, strlen(nm));
        x->order = d;
        x->idx = d;
        x->key = DEVICE_KEYS[r->opt.sort].value(r, D);
        err |= x->name == (size_t)-1;
    }
    t->total_rows = m;
    size_t keep = err ? 0 : rank(&DEVICE_KEYS[r->opt.sort], rows, m, &names, top, &err);
    for (size_t j = 0; j < keep && !err; j++) {
        const gma_dev *D = &r->dev[rows[j].idx];
        gma_cell *c = gma_table_row(t);
        if (!c) {
            err = 1;
            break;
        }
        set_u(&c[0], rows[j].idx);
        const char *dn = D->name_off ? gma_strs_get(&r->strs, D->name_off) : "";
        gma_cell_str(t, &c[1], dn[0] ? dn : "?");
        set_u(&c[2], D->total_mem);
        c[2].null = !D->total_mem;
        set_u(&c[3], D->baseline_bytes);
        set_u(&c[4], D->peak);
        set_u(&c[5], D->peak_step);
        set_i(&c[6], gma_rel(r, D->peak_ts));
        c[4].null = c[5].null = c[6].null = !D->has_peak;
        set_u(&c[7], D->alloc_bytes);
        set_u(&c[8], D->free_bytes);
        set_i(&c[9], (int64_t)(D->alloc_bytes - D->free_bytes));
        set_u(&c[10], D->leaked_bytes);
        set_u(&c[11], D->kernels);
        set_u(&c[12], D->kernel_ns);
        c[12].null = gma_launch_times_only(r);
        set_u(&c[13], D->max_used);
        c[13].null = !D->has_sample;
        set_u(&c[14], D->host_peak);
        set_u(&c[15], D->copies);
        set_u(&c[16], D->copy_bytes);
    }
    gma_strs_free(&names);
    return err ? -1 : 0;
}

/* ---- the views ----------------------------------------------------------------- */

static const gma_merge KMERGE[] = { { "name", GMA_MERGE_KEY },          { "peak_bytes", GMA_MERGE_MAX },
                                    { "mean_ns", GMA_MERGE_MEAN },       { "min_ns", GMA_MERGE_MIN },
                                    { "max_ns", GMA_MERGE_MAX },         { "registers", GMA_MERGE_MAX },
                                    { "shared_mem_bytes", GMA_MERGE_MAX }, { "local_mem_bytes", GMA_MERGE_MAX },
                                    { NULL, GMA_MERGE_SUM } };
static const gma_merge RMERGE[] = { { "name", GMA_MERGE_KEY }, { "peak_bytes", GMA_MERGE_MAX },
                                    { "mean_ns", GMA_MERGE_MEAN }, { NULL, GMA_MERGE_SUM } };
/* steps: start = the earliest rank's, duration = the slowest rank's */
static const gma_merge SMERGE[] = { { "step", GMA_MERGE_KEY },       { "phase", GMA_MERGE_FIRST },
                                    { "start_ns", GMA_MERGE_MIN },   { "duration_ns", GMA_MERGE_MAX },
                                    { "peak_bytes", GMA_MERGE_MAX }, { NULL, GMA_MERGE_SUM } };
static const gma_merge TMERGE[] = { { "name", GMA_MERGE_KEY }, { "device", GMA_MERGE_KEY }, { "step", GMA_MERGE_MIN },
                                    { "time_ns", GMA_MERGE_MIN }, { NULL, GMA_MERGE_SUM } };
static const gma_merge STMERGE[] = { { "device", GMA_MERGE_KEY }, { "stream", GMA_MERGE_KEY },
                                     { "peak_bytes", GMA_MERGE_MAX }, { NULL, GMA_MERGE_SUM } };
/* devices; allocations are never merged (each rank's own), but match the same way */
static const gma_merge DMERGE[] = { { "device", GMA_MERGE_KEY },   { "name", GMA_MERGE_FIRST },
                                    { "total_bytes", GMA_MERGE_MAX }, { "peak_bytes", GMA_MERGE_MAX },
                                    { "peak_step", GMA_MERGE_ATPEAK }, { "peak_ns", GMA_MERGE_ATPEAK },
                                    { "driver_used_max_bytes", GMA_MERGE_MAX },
                                    { "pinned_host_peak_bytes", GMA_MERGE_MAX }, { NULL, GMA_MERGE_SUM } };

/* name, keys, name columns, merge rules, --diff's default and max, build, alone, diff_build */
const gma_view gma_view_kernel = { "kernel", KERNEL_KEYS, { "name", NULL }, KMERGE, GMA_SORT_HELD, 0, build_kernels, 0, NULL };
const gma_view gma_view_range = { "range", RANGE_KEYS, { "name", NULL }, RMERGE, GMA_SORT_HELD, 0, build_ranges, 0, NULL };
const gma_view gma_view_alloc = { "alloc", ALLOC_KEYS, { "device", "address" }, DMERGE, GMA_SORT_ALLOC, 0, build_allocs, 0, NULL };
const gma_view gma_view_step = { "step", STEP_KEYS, { "step", NULL }, SMERGE, GMA_SORT_ALLOC, 0, build_steps, 0, NULL };
const gma_view gma_view_tag = { "tag", TAG_KEYS, { "name", NULL }, TMERGE, GMA_SORT_MEM, 1, build_tags, 0, NULL };
const gma_view gma_view_stream = { "stream", STREAM_KEYS, { "device", "stream" }, STMERGE, GMA_SORT_ALLOC, 0, build_streams, 0, NULL };
const gma_view gma_view_device = { "device", DEVICE_KEYS, { "device", NULL }, DMERGE, GMA_SORT_PEAK, 1, build_devices, 0, NULL };

