/*
 * Categories of PyTorch memory (category.h): collected as a consumer of the
 * replay, decided once the trace has ended (a block's category depends on
 * when and where it is freed).
 */
#include "category.h"

#include <stdlib.h>
#include <string.h>

#include "consumer.h"
#include "view.h"
#include "tracestr.h"
#include "winsteps.h"

const char *const gma_cat_names[GMA_CAT_COUNT_] = {
    "parameter", "gradient",  "optimizer state", "activation",      "temporary",
    "input",     "workspace", "other",           "allocator cache", "outside the allocator",
};

/* ---- the rules ---------------------------------------------------------------- */

static int has_prefix(const char *s, size_t n, const char *p)
{
    size_t k = strlen(p);
    return n >= k && memcmp(s, p, k) == 0;
}

static int contains(const char *s, size_t n, const char *p)
{
    size_t k = strlen(p);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(s + i, p, k) == 0)
            return 1;
    return 0;
}

static int is_one_of(const char *s, size_t n, const char *const *set)
{
    for (; *set; set++)
        if (strlen(*set) == n && memcmp(s, *set, n) == 0)
            return 1;
    return 0;
}

unsigned gma_cat_range_class(const char *name, size_t len, uint64_t kind)
{
    /* emit_nvtx names carry ", seq = N, sizes = ...": the op is before the comma */
    size_t n = 0;
    while (n < len && name[n] != ',')
        n++;
    unsigned c = 0;
    if (kind == GMT_RANGE_MODULE)
        return GMA_RC_MODULE;
    if (kind == GMT_RANGE_MODULE_BWD)
        return GMA_RC_BWD;
    int oplike = kind == GMT_RANGE_OP || has_prefix(name, n, "aten::") || has_prefix(name, n, "autograd::") ||
                 has_prefix(name, n, "torch::") || has_prefix(name, n, "Optimizer.") || has_prefix(name, n, "c10d::") ||
                 contains(name, n, "Backward");
    if (!oplike)
        return 0;
    c |= GMA_RC_OP;
    if (contains(name, n, "Backward") || has_prefix(name, n, "autograd::engine::evaluate_function") ||
        has_prefix(name, n, "torch::autograd::AccumulateGrad"))
        c |= GMA_RC_BWD;
    if (has_prefix(name, n, "Optimizer.step"))
        c |= GMA_RC_OPT;
    if (has_prefix(name, n, "Optimizer.zero_grad"))
        c |= GMA_RC_ZERO;
    static const char *const mm[] = { "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul",
                                      "aten::linear", "aten::addmv", "aten::mv", "aten::addbmm", "aten::_addmm_activation",
                                      "aten::_scaled_mm", "aten::dot", "aten::vdot", "aten::einsum", NULL };
    static const char *const cp[] = { "aten::to", "aten::_to_copy", "aten::copy_", NULL };
    if (is_one_of(name, n, mm))
        c |= GMA_RC_MATMUL;
    if (is_one_of(name, n, cp))
        c |= GMA_RC_COPY;
    return c;
}

gma_cat gma_cat_classify(const gma_cat_facts *f)
{
    if (f->baseline && f->alive_end)
        return GMA_CAT_PARAMETER;
    if (f->baseline && (f->f & GMA_RC_ZERO))
        return GMA_CAT_GRADIENT; /* made before the window, let go by zero_grad(set_to_none=True) */
    /* cuBLAS's workspace: made in a matmul after the op's output, kept by its handle */
    if (f->alive_end && (f->a & GMA_RC_MATMUL) && f->mm_later)
        return GMA_CAT_WORKSPACE;
    if (f->a & GMA_RC_OPT)
        return f->alive_end || !(f->freed_in_step || f->freed_in_op) ? GMA_CAT_OPTIMIZER : GMA_CAT_TEMPORARY;
    if (f->a & GMA_RC_BWD) {
        if (!f->alive_end && (f->freed_in_op || (f->f & GMA_RC_BWD)))
            return GMA_CAT_TEMPORARY; /* freed inside the backward pass: not a parameter's gradient */
        return GMA_CAT_GRADIENT;
    }
    if (f->a & GMA_RC_ZERO)
        return f->alive_end ? GMA_CAT_GRADIENT : GMA_CAT_TEMPORARY;
    if ((f->a & GMA_RC_COPY) && f->htod)
        return f->before_train && f->alive_end ? GMA_CAT_PARAMETER : GMA_CAT_INPUT;
    if (f->before_train && f->alive_end)
        return GMA_CAT_PARAMETER;
    if (!(f->a & (GMA_RC_OP | GMA_RC_MODULE)))
        return GMA_CAT_OTHER;
    if (f->alive_end)
        return GMA_CAT_OTHER;
    if (f->freed_in_op || f->freed_in_module)
        return GMA_CAT_TEMPORARY;
    if (f->f & GMA_RC_BWD)
        return GMA_CAT_ACTIVATION; /* made in forward, kept for backward */
    return GMA_CAT_TEMPORARY;     /* made in forward, freed before backward */
}

