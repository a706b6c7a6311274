/*
 * The assembler (assembler.h): activity records, ring events and schedule
 * epochs in; trace records out, in order, through the io table.
 *
 * Inputs, each round (the writer thread feeds them in this order):
 *   - the event ring (NVTX ranges/marks, tags, devices, VMM notices, syncs,
 *     launch mode's launches and copies, framework allocator blocks),
 *   - the schedule epochs (published by whoever made a step),
 *   - completed CUPTI buffers.
 * The ring is read FIRST, then the epochs, then the buffers. Whoever wants a record to be ordered before an event (a tag, a
 * window edge) does a forced CUPTI flush before publishing it, so the
 * buffers with those records are already queued when the writer sees the
 * event.
 *
 * Ordering rule: every API call and every event is stamped with the
 * schedule epoch it was made in. Activity records are joined with their API
 * call through the correlation table (epoch, thread, launch seq, range) and
 * staged; the round then merges staged records (sorted by epoch, then
 * timestamp) with the ring events (ring order) and applies each transition
 * once everything of the epochs before it is out. So the baseline at a
 * window begin holds exactly the allocations made before the step call, and
 * a record is in a window iff the epoch of its API call is; a record that
 * arrives late still lands in the step it belongs to.
 *
 * What is written:
 *   (HEADER and TRAILER are the writer's.) DEVICE when a device is first seen; STRING on first use
 *   (the name of a range begun outside the windows only once a record of the trace names it).
 *   ALLOC/FREE (any epoch updates the live table; written when the epoch is
 *   in an active window). KERNEL/MEMCPY/MEMSET in ACTIVE epochs only (WARMUP
 *   ones are collected so the window starts warm, then discarded). RANGE_*
 *   and MARK inside windows; each window begins with WINDOW_BEGIN, the
 *   baseline ALLOC records (GMT_MEMF_BASELINE) and a RANGE_BEGIN for every
 *   range still open, and ends with WINDOW_END and a frame end. STEP and
 *   MEMSAMPLE at every schedule transition, TAG (+ MEMSAMPLE) at every tag,
 *   MEMSAMPLE every GMEMPROF_SAMPLE_MS inside windows, STATS at every frame
 *   end.
 *   One gating rule for every record (gate): written when its epoch is in
 *   an active window, whenever it arrives. Kernel records complete on the
 *   GPU after their launch, and an ALLOC/FREE of a call racing the step on
 *   another thread can come after the step's forced flush: such a record is
 *   written after its window's WINDOW_END, carrying its step (counted as
 *   late, not dropped). A record of a step outside every active window is
 *   not written and is counted (outside), so that records made = written +
 *   dropped + outside. With the flight recorder beside a schedule of
 *   windows, such a record still goes to the recorder (gmp_asm_set_aside).
 */
#include "assembler.h"

#include <stdlib.h>
#include <string.h>

#include "families.h"
#include "frames.h"
#include "live.h"
#include "schedule.h"
#include "torch_bridge.h"
#include "vmmranges.h"

typedef struct staged {
    uint64_t ts;
    uint32_t epoch;
    uint8_t type; /* GMT_REC_ALLOC/FREE/KERNEL/MEMCPY/MEMSET */
    uint8_t matched;
    uint8_t fam;
    uint8_t is_async;
    uint8_t pool_type;
    const char *kname; /* KERNEL: CUPTI's name (stable for the kernel's life) */
    union {
        gmt_mem m;
        gmt_kernel k;
        gmt_copy c;
    } u;
} staged;

/* A staged record's place in the order of a drain: (epoch, time), ties in
 * staging order (idx). Sorting these 16-byte keys, not the records, moves
 * no record; only the few a drain keeps move, once. */
typedef struct sort_key {
    uint64_t ts;
    uint32_t epoch;
    uint32_t idx;
} sort_key;

typedef struct open_range {
    uint64_t id; /* 0: empty slot */
    uint64_t tid, parent, name, ts, kind;
} open_range;

#define KCACHE 1024
#define EV_BATCH 4096
#define GMP_CLOSED_RANGES 1024 /* a power of two */

struct gmp_asm {
    gmp_asm_io io;
    const gmp_corrtab *corr;
    gmp_live *live;
    /* The framework allocator's view (GMP_EV_BLOCK): live blocks, segments,
     * and per device the bytes mapped into expandable segments. */
    gmp_live *blocks, *segs;
    /* The owners of blocks (GMT_BLK_OWNER), keyed like the blocks: bytes =
     * the tensors' bytes, source = the owner's string id, flags its role;
     * made at the first OWNER. Kept for the whole run, so that every later
     * window's baseline names the parameters made before it. */
    gmp_live *owners;
    uint64_t mapped[GMP_MAX_DEVICES];
    int fw_seen;
    /* per device, an ALLOC waiting for its size (held_settle) */
    gmt_block held[GMP_MAX_DEVICES];
    uint64_t held_base[GMP_MAX_DEVICES], held_freed[GMP_MAX_DEVICES], held_added[GMP_MAX_DEVICES];
    uint32_t held_epoch[GMP_MAX_DEVICES];
    uint8_t held_on[GMP_MAX_DEVICES];
    /* per device, the block events that came after its held ALLOC: written
     * after it, so the trace keeps the allocator's order (held_out) */
    struct pend_block *pend[GMP_MAX_DEVICES];
    uint32_t npend[GMP_MAX_DEVICES], cap_pend[GMP_MAX_DEVICES];
    uint64_t block_events, ooms;
    /* the last CUDA allocation that failed: with a framework allocator, its
     * OOM (which comes after, if it gives up) takes its call and status */
    gmt_oom cuda_oom;
    int have_cuda_oom;

    gmp_epoch_info hist[GMP_EPOCH_HIST];
    uint32_t next_epoch; /* next transition to apply */
    uint32_t known;      /* newest epoch copied into hist */
    uint32_t safe;       /* newest epoch whose earlier events have all been popped (gmp_asm_event_added) */
    int have_epochs;

    int win_open;
    uint64_t win_index;
    uint64_t windows;
    uint64_t cur_step;
    int cur_phase;

    staged *st;
    size_t nst, cap_st;
    sort_key *ord, *ord_tmp; /* cap_st each: the drain's order, merge scratch */
    uint8_t *keep;           /* cap_st: staged records a drain leaves */
    uint64_t horizon; /* trace time just before this round popped the ring */
    gmp_ev *evs;
    size_t nev, first; /* first: the first event popped this round */

    gmp_vmm vmm; /* reservations and mappings */

    open_range *open;
    size_t open_cap, open_n;
    /* The last ranges closed, by id: a framework's OOM waits behind a held
     * ALLOC (its size needs the next counter reading) while the exception
     * closes the op it failed in; the failure still names that op. */
    struct { uint64_t id, name; } closed[GMP_CLOSED_RANGES];

    struct {
        const char *p;
        uint64_t id;
    } kcache[KCACHE];
    uint8_t dev_written[GMP_MAX_DEVICES];

    /* Launch mode: (symbolName pointer, module generation) -> string id.
     * Open addressing; never shrinks (a thread sends a name only once). */
    struct lname {
        uint64_t key; /* 0: empty */
        uint32_t gen;
        uint64_t id;
    } *lmap;
    size_t lmap_cap, lmap_n;
    uint64_t launch_noname; /* launch events whose name was not known (should stay 0) */

    /* Interned frames and stacks (frames.h): host id -> trace string id,
     * 0 not interned yet. Grows by doubling; writer thread only. */
    uint64_t *fmap;
    size_t fmap_cap;

    uint64_t unmatched, late, bad_records, pool_records, lost_epochs, live_replaced;
    uint64_t outside; /* records of a step outside every active window: not written, by design */
    uint64_t last_sample_ns;
    gmp_asm_aside_fn put_aside; /* gmp_asm_set_aside: records outside windows, NULL none */
    int aside_kernels;          /* KERNEL/MEMCPY/MEMSET outside windows go aside too */
    gmp_asm_intern_fn intern_held; /* gmp_asm_set_intern_held; NULL: io.intern */
    int base_asked;                /* gmp_asm_ask_baseline: written once the io call returns */
    uint64_t base_ts, base_step;
    int live_asked;                /* gmp_asm_ask_live: likewise */
};

/* ---- output (the io table) ------------------------------------------------- */

/* What an io call asked for, once it returned (gmp_asm_ask_baseline,
 * gmp_asm_ask_live). */
static void serve_asked(gmp_asm *a)
{
    if (a->base_asked) {
        a->base_asked = 0;
        a->io.asked(a->io.ctx, GMP_ASM_ASK_BASELINE, 1);
        gmp_asm_put_baseline(a, a->base_ts, 0, a->base_step);
        a->io.asked(a->io.ctx, GMP_ASM_ASK_BASELINE, 0);
    }
    if (a->live_asked) {
        a->live_asked = 0;
        a->io.asked(a->io.ctx, GMP_ASM_ASK_LIVE, 1);
        gmp_asm_put_live(a);
        a->io.asked(a->io.ctx, GMP_ASM_ASK_LIVE, 0);
    }
}

static void put(gmp_asm *a, const gmt_record *r)
{
    a->io.put(a->io.ctx, r);
    serve_asked(a);
}

static uint64_t intern(gmp_asm *a, const char *s, size_t n)
{
    if (n > GMT_MAX_STRING)
        n = GMT_MAX_STRING;
    return a->io.intern(a->io.ctx, s, n);
}

static uint64_t intern_held(gmp_asm *a, const char *s, size_t n)
{
    if (!a->intern_held)
        return intern(a, s, n);
    if (n > GMT_MAX_STRING)
        n = GMT_MAX_STRING;
    return a->intern_held(a->io.ctx, s, n);
}

