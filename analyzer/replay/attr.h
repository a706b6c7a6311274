/*
 * Attribution: each alloc and free to the kernel its thread launched next
 * (docs/attribution.md). Every kernel is remembered in a per-thread ring
 * indexed by seq; an alloc whose kernel has not come yet joins a slot (one
 * per awaited kernel), which the kernel settles when it comes; waits are
 * bounded and given up in creation order (a FIFO). The per-kernel rows
 * live here too. What runs per event is inline.
 */
#ifndef GMA_ATTR_H
#define GMA_ATTR_H

#include "replay_int.h"

/* Row of a name in a (krows or rrows) table, created on first use (the
 * caller names it then: *created); row 0 is "(unattributed)". */
uint32_t gma_row_for(gma_replay *r, gma_vec *rows, uint32_t **of, size_t *cap, uint32_t name, int *created);
/* The index of thread tid, made on first use; UINT32_MAX out of memory. */
uint32_t gma_thread_idx_slow(gma_replay *r, uint64_t tid);
/* Devices whose peak waited for kernel key learn its name. */
void gma_peaks_settle(gma_replay *r, uint64_t key, uint32_t name);
/* The FIFO of waits: push one; give up those too old or too many. */
void gma_fifo_push(gma_replay *r, uint64_t item);
void gma_fifo_trim(gma_replay *r);
/* The wait for a->key when it is not the thread's newest (attribute). */
void gma_slot_get(gma_replay *r, uint32_t t, attr *a, const gmt_mem *m, const gmt_hot *la, const gmt_hot *lend);

static inline uint32_t krow_for(gma_replay *r, uint32_t name)
{
    /* the common case, inline; id 0 is "(unattributed)", row 0, while slot 0
     * of the lookup array belongs to unnamed kernels */
    if (name && name < r->krow_cap && r->krow_of[name])
        return r->krow_of[name] - 1;
    int created;
    uint32_t i = gma_row_for(r, &r->krows, &r->krow_of, &r->krow_cap, name, &created);
    if (created) {
        r->krow_hit_name = KROW_NONE; /* the rows may have moved */
        KROW(r, i)->name = name;
    }
    return i;
}

/* The row of a name by address. The last one is kept: an allocation's
 * kernel is mostly the kernel record's or the allocation's before it. */
static inline gma_krow *krow_get(gma_replay *r, uint32_t name)
{
    if (r->krow_hit_name == name)
        return r->krow_hit;
    uint32_t i = krow_for(r, name);
    r->krow_hit = KROW(r, i);
    r->krow_hit_name = name;
    return r->krow_hit;
}

/* The thread of tid and its index (*t), NULL when it cannot be had (out of
 * memory). The last one by address: no multiply by its size per event. */
static inline gma_thread *thread_get(gma_replay *r, uint64_t tid, uint32_t *t)
{
    if (r->last_th && r->last_tid == tid) {
        *t = r->last_thread;
        return r->last_th;
    }
    *t = gma_thread_idx_slow(r, tid);
    return *t == UINT32_MAX ? NULL : r->last_th;
}

/* A slot learns its kernel (or that it never comes: name 0). Inline: on_kernel
 * settles one slot per kernel that allocations waited for. */
static inline __attribute__((always_inline)) void slot_settle(gma_replay *r, uint32_t si, uint32_t name)
{
    gma_slot *s = SLOT(r, si);
    uint32_t kr = krow_for(r, name);
    s = SLOT(r, si);
    gma_krow *k = KROW(r, kr);
    k->alloc_bytes += s->alloc_bytes;
    k->free_bytes += s->free_bytes;
    k->alloc_count += s->alloc_count;
    k->free_count += s->free_count;
    if (s->peak > k->peak)
        k->peak = s->peak;
    for (uint32_t e = s->head; e;) {
        gma_entry *en = ENT(r, e - 1);
        uint32_t nx = en->next;
        en->kname = name;
        en->slot = en->prev = en->next = 0;
        e = nx;
    }
    gma_peaks_settle(r, s->key, name);
    PUBLISH(r, settle, s->key, name);
    gma_thread *th = THR(r, (uint32_t)(s->key >> 40));
    if (th->cslot == si + 1)
        th->cslot = 0;
    else
        gma_map_del(&r->slot_of, s->key, NULL);
    s->used = 0;
    s->head = 0;
    s->gen++;
    s->next_free = r->free_slot;
    r->free_slot = si + 1;
    r->pending--;
}

/* The slot waiting for `key` on thread t, UINT32_MAX when none. The
 * thread's newest wait is found without hashing: allocations come in runs
 * before the kernel that consumes them. */
static inline uint32_t slot_find(const gma_replay *r, const gma_thread *th, uint64_t key)
{
    uint32_t si;
    if (th->cslot && th->ckey == key)
        return th->cslot - 1;
    if (r->slot_of.count && gma_map_get(&r->slot_of, key, &si))
        return si;
    return UINT32_MAX;
}

