/*
 * The live-allocation table: fixed cases with totals computed by hand, then
 * 100k random operations checked against a direct-indexed reference model.
 * Linked with -Wl,--wrap=calloc so a test can make allocation fail.
 */
#include <stdlib.h>

#include "live.h"
#include "../check.h"

/* ---- calloc that can be told to fail ------------------------------------------ */

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
static int fail_after = -1; /* -1: never; k: the (k+1)-th call from now fails */
void *__wrap_calloc(size_t n, size_t size)
{
    if (fail_after == 0)
        return NULL;
    if (fail_after > 0)
        fail_after--;
    return __real_calloc(n, size);
}

static gmt_mem mem(uint64_t dev, uint64_t addr, uint64_t bytes, uint64_t kind)
{
    gmt_mem m;
    memset(&m, 0, sizeof m);
    m.device = dev;
    m.address = addr;
    m.bytes = bytes;
    m.kind = kind;
    m.source = GMT_SRC_MALLOC;
    m.ts = addr ^ bytes;
    return m;
}

static int count_cb(const gmt_mem *m, void *ctx)
{
    (void)m;
    (*(int *)ctx)++;
    return 0;
}

static int stop_at_two(const gmt_mem *m, void *ctx)
{
    (void)m;
    return ++*(int *)ctx == 2;
}

static void test_basic(void)
{
    gmp_live *t = gmp_live_create(0);
    gmt_mem m, out;
    CHECK(t != NULL);
    CHECK_EQ_U64(gmp_live_count(t), 0);
    CHECK(gmp_live_find(t, 0, 0x1000) == NULL);
    CHECK_EQ_U64(gmp_live_remove(t, 0, 0x1000, &out), 0);

    m = mem(0, 0x7f0000000000, 1000, GMT_MEMKIND_DEVICE);
    CHECK_EQ_U64(gmp_live_insert(t, &m), 0);
    m = mem(0, 0x7f0000100000, 24, GMT_MEMKIND_MANAGED);
    CHECK_EQ_U64(gmp_live_insert(t, &m), 0);
    m = mem(0, 0x7f0000200000, 512, GMT_MEMKIND_PINNED); /* host memory */
    CHECK_EQ_U64(gmp_live_insert(t, &m), 0);
    m = mem(1, 0x7f0000000000, 4096, GMT_MEMKIND_DEVICE_STATIC); /* same address, other device */
    CHECK_EQ_U64(gmp_live_insert(t, &m), 0);
    m = mem(1, 0x7f0000300000, 8, GMT_MEMKIND_ARRAY);
    CHECK_EQ_U64(gmp_live_insert(t, &m), 0);
    m = mem(1, 0x7f0000400000, 3, GMT_MEMKIND_PAGEABLE);
    CHECK_EQ_U64(gmp_live_insert(t, &m), 0);
    m = mem(2, 0x10, 7, GMT_MEMKIND_UNKNOWN);
    CHECK_EQ_U64(gmp_live_insert(t, &m), 0);
    m = mem(2, 0x20, 11, GMT_MEMKIND_MANAGED_STATIC);
    CHECK_EQ_U64(gmp_live_insert(t, &m), 0);

    CHECK_EQ_U64(gmp_live_count(t), 8);
    CHECK_EQ_U64(gmp_live_bytes(t, 0), 1000 + 24);  /* pinned excluded */
    CHECK_EQ_U64(gmp_live_bytes(t, 1), 4096 + 8);   /* pageable excluded */
    CHECK_EQ_U64(gmp_live_bytes(t, 2), 11);         /* unknown excluded */
    CHECK_EQ_U64(gmp_live_bytes(t, 3), 0);
    CHECK_EQ_U64(gmp_live_bytes_all(t), 1000 + 24 + 512 + 4096 + 8 + 3 + 7 + 11);

    const gmt_mem *f = gmp_live_find(t, 1, 0x7f0000000000);
    CHECK(f && f->bytes == 4096 && f->kind == GMT_MEMKIND_DEVICE_STATIC);
    f = gmp_live_find(t, 0, 0x7f0000000000);
    CHECK(f && f->bytes == 1000);

    /* Replace: a second alloc at a live address (its free was lost). */
    m = mem(0, 0x7f0000000000, 300, GMT_MEMKIND_DEVICE);
    m.corr = 42;
    CHECK_EQ_U64(gmp_live_insert(t, &m), 1);
    CHECK_EQ_U64(gmp_live_count(t), 8);
    CHECK_EQ_U64(gmp_live_bytes(t, 0), 300 + 24);
    f = gmp_live_find(t, 0, 0x7f0000000000);
    CHECK(f && f->corr == 42 && f->bytes == 300);
    /* Replace with a host kind moves the bytes out of the device total. */
    m = mem(0, 0x7f0000100000, 24, GMT_MEMKIND_PINNED);
    CHECK_EQ_U64(gmp_live_insert(t, &m), 1);
    CHECK_EQ_U64(gmp_live_bytes(t, 0), 300);

    /* Remove returns the entry. */
    CHECK_EQ_U64(gmp_live_remove(t, 1, 0x7f0000000000, &out), 1);
    CHECK(out.bytes == 4096 && out.device == 1 && out.kind == GMT_MEMKIND_DEVICE_STATIC);
    CHECK_EQ_U64(gmp_live_remove(t, 1, 0x7f0000000000, &out), 0);
    CHECK_EQ_U64(gmp_live_remove(t, 1, 0x7f0000300000, NULL), 1);
    CHECK_EQ_U64(gmp_live_bytes(t, 1), 0);
    CHECK_EQ_U64(gmp_live_count(t), 6);

    int n = 0;
    gmp_live_foreach(t, count_cb, &n);
    CHECK_EQ_U64(n, 6);
    n = 0;
    gmp_live_foreach(t, stop_at_two, &n);
    CHECK_EQ_U64(n, 2);

    CHECK(gmp_live_footprint(t) >= 16 * sizeof(gmt_mem));
    gmp_live_clear(t);
    CHECK_EQ_U64(gmp_live_count(t), 0);
    CHECK_EQ_U64(gmp_live_bytes(t, 0), 0);
    CHECK_EQ_U64(gmp_live_bytes_all(t), 0);
    CHECK(gmp_live_find(t, 0, 0x7f0000000000) == NULL);
    n = 0;
    gmp_live_foreach(t, count_cb, &n);
    CHECK_EQ_U64(n, 0);
    gmp_live_free(t);
    gmp_live_free(NULL);
}

