/*
 * What the replay's files share and nothing else includes: the event macro
 * to the consumers, the name constants, the accessors of gma_replay's
 * pools and the attribution of one event. The replay's modules are
 * replay.c (the pass), devtime, tracestr, liveset, attr, ranges and
 * winsteps; each has its own header for its functions. rhist (the
 * recently closed ranges, for consumers) needs none of this file.
 */
#ifndef GMA_REPLAY_INT_H
#define GMA_REPLAY_INT_H

#include "consumer.h"
#include "gma.h"

/* An event to the registered consumers: with none, the loop's test is the
 * one (predictable) branch the event costs. */
#define PUBLISH(r, ev, ...)                                         \
    do {                                                            \
        for (unsigned ci_ = 0; ci_ < (r)->ncons; ci_++)             \
            if ((r)->cons[ci_]->ev)                                 \
                (r)->cons[ci_]->ev((r), __VA_ARGS__);               \
    } while (0)

/* A rare record (a failure, a dump's LIVE list) to every consumer. */
#define PUBLISH_RARE(r, ev, ...)                                    \
    do {                                                            \
        for (unsigned ci_ = 0; ci_ < (r)->nrare; ci_++)             \
            if ((r)->rare[ci_]->ev)                                 \
                (r)->rare[ci_]->ev((r), __VA_ARGS__);               \
        PUBLISH(r, ev, __VA_ARGS__);                                \
    } while (0)

#define KEY40 ((1ull << 40) - 1)
#define NO_WIN UINT32_MAX /* (uint32_t) of win_of's -1 */
#define NAME_UNNAMED 0xFFFFFFFDu /* a kernel record without a name */
#define KROW_NONE 0xFFFFFFFFu    /* krow_hit_name when krow_hit is not valid: no name is it */

/* A kernel record's name as the tables key it: its string id, or
 * NAME_UNNAMED for 0 and ids past GMA_MAX_STRING_ID (one unsigned compare:
 * 0 wraps to the top). */
static inline uint32_t kernel_name(uint64_t id)
{
    return id - 1 < GMA_MAX_STRING_ID - 1 ? (uint32_t)id : NAME_UNNAMED;
}

static inline void oom(gma_replay *r) { r->err = GMT_E_NOMEM; }

static inline int is_host_mem(uint64_t kind, uint64_t source)
{
    return kind == GMT_MEMKIND_PINNED || kind == GMT_MEMKIND_PAGEABLE || source == GMT_SRC_PINNED_HOST;
}

/* The pools of gma_replay, by index. */
#define ENT(r, i) (&GMA_VEC_AT(&(r)->entries, gma_entry, (i)))
#define SLOT(r, i) (&GMA_VEC_AT(&(r)->slots, gma_slot, (i)))
#define KROW(r, i) (&GMA_VEC_AT(&(r)->krows, gma_krow, (i)))
#define RROW(r, i) (&GMA_VEC_AT(&(r)->rrows, gma_rrow, (i)))
#define THR(r, i) (&GMA_VEC_AT(&(r)->threads, gma_thread, (i)))
#define RINST(r, i) (&GMA_VEC_AT(&(r)->rinsts, gma_rinst, (i)))
#define STEPROW(r, i) (&GMA_VEC_AT(&(r)->steps, gma_steprow, (i)))
#define WIN(r, i) (&GMA_VEC_AT(&(r)->windows, gma_window, (i)))

/* The attribution of one alloc or free: a settled kernel name, or a slot. */
typedef struct attr {
    uint32_t name;  /* GMA_NAME_UNATTR or a kernel name when settled */
    uint32_t slot;  /* slot + 1 while waiting */
    uint64_t key;
} attr;

#endif
