/* Unit tests of spill.c: records spilled behind a small window give back
 * what was pushed and changed; the external sort, in runs of 7 (many runs,
 * merged), gives the order gma_msort gives in memory, ties included; the
 * big arrays keep their contents through growth and drops of their pages. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spill.h"
#include "util/gma_util.h"

#include "../check.h"

typedef struct rec {
    uint64_t key, val;
    uint32_t tag;
} rec;

static int by_key(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const rec *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key; /* ties: the order added */
}

/* 1000 records behind a window of 4: each changed twice, once while in
 * memory and once (every third) after it has gone to the file. */
static void test_records(void)
{
    enum { N = 1000 };
    gma_spill s;
    REQUIRE(gma_spill_open(&s, sizeof(rec), 3) == 0, "spill opened");
    CHECK(s.win == 4);
    for (uint64_t i = 0; i < N; i++) {
        rec *a = gma_spill_push(&s);
        REQUIRE(a != NULL, "record %llu pushed", (unsigned long long)i);
        CHECK(a->key == 0 && a->val == 0); /* zeroed */
        a->key = i;
        a->val = i * 3;
        rec *b = gma_spill_get(&s, i); /* the newest is in memory */
        CHECK(b == a);
        b->tag = 1;
        CHECK(gma_spill_put(&s, i) == 0);
        if (i >= 10 && i % 3 == 0) { /* one long gone to the file */
            rec *o = gma_spill_get(&s, i - 10);
            REQUIRE(o != NULL, "record %llu read back", (unsigned long long)(i - 10));
            CHECK(o->key == i - 10 && o->tag == 1);
            o->val += 1;
            o->tag = 2;
            CHECK(gma_spill_put(&s, i - 10) == 0);
        }
    }
    CHECK(s.flushed > 0 && s.flushed < N);
    CHECK(gma_spill_seal(&s) == 0);
    CHECK(gma_spill_seal(&s) == 0); /* twice: nothing more */
    CHECK(gma_spill_push(&s) == NULL);
    for (uint64_t i = 0; i < N; i++) {
        const rec *a = gma_spill_at(&s, i);
        int changed = i + 10 < N && (i + 10) >= 10 && (i + 10) % 3 == 0;
        CHECK(a->key == i && a->val == i * 3 + (uint64_t)changed && a->tag == (changed ? 2u : 1u),
              "record %llu", (unsigned long long)i);
        if (i % 100 == 0)
            gma_spill_trim(&s);
    }
    gma_spill_close(&s);
}

/* The same records through gma_xsort (runs of run) and gma_msort. */
static void test_sort(size_t n, size_t run)
{
    tc_context("sort %zu in runs of %zu", n, run);
    rec *ref = malloc((n ? n : 1) * sizeof(*ref));
    REQUIRE(ref != NULL, "memory");
    gma_xsort x;
    REQUIRE(gma_xsort_open(&x, sizeof(rec), run, by_key, NULL) == 0, "sort opened");
    unsigned v = 12345;
    for (size_t i = 0; i < n; i++) {
        v = v * 1103515245u + 12345u;
        ref[i] = (rec){ (v >> 16) % 50, i, 0 }; /* many ties */
        CHECK(gma_xsort_add(&x, &ref[i]) == 0);
    }
    CHECK(gma_msort(ref, n, sizeof(*ref), by_key, NULL) == 0);
    CHECK(gma_xsort_begin(&x) == 0);
    CHECK((x.f != NULL) == (n > run)); /* spilled only when a run filled */
    size_t k = 0;
    const rec *q;
    while ((q = gma_xsort_next(&x))) {
        CHECK(k < n && q->key == ref[k].key && q->val == ref[k].val, "element %zu", k);
        k++;
    }
    CHECK(k == n && !x.err);
    gma_xsort_close(&x);
    free(ref);
    tc_context(NULL);
}

/* A big array over GMA_BIG_MIN grows and is dropped from the resident set;
 * its contents stay. */
static void test_big(void)
{
    size_t n = GMA_BIG_MIN / sizeof(uint64_t) + 1000;
    uint64_t *a = gma_big_alloc(n * sizeof(*a));
    REQUIRE(a != NULL, "big array");
    for (size_t i = 0; i < n; i++) {
        CHECK(a[i] == 0, "zeroed at %zu", i);
        a[i] = i * 7;
        gma_big_tick();
    }
    gma_big_trim();
    uint64_t *b = gma_big_realloc(a, n * sizeof(*a), 2 * n * sizeof(*a));
    REQUIRE(b != NULL, "grown");
    size_t bad = 0;
    for (size_t i = 0; i < 2 * n; i++)
        bad += b[i] != (i < n ? i * 7 : 0);
    CHECK(bad == 0, "%zu elements changed", bad);
    gma_big_free(b);
    /* a small one is malloc's, grown into a map */
    uint32_t *c = gma_big_alloc(16 * sizeof(*c));
    REQUIRE(c != NULL, "small array");
    c[15] = 42;
    uint32_t *d = gma_big_realloc(c, 16 * sizeof(*c), GMA_BIG_MIN * 2);
    REQUIRE(d != NULL, "grown big");
    CHECK(d[15] == 42 && d[16] == 0 && d[GMA_BIG_MIN / 2 - 1] == 0);
    gma_big_trim();
    CHECK(d[15] == 42);
    gma_big_free(d);
}

int main(void)
{
    test_records();
    test_sort(0, 7);
    test_sort(5, 7);
    test_sort(7, 7);
    test_sort(1000, 7);
    test_sort(5000, 64);
    test_big();
    return tc_result("gma_test_spill");
}