/* ---- collecting ------------------------------------------------------------------ */

#define CR_BASE 0x1u
#define CR_BEFORE 0x2u
#define CR_FREED 0x4u
#define CR_IN_OP 0x8u
#define CR_IN_MOD 0x10u
#define CR_IN_STEP 0x20u
#define CR_MM_LATER 0x40u
#define CR_ACC 0x80u     /* an accounted allocation */
#define CR_ACC_FREE 0x100u /* ... and its free accounted */
#define CR_BEFORE_RANGE 0x200u /* made before the first range began */

typedef struct catrec {
    uint64_t ord, free_ord, free_ts, bytes, addr;
    uint64_t op, mod, opt; /* range instances open at its alloc, 0 none */
    uint32_t copy;         /* its copy op (copyop index + 1), 0 none */
    uint16_t a, f, flags;
    uint8_t device, cat;
} catrec;

typedef struct copyop {
    uint64_t id, tid, begin, end; /* end 0: not seen */
} copyop;

typedef struct htod {
    uint64_t tid, ts;
} htod;

#define CRING 65536u /* range instances remembered: blocks reach the trace after their ranges end */

typedef struct crange {
    uint64_t id, parent, tid, begin, end; /* end 0: not ended (yet) */
    uint32_t name, kind;
} crange;

static uint64_t rkey(uint64_t tid, uint64_t begin) { return begin * 0x9E3779B97F4A7C15ull ^ tid; }

typedef struct gma_category {
    crange *ring;      /* by id % CRING */
    gma_map ring_at;   /* rkey(tid, begin) -> ring slot: range_closed names no id */
    uint64_t train_ts, range_ts; /* the first training range, the first range; UINT64_MAX none */
    /* the last training range's end or optimizer step, 0 none: weights freed
     * after it count as kept to the end */
    uint64_t train_end;
    gma_vec recs;     /* catrec, in allocation order */
    gma_map live;     /* (device, address) -> rec */
    gma_vec copyops;  /* copyop */
    gma_map copyop_of; /* range id -> copyops index */
    gma_vec htods;    /* htod */
    uint8_t *ncls;    /* name id -> GMA_RC_* + 0x80 once known */
    size_t ncls_cap;
    uint64_t last_mm; /* the matmul op that made the last block in a matmul, 0 none */
    uint64_t blk_flags; /* the flags of the BLOCK record being replayed */
    int finished;
    uint64_t at_peak[GMA_MAX_DEVICES][GMA_CAT_COUNT_];
    uint64_t alloc_bytes[GMA_MAX_DEVICES][GMA_CAT_COUNT_], free_bytes[GMA_MAX_DEVICES][GMA_CAT_COUNT_];
    uint64_t count[GMA_MAX_DEVICES][GMA_CAT_COUNT_];
    uint64_t kept_bytes[GMA_CAT_COUNT_], kept_count[GMA_CAT_COUNT_];
} gma_category;

#define REC(c, i) (&GMA_VEC_AT(&(c)->recs, catrec, (i)))

static uint64_t live_key(uint64_t dev, uint64_t addr) { return (addr << 6) ^ dev; }

static unsigned name_class(gma_replay *r, uint32_t name, uint64_t kind)
{
    gma_category *c = r->category;
    if (kind == GMT_RANGE_MODULE || kind == GMT_RANGE_MODULE_BWD)
        return gma_cat_range_class("", 0, kind);
    if (name >= c->ncls_cap) {
        size_t cap = c->ncls_cap ? c->ncls_cap : 1024;
        while (cap <= name)
            cap *= 2;
        uint8_t *p = realloc(c->ncls, cap);
        if (!p) {
            r->err = GMT_E_NOMEM;
            return 0;
        }
        memset(p + c->ncls_cap, 0, cap - c->ncls_cap);
        c->ncls = p;
        c->ncls_cap = cap;
    }
    if (!c->ncls[name]) {
        size_t len = 0;
        const char *s = gma_str(r, name, &len);
        c->ncls[name] = (uint8_t)(0x80u | gma_cat_range_class(s, len, 0));
    }
    return c->ncls[name] & 0x7Fu;
}

