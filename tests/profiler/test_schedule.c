/*
 * The step window state machine against torch.profiler.schedule semantics.
 * Every expected sequence below is written out by hand from the rule
 * "skip_first NONE steps, then cycles of wait WAIT / warmup WARMUP / active
 * ACTIVE, repeat times (0: forever), then DONE" — not computed by code.
 * Letters: N none, W wait, U warmup, A active, D done.
 */
#include <stdlib.h>

#include "schedule.h"
#include "../check.h"

#define PH GMP_SCHED_EV_PHASE
#define WB GMP_SCHED_EV_WINDOW_BEGIN
#define WE GMP_SCHED_EV_WINDOW_END
#define CB GMP_SCHED_EV_COLLECT_BEGIN
#define CE GMP_SCHED_EV_COLLECT_END

static char letter(gmt_phase p)
{
    switch (p) {
    case GMT_PHASE_NONE: return 'N';
    case GMT_PHASE_WAIT: return 'W';
    case GMT_PHASE_WARMUP: return 'U';
    case GMT_PHASE_ACTIVE: return 'A';
    case GMT_PHASE_DONE: return 'D';
    default: return '?';
    }
}

static gmp_sched_spec parse_ok(const char *text)
{
    gmp_sched_spec sp;
    char err[256];
    memset(&sp, 0xAB, sizeof sp);
    int rc = gmp_sched_parse(text, &sp, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "parse('%s') failed: %s\n", text, err);
    CHECK(rc == 0);
    return sp;
}

/* Runs `n` steps of `text` and returns the phase letters of steps 0..n-1.
 * Also checks the invariants every transition must keep. */
static const char *phases(const char *text, int n, unsigned *ev_out, uint64_t *windows)
{
    static char buf[128];
    gmp_sched_spec sp = parse_ok(text);
    gmp_sched s;
    unsigned ev = gmp_sched_init(&s, &sp, 0);
    for (int i = 0; i < n; i++) {
        if (i > 0) {
            gmt_phase before = s.phase;
            ev = gmp_sched_step(&s);
            CHECK(!!(ev & PH) == (before != s.phase));
        }
        if (ev_out)
            ev_out[i] = ev;
        CHECK_EQ_U64(s.step, (uint64_t)i);
        CHECK(s.in_window == (s.phase == GMT_PHASE_ACTIVE));
        CHECK(gmp_sched_collects(&s) == (s.phase == GMT_PHASE_WARMUP || s.phase == GMT_PHASE_ACTIVE));
        buf[i] = letter(s.phase);
    }
    buf[n] = '\0';
    if (windows)
        *windows = s.window;
    return buf;
}

