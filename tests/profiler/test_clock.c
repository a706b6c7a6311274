/*
 * The trace clock's line (profiler/clock.c): which machines use the TSC,
 * the fits from pairs given by hand (a 1 GHz TSC, so that a tick is a
 * nanosecond and the expected values can be worked out on paper), then, on
 * x86-64, the line fitted from real readings against the system clock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "../check.h"

#define ONE (1ull << 32) /* mult of a TSC that ticks once per ns */

static uint64_t line_at(gmp_clock *c, uint64_t tsc)
{
    return gmp_clock_map(atomic_load(&c->tsc0), atomic_load(&c->ns0), atomic_load(&c->mult), tsc);
}

static void test_choice(void)
{
    gmp_clock c;
    gmp_clock_fit f;
    const gmp_clock_facts tsc = {"tsc\n", 1, 30}, kvm = {"kvm-clock\n", 1, 40}, early = {"tsc-early\n", 1, 30},
                          slow = {"hpet\n", 1, 1500}, slow_variant = {"hpet\n", 0, 1500},
                          edge = {"kvm-clock", 1, GMP_CLOCK_SLOW_NS - 1}, at = {"kvm-clock", 1, GMP_CLOCK_SLOW_NS};
    gmp_clock_init(&c, &f, GMP_CLOCK_SYSTEM, &tsc);
    CHECK(!f.allowed, "GMEMPROF_CLOCK=system never uses the TSC");
    gmp_clock_init(&c, &f, GMP_CLOCK_AUTO, NULL);
    CHECK(!f.allowed, "auto with no facts known: the system clock");
    gmp_clock_init(&c, &f, GMP_CLOCK_AUTO, &kvm);
    CHECK(!f.allowed, "auto under kvm-clock with a fast clock_gettime: the system clock");
    gmp_clock_init(&c, &f, GMP_CLOCK_AUTO, &early);
    CHECK(!f.allowed, "only the clocksource named exactly tsc");
    gmp_clock_init(&c, &f, GMP_CLOCK_AUTO, &slow_variant);
    CHECK(!f.allowed, "a slow clock_gettime but a TSC that is not invariant: the system clock");
    gmp_clock_init(&c, &f, GMP_CLOCK_AUTO, &edge);
    CHECK(!f.allowed, "a read just under the system call threshold: the system clock");
#if defined(__x86_64__)
    gmp_clock_init(&c, &f, GMP_CLOCK_AUTO, &tsc);
    CHECK(f.allowed, "auto where the kernel keeps time with the TSC");
    gmp_clock_init(&c, &f, GMP_CLOCK_AUTO, &slow);
    CHECK(f.allowed, "auto where clock_gettime is a system call and the TSC invariant");
    gmp_clock_init(&c, &f, GMP_CLOCK_AUTO, &at);
    CHECK(f.allowed, "a read at the threshold counts as slow");
    gmp_clock_init(&c, &f, GMP_CLOCK_TSC, &kvm);
    CHECK(f.allowed, "GMEMPROF_CLOCK=tsc forces it");
    /* this machine's facts: a clocksource read, a measured read cost */
    char buf[64];
    gmp_clock_facts mine;
    gmp_clock_facts_read(&mine, buf, sizeof buf);
    CHECK(mine.clocksource == buf && mine.system_read_ns > 0 && mine.system_read_ns < 1000000,
          "facts: clocksource '%s', clock_gettime %" PRIu64 " ns, invariant TSC %d", buf, mine.system_read_ns,
          mine.tsc_invariant);
#endif
    CHECK_EQ_U64(atomic_load(&c.on), 0); /* reads are clock_gettime's */
    /* not allowed: pairs change nothing */
    gmp_clock_init(&c, &f, GMP_CLOCK_SYSTEM, NULL);
    CHECK_EQ_U64(gmp_clock_fit_pair(&c, &f, 1000, 5000000000ull), 0);
    CHECK_EQ_U64(gmp_clock_fit_pair(&c, &f, 1000 + 100000000, 5100000000ull), 0);
    CHECK_EQ_U64(atomic_load(&c.on), 0);
}

