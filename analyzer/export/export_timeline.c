/*
 * --timeline OUT.html|OUT.svg: the memory timeline. During the replay it
 * collects one band per device allocation (timeline/tl_bands.c), the
 * driver's used memory and the step boundaries; at the end it builds the
 * model (timeline/tl_model.c: lanes, owners, colours, merging) and writes
 * the interactive page (timeline/tl_html.c) or the static picture
 * (timeline/tl_svg.c). Several traces: one lane per rank and device;
 * --diff: the two traces' lanes on one axis of steps.
 *
 * With the PyTorch bridge (the replay's blocks layer), the bands are the
 * allocator's blocks (tensors); the bridge's segment events and CUDA's own
 * allocations are collected as two more band sets, from which the model
 * makes the reserved-segment and outside-the-allocator layers. Each block
 * also keeps what the page names it by: its entry's ordinal (its category,
 * category.h, once the replay has finished), the innermost module range
 * and op range open on its thread (the timeline follows the range stack
 * itself: one small record per open range), and its BLOCK record's source
 * line. The page then colours by category (the default, as
 * torch.profiler's memory timeline), module, op, line or kernel.
 *
 * The driver samples and the analyzer's live level go to a fixed number
 * of time buckets (max per bucket); when the trace outgrows them,
 * neighbouring buckets merge and the bucket width doubles.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "category.h"
#include "consumer.h"
#include "export.h"
#include "outfile.h"
#include "rhist.h"
#include "spill.h"
#include "names.h"
#include "tracestr.h"
#include "timeline/tl_bands.h"
#include "timeline/tl_model.h"
#include "timeline/tl_write.h"

/* The consumer's callbacks (consumer.h), in the table below. */
static void gma_timeline_live(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t live);
static void gma_timeline_driver(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t used);
static void gma_timeline_step(gma_replay *r, uint64_t ts, uint64_t step);
static void gma_timeline_alloc(gma_replay *r, const gma_entry *e, int pending, uint64_t key);
static void gma_timeline_freed(gma_replay *r, const gma_entry *e, uint64_t ts);
static void gma_timeline_segment(gma_replay *r, const gmt_block *k);
static void gma_timeline_cuda(gma_replay *r, const gmt_mem *m, int is_alloc);
static void gma_timeline_settle(gma_replay *r, uint64_t key, uint32_t kname);
static void gma_timeline_free(gma_replay *r);

#define TL_B 2048      /* buckets */
#define TL_DEV 8       /* devices drawn */
#define TL_STEPS 4096  /* step boundaries kept */

typedef struct tlb {
    uint64_t max;
    unsigned char has;
} tlb;

/* What the page names a block by beyond its kernel and range (per band,
 * by its seq). mod: the module range's name id, 0 none; bwd: it is a
 * backward one (kind 3); op: the op range's name id, 0 none; frame: the
 * BLOCK record's "FILE:LINE FUNCTION" id, 0 none. */
typedef struct tl_ext {
    uint64_t ord;
    uint32_t mod, op, frame;
    uint16_t flags;
    uint8_t source, bwd;
} tl_ext;

/* An open range (bridge traces): enough to walk a thread's stack up. */
typedef struct tl_rng {
    uint64_t parent;
    uint32_t name;
    uint8_t kind, is_op;
} tl_rng;

#define TL_CHAIN_MAX 64 /* ranges walked up from an allocation's innermost */
#define TL_CLOSED 65536u /* closed ranges kept for late blocks (a power of two; rhist.h) */

typedef struct gma_timeline {
    char *path;
    int html;
    int started;
    uint64_t t0, width;  /* ns per bucket */
    size_t nb;           /* buckets in use */
    tlb live[TL_DEV][TL_B];
    tlb drv[TL_DEV][TL_B];
    unsigned char used[TL_DEV], drv_used[TL_DEV];
    uint64_t steps_ts[TL_STEPS], steps_no[TL_STEPS];
    size_t nsteps, steps_dropped;
    gtb_set bands;
    gtb_set segs, cuda;  /* with the blocks layer: segments, CUDA's allocations */
    gma_map kcache, rcache; /* string id -> doc string, while building */
    /* bridge traces: per band its tl_ext; the open and recently closed ranges (id -> index in
     * rngs, a free list of indices); the last BLOCK ALLOC's frame */
    tl_ext *ext;         /* a gma_big array (spill.h): one per band */
    size_t next, ext_cap;
    gma_vec rngs, rng_free;
    gma_rhist rng_of;
    int blk_valid;
    uint64_t blk_dev, blk_addr;
    uint32_t blk_frame;
    int ext_err;
    char summary[600];   /* the line gmem-analyze prints for the file */
} gma_timeline;

static int is_html(const char *path)
{
    size_t n = strlen(path);
    return n >= 5 && strcasecmp(path + n - 5, ".html") == 0;
}

/* Fails now rather than after a long analysis, leaving path as it is. */
static int check_writable(const char *path) { return gma_out_probe(path); }

static void range_chain(const gma_timeline *t, uint64_t id, tl_ext *x);