static void test_kinds(void)
{
    CHECK(gmp_live_is_device_kind(GMT_MEMKIND_DEVICE));
    CHECK(gmp_live_is_device_kind(GMT_MEMKIND_DEVICE_STATIC));
    CHECK(gmp_live_is_device_kind(GMT_MEMKIND_MANAGED));
    CHECK(gmp_live_is_device_kind(GMT_MEMKIND_MANAGED_STATIC));
    CHECK(gmp_live_is_device_kind(GMT_MEMKIND_ARRAY));
    CHECK(!gmp_live_is_device_kind(GMT_MEMKIND_PINNED));
    CHECK(!gmp_live_is_device_kind(GMT_MEMKIND_PAGEABLE));
    CHECK(!gmp_live_is_device_kind(GMT_MEMKIND_UNKNOWN));
    CHECK(!gmp_live_is_device_kind(99));
}

/* Devices beyond the per-device array are still summed (by a scan). */
static void test_many_devices(void)
{
    gmp_live *t = gmp_live_create(4);
    for (uint64_t d = 0; d < 70; d++) {
        gmt_mem m = mem(d, 0x1000, d + 1, GMT_MEMKIND_DEVICE);
        CHECK_EQ_U64(gmp_live_insert(t, &m), 0);
        m = mem(d, 0x2000, 1000, GMT_MEMKIND_PINNED);
        CHECK_EQ_U64(gmp_live_insert(t, &m), 0);
    }
    CHECK_EQ_U64(gmp_live_bytes(t, 0), 1);
    CHECK_EQ_U64(gmp_live_bytes(t, 63), 64);
    CHECK_EQ_U64(gmp_live_bytes(t, 64), 65);
    CHECK_EQ_U64(gmp_live_bytes(t, 69), 70);
    CHECK_EQ_U64(gmp_live_bytes(t, 70), 0);
    CHECK_EQ_U64(gmp_live_bytes_all(t), 70 * 71 / 2 + 70 * 1000);
    gmp_live_free(t);
}

/* Growth keeps every entry, and the load never passes 70%. */
static void test_grow(void)
{
    gmp_live *t = gmp_live_create(1);
    size_t fp0 = gmp_live_footprint(t);
    for (uint64_t i = 0; i < 5000; i++) {
        gmt_mem m = mem(i % 3, 0x700000000000 + i * 512, i, GMT_MEMKIND_DEVICE);
        CHECK_EQ_U64(gmp_live_insert(t, &m), 0);
        size_t cap = (gmp_live_footprint(t) - fp0 + 16 * (sizeof(gmt_mem) + 1)) / (sizeof(gmt_mem) + 1);
        CHECK(gmp_live_count(t) * 10 <= cap * 7);
    }
    CHECK_EQ_U64(gmp_live_count(t), 5000);
    uint64_t expect[3] = {0, 0, 0};
    for (uint64_t i = 0; i < 5000; i++) {
        expect[i % 3] += i;
        const gmt_mem *f = gmp_live_find(t, i % 3, 0x700000000000 + i * 512);
        CHECK(f && f->bytes == i);
    }
    for (int d = 0; d < 3; d++)
        CHECK_EQ_U64(gmp_live_bytes(t, (uint64_t)d), expect[d]);
    gmp_live_free(t);
}