static void test_step_sequences(void)
{
    unsigned ev[64];
    uint64_t w;

    /* The example, repeat omitted -> one cycle. */
    CHECK_STR(phases("wait=2,warmup=1,active=3", 10, ev, &w), "WWUAAADDDD");
    CHECK_EQ_U64(w, 1);
    CHECK_EQ_U64(ev[0], PH);           /* NONE -> WAIT */
    CHECK_EQ_U64(ev[1], 0);
    CHECK_EQ_U64(ev[2], PH | CB);      /* kernels from warmup on */
    CHECK_EQ_U64(ev[3], PH | WB);
    CHECK_EQ_U64(ev[4], 0);
    CHECK_EQ_U64(ev[5], 0);
    CHECK_EQ_U64(ev[6], PH | WE | CE); /* ACTIVE -> DONE */
    CHECK_EQ_U64(ev[7], 0);

    /* skip_first and two cycles. */
    CHECK_STR(phases("skip_first=2,wait=1,warmup=1,active=2,repeat=2", 12, ev, &w), "NNWUAAWUAADD");
    CHECK_EQ_U64(w, 2);
    CHECK_EQ_U64(ev[0], 0); /* step 0 is NONE: nothing changed */
    CHECK_EQ_U64(ev[2], PH);
    CHECK_EQ_U64(ev[4], PH | WB);
    CHECK_EQ_U64(ev[6], PH | WE | CE);
    CHECK_EQ_U64(ev[7], PH | CB);
    CHECK_EQ_U64(ev[8], PH | WB);
    CHECK_EQ_U64(ev[10], PH | WE | CE);

    /* Same cycle positional with 5 numbers. */
    CHECK_STR(phases("2,1,1,2,2", 12, NULL, NULL), "NNWUAAWUAADD");

    /* repeat=0: forever, no warmup, active 1. */
    CHECK_STR(phases("wait=1,warmup=0,active=1,repeat=0", 12, ev, &w), "WAWAWAWAWAWA");
    CHECK_EQ_U64(w, 6);
    CHECK_EQ_U64(ev[1], PH | WB | CB); /* no warmup: collection starts with the window */
    CHECK_EQ_U64(ev[2], PH | WE | CE);

    /* Back-to-back cycles (wait=0, warmup=0): one window per cycle, as
     * torch.profiler saves a trace per cycle. */
    CHECK_STR(phases("0,0,2,2", 6, ev, &w), "AAAADD");
    CHECK_EQ_U64(w, 2);
    CHECK_EQ_U64(ev[0], PH | WB | CB);
    CHECK_EQ_U64(ev[1], 0);
    CHECK_EQ_U64(ev[2], WE | WB); /* same phase, new window */
    CHECK_EQ_U64(ev[3], 0);
    CHECK_EQ_U64(ev[4], PH | WE | CE);

    /* Warmup right after active (wait=0): collection never stops. */
    CHECK_STR(phases("0,1,1,0", 6, ev, &w), "UAUAUA");
    CHECK_EQ_U64(w, 3);
    CHECK_EQ_U64(ev[0], PH | CB);
    CHECK_EQ_U64(ev[1], PH | WB);
    CHECK_EQ_U64(ev[2], PH | WE);

    /* active=1, repeat=1, nothing else. */
    CHECK_STR(phases("active=1", 4, ev, &w), "ADDD");
    CHECK_EQ_U64(w, 1);
    CHECK_EQ_U64(ev[1], PH | WE | CE);

    /* skip_first with an immediate active step. */
    CHECK_STR(phases("1,0,0,1,1", 4, NULL, &w), "NADD");
    CHECK_EQ_U64(w, 1);

    /* repeat=1 written out equals the default. */
    CHECK_STR(phases("2,1,3,1", 10, NULL, NULL), "WWUAAADDDD");
    CHECK_STR(phases("2,1,3", 10, NULL, NULL), "WWUAAADDDD");

    /* Long waits, three cycles. */
    CHECK_STR(phases("wait=3,warmup=2,active=1,repeat=3", 20, NULL, &w), "WWWUUAWWWUUAWWWUUADD");
    CHECK_EQ_U64(w, 3);
}

static void test_window_numbers_and_finish(void)
{
    gmp_sched s;
    gmp_sched_spec sp = parse_ok("wait=1,warmup=1,active=2,repeat=0");
    CHECK_EQ_U64(gmp_sched_init(&s, &sp, 0), PH);
    CHECK_EQ_U64(s.window, 0);
    gmp_sched_step(&s);                        /* 1: warmup */
    CHECK_EQ_U64(gmp_sched_step(&s), PH | WB); /* 2: active, window 0 begins */
    CHECK_EQ_U64(s.window, 1);
    CHECK(s.in_window);
    /* Finish inside the window: it closes, collection stops, DONE is final. */
    CHECK_EQ_U64(gmp_sched_finish(&s), PH | WE | CE);
    CHECK(!s.in_window);
    CHECK(s.phase == GMT_PHASE_DONE);
    CHECK(!gmp_sched_collects(&s));
    CHECK_EQ_U64(gmp_sched_step(&s), 0);
    CHECK_EQ_U64(s.step, 3); /* steps are still counted */
    CHECK(s.phase == GMT_PHASE_DONE);
    CHECK_EQ_U64(gmp_sched_finish(&s), 0);

    /* Finish in warmup: collection stops, no window was open. */
    gmp_sched_init(&s, &sp, 0);
    gmp_sched_step(&s);
    CHECK(s.phase == GMT_PHASE_WARMUP);
    CHECK_EQ_U64(gmp_sched_finish(&s), PH | CE);

    /* Finish during skip_first. */
    sp = parse_ok("skip_first=5,active=1");
    CHECK_EQ_U64(gmp_sched_init(&s, &sp, 0), 0);
    CHECK_EQ_U64(gmp_sched_finish(&s), PH);

    /* tick and capture do nothing to a step schedule. */
    sp = parse_ok("active=2");
    CHECK_EQ_U64(gmp_sched_init(&s, &sp, 0), PH | WB | CB);
    CHECK_EQ_U64(gmp_sched_tick(&s, 1000000000000ull), 0);
    CHECK_EQ_U64(gmp_sched_capture(&s, 0), 0);
    CHECK(s.phase == GMT_PHASE_ACTIVE);
}