/* A new band of the bridge's blocks: what the page names it by. */
static void ext_add(gma_replay *r, const gma_entry *e, const gmt_mem *m, size_t n_before)
{
    gma_timeline *t = r->timeline;
    int frame_ok = t->blk_valid && t->blk_dev == m->device && t->blk_addr == m->address;
    t->blk_valid = 0;
    if (!r->fw || t->bands.n == n_before)
        return;
    if (t->next == t->ext_cap) {
        size_t cap = t->ext_cap ? t->ext_cap * 2 : 4096;
        tl_ext *v = gma_big_realloc(t->ext, t->ext_cap * sizeof(*v), cap * sizeof(*v));
        if (!v) {
            t->ext_err = 1;
            return;
        }
        t->ext = v, t->ext_cap = cap;
    }
    tl_ext *x = &t->ext[t->next++];
    memset(x, 0, sizeof(*x));
    x->ord = e->ord;
    x->flags = e->flags;
    x->source = e->source;
    x->frame = frame_ok ? t->blk_frame : 0;
    range_chain(t, m->range, x);
}

/* Adapters from the replay's events to what the timeline draws. */
static void tl_alloc(gma_replay *r, const gma_entry *e, const gmt_mem *m, int pending, uint64_t key)
{
    size_t n = r->timeline->bands.n;
    if (gma_dev_selected(r, m->device))
        gma_timeline_alloc(r, e, pending, key);
    ext_add(r, e, m, n);
}

static void tl_step(gma_replay *r, const gmt_step *s) { gma_timeline_step(r, s->ts, s->step); }

static void tl_block(gma_replay *r, const gmt_block *b)
{
    if (!r->fw)
        return;
    if (b->action == GMT_BLK_ALLOC) { /* the allocation that follows is this block */
        gma_timeline *t = r->timeline;
        t->blk_valid = 1;
        t->blk_dev = b->device;
        t->blk_addr = b->address;
        t->blk_frame = b->frame < GMA_MAX_STRING_ID ? (uint32_t)b->frame : 0;
    }
    if (gma_dev_selected(r, b->device))
        gma_timeline_segment(r, b);
}

static void tl_range(gma_replay *r, const gmt_range *g)
{
    gma_timeline *t = r->timeline;
    if (!r->fw || !g->id)
        return;
    uint32_t i;
    if (!gma_rhist_get(&t->rng_of, g->id, &i)) { /* else a reused id: the new range takes its record */
        if (t->rng_free.len) {
            i = GMA_VEC_AT(&t->rng_free, uint32_t, t->rng_free.len - 1);
            t->rng_free.len--;
        } else if (gma_vec_push(&t->rngs)) {
            i = (uint32_t)(t->rngs.len - 1);
        } else {
            t->ext_err = 1;
            return;
        }
    }
    size_t len = 0;
    const char *nm = g->name < GMA_MAX_STRING_ID ? gma_str(r, (uint32_t)g->name, &len) : NULL;
    tl_rng *x = &GMA_VEC_AT(&t->rngs, tl_rng, i);
    x->parent = g->parent;
    x->name = g->name < GMA_MAX_STRING_ID ? (uint32_t)g->name : 0;
    x->kind = (uint8_t)g->kind;
    x->is_op = nm && (gma_cat_range_class(nm, len, g->kind) & GMA_RC_OP) != 0;
    if (gma_rhist_put(&t->rng_of, g->id, i) != 0)
        t->ext_err = 1;
}

/* A closed range keeps its record for the next TL_CLOSED closes: the
 * bridge's blocks reach the trace after the op that made them has ended
 * and still name its range. */
static void tl_range_end(gma_replay *r, const gmt_range *g)
{
    gma_timeline *t = r->timeline;
    uint32_t i, *f;
    if (!r->fw || !gma_rhist_closed(&t->rng_of, g->id, &i))
        return;
    if (!(f = gma_vec_push(&t->rng_free)))
        t->ext_err = 1;
    else
        *f = i;
}

/* The innermost module and op ranges open from range id up. */
static void range_chain(const gma_timeline *t, uint64_t id, tl_ext *x)
{
    uint32_t i;
    for (unsigned n = 0; id && n < TL_CHAIN_MAX && gma_rhist_get(&t->rng_of, id, &i); n++) {
        const tl_rng *g = &GMA_VEC_AT(&t->rngs, tl_rng, i);
        if (!x->mod && (g->kind == GMT_RANGE_MODULE || g->kind == GMT_RANGE_MODULE_BWD)) {
            x->mod = g->name;
            x->bwd = g->kind == GMT_RANGE_MODULE_BWD;
        }
        if (!x->op && g->is_op)
            x->op = g->name;
        if (x->mod && x->op)
            break;
        id = g->parent;
    }
}

/* The replay's events the timeline collects (consumer.h); it draws tags
 * from their rows. */
static const gma_consumer timeline_consumer = {
    .needs = GMA_NEED_TAG_ROWS,
    .step = tl_step,
    .sample = gma_timeline_driver,
    .block = tl_block,
    .range = tl_range,
    .range_end = tl_range_end,
    .cuda = gma_timeline_cuda,
    .live = gma_timeline_live,
    .alloc = tl_alloc,
    .free = gma_timeline_freed,
    .settle = gma_timeline_settle,
    .release = gma_timeline_free,
};

