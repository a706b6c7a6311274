/*
 * The trace clock (gmp_now in gmp_rt.h): CLOCK_REALTIME in nanoseconds,
 * read on every hot path (a block event, an op's start, a launch).
 *
 * Where the kernel keeps time with the TSC itself (its clocksource is
 * "tsc": an invariant counter that the kernel found synchronized across
 * CPUs), a read is one rdtsc mapped to CLOCK_REALTIME by a line: the
 * writer thread fits it every FIT interval (gmp_clock_tick) from pairs of
 * readings, and the hot paths read it from a cache line they share
 * anyway (gmp_g's first). clock_gettime touches the vDSO's code and data
 * page, which a program's own work evicts between two of our events: on
 * the development VM, three cold block events cost about 110 ns less
 * without their clock reads (bench/cb_cost.c; docs/benchmarks.md).
 *
 * The line is continuous and increasing. Each fit starts where the line
 * is at that moment, with the measured rate plus a slope that takes out
 * the difference to the system clock over the next interval, at most
 * MAX_PPM; a difference beyond STEP_NS (the system clock was set) is a
 * step, as the system clock itself made one. Until the first fit (the
 * first FIT interval of the writer), and where the TSC is not the
 * kernel's clock (kvm-clock, another architecture, GMEMPROF_CLOCK=system),
 * a read is clock_gettime.
 */
#ifndef GMEMPROF_PROFILER_CLOCK_H
#define GMEMPROF_PROFILER_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

/* GMEMPROF_CLOCK */
enum gmp_clock_mode {
    GMP_CLOCK_AUTO = 0,  /* the TSC where the kernel's clocksource is tsc, or where the TSC is
                            invariant and clock_gettime leaves the vDSO (gmp_clock_facts) */
    GMP_CLOCK_TSC = 1,   /* the TSC on any x86-64 (tests; a trusted TSC under another clocksource) */
    GMP_CLOCK_SYSTEM = 2 /* clock_gettime always */
};

/* The published line: ns = ns0 + (tsc - tsc0) * mult / 2^32. A seqlock:
 * seq is odd while the writer rewrites it. 32 bytes. */
typedef struct gmp_clock {
    _Atomic uint32_t seq;
    _Atomic uint32_t on; /* a line is fitted: reads use it */
    _Atomic uint64_t tsc0, ns0, mult;
} gmp_clock;

/* The fitting side: the writer thread's alone. */
typedef struct gmp_clock_fit {
    int allowed;          /* the TSC may be used (mode, architecture, clocksource) */
    uint64_t tsc, ns;     /* the previous pair (ns 0: none yet) */
    uint64_t fits, steps; /* lines published, of which steps */
} gmp_clock_fit;

#define GMP_CLOCK_FIT_NS 50000000ull  /* a pair is taken at least this far from the previous one */
#define GMP_CLOCK_STEP_NS 1000000ll   /* a larger difference to the system clock is a step */
#define GMP_CLOCK_MAX_PPM 500         /* the correcting slope, at most (NTP's own slew limit) */

static inline uint64_t gmp_clock_system(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The line's value at tsc (a TSC before tsc0 maps below ns0). */
static inline uint64_t gmp_clock_map(uint64_t tsc0, uint64_t ns0, uint64_t mult, uint64_t tsc)
{
    __int128 d = (__int128)(int64_t)(tsc - tsc0) * (__int128)mult;
    return (uint64_t)((__int128)ns0 + (d >> 32));
}

static inline uint64_t gmp_clock_read(gmp_clock *c)
{
#if defined(__x86_64__)
    if (atomic_load_explicit(&c->on, memory_order_acquire)) {
        for (;;) {
            uint32_t s = atomic_load_explicit(&c->seq, memory_order_acquire);
            uint64_t t0 = atomic_load_explicit(&c->tsc0, memory_order_relaxed);
            uint64_t n0 = atomic_load_explicit(&c->ns0, memory_order_relaxed);
            uint64_t m = atomic_load_explicit(&c->mult, memory_order_relaxed);
            uint64_t tsc = __builtin_ia32_rdtsc();
            atomic_thread_fence(memory_order_acquire);
            if (!(s & 1u) && atomic_load_explicit(&c->seq, memory_order_relaxed) == s)
                return gmp_clock_map(t0, n0, m, tsc);
        }
    }
#endif
    return gmp_clock_system();
}

/* What GMP_CLOCK_AUTO decides on. Where the kernel keeps time with another
 * clocksource than the TSC (kvm-clock, hpet, a TSC it marked unstable),
 * clock_gettime may leave the vDSO for a system call: about 1 us against
 * 20-60 ns, and the profiler reads the clock at every op, block and launch.
 * There an invariant TSC (constant_tsc and nonstop_tsc: one rate, through
 * sleep states) fitted to CLOCK_REALTIME, as torch.profiler's approximate
 * clock does, is read instead. */
typedef struct gmp_clock_facts {
    const char *clocksource; /* the kernel's current one, e.g. "tsc\n", "kvm-clock" */
    int tsc_invariant;       /* /proc/cpuinfo's flags have constant_tsc and nonstop_tsc */
    uint64_t system_read_ns; /* one clock_gettime(CLOCK_REALTIME), the median of a few */
} gmp_clock_facts;
#define GMP_CLOCK_SLOW_NS 250u /* a read slower than this is taken for a system call */

/* The facts of this machine: the clocksource into buf (cap bytes). */
void gmp_clock_facts_read(gmp_clock_facts *out, char *buf, size_t cap);

/* Resets both sides: reads go to clock_gettime until the first fit. mode
 * is a gmp_clock_mode; facts what AUTO decides on (gmp_clock_facts_read;
 * NULL: none known, AUTO keeps clock_gettime). Pure but for c. */
void gmp_clock_init(gmp_clock *c, gmp_clock_fit *f, int mode, const gmp_clock_facts *facts);

/* One pair of readings (the TSC and CLOCK_REALTIME at the same moment)
 * into the line. Pure but for publishing into c: what happened is
 * returned, 0 nothing (too close to the previous pair, or not allowed),
 * 1 the first line, 2 a refit, 3 a step. */
int gmp_clock_fit_pair(gmp_clock *c, gmp_clock_fit *f, uint64_t tsc, uint64_t ns);

/* The writer's tick: takes a pair when FIT_NS have passed, and fits. */
int gmp_clock_tick(gmp_clock *c, gmp_clock_fit *f);

#endif