static void end_frame(gmp_asm *a) { a->io.end_frame(a->io.ctx); }
static void put_stats(gmp_asm *a)
{
    a->io.stats(a->io.ctx);
    serve_asked(a);
}
static uint64_t now(gmp_asm *a) { return a->io.now(a->io.ctx); }
static uint64_t mono(gmp_asm *a) { return a->io.mono(a->io.ctx); }

static uint64_t kernel_name_id(gmp_asm *a, const char *p)
{
    if (!p)
        return 0;
    size_t h = ((uintptr_t)p >> 4) & (KCACHE - 1);
    if (a->kcache[h].p == p)
        return a->kcache[h].id;
    uint64_t id = intern(a, p, strlen(p));
    a->kcache[h].p = p;
    a->kcache[h].id = id;
    return id;
}

static size_t lmap_slot(const struct lname *m, size_t cap, uint64_t key, uint32_t gen)
{
    uint64_t h = (key ^ ((uint64_t)gen << 32)) * 0x9e3779b97f4a7c15ull;
    size_t i = (size_t)(h >> 32) & (cap - 1);
    while (m[i].key && !(m[i].key == key && m[i].gen == gen))
        i = (i + 1) & (cap - 1);
    return i;
}

static void lmap_put(gmp_asm *a, uint64_t key, uint32_t gen, uint64_t id)
{
    if ((a->lmap_n + 1) * 2 > a->lmap_cap) {
        size_t cap = a->lmap_cap ? a->lmap_cap * 2 : 1024;
        struct lname *m = calloc(cap, sizeof *m);
        if (!m)
            return; /* the name of this kernel is then unknown: counted at use */
        for (size_t i = 0; i < a->lmap_cap; i++)
            if (a->lmap[i].key)
                m[lmap_slot(m, cap, a->lmap[i].key, a->lmap[i].gen)] = a->lmap[i];
        free(a->lmap);
        a->lmap = m;
        a->lmap_cap = cap;
    }
    size_t i = lmap_slot(a->lmap, a->lmap_cap, key, gen);
    if (!a->lmap[i].key)
        a->lmap_n++;
    a->lmap[i] = (struct lname){key, gen, id};
}

/* The string id of a launch event's kernel: the name it carries (interned
 * and remembered under its key), else the one remembered. The key is a
 * pointer value in the application: never dereferenced here. Frees the
 * event's heap copy. */
static uint64_t launch_name_id(gmp_asm *a, gmp_ev *ev)
{
    gmp_ev_launch *l = &ev->launch;
    uint64_t id = 0;
    if (!l->key)
        return 0;
    if (l->heap || l->nlen) {
        const char *p = l->heap ? l->heap : l->name;
        id = intern(a, p, l->heap ? strlen(l->heap) : l->nlen);
        free(l->heap);
        l->heap = NULL;
        l->nlen = 0;
        lmap_put(a, l->key, l->gen, id);
        return id;
    }
    if (a->lmap_cap) {
        size_t i = lmap_slot(a->lmap, a->lmap_cap, l->key, l->gen);
        if (a->lmap[i].key)
            return a->lmap[i].id;
    }
    a->launch_noname++;
    return 0;
}

static const gmp_epoch_info *epinfo(gmp_asm *a, uint32_t e)
{
    if (!a->have_epochs)
        return NULL;
    if ((int32_t)(e - a->known) > 0)
        e = a->known;
    const gmp_epoch_info *i = &a->hist[e % GMP_EPOCH_HIST];
    return i->epoch == e ? i : NULL;
}

/* The epoch a record without an API callback belongs to: the last
 * transition at or before its time. */
static uint32_t epoch_by_ts(gmp_asm *a, uint64_t ts)
{
    if (!a->have_epochs)
        return 0;
    uint32_t e = a->known;
    for (uint32_t n = 0; n < GMP_EPOCH_HIST - 1; n++, e--) {
        const gmp_epoch_info *i = &a->hist[e % GMP_EPOCH_HIST];
        if (i->epoch != e)
            return e + 1;
        if (i->ts <= ts || e == 0)
            return e;
    }
    return e;
}

static int in_window(const gmp_epoch_info *i)
{
    return i && i->in_window && i->phase == GMT_PHASE_ACTIVE;
}

/* The gating rule, the same for every record: written when the step of its
 * API call (its epoch) is in an active window, whenever it reaches the
 * writer. One that comes after its window's WINDOW_END (a kernel completing
 * on the GPU after the step call, a call racing the step on another thread)
 * is still written and carries its step; counted here, as it is not inside
 * its window's bracket. 1 when the record is to be written; a record of
 * another step is counted in `outside` when count_outside. */
static int gate(gmp_asm *a, const gmp_epoch_info *ep, int count_outside)
{
    if (!in_window(ep)) {
        a->outside += (uint64_t)count_outside;
        return 0;
    }
    if (!a->win_open || a->win_index + 1 != ep->window)
        a->late++;
    return 1;
}

/* Where a gated record goes (gate: 1 the trace, 0 aside). With a flight
 * recorder beside the trace (gmp_asm_set_aside), a record the gate keeps out
 * still goes to the recorder, which records the whole run; without one it
 * is not made at all (no name is interned for it). Kernels and copies go
 * aside only when the recorder keeps them (gmp_asm_set_aside). */
static int aside(const gmp_asm *a, int kernel_or_copy)
{
    return a->put_aside && (!kernel_or_copy || a->aside_kernels);
}

static void emit_to(gmp_asm *a, int to_trace, const gmt_record *r)
{
    if (to_trace) {
        put(a, r);
    } else {
        a->put_aside(a->io.ctx, r);
        serve_asked(a);
    }
}

/* ---- open NVTX ranges (for the RANGE_BEGINs at a window begin) ----------- */

#define OPEN_MAX (1u << 20)

static open_range *open_slot(gmp_asm *a, uint64_t id)
{
    size_t m = a->open_cap - 1, i = (size_t)(id * 0x9E3779B97F4A7C15ull) & m;
    while (a->open[i].id && a->open[i].id != id)
        i = (i + 1) & m;
    return &a->open[i];
}

static void open_insert(gmp_asm *a, const open_range *r)
{
    if ((a->open_n + 1) * 2 > a->open_cap) {
        if (a->open_cap >= OPEN_MAX)
            return; /* a program that never pops: stop tracking new ones */
        size_t oc = a->open_cap, nc = oc ? oc * 2 : 1024;
        open_range *old = a->open, *p = calloc(nc, sizeof *p);
        if (!p)
            return;
        a->open = p;
        a->open_cap = nc;
        for (size_t i = 0; i < oc; i++)
            if (old[i].id)
                *open_slot(a, old[i].id) = old[i];
        free(old);
    }
    open_range *s = open_slot(a, r->id);
    if (!s->id)
        a->open_n++;
    *s = *r;
}

static int open_remove(gmp_asm *a, uint64_t id, open_range *out)
{
    if (!a->open_cap)
        return 0;
    size_t m = a->open_cap - 1, i = (size_t)(id * 0x9E3779B97F4A7C15ull) & m;
    while (a->open[i].id && a->open[i].id != id)
        i = (i + 1) & m;
    if (!a->open[i].id)
        return 0;
    *out = a->open[i];
    a->open_n--;
    /* backward-shift deletion keeps probe chains intact */
    size_t j = i;
    for (;;) {
        a->open[i].id = 0;
        for (;;) {
            j = (j + 1) & m;
            if (!a->open[j].id)
                return 1;
            size_t k = (size_t)(a->open[j].id * 0x9E3779B97F4A7C15ull) & m;
            if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
                continue;
            a->open[i] = a->open[j];
            i = j;
            break;
        }
    }
}

/* ---- devices and samples ------------------------------------------------- */

static void put_device(gmp_asm *a, unsigned d)
{
    if (d >= GMP_MAX_DEVICES)
        return;
    if (a->dev_written[d])
        return;
    a->dev_written[d] = 1;
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.device + 16);
    r.type = GMT_REC_DEVICE;
    a->io.device(a->io.ctx, d, &r.u.device);
    r.u.device.device = d;
    put(a, &r);
}

/* One MEMSAMPLE per device: from the snapshot taken at the event when it
 * is still there, else sampled now. */
static void sample_devices_at(gmp_asm *a, uint64_t ticket, int to_trace)
{
    gmp_snap sn;
    int have = a->io.snapshot(a->io.ctx, ticket, &sn);
    for (unsigned d = 0; d < GMP_MAX_DEVICES; d++) {
        uint64_t f, t, ts;
        if (!a->dev_written[d])
            continue;
        if (have && (sn.mask >> d & 1)) {
            f = sn.free_b[d];
            t = sn.total_b[d];
            ts = sn.ts;
        } else if (a->io.meminfo(a->io.ctx, d, &f, &t) == 0) {
            ts = now(a);
        } else {
            continue;
        }
        gmt_record r;
        memset(&r, 0, sizeof r.type + sizeof r.u.sample + 16);
        r.type = GMT_REC_MEMSAMPLE;
        r.u.sample.ts = ts;
        r.u.sample.device = d;
        r.u.sample.used = t >= f ? t - f : 0;
        r.u.sample.free_ = f;
        r.u.sample.total = t;
        emit_to(a, to_trace, &r);
    }
    a->last_sample_ns = mono(a);
}

/* ---- windows ------------------------------------------------------------- */

static int cmp_mem(const void *a, const void *b)
{
    const gmt_mem *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->address < y->address ? -1 : x->address > y->address;
}

