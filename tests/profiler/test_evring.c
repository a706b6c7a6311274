/*
 * The event ring (profiler/assemble/evring.c): sizes, order, the full ring's drops
 * and their count, laps, names cut visibly, and several producers against
 * one consumer: every event pushed is popped once, in each producer's own
 * order, and every refused one is counted. Marks: only the newest event,
 * only once, only before the writer takes it, and every mark that
 * succeeded reaches the consumer, also while it pops concurrently. The
 * same-call test that decides a mark: each condition alone refuses it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "evring.h"
#include "gmemprof/trace_format.h"
#include "../check.h"

static _Atomic int g_done; /* producer threads finished */

static gmp_ev ev_of(uint32_t tid, uint64_t a, const char *name)
{
    gmp_ev e;
    memset(&e, 0, sizeof e);
    e.type = GMP_EV_MARK;
    e.tid = tid;
    e.a = a;
    gmp_ev_set_name(&e, name, name ? strlen(name) : 0);
    return e;
}

static void test_sizes(void)
{
    gmp_ring r;
    REQUIRE(gmp_ring_init(&r, 1000) == 0);
    CHECK_EQ_U64(gmp_ring_capacity(&r), 512); /* rounded down to a power of two */
    CHECK_EQ_U64(gmp_ring_bytes(&r), 512 * 256);
    CHECK_EQ_U64(gmp_ring_size(&r), 0);
    gmp_ring_destroy(&r);
    CHECK_EQ_U64(gmp_ring_capacity(&r), 0);
    REQUIRE(gmp_ring_init(&r, 1) == 0);
    CHECK_EQ_U64(gmp_ring_capacity(&r), 2); /* at least 2 */
    gmp_ring_destroy(&r);
}

static void test_order_and_full(void)
{
    gmp_ring r;
    REQUIRE(gmp_ring_init(&r, 4) == 0);
    static const char *const names[] = {"a", "", "forward", NULL};
    for (uint64_t i = 0; i < 4; i++) {
        gmp_ev e = ev_of(7, 100 + i, names[i]);
        uint64_t pos = 99;
        CHECK_EQ_U64(gmp_ring_push(&r, &e, &pos), 0);
        CHECK_EQ_U64(pos, i);
    }
    CHECK_EQ_U64(gmp_ring_size(&r), 4);
    gmp_ev e = ev_of(7, 104, "late");
    CHECK(gmp_ring_push(&r, &e, NULL) == -1, "a full ring refuses");
    CHECK_EQ_U64(atomic_load(&r.dropped), 1);
    gmp_ev out;
    for (uint64_t i = 0; i < 4; i++) {
        REQUIRE(gmp_ring_pop(&r, &out) == 1);
        CHECK_EQ_U64(out.a, 100 + i);
        CHECK_EQ_U64(out.tid, 7);
        size_t n = names[i] ? strlen(names[i]) : 0;
        CHECK_EQ_U64(out.len, n);
        CHECK(memcmp(out.name, names[i] ? names[i] : "", n) == 0, "name %llu", (unsigned long long)i);
    }
    CHECK_EQ_U64(gmp_ring_pop(&r, &out), 0);
    /* laps: the cells are reused in order, 10,000 times over */
    uint64_t bad = 0;
    for (uint64_t i = 0; i < 40000; i++) {
        e = ev_of(1, i, NULL);
        uint64_t pos;
        if (gmp_ring_push(&r, &e, &pos) != 0 || pos != 4 + i || gmp_ring_pop(&r, &out) != 1 || out.a != i)
            bad++;
    }
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(atomic_load(&r.dropped), 1);
    gmp_ring_destroy(&r);
}

static void test_names(void)
{
    char longname[GMP_EV_NAME_MAX + 50];
    memset(longname, 'x', sizeof longname);
    gmp_ev e;
    memset(&e, 0, sizeof e);
    gmp_ev_set_name(&e, longname, sizeof longname);
    CHECK_EQ_U64(e.len, GMP_EV_NAME_MAX);
    CHECK(memcmp(e.name + GMP_EV_NAME_MAX - 3, "...", 3) == 0, "a cut name ends in ...");
    CHECK(e.name[GMP_EV_NAME_MAX - 4] == 'x');
    gmp_ev_set_name(&e, longname, GMP_EV_NAME_MAX); /* fits exactly: not cut */
    CHECK_EQ_U64(e.len, GMP_EV_NAME_MAX);
    CHECK(e.name[GMP_EV_NAME_MAX - 1] == 'x');
    gmp_ev_set_name(&e, NULL, 5);
    CHECK_EQ_U64(e.len, 0);
}