static void test_whole(void)
{
    gmp_sched s;
    gmp_sched_spec sp = parse_ok("");
    CHECK(sp.kind == GMP_SCHED_WHOLE);
    CHECK_EQ_U64(gmp_sched_init(&s, &sp, 77), PH | WB | CB);
    CHECK(s.phase == GMT_PHASE_ACTIVE && s.in_window && s.window == 1);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_U64(gmp_sched_step(&s), 0);
    CHECK_EQ_U64(s.step, 5);
    CHECK_EQ_U64(gmp_sched_tick(&s, 1000), 0);
    CHECK_EQ_U64(gmp_sched_capture(&s, 0), 0);
    CHECK_EQ_U64(gmp_sched_finish(&s), PH | WE | CE);
    CHECK_EQ_U64(gmp_sched_finish(&s), 0);
    /* A NULL spec is the whole run too. */
    CHECK_EQ_U64(gmp_sched_init(&s, NULL, 0), PH | WB | CB);
    CHECK(s.spec.kind == GMP_SCHED_WHOLE);
}

static void test_time(void)
{
    const uint64_t S = 1000000000ull, t0 = 5000 * S;
    gmp_sched s;
    gmp_sched_spec sp = parse_ok("delay=2s,duration=3s");
    CHECK(sp.kind == GMP_SCHED_TIME);
    CHECK_EQ_U64(sp.delay_ns, 2 * S);
    CHECK_EQ_U64(sp.duration_ns, 3 * S);
    CHECK_EQ_U64(gmp_sched_init(&s, &sp, t0), PH);
    CHECK(s.phase == GMT_PHASE_WAIT);
    CHECK_EQ_U64(gmp_sched_tick(&s, t0 - 10), 0);        /* clock behind start: still waiting */
    CHECK_EQ_U64(gmp_sched_tick(&s, t0 + 2 * S - 1), 0); /* 1 ns before the delay */
    CHECK_EQ_U64(gmp_sched_step(&s), 0);                 /* steps only count */
    CHECK_EQ_U64(s.step, 1);
    CHECK_EQ_U64(gmp_sched_tick(&s, t0 + 2 * S), PH | WB | CB);
    CHECK_EQ_U64(s.window, 1);
    CHECK_EQ_U64(gmp_sched_tick(&s, t0 + 5 * S - 1), 0);
    CHECK_EQ_U64(gmp_sched_tick(&s, t0 + 5 * S), PH | WE | CE);
    CHECK(s.phase == GMT_PHASE_DONE);
    CHECK_EQ_U64(gmp_sched_tick(&s, t0 + 100 * S), 0);
    CHECK_EQ_U64(gmp_sched_finish(&s), 0);

    /* duration 0: to the end; delay 0: active from the start. */
    sp = parse_ok("delay=0");
    CHECK_EQ_U64(sp.duration_ns, 0);
    CHECK_EQ_U64(gmp_sched_init(&s, &sp, t0), PH | WB | CB);
    CHECK_EQ_U64(gmp_sched_tick(&s, t0 + 1000000 * S), 0);
    CHECK_EQ_U64(gmp_sched_finish(&s), PH | WE | CE);

    /* A tick that jumps past the whole active span opens no window. */
    sp = parse_ok("delay=1s,duration=1s");
    gmp_sched_init(&s, &sp, t0);
    CHECK_EQ_U64(gmp_sched_tick(&s, t0 + 3 * S), PH);
    CHECK(s.phase == GMT_PHASE_DONE);
    CHECK_EQ_U64(s.window, 0);

    /* Units and fractions. */
    sp = parse_ok("duration=1.5s, delay = 250ms");
    CHECK_EQ_U64(sp.delay_ns, 250000000ull);
    CHECK_EQ_U64(sp.duration_ns, 1500000000ull);
    sp = parse_ok("delay=7");
    CHECK_EQ_U64(sp.delay_ns, 7 * S);
    sp = parse_ok("delay=10us,duration=123ns");
    CHECK_EQ_U64(sp.delay_ns, 10000);
    CHECK_EQ_U64(sp.duration_ns, 123);
    sp = parse_ok("delay=0.000000001s,duration=.5ms");
    CHECK_EQ_U64(sp.delay_ns, 1);
    CHECK_EQ_U64(sp.duration_ns, 500000);
    sp = parse_ok("delay=2 s");
    CHECK_EQ_U64(sp.delay_ns, 2 * S);
}