/* What the chain of open ranges from instance id up says. */
typedef struct chain {
    unsigned cls;
    uint64_t op, mod, opt, mm, copy;
    uint64_t copy_tid, copy_begin;
} chain;

static const crange *ring_find(const gma_category *c, uint64_t id)
{
    const crange *x = &c->ring[id % CRING];
    return id && x->id == id ? x : NULL;
}

static chain chain_of(gma_replay *r, uint64_t id)
{
    gma_category *c = r->category;
    chain ch = { 0 };
    for (unsigned n = 0; id && n < GMA_CHAIN_MAX; n++) {
        const crange *in = ring_find(c, id);
        if (!in)
            break;
        unsigned k = name_class(r, in->name, in->kind);
        ch.cls |= k;
        if ((k & GMA_RC_OP) && !ch.op)
            ch.op = id;
        if ((k & GMA_RC_MODULE) && !ch.mod)
            ch.mod = id;
        if ((k & GMA_RC_OPT) && !ch.opt)
            ch.opt = id;
        if ((k & GMA_RC_MATMUL) && !ch.mm)
            ch.mm = id;
        if ((k & GMA_RC_COPY) && !ch.copy) {
            ch.copy = id;
            ch.copy_tid = in->tid;
            ch.copy_begin = in->begin;
        }
        id = in->parent;
    }
    return ch;
}

/* Whether range instance id was still open at ts (forgotten: long ended). */
static int open_at(const gma_category *c, uint64_t id, uint64_t ts)
{
    const crange *x = ring_find(c, id);
    return x && x->begin <= ts && (!x->end || ts < x->end);
}

static void c_range(gma_replay *r, const gmt_range *g)
{
    gma_category *c = r->category;
    crange *x = &c->ring[g->id % CRING];
    if (x->id)
        gma_map_del(&c->ring_at, rkey(x->tid, x->begin), NULL);
    x->id = g->id;
    x->parent = g->parent;
    x->tid = g->tid;
    x->begin = g->ts;
    x->end = 0;
    x->name = g->name < GMA_MAX_STRING_ID ? (uint32_t)g->name : 0;
    x->kind = g->kind < GMT_RANGE_KIND_COUNT_ ? (uint32_t)g->kind : 0;
    if (gma_map_put(&c->ring_at, rkey(g->tid, g->ts), g->id % CRING) != 0)
        r->err = GMT_E_NOMEM;
    if (g->ts < c->range_ts)
        c->range_ts = g->ts;
    if (g->ts < c->train_ts && (name_class(r, x->name, x->kind) & (GMA_RC_BWD | GMA_RC_OPT | GMA_RC_MODULE)))
        c->train_ts = g->ts;
}

static void c_range_closed(gma_replay *r, uint64_t tid, uint32_t name, uint64_t begin, uint64_t end)
{
    gma_category *c = r->category;
    (void)name;
    uint32_t slot;
    if (gma_map_get(&c->ring_at, rkey(tid, begin), &slot) && c->ring[slot].tid == tid && c->ring[slot].begin == begin) {
        c->ring[slot].end = end;
        if (end > c->train_end &&
            (name_class(r, c->ring[slot].name, c->ring[slot].kind) & (GMA_RC_BWD | GMA_RC_OPT | GMA_RC_MODULE)))
            c->train_end = end;
    }
    /* a copy op that made a block: its end bounds the copies it made */
    for (size_t i = c->copyops.len; i-- > 0 && i + 8 >= c->copyops.len;) {
        copyop *o = &GMA_VEC_AT(&c->copyops, copyop, i);
        if (o->tid == tid && o->begin == begin && !o->end) {
            o->end = end;
            break;
        }
    }
}

static void c_step(gma_replay *r, const gmt_step *s)
{
    gma_category *c = r->category;
    if (s->source == GMT_STEPSRC_OPTIMIZER && s->step > 0 && s->ts < c->train_ts)
        c->train_ts = s->ts;
    if (s->source == GMT_STEPSRC_OPTIMIZER && s->ts > c->train_end)
        c->train_end = s->ts;
}

static void c_copy(gma_replay *r, const gmt_copy *cp, int is_memset)
{
    gma_category *c = r->category;
    if (is_memset || cp->copy_kind != GMT_COPY_HTOD)
        return;
    htod *h = gma_vec_push(&c->htods);
    if (!h) {
        r->err = GMT_E_NOMEM;
        return;
    }
    h->tid = cp->tid;
    h->ts = cp->start;
}