static void test_mark(void)
{
    gmp_ring r;
    uint64_t pos = 77;
    REQUIRE(gmp_ring_init(&r, 4) == 0);
    CHECK(gmp_ring_newest(&r, &pos) == NULL, "a fresh ring has no newest event");
    gmp_ev a = ev_of(1, 10, "a"), b = ev_of(1, 11, NULL), out;
    REQUIRE(gmp_ring_push(&r, &a, NULL) == 0);
    const gmp_ev *n = gmp_ring_newest(&r, &pos);
    REQUIRE(n != NULL);
    CHECK_EQ_U64(pos, 0);
    CHECK_EQ_U64(n->a, 10);
    REQUIRE(gmp_ring_push(&r, &b, NULL) == 0);
    n = gmp_ring_newest(&r, &pos);
    REQUIRE(n != NULL);
    CHECK_EQ_U64(pos, 1);
    CHECK_EQ_U64(n->a, 11);
    CHECK_EQ_U64(gmp_ring_mark(&r, 1), 0);
    CHECK(gmp_ring_mark(&r, 1) == -1, "an event is marked once");
    CHECK(gmp_ring_newest(&r, &pos) == NULL, "a marked event is not offered again");
    CHECK_EQ_U64(gmp_ring_size(&r), 2);
    CHECK_EQ_U64(gmp_ring_pop(&r, &out), 1);
    CHECK_EQ_U64(out.a, 10);
    CHECK_EQ_U64(gmp_ring_pop(&r, &out), GMP_RING_MARKED);
    CHECK_EQ_U64(out.a, 11);
    CHECK(gmp_ring_mark(&r, 1) == -1, "too late once the writer took it");
    CHECK(gmp_ring_newest(&r, &pos) == NULL, "a taken event is not offered");
    CHECK_EQ_U64(gmp_ring_pop(&r, &out), 0);
    /* a marked cell still occupies its place: a full ring refuses the
     * push a lap ahead of it, and the marked event comes out in order */
    for (uint64_t i = 0; i < 4; i++) {
        gmp_ev e = ev_of(2, 20 + i, NULL);
        REQUIRE(gmp_ring_push(&r, &e, &pos) == 0);
        if (i == 0)
            CHECK_EQ_U64(gmp_ring_mark(&r, pos), 0);
    }
    gmp_ev e = ev_of(2, 24, NULL);
    CHECK(gmp_ring_push(&r, &e, NULL) == -1, "full, the marked cell included");
    for (uint64_t i = 0; i < 4; i++) {
        CHECK_EQ_U64(gmp_ring_pop(&r, &out), i == 0 ? GMP_RING_MARKED : 1);
        CHECK_EQ_U64(out.a, 20 + i);
    }
    gmp_ring_destroy(&r);
}

/* One producer marks each event of its own it finds newest, while the
 * consumer pops: every mark that succeeded comes out, and no other. */
#define MARK_EVENTS 400000u

typedef struct marker {
    gmp_ring *r;
    uint64_t marks;
} marker;

static void *produce_marks(void *arg)
{
    marker *m = arg;
    for (uint64_t i = 0; i < MARK_EVENTS; i++) {
        gmp_ev e = ev_of(9, i, NULL);
        while (gmp_ring_push(m->r, &e, NULL) != 0)
            ; /* full: the consumer is behind */
        uint64_t pos;
        const gmp_ev *n = gmp_ring_newest(m->r, &pos);
        if (n && n->a == i && gmp_ring_mark(m->r, pos) == 0)
            m->marks++;
    }
    atomic_fetch_add(&g_done, 1);
    return NULL;
}

static void test_mark_race(void)
{
    gmp_ring r;
    REQUIRE(gmp_ring_init(&r, 64) == 0);
    marker m = {&r, 0};
    pthread_t th;
    atomic_store(&g_done, 0);
    REQUIRE(pthread_create(&th, NULL, produce_marks, &m) == 0);
    uint64_t popped = 0, marked = 0, bad = 0;
    gmp_ev out;
    for (;;) {
        int finished = atomic_load(&g_done) == 1;
        int got, any = 0;
        while ((got = gmp_ring_pop(&r, &out)) != 0) {
            any = 1;
            if (out.a != popped)
                bad++;
            popped++;
            marked += got == GMP_RING_MARKED;
        }
        if (finished && !any)
            break;
    }
    pthread_join(th, NULL);
    fprintf(stderr, "%u events, %llu marked by the producer, %llu popped marked\n", MARK_EVENTS,
            (unsigned long long)m.marks, (unsigned long long)marked);
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(popped, MARK_EVENTS);
    CHECK_EQ_U64(marked, m.marks);
    CHECK(m.marks > 0, "the producer got to mark some events");
    gmp_ring_destroy(&r);
}

/* ---- several producers, one consumer ---------------------------------------- */

#define PRODUCERS 4
#define PER_PRODUCER 200000u

typedef struct producer {
    gmp_ring *r;
    uint32_t id;
    uint64_t refused;
} producer;

static void *produce(void *arg)
{
    producer *p = arg;
    for (uint64_t i = 0; i < PER_PRODUCER; i++) {
        gmp_ev e = ev_of(p->id, i, (i & 7) ? NULL : "named");
        if (gmp_ring_push(p->r, &e, NULL) != 0)
            p->refused++;
    }
    atomic_fetch_add(&g_done, 1);
    return NULL;
}