typedef struct collect_ctx {
    gmt_mem *a;
    size_t n, cap;
    uint64_t bytes;
} collect_ctx;

static int collect_live(const gmt_mem *m, void *vctx)
{
    collect_ctx *c = vctx;
    if (c->n < c->cap)
        c->a[c->n++] = *m;
    c->bytes += m->bytes;
    return 0;
}

static int cmp_open(const void *a, const void *b)
{
    const open_range *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The live allocations of t, oldest first (NULL when there are none or no
 * memory: then *n is 0); *bytes their sum. */
static gmt_mem *live_sorted(gmp_live *t, size_t *n, uint64_t *bytes)
{
    collect_ctx c = {NULL, 0, gmp_live_count(t), 0};
    c.a = c.cap ? malloc(c.cap * sizeof *c.a) : NULL;
    if (!c.a)
        c.cap = 0;
    gmp_live_foreach(t, collect_live, &c);
    if (c.n > 1)
        qsort(c.a, c.n, sizeof *c.a, cmp_mem);
    *n = c.n;
    *bytes = c.bytes;
    return c.a;
}

/* A block or segment of the live tables as its BLOCK record. */
static void put_block_mem(gmp_asm *a, const gmt_mem *m, unsigned action, uint64_t flags)
{
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.block + 16);
    r.type = GMT_REC_BLOCK;
    r.u.block = (gmt_block){ .ts = m->ts, .action = action, .device = m->device, .address = m->address,
                             .bytes = m->bytes, .stream = m->stream, .tid = m->tid, .range = m->range,
                             .seq = m->seq, .step = m->step, .flags = m->flags | flags, .pool = m->corr,
                             .requested = m->source };
    put(a, &r);
}

static void put_live_sorted(gmp_asm *a, gmp_live *t, unsigned action)
{
    size_t n = 0;
    uint64_t bytes = 0;
    gmt_mem *m = live_sorted(t, &n, &bytes);
    for (size_t i = 0; i < n; i++)
        put_block_mem(a, &m[i], action, GMT_BLKF_BASELINE);
    free(m);
}

/* The owners of the live blocks, oldest report first, as OWNER records
 * (a block freed since its owner was reported has no owner: its
 * FREE_REQUESTED removed it). */
static void put_owners(gmp_asm *a)
{
    if (!a->owners || !gmp_live_count(a->owners))
        return;
    size_t n = 0;
    uint64_t bytes = 0;
    gmt_mem *m = live_sorted(a->owners, &n, &bytes);
    for (size_t i = 0; i < n; i++) {
        if (!gmp_live_find(a->blocks, m[i].device, m[i].address))
            continue;
        gmt_record r;
        memset(&r, 0, sizeof r.type + sizeof r.u.block + 16);
        r.type = GMT_REC_BLOCK;
        r.u.block = (gmt_block){ .ts = m[i].ts, .action = GMT_BLK_OWNER, .device = m[i].device,
                                 .address = m[i].address, .bytes = m[i].bytes, .tid = m[i].tid,
                                 .range = m[i].range, .seq = m[i].seq, .step = m[i].step,
                                 .flags = m[i].flags | GMT_BLKF_BASELINE, .frame = m[i].source };
        put(a, &r);
    }
    free(m);
}

/* The framework's part of a window's baseline, after the CUPTI one: its
 * segments, the bytes mapped into expandable segments (one SEGMENT_MAP per
 * device at address 0), then its live blocks and their owners. */
static void block_baseline(gmp_asm *a, uint64_t step)
{
    put_live_sorted(a, a->segs, GMT_BLK_SEGMENT_ALLOC);
    for (unsigned d = 0; d < GMP_MAX_DEVICES; d++) {
        if (!a->mapped[d])
            continue;
        gmt_mem m = {.ts = now(a), .device = d, .bytes = a->mapped[d], .step = step};
        put_block_mem(a, &m, GMT_BLK_SEGMENT_MAP, GMT_BLKF_BASELINE);
    }
    put_live_sorted(a, a->blocks, GMT_BLK_ALLOC);
    put_owners(a);
}

/* The NVTX ranges open at this moment, outermost first (ids grow). */
static void put_open_ranges(gmp_asm *a)
{
    if (!a->open_n)
        return;
    open_range *o = malloc(a->open_n * sizeof *o);
    size_t n = 0;
    for (size_t i = 0; o && i < a->open_cap; i++)
        if (a->open[i].id)
            o[n++] = a->open[i];
    if (!o)
        return;
    qsort(o, n, sizeof *o, cmp_open);
    for (size_t i = 0; i < n; i++) {
        gmt_record b;
        memset(&b, 0, sizeof b.type + sizeof b.u.range + 16);
        b.type = GMT_REC_RANGE_BEGIN;
        b.u.range.ts = o[i].ts;
        b.u.range.tid = o[i].tid;
        b.u.range.id = o[i].id;
        b.u.range.parent = o[i].parent;
        b.u.range.name = o[i].name;
        b.u.range.kind = o[i].kind;
        put(a, &b);
    }
    free(o);
}

void gmp_asm_put_baseline(gmp_asm *a, uint64_t ts, uint64_t window, uint64_t step)
{
    end_frame(a); /* a window starts a fresh frame: it decodes on its own */
    size_t n = 0;
    uint64_t bytes = 0;
    gmt_mem *m = live_sorted(a->live, &n, &bytes);
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.wbegin + 16);
    r.type = GMT_REC_WINDOW_BEGIN;
    r.u.wbegin.ts = ts;
    r.u.wbegin.window = window;
    r.u.wbegin.step = step;
    r.u.wbegin.baseline_count = n;
    r.u.wbegin.baseline_bytes = bytes;
    put(a, &r);
    for (size_t i = 0; i < n; i++) {
        gmt_record b;
        memset(&b, 0, sizeof b.type + sizeof b.u.mem + 16);
        b.type = GMT_REC_ALLOC;
        b.u.mem = m[i];
        b.u.mem.flags |= GMT_MEMF_BASELINE;
        put(a, &b);
    }
    free(m);
    if (a->fw_seen)
        block_baseline(a, step);
    put_open_ranges(a);
}

void gmp_asm_ask_live(gmp_asm *a) { a->live_asked = a->io.asked != NULL; }

void gmp_asm_ask_baseline(gmp_asm *a, uint64_t ts, uint64_t step)
{
    if (!a->io.asked)
        return;
    a->base_asked = 1;
    a->base_ts = ts;
    a->base_step = step;
}

static void window_begin(gmp_asm *a, const gmp_epoch_info *e)
{
    uint64_t window = e->window ? e->window - 1 : 0;
    gmp_asm_put_baseline(a, e->ts, window, e->step);
    a->win_open = 1;
    a->win_index = window;
    a->windows++;
}

static void window_end(gmp_asm *a, uint64_t ts, int reason)
{
    if (!a->win_open)
        return;
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.wend + 16);
    r.type = GMT_REC_WINDOW_END;
    r.u.wend.ts = ts;
    r.u.wend.window = a->win_index;
    r.u.wend.step = a->cur_step;
    r.u.wend.reason = (uint64_t)reason;
    put(a, &r);
    a->win_open = 0;
    put_stats(a);
    end_frame(a);
}

static void apply_epoch(gmp_asm *a, const gmp_epoch_info *e)
{
    if ((e->ev & GMP_SCHED_EV_WINDOW_END) && a->win_open)
        window_end(a, e->ts, GMT_WEND_SCHEDULE);
    if (e->ev & GMP_SCHED_EV_WINDOW_BEGIN)
        window_begin(a, e);
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.step + 16);
    r.type = GMT_REC_STEP;
    r.u.step.ts = e->ts;
    r.u.step.step = e->step;
    r.u.step.phase = e->phase;
    r.u.step.source = e->source;
    put(a, &r);
    a->cur_step = e->step;
    a->cur_phase = e->phase;
    sample_devices_at(a, e->snap, 1);
}

/* ---- records ------------------------------------------------------------- */

static uint64_t mem_source(const staged *s, int vmm)
{
    const gmt_mem *m = &s->u.m;
    if (gmp_fam_is_vmm(s->fam) || vmm)
        return GMT_SRC_VMM;
    if (s->is_async || s->pool_type != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID || s->fam == GMP_FAM_ASYNC)
        return GMT_SRC_ASYNC_POOL;
    switch (s->fam) {
    case GMP_FAM_MALLOC:
        return GMT_SRC_MALLOC;
    case GMP_FAM_PITCH:
        return GMT_SRC_PITCHED;
    case GMP_FAM_HOST:
        return GMT_SRC_PINNED_HOST;
    case GMP_FAM_MANAGED:
        return GMT_SRC_MANAGED;
    default:
        break;
    }
    switch (m->kind) {
    case GMT_MEMKIND_MANAGED:
        return GMT_SRC_MANAGED;
    case GMT_MEMKIND_PINNED:
        return GMT_SRC_PINNED_HOST;
    case GMT_MEMKIND_ARRAY:
        return GMT_SRC_PITCHED;
    case GMT_MEMKIND_DEVICE_STATIC:
    case GMT_MEMKIND_MANAGED_STATIC:
        return GMT_SRC_STATIC;
    case GMT_MEMKIND_DEVICE:
        return GMT_SRC_MALLOC;
    default:
        return GMT_SRC_UNKNOWN;
    }
}

