/*
 * Run-time state of libgmemprof.so shared by its modules:
 *   inject.c   entry points, init, exit/signal/fork handling, the in-app API
 *   nvtx.c     the NVTX injection (export table handlers)
 *   collect.c  CUPTI: subscription, callbacks, activity buffers, the window
 *              transitions (schedule glue)
 *   copies.c   launch mode's memcpy/memset records, from their API calls
 *   wthread.c  the writer thread: the only owner of the trace writer, the
 *              string table and the live-allocation table
 * Internal: nothing here is exported from the library.
 */
#ifndef GMEMPROF_PROFILER_GMP_RT_H
#define GMEMPROF_PROFILER_GMP_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "corrtab.h"
#include "cuapi.h"
#include "evring.h"
#include "gmt_io.h"
#include "schedule.h"

#define GMP_HIDDEN __attribute__((visibility("hidden")))

/* Life of the profiler in this process. */
enum gmp_state {
    GMP_ST_NONE = 0,  /* nothing done yet */
    GMP_ST_LIGHT = 1, /* settings, schedule and ring ready; CUPTI not yet (NVTX came first) */
    GMP_ST_ON = 2,    /* collecting */
    GMP_ST_OFF = 3    /* turned off (setting, error, conflict, fork, after exit) */
};

/* API families: what kind of CUDA call a correlation id belongs to. */
enum gmp_fam {
    GMP_FAM_NONE = 0,
    GMP_FAM_MALLOC,       /* cudaMalloc, cuMemAlloc */
    GMP_FAM_PITCH,        /* cudaMallocPitch/3D/Array, cuMemAllocPitch, cuArrayCreate */
    GMP_FAM_HOST,         /* cudaMallocHost/HostAlloc, cuMemHostAlloc/AllocHost */
    GMP_FAM_MANAGED,      /* cudaMallocManaged, cuMemAllocManaged */
    GMP_FAM_ASYNC,        /* cudaMallocAsync/FromPoolAsync, cuMemAllocAsync/FromPoolAsync */
    GMP_FAM_FREE,         /* cudaFree, cuMemFree, array frees */
    GMP_FAM_FREE_HOST,    /* cudaFreeHost, cuMemFreeHost */
    GMP_FAM_FREE_ASYNC,   /* cudaFreeAsync, cuMemFreeAsync */
    GMP_FAM_VMM_CREATE,   /* cuMemCreate */
    GMP_FAM_VMM_RELEASE,  /* cuMemRelease */
    GMP_FAM_VMM_MAP,      /* cuMemMap */
    GMP_FAM_VMM_UNMAP,    /* cuMemUnmap */
    GMP_FAM_VMM_RESERVE,  /* cuMemAddressReserve */
    GMP_FAM_VMM_ADDRFREE, /* cuMemAddressFree */
    GMP_FAM_LAUNCH,       /* kernel launches */
    GMP_FAM_GRAPH,        /* graph launches */
    GMP_FAM_MEMCPY,
    GMP_FAM_MEMSET,
    GMP_FAM_PROF_START,   /* cudaProfilerStart, cuProfilerStart */
    GMP_FAM_PROF_STOP,
    GMP_FAM_RESET,        /* cudaDeviceReset, cuDevicePrimaryCtxReset */
    GMP_FAM_CTX_DESTROY,  /* cuCtxDestroy, cuDevicePrimaryCtxRelease */
    GMP_FAM_COUNT_
};

static inline int gmp_fam_is_vmm(unsigned f) { return f >= GMP_FAM_VMM_CREATE && f <= GMP_FAM_VMM_ADDRFREE; }
/* Families whose callbacks are on only while kernels are collected. */
static inline int gmp_fam_is_collect(unsigned f)
{
    return f == GMP_FAM_LAUNCH || f == GMP_FAM_GRAPH || f == GMP_FAM_MEMCPY || f == GMP_FAM_MEMSET;
}

