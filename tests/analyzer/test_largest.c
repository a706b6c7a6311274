/*
 * The N largest allocations (analyzer/export/largest.c), which the bounded Chrome
 * export draws: which are kept (ties: the earliest), their ends (freed,
 * dropped, carried on by a window's baseline, an address used again), and
 * the lanes gma_largest_finish gives them, every number worked out here.
 */
#include "largest.h"

#include "../check.h"

static gma_big big(uint64_t dev, uint64_t addr, uint64_t bytes, uint64_t t0)
{
    gma_big b;
    memset(&b, 0, sizeof(b));
    b.key = gma_largest_key(dev, addr);
    b.dev = (uint8_t)dev;
    b.bytes = bytes;
    b.t0 = t0;
    b.live0 = 1000 + t0;
    return b;
}

static void offer(gma_largest *l, gma_big b, int baseline, int first)
{
    CHECK(gma_largest_alloc(l, &b, baseline, first) == 0);
}

static void test_keep(void)
{
    gma_largest l;
    uint32_t lanes[256];
    size_t n;
    int oom;
    tc_context("keep");
    gma_largest_init(&l, 3);
    offer(&l, big(0, 0x100, 10, 1), 0, 0);
    offer(&l, big(0, 0x200, 30, 2), 0, 0);
    offer(&l, big(0, 0x300, 20, 3), 0, 0);
    offer(&l, big(0, 0x400, 40, 4), 0, 0); /* takes the place of the 10 */
    offer(&l, big(0, 0x500, 20, 5), 0, 0); /* as large as the smallest kept: the earlier stays */
    offer(&l, big(0, 0x600, 5, 6), 0, 0);
    CHECK_EQ_U64(l.offered, 6);
    CHECK_EQ_U64(l.bytes_offered, 10 + 30 + 20 + 40 + 20 + 5);
    CHECK_EQ_U64(l.n, 3);
    gma_largest_freed(&l, gma_largest_key(0, 0x100), 7, 0, 0); /* the 10, no longer kept: nothing */
    gma_largest_freed(&l, gma_largest_key(0, 0x200), 8, 77, 9); /* the 30 ends at 8, live 77 after */
    gma_largest_dropped(&l, gma_largest_key(0, 0x300), 9, 0);  /* the 20: a window began without it */
    /* the next window's baseline has it again (same address, same size): it goes on */
    offer(&l, big(0, 0x300, 20, 10), 1, 0);
    /* a baseline repeating one that was not kept: not counted again */
    offer(&l, big(0, 0x700, 1000, 10), 1, 0);
    CHECK_EQ_U64(l.offered, 6);
    CHECK_EQ_U64(l.n, 3);
    /* the 30's address again, 35 bytes: a new allocation, which takes the 20's place */
    offer(&l, big(0, 0x200, 35, 11), 0, 0);
    CHECK_EQ_U64(l.offered, 7);
    gma_largest_dropped(&l, gma_largest_key(0, 0x300), 12, 0); /* the 20, evicted: nothing */
    gma_largest_freed(&l, gma_largest_key(0, 0x400), 13, 50, 0);
    const gma_big *b = gma_largest_finish(&l, 20, lanes, &n, &oom);
    REQUIRE(b && n == 3 && !oom, "n %zu", n);
    /* by start: the 30 [2, 8], the 40 [4, 13], the 35 [11, end 20]; lanes: the 30 in 0,
     * the 40 overlaps it: 1; the 35 starts after 8, when lane 0 is free again: 0 */
    CHECK_EQ_U64(b[0].bytes, 30);
    CHECK_EQ_U64(b[0].t1, 8);
    CHECK_EQ_U64(b[0].live1, 77);
    CHECK_EQ_U64(b[0].kname, 9);
    CHECK_EQ_U64(b[0].state, GMA_BIG_FREED);
    CHECK_EQ_U64(b[0].lane, 0);
    CHECK_EQ_U64(b[1].bytes, 40);
    CHECK_EQ_U64(b[1].t1, 13);
    CHECK_EQ_U64(b[1].lane, 1);
    CHECK_EQ_U64(b[2].bytes, 35);
    CHECK_EQ_U64(b[2].t0, 11);
    CHECK_EQ_U64(b[2].t1, 20);
    CHECK_EQ_U64(b[2].state, GMA_BIG_OPEN);
    CHECK_EQ_U64(b[2].lane, 0);
    CHECK_EQ_U64(lanes[0], 2);
    CHECK_EQ_U64(lanes[1], 0);
    gma_largest_release(&l);
    tc_context(NULL);
}