static void emit_mem(gmp_asm *a, staged *s)
{
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.mem + 16);
    r.type = (gmt_type)s->type;
    r.u.mem = s->u.m;
    gmt_mem *m = &r.u.mem;
    const gmp_epoch_info *ep = epinfo(a, s->epoch);
    /* a range covers only what was made after its call began (vmmranges.h) */
    int vmm = gmp_vmm_covers(&a->vmm, m->address, m->ts);
    if (!s->matched) {
        /* No API callback (PyTorch's expandable segments show correlation id
         * 0): the VMM mapping covering the address says who mapped it, or
         * for a release, the unmap that covered it. */
        const gmp_vrange *v = gmp_vmm_mapping(&a->vmm, m->address, m->ts);
        if (!v && s->type == GMT_REC_FREE)
            v = gmp_vmm_unmapping(&a->vmm, m->address);
        if (v) {
            vmm = 1;
            m->tid = v->tid;
            m->range = v->range;
            m->seq = v->seq;
            m->flags &= ~(uint64_t)GMT_MEMF_NO_THREAD;
            const gmp_epoch_info *me = epinfo(a, v->epoch);
            if (me)
                ep = me;
        }
    }
    m->step = ep ? ep->step : a->cur_step;
    if (s->type == GMT_REC_ALLOC) {
        m->source = mem_source(s, vmm);
        int rc = gmp_live_insert(a->live, m);
        if (rc == 1)
            a->live_replaced++;
    } else {
        gmt_mem old;
        if (gmp_live_remove(a->live, m->device, m->address, &old)) {
            m->kind = old.kind;
            m->source = old.source;
            if (!m->bytes)
                m->bytes = old.bytes;
        } else {
            m->source = mem_source(s, vmm);
        }
    }
    int in = gate(a, ep, 1);
    if (in || aside(a, 0))
        emit_to(a, in, &r);
}

static void emit_kernel_or_copy(gmp_asm *a, staged *s)
{
    const gmp_epoch_info *ep = epinfo(a, s->epoch);
    int in = gate(a, ep, 1);
    if (!in && !aside(a, 1))
        return; /* WARMUP (collected so the window starts warm) or outside */
    uint64_t step = ep ? ep->step : a->cur_step;
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.kernel + 16);
    r.type = (gmt_type)s->type;
    if (s->type == GMT_REC_KERNEL) {
        r.u.kernel = s->u.k;
        r.u.kernel.step = step;
        r.u.kernel.name = kernel_name_id(a, s->kname);
    } else {
        r.u.copy = s->u.c;
        r.u.copy.step = step;
    }
    emit_to(a, in, &r);
}

static void emit_staged(gmp_asm *a, staged *s)
{
    if (s->type == GMT_REC_ALLOC || s->type == GMT_REC_FREE)
        emit_mem(a, s);
    else
        emit_kernel_or_copy(a, s);
}

static void put_tag(gmp_asm *a, const gmp_ev *ev)
{
    gmt_record *r = calloc(1, sizeof *r); /* a TAG is 2.6 KB: not on the stack */
    if (!r)
        return;
    r->type = GMT_REC_TAG;
    r->u.tag.ts = ev->ts;
    r->u.tag.name = intern(a, ev->name, ev->len);
    const gmp_epoch_info *ep = epinfo(a, ev->epoch);
    r->u.tag.step = ep ? ep->step : a->cur_step;
    r->u.tag.has_framework = (uint64_t)a->fw_seen;
    gmp_snap sn;
    int have = a->io.snapshot(a->io.ctx, ev->c, &sn);
    for (unsigned d = 0; d < GMP_MAX_DEVICES; d++) {
        if (!a->dev_written[d])
            continue;
        gmt_tag_device *td = &r->u.tag.dev[r->u.tag.ndev++];
        uint64_t f = 0, t = 0;
        td->device = d;
        td->live_bytes = gmp_live_bytes(a->live, d);
        if (a->fw_seen) {
            td->fw_allocated = gmp_live_bytes(a->blocks, d);
            td->fw_reserved = gmp_live_bytes(a->segs, d) + a->mapped[d];
        }
        if (have && (sn.mask >> d & 1)) {
            td->driver_free = sn.free_b[d];
            td->driver_total = sn.total_b[d];
            td->driver_used = sn.total_b[d] >= sn.free_b[d] ? sn.total_b[d] - sn.free_b[d] : 0;
        } else if (a->io.meminfo(a->io.ctx, d, &f, &t) == 0) {
            td->driver_free = f;
            td->driver_total = t;
            td->driver_used = t >= f ? t - f : 0;
        }
    }
    put(a, r);
    free(r);
    sample_devices_at(a, ev->c, 1);
}

/* A kernel launch (launch mode): its KERNEL record, written like a GPU one
 * (active steps only) but flagged: start = end = the launch time. */
static void emit_launch(gmp_asm *a, gmp_ev *ev, const gmp_epoch_info *ep)
{
    uint64_t name = launch_name_id(a, ev); /* also in warmup: later launches refer to it */
    int in = gate(a, ep, 1);
    if (!in && !aside(a, 1))
        return;
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.kernel + 16);
    r.type = GMT_REC_KERNEL;
    gmt_kernel *k = &r.u.kernel;
    k->start = k->end = ev->ts;
    k->device = ev->d;
    k->stream = ev->c;
    k->corr = ev->corr;
    k->name = name;
    for (int i = 0; i < 3; i++) {
        k->grid[i] = ev->launch.grid[i];
        k->block[i] = ev->launch.block[i];
    }
    k->tid = ev->tid;
    k->seq = ev->a;
    k->range = ev->b;
    k->step = ep ? ep->step : a->cur_step;
    k->flags = GMT_KERNF_LAUNCH;
    if (ev->launch.has_attrs) {
        k->registers = ev->launch.regs;
        k->static_smem = ev->launch.static_smem;
        k->dynamic_smem = ev->launch.dynamic_smem;
        k->local_mem = ev->launch.local_mem;
        k->flags |= GMT_KERNF_ATTRS;
    }
    emit_to(a, in, &r);
}

/* A memcpy or memset from its API call (launch mode, copies.c): written like
 * a CUPTI one (active steps only), start = end = the time of the call. */
static void emit_copy(gmp_asm *a, const gmp_ev *ev, const gmp_epoch_info *ep)
{
    int in = gate(a, ep, 1);
    if (!in && !aside(a, 1))
        return;
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.copy + 16);
    r.type = ev->copy.is_memset ? GMT_REC_MEMSET : GMT_REC_MEMCPY;
    gmt_copy *c = &r.u.copy;
    c->start = c->end = ev->ts;
    c->device = ev->d;
    c->stream = ev->c;
    c->corr = ev->corr;
    c->bytes = ev->a;
    c->copy_kind = ev->b;
    c->src_kind = ev->copy.src_kind;
    c->dst_kind = ev->copy.dst_kind;
    c->tid = ev->tid;
    c->step = ep ? ep->step : a->cur_step;
    emit_to(a, in, &r);
}

/* ---- failures (the flight recorder) ---------------------------------------- */

static uint64_t open_name(gmp_asm *a, uint64_t id)
{
    if (!id)
        return 0;
    const open_range *o = a->open_cap ? open_slot(a, id) : NULL;
    if (o && o->id == id)
        return o->name;
    unsigned k = (unsigned)(id & (GMP_CLOSED_RANGES - 1));
    return a->closed[k].id == id ? a->closed[k].name : 0;
}

void gmp_asm_fill_failure(gmp_asm *a, gmt_oom *o)
{
    if (!o->op)
        o->op = open_name(a, o->range);
    o->live_count = gmp_live_count(a->live) + (a->fw_seen ? gmp_live_count(a->blocks) : 0);
    o->live_bytes = gmp_live_bytes_all(a->live);
    if (a->fw_seen) {
        unsigned d = o->device < GMP_MAX_DEVICES ? (unsigned)o->device : 0;
        o->fw_allocated = gmp_live_bytes(a->blocks, d);
        o->fw_reserved = gmp_live_bytes(a->segs, d) + a->mapped[d];
        o->flags |= GMT_OOMF_FRAMEWORK;
    }
}

static void put_live_of(gmp_asm *a, gmp_live *t, int framework)
{
    size_t n = 0;
    uint64_t bytes = 0;
    gmt_mem *m = live_sorted(t, &n, &bytes);
    for (size_t i = 0; i < n; i++) {
        gmt_record r;
        memset(&r, 0, sizeof r.type + sizeof r.u.live + 16);
        r.type = GMT_REC_LIVE;
        r.u.live = m[i];
        if (framework) { /* the block tables keep the request in source, the pool in corr */
            r.u.live.corr = m[i].source;
            r.u.live.source = GMT_SRC_FRAMEWORK;
        }
        put(a, &r);
    }
    free(m);
}

uint64_t gmp_asm_put_live(gmp_asm *a)
{
    put_live_of(a, a->live, 0);
    if (a->fw_seen)
        put_live_of(a, a->blocks, 1);
    return gmp_live_count(a->live) + (a->fw_seen ? gmp_live_count(a->blocks) : 0);
}

uint64_t gmp_asm_step(const gmp_asm *a) { return a->cur_step; }

/* A CUDA allocation call that returned out of memory. With a framework
 * allocator in the process, the failure is its OOM: it frees its cache and
 * retries first, and often succeeds. */
