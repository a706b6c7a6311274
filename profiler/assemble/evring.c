/*
 * Bounded MPSC ring of fixed-size events (see evring.h).
 *
 * Cell i starts with seq = i. A producer that reserved position p (CAS of
 * tail from p to p+1, allowed only while cell[p & mask].seq == p) fills the
 * cell and publishes it with seq = p + 1 (release). The consumer at head h
 * takes the cell when seq == h + 1 (acquire) and frees it for the next lap
 * with seq = h + capacity. A cell whose seq is behind the producer's
 * position is still owned by the consumer: the ring is full.
 *
 * A published cell's producer may set MARK in its seq (one CAS from p + 1)
 * until the consumer frees it; the consumer frees it with a CAS from the
 * value it read, so a mark set during its copy is seen, and the event's
 * bytes never change after publishing. A producer a lap ahead compares
 * the seq without its mark: the marked cell is occupied, the ring full.
 */
#include "evring.h"

#include <stdlib.h>
#include <string.h>

#include "gmemprof/trace_format.h"

_Static_assert(sizeof(gmp_ring_cell) == 256, "a ring cell is 256 bytes");

/* Positions stay far below 2^63 (centuries of events). */
#define MARK (UINT64_C(1) << 63)

int gmp_ring_init(gmp_ring *r, size_t capacity)
{
    size_t cap = 2;
    memset(r, 0, sizeof *r);
    while (cap * 2 <= capacity && cap < ((size_t)1 << 30))
        cap *= 2;
    /* Zeroed memory, then each cell's sequence: a fresh ring is empty. */
    r->cells = calloc(cap, sizeof *r->cells);
    if (!r->cells)
        return -1;
    for (size_t i = 0; i < cap; i++)
        atomic_init(&r->cells[i].seq, (uint64_t)i);
    r->mask = cap - 1;
    atomic_init(&r->tail, 0);
    atomic_init(&r->head, 0);
    atomic_init(&r->dropped, 0);
    return 0;
}

void gmp_ring_destroy(gmp_ring *r)
{
    free(r->cells);
    r->cells = NULL;
}

size_t gmp_ring_capacity(const gmp_ring *r) { return r->cells ? (size_t)r->mask + 1 : 0; }

size_t gmp_ring_bytes(const gmp_ring *r) { return gmp_ring_capacity(r) * sizeof(gmp_ring_cell); }

int gmp_ring_push(gmp_ring *r, const gmp_ev *ev, uint64_t *out_pos)
{
    uint64_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
    gmp_ring_cell *c;
    for (;;) {
        c = &r->cells[pos & r->mask];
        uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire) & ~MARK;
        int64_t dif = (int64_t)(seq - pos);
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&r->tail, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed))
                break;
            /* pos was reloaded by the failed CAS */
        } else if (dif < 0) {
            atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
            return -1;
        } else {
            pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
        }
    }
    /* Only the bytes of the name in use are copied: most names are short. */
    memcpy(&c->ev, ev, offsetof(gmp_ev, name) + ev->len);
    atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
    /* The next push most likely takes the next cell, whose lines the writer
     * last wrote: ask for them now (the sequence, the header and a short
     * name), so the transfer overlaps the program's own work
     * (docs/benchmarks.md, "The callback path on the CPU"). */
    const char *next = (const char *)&r->cells[(pos + 1) & r->mask];
    __builtin_prefetch(next, 1);
    __builtin_prefetch(next + 64, 1);
    if (out_pos)
        *out_pos = pos;
    return 0;
}

int gmp_ring_pop(gmp_ring *r, gmp_ev *out)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    gmp_ring_cell *c = &r->cells[h & r->mask];
    uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
    if ((seq & ~MARK) != h + 1)
        return 0;
    memcpy(out, &c->ev, offsetof(gmp_ev, name));
    size_t n = out->len <= GMP_EV_NAME_MAX ? out->len : GMP_EV_NAME_MAX;
    out->len = (uint16_t)n;
    memcpy(out->name, c->ev.name, n);
    /* fails only when the producer marked the cell since the load: seq
     * then holds the marked value, and the next try frees it */
    while (!atomic_compare_exchange_weak_explicit(&c->seq, &seq, h + r->mask + 1, memory_order_release,
                                                  memory_order_relaxed))
        ;
    atomic_store_explicit(&r->head, h + 1, memory_order_relaxed);
    return (seq & MARK) ? GMP_RING_MARKED : 1;
}

const gmp_ev *gmp_ring_newest(gmp_ring *r, uint64_t *pos)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (t == 0)
        return NULL;
    gmp_ring_cell *c = &r->cells[(t - 1) & r->mask];
    if (atomic_load_explicit(&c->seq, memory_order_acquire) != t)
        return NULL; /* still being filled, taken, or marked */
    *pos = t - 1;
    return &c->ev;
}

int gmp_ring_mark(gmp_ring *r, uint64_t pos)
{
    uint64_t want = pos + 1;
    return atomic_compare_exchange_strong_explicit(&r->cells[pos & r->mask].seq, &want, want | MARK,
                                                   memory_order_relaxed, memory_order_relaxed)
               ? 0
               : -1;
}

size_t gmp_ring_size(const gmp_ring *r)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    return t > h ? (size_t)(t - h) : 0;
}

void gmp_ev_set_name(gmp_ev *ev, const char *s, size_t n)
{
    if (!s)
        n = 0;
    if (n > GMP_EV_NAME_MAX) {
        memcpy(ev->name, s, GMP_EV_NAME_MAX - 3);
        memcpy(ev->name + GMP_EV_NAME_MAX - 3, "...", 3);
        n = GMP_EV_NAME_MAX;
    } else if (n) {
        memcpy(ev->name, s, n);
    }
    ev->len = (uint16_t)n;
}

int gmp_ev_block_same_call(const gmp_ev *req, const gmp_block_call *c, uint64_t window_ns)
{
    /* now before the request's time (another thread's clock read racing
     * it) wraps to a large age: not the same call */
    return req && req->type == GMP_EV_BLOCK && req->block.action == GMT_BLK_FREE_REQUESTED &&
           req->a == c->address && req->block.device == c->device && req->c == c->stream && req->tid == c->tid &&
           req->block.seq == c->seq && c->now - req->ts < window_ns;
}
