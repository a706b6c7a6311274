/*
 * The trace clock's line (clock.h): choosing it, fitting it, publishing it.
 */
#include "clock.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define CLOCKSOURCE_FILE "/sys/devices/system/clocksource/clocksource0/current_clocksource"

static int tsc_is_kernel_clock(const char *clocksource)
{
    return clocksource && strncmp(clocksource, "tsc", 3) == 0 && (clocksource[3] == '\0' || clocksource[3] == '\n');
}

/* Both flags in the first "flags" line of /proc/cpuinfo (every CPU lists
 * the same). */
static int cpu_tsc_invariant(void)
{
    FILE *fp = fopen("/proc/cpuinfo", "re");
    if (!fp)
        return 0;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, fp))
        if (strncmp(line, "flags", 5) == 0)
            found = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc") ? 1 : -1;
    fclose(fp);
    return found > 0;
}

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The median of 7 rounds of 8 reads, warm: a system call costs far more
 * than the spread of a vDSO read. */
static uint64_t system_read_ns(void)
{
    uint64_t r[7];
    for (int k = 0; k < 7; k++) {
        uint64_t a = mono_ns();
        for (int i = 0; i < 8; i++)
            (void)gmp_clock_system();
        r[k] = (mono_ns() - a) / 8;
    }
    for (int i = 1; i < 7; i++) /* insertion sort: 7 values */
        for (int j = i; j > 0 && r[j] < r[j - 1]; j--) {
            uint64_t t = r[j];
            r[j] = r[j - 1];
            r[j - 1] = t;
        }
    return r[3];
}

void gmp_clock_facts_read(gmp_clock_facts *out, char *buf, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (cap) {
        buf[0] = '\0';
        FILE *fp = fopen(CLOCKSOURCE_FILE, "re");
        if (fp) {
            if (!fgets(buf, (int)cap, fp))
                buf[0] = '\0';
            fclose(fp);
        }
        out->clocksource = buf;
    }
    out->tsc_invariant = cpu_tsc_invariant();
    out->system_read_ns = system_read_ns();
}

void gmp_clock_init(gmp_clock *c, gmp_clock_fit *f, int mode, const gmp_clock_facts *facts)
{
    atomic_store(&c->on, 0);
    atomic_store(&c->seq, 0);
    atomic_store(&c->tsc0, 0);
    atomic_store(&c->ns0, 0);
    atomic_store(&c->mult, 0);
    memset(f, 0, sizeof *f);
#if defined(__x86_64__)
    if (mode == GMP_CLOCK_AUTO)
        f->allowed = facts && (tsc_is_kernel_clock(facts->clocksource) ||
                               (facts->tsc_invariant && facts->system_read_ns >= GMP_CLOCK_SLOW_NS));
    else
        f->allowed = mode == GMP_CLOCK_TSC;
#else
    (void)mode;
    (void)facts;
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
