/* Insights: what the replay hands over during its pass (insights.h). */
#include "consumer.h"
#include "insights_int.h"

#include <stdlib.h>
#include <string.h>

/* The consumer's callbacks (consumer.h), in the table below. */
static void gma_insights_free(gma_replay *r);
static void gma_insights_range_closed(gma_replay *r, uint64_t tid, uint32_t name, uint64_t begin, uint64_t end);
static void gma_insights_range(gma_replay *r, const gmt_range *g);
static void gma_insights_alloc(gma_replay *r, const gma_entry *e, const gmt_mem *m, int pending, uint64_t key);
static void gma_insights_freed(gma_replay *r, const gma_entry *e, const gmt_mem *m, uint64_t ord);
static void gma_insights_dropped(gma_replay *r, const gma_entry *e);
static void gma_insights_settle(gma_replay *r, uint64_t key, uint32_t kname);
static void gma_insights_kernel(gma_replay *r, const gmt_kernel *k);
static void gma_insights_block(gma_replay *r, const gmt_block *b);

/* The replay's events insights collect (consumer.h). */
static const gma_consumer insights_consumer = {
    .kernel = gma_insights_kernel,
    .range = gma_insights_range,
    .range_closed = gma_insights_range_closed,
    .block = gma_insights_block,
    .alloc = gma_insights_alloc,
    .freed = gma_insights_freed,
    .dropped = gma_insights_dropped,
    .settle = gma_insights_settle,
    .release = gma_insights_free,
};

int gma_insights_open(gma_replay *r)
{
    gma_insights *in = calloc(1, sizeof(*in));
    if (!in)
        return -1;
    /* small windows and runs in the tests: every spill path taken */
    const char *tw = getenv("GMEM_ANALYZE_TEST_SPILL_WINDOW"), *tr = getenv("GMEM_ANALYZE_TEST_SPILL_RUN");
    size_t window = tw && atoi(tw) > 0 ? (size_t)atoi(tw) : GMI_WINDOW;
    in->sort_run = tr && atoi(tr) > 0 ? (size_t)atoi(tr) : GMI_SORT_RUN;
    if (gma_spill_open(&in->recs, sizeof(gmi_rec), window) != 0) {
        free(in);
        return -1;
    }
    gma_xsort_open(&in->kernels, sizeof(gmi_kernel), in->sort_run, gmi_kernel_cmp, NULL);
    gma_vec_init(&in->threads, sizeof(gmi_thread));
    gma_vec_init(&in->ops, sizeof(gmi_op));
    gma_vec_init(&in->segs, sizeof(gmi_seg));
    in->ring = calloc(GMI_RING, sizeof(*in->ring));
    if (!in->ring) {
        gma_spill_close(&in->recs);
        free(in);
        return -1;
    }
    if (gma_replay_consumer_add_ctx(r, &insights_consumer, in) != 0) {
        gma_spill_close(&in->recs);
        free(in->ring);
        free(in);
        return -1;
    }
    return 0;
}

gma_insights *gma_insights_of(const gma_replay *r) { return gma_replay_consumer_ctx(r, &insights_consumer); }

static void gma_insights_free(gma_replay *r)
{
    gma_insights *in = gma_insights_of(r);
    if (!in)
        return;
    gma_spill_close(&in->recs);
    gma_xsort_close(&in->kernels);
    gma_spill_close(&in->ksorted);
    gma_vec_free(&in->threads);
    gma_vec_free(&in->ops);
    gma_map_free(&in->op_idx);
    gma_map_free(&in->op_at);
    gma_vec_free(&in->segs);
    gma_map_free(&in->seg_of);
    gma_map_free(&in->live);
    gma_map_free(&in->pending);
    gma_map_free(&in->thread_of);
    free(in->ring);
    free(in);
    gma_replay_consumer_remove(r, &insights_consumer);
}

static void oom(gma_insights *in) { in->oom = 1; }