int gma_timeline_collect(gma_replay *r)
{
    gma_timeline *t = calloc(1, sizeof(*t));
    if (!t)
        return -1;
    t->width = 1000;
    gtb_init(&t->bands, 0);
    gtb_init(&t->segs, 0);
    gtb_init(&t->cuda, 0);
    gma_vec_init(&t->rngs, sizeof(tl_rng));
    gma_vec_init(&t->rng_free, sizeof(uint32_t));
    r->timeline = t;
    if (gma_rhist_init(&t->rng_of, TL_CLOSED) != 0 || gma_replay_consumer_add(r, &timeline_consumer) != 0) {
        gma_timeline_free(r);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

int gma_timeline_open(gma_replay *r, const char *path)
{
    if (check_writable(path) != 0)
        return -1;
    if (gma_timeline_collect(r) != 0)
        return -1;
    gma_timeline *t = r->timeline;
    t->path = strdup(path);
    if (!t->path) {
        gma_timeline_free(r);
        errno = ENOMEM;
        return -1;
    }
    t->html = is_html(path);
    return 0;
}

static void rescale(gma_timeline *t)
{
    for (int d = 0; d < TL_DEV; d++) {
        tlb *arr[2] = { t->live[d], t->drv[d] };
        for (int k = 0; k < 2; k++) {
            tlb *x = arr[k];
            for (size_t i = 0; i < TL_B / 2; i++) {
                tlb m = x[2 * i];
                const tlb *b = &x[2 * i + 1];
                if (b->has && (!m.has || b->max > m.max))
                    m = *b;
                x[i] = m;
            }
            memset(&x[TL_B / 2], 0, sizeof(tlb) * (TL_B / 2));
        }
    }
    t->width *= 2;
    t->nb = (t->nb + 1) / 2;
}

static void bucket_add(gma_timeline *t, tlb *series, uint64_t ts, uint64_t v)
{
    if (!t->started) {
        t->started = 1;
        t->t0 = ts;
    }
    uint64_t off = ts > t->t0 ? ts - t->t0 : 0;
    while (off / t->width >= TL_B)
        rescale(t);
    size_t i = (size_t)(off / t->width);
    if (i + 1 > t->nb)
        t->nb = i + 1;
    tlb *b = &series[i];
    if (!b->has || v > b->max)
        b->max = v;
    b->has = 1;
}

static void gma_timeline_live(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t live)
{
    gma_timeline *t = r->timeline;
    if (dev >= TL_DEV)
        return;
    t->used[dev] = 1;
    bucket_add(t, t->live[dev], ts, live);
}

static void gma_timeline_driver(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t used)
{
    gma_timeline *t = r->timeline;
    if (dev >= TL_DEV)
        return;
    t->drv_used[dev] = 1;
    bucket_add(t, t->drv[dev], ts, used);
}

static void gma_timeline_step(gma_replay *r, uint64_t ts, uint64_t step)
{
    gma_timeline *t = r->timeline;
    if (t->nsteps >= TL_STEPS) {
        t->steps_dropped++;
        return;
    }
    t->steps_ts[t->nsteps] = ts;
    t->steps_no[t->nsteps] = step;
    t->nsteps++;
}

/* A device allocation (its entry just filled; pending: its kernel comes
 * with gma_timeline_settle(key)), its free, and a kernel wait settled. */
static void gma_timeline_alloc(gma_replay *r, const gma_entry *e, int pending, uint64_t key)
{
    gma_timeline *t = r->timeline;
    if (e->device >= TL_DEV)
        return;
    gtb_band b;
    memset(&b, 0, sizeof(b));
    b.addr = e->addr;
    b.bytes = e->bytes;
    b.t0 = e->ts;
    b.step = e->step;
    b.kname = e->kname;
    b.rname = e->rname;
    b.stream = (uint32_t)e->stream;
    b.device = e->device;
    b.layer = 0; /* the allocations CUPTI saw; a second allocator level is another layer */
    gtb_alloc(&t->bands, &b, (e->flags & GMA_E_BASELINE) != 0, pending, key);
}

static void gma_timeline_freed(gma_replay *r, const gma_entry *e, uint64_t ts)
{
    gtb_release(&r->timeline->bands, e->device, e->addr, ts);
}

static gtb_band ctx_band(uint64_t device, uint64_t addr, uint64_t bytes, uint64_t ts, uint64_t step, uint8_t layer)
{
    gtb_band b;
    memset(&b, 0, sizeof(b));
    b.addr = addr;
    b.bytes = bytes;
    b.t0 = ts;
    b.step = step;
    b.device = (uint8_t)device;
    b.layer = layer;
    return b;
}

/* With the blocks layer (r->fw): a BLOCK record (its segment events make
 * the reserved-segment layer) and a CUDA allocation or free, which the
 * replay does not take as an allocation then. */
static void gma_timeline_segment(gma_replay *r, const gmt_block *k)
{
    gma_timeline *t = r->timeline;
    if (k->device >= TL_DEV)
        return;
    gtb_band b = ctx_band(k->device, k->address, k->bytes, k->ts, k->step, 1);
    switch (k->action) {
    case GMT_BLK_SEGMENT_ALLOC:
    case GMT_BLK_SEGMENT_MAP: /* expandable segments: each mapped range a band */
        gtb_alloc(&t->segs, &b, (k->flags & GMT_BLKF_BASELINE) != 0, 0, 0);
        break;
    case GMT_BLK_SEGMENT_FREE:
        gtb_release(&t->segs, (unsigned)k->device, k->address, k->ts);
        break;
    case GMT_BLK_SEGMENT_UNMAP: /* may cover part of a mapped range, or several */
        gtb_release_range(&t->segs, (unsigned)k->device, k->address, k->bytes, k->ts);
        break;
    default:
        break;
    }
}

static void gma_timeline_cuda(gma_replay *r, const gmt_mem *m, int is_alloc)
{
    gma_timeline *t = r->timeline;
    if (m->device >= TL_DEV)
        return;
    if (!is_alloc) {
        gtb_release(&t->cuda, (unsigned)m->device, m->address, m->ts);
        return;
    }
    /* device memory only, as the layer module counts it */
    if (m->kind != GMT_MEMKIND_DEVICE && m->kind != GMT_MEMKIND_DEVICE_STATIC && m->kind != GMT_MEMKIND_MANAGED &&
        m->kind != GMT_MEMKIND_ARRAY)
        return;
    gtb_band b = ctx_band(m->device, m->address, m->bytes, m->ts, m->step, 2);
    b.source = (uint8_t)(m->source < GMT_SRC_COUNT_ ? m->source : 0);
    gtb_alloc(&t->cuda, &b, (m->flags & GMT_MEMF_BASELINE) != 0, 0, 0);
}

static void gma_timeline_settle(gma_replay *r, uint64_t key, uint32_t kname)
{
    gtb_settle(&r->timeline->bands, key, kname);
}

static void gma_timeline_free(gma_replay *r)
{
    gma_timeline *t = r->timeline;
    if (!t)
        return;
    gtb_free(&t->bands);
    gtb_free(&t->segs);
    gtb_free(&t->cuda);
    gma_map_free(&t->kcache);
    gma_map_free(&t->rcache);
    gma_big_free(t->ext);
    gma_vec_free(&t->rngs);
    gma_vec_free(&t->rng_free);
    gma_rhist_free(&t->rng_of);
    free(t->path);
    free(t);
    r->timeline = NULL;
    gma_replay_consumer_remove(r, &timeline_consumer);
}

/* ---- the model of one replay ------------------------------------------------ */

static const char *owner_kind(gma_by by)
{
    switch (by) {
    case GMA_BY_RANGE: return "range";
    case GMA_BY_STEP: return "step";
    case GMA_BY_STREAM: return "stream";
    default: return "kernel";
    }
}

/* A kernel (is_range 0) or range name as the report shows it, once per id. */
static uint32_t name_str(gtm_doc *d, gma_replay *r, gma_map *cache, uint32_t id, int is_range)
{
    uint32_t v;
    if (gma_map_get(cache, id, &v))
        return v;
    size_t len = 0;
    const char *raw = is_range || id == GMA_NAME_UNATTR || id == GMA_NAME_BASELINE ? NULL : gma_str(r, id, &len);
    gma_buf b = { 0 };
    if (is_range)
        gma_range_display(r, id, r->opt.full_labels, &b);
    else if (len && !r->opt.full_labels && d->raw_kernels && !memchr(raw, 0, len))
        gma_buf_putn(&b, raw, len); /* whole: shown by its label (gtm_labels) */
    else
        gma_kernel_display(r, id, r->opt.full_labels, &b);
    v = gtm_str(d, gma_buf_str(&b));
    gma_buf_free(&b);
    if (len && !is_range && !r->opt.full_labels && d->raw_kernels) {
        uint32_t *k = gma_vec_push(&d->kernels);
        if (!k)
            d->err = 1;
        else
            *k = v;
    }
    if (gma_map_put(cache, id, v) != 0)
        d->err = 1;
    return v;
}

/* A module range's name as --by module shows it: "(backward)" for autograd's. */
static uint32_t module_str(gtm_doc *d, gma_replay *r, gma_map *cache, uint32_t name, int bwd)
{
    uint32_t v, key = name << 1 | (uint32_t)bwd;
    if (!name)
        return gtm_str(d, "(no module)");
    if (gma_map_get(cache, key, &v))
        return v;
    size_t len = 0;
    const char *s = gma_str(r, name, &len);
    gma_buf b = { 0 };
    gma_buf_putn(&b, s, len);
    if (bwd)
        gma_buf_puts(&b, " (backward)");
    v = gtm_str(d, gma_buf_str(&b));
    gma_buf_free(&b);
    if (gma_map_put(cache, key, v) != 0)
        d->err = 1;
    return v;
}

/* A string id of the trace as written (a source line), once per id. */
static uint32_t raw_str(gtm_doc *d, gma_replay *r, gma_map *cache, uint32_t id)
{
    uint32_t v;
    if (!id)
        return 0;
    if (gma_map_get(cache, id, &v))
        return v;
    size_t len = 0;
    const char *s = gma_str(r, id, &len);
    gma_buf b = { 0 };
    gma_buf_putn(&b, s, len);
    v = gtm_str(d, gma_buf_str(&b));
    gma_buf_free(&b);
    if (gma_map_put(cache, id, v) != 0)
        d->err = 1;
    return v;
}

/* The bridge's columns of a lane: each band's category (once the replay
 * has finished: category.h; none where the replay collected none, as for
 * several ranks), module, op and source line. */
static int lane_fw_names(gtm_doc *d, gma_replay *r, gtm_lane *l)
{
    gma_timeline *t = r->timeline;
    if (!r->fw || t->ext_err || t->next != t->bands.n)
        return 0;
    int cats = gma_category_known(r);
    if (gtm_lane_fw_cols(l, cats) != 0)
        return -1;
    uint32_t cat[GMA_CAT_COUNT_ + 1];
    for (int c = 0; c < GMA_CAT_COUNT_; c++)
        cat[c] = gtm_str(d, gma_cat_names[c]);
    cat[GMA_CAT_COUNT_] = gtm_str(d, "(no category)");
    uint32_t no_op = gtm_str(d, "(no op)");
    gma_map mcache = { 0 }, ocache = { 0 }, fcache = { 0 };
    for (size_t i = 0; i < l->n; i++, gma_big_tick()) {
        const tl_ext *x = &t->ext[l->b[i].seq];
        gma_entry e;
        memset(&e, 0, sizeof(e));
        e.ord = x->ord;
        e.flags = x->flags;
        e.source = x->source;
        e.device = l->b[i].device;
        e.addr = l->b[i].addr;
        gma_cat c = gma_category_of(r, &e);
        if (cats)
            l->cat[i] = cat[c < GMA_CAT_COUNT_ ? c : GMA_CAT_COUNT_];
        l->mod[i] = module_str(d, r, &mcache, x->mod, x->bwd);
        l->op[i] = x->op ? name_str(d, r, &ocache, x->op, 1) : no_op;
        l->ln[i] = raw_str(d, r, &fcache, x->frame);
    }
    gma_map_free(&mcache);
    gma_map_free(&ocache);
    gma_map_free(&fcache);
    return d->err ? -1 : 0;
}

static int lane_names(gtm_doc *d, gma_replay *r, gtm_lane *l)
{
    gma_timeline *t = r->timeline;
    char buf[64];
    if (lane_fw_names(d, r, l) != 0)
        return -1;
    for (size_t i = 0; i < l->n; i++, gma_big_tick()) {
        const gtb_band *b = &l->b[i];
        l->kn[i] = name_str(d, r, &t->kcache, b->kname, 0);
        l->rn[i] = name_str(d, r, &t->rcache, b->rname, 1);
        switch (r->opt.by) {
        case GMA_BY_RANGE: l->own[i] = l->rn[i]; break;
        case GMA_BY_STEP:
            snprintf(buf, sizeof(buf), "step %llu", (unsigned long long)b->step);
            l->own[i] = gtm_str(d, buf);
            break;
        case GMA_BY_STREAM:
            snprintf(buf, sizeof(buf), "stream %u", b->stream);
            l->own[i] = gtm_str(d, buf);
            break;
        default: l->own[i] = d->nfixed && l->cat ? l->cat[i] : l->kn[i]; break;
        }
    }
    return 0;
}

static int push_i64(gma_vec *v, int64_t x)
{
    int64_t *p = gma_vec_push(v);
    if (!p)
        return -1;
    *p = x;
    return 0;
}

static int push_mark(gma_vec *v, int64_t t, int64_t t_end, uint64_t no, uint32_t name)
{
    gtm_mark *m = gma_vec_push(v);
    if (!m)
        return -1;
    *m = (gtm_mark){ t, t_end, no, name };
    return 0;
}

/* Steps, windows, tags and the driver's samples of device dev. */
static int lane_marks(gtm_doc *d, gma_replay *r, gtm_lane *l, unsigned dev)
{
    const gma_timeline *t = r->timeline;
    int err = 0;
    for (size_t i = 0; i < t->nsteps; i++)
        err |= push_mark(&l->steps, gma_rel(r, t->steps_ts[i]), 0, t->steps_no[i], 0);
    for (size_t i = 0; i < r->windows.len; i++) {
        const gma_window *w = &GMA_VEC_AT(&r->windows, gma_window, i);
        if (w->implicit || (r->opt.window >= 0 && w->id != (uint64_t)r->opt.window))
            continue;
        err |= push_mark(&l->windows, gma_rel(r, w->begin_ts), gma_rel(r, w->closed ? w->end_ts : r->last_ts), w->id, 0);
    }
    for (size_t i = 0; i < r->tags.len; i++) {
        const gma_tagrow *g = &GMA_VEC_AT(&r->tags, gma_tagrow, i);
        size_t len;
        const char *nm = gma_str(r, g->name, &len);
        char buf[80];
        snprintf(buf, sizeof(buf), "%.*s", (int)(len > 60 ? 60 : len), nm);
        err |= push_mark(&l->tags, gma_rel(r, g->ts), 0, g->step, gtm_str(d, buf));
    }
    if (dev < TL_DEV && t->drv_used[dev]) {
        for (size_t i = 0; i < t->nb; i++) {
            if (!t->drv[dev][i].has)
                continue;
            uint64_t *v = gma_vec_push(&l->drv_v);
            if (!v || push_i64(&l->drv_t, gma_rel(r, t->t0 + (uint64_t)i * t->width)) != 0)
                return -1;
            *v = t->drv[dev][i].max;
        }
    }
    return err ? -1 : 0;
}

static int dur_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The steady steps of the windows within [lo, hi]: from the first to the
 * last step in a window whose length is at most 3 times the median (setup,
 * evaluation and teardown steps are longer). 0 when fewer than 3 steps. */
static int typical_steps(const gma_replay *r, int64_t lo, int64_t hi, int64_t *a, int64_t *b)
{
    size_t n = 0;
    uint64_t *dur = malloc((r->steps.len ? r->steps.len : 1) * sizeof(*dur));
    if (!dur)
        return 0;
    for (size_t i = 0; i < r->steps.len; i++) {
        const gma_steprow *s = &GMA_VEC_AT(&r->steps, gma_steprow, i);
        if (s->has_start && s->in_window && s->end_ts > s->start_ts && gma_rel(r, s->start_ts) >= lo &&
            gma_rel(r, s->end_ts) <= hi)
            dur[n++] = s->end_ts - s->start_ts;
    }
    int have = 0;
    if (n >= 3) {
        qsort(dur, n, sizeof(*dur), dur_cmp);
        uint64_t lim = dur[n / 2] * 3;
        for (size_t i = 0; i < r->steps.len; i++) {
            const gma_steprow *s = &GMA_VEC_AT(&r->steps, gma_steprow, i);
            if (!s->has_start || !s->in_window || s->end_ts <= s->start_ts || s->end_ts - s->start_ts > lim ||
                gma_rel(r, s->start_ts) < lo || gma_rel(r, s->end_ts) > hi)
                continue;
            if (!have || gma_rel(r, s->start_ts) < *a)
                *a = gma_rel(r, s->start_ts);
            if (!have || gma_rel(r, s->end_ts) > *b)
                *b = gma_rel(r, s->end_ts);
            have = 1;
        }
    }
    free(dur);
    return have;
}

/* The opening view: the windows (the peak's alone when there are more than
 * 3), narrowed to their steady steps; else every band; the peak always in it. */
static void lane_view(gtm_lane *l, const gma_replay *r)
{
    int have = 0;
    int64_t a = 0, b = 0;
    for (size_t i = 0; i < l->windows.len; i++) {
        const gtm_mark *w = &GMA_VEC_AT(&l->windows, gtm_mark, i);
        if (l->windows.len > 3 && l->has_peak && (l->peak_t < w->t || l->peak_t > w->t_end))
            continue;
        if (!have || w->t < a)
            a = w->t;
        if (!have || w->t_end > b)
            b = w->t_end;
        have = 1;
    }
    int64_t sa = 0, sb = 0;
    if (typical_steps(r, have ? a : INT64_MIN, have ? b : INT64_MAX, &sa, &sb) && sb > sa) {
        a = sa;
        b = sb;
        have = 1;
    }
    l->t_min = l->n ? (int64_t)l->b[0].t0 : 0;
    for (int c = 0; c < GTM_CTX_N; c++) /* the layers' first bands (sorted by t0) */
        if (l->ctx[c].n && (!l->n || (int64_t)l->ctx[c].b[0].t0 < l->t_min))
            l->t_min = (int64_t)l->ctx[c].b[0].t0;
    l->t_max = gma_rel(r, r->last_ts);
    if (l->t_max < l->t_min)
        l->t_max = l->t_min;
    if (!have || b <= a) {
        a = l->t_min;
        b = l->t_max;
    }
    if (l->has_peak && l->peak_t < a)
        a = l->peak_t;
    if (l->has_peak && l->peak_t > b)
        b = l->peak_t;
    if (b <= a)
        b = a + 1000;
    int64_t pad = (b - a) / 40;
    l->view0 = a - pad;
    l->view1 = b + pad;
}

/* The PyTorch bridge's layers: tensors (the bands), reserved segments,
 * memory outside the allocator; the analyzer's figures at its peak. */
static int lane_fw(gtm_doc *d, gma_replay *r, gtm_lane *l, unsigned dev)
{
    const gma_timeline *t = r->timeline;
    if (t->segs.err || t->cuda.err || gtm_lane_ctx(l, &t->segs, &t->cuda, dev, r->origin) != 0)
        return -1;
    l->layer_name[0] = gtm_str(d, "tensors (blocks of PyTorch's caching allocator)");
    l->layer_name[1] = gtm_str(d, "reserved segments (PyTorch's caching allocator)");
    l->layer_name[2] = gtm_str(d, "outside PyTorch's allocator (CUDA allocations in none of its segments)");
    l->nlayers = 3;
    for (size_t i = 0; i < l->ctx[GTM_CTX_OUT].n; i++) /* the band's label: its CUDA API */
        l->ctx[GTM_CTX_OUT].b[i].kname = gtm_str(d, gma_source_label(l->ctx[GTM_CTX_OUT].b[i].source));
    if (dev < GMA_LAYER_DEVICES) {
        const gma_layer_dev *L = &r->layer.dev[dev];
        l->fw_reserved = L->at_peak_reserved;
        l->fw_outside = gma_layer_outside(L->at_peak_cuda, L->at_peak_reserved);
    }
    return 0;
}

/* One lane per device with allocations; title_prefix "" for one trace. */
int gma_timeline_model_add(struct gtm_doc *d, gma_replay *r, const char *title_prefix)
{
    gma_timeline *t = r->timeline;
    char title[200], warn[400];
    gma_mode mode = gma_allocator_mode(r);
    int seg = strcmp(mode.mode, "caching-allocator segments") == 0;
    uint32_t wstr = gma_trace_warning(r, warn, sizeof(warn)) ? gtm_str(d, warn) : 0;
    for (unsigned dev = 0; dev < TL_DEV; dev++) {
        int any = 0;
        for (size_t i = 0; i < t->bands.n && !any; i++, gma_big_tick())
            any = t->bands.b[i].device == dev;
        for (size_t i = 0; i < t->segs.n && !any; i++)
            any = t->segs.b[i].device == dev;
        if (!any && !t->used[dev])
            continue;
        gtm_lane *l = gtm_lane_new(d);
        if (!l || gtm_lane_bands(l, &t->bands, dev, r->origin) != 0)
            return -1;
        snprintf(title, sizeof(title), "%s%sdev%u", title_prefix, *title_prefix ? " " : "", dev);
        l->title = gtm_str(d, title);
        l->warning = wstr;
        l->layer_name[0] = gtm_str(d, r->fw  ? "PyTorch tensor blocks (the bridge)"
                                      : seg ? "reserved segments (what CUPTI saw of the caching allocator)"
                                            : "CUPTI allocations");
        l->nlayers = 1;
        if (r->fw && lane_fw(d, r, l, dev) != 0)
            return -1;
        const gma_dev *D = &r->dev[dev];
        l->has_peak = D->has_peak;
        l->peak = D->peak;
        l->peak_t = gma_rel(r, D->peak_ts);
        l->peak_step = D->peak_step;
        if (lane_names(d, r, l) != 0 || lane_marks(d, r, l, dev) != 0 || gtm_lane_at_peak(d, l) != 0)
            return -1;
        lane_view(l, r);
    }
    return d->err ? -1 : 0;
}

/* ---- writing ------------------------------------------------------------------ */

static void short_name(const char *raw, size_t len, size_t max_len, gma_buf *out) { gma_name_short(raw, len, max_len, out); }

static int write_doc(const char *path, int html, gtm_doc *d, size_t top)
{
    if (gtm_labels(d, short_name, 0) != 0 || gtm_finish(d, top < d->nfixed ? d->nfixed : top) != 0) {
        errno = ENOMEM;
        return -1;
    }
    gma_out *o = gma_out_open(path);
    if (!o)
        return -1;
    FILE *f = o->f;
    int err = html ? gtw_html(f, d) : (fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f), gtw_svg(f, d));
    if (err) {
        gma_out_close(o, 0);
        errno = errno ? errno : EIO;
        return -1;
    }
    return gma_out_close(o, 1);
}

/* Colours: --top N (default 10), at most GTM_TOP_MAX. */
static size_t colours(const gma_opts *o) { return o->top && o->top < GTM_TOP_MAX ? (size_t)o->top : GTM_TOP_MAX; }

static void summary(char *out, size_t cap, const char *path, const gtm_doc *d)
{
    size_t bands = 0, merged = 0, segs = 0, outside = 0;
    int fw = 0;
    for (size_t k = 0; k < d->lanes.len; k++) {
        const gtm_lane *l = &GMA_VEC_AT(&d->lanes, gtm_lane, k);
        bands += l->nkeep;
        merged += l->nmerged;
        segs += l->ctx[GTM_CTX_SEG].n;
        outside += l->ctx[GTM_CTX_OUT].n;
        fw |= l->fw;
    }
    char layers[120] = "";
    if (fw)
        snprintf(layers, sizeof(layers), ", %zu reserved segments, %zu allocations outside PyTorch's allocator", segs,
                 outside);
    snprintf(out, cap, "wrote %s (memory timeline: %zu lane%s, %zu bands drawn, %zu small allocations merged%s, colours by %s)",
             gma_out_shown(path), d->lanes.len, d->lanes.len == 1 ? "" : "s", bands, merged, layers, d->by);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* One trace (b NULL: lanes titled by device), or --diff's two (lanes "A
 * devN" and "B devN" on one axis of steps), into a's file. */
static int write_replays(gma_replay *a, gma_replay *b)
{
    gma_timeline *t = a->timeline;
    if (!t || !t->path || (b && !b->timeline))
        return 0;
    if (t->bands.err || t->segs.err || t->cuda.err || (b && b->timeline->bands.err)) {
        errno = ENOMEM;
        return -1;
    }
    gtm_doc d;
    gtm_init(&d, owner_kind(a->opt.by));
    /* the bridge recorded the run(s): colours by category unless --by asks for other owners */
    if (a->opt.by == GMA_BY_KERNEL && a->fw && gma_category_known(a) && (!b || (b->fw && gma_category_known(b))))
        gtm_fixed_owners(&d, "category", gma_cat_names, GMA_CAT_TENSORS_);
    d.title = gtm_str(&d, a->path);
    d.step_axis = b != NULL;
    d.raw_kernels = b != NULL;
    char pa[300] = "", pb[300] = "";
    if (b) { /* each run by its file name: "A (run1.zst)" */
        char both[620];
        snprintf(both, sizeof(both), "%s vs %s", a->path, b->path);
        d.title = gtm_str(&d, both);
        d.diff_a = gtm_str(&d, a->path);
        d.diff_b = gtm_str(&d, b->path);
        snprintf(pa, sizeof(pa), "A (%s)", base_name(a->path));
        snprintf(pb, sizeof(pb), "B (%s)", base_name(b->path));
    }
    int rc = gma_timeline_model_add(&d, a, pa);
    if (!rc && b)
        rc = gma_timeline_model_add(&d, b, pb);
    if (!rc)
        rc = write_doc(t->path, t->html, &d, colours(&a->opt));
    if (!rc)
        summary(t->summary, sizeof(t->summary), t->path, &d);
    gtm_free(&d);
    return rc;
}

int gma_timeline_write(gma_replay *r) { return write_replays(r, NULL); }

const char *gma_timeline_summary(const gma_replay *r)
{
    const gma_timeline *t = r->timeline;
    return t && t->summary[0] ? t->summary : NULL;
}

/* ---- several traces: a lane per rank (and device) ------------------------------- */

struct gma_tlmulti {
    char *path;
    int html;
    gtm_doc doc;
    gma_vec origins;     /* uint64_t: each lane's trace origin */
    size_t top;
    char summary[600];
};

struct gma_tlmulti *gma_timeline_multi_new(const char *path)
{
    struct gma_tlmulti *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->path = strdup(path);
    if (!m->path || check_writable(path) != 0) {
        int e = m->path ? errno : ENOMEM;
        free(m->path);
        free(m);
        errno = e;
        return NULL;
    }
    m->html = is_html(path);
    gtm_init(&m->doc, "kernel");
    m->doc.title = gtm_str(&m->doc, "several ranks");
    m->doc.raw_kernels = 1;
    gma_vec_init(&m->origins, sizeof(uint64_t));
    return m;
}

int gma_timeline_multi_take(struct gma_tlmulti *m, gma_replay *r, int64_t rank)
{
    if (!r->timeline)
        return 0;
    char prefix[48];
    snprintf(prefix, sizeof(prefix), "rank %lld", (long long)rank);
    m->doc.by = owner_kind(r->opt.by);
    m->top = colours(&r->opt);
    size_t before = m->doc.lanes.len;
    if (gma_timeline_model_add(&m->doc, r, prefix) != 0)
        return -1;
    for (size_t k = before; k < m->doc.lanes.len; k++) {
        uint64_t *o = gma_vec_push(&m->origins);
        if (!o)
            return -1;
        *o = r->origin;
    }
    return 0;
}

int gma_timeline_diff_write(gma_replay *a, gma_replay *b) { return write_replays(a, b); }

int gma_timeline_multi_write(struct gma_tlmulti *m)
{
    if (!m)
        return 0;
    uint64_t origin = 0;
    for (size_t k = 0; k < m->origins.len; k++) {
        uint64_t o = GMA_VEC_AT(&m->origins, uint64_t, k);
        if (!k || o < origin)
            origin = o;
    }
    /* one time axis: every lane from the earliest trace start */
    for (size_t k = 0; k < m->doc.lanes.len; k++)
        GMA_VEC_AT(&m->doc.lanes, gtm_lane, k).shift = (int64_t)(GMA_VEC_AT(&m->origins, uint64_t, k) - origin);
    int rc = write_doc(m->path, m->html, &m->doc, m->top ? m->top : 10);
    if (!rc)
        summary(m->summary, sizeof(m->summary), m->path, &m->doc);
    return rc;
}

const char *gma_timeline_multi_summary(const struct gma_tlmulti *m) { return m && m->summary[0] ? m->summary : NULL; }

void gma_timeline_multi_free(struct gma_tlmulti *m)
{
    if (!m)
        return;
    gtm_free(&m->doc);
    gma_vec_free(&m->origins);
    free(m->path);
    free(m);
}
