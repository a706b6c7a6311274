/* Insights: computed from a finished replay and the records the pass kept
 * (insights.h; the classes are defined in docs/analyzer.md). */
#include "insights_int.h"
#include "tracestr.h"
#include "winsteps.h"

#include <stdlib.h>
#include <string.h>

const char *const gma_ins_class_names[GMA_IC_COUNT_] = {
    "persistent", "step-scoped", "temporary", "outside the allocator", "reserved, unallocated",
};

#define GMI_IDLE_MIN_NS 1000000u   /* lifetimes shorter than 1 ms are not judged idle */
#define GMI_GROWTH_MAX_STEPS 100000u
#define GMI_WHATIF_TRIES 5u        /* owners replayed for the what-if */

typedef struct gmi_ctx {
    gma_ins_result *res;
    const gma_replay *r;
    const gma_insights *in;
    gma_map owner_of;   /* owner key -> group */
    gma_map name_of;    /* hash of the display name -> group */
    gma_vec groups;     /* size_t: the group's name in res->strs */
    gma_buf buf;
    int oom;
} gmi_ctx;

/* Record i, in a pass over them in order: the pages read are dropped from
 * the resident set every GMI_TRIM records. */
static const gmi_rec *REC(const gmi_ctx *c, size_t i)
{
    if (i && !(i % GMI_TRIM))
        gma_spill_trim(&c->in->recs);
    return gma_spill_at(&c->in->recs, i);
}

/* ---- owners ------------------------------------------------------------------ */

/* The owner of an allocation: the innermost nn.Module around it (or the
 * module an OWNER record gave it) in a bridge trace with modules, else its
 * op (the outermost NVTX range around it) when it has one, else the kernel
 * it is attributed to. Owners with the same display name are one group
 * ("aten::mm, seq = 9" and "aten::mm, seq = 12"). */
static uint32_t owner_group(gmi_ctx *c, const gmi_rec *a)
{
    uint64_t key = a->owner ? (1ull << 40) | a->owner : a->kname;
    uint32_t g;
    if (gma_map_get(&c->owner_of, key, &g))
        return g;
    gma_buf_reset(&c->buf);
    if (a->owner) {
        gma_range_display(c->r, a->owner & ~GMI_OWNER_BWD, c->r->opt.full_names, &c->buf);
        if (a->owner & GMI_OWNER_BWD)
            gma_buf_puts(&c->buf, " (backward)");
    } else
        gma_kernel_display(c->r, a->kname, c->r->opt.full_names, &c->buf);
    const char *s = gma_buf_str(&c->buf);
    uint64_t h = gma_hash_str(s);
    if (!gma_map_get(&c->name_of, h, &g)) {
        size_t *slot = gma_vec_push(&c->groups);
        size_t off = gma_strs_add(&c->res->strs, s, strlen(s));
        if (!slot || off == (size_t)-1 || gma_map_put(&c->name_of, h, (uint32_t)(c->groups.len - 1)) != 0) {
            c->oom = 1;
            return 0;
        }
        *slot = off;
        g = (uint32_t)(c->groups.len - 1);
    }
    if (gma_map_put(&c->owner_of, key, g) != 0)
        c->oom = 1;
    return g;
}

/* Adds bytes to group g's row in v (idx: group -> row, per vector). */
static gma_ins_owner *owner_add(gmi_ctx *c, gma_vec *v, gma_map *idx, uint32_t g, uint64_t bytes)
{
    uint32_t i;
    gma_ins_owner *o;
    if (gma_map_get(idx, g, &i)) {
        o = &GMA_VEC_AT(v, gma_ins_owner, i);
    } else {
        o = gma_vec_push(v);
        if (!o || gma_map_put(idx, g, (uint32_t)(v->len - 1)) != 0) {
            c->oom = 1;
            return NULL;
        }
        o->name = GMA_VEC_AT(&c->groups, size_t, g);
    }
    o->bytes += bytes;
    o->count++;
    return o;
}

static int owner_cmp(const void *pa, const void *pb, void *ctx)
{
    const gma_ins_owner *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return strcmp(gma_ins_str(ctx, a->name), gma_ins_str(ctx, b->name));
}

static int slope_cmp(const void *pa, const void *pb, void *ctx)
{
    const gma_ins_owner *a = pa, *b = pb;
    if (a->slope != b->slope)
        return a->slope > b->slope ? -1 : 1;
    return strcmp(gma_ins_str(ctx, a->name), gma_ins_str(ctx, b->name));
}

/* ---- 1. the peak by lifetime class --------------------------------------------- */

static int live_at(const gmi_rec *a, unsigned d, uint64_t p) { return a->device == d && a->ord <= p && p < a->free_ord; }

static gma_ins_class_id classify(const gmi_rec *a, uint64_t peak_step, int fw_src)
{
    if (fw_src >= 0 && a->source != fw_src)
        return GMA_IC_OUTSIDE;
    if ((a->flags & GMI_BASELINE) || a->step < peak_step || !(a->flags & GMI_FREED) || a->free_step > peak_step)
        return GMA_IC_PERSISTENT;
    if (a->op ? a->op == a->free_op
              : (!a->free_op && a->tid && a->tid == a->free_tid && a->free_seq <= a->seq + 1))
        return GMA_IC_TEMP;
    return GMA_IC_STEP;
}