/* The op an allocation or free is in: the outermost range instance of its
 * thread around the innermost one the record names (0 none or unknown). */
static const gmi_range *op_of(const gma_insights *in, uint64_t range)
{
    if (!range)
        return NULL;
    const gmi_range *g = &in->ring[range % GMI_RING];
    return g->id == range ? g : NULL;
}

static gmi_thread *thread_of(gma_insights *in, uint64_t tid)
{
    uint32_t i;
    if (gma_map_get(&in->thread_of, tid, &i))
        return &GMA_VEC_AT(&in->threads, gmi_thread, i);
    gmi_thread *t = gma_vec_push(&in->threads);
    if (!t || gma_map_put(&in->thread_of, tid, (uint32_t)(in->threads.len - 1)) != 0) {
        if (t)
            in->threads.len--;
        oom(in);
        return NULL;
    }
    t->tid = tid;
    return t;
}

static uint64_t op_key(uint64_t tid, uint64_t begin) { return begin ^ (tid * 0x9E3779B97F4A7C15ull); }

/* An op begins: kept with its extent, for the recompute what-if. */
static void op_begin(gma_replay *r, gma_insights *in, const gmt_range *g, uint32_t name)
{
    if (in->ops.len >= GMI_MAX_RECS)
        return;
    gmi_op *o = gma_vec_push(&in->ops);
    uint32_t i = (uint32_t)(in->ops.len - 1);
    if (!o || gma_map_put(&in->op_idx, g->id, i) != 0 || gma_map_put(&in->op_at, op_key(g->tid, g->ts), i) != 0) {
        oom(in);
        return;
    }
    *o = (gmi_op){ g->id, g->tid, g->ts, 0, r->has_cur_step ? r->cur_step : 0, name };
}

/* A range instance ended (replay publishes its thread and begin, not its
 * id): the op that began there on that thread ends. A child that began at
 * the op's own time ends first, so the op's end is the last one set. */
static void gma_insights_range_closed(gma_replay *r, uint64_t tid, uint32_t name, uint64_t begin, uint64_t end)
{
    (void)name;
    gma_insights *in = gma_insights_of(r);
    uint32_t i;
    if (!gma_map_get(&in->op_at, op_key(tid, begin), &i))
        return;
    gmi_op *o = &GMA_VEC_AT(&in->ops, gmi_op, i);
    if (o->tid == tid && o->begin == begin && end > o->end)
        o->end = end;
}

static void gma_insights_range(gma_replay *r, const gmt_range *g)
{
    gma_insights *in = gma_insights_of(r);
    gmi_range *s = &in->ring[g->id % GMI_RING];
    const gmi_range *p = g->parent ? op_of(in, g->parent) : NULL;
    gmi_range v;
    if (p) {
        v = *p;
    } else { /* an op begins (a parent forgotten makes its child the op) */
        v.op = g->id;
        v.name = g->name < GMA_MAX_STRING_ID ? (uint32_t)g->name : 0;
        v.begin_ts = g->ts;
        gmi_thread *t = g->tid ? thread_of(in, g->tid) : NULL;
        if (t)
            t->op_ts[t->nops++ % GMI_THREAD_OPS] = g->ts;
        op_begin(r, in, g, v.name);
    }
    /* an allocation is shown under the innermost module around it: the
     * outermost range of a bridge trace is the root module, which owns all */
    if ((g->kind == GMT_RANGE_MODULE || g->kind == GMT_RANGE_MODULE_BWD) && g->name < GMA_MAX_STRING_ID) {
        v.owner = (uint32_t)g->name | (g->kind == GMT_RANGE_MODULE_BWD ? GMI_OWNER_BWD : 0);
        in->modules = 1;
    } else if (!p) {
        v.owner = v.name;
    }
    v.id = g->id;
    *s = v;
    in->ranges = 1;
}