static void emit_oom(gmp_asm *a, const gmp_ev *ev, const gmp_epoch_info *ep)
{
    gmt_oom o;
    memset(&o, 0, sizeof o);
    o.ts = ev->ts;
    o.cause = GMT_OOM_CUDA;
    o.device = ev->oom.device;
    o.bytes = ev->a;
    o.stream = ev->c;
    o.tid = ev->tid;
    o.range = ev->oom.range;
    o.status = ev->oom.status;
    o.step = ep ? ep->step : a->cur_step;
    size_t n = ev->oom.api_len < GMP_OOM_API_MAX ? ev->oom.api_len : GMP_OOM_API_MAX;
    o.api = n ? intern(a, ev->oom.api, n) : 0;
    if (ev->oom.has_mem) {
        o.driver_free = ev->b;
        o.driver_total = ev->d;
        o.flags |= GMT_OOMF_DRIVER;
    }
    a->cuda_oom = o;
    a->have_cuda_oom = 1;
    if (a->fw_seen || !a->io.failure)
        return;
    gmp_asm_fill_failure(a, &o);
    a->io.failure(a->io.ctx, &o);
    serve_asked(a);
}

/* The framework allocator's OOM (after its block record): the request,
 * and the free bytes CUDA reported to it. */
static void failure_of_block(gmp_asm *a, const gmt_block *b)
{
    if (!a->io.failure)
        return;
    gmt_oom o;
    memset(&o, 0, sizeof o);
    o.ts = b->ts;
    o.cause = GMT_OOM_FRAMEWORK;
    o.device = b->device;
    o.bytes = b->bytes;
    o.stream = b->stream;
    o.tid = b->tid;
    o.range = b->range;
    o.step = b->step;
    o.driver_free = b->address;
    if (a->have_cuda_oom && a->cuda_oom.device == b->device) {
        o.api = a->cuda_oom.api; /* the cudaMalloc the allocator made last */
        o.status = a->cuda_oom.status;
        o.driver_total = a->cuda_oom.driver_total;
    }
    if (!o.driver_total) {
        gmt_device dv;
        memset(&dv, 0, sizeof dv);
        a->io.device(a->io.ctx, (unsigned)b->device, &dv);
        o.driver_total = dv.total_mem;
    }
    o.flags |= GMT_OOMF_DRIVER;
    a->have_cuda_oom = 0;
    gmp_asm_fill_failure(a, &o);
    a->io.failure(a->io.ctx, &o);
    serve_asked(a);
}

/* An owner is an annotation of its block: the first one reported for a
 * block is kept (a tied parameter names the module that reported first,
 * as the analyzer reads it). */
static void owner_track(gmp_asm *a, const gmt_block *b)
{
    if (!a->owners && !(a->owners = gmp_live_create(64))) {
        a->bad_records++;
        return;
    }
    if (gmp_live_find(a->owners, b->device, b->address))
        return;
    gmt_mem m = {.ts = b->ts, .device = b->device, .address = b->address, .bytes = b->bytes,
                 .kind = GMT_MEMKIND_DEVICE, .source = b->frame,
                 .flags = b->flags & (GMT_BLKF_PARAMETER | GMT_BLKF_BUFFER), .tid = b->tid, .range = b->range,
                 .seq = b->seq, .step = b->step};
    if (gmp_live_insert(a->owners, &m) < 0)
        a->bad_records++;
}

/* The live tables keep what a later window's baseline and a tag need; the
 * pool id rides in gmt_mem's corr and the requested size in its source (a
 * block has neither). */
static void block_track(gmp_asm *a, const gmt_block *b)
{
    gmt_mem m = {.ts = b->ts, .device = b->device, .address = b->address, .bytes = b->bytes,
                 .kind = GMT_MEMKIND_DEVICE, .source = b->requested, .flags = b->flags & GMT_BLKF_SEEDED,
                 .corr = b->pool,
                 .stream = b->stream, .tid = b->tid, .range = b->range, .seq = b->seq, .step = b->step};
    unsigned d = b->device < GMP_MAX_DEVICES ? (unsigned)b->device : 0;
    switch (b->action) {
    case GMT_BLK_ALLOC:
        if (gmp_live_insert(a->blocks, &m) == 1)
            a->live_replaced++;
        if (a->owners) /* a block made anew: an owner of the address was of an earlier one */
            gmp_live_remove(a->owners, b->device, b->address, NULL);
        break;
    case GMT_BLK_FREE_REQUESTED:
        gmp_live_remove(a->blocks, b->device, b->address, NULL);
        if (a->owners)
            gmp_live_remove(a->owners, b->device, b->address, NULL);
        break;
    case GMT_BLK_OWNER:
        owner_track(a, b);
        break;
    case GMT_BLK_SEGMENT_ALLOC:
        gmp_live_insert(a->segs, &m);
        break;
    case GMT_BLK_SEGMENT_FREE:
        gmp_live_remove(a->segs, b->device, b->address, NULL);
        break;
    case GMT_BLK_SEGMENT_MAP:
        a->mapped[d] += b->bytes;
        break;
    case GMT_BLK_SEGMENT_UNMAP:
        a->mapped[d] -= b->bytes <= a->mapped[d] ? b->bytes : a->mapped[d];
        break;
    case GMT_BLK_OOM:
        a->ooms++;
        break;
    default:
        break;
    }
}

/* One block event into the live tables and, inside a window, the trace. */
static void block_out(gmp_asm *a, const gmt_block *b, uint32_t epoch)
{
    const gmp_epoch_info *ep = epinfo(a, epoch);
    a->block_events++;
    block_track(a, b);
    int in = gate(a, ep, 0);
    if (in || aside(a, 0)) {
        gmt_record r;
        memset(&r, 0, sizeof r.type + sizeof r.u.block + 16);
        r.type = GMT_REC_BLOCK;
        r.u.block = *b;
        r.u.block.step = ep ? ep->step : a->cur_step;
        emit_to(a, in, &r);
    }
    if (b->action == GMT_BLK_OOM) {
        gmt_block f = *b;
        f.step = ep ? ep->step : a->cur_step;
        failure_of_block(a, &f);
    }
}

/* The size of a block as the allocator counts it, from its counter
 * (torch_bridge.h): an ALLOC waits in held[] for the device's next reading
 * (the next ALLOC, or a flush); the counter's change since its own reading,
 * plus the blocks freed in between (their sizes known from the live
 * table), is its size. Only an ALLOC freed before the next reading leaves
 * the counter no say: its size is then the allocator's rounding of the
 * request (512-byte multiples). */
static uint64_t rounded_request(uint64_t req) { return req < 512 ? 512 : (req + 511) / 512 * 512; }

/* Events queued behind a held ALLOC: a few between two allocations, more
 * when a step frees many blocks in a row; past the cap the ALLOC is
 * settled by its rounded request rather than the queue growing on. */
typedef struct pend_block {
    gmt_block b;
    uint32_t epoch;
} pend_block;
#define PEND_MAX 65536u

/* The held ALLOC of device d, then what came after it, in that order. */
static void held_out(gmp_asm *a, unsigned d)
{
    a->held_on[d] = 0;
    block_out(a, &a->held[d], a->held_epoch[d]);
    for (uint32_t i = 0; i < a->npend[d]; i++)
        block_out(a, &a->pend[d][i].b, a->pend[d][i].epoch);
    a->npend[d] = 0;
}

static void held_settle(gmp_asm *a, unsigned d, uint64_t counter)
{
    if (!a->held_on[d])
        return;
    gmt_block *h = &a->held[d];
    int64_t s = (int64_t)(counter - a->held_base[d]) + (int64_t)a->held_freed[d] - (int64_t)a->held_added[d];
    h->bytes = s > 0 ? (uint64_t)s : rounded_request(h->requested);
    held_out(a, d);
}

/* Queues a block event of device d behind its held ALLOC; 0 when queued. */
static int held_queue(gmp_asm *a, unsigned d, const gmt_block *b, uint32_t epoch)
{
    if (a->npend[d] == a->cap_pend[d]) {
        uint32_t nc = a->cap_pend[d] ? a->cap_pend[d] * 2 : 64;
        pend_block *p = nc <= PEND_MAX ? realloc(a->pend[d], nc * sizeof *p) : NULL;
        if (!p)
            return -1;
        a->pend[d] = p;
        a->cap_pend[d] = nc;
    }
    a->pend[d][a->npend[d]++] = (pend_block){*b, epoch};
    return 0;
}

/* A FREE_REQUESTED while an ALLOC of its device is held: its size, and
 * whether it settled the held ALLOC (the held block itself, or a full
 * queue), after which it goes out at once. */
static int held_free(gmp_asm *a, unsigned d, gmt_block *b)
{
    if (a->held[d].address == b->address) { /* the held block itself */
        a->held[d].bytes = rounded_request(a->held[d].requested);
        b->bytes = a->held[d].bytes;
        held_out(a, d);
        return 1;
    }
    const gmt_mem *m = gmp_live_find(a->blocks, b->device, b->address);
    b->bytes = m ? m->bytes : rounded_request(b->requested);
    a->held_freed[d] += b->bytes;
    return 0;
}

/* The trace's string id of an interned frame or stack (frames.h), 0 none.
 * Interned into the trace at first use, whether inside a window or not
 * (a few bytes per distinct frame), so that the id stays good for every
 * later record without a lookup of the text. */
static uint64_t frame_sid(gmp_asm *a, uint32_t id)
{
    if (!id)
        return 0;
    if (id >= a->fmap_cap) {
        size_t nc = a->fmap_cap ? a->fmap_cap : 1024;
        while (nc <= id)
            nc *= 2;
        uint64_t *p = realloc(a->fmap, nc * sizeof *p);
        if (!p)
            return 0;
        memset(p + a->fmap_cap, 0, (nc - a->fmap_cap) * sizeof *p);
        a->fmap = p;
        a->fmap_cap = nc;
    }
    if (!a->fmap[id]) {
        size_t n = 0;
        const char *s = gmp_frames_get(id, &n);
        a->fmap[id] = s ? intern(a, s, n) : 0;
    }
    return a->fmap[id];
}

