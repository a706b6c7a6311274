/* Unit test of replay/rhist: the recently closed ranges, with a ring of 4
 * closes worked by hand, then many wraps of a ring of 8. */
#include <stdint.h>

#include "rhist.h"

#include "../check.h"

/* 1 when id is kept with value want. */
static int has(const gma_rhist *h, uint64_t id, uint32_t want)
{
    uint32_t v = UINT32_MAX;
    return gma_rhist_get(h, id, &v) && v == want;
}

static int gone(const gma_rhist *h, uint64_t id)
{
    uint32_t v;
    return !gma_rhist_get(h, id, &v);
}

int main(void)
{
    gma_rhist h;
    CHECK(gma_rhist_init(&h, 0) == -1);
    CHECK(gma_rhist_init(&h, 3) == -1, "3 is not a power of two");
    gma_rhist_free(&h);
    REQUIRE(gma_rhist_init(&h, 4) == 0, "init 4");

    /* an id never put: not found, its close takes no slot */
    uint32_t ev = 0;
    CHECK(gone(&h, 7));
    CHECK(gma_rhist_closed(&h, 7, &ev) == 0);
    CHECK(h.next == 0);
    /* id 0 is no range: never kept */
    CHECK(gma_rhist_put(&h, 0, 5) == 0 && gone(&h, 0) && gma_rhist_count(&h) == 0);
    CHECK(gma_rhist_closed(&h, 0, &ev) == 0 && h.next == 0);

    for (uint32_t id = 1; id <= 6; id++)
        CHECK(gma_rhist_put(&h, id, id * 10) == 0);
    CHECK(gma_rhist_count(&h) == 6);
    /* the first 4 closes fill the ring: nothing falls out, all still found */
    for (uint32_t id = 1; id <= 4; id++)
        CHECK(gma_rhist_closed(&h, id, &ev) == 0, "close %u", id);
    for (uint32_t id = 1; id <= 6; id++)
        CHECK(has(&h, id, id * 10), "id %u after 4 closes", id);
    /* the 5th close: 1, closed 4 closes ago, falls out; then 2, oldest first */
    CHECK(gma_rhist_closed(&h, 5, &ev) == 1 && ev == 10);
    CHECK(gone(&h, 1) && has(&h, 2, 20));
    CHECK(gma_rhist_closed(&h, 6, &ev) == 1 && ev == 20);
    CHECK(gone(&h, 2) && has(&h, 3, 30) && has(&h, 6, 60));
    CHECK(gma_rhist_count(&h) == 4); /* ring [5 6 3 4], next slot 2 */

    /* a reused id takes the new value: put again while closed and kept */
    CHECK(gma_rhist_put(&h, 4, 41) == 0 && has(&h, 4, 41));

    /* an id closed twice takes two slots; the first to fall out forgets it */
    CHECK(gma_rhist_put(&h, 7, 70) == 0);
    CHECK(gma_rhist_closed(&h, 7, &ev) == 1 && ev == 30); /* slot 2: 3 out; [5 6 7 4] */
    CHECK(gma_rhist_closed(&h, 7, &ev) == 1 && ev == 41); /* slot 3: 4 out, reused or not; [5 6 7 7] */
    CHECK(gone(&h, 3) && gone(&h, 4) && has(&h, 7, 70));
    CHECK(gma_rhist_closed(&h, 3, &ev) == 0, "3 fell out: its close takes no slot");
    CHECK(gma_rhist_put(&h, 8, 80) == 0 && gma_rhist_closed(&h, 8, &ev) == 1 && ev == 50); /* [8 6 7 7] */
    CHECK(gma_rhist_put(&h, 9, 90) == 0 && gma_rhist_closed(&h, 9, &ev) == 1 && ev == 60); /* [8 9 7 7] */
    CHECK(gma_rhist_put(&h, 10, 100) == 0 && gma_rhist_closed(&h, 10, &ev) == 1 && ev == 70); /* [8 9 10 7] */
    CHECK(gone(&h, 7));
    /* 7's second slot falls out with 7 forgotten already: nothing to recycle */
    ev = 12345;
    CHECK(gma_rhist_put(&h, 11, 110) == 0 && gma_rhist_closed(&h, 11, &ev) == 0 && ev == 12345);
    CHECK(has(&h, 8, 80) && has(&h, 9, 90) && has(&h, 10, 100) && has(&h, 11, 110));
    CHECK(gma_rhist_count(&h) == 4);
    gma_rhist_free(&h);
    CHECK(gma_rhist_count(&h) == 0 && gone(&h, 8));

    /* many wraps of a ring of 8, with two ranges open throughout: after the
     * k-th close, the last 8 closed ids are found and the one before not;
     * the open ones stay whatever the closes */
    REQUIRE(gma_rhist_init(&h, 8) == 0, "init 8");
    const uint64_t outer = 1ull << 40, inner = outer + 1;
    CHECK(gma_rhist_put(&h, outer, 1) == 0 && gma_rhist_put(&h, inner, 2) == 0);
    enum { N = 100000 };
    for (uint64_t k = 1; k <= N; k++) {
        CHECK(gma_rhist_put(&h, k, (uint32_t)(k * 3)) == 0);
        ev = 0;
        int out = gma_rhist_closed(&h, k, &ev);
        if (k <= 8)
            CHECK(out == 0, "close %llu", (unsigned long long)k);
        else
            CHECK(out == 1 && ev == (k - 8) * 3, "close %llu: evicted %u", (unsigned long long)k, ev);
        if (k > 8)
            CHECK(gone(&h, k - 8));
        CHECK(has(&h, k > 7 ? k - 7 : 1, (uint32_t)((k > 7 ? k - 7 : 1) * 3)));
        CHECK(gma_rhist_count(&h) == 2 + (k < 8 ? k : 8));
    }
    CHECK(has(&h, outer, 1) && has(&h, inner, 2));
    CHECK(h.next == N);
    gma_rhist_free(&h);
    return tc_result("analyzer.unit.rhist");
}