/* Device memory only. pending: the entry's kernel comes with
 * gma_insights_settle(key). */
static void gma_insights_alloc(gma_replay *r, const gma_entry *e, const gmt_mem *m, int pending, uint64_t key)
{
    gma_insights *in = gma_insights_of(r);
    if (in->recs.n >= GMI_MAX_RECS) {
        in->dropped_recs++;
        return;
    }
    gmi_rec *a = gma_spill_push(&in->recs);
    if (!a) {
        oom(in);
        return;
    }
    uint32_t ai = (uint32_t)(in->recs.n - 1);
    if (gma_map_put(&in->live, e->ord, ai) != 0) {
        oom(in);
        return;
    }
    a->addr = e->addr;
    a->bytes = e->bytes;
    a->ts = e->ts;
    a->ord = e->ord;
    a->free_ord = UINT64_MAX;
    a->step = e->step;
    a->stream = e->stream;
    a->tid = (m->flags & GMT_MEMF_NO_THREAD) ? 0 : m->tid;
    a->seq = m->seq;
    const gmi_range *op = (e->flags & GMA_E_BASELINE) ? NULL : op_of(in, m->range);
    a->op = op ? op->op : 0;
    a->opname = op ? op->name : 0;
    a->owner = op ? op->owner : 0;
    a->kname = e->kname;
    a->window = e->window;
    a->device = e->device;
    a->source = e->source;
    a->flags = (e->flags & GMA_E_BASELINE) ? GMI_BASELINE : 0;
    if (pending) {
        uint32_t head;
        a->next = gma_map_get(&in->pending, key, &head) ? head + 1 : 0;
        if (gma_map_put(&in->pending, key, ai) != 0)
            oom(in);
    }
}

/* The record of a live entry, to change and then put back (rec_put). */
static gmi_rec *rec_of(gma_insights *in, const gma_entry *e, uint32_t *ai)
{
    if (!gma_map_del(&in->live, e->ord, ai))
        return NULL;
    gmi_rec *a = gma_spill_get(&in->recs, *ai);
    if (!a)
        oom(in);
    return a;
}

static void rec_put(gma_insights *in, uint32_t ai)
{
    if (gma_spill_put(&in->recs, ai) != 0)
        oom(in);
}

static void gma_insights_freed(gma_replay *r, const gma_entry *e, const gmt_mem *m, uint64_t ord)
{
    gma_insights *in = gma_insights_of(r);
    uint32_t ai;
    gmi_rec *a = rec_of(in, e, &ai);
    if (!a)
        return;
    a->flags |= GMI_FREED;
    a->free_ts = m->ts;
    a->free_ord = ord;
    a->free_step = m->step;
    a->free_tid = (m->flags & GMT_MEMF_NO_THREAD) ? 0 : m->tid;
    a->free_seq = m->seq;
    const gmi_range *op = op_of(in, m->range);
    a->free_op = op ? op->op : 0;
    /* the op the free is in, or the last one its thread began before it:
     * freeing one op earlier means freeing when that op began */
    uint32_t ti;
    if (op) {
        a->early_ts = op->begin_ts;
    } else if (a->free_tid && gma_map_get(&in->thread_of, a->free_tid, &ti)) {
        const gmi_thread *t = &GMA_VEC_AT(&in->threads, gmi_thread, ti);
        uint64_t n = t->nops < GMI_THREAD_OPS ? t->nops : GMI_THREAD_OPS;
        for (uint64_t k = 1; k <= n && !a->early_ts; k++) {
            uint64_t ts = t->op_ts[(t->nops - k) % GMI_THREAD_OPS];
            if (ts <= m->ts)
                a->early_ts = ts;
        }
    }
    rec_put(in, ai);
}