static void test_capture(void)
{
    gmp_sched s;
    gmp_sched_spec sp = parse_ok("capture");
    CHECK(sp.kind == GMP_SCHED_CAPTURE);
    CHECK(parse_ok("CAPTURE").kind == GMP_SCHED_CAPTURE);
    CHECK(parse_ok(" cudaProfilerApi ").kind == GMP_SCHED_CAPTURE);
    CHECK_EQ_U64(gmp_sched_init(&s, &sp, 0), PH);
    CHECK(s.phase == GMT_PHASE_WAIT && !gmp_sched_collects(&s));
    CHECK_EQ_U64(gmp_sched_capture(&s, 0), 0); /* stop while stopped */
    CHECK_EQ_U64(gmp_sched_capture(&s, 1), PH | WB | CB);
    CHECK_EQ_U64(gmp_sched_capture(&s, 1), 0); /* start while started */
    CHECK_EQ_U64(gmp_sched_step(&s), 0);
    CHECK_EQ_U64(gmp_sched_capture(&s, 0), PH | WE | CE);
    CHECK_EQ_U64(gmp_sched_capture(&s, 1), PH | WB | CB);
    CHECK_EQ_U64(s.window, 2);
    CHECK_EQ_U64(gmp_sched_tick(&s, 99), 0);
    CHECK_EQ_U64(gmp_sched_finish(&s), PH | WE | CE);
    CHECK_EQ_U64(gmp_sched_capture(&s, 1), 0); /* after finish nothing reopens */
    CHECK_EQ_U64(s.window, 2);
}

static void test_parse_forms(void)
{
    gmp_sched_spec sp;
    sp = parse_ok(" Active = 3 , WAIT=2,warmup=1 ");
    CHECK(sp.kind == GMP_SCHED_STEPS);
    CHECK_EQ_U64(sp.skip_first, 0);
    CHECK_EQ_U64(sp.wait, 2);
    CHECK_EQ_U64(sp.warmup, 1);
    CHECK_EQ_U64(sp.active, 3);
    CHECK_EQ_U64(sp.repeat, 1); /* omitted repeat: one cycle */
    sp = parse_ok("repeat=0,active=1");
    CHECK_EQ_U64(sp.repeat, 0);
    sp = parse_ok("4,0,2,5");
    CHECK_EQ_U64(sp.wait, 4);
    CHECK_EQ_U64(sp.warmup, 0);
    CHECK_EQ_U64(sp.active, 2);
    CHECK_EQ_U64(sp.repeat, 5);
    sp = parse_ok("10,1,2,3,4");
    CHECK_EQ_U64(sp.skip_first, 10);
    CHECK_EQ_U64(sp.wait, 1);
    CHECK_EQ_U64(sp.warmup, 2);
    CHECK_EQ_U64(sp.active, 3);
    CHECK_EQ_U64(sp.repeat, 4);
    CHECK(parse_ok("whole").kind == GMP_SCHED_WHOLE);
    CHECK(parse_ok("   ").kind == GMP_SCHED_WHOLE);
    CHECK(gmp_sched_parse(NULL, &sp, NULL, 0) == 0 && sp.kind == GMP_SCHED_WHOLE);
    sp = parse_ok("active=1000000000000");
    CHECK_EQ_U64(sp.active, 1000000000000ull);
}

/* Each bad text fails, leaves the spec alone, and the message carries the
 * listed pieces (what was wrong and what is accepted). */
static void bad(const char *text, const char *part1, const char *part2)
{
    gmp_sched_spec sp, before;
    char err[256];
    memset(&sp, 0x5A, sizeof sp);
    before = sp;
    CHECK(gmp_sched_parse(text, &sp, err, sizeof err) == -1);
    CHECK(memcmp(&sp, &before, sizeof sp) == 0);
    CHECK(strlen(err) > 10);
    CHECK_HAS(err, part1);
    if (part2)
        CHECK_HAS(err, part2);
}