/* The category of a record, with categories (category.h): outside the
 * allocator as classify says, a block's own category, "other" for a block
 * the categories do not know. */
static unsigned category_of(const gmi_ctx *c, const gmi_rec *a, int fw_src)
{
    if (fw_src >= 0 && a->source != fw_src)
        return GMA_CAT_OUTSIDE;
    gma_entry e;
    memset(&e, 0, sizeof(e));
    e.addr = a->addr;
    e.bytes = a->bytes;
    e.ord = a->ord;
    e.device = a->device;
    e.source = a->source;
    /* a window's baseline repeats a block made before it: found by address */
    e.flags = (a->flags & GMI_BASELINE) && !(a->flags & GMI_FREED) ? GMA_E_LIVE : 0;
    gma_cat k = gma_category_of(c->r, &e);
    return k < GMA_CAT_TENSORS_ ? (unsigned)k : GMA_CAT_OTHER;
}

static void holes_build(gmi_ctx *c, gma_ins_dev *D);

static void classes_build(gmi_ctx *c, gma_ins_dev *D)
{
    const gma_replay *r = c->r;
    const gma_ins_result *res = c->res;
    int fw_src = gma_framework_source(r);
    gma_map idx[GMA_INS_CLASSES];
    memset(idx, 0, sizeof(idx));
    for (unsigned k = 0; k < GMA_INS_CLASSES; k++)
        gma_vec_init(&D->cls[k].owners, sizeof(gma_ins_owner));
    for (unsigned k = 0; k < res->ncls; k++)
        D->cls[k].known = 1;
    D->cls[res->ic_outside].known = r->fw || fw_src >= 0;
    D->cls[res->ic_cache].known = r->fw;
    uint64_t p = r->dev[D->device].peak_ord;
    for (size_t i = 0; i < c->in->recs.n; i++) {
        const gmi_rec *a = REC(c, i);
        if (!live_at(a, D->device, p))
            continue;
        gma_ins_class_id life = classify(a, D->step, fw_src);
        unsigned k = res->categories ? category_of(c, a, fw_src) : (unsigned)life;
        if (res->categories && life < GMA_IC_OUTSIDE) {
            D->life[life] += a->bytes;
            D->life_count[life]++;
        }
        D->live_sum += a->bytes;
        D->cls[k].bytes += a->bytes;
        D->cls[k].count++;
        owner_add(c, &D->cls[k].owners, &idx[k], owner_group(c, a), a->bytes);
    }
    if (r->fw && D->device < GMA_LAYER_DEVICES) {
        const gma_layer_dev *L = &r->layer.dev[D->device];
        D->has_fw = 1;
        D->fw_allocated = L->allocated_peak;
        D->fw_reserved = L->at_peak_reserved;
        D->fw_cuda = L->at_peak_cuda;
        D->ooms = L->ooms;
        D->oom_bytes = L->oom_bytes;
        D->cls[res->ic_outside].bytes = gma_layer_outside(L->at_peak_cuda, L->at_peak_reserved);
        D->cls[res->ic_cache].bytes = L->at_peak_reserved > L->allocated_peak ? L->at_peak_reserved - L->allocated_peak : 0;
        holes_build(c, D);
    }
    for (unsigned k = 0; k < GMA_INS_CLASSES; k++) {
        gma_vec *v = &D->cls[k].owners;
        if (gma_msort(v->data, v->len, sizeof(gma_ins_owner), owner_cmp, (void *)c->res) != 0)
            c->oom = 1;
        gma_map_free(&idx[k]);
    }
}

/* ---- 2. fragmentation: the holes at the peak ------------------------------------ */

typedef struct gmi_span {
    uint64_t addr, end;
} gmi_span;