static void c_block(gma_replay *r, const gmt_block *b) { r->category->blk_flags = b->flags; }

static void c_alloc(gma_replay *r, const gma_entry *e, const gmt_mem *m, int pending, uint64_t key)
{
    gma_category *c = r->category;
    (void)pending;
    (void)key;
    if (m->source != GMT_SRC_FRAMEWORK)
        return;
    uint64_t k = live_key(m->device, m->address);
    uint32_t old;
    int baseline = (e->flags & GMA_E_BASELINE) != 0;
    if (gma_map_get(&c->live, k, &old)) {
        catrec *o = REC(c, old);
        if (baseline && o->bytes == m->bytes)
            return; /* a window's baseline repeats a block already known */
        o->flags |= CR_FREED;
        o->free_ord = e->ord;
    }
    catrec *x = gma_vec_push(&c->recs);
    if (!x || gma_map_put(&c->live, k, (uint32_t)(c->recs.len - 1)) != 0) {
        r->err = GMT_E_NOMEM;
        return;
    }
    memset(x, 0, sizeof(*x));
    x->ord = e->ord;
    x->free_ord = UINT64_MAX;
    x->bytes = m->bytes;
    x->addr = m->address;
    x->device = (uint8_t)m->device;
    x->cat = GMA_CAT_OTHER;
    if (baseline || (c->blk_flags & (GMT_BLKF_BASELINE | GMT_BLKF_SEEDED)))
        x->flags |= CR_BASE;
    if (m->ts < c->train_ts)
        x->flags |= CR_BEFORE;
    if (m->ts < c->range_ts)
        x->flags |= CR_BEFORE_RANGE;
    if ((e->flags & GMA_E_ACCOUNTED) && !baseline)
        x->flags |= CR_ACC;
    chain ch = chain_of(r, m->range);
    x->a = (uint16_t)ch.cls;
    x->op = ch.op;
    x->mod = ch.mod;
    x->opt = ch.opt;
    if (ch.mm) {
        if (c->last_mm == ch.mm)
            x->flags |= CR_MM_LATER;
        c->last_mm = ch.mm;
    }
    if (ch.copy) {
        uint32_t ci;
        if (!gma_map_get(&c->copyop_of, ch.copy, &ci)) {
            copyop *o = gma_vec_push(&c->copyops);
            if (!o || gma_map_put(&c->copyop_of, ch.copy, (uint32_t)(c->copyops.len - 1)) != 0) {
                r->err = GMT_E_NOMEM;
                return;
            }
            o->id = ch.copy;
            o->tid = ch.copy_tid;
            o->begin = ch.copy_begin;
            o->end = 0;
            ci = (uint32_t)(c->copyops.len - 1);
        }
        x->copy = ci + 1;
    }
}

static void c_freed(gma_replay *r, const gma_entry *e, const gmt_mem *m, uint64_t ord)
{
    gma_category *c = r->category;
    uint32_t i;
    if (e->source != GMT_SRC_FRAMEWORK || !gma_map_del(&c->live, live_key(e->device, e->addr), &i))
        return;
    catrec *x = REC(c, i);
    x->flags |= CR_FREED;
    x->free_ord = ord;
    x->free_ts = m->ts;
    if (win_selected(r, win_of(r, m->ts)) && gma_dev_selected(r, m->device) &&
        (r->opt.step < 0 || m->step == (uint64_t)r->opt.step))
        x->flags |= CR_ACC_FREE;
    x->f = (uint16_t)chain_of(r, m->range).cls;
    if (open_at(c, x->op, m->ts))
        x->flags |= CR_IN_OP;
    if (open_at(c, x->mod, m->ts))
        x->flags |= CR_IN_MOD;
    if (open_at(c, x->opt, m->ts))
        x->flags |= CR_IN_STEP;
}

static void c_release(gma_replay *r)
{
    gma_category *c = r->category;
    if (!c)
        return;
    gma_vec_free(&c->recs);
    gma_map_free(&c->live);
    gma_map_free(&c->ring_at);
    free(c->ring);
    gma_vec_free(&c->copyops);
    gma_map_free(&c->copyop_of);
    gma_vec_free(&c->htods);
    free(c->ncls);
    free(c);
    r->category = NULL;
}

static const gma_consumer CONSUMER = {
    .range = c_range,
    .range_closed = c_range_closed,
    .step = c_step,
    .copy = c_copy,
    .block = c_block,
    .alloc = c_alloc,
    .freed = c_freed,
    .release = c_release,
};