#define GMP_MAX_DEVICES 64

typedef struct gmp_devinfo {
    _Atomic int ready;     /* fields below are filled (release; by the writer) */
    uint64_t total_mem, sm_count, cc_major, cc_minor;
    uint8_t uuid[16];
    char name[256];
    CUcontext ctx;         /* a live context of this device, for cuMemGetInfo; dev_lock */
} gmp_devinfo;

/* One schedule transition. Epoch 0 is gmp_sched_init; every later step,
 * capture edge or time tick that the schedule sees makes the next epoch.
 * Application threads stamp every API call and event with the current epoch,
 * so the writer knows exactly which step and phase each record belongs to,
 * however late it arrives. */
#define GMP_EPOCH_HIST 4096u
enum gmp_tr_kind { GMP_TR_INIT = 0, GMP_TR_STEP = 1, GMP_TR_CAPTURE = 2, GMP_TR_TICK = 3 };

typedef struct gmp_epoch_info {
    uint32_t epoch;
    uint32_t ev;       /* GMP_SCHED_EV_* */
    uint64_t ts;
    uint64_t step;     /* step number from this epoch on */
    uint64_t window;   /* sched.window after the transition (windows begun) */
    uint8_t phase;     /* gmt_phase from this epoch on */
    uint8_t source;    /* gmt_step_source */
    uint8_t kind;      /* gmp_tr_kind */
    uint8_t in_window; /* sched.in_window after the transition */
    uint64_t snap;     /* driver memory at the transition (gmp_snapshot_take), 0 none */
} gmp_epoch_info;

/* Driver memory (cuMemGetInfo) of every device with a context, taken on the
 * thread that makes a step or a tag, at that moment: the writer handles the
 * event later, and what the driver says then is not what it said at the
 * boundary. Kept in a small ring; a ticket the ring has overwritten makes
 * the writer sample when it gets there instead. */
#define GMP_SNAPS 64u
typedef struct gmp_snap {
    uint64_t ticket;
    uint64_t ts;
    uint64_t mask; /* devices sampled */
    uint64_t free_b[GMP_MAX_DEVICES];
    uint64_t total_b[GMP_MAX_DEVICES];
} gmp_snap;

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
    uint32_t sample;     /* callback counter for the cost estimate */
    int internal;        /* a profiler thread: its CUDA calls are not the program's */
    uint32_t pause_corr; /* the context-teardown call that paused sampling (0 none) */
    uint64_t ranges[GMP_RANGE_STACK];

    /* GMEMPROF_KERNELS=launch (collect.c, launch_*): the launch being made
     * (its KERNEL event goes out at the outermost EXIT) and small caches
     * that keep the per-launch work free of CUPTI calls and string copies.
     * The caches belong to module generation lgen (gmp_g.mod_gen). */
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
    _Atomic int state;
    _Atomic int forked;        /* this process is a fork child of a profiled one */
    _Atomic int stopping;      /* exit or signal flush started */
    _Atomic int ctx_seen;      /* a CUDA context was created: the trace is worth keeping */
    gmp_config cfg;
    gmp_cuapi api;
    CUpti_SubscriberHandle sub;
    char path[GMP_PATH_MAX];   /* the trace file ("" until chosen) */
    uint64_t start_ts;
    uint64_t start_unix_ns;

    /* The schedule: only under step_lock. */
    pthread_mutex_t step_lock;
    gmp_sched sched;
    gmp_epoch_info epochs[GMP_EPOCH_HIST];
    _Atomic uint32_t epoch;    /* latest published epoch (release after epochs[] is filled) */
    _Atomic int collecting;    /* kernel/memcpy/memset collection is on */
    _Atomic uint32_t cb_gen;   /* bumped when launch callbacks are switched */
    _Atomic int api_steps;     /* gmemprof_step() was called: NVTX step markers are ignored */
    _Atomic uint64_t range_ids;
    /* Launch mode: bumped when a module is unloaded or a stream or context
     * destroyed, so no thread keeps using a cached name pointer, stream or
     * context that may now denote something else. */
    _Atomic uint32_t mod_gen;

    gmp_ring ring;
    gmp_corrtab corr;
    int wake_fd;               /* eventfd that wakes the writer (-1 none) */

    pthread_mutex_t dev_lock;
    gmp_devinfo dev[GMP_MAX_DEVICES];
    _Atomic uint32_t ndev_seen;
    size_t devbuf_bytes;       /* CUPTI device buffer size we set */
    size_t devbuf_prealloc;    /* buffers CUPTI pre-allocates per context */
    _Atomic uint64_t own_device_bytes;
    pthread_mutex_t snap_lock;
    uint64_t snap_next;
    gmp_snap snaps[GMP_SNAPS];

    /* Counters (cumulative). */
    _Atomic uint64_t dropped_cupti;   /* CUPTI's own drops */
    _Atomic uint64_t dropped_buffers; /* records in buffers we had to discard */
    _Atomic uint64_t cb_time_ns;      /* estimated time in our callbacks */
    _Atomic uint64_t buf_overbudget;  /* buffers handed out beyond the budget */
    /* launch mode's per-thread caches missed (collect.c; GMEMPROF_LOG=debug
     * prints them at the end): each is work a launch paid beyond a probe */
    _Atomic uint64_t lmiss_name, lmiss_func, lmiss_stream, lmiss_gen;
} gmp_rt;