static void test_producers(void)
{
    gmp_ring r;
    REQUIRE(gmp_ring_init(&r, 1024) == 0);
    producer ps[PRODUCERS];
    pthread_t th[PRODUCERS];
    atomic_store(&g_done, 0);
    for (uint32_t k = 0; k < PRODUCERS; k++) {
        ps[k] = (producer){&r, k + 1, 0};
        REQUIRE(pthread_create(&th[k], NULL, produce, &ps[k]) == 0);
    }
    /* the next index each producer may send: its events come in its order,
     * with gaps only where a push was refused */
    uint64_t next[PRODUCERS + 1] = {0}, popped = 0, out_of_order = 0, bad_name = 0;
    gmp_ev out;
    for (;;) {
        int finished = atomic_load(&g_done) == PRODUCERS;
        int got = 0;
        while (gmp_ring_pop(&r, &out)) {
            got = 1;
            popped++;
            if (out.tid < 1 || out.tid > PRODUCERS || out.a < next[out.tid])
                out_of_order++;
            else
                next[out.tid] = out.a + 1;
            if ((out.a & 7) == 0 ? (out.len != 5 || memcmp(out.name, "named", 5) != 0) : out.len != 0)
                bad_name++;
        }
        if (finished && !got)
            break;
    }
    uint64_t refused = 0;
    for (uint32_t k = 0; k < PRODUCERS; k++) {
        pthread_join(th[k], NULL);
        refused += ps[k].refused;
    }
    fprintf(stderr, "%u producers x %u events into 1024 cells: %llu popped, %llu refused\n", PRODUCERS, PER_PRODUCER,
            (unsigned long long)popped, (unsigned long long)refused);
    CHECK_EQ_U64(out_of_order, 0);
    CHECK_EQ_U64(bad_name, 0);
    CHECK_EQ_U64(popped + refused, (uint64_t)PRODUCERS * PER_PRODUCER);
    CHECK_EQ_U64(atomic_load(&r.dropped), refused);
    CHECK_EQ_U64(gmp_ring_size(&r), 0);
    gmp_ring_destroy(&r);
}

/* A FREE_REQUESTED of block 0x1000, device 1, stream 0x50, by thread 7
 * after its 3rd launch, at t = 5000, against a completion by each
 * condition's other value. */
static int same_call(const gmp_ev *q, unsigned device, uint64_t address, uint64_t stream, uint32_t tid, uint64_t seq,
                     uint64_t now)
{
    gmp_block_call c = {.device = device, .tid = tid, .address = address, .stream = stream, .seq = seq, .now = now};
    return gmp_ev_block_same_call(q, &c, 2000);
}

static void test_same_call(void)
{
    gmp_ev q = {.type = GMP_EV_BLOCK,
                .tid = 7,
                .ts = 5000,
                .a = 0x1000,
                .c = 0x50,
                .block = {.action = GMT_BLK_FREE_REQUESTED, .device = 1, .seq = 3}};
    CHECK_EQ_U64(same_call(&q, 1, 0x1000, 0x50, 7, 3, 6999), 1);
    CHECK_EQ_U64(same_call(&q, 1, 0x1000, 0x50, 7, 3, 5000), 1);
    CHECK_EQ_U64(same_call(&q, 1, 0x1000, 0x50, 7, 3, 7000), 0); /* as old as the window */
    CHECK_EQ_U64(same_call(&q, 1, 0x1000, 0x50, 7, 3, 4999), 0); /* before the request */
    CHECK_EQ_U64(same_call(&q, 1, 0x1000, 0x50, 7, 4, 5001), 0); /* a launch in between, however soon */
    CHECK_EQ_U64(same_call(&q, 1, 0x1000, 0x50, 8, 3, 5100), 0); /* another thread */
    CHECK_EQ_U64(same_call(&q, 1, 0x2000, 0x50, 7, 3, 5100), 0); /* another block */
    CHECK_EQ_U64(same_call(&q, 0, 0x1000, 0x50, 7, 3, 5100), 0); /* another device */
    CHECK_EQ_U64(same_call(&q, 1, 0x1000, 0x60, 7, 3, 5100), 0); /* another stream */
    CHECK_EQ_U64(same_call(NULL, 1, 0x1000, 0x50, 7, 3, 5100), 0);
    q.block.action = GMT_BLK_ALLOC;
    CHECK_EQ_U64(same_call(&q, 1, 0x1000, 0x50, 7, 3, 5100), 0); /* not a request */
    q.block.action = GMT_BLK_FREE_REQUESTED;
    q.type = GMP_EV_MARK;
    CHECK_EQ_U64(same_call(&q, 1, 0x1000, 0x50, 7, 3, 5100), 0); /* not a block */
}

int main(void)
{
    test_sizes();
    test_order_and_full();
    test_names();
    test_mark();
    test_mark_race();
    test_same_call();
    test_producers();
    return tc_result("profiler.evring");
}