int gma_category_open(gma_replay *r)
{
    if (r->category)
        return 0;
    gma_category *c = calloc(1, sizeof(*c));
    if (!c)
        return -1;
    c->ring = calloc(CRING, sizeof(crange));
    if (!c->ring) {
        free(c);
        return -1;
    }
    c->train_ts = c->range_ts = UINT64_MAX;
    gma_vec_init(&c->recs, sizeof(catrec));
    gma_vec_init(&c->copyops, sizeof(copyop));
    gma_vec_init(&c->htods, sizeof(htod));
    r->category = c;
    if (gma_replay_consumer_add(r, &CONSUMER) != 0) {
        c_release(r);
        return -1;
    }
    return 0;
}

/* ---- deciding ------------------------------------------------------------------------ */

static int htod_cmp(const void *a, const void *b)
{
    const htod *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Whether a host-to-device copy of thread tid (0: any) began in [begin, end]. */
static int copied_in(const gma_vec *h, uint64_t tid, uint64_t begin, uint64_t end)
{
    size_t lo = 0, hi = h->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (GMA_VEC_AT(h, htod, mid).ts < begin)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < h->len && GMA_VEC_AT(h, htod, i).ts <= end; i++) {
        uint64_t t = GMA_VEC_AT(h, htod, i).tid;
        if (!t || !tid || t == tid)
            return 1;
    }
    return 0;
}

static int leak_exempt(gma_cat k)
{
    return k == GMA_CAT_PARAMETER || k == GMA_CAT_GRADIENT || k == GMA_CAT_OPTIMIZER || k == GMA_CAT_WORKSPACE;
}

int gma_category_finish(gma_replay *r)
{
    gma_category *c = r->category;
    if (!c || c->finished)
        return 0;
    c->finished = 1;
    if (!r->fw) /* --layer segments: the allocations are CUDA's, not blocks */
        return 0;
    if (c->htods.len)
        qsort(c->htods.data, c->htods.len, sizeof(htod), htod_cmp);
    for (size_t i = 0; i < c->recs.len; i++) {
        catrec *x = REC(c, i);
        gma_cat_facts f = { 0 };
        f.a = x->a;
        f.f = x->f;
        f.baseline = (x->flags & CR_BASE) != 0;
        /* a run that never trains (no module, backward or optimizer range):
         * its weights are what was made before its first range */
        f.before_train = (x->flags & (c->train_ts != UINT64_MAX ? CR_BEFORE : CR_BEFORE_RANGE)) != 0;
        /* weights the program frees after training (its exit tearing the
         * model down) were still kept to the end */
        f.alive_end = !(x->flags & CR_FREED) ||
                      ((f.before_train || f.baseline) && c->train_end && x->free_ts > c->train_end);
        f.freed_in_op = (x->flags & CR_IN_OP) != 0;
        f.freed_in_module = (x->flags & CR_IN_MOD) != 0;
        f.freed_in_step = (x->flags & CR_IN_STEP) != 0;
        f.mm_later = (x->flags & CR_MM_LATER) != 0;
        if (x->copy) {
            const copyop *o = &GMA_VEC_AT(&c->copyops, copyop, x->copy - 1);
            f.htod = copied_in(&c->htods, o->tid, o->begin, o->end ? o->end : UINT64_MAX);
        }
        x->cat = (uint8_t)gma_cat_classify(&f);
        if (x->device >= GMA_MAX_DEVICES)
            continue;
        if (x->flags & CR_ACC) {
            c->alloc_bytes[x->device][x->cat] += x->bytes;
            c->count[x->device][x->cat]++;
        }
        if ((x->flags & CR_ACC_FREE) && (x->flags & (CR_ACC | CR_BASE)))
            c->free_bytes[x->device][x->cat] += x->bytes;
        {
            const gma_dev *D = &r->dev[x->device];
            if (D->has_peak && x->ord <= D->peak_ord && D->peak_ord < x->free_ord)
                c->at_peak[x->device][x->cat] += x->bytes;
        }
    }
    for (unsigned d = 0; d < GMA_MAX_DEVICES && d < GMA_LAYER_DEVICES; d++) {
        const gma_layer_dev *L = &r->layer.dev[d];
        c->at_peak[d][GMA_CAT_CACHE] = gma_layer_unallocated(L);
        c->at_peak[d][GMA_CAT_OUTSIDE] = gma_layer_outside(L->at_peak_cuda, L->at_peak_reserved);
    }
    /* Leaks that are not: what a model keeps by design to the end. */
    for (size_t i = 0; i < r->entries.len; i++) {
        gma_entry *e = &GMA_VEC_AT(&r->entries, gma_entry, i);
        if ((e->flags & (GMA_E_INUSE | GMA_E_LEAKED)) != (GMA_E_INUSE | GMA_E_LEAKED))
            continue;
        gma_cat k = gma_category_of(r, e);
        if (k >= GMA_CAT_TENSORS_ || !leak_exempt(k))
            continue;
        e->flags &= (uint16_t)~GMA_E_LEAKED;
        gma_dev *D = &r->dev[e->device];
        D->leaked_bytes -= e->bytes < D->leaked_bytes ? e->bytes : D->leaked_bytes;
        D->leaked_count -= D->leaked_count ? 1 : 0;
        if (e->window < r->windows.len) {
            gma_window *W = &GMA_VEC_AT(&r->windows, gma_window, e->window);
            W->leaked_bytes -= e->bytes < W->leaked_bytes ? e->bytes : W->leaked_bytes;
            W->leaked_count -= W->leaked_count ? 1 : 0;
        }
        if (gma_dev_selected(r, e->device)) {
            c->kept_bytes[k] += e->bytes;
            c->kept_count[k]++;
        }
    }
    return r->err ? -1 : 0;
}