static void emit_block(gmp_asm *a, const gmp_ev *ev, const gmp_epoch_info *ep)
{
    gmt_block blk = { .ts = ev->ts, .action = ev->block.action, .device = ev->block.device,
                      .address = ev->a, .bytes = ev->b, .stream = ev->c, .tid = ev->tid,
                      .range = ev->block.range, .seq = ev->block.seq, .step = ep ? ep->step : a->cur_step,
                      .flags = ev->block.flags, .pool = ev->d, .requested = ev->block.requested,
                      .frame = frame_sid(a, ev->block.frame), .stack = frame_sid(a, ev->block.stack) };
    if (!a->fw_seen) {
        /* made at the first event: a process without the bridge pays nothing */
        a->blocks = gmp_live_create(1024);
        a->segs = gmp_live_create(64);
        if (!a->blocks || !a->segs) {
            gmp_live_free(a->blocks);
            gmp_live_free(a->segs);
            a->blocks = a->segs = NULL;
            a->bad_records++;
            return;
        }
        a->fw_seen = 1;
    }
    unsigned d = ev->block.device < GMP_MAX_DEVICES ? ev->block.device : GMP_MAX_DEVICES;
    if (ev->block.action == GMP_BRIDGE_COUNTER) {
        if (d < GMP_MAX_DEVICES)
            held_settle(a, d, ev->block.counter);
        return;
    }
    if (d < GMP_MAX_DEVICES && a->held_on[d] && !(blk.action == GMT_BLK_ALLOC && ev->block.has_counter)) {
        int settled = blk.action == GMT_BLK_FREE_REQUESTED && held_free(a, d, &blk);
        if (blk.action == GMT_BLK_ALLOC)
            a->held_added[d] += blk.bytes; /* in the next reading beside the held one */
        if (!settled && held_queue(a, d, &blk, ev->epoch) == 0)
            return; /* written after the held ALLOC */
        if (!settled) { /* the queue is full */
            a->held[d].bytes = rounded_request(a->held[d].requested);
            held_out(a, d);
        }
    } else if (d < GMP_MAX_DEVICES && blk.action == GMT_BLK_ALLOC && ev->block.has_counter) {
        held_settle(a, d, ev->block.counter); /* the reading is before this ALLOC's own count */
        a->held[d] = blk;
        a->held_epoch[d] = ev->epoch;
        a->held_base[d] = ev->block.counter;
        a->held_freed[d] = 0;
        a->held_added[d] = 0;
        a->held_on[d] = 1;
        return;
    } else if (blk.action == GMT_BLK_FREE_REQUESTED && blk.requested) {
        const gmt_mem *m = gmp_live_find(a->blocks, blk.device, blk.address);
        if (m)
            blk.bytes = m->bytes; /* the request, from a counting bridge: the block's size is known */
    }
    block_out(a, &blk, ev->epoch);
}

static void emit_event(gmp_asm *a, gmp_ev *ev)
{
    gmt_record r;
    const gmp_epoch_info *ep = epinfo(a, ev->epoch);
    memset(&r, 0, sizeof r.type + sizeof r.u.range + 16);
    switch (ev->type) {
    case GMP_EV_RANGE_BEGIN: {
        int in = gate(a, ep, 0);
        /* begun outside the windows, its name reaches the trace only if a
         * window's baseline or a failure names the range */
        uint64_t name = in ? intern(a, ev->name, ev->len) : intern_held(a, ev->name, ev->len);
        uint64_t kind = ev->c < GMT_RANGE_KIND_COUNT_ ? ev->c : GMT_RANGE_NVTX;
        open_range o = {ev->a, ev->tid, ev->b, name, ev->ts, kind};
        open_insert(a, &o);
        if (!in && !aside(a, 0))
            break;
        r.type = GMT_REC_RANGE_BEGIN;
        r.u.range = (gmt_range){ev->ts, ev->tid, ev->a, ev->b, o.name, kind};
        emit_to(a, in, &r);
        break;
    }
    case GMP_EV_RANGE_END: {
        open_range o;
        if (!open_remove(a, ev->a, &o))
            break;
        a->closed[o.id & (GMP_CLOSED_RANGES - 1)].id = o.id;
        a->closed[o.id & (GMP_CLOSED_RANGES - 1)].name = o.name;
        int in = gate(a, ep, 0);
        if (!in && !aside(a, 0))
            break;
        r.type = GMT_REC_RANGE_END;
        r.u.range = (gmt_range){ev->ts, ev->tid, ev->a, 0, 0, 0};
        emit_to(a, in, &r);
        break;
    }
    case GMP_EV_MARK: {
        int in = gate(a, ep, 0);
        if (!in && !aside(a, 0))
            break;
        r.type = GMT_REC_MARK;
        r.u.mark.ts = ev->ts;
        r.u.mark.tid = ev->tid;
        r.u.mark.name = intern(a, ev->name, ev->len);
        emit_to(a, in, &r);
        break;
    }
    case GMP_EV_TAG:
        put_tag(a, ev);
        break;
    case GMP_EV_DEVICE:
        put_device(a, (unsigned)ev->a);
        break;
    case GMP_EV_VMM_ADDRFREE:
        gmp_vmm_addrfree(&a->vmm, ev->a);
        break;
    case GMP_EV_VMM_UNMAP: {
        gmp_vrange v = {ev->a, ev->b, ev->tid, ev->epoch, ev->c, ev->d, ev->vmm.start};
        gmp_vmm_unmap(&a->vmm, &v);
        break;
    }
    case GMP_EV_LAUNCH:
        emit_launch(a, ev, ep);
        break;
    case GMP_EV_COPY:
        emit_copy(a, ev, ep);
        break;
    case GMP_EV_BLOCK:
        emit_block(a, ev, ep);
        if (ev->block.completed) { /* the same event's FREE_COMPLETED, as the bridge sent it */
            ev->block.action = GMT_BLK_FREE_COMPLETED;
            ev->block.requested = 0;
            ev->block.completed = 0;
            emit_block(a, ev, ep);
        }
        break;
    case GMP_EV_OOM:
        emit_oom(a, ev, ep);
        break;
    case GMP_EV_SYNC:
        end_frame(a);
        a->io.synced(a->io.ctx, ev->a);
        break;
    default:
        break; /* RESERVE/MAP were applied when popped */
    }
}

/* ---- staging CUPTI records ----------------------------------------------- */

static staged *stage_new(gmp_asm *a)
{
    if (a->nst == a->cap_st) { /* make_room failed to make any: the record is lost, counted */
        a->bad_records++;
        return NULL;
    }
    staged *s = &a->st[a->nst++];
    memset(s, 0, sizeof *s);
    return s;
}

static void join(gmp_asm *a, staged *s, uint32_t corr, uint32_t alt, uint64_t ts, uint64_t *tid, uint64_t *range,
                 uint64_t *seq)
{
    gmp_corr_info ci;
    int ok = corr && gmp_corr_get(a->corr, corr, &ci);
    if (!ok && alt)
        ok = gmp_corr_get(a->corr, alt, &ci);
    if (ok) {
        s->matched = 1;
        s->epoch = ci.epoch;
        s->fam = ci.fam;
        if (tid)
            *tid = ci.tid;
        if (range)
            *range = ci.range;
        if (seq)
            *seq = ci.seq;
    } else {
        if (corr || alt)
            a->unmatched++;
        s->epoch = epoch_by_ts(a, ts);
    }
}

static uint64_t kind_of(uint64_t k) { return k < GMT_MEMKIND_COUNT_ ? k : GMT_MEMKIND_UNKNOWN; }
static uint64_t stream_of(uint32_t s) { return s == CUPTI_INVALID_STREAM_ID ? 0 : s; }

/* The fields a MEMCPY and a MEMSET record share, staged (NULL: the stage is
 * full). */
static gmt_copy *stage_copy(gmp_asm *a, uint8_t type, uint64_t start, uint64_t end, uint32_t device, uint32_t stream,
                            uint32_t corr, uint64_t bytes, staged **out)
{
    staged *s = stage_new(a);
    *out = s;
    if (!s)
        return NULL;
    gmt_copy *c = &s->u.c;
    s->type = type;
    s->ts = start;
    c->start = start;
    c->end = end >= start ? end : start;
    c->device = device;
    c->stream = stream_of(stream);
    c->corr = corr;
    c->bytes = bytes;
    return c;
}

static uint64_t copy_kind_of(uint8_t k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return GMT_COPY_HTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return GMT_COPY_DTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return GMT_COPY_DTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return GMT_COPY_HTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return GMT_COPY_PTOP;
    case CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN:
        return GMT_COPY_UNKNOWN;
    default:
        return GMT_COPY_OTHER; /* array copies */
    }
}

