/*
 * NVTX ranges (ranges.h).
 */
#include <string.h>

#include "ranges.h"
#include "attr.h"
#include "devtime.h"
#include "names.h"
#include "tracestr.h"
#include "winsteps.h"

static uint32_t rrow_for(gma_replay *r, uint32_t name)
{
    int created;
    uint32_t i = gma_row_for(r, &r->rrows, &r->rrow_of, &r->rrow_cap, name, &created);
    if (created)
        RROW(r, i)->name = name;
    return i;
}

/* The representative string id of a range name's operation (names.c:
 * gma_nvtx_base_len), so that "aten::mm, seq = 9, op_id = 55" and
 * "aten::mm, seq = 12, op_id = 80" share one row, as torch.profiler does. */
static uint32_t range_canon(gma_replay *r, uint32_t name)
{
    if (name == NAME_UNNAMED || name == 0 || name >= GMA_MAX_STRING_ID)
        return name;
    if (name < r->rcanon_cap && r->rcanon[name])
        return r->rcanon[name];
    size_t len;
    const char *s = gma_str(r, name, &len);
    size_t bl = gma_nvtx_base_len(s, len);
    uint64_t h = gma_hash_bytes(s, bl); /* of the base name */
    uint32_t repr;
    if (!gma_map_get(&r->rcanon_of, h, &repr)) {
        repr = name;
        if (gma_map_put(&r->rcanon_of, h, repr) != 0) {
            oom(r);
            return name;
        }
    }
    if (name >= r->rcanon_cap && gma_grow_u32(&r->rcanon, NULL, &r->rcanon_cap, (size_t)name + 1) != 0) {
        oom(r);
        return repr;
    }
    r->rcanon[name] = repr;
    return repr;
}

static const gma_rinst *rinst_find(const gma_replay *r, uint64_t id)
{
    uint32_t i;
    if (gma_map_get(&r->rinst_of, id, &i))
        return RINST(r, i);
    if (!r->rring)
        return NULL;
    const gma_rinst *c = &r->rring[id % GMA_RRING];
    return c->id == id ? c : NULL;
}

/* The op of a range instance: its outermost ancestor still known (a
 * parent forgotten makes its child the op, as insights does); NULL none. */
static const gma_rinst *op_of(const gma_replay *r, uint64_t id)
{
    const gma_rinst *in = id ? rinst_find(r, id) : NULL;
    for (unsigned depth = 0; in && in->parent && in->parent != in->id && depth < 64; depth++) {
        const gma_rinst *p = rinst_find(r, in->parent);
        if (!p)
            break;
        in = p;
    }
    return in;
}

/* The class rule of insights_build.c's classify, at the free (hints.h). */
void gma_range_class_at_free(const gma_replay *r, gma_entry *e, const gmt_mem *m)
{
    const gma_dev *D = &r->dev[e->device];
    e->hclass = GMA_HC_PERSISTENT;
    if ((e->flags & GMA_E_BASELINE) || e->step < D->peak_step || m->step > D->peak_step)
        return;
    const gma_rinst *oa = op_of(r, e->range), *of = op_of(r, m->range);
    uint64_t ftid = (m->flags & GMT_MEMF_NO_THREAD) ? 0 : m->tid;
    int temp = oa ? of && of->id == oa->id
                  : !of && e->tid && e->tid == ftid && (m->seq & 0xFFFFFFFFu) <= (uint64_t)e->seq + 1;
    e->hclass = temp ? GMA_HC_TEMP : GMA_HC_STEP;
    e->howner = oa && oa->name < GMA_MAX_STRING_ID ? oa->name : 0;
}

/* Fills r->chain with the rows of range `id` and its ancestors (each name
 * once, so recursion is not counted twice). Returns the name of `id`, or
 * GMA_NAME_UNATTR when the instance is not known. */
static uint32_t range_chain(gma_replay *r, uint64_t id, int rows)
{
    if (r->chain_valid && r->chain_id == id && (!rows || r->chain_len))
        return r->chain_name;
    const gma_rinst *in = rinst_find(r, id);
    if (!in)
        return GMA_NAME_UNATTR;
    uint32_t name = in->canon;
    r->chain_id = id;
    r->chain_name = name;
    r->chain_len = 0;
    r->chain_valid = 1;
    r->chain_hit = name != GMA_NAME_UNATTR && r->opt.by != GMA_BY_RANGE ? id : 0;
    if (!rows)
        return name;
    for (unsigned depth = 0; in && depth < 64 && r->chain_len < GMA_CHAIN_MAX; depth++) {
        uint32_t row = rrow_for(r, in->canon);
        int seen = 0;
        for (uint32_t k = 0; k < r->chain_len; k++)
            seen |= r->chain[k] == row;
        if (!seen)
            r->chain[r->chain_len++] = row;
        if (!in->parent || in->parent == in->id)
            break;
        in = rinst_find(r, in->parent);
    }
    return name;
}