int gma_category_known(const gma_replay *r) { return r->category && r->category->finished; }

gma_cat gma_category_of(const gma_replay *r, const gma_entry *e)
{
    const gma_category *c = r->category;
    if (!c || !c->finished || e->source != GMT_SRC_FRAMEWORK)
        return GMA_CAT_COUNT_;
    /* the records are in allocation order: by the entry's ordinal */
    size_t lo = 0, hi = c->recs.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (GMA_VEC_AT(&c->recs, catrec, mid).ord < e->ord)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < c->recs.len && GMA_VEC_AT(&c->recs, catrec, lo).ord == e->ord)
        return (gma_cat)GMA_VEC_AT(&c->recs, catrec, lo).cat;
    /* a window's baseline entry: the block it repeats */
    uint32_t i;
    if ((e->flags & GMA_E_LIVE) && gma_map_get(&c->live, live_key(e->device, e->addr), &i))
        return (gma_cat)GMA_VEC_AT(&c->recs, catrec, i).cat;
    return GMA_CAT_COUNT_;
}

int gma_category_at_peak(const gma_replay *r, unsigned device, uint64_t out[GMA_CAT_COUNT_])
{
    if (!gma_category_known(r) || device >= GMA_MAX_DEVICES || !r->dev[device].has_peak)
        return -1;
    memcpy(out, r->category->at_peak[device], sizeof(uint64_t) * GMA_CAT_COUNT_);
    return 0;
}

int gma_category_peak_split(const gma_replay *r, unsigned device, char *out, size_t cap)
{
    uint64_t v[GMA_CAT_COUNT_];
    if (!r->fw || gma_category_at_peak(r, device, v) != 0 || !cap)
        return 0;
    size_t n = 0;
    out[0] = 0;
    for (unsigned k = 0; k < GMA_CAT_COUNT_ && n < cap; k++) {
        if (!v[k])
            continue;
        char b[GMA_FMT_CAP];
        int w = snprintf(out + n, cap - n, "%s%s %s", n ? ", " : "", gma_cat_names[k], gma_fmt_bytes(b, v[k]));
        if (w < 0)
            break;
        n += (size_t)w;
    }
    return n > 0;
}

int gma_category_kept(const gma_replay *r, uint64_t *bytes, uint64_t *count, char *out, size_t cap)
{
    *bytes = *count = 0;
    if (!r->fw || !gma_category_known(r) || !cap)
        return 0;
    const gma_category *c = r->category;
    size_t n = 0;
    out[0] = 0;
    for (unsigned k = 0; k < GMA_CAT_TENSORS_ && n < cap; k++) {
        if (!c->kept_count[k])
            continue;
        *bytes += c->kept_bytes[k];
        *count += c->kept_count[k];
        char b[GMA_FMT_CAP];
        int w = snprintf(out + n, cap - n, "%s%s %s", n ? ", " : "", gma_cat_names[k], gma_fmt_bytes(b, c->kept_bytes[k]));
        if (w < 0)
            break;
        n += (size_t)w;
    }
    return *count > 0;
}

/* ---- --by category: a view (view.h) ------------------------------------------------- */

/* One row of the view: a category of a device. */
typedef struct catrow {
    unsigned dev, cat;
    uint64_t peak, alloc, freed, count;
} catrow;

