/*
 * The failures' consumer (analyzer/views/oom.c): registered on every replay, it
 * takes an OOM record and counts the LIVE records after it; the view the
 * printers take; and the bytes as the section writes them.
 */
#include "oom.h"
#include "consumer.h"

#include "../check.h"
#include "view.h"

static void test_bytes(void)
{
    char b[32];
    CHECK_STR(gma_oom_bytes(0, b, sizeof b), "0 B");
    CHECK_STR(gma_oom_bytes(1023, b, sizeof b), "1023 B");
    CHECK_STR(gma_oom_bytes(1536, b, sizeof b), "1.5 KiB");
    CHECK_STR(gma_oom_bytes(40ull << 30, b, sizeof b), "40.0 GiB");
    /* TiB is the largest unit: 2048 TiB */
    CHECK_STR(gma_oom_bytes(2048ull << 40, b, sizeof b), "2048.0 TiB");
}

static int rec(gma_replay *r, gmt_record *x) { return gma_replay_record(r, x); }

/* A signal's dump (no request): 2 LIVE records follow, 4096 B of cudaMalloc
 * and a framework block of 8192 B, which the count takes and the bytes
 * leave out (the record's live_bytes are those of non-framework records). */
static void test_consumer(void)
{
    gma_opts o;
    memset(&o, 0, sizeof o);
    o.window = o.step = o.device = -1;
    gma_replay r;
    REQUIRE(gma_replay_open(&r, &o, "-") == 0);
    gma_oom_view v;
    REQUIRE(gma_oom_view_build(&v, &r) == 0);
    CHECK(v.n == 0); /* no failure yet */
    CHECK(r.ncons == 0); /* and the default run stays plain */
    gmt_record x;
    memset(&x, 0, sizeof x);
    x.type = GMT_REC_OOM;
    x.u.oom.cause = GMT_OOM_SIGNAL;
    x.u.oom.dump = 1;
    x.u.oom.step = 5;
    x.u.oom.live_count = 2;
    x.u.oom.live_bytes = 4096;
    REQUIRE(rec(&r, &x) == 0);
    memset(&x, 0, sizeof x);
    x.type = GMT_REC_LIVE;
    x.u.live.bytes = 4096;
    x.u.live.source = GMT_SRC_MALLOC;
    REQUIRE(rec(&r, &x) == 0);
    x.u.live.bytes = 8192;
    x.u.live.source = GMT_SRC_FRAMEWORK;
    x.u.live.address = 0x1000;
    REQUIRE(rec(&r, &x) == 0);
    REQUIRE(gma_oom_view_build(&v, &r) == 0);
    REQUIRE(v.n == 1);
    CHECK_EQ_U64(v.s[0].f->o.step, 5);
    CHECK_EQ_U64(v.s[0].f->seen_count, 2);
    CHECK_EQ_U64(v.s[0].f->seen_bytes, 4096);
    CHECK(v.s[0].why.n == 0); /* a signal's dump: no failure to explain */
    gma_oom_view_free(&v);
    CHECK(v.n == 0 && v.s == NULL);
    gma_replay_free(&r);
}

int main(void)
{
    test_bytes();
    test_consumer();
    return tc_result("analyzer.unit.oom");
}