/* The kernel that settles a new wait for a->key, when it is ahead in the
 * batch [la, lend) and taking its name now is exactly what the wait would
 * come to: it is the first kernel of the thread with that key (kernel_record
 * settles the wait there, so its device must pass dev_get), the records
 * before it make no wait of their own (each other alloc or free has the
 * same thread and seq, so it would join this wait, or no thread at all), so
 * nothing trims the FIFO in between, and its name has a kernel row already
 * (the settle would create it there, and row order shows in ties). Returns
 * the kernel record, or NULL: wait in a slot. */
static inline const gmt_hot *kernel_ahead(const gma_replay *r, const gmt_mem *m, uint64_t key, const gmt_hot *la,
                                   const gmt_hot *lend)
{
    for (const gmt_hot *h = la; h < lend; h++) {
        if (h->type == GMT_REC_KERNEL) {
            const gmt_kernel *k = &h->u.kernel;
            if (k->tid != m->tid || (k->seq & KEY40) != (key & KEY40))
                continue;
            uint32_t name = kernel_name(k->name);
            if (k->device >= GMA_MAX_DEVICES || name >= r->krow_cap || !r->krow_of[name])
                return NULL;
            return h;
        }
        if (h->type != GMT_REC_ALLOC && h->type != GMT_REC_FREE)
            continue;
        const gmt_mem *o = &h->u.mem;
        if (o->tid == 0 || (o->flags & GMT_MEMF_NO_THREAD) ||
            (h->type == GMT_REC_ALLOC && (o->flags & GMT_MEMF_BASELINE)))
            continue;
        if (o->tid != m->tid || o->seq != m->seq)
            return NULL;
    }
    return NULL;
}

/* Inline in on_alloc and on_free, which both run it per event: out of line,
 * its call and the attr returned through registers and back cost a fifth of
 * it. The ring hit and the thread's newest wait are the common cases. */
static inline __attribute__((always_inline)) attr attribute(gma_replay *r, const gmt_mem *m, const gmt_hot *la,
                                                            const gmt_hot *lend)
{
    attr a = { GMA_NAME_UNATTR, 0, 0 };
    if (m->tid == 0 || (m->flags & GMT_MEMF_NO_THREAD))
        return a;
    uint32_t t;
    gma_thread *th = thread_get(r, m->tid, &t);
    if (!th)
        return a;
    uint64_t target = m->seq + 1;
    /* The ring holds the kernel only when one with that seq was seen, and
     * then max_seq >= target: mostly the kernel comes after its allocations
     * and the ring's line (64 KiB a thread, L1-cold) is not loaded. */
    struct gma_kslot *ks = &th->ring[target % GMA_KRING];
    if (target <= th->max_seq && ks->seq == target) {
        a.name = ks->name;
        return a;
    }
    a.key = ((uint64_t)t << 40) | (target & KEY40);
    if (th->cslot && th->ckey == a.key) {
        a.slot = th->cslot;
        return a;
    }
    if (la) {
        /* the kernel ahead in this batch that an earlier record found */
        if (r->dkey == a.key && r->dk >= (uintptr_t)la) {
            a.name = r->dname;
            return a;
        }
        /* gma_slot_get's kernel_ahead case inline when the FIFO is empty or
         * holds one always-stale item: gma_slot_get's trim would drop that item
         * and push another, which leaves the FIFO as it is. */
        if (!r->slot_of.count &&
            (r->fifo_len ? r->fifo_len == 1 && r->fifo[r->fifo_head] == 0 : r->fifo_cap != 0)) {
            const gmt_hot *k = kernel_ahead(r, m, a.key, la, lend);
            if (k) {
                if (!r->fifo_len) {
                    r->fifo[r->fifo_head] = 0;
                    r->fifo_len = 1;
                }
                a.name = kernel_name(k->u.kernel.name);
                r->dkey = a.key;
                r->dname = a.name;
                r->dk = (uintptr_t)k;
                return a;
            }
        }
    }
    gma_slot_get(r, t, &a, m, la, lend);
    return a;
}

/* Adds an accounted alloc (sign > 0) or free to its kernel. Inline: once per
 * accounted event, and out of line it was a call for two adds and a max. */
static inline __attribute__((always_inline)) void attr_account(gma_replay *r, const attr *a, uint64_t bytes, int is_alloc,
                                                                 uint64_t live_after)
{
    if (a->slot) {
        gma_slot *s = SLOT(r, a->slot - 1);
        if (is_alloc) {
            s->alloc_bytes += bytes;
            s->alloc_count++;
            if (live_after > s->peak)
                s->peak = live_after;
        } else {
            s->free_bytes += bytes;
            s->free_count++;
        }
        return;
    }
    gma_krow *k = krow_get(r, a->name);
    if (is_alloc) {
        k->alloc_bytes += bytes;
        k->alloc_count++;
        if (live_after > k->peak)
            k->peak = live_after;
    } else {
        k->free_bytes += bytes;
        k->free_count++;
    }
}

#endif