#define CW_(x) ((const catrow *)(x))
static int64_t sat(uint64_t v) { return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v; }
static int64_t k_peak(const gma_replay *r, const void *x) { (void)r; return sat(CW_(x)->peak); }
static int64_t k_alloc(const gma_replay *r, const void *x) { (void)r; return sat(CW_(x)->alloc); }
static int64_t k_count(const gma_replay *r, const void *x) { (void)r; return sat(CW_(x)->count); }
/* the vocabulary's order, device by device */
static int64_t k_order(const gma_replay *r, const void *x)
{
    (void)r;
    return (int64_t)CW_(x)->dev * GMA_CAT_COUNT_ + CW_(x)->cat;
}

#define D_ GMA_ORDER_DESC
#define AT_PEAK "bytes at the device's peak"
/* no times: time and held rank as mem; name keeps the vocabulary's order */
static const gma_sortkey CATEGORY_KEYS[GMA_SORT_COUNT_] = {
    { "mem", AT_PEAK, D_, k_peak, "peak_bytes", GMA_SORT_PEAK, "bytes at the peak", GMA_CT_BYTES, NULL, 0 },
    { "peak", AT_PEAK, D_, k_peak, "peak_bytes", GMA_SORT_PEAK, "bytes at the peak", GMA_CT_BYTES, NULL, 0 },
    { "alloc", "bytes allocated", D_, k_alloc, "alloc_bytes", GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "count", "allocations", D_, k_count, "alloc_count", GMA_SORT_COUNT, "allocations", GMA_CT_U64, NULL, 0 },
    { "time", AT_PEAK, D_, k_peak, "peak_bytes", GMA_SORT_PEAK, "bytes at the peak", GMA_CT_BYTES, NULL, 0 },
    { "name", "category", GMA_ORDER_NAME, k_order, NULL, GMA_SORT_PEAK, "bytes at the peak", GMA_CT_BYTES, NULL, 0 },
    { "held", AT_PEAK, D_, k_peak, "peak_bytes", GMA_SORT_PEAK, "bytes at the peak", GMA_CT_BYTES, NULL, 0 },
};
#undef D_

enum { C_DEV, C_CAT, C_PEAK, C_SHARE, C_ALLOC, C_FREED, C_COUNT, C_NCOLS };
static const gma_col COLS[C_NCOLS] = {
    { "dev", "device", GMA_CT_U64, 1, 0 },          { "category", "category", GMA_CT_STR, 1, 0 },
    { "at peak", "peak_bytes", GMA_CT_BYTES, 1, 0 }, { "share", "peak_share", GMA_CT_SHARE, 1, 0 },
    { "allocated", "alloc_bytes", GMA_CT_BYTES, 1, 0 }, { "freed", "freed_bytes", GMA_CT_BYTES, 1, 0 },
    { "count", "alloc_count", GMA_CT_U64, 1, 0 },
};

enum { D_DEV, D_CAT, D_A, D_B, D_DELTA, D_AALLOC, D_BALLOC, D_NCOLS };
static const gma_col DCOLS[D_NCOLS] = {
    { "dev", "device", GMA_CT_U64, 1, 0 },           { "category", "category", GMA_CT_STR, 1, 0 },
    { "A at peak", "a_peak_bytes", GMA_CT_BYTES, 1, 0 }, { "B at peak", "b_peak_bytes", GMA_CT_BYTES, 1, 0 },
    { "change", "change_bytes", GMA_CT_DBYTES, 1, 0 }, { "A allocated", "a_alloc_bytes", GMA_CT_BYTES, 1, 0 },
    { "B allocated", "b_alloc_bytes", GMA_CT_BYTES, 1, 0 },
};

static int peak_devs(const gma_replay *r, unsigned d)
{
    return r->dev[d].present && r->dev[d].has_peak && gma_dev_selected(r, d);
}

static int row_cmp(const void *pa, const void *pb, void *ctx)
{
    const gma_sortkey *k = ctx;
    if (k->compare != GMA_ORDER_NAME) {
        int64_t a = k->value(NULL, pa), b = k->value(NULL, pb);
        if (a != b)
            return (k->compare == GMA_ORDER_DESC ? a > b : a < b) ? -1 : 1;
    }
    int64_t x = k_order(NULL, pa), y = k_order(NULL, pb);
    return x < y ? -1 : x > y;
}

/* A row a category of every device at its peak; in the vocabulary's order,
 * or ranked by --sort. Every row: the categories are a fixed set, --top
 * does not cut them. */