static void stage_record(gmp_asm *a, const CUpti_Activity *rec)
{
    staged *s;
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
        const CUpti_ActivityMemory4 *r = (const CUpti_ActivityMemory4 *)rec;
        if (r->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION &&
            r->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
            return;
        if (!(s = stage_new(a)))
            return;
        gmt_mem *m = &s->u.m;
        s->type = r->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION ? GMT_REC_ALLOC
                                                                                            : GMT_REC_FREE;
        s->ts = r->timestamp;
        s->is_async = r->isAsync != 0;
        s->pool_type = (uint8_t)r->memoryPoolConfig.memoryPoolType;
        m->ts = r->timestamp;
        m->device = r->deviceId;
        m->address = r->address;
        m->bytes = r->bytes;
        m->kind = kind_of(r->memoryKind);
        m->corr = r->correlationId;
        m->stream = stream_of(r->streamId);
        join(a, s, r->correlationId, 0, r->timestamp, &m->tid, &m->range, &m->seq);
        if (!s->matched)
            m->flags |= GMT_MEMF_NO_THREAD;
        return;
    }
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *r = (const CUpti_ActivityKernel10 *)rec;
        if (!(s = stage_new(a)))
            return;
        gmt_kernel *k = &s->u.k;
        s->type = GMT_REC_KERNEL;
        s->ts = r->start;
        s->kname = r->name;
        k->start = r->start;
        k->end = r->end >= r->start ? r->end : r->start;
        k->device = r->deviceId;
        k->stream = stream_of(r->streamId);
        k->corr = r->correlationId;
        k->grid[0] = (uint64_t)(int64_t)r->gridX;
        k->grid[1] = (uint64_t)(int64_t)r->gridY;
        k->grid[2] = (uint64_t)(int64_t)r->gridZ;
        k->block[0] = (uint64_t)(int64_t)r->blockX;
        k->block[1] = (uint64_t)(int64_t)r->blockY;
        k->block[2] = (uint64_t)(int64_t)r->blockZ;
        k->registers = r->registersPerThread;
        k->static_smem = (uint64_t)(uint32_t)r->staticSharedMemory;
        k->dynamic_smem = (uint64_t)(uint32_t)r->dynamicSharedMemory;
        k->local_mem = r->localMemoryPerThread;
        join(a, s, r->correlationId, 0, r->start, &k->tid, &k->range, &k->seq);
        return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *r = (const CUpti_ActivityMemcpy6 *)rec;
        gmt_copy *c = stage_copy(a, GMT_REC_MEMCPY, r->start, r->end, r->deviceId, r->streamId, r->correlationId,
                                 r->bytes, &s);
        if (!c)
            return;
        c->copy_kind = copy_kind_of(r->copyKind);
        c->src_kind = kind_of(r->srcKind);
        c->dst_kind = kind_of(r->dstKind);
        join(a, s, r->correlationId, r->runtimeCorrelationId, r->start, &c->tid, NULL, NULL);
        return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *r = (const CUpti_ActivityMemset4 *)rec;
        gmt_copy *c = stage_copy(a, GMT_REC_MEMSET, r->start, r->end, r->deviceId, r->streamId, r->correlationId,
                                 r->bytes, &s);
        if (!c)
            return;
        c->copy_kind = r->value; /* a memset's "kind" field holds its byte value */
        c->src_kind = kind_of(r->memoryKind);
        join(a, s, r->correlationId, 0, r->start, &c->tid, NULL, NULL);
        return;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
        a->pool_records++;
        return;
    default:
        return;
    }
}

static int key_before(const sort_key *x, const sort_key *y)
{
    if (x->epoch != y->epoch)
        return (int32_t)(x->epoch - y->epoch) < 0;
    if (x->ts != y->ts)
        return x->ts < y->ts;
    return x->idx < y->idx;
}

/* The end of the run in order that starts at lo. */
static size_t run_end(const sort_key *k, size_t lo, size_t n)
{
    size_t i = lo + 1;
    while (i < n && !key_before(&k[i], &k[i - 1]))
        i++;
    return i;
}

static void merge_runs(const sort_key *src, sort_key *dst, size_t lo, size_t mid, size_t hi)
{
    size_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi)
        dst[k++] = key_before(&src[j], &src[i]) ? src[j++] : src[i++];
    while (i < mid)
        dst[k++] = src[i++];
    while (j < hi)
        dst[k++] = src[j++];
}

#define LANES 8

/* Deals src into at most LANES lanes, each in order (a key goes to the first
 * lane whose last key is not after it), and writes the lanes one after the
 * other into dst; 0 when more lanes would be needed. A buffer interleaves a
 * few streams each in time order (allocations, kernels, copies): a few lanes. */
static int split_lanes(gmp_asm *a, const sort_key *src, sort_key *dst, size_t n)
{
    sort_key last[LANES];
    size_t at[LANES] = {0}, nl = 0;
    uint8_t *lane = a->keep; /* scratch until keep_rest */
    for (size_t i = 0; i < n; i++) {
        size_t l = 0;
        while (l < nl && key_before(&src[i], &last[l]))
            l++;
        if (l == nl) {
            if (nl == LANES)
                return 0;
            nl++;
        }
        last[l] = src[i];
        lane[i] = (uint8_t)l;
        at[l]++;
    }
    for (size_t l = 0, off = 0; l < nl; l++) {
        size_t c = at[l];
        at[l] = off;
        off += c;
    }
    for (size_t i = 0; i < n; i++)
        dst[at[lane[i]]++] = src[i];
    return 1;
}

/* The staged records in drain order. A buffer's records come mostly in time
 * order: keys already in order cost one pass; else the lanes (split_lanes),
 * or failing that the runs in order, are merged bottom up between ord and
 * ord_tmp. */
static const sort_key *sorted_order(gmp_asm *a)
{
    size_t n = a->nst;
    sort_key *src = a->ord, *dst = a->ord_tmp;
    for (size_t i = 0; i < n; i++) {
        src[i].ts = a->st[i].ts;
        src[i].epoch = a->st[i].epoch;
        src[i].idx = (uint32_t)i;
    }
    if (run_end(src, 0, n) == n)
        return src;
    if (split_lanes(a, src, dst, n)) {
        dst = src;
        src = a->ord_tmp;
    }
    for (;;) {
        size_t lo = 0;
        while (lo < n) {
            size_t mid = run_end(src, lo, n);
            if (mid == n) {
                if (lo == 0)
                    return src;
                memcpy(dst + lo, src + lo, (n - lo) * sizeof *src);
                break;
            }
            size_t hi = run_end(src, mid, n);
            merge_runs(src, dst, lo, mid, hi);
            lo = hi;
        }
        sort_key *t = src;
        src = dst;
        dst = t;
    }
}

/* Keeps the staged records a drain did not write (ord[from, nst)), in
 * staging order, at the front. */
static void keep_rest(gmp_asm *a, const sort_key *ord, size_t from)
{
    size_t n = a->nst, j = 0;
    if (from == 0)
        return;
    if (from < n) {
        memset(a->keep, 0, n);
        for (size_t k = from; k < n; k++)
            a->keep[ord[k].idx] = 1;
        for (size_t i = 0; i < n; i++) {
            if (!a->keep[i])
                continue;
            if (i != j)
                a->st[j] = a->st[i];
            j++;
        }
    }
    a->nst = j;
}

/* Merges staged records and ring events in (epoch, time) order, applying
 * each transition when everything of the epochs before it is out.
 *
 * A staged record newer than the horizon (the time just before this round
 * popped the ring) waits for the next round: an event its thread published
 * before making the record's API call may not have been popped yet (the
 * ring was read before the record's buffer was taken), and must come first.
 * What waits behind it (later events, transitions) waits too; events not
 * written are kept, in order, for the next round.
 *
 * force (the end): write everything, ignoring the horizon and epochs not
 * yet published (impossible unless the history was lost).
 *
 * hold (making room while a round's buffers are being staged, or a round
 * that left buffers): apply a transition or write an event only for a
 * staged record behind it, never once the staged records are all out: a
 * buffer not staged yet may still hold records made before it (a window
 * would close before its last records, a tag would miss the allocations
 * made before it). */
static void drain_held(gmp_asm *a, int force, int hold)
{
    size_t si = 0, ei = 0, n = a->nst;
    const sort_key *ord = n ? sorted_order(a) : NULL;
    for (;;) {
        staged *cur = si < n ? &a->st[ord[si].idx] : NULL;
        int has_tr = a->have_epochs && (int32_t)(a->known - a->next_epoch) >= 0;
        /* a known transition holds back what comes after it even while it
         * waits for the ring (round_once: a->safe) */
        int may_apply = has_tr && (force || (int32_t)(a->safe - a->next_epoch) >= 0) && (!hold || cur);
        uint32_t lim = a->next_epoch;
        int s_ok = cur && (!has_tr || (int32_t)(cur->epoch - lim) < 0) &&
                   (force || (int32_t)(cur->epoch - a->known) <= 0);
        int e_ok = ei < a->nev && (!hold || cur) && (!has_tr || (int32_t)(a->evs[ei].epoch - lim) < 0);
        if (s_ok && e_ok) {
            const gmp_ev *e = &a->evs[ei];
            if (cur->epoch == e->epoch ? cur->ts <= e->ts : (int32_t)(cur->epoch - e->epoch) < 0)
                e_ok = 0;
            else
                s_ok = 0;
        }
        if (s_ok) {
            /* (a time far beyond the horizon is a clock step, not a race:
             * such a record is not held) */
            if (!force && cur->ts >= a->horizon && cur->ts - a->horizon < 1000000000ull)
                break; /* next round, with what comes after it */
            emit_staged(a, cur);
            si++;
        } else if (e_ok) {
            emit_event(a, &a->evs[ei++]);
        } else if (may_apply && !(cur && (int32_t)(cur->epoch - lim) < 0)) {
            const gmp_epoch_info *e = &a->hist[a->next_epoch % GMP_EPOCH_HIST];
            if (e->epoch == a->next_epoch)
                apply_epoch(a, e);
            a->next_epoch++;
        } else {
            break;
        }
    }
    if (force && !hold) {
        /* Events of epochs never published cannot exist (an event's epoch is
         * read before it is pushed); at the end, write them anyway. */
        while (ei < a->nev)
            emit_event(a, &a->evs[ei++]);
    }
    if (ei < a->nev)
        memmove(a->evs, a->evs + ei, (a->nev - ei) * sizeof *a->evs);
    a->nev -= ei;
    keep_rest(a, ord, si);
}