static void test_map(void)
{
    CHECK_EQ_U64(gmp_clock_map(1000, 7000, ONE, 1000), 7000);
    CHECK_EQ_U64(gmp_clock_map(1000, 7000, ONE, 1100), 7100);
    CHECK_EQ_U64(gmp_clock_map(1000, 7000, ONE, 900), 6900);           /* before the anchor */
    CHECK_EQ_U64(gmp_clock_map(0, 7000, ONE, 1000000000000000ull), 1000000000007000ull); /* no overflow */
    CHECK_EQ_U64(gmp_clock_map(0, 0, ONE / 3, 3000), 999);             /* floor of 3000/3 - a 2^-32 */
    CHECK_EQ_U64(gmp_clock_map(0, 0, 3 * ONE, 1000), 3000);            /* 3 ns per tick */
}

/* A 1 GHz TSC: tick t at system time t + 4e9. */
#define T0 1000000000ull
#define N0 5000000000ull

static void fitted(gmp_clock *c, gmp_clock_fit *f)
{
    gmp_clock_init(c, f, GMP_CLOCK_TSC, NULL);
    f->allowed = 1; /* the pure part runs everywhere */
    CHECK_EQ_U64(gmp_clock_fit_pair(c, f, T0, N0), 0);                         /* the first pair */
    CHECK_EQ_U64(gmp_clock_fit_pair(c, f, T0 + 40000000, N0 + 40000000), 0);   /* 40 ms: too soon */
    CHECK_EQ_U64(atomic_load(&c->on), 0);
    CHECK_EQ_U64(gmp_clock_fit_pair(c, f, T0 + 100000000, N0 + 100000000), 1); /* 100 ms: the line */
    CHECK_EQ_U64(atomic_load(&c->on), 1);
}

static void test_first_line(void)
{
    gmp_clock c;
    gmp_clock_fit f;
    fitted(&c, &f);
    CHECK_EQ_U64(atomic_load(&c.mult), ONE);
    CHECK_EQ_U64(atomic_load(&c.tsc0), T0 + 100000000);
    CHECK_EQ_U64(atomic_load(&c.ns0), N0 + 100000000);
    CHECK_EQ_U64(line_at(&c, T0 + 300000000), N0 + 300000000);
    CHECK_EQ_U64(atomic_load(&c.on), 1); /* reads use the line */
    CHECK_EQ_U64(f.fits, 1);
}

static void test_refit(void)
{
    gmp_clock c;
    gmp_clock_fit f;
    fitted(&c, &f);
    /* 50 ms later the system clock is 10 us ahead of the line: the line
     * goes on from where it is (continuous), steeper, so as to meet the
     * system clock, which runs at its measured rate (50,010,000 ns over
     * 50,000,000 ticks), 50 ms later */
    uint64_t t = T0 + 150000000, n = N0 + 150000000 + 10000;
    uint64_t before = line_at(&c, t);
    CHECK_EQ_U64(before, N0 + 150000000);
    CHECK_EQ_U64(gmp_clock_fit_pair(&c, &f, t, n), 2);
    CHECK_EQ_U64(line_at(&c, t), before);
    uint64_t rate = (uint64_t)(((unsigned __int128)50010000 << 32) / 50000000);
    CHECK(atomic_load(&c.mult) > rate, "the slope takes out the difference");
    uint64_t meet = line_at(&c, t + 50000000), sys = n + 50010000;
    CHECK(meet + 2 >= sys && meet <= sys + 2, "meets the system clock: %" PRIu64 " vs %" PRIu64, meet, sys);
    /* increasing across the refit, tick by tick around it */
    uint64_t prev = line_at(&c, t - 5);
    for (uint64_t k = t - 4; k < t + 5; k++) {
        uint64_t v = line_at(&c, k);
        CHECK(v > prev, "increasing at tick %" PRIu64, k);
        prev = v;
    }
}

