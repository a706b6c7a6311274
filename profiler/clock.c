/*
 * The trace clock's line (clock.h): choosing it, fitting it, publishing it.
 */
#include "clock.h"

#include <stdio.h>
#include <string.h>

#define CLOCKSOURCE_FILE "/sys/devices/system/clocksource/clocksource0/current_clocksource"

static int tsc_is_kernel_clock(const char *clocksource)
{
    char buf[32] = "";
    if (!clocksource) {
        FILE *fp = fopen(CLOCKSOURCE_FILE, "re");
        if (!fp)
            return 0;
        if (!fgets(buf, sizeof buf, fp))
            buf[0] = '\0';
        fclose(fp);
        clocksource = buf;
    }
    return strncmp(clocksource, "tsc", 3) == 0 && (clocksource[3] == '\0' || clocksource[3] == '\n');
}

void gmp_clock_init(gmp_clock *c, gmp_clock_fit *f, int mode, const char *clocksource)
{
    atomic_store(&c->on, 0);
    atomic_store(&c->seq, 0);
    atomic_store(&c->tsc0, 0);
    atomic_store(&c->ns0, 0);
    atomic_store(&c->mult, 0);
    memset(f, 0, sizeof *f);
#if defined(__x86_64__)
    f->allowed = mode == GMP_CLOCK_TSC || (mode == GMP_CLOCK_AUTO && tsc_is_kernel_clock(clocksource));
#else
    (void)mode;
    (void)clocksource;
#endif
}

static void publish(gmp_clock *c, uint64_t tsc0, uint64_t ns0, uint64_t mult)
{
    uint32_t s = atomic_load_explicit(&c->seq, memory_order_relaxed);
    atomic_store_explicit(&c->seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&c->tsc0, tsc0, memory_order_relaxed);
    atomic_store_explicit(&c->ns0, ns0, memory_order_relaxed);
    atomic_store_explicit(&c->mult, mult, memory_order_relaxed);
    atomic_store_explicit(&c->seq, s + 2, memory_order_release);
    atomic_store_explicit(&c->on, 1, memory_order_release);
}

int gmp_clock_fit_pair(gmp_clock *c, gmp_clock_fit *f, uint64_t tsc, uint64_t ns)
{
    if (!f->allowed)
        return 0;
    if (!f->ns || ns <= f->ns || tsc <= f->tsc) { /* the first pair, or the clock went back: start over */
        f->tsc = tsc;
        f->ns = ns;
        return 0;
    }
    uint64_t dn = ns - f->ns, dt = tsc - f->tsc;
    if (dn < GMP_CLOCK_FIT_NS)
        return 0;
    /* ns per tick, in 2^-32 units: the system clock's rate over the interval */
    unsigned __int128 rate = ((unsigned __int128)dn << 32) / dt;
    f->tsc = tsc;
    f->ns = ns;
    if (rate == 0 || rate > UINT64_MAX) /* a TSC slower than 1 per 2^32 ns or faster than 2^32 per ns */
        return 0;
    int what;
    if (!atomic_load_explicit(&c->on, memory_order_relaxed)) {
        publish(c, tsc, ns, (uint64_t)rate);
        what = 1;
    } else {
        uint64_t cur = gmp_clock_map(atomic_load_explicit(&c->tsc0, memory_order_relaxed),
                                     atomic_load_explicit(&c->ns0, memory_order_relaxed),
                                     atomic_load_explicit(&c->mult, memory_order_relaxed), tsc);
        int64_t err = (int64_t)(ns - cur);
        if (err > GMP_CLOCK_STEP_NS || err < -GMP_CLOCK_STEP_NS) {
            publish(c, tsc, ns, (uint64_t)rate);
            f->steps++;
            what = 3;
        } else {
            /* reach the system clock over the next interval of the same
             * length: err/dn more per ns, within MAX_PPM */
            int64_t lim = (int64_t)(dn / 1000000u * GMP_CLOCK_MAX_PPM);
            int64_t e = err > lim ? lim : err < -lim ? -lim : err;
            __int128 m = (__int128)rate + ((__int128)e * (__int128)rate) / (__int128)dn;
            publish(c, tsc, cur, m > 0 ? (uint64_t)m : (uint64_t)rate);
            what = 2;
        }
    }
    f->fits++;
    return what;
}

int gmp_clock_tick(gmp_clock *c, gmp_clock_fit *f)
{
#if defined(__x86_64__)
    if (!f->allowed)
        return 0;
    if (f->ns && gmp_clock_system() - f->ns < GMP_CLOCK_FIT_NS)
        return 0;
    /* the pair whose two TSC reads are closest around the system clock's:
     * a preempted or interrupted try is wide */
    uint64_t best_w = UINT64_MAX, tsc = 0, ns = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t a = __builtin_ia32_rdtsc();
        uint64_t n = gmp_clock_system();
        uint64_t b = __builtin_ia32_rdtsc();
        if (b >= a && b - a < best_w) {
            best_w = b - a;
            tsc = a + (b - a) / 2;
            ns = n;
        }
    }
    return best_w == UINT64_MAX ? 0 : gmp_clock_fit_pair(c, f, tsc, ns);
#else
    (void)c;
    (void)f;
    return 0;
#endif
}