static int span_cmp(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const gmi_span *a = pa, *b = pb;
    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The largest free range inside a segment live at the peak: the segments
 * less the blocks live then, both in address order. */
static void holes_build(gmi_ctx *c, gma_ins_dev *D)
{
    uint64_t p = c->r->dev[D->device].peak_ord;
    gma_vec segs, blks;
    gma_vec_init(&segs, sizeof(gmi_span));
    gma_vec_init(&blks, sizeof(gmi_span));
    for (size_t i = 0; i < c->in->segs.len && !c->oom; i++) {
        const gmi_seg *s = &GMA_VEC_AT(&c->in->segs, gmi_seg, i);
        gmi_span *v;
        if (s->device != D->device || s->ord > p || p >= s->free_ord)
            continue;
        if (!(v = gma_vec_push(&segs)))
            c->oom = 1;
        else
            *v = (gmi_span){ s->addr, s->addr + s->bytes };
    }
    for (size_t i = 0; i < c->in->recs.n && !c->oom; i++) {
        const gmi_rec *a = REC(c, i);
        gmi_span *v;
        if (!live_at(a, D->device, p))
            continue;
        if (!(v = gma_vec_push(&blks)))
            c->oom = 1;
        else
            *v = (gmi_span){ a->addr, a->addr + a->bytes };
    }
    D->segments = segs.len;
    if (!c->oom && (gma_msort(segs.data, segs.len, sizeof(gmi_span), span_cmp, NULL) != 0 ||
                    gma_msort(blks.data, blks.len, sizeof(gmi_span), span_cmp, NULL) != 0))
        c->oom = 1;
    size_t j = 0;
    for (size_t i = 0; i < segs.len && !c->oom; i++) {
        const gmi_span *s = &GMA_VEC_AT(&segs, gmi_span, i);
        uint64_t at = s->addr;
        while (j < blks.len && GMA_VEC_AT(&blks, gmi_span, j).end <= s->addr)
            j++;
        for (size_t k = j; k < blks.len && GMA_VEC_AT(&blks, gmi_span, k).addr < s->end; k++) {
            const gmi_span *b = &GMA_VEC_AT(&blks, gmi_span, k);
            if (b->addr > at && b->addr - at > D->largest_hole)
                D->largest_hole = b->addr - at;
            if (b->end > at)
                at = b->end;
        }
        if (s->end > at && s->end - at > D->largest_hole)
            D->largest_hole = s->end - at;
    }
    gma_vec_free(&segs);
    gma_vec_free(&blks);
}

/* ---- 3. growth across steps --------------------------------------------------- */

typedef struct gmi_ev {
    uint32_t group;
    uint64_t step;
    int64_t delta;
} gmi_ev;

static int ev_cmp(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const gmi_ev *a = pa, *b = pb;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return a->step < b->step ? -1 : a->step > b->step;
}


/* One series: live bytes at the end of each step from the events of one
 * group (sorted by step), its least-squares slope and how often it grew. */
static void series(const gmi_ev *ev, size_t n, uint64_t lo, uint64_t hi, gma_ins_owner *o)
{
    double nn = (double)(hi - lo + 1), xm = (nn - 1) / 2, sxy = 0, sxx = 0;
    int64_t y = 0, prev = 0;
    size_t j = 0;
    for (uint64_t s = lo; s <= hi; s++) {
        while (j < n && ev[j].step <= s)
            y += ev[j++].delta;
        double x = (double)(s - lo) - xm;
        sxy += x * (double)y;
        sxx += x * x;
        if (s == lo)
            o->first = (uint64_t)y;
        else if (y > prev)
            o->grew++;
        prev = y;
    }
    o->last = (uint64_t)y;
    o->slope = sxx > 0 ? (int64_t)(sxy / sxx + (sxy >= 0 ? 0.5 : -0.5)) : 0;
}

static void growth_build(gmi_ctx *c, gma_ins_dev *D)
{
    gma_vec_init(&D->growth, sizeof(gma_ins_owner));
    uint64_t lo, hi;
    if (D->window >= c->r->windows.len ||
        !gma_window_full_steps(c->r, &GMA_VEC_AT(&c->r->windows, gma_window, D->window), &lo, &hi) ||
        hi - lo >= GMI_GROWTH_MAX_STEPS)
        return;
    D->step_first = lo;
    D->step_last = hi;
    D->nsteps = hi - lo + 1;
    gma_vec ev;
    gma_vec_init(&ev, sizeof(gmi_ev));
    for (size_t i = 0; i < c->in->recs.n && !c->oom; i++) {
        const gmi_rec *a = REC(c, i);
        if (a->device != D->device || a->window != D->window)
            continue;
        uint64_t s0 = a->step > lo ? a->step : lo;
        uint64_t s1 = (a->flags & GMI_FREED) && a->free_step <= hi ? a->free_step : hi + 1;
        if (s0 > hi || s1 <= s0)
            continue;
        uint32_t g = owner_group(c, a);
        gmi_ev *e1 = gma_vec_push(&ev), *e2 = s1 <= hi ? gma_vec_push(&ev) : NULL;
        if (!e1 || (s1 <= hi && !e2)) {
            c->oom = 1;
            break;
        }
        e1 = &GMA_VEC_AT(&ev, gmi_ev, ev.len - (e2 ? 2 : 1));
        *e1 = (gmi_ev){ g, s0, (int64_t)a->bytes };
        if (e2)
            GMA_VEC_AT(&ev, gmi_ev, ev.len - 1) = (gmi_ev){ g, s1, -(int64_t)a->bytes };
    }
    gmi_ev *E = ev.data;
    if (!c->oom && gma_msort(E, ev.len, sizeof(gmi_ev), ev_cmp, NULL) != 0)
        c->oom = 1;
    for (size_t j = 0; j < ev.len && !c->oom;) {
        size_t k = j;
        while (k < ev.len && E[k].group == E[j].group)
            k++;
        gma_ins_owner o;
        memset(&o, 0, sizeof(o));
        series(E + j, k - j, lo, hi, &o);
        /* a suspect grows in at least half the steps and ends higher */
        if (o.slope > 0 && o.last > o.first && o.grew * 2 >= D->nsteps - 1) {
            gma_ins_owner *v = gma_vec_push(&D->growth);
            if (!v)
                c->oom = 1;
            else {
                o.name = GMA_VEC_AT(&c->groups, size_t, E[j].group);
                o.bytes = o.last;
                *v = o;
            }
        }
        j = k;
    }
    /* all owners together: the same series over every event, by step */
    for (size_t j = 0; j < ev.len; j++)
        E[j].group = 0;
    if (!c->oom && gma_msort(E, ev.len, sizeof(gmi_ev), ev_cmp, NULL) != 0)
        c->oom = 1;
    gma_ins_owner t;
    memset(&t, 0, sizeof(t));
    series(E, ev.len, lo, hi, &t);
    D->total_slope = t.slope;
    D->total_first = t.first;
    D->total_last = t.last;
    if (!c->oom && gma_msort(D->growth.data, D->growth.len, sizeof(gma_ins_owner), slope_cmp, (void *)c->res) != 0)
        c->oom = 1;
    gma_vec_free(&ev);
}

/* ---- 4. lifetime waste ------------------------------------------------------- */

int gmi_kernel_cmp(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const gmi_kernel *a = pa, *b = pb;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* First index in k[0..n) at or after (tid, stream) (after: past it). */
static size_t bound(const gmi_kernel *k, size_t n, uint64_t tid, uint64_t stream, int after)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        int before = k[m].tid < tid || (k[m].tid == tid && (k[m].stream < stream || (after && k[m].stream == stream)));
        if (before)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* Around a time, among the kernels of a thread on a stream (0: an
 * allocation tied to no stream, so every stream of the thread). */
typedef struct gmi_near {
    uint64_t after;       /* start of the first kernel at or after ts, UINT64_MAX none */
    uint64_t before_start, before_end; /* the last kernel starting at or before ts2 */
    int has_before;
} gmi_near;

static size_t first_from(const gmi_kernel *k, size_t n, uint64_t ts);

static void near_in(const gmi_kernel *K, size_t nk, uint64_t tid, uint64_t stream, uint64_t ts, uint64_t ts2,
                    gmi_near *out)
{
    out->after = UINT64_MAX;
    out->has_before = 0;
    size_t f = bound(K, nk, tid, stream, 0), e;
    for (; f < nk && K[f].tid == tid && (!stream || K[f].stream == stream); f = e) {
        e = bound(K, nk, tid, K[f].stream, 1);
        size_t n = e - f, i = first_from(K + f, n, ts);
        if (i < n && K[f + i].start < out->after)
            out->after = K[f + i].start;
        i = first_from(K + f, n, ts2 + 1);
        if (i > 0 && (!out->has_before || K[f + i - 1].start > out->before_start)) {
            out->has_before = 1;
            out->before_start = K[f + i - 1].start;
            out->before_end = K[f + i - 1].end;
        }
    }
}

/* First index in k[0..n) whose start is >= ts. */
static size_t first_from(const gmi_kernel *k, size_t n, uint64_t ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (k[m].start < ts)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* The idle head and tail of a freed allocation: from its allocation to the
 * first kernel its thread launched on its stream after it, and from the end
 * of the last kernel the freeing thread launched on that stream before the
 * free to the free (stream 0: any stream of the thread). */
static void idle_span(const gmi_kernel *K, size_t nk, const gmi_rec *a, uint64_t *head_end, uint64_t *tail_from)
{
    gmi_near h, t;
    near_in(K, nk, a->tid, a->stream, a->ts, a->ts, &h);
    *head_end = h.after < a->free_ts ? h.after : a->free_ts;
    near_in(K, nk, a->free_tid, a->stream, a->free_ts, a->free_ts, &t);
    if (t.has_before) {
        uint64_t end = t.before_end;
        *tail_from = end < *head_end ? *head_end : end > a->free_ts ? a->free_ts : end;
    } else {
        *tail_from = *head_end;
    }
}

static void waste_build(gmi_ctx *c, gma_ins_dev *D, const gmi_kernel *K, size_t nk)
{
    gma_vec_init(&D->idle_owners, sizeof(gma_ins_owner));
    gma_map idx;
    memset(&idx, 0, sizeof(idx));
    uint64_t p = c->r->dev[D->device].peak_ord;
    for (size_t i = 0; i < c->in->recs.n; i++) {
        const gmi_rec *a = REC(c, i);
        if (i && !(i % GMI_TRIM))
            gma_spill_trim(&c->in->ksorted);
        if (a->device != D->device || a->window != D->window || !(a->flags & GMI_FREED) || !a->tid ||
            !a->free_tid || a->free_ts < a->ts + GMI_IDLE_MIN_NS)
            continue;
        uint64_t head_end, tail_from;
        idle_span(K, nk, a, &head_end, &tail_from);
        uint64_t life = a->free_ts - a->ts, idle = (head_end - a->ts) + (a->free_ts - tail_from);
        if (idle * 2 <= life)
            continue;
        D->idle_count++;
        D->idle_bytes += a->bytes;
        if (live_at(a, D->device, p) && (D->ts < head_end || D->ts >= tail_from)) {
            D->idle_at_peak += a->bytes;
            D->idle_at_peak_count++;
            owner_add(c, &D->idle_owners, &idx, owner_group(c, a), a->bytes);
        }
    }
    gma_map_free(&idx);
    if (gma_msort(D->idle_owners.data, D->idle_owners.len, sizeof(gma_ins_owner), owner_cmp, (void *)c->res) != 0)
        c->oom = 1;
}

/* ---- 5. what-if -------------------------------------------------------------- */

/* An allocation whose free can move one op earlier: the op that holds its
 * free (or the last op begun before it) began after the allocation. */
static int movable(const gmi_rec *a) { return (a->flags & GMI_FREED) && a->early_ts > a->ts && a->early_ts < a->free_ts; }

/* Events in time, ties in trace order: allocations at 2n, frees at 2n - 1
 * (the level just before a free is the one the peak sees), moved frees at 0
 * (before anything else at the op's begin). */
typedef struct gmi_pt {
    uint64_t ts, pos;
    int64_t delta;
    uint64_t step;
} gmi_pt;

static int pt_cmp(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const gmi_pt *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* A layer: an op's name group and its ordinal among the ops of that group
 * begun in the same step, so that "the second aten::softmax" is the same
 * layer in every step. Per op (in the order of in->ops), and per op the
 * begin of its backward window (UINT64_MAX: no activation). */
typedef struct gmi_layers {
    gma_vec key;        /* uint64_t: group << 32 | ordinal, UINT64_MAX none */
    gma_vec back;       /* uint64_t */
    gma_map turn_of;    /* step -> turns index */
    gma_vec turns;      /* gmi_turn */
} gmi_layers;

/* A step's turn: when its live bytes peak, replayed in time order; taken
 * as the end of its forward (the activations of a training step are all
 * live there). */
typedef struct gmi_turn {
    uint64_t level, ts;
} gmi_turn;

/* A change to replay: the movable allocations of group g freed when the op
 * holding their free began (g UINT32_MAX: none), and the activations of
 * layer (UINT64_MAX none) recomputed in every step. */
typedef struct gmi_plan {
    uint32_t group;
    uint64_t layer;
    const gmi_layers *ly;
} gmi_plan;

/* An activation of op L: made in its forward, freed in the same step at or
 * after the step's turn, neither in L (a temporary) nor never. */
static int activation_of(const gmi_layers *ly, const gmi_rec *a, const gmi_op *L)
{
    uint32_t t;
    return a->op == L->id && (a->flags & GMI_FREED) && !(a->flags & GMI_BASELINE) && a->free_step == a->step &&
           a->free_op != L->id && L->end && a->free_ts > L->end && gma_map_get(&ly->turn_of, a->step, &t) &&
           a->free_ts >= GMA_VEC_AT(&ly->turns, gmi_turn, t).ts;
}

/* The index in in->ops of the op of a, when a is an activation of it. */
static int activation_op(const gma_insights *in, const gmi_layers *ly, const gmi_rec *a, uint32_t *oi)
{
    return a->op && gma_map_get(&in->op_idx, a->op, oi) && activation_of(ly, a, &GMA_VEC_AT(&in->ops, gmi_op, *oi));
}

static int pt_add(gma_xsort *v, uint64_t ts, uint64_t pos, int64_t delta, uint64_t step)
{
    gmi_pt q = { ts, pos, delta, step };
    return gma_xsort_add(v, &q);
}

/* A point of a sweep, in order, at level: its step's turn into ly. */
static int turn_add(const gmi_pt *q, int64_t level, gmi_layers *ly)
{
    uint32_t k;
    if (!gma_map_get(&ly->turn_of, q->step, &k)) {
        gmi_turn *t = gma_vec_push(&ly->turns);
        if (!t || gma_map_put(&ly->turn_of, q->step, (uint32_t)(ly->turns.len - 1)) != 0)
            return -1;
        *t = (gmi_turn){ 0, q->ts };
        k = (uint32_t)(ly->turns.len - 1);
    }
    gmi_turn *t = &GMA_VEC_AT(&ly->turns, gmi_turn, k);
    if (level > 0 && (uint64_t)level > t->level)
        *t = (gmi_turn){ (uint64_t)level, q->ts };
    return 0;
}

/* The peak of the peak's window on the device with the plan's changes. An
 * activation recomputed is live from its allocation to its layer's end
 * (freed after everything else at that instant) and again from the
 * layer's backward begin (allocated before anything else then) to its
 * free. turns: NULL, or where each step's turn goes (plan without layer). */
static uint64_t sweep(gmi_ctx *c, const gma_ins_dev *D, const gmi_plan *p, gmi_layers *turns)
{
    /* two points per record: sorted in runs on disk, merged */
    gma_xsort v;
    gma_xsort_open(&v, sizeof(gmi_pt), c->in->sort_run, pt_cmp, NULL);
    for (size_t i = 0; i < c->in->recs.n && !c->oom; i++) {
        const gmi_rec *a = REC(c, i);
        if (a->device != D->device || a->window != D->window)
            continue;
        int64_t b = (int64_t)a->bytes;
        gmi_pt fr = { a->free_ts, 2 * a->free_ord - 1, -b, a->free_step };
        if (p->group != UINT32_MAX && movable(a) && owner_group(c, a) == p->group)
            fr.ts = a->early_ts, fr.pos = 0;
        int err = 0;
        uint32_t oi;
        if (p->layer != UINT64_MAX && activation_op(c->in, p->ly, a, &oi) &&
            GMA_VEC_AT(&p->ly->key, uint64_t, oi) == p->layer)
            err = pt_add(&v, GMA_VEC_AT(&c->in->ops, gmi_op, oi).end, UINT64_MAX, -b, a->step) ||
                  pt_add(&v, GMA_VEC_AT(&p->ly->back, uint64_t, oi), 0, b, a->step);
        /* a baseline allocation keeps its own time, before the window's
         * events: it counts from the start */
        err = err || pt_add(&v, a->ts, 2 * a->ord, b, a->step) ||
              (a->free_ord != UINT64_MAX && pt_add(&v, fr.ts, fr.pos, fr.delta, fr.step));
        if (err)
            c->oom = 1;
    }
    uint64_t best = 0;
    if (!c->oom && gma_xsort_begin(&v) != 0)
        c->oom = 1;
    int64_t level = 0;
    const gmi_pt *q;
    while (!c->oom && (q = gma_xsort_next(&v))) {
        level += q->delta;
        if (level > 0 && (uint64_t)level > best)
            best = (uint64_t)level;
        if (turns && turn_add(q, level, turns) != 0)
            c->oom = 1;
    }
    if (v.err)
        c->oom = 1;
    gma_xsort_close(&v);
    return best;
}

static void base_build(gmi_ctx *c, gma_ins_dev *D)
{
    if (D->has_base)
        return;
    gmi_plan none = { UINT32_MAX, UINT64_MAX, NULL };
    D->whatif_base = sweep(c, D, &none, NULL);
    D->has_base = 1;
}

static void whatif_build(gmi_ctx *c, gma_ins_dev *D)
{
    gma_vec owners;
    gma_map idx;
    gma_vec_init(&owners, sizeof(gma_ins_owner));
    memset(&idx, 0, sizeof(idx));
    gma_vec gof; /* uint32_t: the group of each owners row */
    gma_vec_init(&gof, sizeof(uint32_t));
    uint64_t p = c->r->dev[D->device].peak_ord;
    int fw_src = gma_framework_source(c->r);
    for (size_t i = 0; i < c->in->recs.n && !c->oom; i++) {
        const gmi_rec *a = REC(c, i);
        if (!live_at(a, D->device, p) || !movable(a))
            continue;
        gma_ins_class_id k = classify(a, D->step, fw_src);
        if (k != GMA_IC_TEMP && k != GMA_IC_STEP)
            continue;
        uint32_t g = owner_group(c, a);
        size_t before = owners.len;
        if (!owner_add(c, &owners, &idx, g, a->bytes))
            break;
        if (owners.len > before) {
            uint32_t *s = gma_vec_push(&gof);
            if (!s)
                c->oom = 1;
            else
                *s = g;
        }
    }
    /* the largest candidates by bytes at the peak, each replayed; the one
     * that lowers the peak most is kept (ties: the larger) */
    for (size_t i = 0; i < owners.len && i < gof.len; i++)
        GMA_VEC_AT(&owners, gma_ins_owner, i).grew = GMA_VEC_AT(&gof, uint32_t, i); /* its group, kept through the sort */
    if (!c->oom && gma_msort(owners.data, owners.len, sizeof(gma_ins_owner), owner_cmp, (void *)c->res) != 0)
        c->oom = 1;
    if (owners.len && !c->oom)
        base_build(c, D);
    for (size_t i = 0; i < owners.len && i < GMI_WHATIF_TRIES && !c->oom; i++) {
        const gma_ins_owner *o = &GMA_VEC_AT(&owners, gma_ins_owner, i);
        gmi_plan plan = { (uint32_t)o->grew, UINT64_MAX, NULL };
        uint64_t peak = sweep(c, D, &plan, NULL);
        if (D->has_whatif && peak >= D->whatif_peak)
            continue;
        D->has_whatif = 1;
        D->whatif_owner = o->name;
        D->whatif_moved_at_peak = o->bytes;
        D->whatif_peak = peak;
        D->whatif_count = 0;
        for (size_t j = 0; j < c->in->recs.n; j++) {
            const gmi_rec *a = REC(c, j);
            D->whatif_count += a->device == D->device && a->window == D->window && movable(a) &&
                               owner_group(c, a) == (uint32_t)o->grew;
        }
    }
    gma_vec_free(&owners);
    gma_vec_free(&gof);
    gma_map_free(&idx);
}

/* ---- 5b. what-if: one layer's activations recomputed ---------------------------- */

/* Each op's layer key, and each op's backward begin: the earliest, over
 * its activations, of the begin of the op holding the free (when that op
 * began after the layer ended), else of the free itself. */
static void layers_build(gmi_ctx *c, gmi_layers *ly)
{
    const gma_vec *ops = &c->in->ops;
    gma_map count;
    memset(&count, 0, sizeof(count));
    if (gma_vec_reserve(&ly->key, ops->len) != 0 || gma_vec_reserve(&ly->back, ops->len) != 0) {
        c->oom = 1;
        return;
    }
    ly->key.len = ly->back.len = ops->len;
    for (size_t i = 0; i < ops->len && !c->oom; i++) {
        const gmi_op *o = &GMA_VEC_AT(ops, gmi_op, i);
        uint64_t *k = &GMA_VEC_AT(&ly->key, uint64_t, i);
        GMA_VEC_AT(&ly->back, uint64_t, i) = UINT64_MAX;
        *k = UINT64_MAX;
        if (!o->name)
            continue;
        gmi_rec fake;
        memset(&fake, 0, sizeof(fake));
        fake.opname = fake.owner = o->name;
        uint64_t g = owner_group(c, &fake), ck = (g << 40) | (o->step & ((1ull << 40) - 1));
        uint32_t n = 0;
        gma_map_get(&count, ck, &n);
        if (gma_map_put(&count, ck, n + 1) != 0)
            c->oom = 1;
        *k = (g << 32) | n;
    }
    gma_map_free(&count);
    for (size_t i = 0; i < c->in->recs.n && !c->oom; i++) {
        const gmi_rec *a = REC(c, i);
        uint32_t oi;
        if (!activation_op(c->in, ly, a, &oi))
            continue;
        const gmi_op *L = &GMA_VEC_AT(ops, gmi_op, oi);
        uint64_t t = a->early_ts > L->end && a->early_ts <= a->free_ts ? a->early_ts : a->free_ts;
        uint64_t *b = &GMA_VEC_AT(&ly->back, uint64_t, oi);
        if (t < *b)
            *b = t;
    }
}

typedef struct gmi_cand {
    uint64_t layer, bytes;
    uint32_t op;        /* the instance live at the peak (in->ops index) */
} gmi_cand;

static int cand_cmp(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const gmi_cand *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return a->op < b->op ? -1 : a->op > b->op;
}

/* The layers whose activations hold the most step-scoped bytes at the peak. */
static void recompute_cands(gmi_ctx *c, const gma_ins_dev *D, const gmi_layers *ly, gma_vec *cands)
{
    uint64_t p = c->r->dev[D->device].peak_ord;
    int fw_src = gma_framework_source(c->r);
    gma_map idx;
    memset(&idx, 0, sizeof(idx));
    for (size_t i = 0; i < c->in->recs.n && !c->oom; i++) {
        const gmi_rec *a = REC(c, i);
        uint32_t oi, k;
        if (!live_at(a, D->device, p) || classify(a, D->step, fw_src) != GMA_IC_STEP || !activation_op(c->in, ly, a, &oi) ||
            GMA_VEC_AT(&ly->key, uint64_t, oi) == UINT64_MAX)
            continue;
        /* with categories, what they call activations: not a gradient made
         * in backward and freed in the step */
        if (c->res->categories && category_of(c, a, fw_src) != GMA_CAT_ACTIVATION)
            continue;
        uint64_t key = GMA_VEC_AT(&ly->key, uint64_t, oi);
        if (!gma_map_get(&idx, key, &k)) {
            gmi_cand *x = gma_vec_push(cands);
            if (!x || gma_map_put(&idx, key, (uint32_t)(cands->len - 1)) != 0) {
                c->oom = 1;
                break;
            }
            *x = (gmi_cand){ key, 0, oi };
            k = (uint32_t)(cands->len - 1);
        }
        GMA_VEC_AT(cands, gmi_cand, k).bytes += a->bytes;
    }
    gma_map_free(&idx);
    if (!c->oom && gma_msort(cands->data, cands->len, sizeof(gmi_cand), cand_cmp, NULL) != 0)
        c->oom = 1;
}

/* The kept candidate into D: its name and numbers. */
static void recompute_keep(gmi_ctx *c, gma_ins_dev *D, const gmi_layers *ly, const gmi_cand *x, uint64_t peak)
{
    const gmi_op *L = &GMA_VEC_AT(&c->in->ops, gmi_op, x->op);
    D->has_recompute = 1;
    gma_buf_reset(&c->buf);
    gma_range_display(c->r, L->name, c->r->opt.full_names, &c->buf);
    D->rc_layer = gma_strs_add(&c->res->strs, gma_buf_str(&c->buf), strlen(gma_buf_str(&c->buf)));
    if (D->rc_layer == (size_t)-1)
        c->oom = 1;
    D->rc_ordinal = (uint32_t)x->layer + 1;
    D->rc_begin = L->begin;
    D->rc_end = L->end;
    D->rc_back = GMA_VEC_AT(&ly->back, uint64_t, x->op);
    D->rc_at_peak = x->bytes;
    D->rc_peak = peak;
    D->rc_count = D->rc_bytes = D->rc_steps = 0;
    uint64_t last_op = UINT64_MAX;
    for (size_t i = 0; i < c->in->recs.n; i++) {
        const gmi_rec *a = REC(c, i);
        uint32_t oi;
        if (a->device != D->device || a->window != D->window || !activation_op(c->in, ly, a, &oi) ||
            GMA_VEC_AT(&ly->key, uint64_t, oi) != x->layer)
            continue;
        D->rc_count++;
        D->rc_bytes += a->bytes;
        if (oi != last_op) /* allocations in order: an instance's come together */
            D->rc_steps++;
        last_op = oi;
    }
}

static void recompute_build(gmi_ctx *c, gma_ins_dev *D)
{
    gmi_layers ly;
    memset(&ly, 0, sizeof(ly));
    gma_vec_init(&ly.key, sizeof(uint64_t));
    gma_vec_init(&ly.back, sizeof(uint64_t));
    gma_vec_init(&ly.turns, sizeof(gmi_turn));
    gma_vec cands;
    gma_vec_init(&cands, sizeof(gmi_cand));
    if (c->in->ops.len) {
        gmi_plan none = { UINT32_MAX, UINT64_MAX, NULL };
        uint64_t base = sweep(c, D, &none, &ly);
        if (!D->has_base)
            D->whatif_base = base, D->has_base = 1;
        layers_build(c, &ly);
    }
    if (!c->oom && c->in->ops.len)
        recompute_cands(c, D, &ly, &cands);
    for (size_t i = 0; i < cands.len && i < GMI_WHATIF_TRIES && !c->oom; i++) {
        const gmi_cand *x = &GMA_VEC_AT(&cands, gmi_cand, i);
        gmi_plan plan = { UINT32_MAX, x->layer, &ly };
        uint64_t peak = sweep(c, D, &plan, NULL);
        if (!D->has_recompute || peak < D->rc_peak)
            recompute_keep(c, D, &ly, x, peak);
    }
    gma_vec_free(&cands);
    gma_vec_free(&ly.key);
    gma_vec_free(&ly.back);
    gma_vec_free(&ly.turns);
    gma_map_free(&ly.turn_of);
}

/* ---- the whole result ---------------------------------------------------------- */

int gma_insights_categories(const gma_replay *r) { return r->fw && gma_category_known(r); }

/* The kernels merged into their own file, in order, mapped. */
static int kernels_sort(gma_insights *in)
{
    if (in->kdone)
        return in->ksorted.err ? -1 : 0;
    in->kdone = 1;
    if (gma_spill_open(&in->ksorted, sizeof(gmi_kernel), 4096) != 0 || gma_xsort_begin(&in->kernels) != 0)
        return -1;
    const void *k;
    while ((k = gma_xsort_next(&in->kernels))) {
        void *o = gma_spill_push(&in->ksorted);
        if (!o)
            return -1;
        memcpy(o, k, sizeof(gmi_kernel));
    }
    int err = in->kernels.err;
    gma_xsort_close(&in->kernels);
    return err || gma_spill_seal(&in->ksorted) != 0 ? -1 : 0;
}

int gma_insights_build(gma_ins_result *res, const gma_replay *r)
{
    return gma_insights_build_in(res, r, gma_insights_categories(r));
}

int gma_insights_build_in(gma_ins_result *res, const gma_replay *r, int categories)
{
    memset(res, 0, sizeof(*res));
    res->r = r;
    res->categories = categories && gma_insights_categories(r);
    if (res->categories) {
        res->ncls = GMA_CAT_COUNT_;
        res->ic_outside = GMA_CAT_OUTSIDE;
        res->ic_cache = GMA_CAT_CACHE;
        res->cls_names = gma_cat_names;
    } else {
        res->ncls = GMA_IC_COUNT_;
        res->ic_outside = GMA_IC_OUTSIDE;
        res->ic_cache = GMA_IC_RESERVED;
        res->cls_names = gma_ins_class_names;
    }
    const gma_insights *in = gma_insights_of(r);
    if (!in || in->oom)
        return -1;
    gmi_ctx c;
    memset(&c, 0, sizeof(c));
    c.res = res, c.r = r, c.in = in;
    gma_vec_init(&c.groups, sizeof(size_t));
    res->owner_kind = in->modules ? "module" : in->ranges ? "op" : "kernel";
    res->path = r->path;
    if (!gma_trace_warning(r, res->warning, sizeof res->warning))
        res->warning[0] = 0;
    if (gma_strs_add(&res->strs, "", 0) == (size_t)-1)
        return -1;
    /* the pass is over: the records mapped, and the kernels by thread,
     * stream and start, for the idle spans (once: --diff builds twice) */
    gma_insights *w = gma_insights_of(r);
    if (gma_spill_seal(&w->recs) != 0 || kernels_sort(w) != 0)
        c.oom = 1;
    const gmi_kernel *K = w->ksorted.map ? (const gmi_kernel *)w->ksorted.map : NULL;
    size_t nk = (size_t)w->ksorted.n;
    for (unsigned d = 0; d < GMA_MAX_DEVICES && !c.oom; d++) {
        const gma_dev *G = &r->dev[d];
        if (!G->present || !G->has_peak || !gma_dev_selected(r, d))
            continue;
        gma_ins_dev *D = &res->dev[res->ndev++];
        D->device = d;
        D->peak = G->peak;
        D->ts = G->peak_ts;
        D->peak_ns = gma_rel(r, G->peak_ts);
        D->step = G->peak_step;
        D->window = G->peak_window;
        D->unordered = r->unordered_mem;
        D->not_kept = in->dropped_recs;
        classes_build(&c, D);
        growth_build(&c, D);
        waste_build(&c, D, K, nk);
        whatif_build(&c, D);
        recompute_build(&c, D);
        D->rc_begin_ns = gma_rel(r, D->rc_begin);
        D->rc_end_ns = gma_rel(r, D->rc_end);
        D->rc_back_ns = gma_rel(r, D->rc_back);
        for (size_t i = 0; i < in->recs.n && D->has_fw; i++) {
            const gmi_rec *a = REC(&c, i);
            if (a->device == d && a->window == D->window && a->bytes > D->largest_request)
                D->largest_request = a->bytes;
        }
    }
    gma_vec_free(&c.groups);
    gma_map_free(&c.owner_of);
    gma_map_free(&c.name_of);
    gma_buf_free(&c.buf);
    if (c.oom) {
        gma_insights_result_free(res);
        return -1;
    }
    return 0;
}

void gma_insights_result_free(gma_ins_result *res)
{
    for (size_t i = 0; i < res->ndev; i++) {
        gma_ins_dev *D = &res->dev[i];
        for (unsigned k = 0; k < GMA_INS_CLASSES; k++)
            gma_vec_free(&D->cls[k].owners);
        gma_vec_free(&D->growth);
        gma_vec_free(&D->idle_owners);
    }
    gma_strs_free(&res->strs);
    res->ndev = 0;
}