static int build(const gma_replay *r, gma_table *t, uint64_t top)
{
    (void)top;
    const gma_category *c = r->category;
    gma_sort s = r->opt.sort_given ? r->opt.sort : GMA_SORT_NAME;
    const gma_sortkey *k = &CATEGORY_KEYS[(unsigned)s < GMA_SORT_COUNT_ ? s : GMA_SORT_MEM];
    gma_table_init(t, "Categories: bytes at each device's peak, allocated, freed", COLS, C_NCOLS);
    t->sort_note = k->header;
    if (!gma_category_known(r)) /* no blocks: no rows (main.c says why) */
        return 0;
    catrow rows[GMA_MAX_DEVICES * GMA_CAT_COUNT_];
    uint64_t sum[GMA_MAX_DEVICES] = { 0 };
    size_t n = 0;
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++) {
        if (!peak_devs(r, d))
            continue;
        for (unsigned j = 0; j < GMA_CAT_COUNT_; j++) {
            catrow *w = &rows[n++];
            w->dev = d;
            w->cat = j;
            w->peak = c->at_peak[d][j];
            sum[d] += w->peak;
            w->alloc = j < GMA_CAT_TENSORS_ ? c->alloc_bytes[d][j] : 0;
            w->freed = j < GMA_CAT_TENSORS_ ? c->free_bytes[d][j] : 0;
            w->count = j < GMA_CAT_TENSORS_ ? c->count[d][j] : 0;
        }
    }
    if (gma_msort(rows, n, sizeof(catrow), row_cmp, (void *)k) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const catrow *w = &rows[i];
        gma_cell *x = gma_table_row(t);
        if (!x)
            return -1;
        x[C_DEV].v.u = w->dev;
        gma_cell_str(t, &x[C_CAT], gma_cat_names[w->cat]);
        x[C_PEAK].v.u = w->peak;
        x[C_SHARE].v.d = sum[w->dev] ? (double)w->peak / (double)sum[w->dev] : 0.0;
        x[C_ALLOC].v.u = w->alloc;
        x[C_FREED].v.u = w->freed;
        x[C_COUNT].v.u = w->count;
        /* the layers beside the blocks are no allocations */
        x[C_ALLOC].null = x[C_FREED].null = x[C_COUNT].null = w->cat >= GMA_CAT_TENSORS_;
    }
    t->total_rows = t->nrows;
    return 0;
}

/* A against B, device by device, in the vocabulary's order; the note names
 * the category whose bytes at the peak differ most. */
static int diff_build(const gma_replay *a, const gma_replay *b, gma_table *t, gma_note *note)
{
    const gma_category *ca = gma_category_known(a) ? a->category : NULL;
    const gma_category *cb = gma_category_known(b) ? b->category : NULL;
    gma_table_init(t, "Categories: A against B at each device's peak", DCOLS, D_NCOLS);
    t->sort_note = "category";
    note->key = "separates";
    note->label = "Separates the runs most";
    note->text[0] = 0;
    int64_t best = 0;
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++) {
        if (!peak_devs(a, d) && !peak_devs(b, d))
            continue;
        for (unsigned k = 0; k < GMA_CAT_COUNT_; k++) {
            gma_cell *x = gma_table_row(t);
            if (!x)
                return -1;
            uint64_t va = ca ? ca->at_peak[d][k] : 0, vb = cb ? cb->at_peak[d][k] : 0;
            x[D_DEV].v.u = d;
            gma_cell_str(t, &x[D_CAT], gma_cat_names[k]);
            x[D_A].v.u = va;
            x[D_B].v.u = vb;
            x[D_DELTA].v.i = (int64_t)vb - (int64_t)va;
            if (k < GMA_CAT_TENSORS_ && ca && cb) {
                x[D_AALLOC].v.u = ca->alloc_bytes[d][k];
                x[D_BALLOC].v.u = cb->alloc_bytes[d][k];
            } else {
                x[D_AALLOC].null = x[D_BALLOC].null = 1;
            }
            int64_t m = x[D_DELTA].v.i < 0 ? -x[D_DELTA].v.i : x[D_DELTA].v.i;
            if (m > best) {
                char bb[GMA_FMT_CAP];
                best = m;
                snprintf(note->text, sizeof note->text, "dev%u %s, %s", d, gma_cat_names[k],
                         gma_fmt_sbytes(bb, x[D_DELTA].v.i, 1));
            }
        }
    }
    t->total_rows = t->nrows;
    return 0;
}

const gma_view gma_view_category = {
    .name = "category",
    .keys = CATEGORY_KEYS,
    .names = { "device", "category" },
    .merge = NULL,
    .diff_default = GMA_SORT_PEAK,
    .diff_max = 0,
    .build = build,
    .alone = 1,
    .diff_build = diff_build,
};