static void drain(gmp_asm *a, int force) { drain_held(a, force, 0); }

/* Room for one more staged record: what can be written is written, first
 * without applying transitions (drain_held); only a staging area full of
 * records behind a transition applies it. */
static void make_room(gmp_asm *a)
{
    if (a->nst < a->cap_st)
        return;
    drain_held(a, 0, 1);
    if (a->nst == a->cap_st)
        drain_held(a, 1, 1);
    if (a->nst == a->cap_st)
        drain(a, 1);
}

/* ---- the interface ----------------------------------------------------------- */

static size_t stage_capacity(size_t host_budget_bytes)
{
    size_t n = host_budget_bytes / 16 / sizeof(staged);
    if (n < 4096)
        n = 4096;
    if (n > 65536)
        n = 65536;
    return n;
}

size_t gmp_asm_staging_bytes(size_t host_budget_bytes)
{
    return stage_capacity(host_budget_bytes) * (sizeof(staged) + 2 * sizeof(sort_key) + 1) + EV_BATCH * sizeof(gmp_ev);
}

gmp_asm *gmp_asm_create(const gmp_asm_io *io, const gmp_corrtab *corr, size_t host_budget_bytes)
{
    gmp_asm *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->io = *io;
    a->corr = corr;
    a->live = gmp_live_create(1024);
    a->cap_st = stage_capacity(host_budget_bytes);
    a->st = calloc(a->cap_st, sizeof *a->st);
    a->ord = calloc(a->cap_st, sizeof *a->ord);
    a->ord_tmp = calloc(a->cap_st, sizeof *a->ord_tmp);
    a->keep = calloc(a->cap_st, 1);
    a->evs = calloc(EV_BATCH, sizeof *a->evs);
    if (!a->live || !a->st || !a->ord || !a->ord_tmp || !a->keep || !a->evs) {
        gmp_asm_destroy(a);
        return NULL;
    }
    a->last_sample_ns = mono(a);
    return a;
}

void gmp_asm_destroy(gmp_asm *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nev; i++)
        if (a->evs[i].type == GMP_EV_LAUNCH)
            free(a->evs[i].launch.heap); /* a name copy the writer never reached */
    gmp_live_free(a->live);
    gmp_live_free(a->blocks);
    gmp_live_free(a->segs);
    gmp_live_free(a->owners);
    for (unsigned d = 0; d < GMP_MAX_DEVICES; d++)
        free(a->pend[d]);
    free(a->st);
    free(a->ord);
    free(a->ord_tmp);
    free(a->keep);
    free(a->evs);
    gmp_vmm_free(&a->vmm);
    free(a->open);
    free(a->lmap);
    free(a->fmap);
    free(a);
}

void gmp_asm_round_begin(gmp_asm *a, uint64_t t)
{
    a->first = a->nev; /* events kept from the last round come first */
    a->horizon = t;
}

gmp_ev *gmp_asm_event_slot(gmp_asm *a) { return a->nev < EV_BATCH ? &a->evs[a->nev] : NULL; }

/* A transition may be applied only when every event made before it has
 * been popped: an event left in the ring would reach a window already
 * closed. The ring is FIFO and an event's epoch is read before its push,
 * so once an event of epoch X is popped, so is every event of an earlier
 * epoch pushed before it; and when a pop empties the ring, every event
 * made before the epoch published ahead of the pop is out. a->safe is the
 * newest epoch known that way. A pop that stops at the batch limit (a
 * burst: a launch-mode step, emit_nvtx ranges) leaves it where the
 * events say, and a later transition waits for the rounds that empty
 * the ring. (A thread that read the old epoch and is preempted before
 * its push can still come late: that race is as old as the epochs.) */
void gmp_asm_event_added(gmp_asm *a, int popped)
{
    gmp_ev *ev = &a->evs[a->nev];
    if ((int32_t)(ev->epoch - a->safe) > 0)
        a->safe = ev->epoch;
    /* the only mark a producer sets (torch.c): a free request whose free
     * completed in the same allocator call */
    if (popped == GMP_RING_MARKED && ev->type == GMP_EV_BLOCK && ev->block.action == GMT_BLK_FREE_REQUESTED)
        ev->block.completed = 1;
    a->nev++;
}

/* VMM reservations and mappings are metadata: applied before any record of
 * this round needs them (a MEMORY2 record of a mapping can carry an earlier
 * time than the map call's exit). */
static void apply_vmm(gmp_asm *a)
{
    for (size_t i = a->first; i < a->nev; i++) {
        const gmp_ev *e = &a->evs[i];
        if (e->type == GMP_EV_VMM_RESERVE || e->type == GMP_EV_VMM_MAP) {
            gmp_vrange v = {e->a, e->b, e->tid, e->epoch, e->c, e->d, e->vmm.start};
            if (e->type == GMP_EV_VMM_RESERVE)
                gmp_vmm_reserve(&a->vmm, &v);
            else
                gmp_vmm_map(&a->vmm, &v);
        }
    }
}

void gmp_asm_events_done(gmp_asm *a, uint32_t published)
{
    if (a->nev < EV_BATCH && (int32_t)(published - a->safe) > 0)
        a->safe = published;
    /* A pop that stopped at the batch limit may have left events in the
     * ring that are older than the horizon: an NVTX burst (emit_nvtx makes
     * two events per op) outruns the writer.  The records of their API
     * calls must not overtake them, so the horizon comes down to the newest
     * event popped: the ring is FIFO, and an event is stamped before its
     * push, so every event stamped before that one is out (but for the
     * preemption race above).  Without this, a training step's allocations
     * came before the RANGE_BEGIN of their op (on the H200, 43 of an sdpa
     * run's allocations named a range not yet begun). */
    if (a->nev == EV_BATCH) {
        for (size_t i = a->nev; i-- > 0;)
            if (a->evs[i].ts) {
                if (a->evs[i].ts < a->horizon)
                    a->horizon = a->evs[i].ts;
                break;
            }
    }
    apply_vmm(a);
}

int gmp_asm_wants_epochs(const gmp_asm *a, uint32_t published)
{
    return !a->have_epochs || published != a->known;
}

void gmp_asm_take_epochs(gmp_asm *a, const gmp_epoch_info *hist, uint32_t cur)
{
    uint32_t from = a->have_epochs ? a->known + 1 : 0;
    if (cur - from >= GMP_EPOCH_HIST - 1) {
        /* The writer fell more than the history behind: the oldest
         * transitions are gone. Skip to what is left (counted). */
        uint32_t nf = cur - (GMP_EPOCH_HIST - 2);
        a->lost_epochs += nf - from;
        from = nf;
        if (a->next_epoch < from)
            a->next_epoch = from;
    }
    for (uint32_t e = from; e != cur + 1; e++)
        a->hist[e % GMP_EPOCH_HIST] = hist[e % GMP_EPOCH_HIST];
    a->known = cur;
    a->have_epochs = 1;
}

void gmp_asm_stage(gmp_asm *a, const CUpti_Activity *rec)
{
    make_room(a);
    stage_record(a, rec);
}

void gmp_asm_stage_buffer(gmp_asm *a, uint8_t *buf, size_t valid, gmp_asm_next_fn next)
{
    CUpti_Activity *rec = NULL;
    for (;;) {
        make_room(a);
        CUptiResult st = next(buf, valid, &rec);
        if (st != CUPTI_SUCCESS) {
            if (st != CUPTI_ERROR_MAX_LIMIT_REACHED)
                a->bad_records++; /* an incomplete or unknown record ends the buffer */
            break;
        }
        stage_record(a, rec);
    }
}

void gmp_asm_drain(gmp_asm *a, int force) { drain(a, force); }

void gmp_asm_drain_held(gmp_asm *a) { drain_held(a, 0, 1); }

int gmp_asm_epochs_pending(const gmp_asm *a) { return (int32_t)(a->known - a->next_epoch) >= 0; }

void gmp_asm_finish(gmp_asm *a, int reason)
{
    drain(a, 1);
    if (a->win_open)
        window_end(a, now(a), reason); /* STATS and a frame end included */
    else
        put_stats(a);
}

void gmp_asm_sample_due(gmp_asm *a, uint64_t t, uint64_t period_ns)
{
    if ((a->win_open || a->put_aside) && period_ns && t - a->last_sample_ns >= period_ns)
        sample_devices_at(a, 0, a->win_open); /* outside windows: the recorder's alone */
}

void gmp_asm_set_aside(gmp_asm *a, gmp_asm_aside_fn put_aside, int kernels)
{
    a->put_aside = put_aside;
    a->aside_kernels = kernels;
}

void gmp_asm_set_intern_held(gmp_asm *a, gmp_asm_intern_fn intern_held) { a->intern_held = intern_held; }

void gmp_asm_get_counts(const gmp_asm *a, gmp_asm_counts *out)
{
    out->windows = a->windows;
    out->unmatched = a->unmatched;
    out->bad_records = a->bad_records;
    out->late = a->late;
    out->outside = a->outside;
    out->lost_epochs = a->lost_epochs;
    out->block_events = a->block_events;
    out->fw_seen = a->fw_seen;
    out->host_bytes = gmp_live_footprint(a->live) +
                      (a->fw_seen ? gmp_live_footprint(a->blocks) + gmp_live_footprint(a->segs) : 0) +
                      (a->owners ? gmp_live_footprint(a->owners) : 0) +
                      a->open_cap * sizeof(open_range) + gmp_vmm_bytes(&a->vmm);
}