static void test_parse_errors(void)
{
    bad("wait=2", "no active=N", "wait=2,warmup=1,active=3");
    bad("wait=1,active=0", "active=0", "at least 1");
    bad("0,0,0", "active=0", NULL);
    bad("wait=x,active=1", "wait='x'", "whole number");
    bad("wait=-1,active=1", "wait='-1'", NULL);
    bad("wait=1.5,active=1", "wait='1.5'", NULL);
    bad("wait=10000000000000,active=1", "wait='10000000000000'", "0..1000000000000");
    bad("foo=1,active=1", "unknown key 'foo'", "skip_first, wait, warmup, active, repeat");
    bad("skip_first_wait=1,active=1", "skip_first_wait", "skip_first");
    bad("wait=1,wait=2,active=1", "'wait' is given twice", NULL);
    bad("2,1", "2 number", "wait,warmup,active");
    bad("3", "1 number", NULL);
    bad("1,2,3,4,5,6", "more than 5", NULL);
    bad("2,,3", "empty field", NULL);
    bad("2,1,3,", "empty field", NULL);
    bad("wait=1,2,3", "mixes key=value and positional", NULL);
    bad("2,x,3", "'x' is not a whole number", "wait=2,warmup=1,active=3");
    bad("delay=5s,active=1", "mixes step keys", "time");
    bad("delay=5x", "delay='5x' is not a duration", "ms");
    bad("delay=", "delay='' is not a duration", NULL);
    bad("duration=1.5ns", "duration='1.5ns'", NULL);
    bad("delay=0.0000000001s", "delay=", NULL);
    bad("delay=99999999999s", "delay=", "10000000s");
    bad("delay=5s,delay=6s", "given twice", NULL);
    bad("sometimes", "'sometimes' is not a whole number", "capture");
    bad("=3", "unknown key ''", NULL);

    /* A tiny error buffer is filled and terminated, never overrun. */
    char small[9];
    gmp_sched_spec sp;
    memset(small, 'Z', sizeof small);
    CHECK(gmp_sched_parse("bogus=1", &sp, small, 8) == -1);
    CHECK(small[7] == '\0' && small[8] == 'Z');
    CHECK(gmp_sched_parse("bogus=1", &sp, NULL, 0) == -1);
    CHECK(gmp_sched_parse("active=1", NULL, small, 8) == -1);
}

static void test_describe(void)
{
    static const char *const texts[] = {
        "",        "capture", "wait=2,warmup=1,active=3", "10,1,2,3,4", "repeat=0,active=1",
        "delay=5s,duration=10s", "delay=250ms", "delay=1.5s,duration=7us", "duration=123ns",
    };
    static const char *const expect[] = {
        "whole",
        "capture",
        "skip_first=0,wait=2,warmup=1,active=3,repeat=1",
        "skip_first=10,wait=1,warmup=2,active=3,repeat=4",
        "skip_first=0,wait=0,warmup=0,active=1,repeat=0",
        "delay=5s,duration=10s",
        "delay=250ms,duration=0s",
        "delay=1500ms,duration=7us",
        "delay=0s,duration=123ns",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char out[160];
        gmp_sched_spec a = parse_ok(texts[i]), b;
        size_t n = gmp_sched_describe(&a, out, sizeof out);
        CHECK_STR(out, expect[i]);
        CHECK_EQ_U64(n, strlen(expect[i]));
        /* Round trip: the description parses to the same schedule. */
        b = parse_ok(out);
        CHECK(a.kind == b.kind && a.skip_first == b.skip_first && a.wait == b.wait &&
              a.warmup == b.warmup && a.active == b.active && a.repeat == b.repeat &&
              a.delay_ns == b.delay_ns && a.duration_ns == b.duration_ns);
    }
    char tiny[6];
    gmp_sched_spec sp = parse_ok("wait=2,warmup=1,active=3");
    CHECK_EQ_U64(gmp_sched_describe(&sp, tiny, sizeof tiny), strlen(expect[2]));
    CHECK_STR(tiny, "skip_");
    CHECK_EQ_U64(gmp_sched_describe(&sp, NULL, 0), strlen(expect[2]));
}

int main(void)
{
    test_step_sequences();
    test_window_numbers_and_finish();
    test_whole();
    test_time();
    test_capture();
    test_parse_forms();
    test_parse_errors();
    test_describe();
    return tc_result("test_schedule");
}
