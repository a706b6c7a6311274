/*
 * The run-time state that libgmemprof.so's modules truly share: the
 * profiler's life state, the settings, the CUPTI and driver entry points,
 * the trace path and start time, the published schedule epoch, the event
 * ring and the correlation table (the two hand-overs every source writes
 * and the writer reads), and each application thread's block.
 *
 * Everything else belongs to one module, behind its header (see
 * docs/profiler-internals.md, "Modules"). Internal: nothing here is
 * exported from the library.
 */
#ifndef GMEMPROF_PROFILER_GMP_RT_H
#define GMEMPROF_PROFILER_GMP_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "corrtab.h"
#include "cuapi.h"
#include "evring.h"

/* Life of the profiler in this process. */
enum gmp_state {
    GMP_ST_NONE = 0,  /* nothing done yet */
    GMP_ST_LIGHT = 1, /* settings, schedule and ring ready; CUPTI not yet (NVTX came first) */
    GMP_ST_ON = 2,    /* collecting */
    GMP_ST_OFF = 3    /* turned off (setting, error, conflict, fork, after exit) */
};

/* Launch mode (copies.c): the memcpy/memset call in progress on a thread,
 * from its outermost ENTER to its EXIT. */
enum { GMP_CP_NONE = 0, GMP_CP_UNREAD = 1, GMP_CP_READ = 2 };
typedef struct gmp_copy_pend {
    uint8_t state;        /* GMP_CP_*: UNREAD = a copy call whose parameters we cannot read */
    uint8_t is_memset;
    uint8_t src_end, dst_end; /* what the API says of each end (copies.c, CE_*) */
    uint8_t ptsz;         /* a per-thread-default-stream variant */
    uint8_t peer;         /* the API names two devices that differ: PTOP */
    uint8_t dom;          /* the outermost call, for the "not recorded" line */
    uint32_t cbid;
    uint32_t corr;        /* of the call that was read (the outermost one, or its driver call) */
    uint32_t outer_corr;  /* of the outermost call: its EXIT, and no other, ends the copy */
    uint64_t ts;
    uint64_t dst, src;    /* addresses (0 for arrays and symbols) */
    uint64_t bytes, value;
    CUstream stream;
    CUcontext ctx;
} gmp_copy_pend;

/* Per application thread. Only the owning thread touches it. */
#define GMP_RANGE_STACK 64

/* One level of a thread's range stack (nvtx.c): the range's id, 0 for an
 * op range not begun yet, which waits with its name (the framework's,
 * valid while the op runs) and start time. Aligned to 32 bytes, so that an
 * op's begin and end touch one cache line of the stack, not one per field. */
typedef struct gmp_level {
    _Alignas(32) uint64_t id;
    const char *name;
    uint64_t ts;
    uint32_t kind; /* gmt_range_kind */
} gmp_level;
_Static_assert(sizeof(gmp_level) == 32, "two stack levels per cache line");
/* Launch mode's per-thread caches are 4-way set-associative: a direct-mapped
 * one thrashed on the H200 (2,612-3,926 attribute queries for 44
 * kernels in a small GPT loop, the driver's handles colliding), and each
 * miss costs driver calls on the launching thread. */
#define GMP_LWAYS 4
#define GMP_LNAMES 256 /* per-thread kernel-name cache entries, a power of two */
#define GMP_LFUNCS 256 /* per-thread function-resource cache entries, a power of two */
typedef struct gmp_tls {
    uint32_t tid;        /* cached Linux tid (0: not yet) */
    uint32_t rt_depth;   /* runtime API calls in progress on this thread */
    uint32_t rt_gen;     /* cb_gen when rt_depth became non-zero */
    uint32_t cur_epoch;  /* of the outermost call in progress */
    uint64_t seq;        /* kernels launched by this thread */
    uint64_t cur_seq;
    uint64_t cur_range;
    uint32_t nranges;    /* NVTX push depth (may exceed GMP_RANGE_STACK) */
    /* Op ranges begin lazily (nvtx.c): an op's RANGE_BEGIN goes out only
     * when something inside it needs its id. The top `npend` recorded
     * levels wait. */
    uint32_t npend;
    uint32_t sample;     /* callback counter for the cost estimate */
    int internal;        /* a profiler thread: its CUDA calls are not the program's */
    uint32_t pause_corr; /* the context-teardown call that paused sampling (0 none) */
    _Alignas(64) gmp_level lv[GMP_RANGE_STACK];
    uint64_t vmm_ts;     /* ENTER time of the VMM call in progress (VMM calls only) */

    /* GMEMPROF_KERNELS=launch (launch.c): the launch being made
     * (its KERNEL event goes out at the outermost EXIT) and small caches
     * that keep the per-launch work free of CUPTI calls and string copies.
     * The caches belong to module generation lgen (launch.c). */
    uint8_t lpend;       /* lev holds a launch whose outermost EXIT is due */
    uint8_t lctx_ok;     /* lctx/ldev valid */
    uint32_t lgen;
    uint32_t lname_slot; /* lnames slot to fill when lev (carrying a name) is queued; 0 none */
    uint32_t lvictim;    /* round-robin way to replace on a miss */
    uint32_t ldev;
    CUcontext lctx;
    struct {
        CUcontext ctx;
        CUstream h;
        uint32_t ptsz, id;
    } lstream[4];        /* CUstream -> CUPTI stream id, round robin */
    uint32_t lsnext;
    uint64_t lnames[GMP_LNAMES]; /* symbolName pointers whose name this thread has sent, GMP_LWAYS-way sets */
    struct {
        CUfunction f;    /* NULL: empty */
        uint32_t regs, static_smem, local_mem, ok; /* ok 0: the driver would not say */
    } lfuncs[GMP_LFUNCS]; /* the driver's function attributes by CUfunction, GMP_LWAYS-way sets */
    gmp_ev lev;
    gmp_copy_pend cp;    /* launch mode's copy in progress (copies.c) */
} gmp_tls;

