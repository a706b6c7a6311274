/*
 * The live set: the pool of allocation entries (gma_entry) and the map of
 * live ones by device and address, the peak of each device with the
 * entries it needs kept, and the rows of --by alloc (a heap while --top
 * bounds them). The helpers on the path of every alloc and free are inline.
 */
#ifndef GMA_LIVESET_H
#define GMA_LIVESET_H

#include "replay_int.h"

/* Offers entry ei to the --by alloc rows. */
void gma_arow_offer(gma_replay *r, uint32_t ei);
/* 1 when entry a ranks before entry b in the --by alloc table. */
int gma_arow_before(const gma_replay *r, uint32_t a, uint32_t b);
/* A new peak of device D: value at ts, with what made it (a, or the
 * window's baseline). */
void gma_peak_set(gma_replay *r, gma_dev *D, uint64_t value, uint64_t ts, uint64_t step, uint64_t ord, int64_t w,
                  const attr *a, int baseline, uint32_t rname);

static inline uint32_t entry_new(gma_replay *r)
{
    if (r->free_entry) {
        uint32_t i = r->free_entry - 1;
        gma_entry *e = ENT(r, i);
        r->free_entry = e->next;
        e->flags = 0; /* on_alloc sets every field: no memset on the hot path */
        /* The pool outgrows the L1 cache: start loading the entry the next
         * allocation will take (and write) while this one is filled. */
        if (r->free_entry)
            __builtin_prefetch(ENT(r, r->free_entry - 1), 1);
        return i;
    }
    if (r->entries.len >= UINT32_MAX - 2 || !gma_vec_push(&r->entries)) {
        oom(r);
        return UINT32_MAX;
    }
    return (uint32_t)(r->entries.len - 1);
}

static inline void entry_unlink(gma_replay *r, gma_entry *e)
{
    if (!e->slot)
        return;
    if (e->prev)
        ENT(r, e->prev - 1)->next = e->next;
    else
        SLOT(r, e->slot - 1)->head = e->next;
    if (e->next)
        ENT(r, e->next - 1)->prev = e->prev;
    e->slot = e->prev = e->next = 0;
}

/* Returns the entry to the pool once nothing needs it any more. Inline: once
 * per free (entry_dead), mostly a flag test. */
static inline __attribute__((always_inline)) void entry_maybe_release(gma_replay *r, uint32_t i)
{
    gma_entry *e = ENT(r, i);
    if (e->flags & (GMA_E_LIVE | GMA_E_KEEP_PEAK | GMA_E_KEEP_ROW | GMA_E_LEAKED))
        return;
    entry_unlink(r, e);
    e->flags = 0;
    e->next = r->free_entry;
    r->free_entry = i + 1;
}

static inline uint64_t live_key(uint64_t dev, uint64_t addr) { return addr ^ (dev << 58); }

/* An entry stops being live (freed, replaced, or dropped by a window begin).
 * Inline: on_free runs it once per free. */
static inline __attribute__((always_inline)) void entry_dead(gma_replay *r, uint32_t ei, uint64_t ts, int dropped, const int plain)
{
    gma_entry *e = ENT(r, ei);
    gma_dev *D = &r->dev[e->device];
    e->flags &= (uint16_t)~GMA_E_LIVE;
    e->free_ts = ts;
    if (dropped)
        e->flags |= GMA_E_DROPPED;
    if (!plain && dropped && !(e->flags & GMA_E_HOST))
        PUBLISH(r, dropped, e);
    if (!plain)
        PUBLISH(r, ended, e);
    if (!(e->flags & GMA_E_HOST) && D->has_peak && e->ord <= D->peak_ord) {
        e->flags |= GMA_E_KEEP_PEAK;
        e->keep_next = D->keep_head;
        D->keep_head = ei + 1;
    }
    if (!plain && r->arow_time_key && (e->flags & GMA_E_ACCOUNTED)) /* plain: no --by alloc */
        gma_arow_offer(r, ei);
    entry_maybe_release(r, ei);
}

/* An allocation into the live totals of its device (and of the selection). */
static inline __attribute__((always_inline)) void live_add(gma_replay *r, gma_dev *D, const gmt_mem *m, int host, int dsel)
{
    if (host) {
        D->live_host += m->bytes;
        if (D->live_host > D->host_peak)
            D->host_peak = D->live_host;
    } else {
        D->live += m->bytes;
        if (dsel)
            r->live_total += m->bytes;
        if (D->live > D->all_peak) {
            D->all_peak = D->live;
            D->all_peak_ts = m->ts;
        }
    }
}

/* A new live-set entry from its alloc record and what replay made of it. */
static inline __attribute__((always_inline)) void entry_fill(gma_entry *e, const gmt_mem *m, uint64_t ord,
                                                               uint64_t live_after, uint32_t kname, uint32_t rname,
                                                               int64_t w, uint32_t flags)
{
    e->addr = m->address;
    e->bytes = m->bytes;
    e->ts = m->ts;
    e->free_ts = 0;
    e->slot = e->prev = e->next = e->keep_next = 0;
    e->ord = ord;
    e->live_after = live_after;
    e->step = m->step;
    e->stream = m->stream;
    e->kname = kname;
    e->rname = rname;
    e->window = (uint32_t)w; /* -1 (none) is NO_WIN */
    e->device = (uint8_t)m->device;
    e->kind = (uint8_t)(m->kind < 256 ? m->kind : 0);
    e->source = (uint8_t)(m->source < GMT_SRC_COUNT_ ? m->source : 0);
    e->flags = flags;
    e->hclass = 0; /* GMA_HC_PERSISTENT until gma_range_class_at_free decides */
    e->seq = (uint32_t)m->seq;
    e->howner = 0;
    e->range = m->range;
    e->tid = (m->flags & GMT_MEMF_NO_THREAD) ? 0 : m->tid;
}

#endif