static void test_clamp_and_step(void)
{
    gmp_clock c;
    gmp_clock_fit f;
    fitted(&c, &f);
    /* 0.9 ms ahead after 50 ms: below a step; the slope is held to
     * 500 ppm, 25 us per 50 ms */
    uint64_t t = T0 + 150000000, n = N0 + 150000000 + 900000;
    CHECK_EQ_U64(gmp_clock_fit_pair(&c, &f, t, n), 2);
    CHECK_EQ_U64(line_at(&c, t), N0 + 150000000);
    uint64_t gain = line_at(&c, t + 50000000) - line_at(&c, t);
    uint64_t dn = 50000000 + 900000; /* the system clock's rate over the interval */
    uint64_t want = dn + 50 * 500; /* 500 ppm of the interval: 500 ns per whole ms of it */
    CHECK(gain + 2 >= want && gain <= want + 2, "clamped: %" PRIu64 " vs %" PRIu64, gain, want);
    /* 2 ms off: a step to the system clock */
    t += 50000000;
    n = line_at(&c, t) + 2000000;
    CHECK_EQ_U64(gmp_clock_fit_pair(&c, &f, t, n), 3);
    CHECK_EQ_U64(atomic_load(&c.ns0), n);
    CHECK_EQ_U64(atomic_load(&c.tsc0), t);
    CHECK_EQ_U64(f.steps, 1);
    /* the system clock set back: the pair starts over, the line stays */
    uint64_t m = atomic_load(&c.mult);
    CHECK_EQ_U64(gmp_clock_fit_pair(&c, &f, t + 60000000, n - 1000000000ull), 0);
    CHECK_EQ_U64(atomic_load(&c.mult), m);
    CHECK_EQ_U64(atomic_load(&c.ns0), n);
}

/* Real readings: the line fitted by the writer's tick follows the system
 * clock and never goes back on one thread. */
static void test_live(void)
{
#if defined(__x86_64__)
    gmp_clock c;
    gmp_clock_fit f;
    gmp_clock_init(&c, &f, GMP_CLOCK_TSC, NULL);
    uint64_t u = gmp_clock_read(&c), v = gmp_clock_system(); /* unfitted: the system clock */
    CHECK(v >= u && v - u < 1000000, "unfitted reads are the system clock's");
    int first = 0;
    for (int i = 0; i < 5; i++) {
        if (gmp_clock_tick(&c, &f) == 1)
            first++;
        struct timespec d = {0, 60000000};
        nanosleep(&d, NULL);
    }
    CHECK_EQ_U64(first, 1);
    REQUIRE(atomic_load(&c.on) == 1);
    /* in each block of 1000 reads, the one whose two line reads are
     * closest around the system clock's (the others may have been
     * preempted in between): how far the line is from the system clock */
    int64_t worst = 0;
    uint64_t prev = 0, back = 0;
    for (int blk = 0; blk < 200; blk++) {
        uint64_t best_w = UINT64_MAX;
        int64_t err = 0;
        for (int i = 0; i < 1000; i++) {
            uint64_t a = gmp_clock_read(&c), s = gmp_clock_system(), b = gmp_clock_read(&c);
            if (a < prev || b < a)
                back++;
            prev = b;
            if (b >= a && b - a < best_w) {
                best_w = b - a;
                err = (int64_t)(s - (a + (b - a) / 2));
            }
        }
        if (err < 0)
            err = -err;
        if (err > worst)
            worst = err;
    }
    printf("TSC line vs CLOCK_REALTIME over 200000 reads: worst %" PRId64 " ns, %" PRIu64 " fits\n", worst, f.fits);
    CHECK(worst < 100000, "within 100 us of the system clock: %" PRId64 " ns", worst);
    CHECK_EQ_U64(back, 0);
#endif
}

int main(void)
{
    test_choice();
    test_map();
    test_first_line();
    test_refit();
    test_clamp_and_step();
    test_live();
    return tc_result("profiler.clock");
}
