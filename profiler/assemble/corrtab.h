/*
 * The correlation table: what an application thread knew when it made a
 * CUDA API call (host thread, launch counter, NVTX range, schedule epoch,
 * API family), found again by the writer thread when CUPTI's activity record
 * for that call arrives, by correlation id.
 *
 * A fixed, direct-mapped array indexed by correlationId & mask (a power of
 * two). No lock, no allocation: the application thread publishes a slot
 * seqlock-style (version odd while writing, even when done, with release
 * ordering); the writer reads it with acquire ordering, retries once on a
 * torn read and checks that the slot still holds the id it looks for. Ids
 * are unique and increase, so a slot is only ever overwritten by an id
 * `size` calls later: a record that arrives later than that is reported as
 * unmatched (counted), never misattributed.
 *
 * All fields are atomics accessed relaxed (plain moves on x86-64 and arm64),
 * so the races the design allows are defined behaviour.
 */
#ifndef GMEMPROF_PROFILER_CORRTAB_H
#define GMEMPROF_PROFILER_CORRTAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* What is known about one API call. `range` carries the API family in its
 * top 8 bits (range ids stay far below 2^56). */
typedef struct gmp_corr_info {
    uint32_t corr;
    uint32_t tid;
    uint32_t epoch;
    uint8_t fam;
    uint64_t seq;
    uint64_t range;
} gmp_corr_info;

typedef struct gmp_corr_slot {
    _Atomic uint32_t ver;
    _Atomic uint32_t corr;
    _Atomic uint32_t tid;
    _Atomic uint32_t epoch;
    _Atomic uint64_t seq;
    _Atomic uint64_t range_fam;
} gmp_corr_slot;

typedef struct gmp_corrtab {
    gmp_corr_slot *slots;
    uint32_t mask; /* size - 1, size a power of two */
} gmp_corrtab;

/* Slot of an id: its low bits. Consecutive ids share cache lines (two 32-byte
 * slots per line), which is what makes the table cheap: an application
 * thread writes it sequentially and the hardware prefetcher keeps up.
 * (Spreading consecutive ids over separate lines, against false sharing
 * between threads launching at the same instant, measured 2-5x slower in
 * bench/cb_cost.c: every id then costs a cache miss.) */
static inline uint32_t gmp_corr_index(const gmp_corrtab *t, uint32_t corr) { return corr & t->mask; }

#define GMP_CORR_FAM_SHIFT 56
#define GMP_CORR_RANGE_MASK ((UINT64_C(1) << GMP_CORR_FAM_SHIFT) - 1)

static inline void gmp_corr_put(gmp_corrtab *t, uint32_t corr, uint32_t tid, uint32_t epoch,
                                uint64_t seq, uint64_t range, uint8_t fam)
{
    gmp_corr_slot *s = &t->slots[gmp_corr_index(t, corr)];
    uint32_t v = atomic_load_explicit(&s->ver, memory_order_relaxed);
    atomic_store_explicit(&s->ver, v + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->corr, corr, memory_order_relaxed);
    atomic_store_explicit(&s->tid, tid, memory_order_relaxed);
    atomic_store_explicit(&s->epoch, epoch, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq, memory_order_relaxed);
    atomic_store_explicit(&s->range_fam,
                          (range & GMP_CORR_RANGE_MASK) | ((uint64_t)fam << GMP_CORR_FAM_SHIFT),
                          memory_order_relaxed);
    atomic_store_explicit(&s->ver, v + 2, memory_order_release);
}

/* 1 with *out filled when the slot holds `corr`, 0 otherwise. */
static inline int gmp_corr_get(const gmp_corrtab *t, uint32_t corr, gmp_corr_info *out)
{
    gmp_corr_slot *s = &t->slots[gmp_corr_index(t, corr)];
    for (int tries = 0; tries < 4; tries++) {
        uint32_t v1 = atomic_load_explicit(&s->ver, memory_order_acquire);
        if (v1 & 1u)
            continue; /* being written right now */
        out->corr = atomic_load_explicit(&s->corr, memory_order_relaxed);
        out->tid = atomic_load_explicit(&s->tid, memory_order_relaxed);
        out->epoch = atomic_load_explicit(&s->epoch, memory_order_relaxed);
        out->seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
        uint64_t rf = atomic_load_explicit(&s->range_fam, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        uint32_t v2 = atomic_load_explicit(&s->ver, memory_order_relaxed);
        if (v1 != v2)
            continue;
        out->range = rf & GMP_CORR_RANGE_MASK;
        out->fam = (uint8_t)(rf >> GMP_CORR_FAM_SHIFT);
        return v1 != 0 && out->corr == corr;
    }
    return 0;
}

#endif