uint32_t gma_range_account(gma_replay *r, uint64_t range, uint64_t bytes, int is_alloc, uint64_t live_after,
                              int acc)
{
    if (!range) {
        if (acc && r->opt.by == GMA_BY_RANGE) {
            gma_rrow *rr = RROW(r, 0);
            if (is_alloc) {
                rr->self_alloc += bytes;
                rr->self_alloc_count++;
                rr->tot_alloc += bytes;
                if (live_after > rr->peak)
                    rr->peak = live_after;
            } else {
                rr->self_free += bytes;
                rr->self_free_count++;
                rr->tot_free += bytes;
            }
        }
        return GMA_NAME_UNATTR;
    }
    int rows = acc && r->opt.by == GMA_BY_RANGE;
    uint32_t name = range_chain(r, range, rows);
    if (name == GMA_NAME_UNATTR) {
        if (acc)
            r->unknown_ranges++;
        return gma_range_account(r, 0, bytes, is_alloc, live_after, acc);
    }
    if (!rows)
        return name;
    for (uint32_t k = 0; k < r->chain_len; k++) {
        gma_rrow *rr = RROW(r, r->chain[k]);
        if (k == 0) {
            if (is_alloc) {
                rr->self_alloc += bytes;
                rr->self_alloc_count++;
            } else {
                rr->self_free += bytes;
                rr->self_free_count++;
            }
        }
        if (is_alloc) {
            rr->tot_alloc += bytes;
            if (live_after > rr->peak)
                rr->peak = live_after;
        } else {
            rr->tot_free += bytes;
        }
    }
    return name;
}

void gma_on_range_begin(gma_replay *r, const gmt_range *g)
{
    note_ts(r, g->ts);
    uint32_t i;
    if (r->free_rinst) {
        i = r->free_rinst - 1;
        r->free_rinst = RINST(r, i)->next_free;
    } else {
        if (!gma_vec_push(&r->rinsts)) {
            oom(r);
            return;
        }
        i = (uint32_t)(r->rinsts.len - 1);
    }
    gma_rinst *in = RINST(r, i);
    memset(in, 0, sizeof(*in));
    in->id = g->id;
    in->parent = g->parent;
    in->tid = g->tid;
    in->begin_ts = g->ts;
    in->name = g->name && g->name < GMA_MAX_STRING_ID ? (uint32_t)g->name : NAME_UNNAMED;
    in->canon = range_canon(r, in->name);
    in->accounted = win_selected(r, win_of(r, g->ts)) && step_selected(r);
    uint32_t old;
    if (gma_map_get(&r->rinst_of, g->id, &old)) { /* a reused id: forget the old one */
        RINST(r, old)->next_free = r->free_rinst;
        r->free_rinst = old + 1;
    }
    if (gma_map_put(&r->rinst_of, g->id, i) != 0) {
        oom(r);
        return;
    }
    if (r->chain_valid && r->chain_id == g->id) {
        r->chain_valid = 0;
        r->chain_hit = 0;
    }
    if (in->accounted && r->opt.by == GMA_BY_RANGE) {
        uint32_t row = rrow_for(r, in->canon);
        RROW(r, row)->calls++;
    }
    PUBLISH(r, range, g);
}

void gma_range_close(gma_replay *r, uint32_t i, uint64_t ts)
{
    gma_rinst *in = RINST(r, i);
    uint64_t dur = ts > in->begin_ts ? ts - in->begin_ts : 0;
    if (in->accounted && r->opt.by == GMA_BY_RANGE) {
        uint32_t row = rrow_for(r, in->canon);
        in = RINST(r, i);
        RROW(r, row)->time_ns += dur;
    }
    if (in->accounted)
        PUBLISH(r, range_closed, in->tid, in->name, in->begin_ts, ts);
    in = RINST(r, i);
    r->rring[in->id % GMA_RRING] = *in;
    gma_map_del(&r->rinst_of, in->id, NULL);
    in->next_free = r->free_rinst;
    r->free_rinst = i + 1;
}

void gma_on_range_end(gma_replay *r, const gmt_range *g)
{
    note_ts(r, g->ts);
    uint32_t i;
    if (gma_map_get(&r->rinst_of, g->id, &i))
        gma_range_close(r, i, g->ts);
    PUBLISH(r, range_end, g);
}
