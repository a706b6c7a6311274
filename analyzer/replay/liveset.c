/*
 * The live set's out-of-line parts (liveset.h): the --by alloc rows and the
 * peak.
 */
#include "liveset.h"
#include "view.h"

#define AROW(r, i) GMA_VEC_AT(&(r)->arows, uint32_t, (i))

/* 1 when entry a ranks before entry b in the --by alloc table: by the
 * --sort key of the view (view.h), its name the device then the address;
 * the tiebreak for all, the order of allocation. */
static int arow_before(const gma_replay *r, const gma_entry *a, const gma_entry *b)
{
    const gma_sortkey *k = r->alloc_key;
    if (k->compare == GMA_ORDER_NAME) {
        if (a->device != b->device)
            return a->device < b->device;
        if (a->addr != b->addr)
            return a->addr < b->addr;
    } else {
        int64_t va = k->value(r, a), vb = k->value(r, b);
        if (va != vb)
            return k->compare == GMA_ORDER_ASC ? va < vb : va > vb;
    }
    return a->ord < b->ord;
}

uint32_t gma_live_entry(const gma_replay *r, uint64_t dev, uint64_t addr)
{
    uint32_t ei;
    return gma_map_get(&r->live, live_key(dev, addr), &ei) ? ei : UINT32_MAX;
}

int gma_arow_before(const gma_replay *r, uint32_t a, uint32_t b)
{
    return arow_before(r, ENT(r, a), ENT(r, b));
}

/* The kept rows form a heap whose root is the row that ranks last. */
static void arow_sift_down(gma_replay *r, size_t i)
{
    size_t n = r->arows.len;
    for (;;) {
        size_t l = 2 * i + 1, w = i;
        if (l < n && arow_before(r, ENT(r, AROW(r, w)), ENT(r, AROW(r, l))))
            w = l;
        if (l + 1 < n && arow_before(r, ENT(r, AROW(r, w)), ENT(r, AROW(r, l + 1))))
            w = l + 1;
        if (w == i)
            return;
        uint32_t t = AROW(r, i);
        AROW(r, i) = AROW(r, w);
        AROW(r, w) = t;
        i = w;
    }
}

void gma_arow_offer(gma_replay *r, uint32_t ei)
{
    if (r->aspill) /* every row goes to the spill as it ends */
        return;
    gma_entry *e = ENT(r, ei);
    if (e->flags & GMA_E_KEEP_ROW)
        return;
    uint64_t top = r->opt.top;
    if (!top || r->arows.len < top) {
        uint32_t *slot = gma_vec_push(&r->arows);
        if (!slot) {
            oom(r);
            return;
        }
        *slot = ei;
        ENT(r, ei)->flags |= GMA_E_KEEP_ROW;
        if (top) { /* sift up */
            size_t i = r->arows.len - 1;
            while (i) {
                size_t p = (i - 1) / 2;
                if (!arow_before(r, ENT(r, AROW(r, p)), ENT(r, AROW(r, i))))
                    break;
                uint32_t t = AROW(r, i);
                AROW(r, i) = AROW(r, p);
                AROW(r, p) = t;
                i = p;
            }
        }
        return;
    }
    uint32_t root = AROW(r, 0);
    if (!arow_before(r, e, ENT(r, root)))
        return;
    ENT(r, root)->flags &= (uint16_t)~GMA_E_KEEP_ROW;
    entry_maybe_release(r, root);
    AROW(r, 0) = ei;
    ENT(r, ei)->flags |= GMA_E_KEEP_ROW;
    arow_sift_down(r, 0);
}

void gma_peak_set(gma_replay *r, gma_dev *D, uint64_t value, uint64_t ts, uint64_t step, uint64_t ord,
                     int64_t w, const attr *a, int baseline, uint32_t rname)
{
    /* Entries kept because they were live at the old peak are not needed. */
    uint32_t k = D->keep_head;
    D->keep_head = 0;
    while (k) {
        gma_entry *e = ENT(r, k - 1);
        uint32_t nx = e->keep_next;
        e->keep_next = 0;
        e->flags &= (uint16_t)~GMA_E_KEEP_PEAK;
        entry_maybe_release(r, k - 1);
        k = nx;
    }
    if (D->has_peak && D->peak_state == GMA_PEAK_PENDING)
        r->peaks_pending--;
    D->has_peak = 1;
    D->peak = value;
    D->peak_ts = ts;
    D->peak_step = step;
    D->peak_ord = ord;
    D->peak_window = w >= 0 ? WIN(r, w)->id : 0;
    D->peak_rname = rname;
    if (baseline) {
        D->peak_state = GMA_PEAK_BASELINE;
        D->peak_kname = GMA_NAME_BASELINE;
    } else if (a->slot) {
        D->peak_state = GMA_PEAK_PENDING;
        D->peak_key = a->key;
        r->peaks_pending++;
        D->peak_kname = GMA_NAME_UNATTR;
    } else {
        D->peak_state = a->name == GMA_NAME_UNATTR ? GMA_PEAK_UNATTR : GMA_PEAK_KERNEL;
        D->peak_kname = a->name;
    }
    D->has_best = D->has_sample;
    D->best_ts = D->sample_ts;
    D->best_used = D->sample_used;
}