/* OOM: create fails cleanly; a failed growth keeps inserting while there is
 * room, and a full table refuses (-1) without changing. */
static void test_oom(void)
{
    fail_after = 0;
    CHECK(gmp_live_create(10) == NULL);
    fail_after = 1; /* struct ok, slot array fails */
    CHECK(gmp_live_create(10) == NULL);
    fail_after = 2; /* struct and slots ok, flags fail */
    CHECK(gmp_live_create(10) == NULL);
    fail_after = -1;

    gmp_live *t = gmp_live_create(0); /* 16 slots: grows at the 12th entry */
    CHECK(t != NULL);
    fail_after = 0;
    int rc = 0;
    uint64_t i;
    for (i = 0; i < 100 && rc != -1; i++) {
        gmt_mem m = mem(0, 0x1000 + i * 256, 10, GMT_MEMKIND_DEVICE);
        rc = gmp_live_insert(t, &m);
    }
    /* 16 slots, one kept empty: 15 entries fit; the 16th insert fails. */
    CHECK_EQ_U64(rc, (uint64_t)-1);
    CHECK_EQ_U64(i, 16);
    CHECK_EQ_U64(gmp_live_count(t), 15);
    CHECK_EQ_U64(gmp_live_bytes(t, 0), 150);
    CHECK(gmp_live_find(t, 0, 0x1000 + 15 * 256) == NULL);
    /* A replace needs no memory and still works; so do removes and finds. */
    gmt_mem m = mem(0, 0x1000, 99, GMT_MEMKIND_DEVICE);
    CHECK_EQ_U64(gmp_live_insert(t, &m), 1);
    CHECK_EQ_U64(gmp_live_bytes(t, 0), 150 - 10 + 99);
    for (i = 0; i < 15; i++)
        CHECK(gmp_live_find(t, 0, 0x1000 + i * 256) != NULL);
    fail_after = -1;
    /* Memory is back: the next insert grows the table. */
    m = mem(0, 0x900000, 1, GMT_MEMKIND_DEVICE);
    CHECK_EQ_U64(gmp_live_insert(t, &m), 0);
    CHECK_EQ_U64(gmp_live_count(t), 16);
    for (i = 0; i < 15; i++)
        CHECK(gmp_live_find(t, 0, 0x1000 + i * 256) != NULL);
    gmp_live_free(t);
}

/* ---- randomized against a reference model --------------------------------------- */

#define R_DEV 5      /* devices 0..4; every memory kind is drawn */
#define R_SLOTS 4096 /* addresses per device */