GMP_HIDDEN extern gmp_rt gmp_g;
GMP_HIDDEN extern __thread gmp_tls gmp_t;

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

/* The trace clock: CLOCK_REALTIME in ns, the clock CUPTI uses by default on
 * Linux; the library also registers it as CUPTI's timestamp callback, so
 * events stamped here and CUPTI's records share one time line by
 * construction, even before CUPTI is loaded. */
static inline uint64_t gmp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

/* ---- inject.c ---------------------------------------------------------- */
/* One "gmemprof: ..." line on stderr with a single write(). Errors print at
 * every GMEMPROF_LOG level (a problem is never silent); info and debug
 * follow the level. */
GMP_HIDDEN void gmp_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
GMP_HIDDEN void gmp_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
GMP_HIDDEN void gmp_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
GMP_HIDDEN int gmp_init_light(void);
GMP_HIDDEN int gmp_init_full(void);
/* Turns the profiler off after an error (the line was printed already). */
GMP_HIDDEN void gmp_turn_off(void);

/* ---- collect.c --------------------------------------------------------- */
GMP_HIDDEN int gmp_collect_setup_buffers(char *err, size_t cap);
GMP_HIDDEN int gmp_collect_subscribe(char *err, size_t cap);
GMP_HIDDEN int gmp_collect_enable(char *err, size_t cap);
GMP_HIDDEN void gmp_collect_unsubscribe(void);
/* Turns kernel/memcpy/memset collection on or off (step_lock held). */
GMP_HIDDEN void gmp_collect_kernels(int on);
/* Forced flush of CUPTI's buffers into our queue (no-op unless ON). */
GMP_HIDDEN void gmp_flush_forced(void);
/* A schedule transition from any thread (kind GMP_TR_*; arg: capture on/off). */
GMP_HIDDEN void gmp_transition(int kind, int arg, int source);
/* Epoch 0 from gmp_sched_init (init only, no other thread running yet). */
GMP_HIDDEN void gmp_transition_init(void);
/* cuMemGetInfo for a device through its context: 0 ok, -1 no context/error. */
GMP_HIDDEN int gmp_device_meminfo(unsigned dev, uint64_t *free_b, uint64_t *total_b);
/* Fills gmp_g.dev[dev] (name, memory...) and marks it ready: writer only. */
GMP_HIDDEN void gmp_device_query(unsigned dev);
/* Samples every device now; returns the ticket (0: no device, or not ON). */
GMP_HIDDEN uint64_t gmp_snapshot_take(void);
/* 1 with *out filled when the ticket is still in the ring. */
GMP_HIDDEN int gmp_snapshot_get(uint64_t ticket, gmp_snap *out);
/* Host buffer pool, for the writer. */
typedef struct gmp_done_buf {
    uint8_t *buf;
    size_t valid;
} gmp_done_buf;
GMP_HIDDEN size_t gmp_bufq_take(gmp_done_buf *out, size_t max);
GMP_HIDDEN void gmp_bufq_release(uint8_t *buf);
GMP_HIDDEN size_t gmp_bufq_host_bytes(void);
GMP_HIDDEN size_t gmp_bufq_pending(void);
/* Budget split (bytes) decided in gmp_collect_setup_buffers. */
GMP_HIDDEN size_t gmp_collect_fixed_bytes(void);