/* An entry dropped without a FREE (a window begin, a lost free). */
static void gma_insights_dropped(gma_replay *r, const gma_entry *e)
{
    gma_insights *in = gma_insights_of(r);
    uint32_t ai;
    gmi_rec *a = rec_of(in, e, &ai);
    if (!a)
        return;
    /* dead for every later event: the next one has ord mem_ord + 1 */
    a->flags |= GMI_DROPPED;
    a->free_ord = r->mem_ord + 1;
    a->free_ts = e->free_ts;
    rec_put(in, ai);
}

static void gma_insights_settle(gma_replay *r, uint64_t key, uint32_t kname)
{
    gma_insights *in = gma_insights_of(r);
    uint32_t head;
    if (!gma_map_del(&in->pending, key, &head))
        return;
    for (uint32_t i = head + 1; i;) {
        gmi_rec *a = gma_spill_get(&in->recs, i - 1);
        if (!a) {
            oom(in);
            return;
        }
        uint32_t at = i - 1;
        a->kname = kname;
        i = a->next;
        a->next = 0;
        rec_put(in, at);
    }
}

static void gma_insights_kernel(gma_replay *r, const gmt_kernel *k)
{
    gma_insights *in = gma_insights_of(r);
    if (!k->tid || in->nkernels >= GMI_MAX_KERNELS)
        return;
    gmi_kernel g = { k->tid, k->stream, k->start, k->end > k->start ? k->end : k->start };
    if (gma_xsort_add(&in->kernels, &g) != 0)
        oom(in);
    in->nkernels++;
}

/* A segment ends (freed, unmapped, or repeated by a window's baseline). */
static void seg_end(gma_replay *r, gma_insights *in, uint64_t key)
{
    uint32_t si;
    if (gma_map_del(&in->seg_of, key, &si))
        GMA_VEC_AT(&in->segs, gmi_seg, si).free_ord = r->mem_ord + 1;
}

/* A BLOCK record (the bridge): segments for the holes at the peak. */
/* A block that holds a module's parameters or buffers (an OWNER record):
 * shown under that module; the first one named keeps it. */
static void owned(gma_replay *r, gma_insights *in, const gmt_block *b)
{
    uint32_t ei = gma_live_entry(r, b->device, b->address), ai;
    if (ei == UINT32_MAX || !b->frame || b->frame >= GMA_MAX_STRING_ID ||
        !gma_map_get(&in->live, GMA_VEC_AT(&r->entries, gma_entry, ei).ord, &ai))
        return;
    gmi_rec *a = gma_spill_get(&in->recs, ai);
    if (!a) {
        oom(in);
        return;
    }
    if (!(a->flags & GMI_OWNED)) {
        a->flags |= GMI_OWNED;
        a->owner = (uint32_t)b->frame;
        in->modules = 1;
    }
    rec_put(in, ai);
}

static void gma_insights_block(gma_replay *r, const gmt_block *b)
{
    gma_insights *in = gma_insights_of(r);
    if (b->device >= GMA_MAX_DEVICES)
        return;
    if (b->action == GMT_BLK_OWNER) {
        owned(r, in, b);
        return;
    }
    uint64_t key = (b->address ^ (b->device << 56)) | 1u;
    if (b->action == GMT_BLK_SEGMENT_FREE || b->action == GMT_BLK_SEGMENT_UNMAP) {
        seg_end(r, in, key);
        return;
    }
    if (b->action != GMT_BLK_SEGMENT_ALLOC && b->action != GMT_BLK_SEGMENT_MAP)
        return;
    seg_end(r, in, key);
    gmi_seg *s = gma_vec_push(&in->segs);
    if (!s || gma_map_put(&in->seg_of, key, (uint32_t)(in->segs.len - 1)) != 0) {
        if (s)
            in->segs.len--;
        oom(in);
        return;
    }
    s->addr = b->address;
    s->bytes = b->bytes;
    s->device = (uint8_t)b->device;
    /* live from the next memory event on: the block it was made for */
    s->ord = r->mem_ord + 1;
    s->free_ord = UINT64_MAX;
}