typedef struct ref_entry {
    int live;
    gmt_mem m;
} ref_entry;

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
    /* xorshift64*: deterministic, so a failure reproduces. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

typedef struct walk {
    ref_entry (*ref)[R_SLOTS];
    size_t seen;
    int bad;
} walk;

static int check_entry(const gmt_mem *m, void *ctx)
{
    walk *w = ctx;
    uint64_t slot = (m->address - 0x7e0000000000ull) / 512;
    if (m->device >= R_DEV || slot >= R_SLOTS || !w->ref[m->device][slot].live ||
        memcmp(&w->ref[m->device][slot].m, m, sizeof *m) != 0)
        w->bad++;
    w->seen++;
    return 0;
}

static void test_random(void)
{
    static ref_entry ref[R_DEV][R_SLOTS];
    uint64_t dev_total[R_DEV] = {0}, all = 0;
    size_t count = 0;
    int mismatches = 0;
    gmp_live *t = gmp_live_create(8);
    CHECK(t != NULL);
    memset(ref, 0, sizeof ref);
    for (int op = 0; op < 100000; op++) {
        uint64_t d = rnd() % R_DEV, s = rnd() % R_SLOTS, r = rnd() % 100;
        uint64_t addr = 0x7e0000000000ull + s * 512;
        ref_entry *e = &ref[d][s];
        if (r < 55) { /* alloc (or replace) */
            gmt_mem m = mem(d, addr, 1 + rnd() % 100000, 1 + rnd() % 7);
            m.corr = (uint64_t)op;
            int rc = gmp_live_insert(t, &m);
            if (rc != (e->live ? 1 : 0))
                mismatches++;
            if (e->live) {
                all -= e->m.bytes;
                if (gmp_live_is_device_kind(e->m.kind))
                    dev_total[d] -= e->m.bytes;
            } else {
                count++;
            }
            e->live = 1;
            e->m = m;
            all += m.bytes;
            if (gmp_live_is_device_kind(m.kind))
                dev_total[d] += m.bytes;
        } else if (r < 95) { /* free */
            gmt_mem out;
            int rc = gmp_live_remove(t, d, addr, &out);
            if (rc != e->live || (rc && memcmp(&out, &e->m, sizeof out) != 0))
                mismatches++;
            if (e->live) {
                e->live = 0;
                count--;
                all -= e->m.bytes;
                if (gmp_live_is_device_kind(e->m.kind))
                    dev_total[d] -= e->m.bytes;
            }
        } else { /* lookup */
            const gmt_mem *f = gmp_live_find(t, d, addr);
            if ((f != NULL) != e->live || (f && memcmp(f, &e->m, sizeof *f) != 0))
                mismatches++;
        }
        if (gmp_live_count(t) != count || gmp_live_bytes(t, d) != dev_total[d] ||
            gmp_live_bytes_all(t) != all)
            mismatches++;
        if (op % 10000 == 9999) {
            /* Full comparison: every table entry is in the model, and the
             * counts agree, so the sets are equal. */
            walk w = {ref, 0, 0};
            gmp_live_foreach(t, check_entry, &w);
            CHECK_EQ_U64(w.bad, 0);
            CHECK_EQ_U64(w.seen, count);
            for (uint64_t k = 0; k < R_DEV; k++)
                CHECK_EQ_U64(gmp_live_bytes(t, k), dev_total[k]);
        }
        if (op == 60000) {
            /* Drain most of it, then refill: exercises long backward shifts. */
            for (uint64_t k = 0; k < R_DEV; k++)
                for (uint64_t q = 0; q < R_SLOTS; q += 1 + (q % 3 == 0)) {
                    if (!ref[k][q].live)
                        continue;
                    if (gmp_live_remove(t, k, 0x7e0000000000ull + q * 512, NULL) != 1)
                        mismatches++;
                    ref[k][q].live = 0;
                    count--;
                    all -= ref[k][q].m.bytes;
                    if (gmp_live_is_device_kind(ref[k][q].m.kind))
                        dev_total[k] -= ref[k][q].m.bytes;
                }
        }
    }
    CHECK_EQ_U64(mismatches, 0);
    CHECK_EQ_U64(gmp_live_count(t), count);
    CHECK(count > 1000); /* the run exercised a large table */
    gmp_live_free(t);
}

/* A full small table (11 entries in 16 slots, the most before it grows):
 * long probe runs that wrap past the end of the array, so deletion's
 * backward shift is tested across the wrap. */
static void test_small_full(void)
{
    enum { KEYS = 11 };
    int live[KEYS] = {0};
    uint64_t bytes[KEYS] = {0};
    int mismatches = 0;
    gmp_live *t = gmp_live_create(0);
    size_t fp = gmp_live_footprint(t);
    for (int op = 0; op < 200000; op++) {
        int k = (int)(rnd() % KEYS);
        uint64_t addr = 0x500000000000ull + (uint64_t)k * 0x200000ull;
        if (rnd() % 2) {
            gmt_mem m = mem(0, addr, 1 + rnd() % 1000, GMT_MEMKIND_DEVICE);
            if (gmp_live_insert(t, &m) != live[k])
                mismatches++;
            live[k] = 1;
            bytes[k] = m.bytes;
        } else {
            if (gmp_live_remove(t, 0, addr, NULL) != live[k])
                mismatches++;
            live[k] = 0;
        }
        uint64_t total = 0;
        size_t count = 0;
        for (int j = 0; j < KEYS; j++) {
            uint64_t a = 0x500000000000ull + (uint64_t)j * 0x200000ull;
            const gmt_mem *f = gmp_live_find(t, 0, a);
            if ((f != NULL) != live[j] || (f && f->bytes != bytes[j]))
                mismatches++;
            if (live[j]) {
                total += bytes[j];
                count++;
            }
        }
        if (gmp_live_count(t) != count || gmp_live_bytes(t, 0) != total)
            mismatches++;
    }
    CHECK_EQ_U64(mismatches, 0);
    CHECK_EQ_U64(gmp_live_footprint(t), fp); /* it never grew: the 16 slots were used throughout */
    gmp_live_free(t);
}

int main(void)
{
    test_kinds();
    test_basic();
    test_many_devices();
    test_grow();
    test_oom();
    test_random();
    test_small_full();
    return tc_result("test_live");
}
