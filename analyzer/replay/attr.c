/*
 * Attribution's out-of-line parts (attr.h).
 */
#include <stdlib.h>

#include "attr.h"

/* Row of a name in a (krows or rrows) table, created on first use (the
 * caller names it then: *created); row 0 is "(unattributed)". Unnamed
 * kernels (NAME_UNNAMED) use slot 0 of the lookup array, which no string
 * id can take. */
uint32_t gma_row_for(gma_replay *r, gma_vec *rows, uint32_t **of, size_t *cap, uint32_t name, int *created)
{
    *created = 0;
    if (name == GMA_NAME_UNATTR)
        return 0;
    size_t key = name == NAME_UNNAMED ? 0 : name;
    if (key >= GMA_MAX_STRING_ID)
        return 0;
    if (key >= *cap && gma_grow_u32(of, NULL, cap, key + 1) != 0) {
        oom(r);
        return 0;
    }
    if ((*of)[key])
        return (*of)[key] - 1;
    if (!gma_vec_push(rows)) {
        oom(r);
        return 0;
    }
    uint32_t idx = (uint32_t)(rows->len - 1);
    (*of)[key] = idx + 1;
    *created = 1;
    return idx;
}

uint32_t gma_thread_idx_slow(gma_replay *r, uint64_t tid)
{
    uint32_t t;
    if (!gma_map_get(&r->thread_of, tid, &t)) {
        gma_thread *th = gma_vec_push(&r->threads);
        if (!th) {
            oom(r);
            return UINT32_MAX;
        }
        r->last_th = NULL; /* the threads may have moved */
        th->tid = tid;
        th->ring = calloc(GMA_KRING, sizeof(*th->ring));
        t = (uint32_t)(r->threads.len - 1);
        if (!th->ring || gma_map_put(&r->thread_of, tid, t) != 0) {
            oom(r);
            return UINT32_MAX;
        }
    }
    r->last_tid = tid;
    r->last_thread = t;
    r->last_th = &GMA_VEC_AT(&r->threads, gma_thread, t);
    return t;
}

void gma_peaks_settle(gma_replay *r, uint64_t key, uint32_t name)
{
    for (unsigned d = 0; r->peaks_pending && d < GMA_MAX_DEVICES; d++) {
        gma_dev *D = &r->dev[d];
        if (D->present && D->has_peak && D->peak_state == GMA_PEAK_PENDING && D->peak_key == key) {
            D->peak_state = name == GMA_NAME_UNATTR ? GMA_PEAK_UNATTR : GMA_PEAK_KERNEL;
            D->peak_kname = name;
            r->peaks_pending--;
        }
    }
}

void gma_fifo_push(gma_replay *r, uint64_t item)
{
    if (r->fifo_len == r->fifo_cap) {
        size_t nc = r->fifo_cap ? r->fifo_cap * 2 : 1024;
        uint64_t *nf = malloc(nc * sizeof(*nf));
        if (!nf) {
            oom(r);
            return;
        }
        for (size_t i = 0; i < r->fifo_len; i++)
            nf[i] = r->fifo[(r->fifo_head + i) % r->fifo_cap];
        free(r->fifo);
        r->fifo = nf;
        r->fifo_cap = nc;
        r->fifo_head = 0;
    }
    /* fifo_cap is a power of two (1024, doubled): a mask, not a division,
     * on the path of every new wait. */
    r->fifo[(r->fifo_head + r->fifo_len) & (r->fifo_cap - 1)] = item;
    r->fifo_len++;
}

/* Drops stale FIFO items and gives up waits that are too old or too many. */
void gma_fifo_trim(gma_replay *r)
{
    while (r->fifo_len) {
        uint64_t item = r->fifo[r->fifo_head];
        uint32_t si = (uint32_t)(item >> 32), gen = (uint32_t)item;
        gma_slot *s = SLOT(r, si);
        if (s->used && s->gen == gen) {
            gma_thread *th = THR(r, (uint32_t)(s->key >> 40));
            uint64_t seq = s->key & KEY40;
            int too_many = r->fifo_len > GMA_PENDING_MAX;
            int too_old = th->max_seq > seq + GMA_PENDING_HORIZON;
            if (!too_many && !too_old)
                return;
            r->pending_evicted++;
            slot_settle(r, si, GMA_NAME_UNATTR);
        }
        r->fifo_head = (r->fifo_head + 1) & (r->fifo_cap - 1);
        r->fifo_len--;
    }
}

/* The wait for a->key when it is not the thread's newest: one in the map,
 * the kernel ahead in the batch (kernel_ahead), or a new slot. Out of line:
 * attribute() keeps the common case short. */
void gma_slot_get(gma_replay *r, uint32_t t, attr *a, const gmt_mem *m,
                                               const gmt_hot *la, const gmt_hot *lend)
{
    uint32_t si;
    uint64_t key = a->key;
    /* attribute() checked the thread's newest wait already */
    if (r->slot_of.count && gma_map_get(&r->slot_of, key, &si)) {
        a->slot = si + 1;
        return;
    }
    /* Give up old waits first, so the slot made here lives through this
     * record. */
    gma_fifo_trim(r);
    const gmt_hot *k = kernel_ahead(r, m, key, la, lend);
    if (k) {
        /* No slot: the name now. The FIFO still gets an item, one that is
         * always stale (slot 0 is never used), where the slot's would be:
         * the item of a settled slot is stale too, and the FIFO's length
         * decides which waits are given up (GMA_PENDING_MAX). */
        gma_fifo_push(r, 0);
        a->name = kernel_name(k->u.kernel.name);
        r->dkey = key;
        r->dname = a->name;
        r->dk = (uintptr_t)k;
        return;
    }
    if (r->free_slot) {
        si = r->free_slot - 1;
        r->free_slot = SLOT(r, si)->next_free;
    } else {
        if (!gma_vec_push(&r->slots)) {
            oom(r);
            return;
        }
        si = (uint32_t)(r->slots.len - 1);
    }
    gma_slot *s = SLOT(r, si);
    uint32_t gen = s->gen;
    /* every field but gen */
    s->key = key;
    s->alloc_bytes = s->free_bytes = s->alloc_count = s->free_count = s->peak = 0;
    s->head = 0;
    s->next_free = 0;
    s->used = 1;
    /* The thread's previous newest wait moves to the map. */
    gma_thread *th = THR(r, t);
    if (th->cslot && gma_map_put(&r->slot_of, th->ckey, th->cslot - 1) != 0) {
        oom(r);
        return;
    }
    th->cslot = si + 1;
    th->ckey = key;
    r->pending++;
    gma_fifo_push(r, ((uint64_t)si << 32) | gen);
    a->slot = si + 1;
}