/* A dropped allocation that no baseline carries on ends where it was
 * dropped; the first window's baseline counts; lanes are per device. */
static void test_lanes(void)
{
    gma_largest l;
    uint32_t lanes[256];
    size_t n;
    int oom;
    tc_context("lanes");
    gma_largest_init(&l, 10);
    offer(&l, big(0, 0x10, 64, 0), 1, 1); /* the first window's baseline: counted */
    offer(&l, big(0, 0x20, 32, 0), 1, 1);
    offer(&l, big(1, 0x10, 8, 5), 0, 0);  /* device 1, same address: another key */
    offer(&l, big(0, 0x30, 16, 3), 0, 0);
    offer(&l, big(1, 0x20, 4, 6), 0, 0);
    gma_largest_dropped(&l, gma_largest_key(0, 0x20), 4, 0); /* never carried on: ends at 4 */
    gma_largest_freed(&l, gma_largest_key(1, 0x10), 6, 0, 0);   /* ends where the next one starts */
    CHECK_EQ_U64(l.offered, 5);
    const gma_big *b = gma_largest_finish(&l, 9, lanes, &n, &oom);
    REQUIRE(b && n == 5 && !oom);
    /* device 0 by start: 64 [0, 9 open] lane 0; 32 [0, 4 dropped] lane 1; 16 [3, 9]: lane 1
     * is free at 4, not at 3: lane 2. Device 1: 8 [5, 6] lane 0; 4 [6, 9]: lane 0 is free at 6. */
    CHECK_EQ_U64(b[0].bytes, 64);
    CHECK_EQ_U64(b[0].lane, 0);
    CHECK_EQ_U64(b[1].bytes, 32);
    CHECK_EQ_U64(b[1].t1, 4);
    CHECK_EQ_U64(b[1].state, GMA_BIG_DROPPED);
    CHECK_EQ_U64(b[1].lane, 1);
    CHECK_EQ_U64(b[2].bytes, 16);
    CHECK_EQ_U64(b[2].lane, 2);
    CHECK_EQ_U64(b[3].dev, 1);
    CHECK_EQ_U64(b[3].lane, 0);
    CHECK_EQ_U64(b[4].dev, 1);
    CHECK_EQ_U64(b[4].lane, 0);
    CHECK_EQ_U64(lanes[0], 3);
    CHECK_EQ_U64(lanes[1], 1);
    gma_largest_release(&l);

    /* N = 0: counted, none kept */
    gma_largest_init(&l, 0);
    offer(&l, big(0, 0x10, 64, 0), 0, 0);
    CHECK_EQ_U64(l.offered, 1);
    CHECK(gma_largest_finish(&l, 9, lanes, &n, &oom) == NULL && n == 0 && !oom);
    gma_largest_release(&l);
    tc_context(NULL);
}

/* Many: the kept ones are the N largest whatever the order they come in. */
static void test_many(void)
{
    gma_largest l;
    uint32_t lanes[256];
    size_t n;
    int oom;
    tc_context("many");
    gma_largest_init(&l, 1500); /* more than the first block of 1024: grows */
    /* sizes 1..10000 in a scrambled order (7919 is prime, so i -> i * 7919 mod 10000 is a permutation) */
    for (uint64_t i = 0; i < 10000; i++) {
        uint64_t size = i * 7919 % 10000 + 1;
        offer(&l, big(0, 0x1000 + i, size, i), 0, 0);
    }
    const gma_big *b = gma_largest_finish(&l, 10000, lanes, &n, &oom);
    REQUIRE(b && n == 1500 && !oom);
    uint64_t min = UINT64_MAX, sum = 0;
    for (size_t i = 0; i < n; i++) {
        min = b[i].bytes < min ? b[i].bytes : min;
        sum += b[i].bytes;
    }
    /* 8501..10000: sum = 1500 * (8501 + 10000) / 2 */
    CHECK_EQ_U64(min, 8501);
    CHECK_EQ_U64(sum, 13875750);
    gma_largest_release(&l);
    tc_context(NULL);
}

int main(void)
{
    test_keep();
    test_lanes();
    test_many();
    return tc_result("analyzer.unit.largest");
}