/* Launch mode's per-thread caches (collect.c): the CUPTI device id of a
 * context and the CUPTI stream id of a stream handle. */
GMP_HIDDEN uint32_t gmp_launch_device(gmp_tls *t, CUcontext ctx);
GMP_HIDDEN uint32_t gmp_launch_stream(gmp_tls *t, CUcontext ctx, CUstream h, int ptsz);

/* ---- copies.c (launch mode) --------------------------------------------- */
/* The callback ids whose parameters are read (called from families_init). */
GMP_HIDDEN void gmp_copy_init(void);
/* Outermost ENTER of a memcpy/memset call (either domain). */
GMP_HIDDEN void gmp_copy_begin(gmp_tls *t, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                               const CUpti_CallbackData *cb);
/* A driver copy inside a runtime one whose parameters could not be read. */
GMP_HIDDEN void gmp_copy_nested(gmp_tls *t, CUpti_CallbackId cbid, const CUpti_CallbackData *cb);
/* Outermost EXIT: queues the MEMCPY/MEMSET event when the call succeeded. */
GMP_HIDDEN void gmp_copy_end(gmp_tls *t, const CUpti_CallbackData *cb);

/* ---- wthread.c --------------------------------------------------------- */
GMP_HIDDEN int gmp_wt_start(gmt_writer *w, char *err, size_t cap);
GMP_HIDDEN void gmp_wt_wake(void);
/* Makes the writer take in everything queued so far and end its frame;
 * waits at most timeout_ms. */
GMP_HIDDEN void gmp_wt_sync(unsigned timeout_ms);
/* Normal end (exit, destructor): the writer writes the rest, the trailer,
 * closes the file and prints the summary; waits at most timeout_ms. */
GMP_HIDDEN void gmp_wt_finish(int reason, unsigned timeout_ms);
/* From a signal handler (async-signal-safe): asks for the same and waits at
 * most timeout_ms. */
GMP_HIDDEN void gmp_wt_finish_from_signal(int sig, unsigned timeout_ms);
GMP_HIDDEN int gmp_wt_running(void);

/* ---- nvtx.c ------------------------------------------------------------ */
GMP_HIDDEN int gmp_nvtx_attach(const void *(*get_export_table)(uint32_t));

/* ---- shared event helpers (collect.c) ---------------------------------- */
GMP_HIDDEN void gmp_on_step(int source);
GMP_HIDDEN void gmp_on_tag(const char *name, size_t len);
GMP_HIDDEN void gmp_post(gmp_ev *ev); /* fills tid/epoch/ts if 0, pushes, counts drops */
GMP_HIDDEN int gmp_post_ready(const gmp_ev *ev); /* pushes as is: 0, or -1 dropped (counted) */

#include <sys/syscall.h>
#include <unistd.h>
static inline uint32_t gmp_tid(gmp_tls *t)
{
    if (__builtin_expect(t->tid == 0, 0))
        t->tid = (uint32_t)syscall(SYS_gettid);
    return t->tid;
}

#endif