typedef struct gmp_rt {
    /* The first cache line: what every hot path reads (the state, the
     * epoch, the clock's line), written rarely. */
    _Alignas(64) _Atomic int state;
    _Atomic int forked;        /* this process is a fork child of a profiled one */
    _Atomic int stopping;      /* exit or signal flush started */
    _Atomic int ctx_seen;      /* a CUDA context was created: the trace is worth keeping */
    /* The latest published schedule epoch (steps.c publishes, with release,
     * after its history entry is filled): every call and event is stamped
     * with it on the hot path. */
    _Atomic uint32_t epoch;
    gmp_clock clock;           /* the trace clock's line (clock.h; the writer fits it) */
    gmp_cuapi api;
    gmp_ring ring;             /* events to the writer (post.h) */
    gmp_corrtab corr;          /* API calls, for the assembler's join */
    _Atomic uint64_t cb_time_ns; /* estimated time in our callbacks (STATS) */
} gmp_rt;

_Static_assert(offsetof(gmp_rt, clock) + sizeof(gmp_clock) <= 64, "the hot fields share one cache line");

extern gmp_rt gmp_g;
extern __thread gmp_tls gmp_t;

/* The settings (inject.c reads them at light init, before any other
 * profiler thread runs), read-only. Modules of the runtime get what they
 * follow as parameters at their init; this view serves the NVTX and
 * PyTorch hooks, which have no init of their own. */
const gmp_config *gmp_settings(void);
/* Sets what gmp_settings() returns: inject.c, once the settings are read. */
void gmp_settings_publish(const gmp_config *cfg);

/* The calling thread's block, its address computed once. gmp_t lives in a
 * dlopen'd library (general-dynamic TLS: every address is a __tls_get_addr
 * call), and GCC, seeing the callees of the callback always get &gmp_t,
 * propagates that constant into them and computes the address again at each
 * use: 22 calls in api_enter (perf on bench/cb_cost.c shows them).
 * The empty asm hides where the pointer comes from, so it is computed once. */
static inline gmp_tls *gmp_self(void)
{
    gmp_tls *t = &gmp_t;
    __asm__("" : "+r"(t));
    return t;
}

/* The trace clock: CLOCK_REALTIME in ns (clock.h: read through the TSC
 * where the kernel's clock is the TSC), the clock CUPTI uses by default on
 * Linux; the library also registers it as CUPTI's timestamp callback, so
 * events stamped here and CUPTI's records share one time line by
 * construction, even before CUPTI is loaded. */
static inline uint64_t gmp_now(void) { return gmp_clock_read(&gmp_g.clock); }

static inline int gmp_on(void)
{
    return atomic_load_explicit(&gmp_g.state, memory_order_relaxed) == GMP_ST_ON;
}
/* ON or LIGHT: NVTX and the in-app API may queue events. */
static inline int gmp_live_state(void)
{
    int s = atomic_load_explicit(&gmp_g.state, memory_order_relaxed);
    return s == GMP_ST_ON || s == GMP_ST_LIGHT;
}

#include <sys/syscall.h>
#include <unistd.h>
static inline uint32_t gmp_tid(gmp_tls *t)
{
    if (__builtin_expect(t->tid == 0, 0))
        t->tid = (uint32_t)syscall(SYS_gettid);
    return t->tid;
}

#endif
