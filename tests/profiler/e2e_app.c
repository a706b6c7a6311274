/*
 * The program the end-to-end tests profile. It loads libgmemprof.so the way
 * the CUDA driver does (dlopen + InitializeInjection), then plays one named
 * scenario against the fake CUPTI/driver: API calls (ENTER/EXIT callbacks,
 * runtime calls with their nested driver calls), the activity records those
 * calls produce, NVTX through the real NVTX v3 headers, the in-app API.
 *
 *   e2e_app SCENARIO
 * Environment: E2E_LIB (libgmemprof.so), E2E_FACTS (a file where the app
 * writes key=value facts the checker needs: thread ids, correlation ids).
 * Nothing is written to stdout: one test checks that stdout stays empty.
 */
#define GMEMPROF_API_IMPL
#include "gmemprof/gmemprof.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include "e2e_copies.h"
#include "gmemprof/trace_format.h"
#include "fake_cupti.h"

#define RTD CUPTI_CB_DOMAIN_RUNTIME_API
#define DRD CUPTI_CB_DOMAIN_DRIVER_API
#define RT(x) CUPTI_RUNTIME_TRACE_CBID_##x
#define DRV(x) CUPTI_DRIVER_TRACE_CBID_##x
#define MIB (1024ull * 1024ull)
#define GIB_ (1024ull * MIB)
#define ALLOC CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
#define RELEASE CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
#define NOSTREAM CUPTI_INVALID_STREAM_ID
#define KSTREAM 7u

static FILE *g_facts;
static pthread_mutex_t g_facts_mu = PTHREAD_MUTEX_INITIALIZER;

static void fact(const char *key, uint64_t v)
{
    pthread_mutex_lock(&g_facts_mu);
    if (g_facts) {
        fprintf(g_facts, "%s=%" PRIu64 "\n", key, v);
        fflush(g_facts);
    }
    pthread_mutex_unlock(&g_facts_mu);
}

static void factf(uint64_t v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void factf(uint64_t v, const char *fmt, ...)
{
    char k[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k, sizeof k, fmt, ap);
    va_end(ap);
    fact(k, v);
}

static uint64_t gettid_(void) { return (uint64_t)syscall(SYS_gettid); }

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void *g_lib;

static void load_profiler(void)
{
    const char *lib = getenv("E2E_LIB");
    g_lib = lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!g_lib) {
        fprintf(stderr, "e2e_app: cannot load %s: %s\n", lib ? lib : "(E2E_LIB unset)", dlerror());
        exit(90);
    }
    int (*init)(void) = (int (*)(void))dlsym(g_lib, "InitializeInjection");
    if (!init) {
        fprintf(stderr, "e2e_app: no InitializeInjection\n");
        exit(91);
    }
    fact("init_ret", (uint64_t)init());
}

/* ---- simulated CUDA calls -------------------------------------------------- */

typedef struct call {
    uint32_t rt, drv;
    uint32_t rt_cbid, drv_cbid;
} call;

static call api_begin(uint32_t rt_cbid, uint32_t drv_cbid, const void *dparams)
{
    call c = {0, 0, rt_cbid, drv_cbid};
    if (rt_cbid) {
        c.rt = fake_cupti_corr();
        fake_cupti_api_enter(RTD, rt_cbid, c.rt, NULL, NULL);
    }
    if (drv_cbid) {
        c.drv = fake_cupti_corr();
        fake_cupti_api_enter(DRD, drv_cbid, c.drv, NULL, dparams);
    }
    return c;
}

static void api_end(call c, const void *dparams)
{
    if (c.drv_cbid)
        fake_cupti_api_exit(DRD, c.drv_cbid, c.drv, NULL, dparams, 0);
    if (c.rt_cbid)
        fake_cupti_api_exit(RTD, c.rt_cbid, c.rt, NULL, NULL, 0);
}

/* cudaMalloc -> cuMemAlloc_v2; the MEMORY2 record carries the driver id. */
static uint32_t cuda_malloc(uint64_t addr, uint64_t bytes)
{
    call c = api_begin(RT(cudaMalloc_v3020), DRV(cuMemAlloc_v2), NULL);
    fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, c.drv, addr, bytes, 0, NOSTREAM, 0, 0, 0);
    api_end(c, NULL);
    return c.drv;
}

/* cudaFree -> cuMemFree_v2; this record carries the runtime id. */
static uint32_t cuda_free(uint64_t addr, uint64_t bytes)
{
    call c = api_begin(RT(cudaFree_v3020), DRV(cuMemFree_v2), NULL);
    fake_cupti_emit_memory2(RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, c.rt, addr, bytes, 0, NOSTREAM, 0, 0, 0);
    api_end(c, NULL);
    return c.rt;
}

/* cudaLaunchKernel -> cuLaunchKernel; the kernel record carries the nested
 * driver call's id, as CUPTI's do on the H200 (profiler/collect.c,
 * rt_cbid_wanted: the runtime launch callbacks are never enabled). */
static uint32_t launch(const char *name)
{
    call c = api_begin(RT(cudaLaunchKernel_v7000), DRV(cuLaunchKernel), NULL);
    uint64_t t = fake_cupti_now();
    fake_cupti_emit_kernel(c.drv, 0, KSTREAM, name, t + 1000, t + 5000);
    api_end(c, NULL);
    return c.drv;
}

/* A direct driver launch (Triton does this): counts as a launch of its own. */
static uint32_t launch_driver(const char *name)
{
    call c = api_begin(0, DRV(cuLaunchKernel), NULL);
    uint64_t t = fake_cupti_now();
    fake_cupti_emit_kernel(c.drv, 0, KSTREAM, name, t + 1000, t + 2000);
    api_end(c, NULL);
    return c.drv;
}

/* cudaMemcpy -> cuMemcpyHtoD_v2, with their parameter blocks (launch mode
 * reads them: profiler/sources/copies.c); the record carries the driver's id. */
static uint32_t memcpy_htod(uint64_t bytes)
{
    static char src[16];
    struct { void *dst; const void *src; size_t count; int kind; } rp = {(void *)0x10000, src, bytes, 1};
    struct { uint64_t dst; const void *src; size_t count; } dp = {0x10000, src, bytes};
    uint32_t rt = fake_cupti_corr();
    fake_cupti_api_enter(RTD, RT(cudaMemcpy_v3020), rt, NULL, &rp);
    uint32_t drv = fake_cupti_corr();
    fake_cupti_api_enter(DRD, DRV(cuMemcpyHtoD_v2), drv, NULL, &dp);
    uint64_t t = fake_cupti_now();
    fake_cupti_emit_memcpy(drv, rt, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, bytes, 0, KSTREAM, t + 100, t + 900);
    fake_cupti_api_exit(DRD, DRV(cuMemcpyHtoD_v2), drv, NULL, &dp, 0);
    fake_cupti_api_exit(RTD, RT(cudaMemcpy_v3020), rt, NULL, &rp, 0);
    return drv;
}

/* cudaMemset with its parameter block; the record carries its id. */
static uint32_t memset_dev(uint64_t bytes, uint32_t value)
{
    struct { void *dst; int value; size_t count; } rp = {(void *)0x10000, (int)value, bytes};
    uint32_t rt = fake_cupti_corr();
    fake_cupti_api_enter(RTD, RT(cudaMemset_v3020), rt, NULL, &rp);
    uint64_t t = fake_cupti_now();
    fake_cupti_emit_memset(rt, value, bytes, 0, KSTREAM, t + 100, t + 300);
    fake_cupti_api_exit(RTD, RT(cudaMemset_v3020), rt, NULL, &rp, 0);
    return rt;
}

static void profiler_api(uint32_t cbid)
{
    call c = api_begin(cbid, 0, NULL);
    api_end(c, NULL);
}

/* ---- launch mode (GMEMPROF_KERNELS=launch) ------------------------------------ */

/* The launch parameter blocks as the runtime and the driver pass them. */
typedef struct { const void *func; unsigned grid[3], block[3]; void **args; size_t smem; void *stream; } rt_launch_params;
typedef struct { void *f; unsigned grid[3], block[3], smem; void *stream; void **params, **extra; } drv_launch_params;

/* cudaLaunchKernel -> cuLaunchKernel with the name and the parameter blocks
 * (as the real ones come); ret != 0: the launch fails. The kernel record
 * (dropped by the fake when kernel activity is off, as CUPTI would) is
 * still offered. */
static uint32_t launch_full(const char *name, unsigned gx, unsigned bx, void *stream, int ret)
{
    /* the name's address stands for the CUfunction (fake_cuda_set_func);
     * dynamic shared memory gx * 16 bytes */
    rt_launch_params rp = {NULL, {gx, 2, 1}, {bx, 1, 1}, NULL, gx * 16, stream};
    drv_launch_params dp = {(void *)name, {gx, 2, 1}, {bx, 1, 1}, gx * 16, stream, NULL, NULL};
    uint32_t rt = fake_cupti_corr();
    fake_cupti_api_enter(RTD, RT(cudaLaunchKernel_v7000), rt, name, &rp);
    uint32_t drv = fake_cupti_corr();
    fake_cupti_api_enter(DRD, DRV(cuLaunchKernel), drv, name, &dp);
    uint64_t t = fake_cupti_now();
    if (!ret)
        fake_cupti_emit_kernel(drv, 0, KSTREAM, name, t + 1000, t + 5000);
    fake_cupti_api_exit(DRD, DRV(cuLaunchKernel), drv, name, &dp, ret);
    fake_cupti_api_exit(RTD, RT(cudaLaunchKernel_v7000), rt, name, &rp, ret);
    return rt;
}

/* A direct driver launch (Triton): cuLaunchKernel alone. */
static uint32_t launch_drv_full(const char *name, unsigned gx, unsigned gy, unsigned gz, void *stream)
{
    drv_launch_params dp = {NULL, {gx, gy, gz}, {32, 4, 1}, 0, stream, NULL, NULL};
    uint32_t drv = fake_cupti_corr();
    fake_cupti_api_enter(DRD, DRV(cuLaunchKernel), drv, name, &dp);
    fake_cupti_api_exit(DRD, DRV(cuLaunchKernel), drv, name, &dp, 0);
    return drv;
}

/* A name longer than a ring cell holds (it travels in a heap copy). */
static char g_long_name[400];
/* One kernel launched from two threads: one symbol (and function) pointer. */
static const char k_shared[] = "k_shared";

static void *launch_thread(void *p)
{
    (void)p;
    fact("T.tid", gettid_());
    fact("T.alloc", cuda_malloc(0x7000000, 5 * MIB));
    fact("T.k1", launch_full(k_shared, 10, 64, NULL, 0)); /* same pointer as the main thread's */
    fact("T.k2", launch_full(g_long_name, 11, 64, NULL, 0));
    return NULL;
}

static int sc_launch(void)
{
    fact("tid", gettid_());
    fact("kernels_on", (uint64_t)fake_cupti_activity_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    fact("memcpy_on", (uint64_t)fake_cupti_activity_enabled(CUPTI_ACTIVITY_KIND_MEMCPY));
    fact("rt_launch_cb", (uint64_t)fake_cupti_callback_enabled(RTD, RT(cudaLaunchKernel_v7000)));
    fact("drv_launch_cb", (uint64_t)fake_cupti_callback_enabled(DRD, DRV(cuLaunchKernel)));
    memset(g_long_name, 'L', sizeof g_long_name - 1);
    memcpy(g_long_name, "_Z9long_name", 12);
    fake_cuda_set_func(k_shared, 40, 2048, 64); /* the others: the driver will not say */
    nvtxRangePushA("fwd");
    fact("A.corr", cuda_malloc(0x10000, 1 * MIB));
    fact("k1.corr", launch_full(k_shared, 4, 128, (void *)0x55, 0));
    fact("B.corr", cuda_malloc(0x20000, 2 * MIB));
    fact("kd.corr", launch_drv_full("k_triton", 7, 8, 9, NULL));
    fact("kf.corr", launch_full("k_fails", 1, 1, NULL, 1)); /* fails: no kernel, but a launch */
    fact("C.corr", cuda_malloc(0x30000, 3 * MIB));
    fact("k2.corr", launch_full(k_shared, 5, 128, (void *)0x55, 0)); /* cached name */
    nvtxRangePop();
    fact("kl.corr", launch_full(g_long_name, 6, 32, NULL, 0));
    fact("kl2.corr", launch_full(g_long_name, 6, 32, NULL, 0)); /* cached long name */
    fact("cpy.corr", memcpy_htod(4096));
    fact("set.corr", memset_dev(8192, 0xab));
    pthread_t th;
    pthread_create(&th, NULL, launch_thread, NULL);
    pthread_join(th, NULL);
    fact("attr_calls", fake_cuda_func_attr_calls());
    return 0;
}

/* 60 kernels whose names and functions lie 4 KiB apart (the strides the
 * driver's handles come in), launched round robin three times: launch mode's
 * per-thread caches must hold them all (one name sent and one attribute
 * query per kernel), not thrash. */
static char g_many[60][4096];

static int sc_launch_many(void)
{
    for (int i = 0; i < 60; i++)
        snprintf(g_many[i], sizeof g_many[i], "k_many_%02d", i);
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 60; i++)
            launch_full(g_many[i], 1, 32, NULL, 0);
    fact("attr_calls", fake_cuda_func_attr_calls());
    return 0;
}

/* Memory freed by another thread than the one that allocated it (PyTorch's
 * autograd thread does this all the time). CUPTI keeps activity buffers per
 * thread unless told otherwise, and the fake hands them back newest thread
 * first: only one buffer stream keeps each FREE after its ALLOC. */
static void *xthread_body(void *p)
{
    (void)p;
    fact("T.freeA", cuda_free(0xa00000, 1 * MIB));
    fact("T.allocB", cuda_malloc(0xb00000, 2 * MIB));
    /* enough records to fill this thread's 32 KiB buffer (the test sets
     * GMEMPROF_CUPTI_BUFFER_KB=32), which then completes on its own, and
     * time for the writer to take it while the main thread's stays open */
    for (uint64_t i = 0; i < 1000; i++) {
        cuda_malloc(0xc000000 + i * 4096, 4096);
        cuda_free(0xc000000 + i * 4096, 4096);
    }
    sleep_ms(300);
    return NULL;
}

static int sc_xthread(void)
{
    fact("allocA", cuda_malloc(0xa00000, 1 * MIB));
    pthread_t th;
    pthread_create(&th, NULL, xthread_body, NULL);
    pthread_join(th, NULL);
    fact("freeB", cuda_free(0xb00000, 2 * MIB));
    return 0;
}

/* ---- scenarios --------------------------------------------------------------- */

/* wait=1, active=1: step 1 makes E2E_BURST NVTX ranges (two ring events
 * each) faster than the writer takes them, then ends the window at once: a
 * transition must wait for the events made before it (the writer takes the
 * ring in batches of 4096). */
static int sc_burst(void)
{
    const char *ns = getenv("E2E_BURST");
    int n = ns ? atoi(ns) : 6000;
    int launches = getenv("E2E_BURST_LAUNCH") != NULL; /* one ring event per launch (launch mode) */
    int allocs = getenv("E2E_BURST_ALLOC") != NULL;    /* an allocation inside every range */
    gmemprof_step(); /* step 1: active */
    for (int i = 0; i < n; i++) {
        if (launches) {
            launch_full(k_shared, 1, 32, NULL, 0);
            continue;
        }
        nvtxRangePushA("burst");
        if (allocs) {
            cuda_malloc(0x50000000ull + (uint64_t)i * 0x1000, 4096);
            cuda_free(0x50000000ull + (uint64_t)i * 0x1000, 4096);
        }
        nvtxRangePop();
    }
    gmemprof_step(); /* step 2: the window is over */
    fact("n", (uint64_t)n);
    return 0;
}

static int sc_whole(void)
{
    fact("tid", gettid_());
    nvtxRangePushA("fwd");
    fact("A.corr", cuda_malloc(0x10000, 1 * MIB));
    fact("k1.corr", launch("k1"));
    fact("B.corr", cuda_malloc(0x20000, 2 * MIB));
    fact("k2.corr", launch("k2"));
    nvtxRangePop();
    fact("freeA.corr", cuda_free(0x10000, 1 * MIB));
    fact("k3.corr", launch_driver("k3"));
    fact("cpy.corr", memcpy_htod(4096));
    fact("set.corr", memset_dev(8192, 0xab));
    nvtxMarkA("hello");
    /* A kernel record whose API call was never seen: counted unmatched. */
    uint64_t t = fake_cupti_now();
    fake_cupti_emit_kernel(999999, 0, KSTREAM, "orphan", t, t + 10);
    fake_cupti_set_dropped(17);
    fact("records_emitted", fake_cupti_records_emitted());
    return 0;
}

/* wait=2, warmup=1, active=3 through gmemprof_step(): steps 0,1 wait, 2
 * warmup, 3..5 active, 6.. done. */
static int sc_schedule(void)
{
    fact("tid", gettid_());
    fact("W.corr", cuda_malloc(0x100000, 4 * MIB)); /* weights, step 0 */
    for (int i = 0; i < 8; i++) {
        factf((uint64_t)fake_cupti_activity_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "kernels_on.%d", i);
        if (i == 1)
            fact("X.corr", cuda_malloc(0x200000, 3 * MIB)); /* lives into the window */
        if (i == 4)
            fact("freeX.corr", cuda_free(0x200000, 3 * MIB));
        uint64_t a = 0x1000000 + (uint64_t)i * 0x1000000;
        factf(cuda_malloc(a, (uint64_t)(i + 1) * MIB), "act%d.corr", i);
        char kn[32];
        snprintf(kn, sizeof kn, "k_step_%d", i);
        factf(launch(kn), "kern%d.corr", i);
        factf(cuda_free(a, (uint64_t)(i + 1) * MIB), "free%d.corr", i);
        gmemprof_step();
    }
    factf((uint64_t)fake_cupti_activity_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "kernels_on.%d", 8);
    return 0;
}

/* NVTX step markers: marks and range pushes named like the marker. */
static int sc_nvtx_steps(void)
{
    fact("tid", gettid_());
    fact("W.corr", cuda_malloc(0x100000, 4 * MIB));
    for (int i = 0; i < 5; i++) {
        uint64_t a = 0x1000000 + (uint64_t)i * 0x1000000;
        factf(cuda_malloc(a, MIB), "act%d.corr", i);
        char kn[32];
        snprintf(kn, sizeof kn, "k_step_%d", i);
        factf(launch(kn), "kern%d.corr", i);
        cuda_free(a, MIB);
        if (i % 2 == 0) {
            nvtxMarkA("step");
        } else {
            char rn[32];
            snprintf(rn, sizeof rn, "step#%d", i + 1);
            nvtxRangePushA(rn);
            nvtxRangePop();
        }
        nvtxMarkA("stepper"); /* not a step marker */
    }
    return 0;
}

/* gmemprof_step() wins over NVTX once called. */
static int sc_api_precedence(void)
{
    nvtxMarkA("step");
    nvtxMarkA("step");
    gmemprof_step();
    nvtxMarkA("step");
    nvtxMarkA("step");
    gmemprof_step();
    return 0;
}

static int sc_capture(void)
{
    fact("A.corr", cuda_malloc(0x10000, 1 * MIB));
    fact("k0.corr", launch("k0"));
    profiler_api(RT(cudaProfilerStart_v4000));
    fact("B.corr", cuda_malloc(0x20000, 2 * MIB));
    fact("k1.corr", launch("k1"));
    profiler_api(RT(cudaProfilerStop_v4000));
    fact("k2.corr", launch("k2"));
    fact("C.corr", cuda_malloc(0x30000, 3 * MIB));
    profiler_api(RT(cudaProfilerStart_v4000));
    fact("k3.corr", launch("k3"));
    fact("freeB.corr", cuda_free(0x20000, 2 * MIB));
    profiler_api(RT(cudaProfilerStop_v4000));
    return 0;
}

static int sc_tags(void)
{
    fake_cuda_set_meminfo(0, 70 * 1024 * MIB, 80 * 1024 * MIB);
    fake_cuda_set_meminfo(1, 39 * 1024 * MIB, 40 * 1024 * MIB);
    fake_cupti_context_created(1); /* a second device */
    gmemprof_mark("before_model");
    cuda_malloc(0x10000, 8 * MIB);
    cuda_malloc(0x20000, 8 * MIB);
    /* 5 MiB on device 1 (its own context; the driver numbers ids globally) */
    call c = api_begin(RT(cudaMalloc_v3020), DRV(cuMemAlloc_v2), NULL);
    fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, c.drv, 0x10000, 5 * MIB, 1, NOSTREAM, 0, 0, 0);
    api_end(c, NULL);
    fake_cuda_set_meminfo(0, 60 * 1024 * MIB, 80 * 1024 * MIB);
    nvtxMarkA("tag: after_model");
    cuda_free(0x20000, 8 * MIB);
    gmemprof_mark("after_free");
    nvtxMarkA("plain mark");
    return 0;
}

/* NVTX ranges 50 ms apart, each pushed between two readings of the
 * system clock, so that the trace clock's TSC line (GMEMPROF_CLOCK=tsc)
 * can be checked against it once fitted. */
static int sc_clock(void)
{
    static const char *const names[] = {"r0", "r1", "r2", "r3", "r4", "r5"};
    fake_cupti_context_created(0);
    for (int i = 0; i < 6; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_REALTIME, &a);
        nvtxRangePushA(names[i]);
        clock_gettime(CLOCK_REALTIME, &b);
        nvtxRangePop();
        factf((uint64_t)a.tv_sec * 1000000000ull + (uint64_t)a.tv_nsec, "before%d", i);
        factf((uint64_t)b.tv_sec * 1000000000ull + (uint64_t)b.tv_nsec, "after%d", i);
        sleep_ms(50);
    }
    return 0;
}

typedef struct thr_arg {
    int i;
} thr_arg;

static void *thread_body(void *p)
{
    int i = ((thr_arg *)p)->i;
    char rn[16], kn[16];
    factf(gettid_(), "t%d.tid", i);
    snprintf(rn, sizeof rn, "t%d", i);
    nvtxRangePushA(rn);
    uint64_t a = 0x10000000ull * (uint64_t)(i + 1);
    factf(cuda_malloc(a, (uint64_t)(i + 1) * MIB), "t%d.alloc", i);
    for (int k = 0; k < 3; k++) {
        snprintf(kn, sizeof kn, "t%d_k%d", i, k);
        factf(launch(kn), "t%d.k%d", i, k);
    }
    factf(cuda_free(a, (uint64_t)(i + 1) * MIB), "t%d.free", i);
    nvtxRangePop();
    return NULL;
}

static int sc_threads(void)
{
    pthread_t th[4];
    thr_arg args[4];
    /* NVTX v3 initialises lazily at the first call, and its slot writes race
     * with other threads' first calls (NVTX's own design; ThreadSanitizer
     * flags it): initialise once, as NVTX recommends, before threads start. */
    nvtxInitialize(NULL);
    for (int i = 0; i < 4; i++) {
        args[i].i = i;
        pthread_create(&th[i], NULL, thread_body, &args[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    return 0;
}

/* The writer is stalled inside a periodic flush while 40000 marks arrive:
 * the ring takes what fits, the rest is counted. */
static int sc_overflow(void)
{
    nvtxMarkA("warm up NVTX");
    fake_cupti_block_flush(1);
    for (int i = 0; i < 5000 && !fake_cupti_flush_blocked(); i++)
        sleep_ms(1);
    fact("blocked", (uint64_t)fake_cupti_flush_blocked());
    for (int i = 0; i < 40000; i++)
        nvtxMarkA("m");
    fact("produced", 40000);
    fake_cupti_block_flush(0);
    return 0;
}

static int sc_settings(void)
{
    cuda_malloc(0x10000, MIB);
    launch("k");
    return 3; /* the profiler must not change this */
}

static int sc_plain(void)
{
    fact("A.corr", cuda_malloc(0x10000, MIB));
    launch("k");
    return 0;
}

static int sc_signal(int sig)
{
    fact("A.corr", cuda_malloc(0x10000, MIB));
    fact("k1.corr", launch("k1"));
    raise(sig);
    sleep_ms(5000);
    return 42; /* not reached: the signal's default action ends us */
}

/* Records at full rate until a signal from outside ends the process
 * (profiler.e2e.sigload): the signal lands on this thread, often inside the
 * buffer callbacks that the fake CUPTI calls from here. */
static int sc_sigload(void)
{
    fact("A.corr", cuda_malloc(0x10000, MIB));
    fact("k1.corr", launch("k1"));
    uint64_t t = fake_cupti_now();
    for (uint64_t i = 0;; i++) {
        uint64_t a = 0x40000000ull + (i % 1024) * 4096;
        fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, a, 4096, 0, NOSTREAM, 0, 0, 0);
        fake_cupti_emit_memory2(RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, a, 4096, 0, NOSTREAM, 0, 0, 0);
        fake_cupti_emit_kernel(0, 0, KSTREAM, "load_k", t + i * 10, t + i * 10 + 5);
    }
    return 42; /* not reached */
}

/* The signal's handler returns at once; the program then exits on its own
 * before the writer is done (profiler.e2e.sigexit). */
static int sc_sigexit(void)
{
    fact("A.corr", cuda_malloc(0x10000, MIB));
    fact("k1.corr", launch("k1"));
    raise(SIGTERM);
    return 3;
}

static volatile sig_atomic_t g_got;
static void app_handler(int sig) { g_got = sig; }

static int sc_sigchain(void)
{
    fact("A.corr", cuda_malloc(0x10000, MIB));
    raise(SIGTERM);
    return g_got == SIGTERM ? 7 : 8;
}

static int sc_sigkill(void)
{
    fact("A.corr", cuda_malloc(0x10000, MIB));
    for (int i = 0; i < 20; i++) {
        launch("k");
        sleep_ms(20);
    }
    sleep_ms(300); /* several frame ends (GMEMPROF_FLUSH_MS=50) */
    raise(SIGKILL);
    return 0;
}

/* The profiler's descriptor of this process's trace (its name or its
 * temporary name), or -1. */
static int trace_fd(void)
{
    char want[64], tmp[64], p[320], t[1024];
    int n = snprintf(want, sizeof want, "/trace-%d.zst", (int)getpid()), fd = -1;
    snprintf(tmp, sizeof tmp, "/.gmemprof-%d-", (int)getpid());
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(p, t, sizeof t - 1);
        if (k < 0)
            continue;
        t[k] = '\0';
        if ((k >= n && memcmp(t + k - n, want, (size_t)n) == 0) || strstr(t, tmp))
            fd = atoi(e->d_name);
    }
    if (d)
        closedir(d);
    return fd;
}

/* As a daemon does (profiler.e2e.closefds): every descriptor above 2 is
 * closed, then the program opens its own data files, which take the lowest
 * numbers, and one more on the very number the trace had; it writes its
 * data, goes on calling CUDA and exits with the files open. Each file must
 * hold exactly what the program wrote: E2E_DATA_DIR/dN, "dN line K\n" for
 * K in 0..99, N in 0..8. */
static int sc_closefds(void)
{
    fact("A.corr", cuda_malloc(0x10000, MIB));
    launch("k1");
    int tfd = trace_fd();
    fact("trace_fd_found", tfd >= 0);
    const char *fp = getenv("E2E_FACTS"), *dir = getenv("E2E_DATA_DIR");
    /* The descriptors change while the writer thread waits in its periodic
     * CUPTI flush, so that it is not between its check of the trace's
     * descriptor and a write: a program can only race a library on a
     * number it targets on purpose, which the test does below; the check
     * that follows must then catch it every time. */
    fake_cupti_block_flush(1);
    for (int i = 0; i < 60000 && !fake_cupti_flush_blocked(); i++)
        sleep_ms(1);
    int held = fake_cupti_flush_blocked();
    fclose(g_facts);
    g_facts = NULL;
    if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0) {
        struct rlimit rl;
        int top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;
        for (int fd = 3; fd < top; fd++)
            close(fd);
    }
    int fds[9];
    char path[1200], line[64];
    for (int i = 0; i < 9; i++) {
        snprintf(path, sizeof path, "%s/d%d", dir ? dir : ".", i);
        fds[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fds[i] < 0)
            return 93;
    }
    /* the last file also on the trace's old number, whatever it was */
    if (tfd > 2 && dup2(fds[8], tfd) < 0)
        return 94;
    g_facts = fp ? fopen(fp, "a") : NULL;
    fake_cupti_block_flush(0);
    fact("held", (uint64_t)held);
    for (int k = 0; k < 100; k++) {
        for (int i = 0; i < 9; i++) {
            int n = snprintf(line, sizeof line, "d%d line %d\n", i, k);
            if (write(i == 8 && tfd > 2 ? tfd : fds[i], line, (size_t)n) != n)
                return 95;
        }
        /* CUDA goes on: records, wake-ups of the writer, frames */
        uint64_t a = 0x100000 + (uint64_t)k * 4096;
        cuda_malloc(a, 4096);
        launch("k_after");
        cuda_free(a, 4096);
        if (k % 25 == 0)
            gmemprof_step();
    }
    fact("written", 100);
    return 0; /* the files stay open through the exit's end of the trace */
}

/* Threads that call CUDA in a loop forever while the main thread calls
 * exit() (profiler.e2e.exitload). */
static _Atomic uint64_t g_iters;

static void *exit_worker(void *p)
{
    uint64_t base = 0x50000000ull + (uint64_t)(uintptr_t)p * 0x1000000ull;
    for (uint64_t i = 0;; i++) {
        uint64_t a = base + (i % 64) * 4096;
        cuda_malloc(a, 4096);
        launch("exit_k");
        cuda_free(a, 4096);
        atomic_fetch_add(&g_iters, 1);
    }
    return NULL;
}

/* Registered before the profiler's own handler, so it runs after it: the
 * trace is finished by then. */
static void after_profiler_end(void)
{
    fact("end_ts", fake_cupti_now());
    fact("forced_ts", fake_cupti_forced_flush_ts());
    fact("iters_end", atomic_load(&g_iters));
}

static int sc_exitload(void)
{
    fact("A.corr", cuda_malloc(0x10000, MIB));
    pthread_t th[2];
    for (uintptr_t i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, exit_worker, (void *)i) != 0)
            return 96;
    while (atomic_load(&g_iters) < 2000)
        sched_yield();
    fact("iters_exit", atomic_load(&g_iters));
    fact("exit_ts", fake_cupti_now());
    exit(0);
}

/* stdout is /dev/null (profiler.e2e.devstdout: a descriptor that is a
 * character device). */
static void stdout_devnull(void)
{
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        dup2(fd, 1);
        close(fd);
    }
}

/* Waits up to tries x 10 ms for the child and records its exit status as
 * the fact child_exit (100: killed by a signal); a child that hangs is
 * killed and recorded as 99. Returns 1 when the child ended by itself. */
static int wait_child(pid_t pid, int tries)
{
    int st = 0;
    for (int i = 0; i < tries; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            fact("child_exit", WIFEXITED(st) ? (uint64_t)WEXITSTATUS(st) : 100);
            return 1;
        }
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    fact("child_exit", 99);
    return 0;
}

static int sc_fork(void)
{
    fact("A.corr", cuda_malloc(0x10000, MIB));
    launch("k_parent");
    pid_t pid = fork();
    if (pid == 0) {
        /* the child uses CUDA and NVTX, then exits through atexit */
        cuda_malloc(0x90000, MIB);
        launch("k_child");
        nvtxMarkA("child mark");
        gmemprof_step();
        exit(0);
    }
    fact("child", (uint64_t)pid);
    if (wait_child(pid, 1000))
        cuda_malloc(0x20000, MIB);
    return 0;
}

/* SIGTERM ignored by the program: the profiler must leave it ignored. */
static int sc_sigign(void)
{
    fact("A.corr", cuda_malloc(0x10000, MIB));
    raise(SIGTERM);
    launch("after_signal");
    return 0;
}

/* delay=300ms,duration=1s: A before, B and k1 inside, C after the window. */
static int sc_time(void)
{
    fact("A.corr", cuda_malloc(0x10000, MIB));
    sleep_ms(800);
    fact("B.corr", cuda_malloc(0x20000, 2 * MIB));
    fact("k1.corr", launch("k1"));
    sleep_ms(1000);
    fact("C.corr", cuda_malloc(0x30000, 3 * MIB));
    fact("k2.corr", launch("k2"));
    return 0;
}

/* A small host budget and a stalled writer: CUPTI still gets buffers, the
 * oldest waiting ones are reused and their records counted as dropped. */
static int sc_budget(void)
{
    cuda_malloc(0x10, 1); /* warm */
    fake_cupti_block_flush(1);
    for (int i = 0; i < 5000 && !fake_cupti_flush_blocked(); i++)
        sleep_ms(1);
    fact("blocked", (uint64_t)fake_cupti_flush_blocked());
    /* alloc/free pairs: the live table stays small, only the buffers fill */
    for (int i = 0; i < 10000; i++) {
        uint64_t a = 0x40000000ull + (uint64_t)i * 64;
        fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, a, 64, 0, NOSTREAM, 0, 0, 0);
        fake_cupti_emit_memory2(RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, a, 64, 0, NOSTREAM, 0, 0, 0);
    }
    fact("produced", 1 + 20000); /* the warm-up record too */
    fake_cupti_block_flush(0);
    return 0;
}

/* VMM as PyTorch's expandable segments use it: reserve, create, map; the
 * MEMORY2 record of the first mapping has no correlation id. */
static int sc_vmm(void)
{
    fact("tid", gettid_());
    CUdeviceptr base = 0x7f0000000000ull;
    struct {
        CUdeviceptr *ptr;
        size_t size, alignment;
        CUdeviceptr addr;
        unsigned long long flags;
    } rp = {&base, 1024 * MIB, 0, 0, 0};
    call c = api_begin(0, DRV(cuMemAddressReserve), &rp);
    api_end(c, &rp);

    nvtxRangePushA("grow");
    c = api_begin(0, DRV(cuMemCreate), NULL);
    fact("create1.corr", c.drv);
    api_end(c, NULL);
    struct {
        CUdeviceptr ptr;
        size_t size, offset;
        CUmemGenericAllocationHandle h;
        unsigned long long flags;
    } mp = {base, 20 * MIB, 0, 1, 0};
    c = api_begin(0, DRV(cuMemMap), &mp);
    fact("map1.corr", c.drv);
    api_end(c, &mp);
    /* expandable-segments style: no correlation id */
    fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, base, 20 * MIB, 0, NOSTREAM, 0, 0, 0);
    nvtxRangePop();

    /* a second chunk whose record carries cuMemCreate's id */
    c = api_begin(0, DRV(cuMemCreate), NULL);
    fact("create2.corr", c.drv);
    fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, c.drv, base + 20 * MIB, 20 * MIB, 0, NOSTREAM,
                            0, 0, 0);
    api_end(c, NULL);
    mp.ptr = base + 20 * MIB;
    c = api_begin(0, DRV(cuMemMap), &mp);
    api_end(c, &mp);

    /* a plain cudaMalloc outside the reservation stays MALLOC */
    fact("plain.corr", cuda_malloc(0x10000, MIB));

    /* unmap + release of the first chunk; the release record has no id */
    struct {
        CUdeviceptr ptr;
        size_t size;
    } up = {base, 20 * MIB};
    c = api_begin(0, DRV(cuMemUnmap), &up);
    api_end(c, &up);
    fake_cupti_emit_memory2(RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, base, 20 * MIB, 0, NOSTREAM, 0, 0, 0);
    c = api_begin(0, DRV(cuMemRelease), NULL);
    api_end(c, NULL);
    return 0;
}

/* Allocation sources from MEMORY2 fields and API families. */
static int sc_sources(void)
{
    call c = api_begin(RT(cudaMallocAsync_v11020), DRV(cuMemAllocAsync), NULL);
    fact("async.corr", c.rt);
    fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, c.rt, 0x100000, 2 * MIB, 0, 13, 1,
                            CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL, 0);
    api_end(c, NULL);
    c = api_begin(RT(cudaMallocManaged_v6000), DRV(cuMemAllocManaged), NULL);
    fact("managed.corr", c.drv);
    fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, c.drv, 0x200000, 3 * MIB, 0, NOSTREAM, 0, 0,
                            0);
    api_end(c, NULL);
    c = api_begin(RT(cudaMallocHost_v3020), DRV(cuMemAllocHost_v2), NULL);
    fact("pinned.corr", c.drv);
    fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, c.drv, 0x300000, 5 * MIB, 0, NOSTREAM, 0, 0,
                            0);
    api_end(c, NULL);
    c = api_begin(RT(cudaMallocPitch_v3020), DRV(cuMemAllocPitch_v2), NULL);
    fact("pitch.corr", c.drv);
    fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, c.drv, 0x400000, 7 * MIB, 0, NOSTREAM, 0, 0,
                            0);
    api_end(c, NULL);
    c = api_begin(RT(cudaFreeAsync_v11020), DRV(cuMemFreeAsync), NULL);
    fact("freeasync.corr", c.rt);
    fake_cupti_emit_memory2(RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, c.rt, 0x100000, 2 * MIB, 0, 13, 1,
                            CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL, 0);
    api_end(c, NULL);
    fake_cupti_emit_pool(0, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, 32 * MIB);
    /* cudaDeviceReset: flushes; the program goes on */
    profiler_api(RT(cudaDeviceReset_v3020));
    fact("after_reset.corr", cuda_malloc(0x500000, 1 * MIB));
    gmemprof_mark("after_reset"); /* driver sampling works again */
    return 0;
}

/* Settings the library applied to CUPTI before any context existed. */
static int sc_attrs(void)
{
    fact("devbuf", fake_cupti_attr(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE));
    fact("prealloc", fake_cupti_attr(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE));
    fact("poollimit", fake_cupti_attr(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT));
    fact("per_thread_buffers", fake_cupti_attr(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER));
    fact("memory2_on", (uint64_t)fake_cupti_activity_enabled(CUPTI_ACTIVITY_KIND_MEMORY2));
    fact("kernel_on", (uint64_t)fake_cupti_activity_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    fact("malloc_cb", (uint64_t)fake_cupti_callback_enabled(RTD, RT(cudaMalloc_v3020)));
    fact("launch_cb", (uint64_t)fake_cupti_callback_enabled(DRD, DRV(cuLaunchKernel)));
    fact("rt_launch_cb", (uint64_t)fake_cupti_callback_enabled(RTD, RT(cudaLaunchKernel_v7000)));
    fact("memcpy_cb", (uint64_t)fake_cupti_callback_enabled(RTD, RT(cudaMemcpy_v3020)));
    fact("vmm_cb", (uint64_t)fake_cupti_callback_enabled(DRD, DRV(cuMemMap)));
    fact("ctx_cb", (uint64_t)fake_cupti_callback_enabled(CUPTI_CB_DOMAIN_RESOURCE,
                                                         CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
    /* a lot of records: several CUPTI buffers (32 KiB each here) */
    for (int i = 0; i < 3000; i++) {
        cuda_malloc(0x10000000ull + (uint64_t)i * 0x1000, 4096);
        launch("many");
    }
    fact("buffers", fake_cupti_buffers_completed());
    return 0;
}

/* _exit() mid-run: no atexit handler, no destructor, no trailer; the trace
 * ends at the last frame the writer finished (GMEMPROF_FLUSH_MS=50 here). */
static int sc_exit(void)
{
    fact("A.corr", cuda_malloc(0x10000, MIB));
    for (int i = 0; i < 10; i++) {
        launch("k");
        sleep_ms(20);
    }
    sleep_ms(300); /* several frame ends */
    if (g_facts)
        fclose(g_facts);
    g_facts = NULL;
    _exit(5);
}

/* abort(): SIGABRT is not caught by the profiler; the program dies by it. */
static int sc_abort(void)
{
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* no core file left in the work dir */
    fact("A.corr", cuda_malloc(0x10000, MIB));
    for (int i = 0; i < 10; i++) {
        launch("k");
        sleep_ms(20);
    }
    sleep_ms(300); /* several frame ends (GMEMPROF_FLUSH_MS=50) */
    if (g_facts)
        fclose(g_facts);
    g_facts = NULL;
    abort();
}

/* fork + exec of this program (scenario "plain") with the environment kept:
 * the exec'd child loads the profiler afresh, as the driver would with
 * CUDA_INJECTION64_PATH set, and writes its own trace-%p file. Its facts go
 * to E2E_FACTS.child; the environment is built before the fork (setenv in a
 * child of a multi-threaded process is not async-signal-safe).
 * agent = 1: the parent creates no context and allocates nothing, as
 * torchrun's agent process (CUDA initialised, no context) does. */
static int sc_forkexec(const char *self, int agent)
{
    if (!agent) {
        fact("A.corr", cuda_malloc(0x20000, MIB));
        launch("k_parent");
    }
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    char **envp = calloc(n + 1, sizeof *envp);
    char childfacts[1200];
    const char *fp = getenv("E2E_FACTS");
    snprintf(childfacts, sizeof childfacts, "E2E_FACTS=%s.child", fp ? fp : "/dev/null");
    for (size_t i = 0; i < n; i++)
        envp[i] = strncmp(environ[i], "E2E_FACTS=", 10) == 0 ? childfacts : environ[i];
    char *argv[] = {(char *)self, "plain", NULL};
    pid_t pid = fork();
    if (pid == 0) {
        execve(self, argv, envp);
        _exit(127);
    }
    free(envp);
    fact("child", (uint64_t)pid);
    if (wait_child(pid, 3000) && !agent)
        fact("B.corr", cuda_malloc(0x30000, 2 * MIB));
    return 0;
}

/* Two devices, each with its own context: allocations, a free and kernels
 * on both; device 1 reuses device 0's addresses (the live table keys on
 * (device, address)). Ends with a tag: per-device live bytes. */
static int sc_devices(void)
{
    fake_cuda_set_meminfo(0, 70 * 1024 * MIB, 80 * 1024 * MIB);
    fake_cuda_set_meminfo(1, 30 * 1024 * MIB, 40 * 1024 * MIB);
    fake_cupti_context_created(1);
    static const struct {
        uint32_t dev;
        uint64_t addr, bytes;
    } a[5] = {{0, 0x10000, 3 * MIB}, {1, 0x10000, 5 * MIB}, {0, 0x20000, 1 * MIB},
              {1, 0x20000, 2 * MIB}, {1, 0x30000, 4 * MIB}};
    for (int i = 0; i < 5; i++) {
        call c = api_begin(RT(cudaMalloc_v3020), DRV(cuMemAlloc_v2), NULL);
        fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, c.drv, a[i].addr, a[i].bytes, a[i].dev,
                                NOSTREAM, 0, 0, 0);
        api_end(c, NULL);
        factf(c.drv, "a%d.corr", i);
    }
    /* free 0x20000 on device 1 (2 MiB); device 0's 0x20000 stays live */
    call c = api_begin(RT(cudaFree_v3020), DRV(cuMemFree_v2), NULL);
    fake_cupti_emit_memory2(RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, c.rt, 0x20000, 2 * MIB, 1, NOSTREAM, 0, 0,
                            0);
    api_end(c, NULL);
    fact("free1.corr", c.rt);
    for (uint32_t d = 0; d < 2; d++) {
        char kn[16];
        snprintf(kn, sizeof kn, "k_dev%u", d);
        c = api_begin(RT(cudaLaunchKernel_v7000), DRV(cuLaunchKernel), NULL);
        uint64_t t = fake_cupti_now();
        fake_cupti_emit_kernel(c.drv, d, KSTREAM, kn, t + 1000, t + 5000);
        api_end(c, NULL);
        factf(c.drv, "k%u.corr", d);
    }
    gmemprof_mark("end");
    return 0;
}

/* A long run: E2E_LONG_N rounds of allocation + free + kernel activity
 * records (3 records each) straight through the fake CUPTI, no stall; the
 * peak RSS of the process is reported for the checker. */
static int sc_long(void)
{
    const char *ns = getenv("E2E_LONG_N");
    uint64_t n = ns ? strtoull(ns, NULL, 10) : 10000;
    uint64_t t = fake_cupti_now();
    for (uint64_t i = 0; i < n; i++) {
        uint64_t a = 0x40000000ull + (i % 1024) * 4096;
        fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, a, 4096, 0, NOSTREAM, 0, 0, 0);
        fake_cupti_emit_memory2(RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, a, 4096, 0, NOSTREAM, 0, 0, 0);
        fake_cupti_emit_kernel(0, 0, KSTREAM, "long_k", t + i * 10, t + i * 10 + 5);
    }
    fact("produced", 3 * n);
    fact("emitted", fake_cupti_records_emitted());
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fact("maxrss_kb", (uint64_t)ru.ru_maxrss);
    return 0;
}

/* A soak (bench/soak.sh): E2E_SOAK_S seconds of steps under the schedule
 * wait=1,warmup=0,active=1,repeat=0, so odd steps are windows. An active
 * step emits E2E_SOAK_ROUNDS rounds of allocation + free + kernel records
 * at full rate; a wait step emits none and idles E2E_SOAK_IDLE_MS, so every
 * record produced belongs to a window and written + dropped == produced
 * holds exactly (a dropped buffer is counted whole, whatever its epochs). */
static int sc_soak(void)
{
    const char *ds = getenv("E2E_SOAK_S"), *rs = getenv("E2E_SOAK_ROUNDS"), *is = getenv("E2E_SOAK_IDLE_MS");
    uint64_t secs = ds ? strtoull(ds, NULL, 10) : 10;
    uint64_t rounds = rs ? strtoull(rs, NULL, 10) : 100000;
    unsigned idle = is ? (unsigned)strtoul(is, NULL, 10) : 100;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t produced = 0, windows = 0, step = 0;
    for (;; step++) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        int late = (uint64_t)(t1.tv_sec - t0.tv_sec) >= secs;
        if (step % 2 == 0) { /* waiting */
            if (late)
                break;
            sleep_ms(idle);
        } else {
            for (uint64_t i = 0; i < rounds; i++) {
                uint64_t a = 0x40000000ull + (i % 1024) * 4096;
                fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, a, 4096, 0, NOSTREAM, 0, 0, 0);
                fake_cupti_emit_memory2(RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, a, 4096, 0, NOSTREAM, 0, 0, 0);
                uint64_t t = fake_cupti_now();
                fake_cupti_emit_kernel(0, 0, KSTREAM, "soak_k", t, t + 5);
            }
            produced += 3 * rounds;
            windows++;
        }
        gmemprof_step();
    }
    fact("produced", produced);
    fact("emitted", fake_cupti_records_emitted());
    fact("windows", windows);
    fact("steps", step);
    return 0;
}

/* ---- the flight recorder (GMEMPROF_SCHEDULE=on-oom) ------------------------ */

/* cudaMalloc -> cuMemAlloc_v2 failing with CUDA_ERROR_OUT_OF_MEMORY: no
 * record, the error at both exits (the driver's callback sees the size). */
static uint32_t cuda_malloc_oom(uint64_t bytes)
{
    struct { uint64_t *dptr; size_t bytesize; } dp = {NULL, bytes};
    call c = api_begin(RT(cudaMalloc_v3020), DRV(cuMemAlloc_v2), &dp);
    fake_cupti_api_exit(DRD, c.drv_cbid, c.drv, NULL, &dp, CUDA_ERROR_OUT_OF_MEMORY);
    fake_cupti_api_exit(RTD, c.rt_cbid, c.rt, NULL, NULL, 2 /* cudaErrorMemoryAllocation */);
    return c.drv;
}

#define OOM_W 0x100000ull       /* the weights: 4 MiB from step 0 on */
#define OOM_LEAK 0x8000000ull   /* step s keeps 256 KiB at OOM_LEAK + s * 1 MiB */
#define OOM_ACT 0x10000000ull   /* step s's activations: s MiB at OOM_ACT + s * 64 MiB, freed in the step */

/* One training step s (s >= 1): activations and a leak; in step `fail` the
 * activations stay and a 64 MiB request inside the range "forward" fails.
 * E2E_OOM_KERNEL set: first a kernel launch. */
static void oom_step(uint64_t s, uint64_t fail)
{
    if (getenv("E2E_OOM_KERNEL")) /* a kernel per step, its grid's x the step */
        launch_full("oom_k", (unsigned)s, 32, NULL, 0);
    cuda_malloc(OOM_ACT + s * 64 * MIB, s * MIB);
    cuda_malloc(OOM_LEAK + s * MIB, 256 * 1024);
    if (s == fail) {
        nvtxRangePushA("forward");
        factf(cuda_malloc_oom(64 * MIB), "oom%llu.corr", (unsigned long long)s);
        nvtxRangePop();
        return;
    }
    cuda_free(OOM_ACT + s * 64 * MIB, s * MIB);
}

/* NVTX ranges around a window (wait=1, active=1: step 0 waits, step 1 is
 * the window, step 2 is after it). "before" and "after" are never in it;
 * "reused" is begun before it and again inside; "across" is open when it
 * begins and holds an allocation of it; "failing" is outside it, but an
 * out-of-memory failure inside it is written into the trace. */
static int sc_nvtx_window(void)
{
    nvtxRangePushA("before");
    nvtxRangePop();
    nvtxRangePushA("reused");
    nvtxRangePop();
    nvtxRangePushA("across");
    gmemprof_step(); /* step 1: the window */
    fact("A.corr", cuda_malloc(0x10000, MIB));
    nvtxRangePop();
    nvtxRangePushA("inside");
    nvtxRangePop();
    nvtxRangePushA("reused");
    nvtxRangePop();
    gmemprof_step(); /* step 2: after the window */
    nvtxRangePushA("after");
    nvtxRangePop();
    nvtxRangePushA("failing");
    cuda_malloc_oom(64 * MIB);
    nvtxRangePop();
    cuda_free(0x10000, MIB);
    return 0;
}

/* The trace's descriptor once fill_trace_disk found it: every write() to it
 * fails with ENOSPC, as on a full disk. The program's write() comes before
 * libc's for the library too (e2e.cmake exports it). The descriptor itself
 * is left alone: the profiler checks that it still names its file. */
static _Atomic int g_full_fd = -1;

ssize_t write(int fd, const void *buf, size_t n)
{
    if (fd >= 0 && fd == atomic_load(&g_full_fd)) {
        errno = ENOSPC;
        return -1;
    }
    return syscall(SYS_write, fd, buf, n);
}

/* The disk of the trace fills up: this process's trace (.../trace-PID.zst,
 * or its temporary name before the writer claims the name) takes no more
 * bytes. */
static void fill_trace_disk(void)
{
    int fd = trace_fd();
    if (fd >= 0) {
        atomic_store(&g_full_fd, fd);
        fact("trace_full", 1);
    }
}

/* Steps 1..E2E_OOM_STEPS (default 5) of oom_step; a failure in step
 * E2E_OOM_FAIL (default the last) and, with E2E_OOM_AGAIN=K, after a
 * recovery (the failed step's activations freed) a second one in step K. */
static int sc_oom(void)
{
    const char *ns = getenv("E2E_OOM_STEPS"), *fs = getenv("E2E_OOM_FAIL"), *as = getenv("E2E_OOM_AGAIN");
    uint64_t n = ns ? strtoull(ns, NULL, 10) : 5, fail = fs ? strtoull(fs, NULL, 10) : n;
    uint64_t again = as ? strtoull(as, NULL, 10) : 0;
    fake_cuda_set_meminfo(0, 3 * MIB, 80 * GIB_);
    fact("tid", gettid_());
    cuda_malloc(OOM_W, 4 * MIB);
    const char *sig = getenv("E2E_OOM_SIGNAL_AT"); /* SIGUSR2 in that step: a dump on demand */
    int capture = getenv("E2E_OOM_CAPTURE") != NULL; /* steps 1 and 2 in a capture range */
    const char *full = getenv("E2E_OOM_DISK_FULL_AT"); /* the trace's disk fills up in that step */
    for (uint64_t s = 1; s <= n; s++) {
        gmemprof_step();
        if (full && strtoull(full, NULL, 10) == s)
            fill_trace_disk();
        if (capture && (s == 1 || s == 3))
            profiler_api(s == 1 ? RT(cudaProfilerStart_v4000) : RT(cudaProfilerStop_v4000));
        if (sig && strtoull(sig, NULL, 10) == s) {
            raise(SIGUSR2);
            sleep_ms(100);
        }
        oom_step(s, s == fail || s == again ? s : 0);
        if (s == fail && again) {
            sleep_ms(50); /* the program catches the error, frees and goes on */
            cuda_free(OOM_ACT + s * 64 * MIB, s * MIB);
        }
    }
    sleep_ms(50);
    return 0;
}

/* A program without steps: the weights, then for 2.5 s a 1 MiB cudaMalloc
 * and its cudaFree every 2 ms (the iterations are fact "iters"), then a
 * 64 MiB request that fails. */
static uint64_t mono_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* No steps, GMEMPROF_OOM_SECONDS=1: 2.5 s of allocations, then a failure.
 * The ring keeps chunks by the records' own times (recorder.h), so what
 * the dump must keep and must have dropped follows from when each
 * iteration ran, whatever the scheduling: each iteration's allocation is
 * stamped between before[i] and after[i]; the failure after t_fail0 and
 * before t_fail1. Kept for sure: before[i] >= t_fail1 - 1 s. Dropped for
 * sure: after[i] < t_fail0 - 1.5 s - 2 G, G the longest gap between
 * consecutive stamps (a chunk is a quarter of the span plus a gap, and the
 * last one began up to as long before the failure). 5 ms on each side for
 * clock rates. */
#define NOSTEP_MAX 100000
static uint64_t ns_before[NOSTEP_MAX], ns_after[NOSTEP_MAX];

static int sc_oom_nosteps(void)
{
    fake_cuda_set_meminfo(0, 3 * MIB, 80 * GIB_);
    cuda_malloc(OOM_W, 4 * MIB);
    uint64_t t0 = mono_now(), n = 0;
    while (n < NOSTEP_MAX) {
        ns_before[n] = mono_now();
        cuda_malloc(OOM_ACT, MIB);
        ns_after[n] = mono_now();
        cuda_free(OOM_ACT, MIB);
        n++;
        sleep_ms(2);
        if (mono_now() - t0 >= 2500000000ull)
            break;
    }
    uint64_t fail0 = mono_now();
    cuda_malloc_oom(64 * MIB);
    uint64_t fail1 = mono_now(), gap = 0, keep = 0, drop = 0;
    for (uint64_t i = 0; i + 1 < n; i++)
        if (ns_after[i + 1] - ns_before[i] > gap)
            gap = ns_after[i + 1] - ns_before[i];
    gap += fail1 - ns_before[n - 1] > gap ? fail1 - ns_before[n - 1] - gap : 0;
    for (uint64_t i = 0; i < n; i++) {
        keep += ns_before[i] + 1000000000ull >= fail1 + 5000000ull;
        drop += ns_after[i] + 1500000000ull + 2 * gap + 5000000ull < fail0;
    }
    fact("iters", n);
    fact("must_keep", keep);
    fact("must_drop", drop);
    sleep_ms(50);
    return 0;
}

/* Two ranks of sc_oom, as a launcher such as torchrun starts them: rank 0
 * runs through, rank 1 fails in step 5. This process makes no context. */
static int sc_oom_ranks(const char *self)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    pid_t pid[2];
    for (int k = 0; k < 2; k++) {
        char **envp = calloc(n + 3, sizeof *envp);
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (strncmp(environ[i], "E2E_FACTS=", 10) != 0 && strncmp(environ[i], "RANK=", 5) != 0)
                envp[m++] = environ[i];
        envp[m++] = k ? "RANK=1" : "RANK=0";
        envp[m++] = k ? "E2E_OOM_FAIL=5" : "E2E_OOM_FAIL=99";
        char *argv[] = {(char *)self, "oom", NULL};
        pid[k] = fork();
        if (pid[k] == 0) {
            execve(self, argv, envp);
            _exit(127);
        }
        free(envp);
    }
    for (int k = 0; k < 2; k++)
        wait_child(pid[k], 10000);
    return 0;
}

/* Records made = written + dropped + outside windows, exactly
 * (profiler.e2e.accounting): E2E_ACC_STEPS steps (even) under the schedule
 * wait=1,warmup=0,active=1,repeat=0, with no pause between them. An active
 * step makes E2E_ACC_ROUNDS rounds of ALLOC + FREE + KERNEL records, a
 * waiting step 100 rounds of ALLOC + FREE (outside every window: counted,
 * not written); none has an API call, so each takes the epoch of its time.
 * After the last step, CUPTI reports 7 records dropped and no buffer
 * completes after that. */
static int sc_accounting(void)
{
    const char *ss = getenv("E2E_ACC_STEPS"), *rs = getenv("E2E_ACC_ROUNDS");
    uint64_t steps = ss ? strtoull(ss, NULL, 10) : 200, rounds = rs ? strtoull(rs, NULL, 10) : 2000;
    for (uint64_t step = 0; step < steps; step++) {
        int active = step % 2 == 1;
        for (uint64_t i = 0; i < (active ? rounds : 100); i++) {
            uint64_t a = 0x40000000ull + (i % 1024) * 4096;
            fake_cupti_emit_memory2(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, a, 4096, 0, NOSTREAM, 0, 0, 0);
            fake_cupti_emit_memory2(RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, a, 4096, 0, NOSTREAM, 0, 0, 0);
            if (active) {
                uint64_t t = fake_cupti_now();
                fake_cupti_emit_kernel(0, 0, KSTREAM, "acc_k", t, t + 5);
            }
        }
        gmemprof_step();
    }
    fake_cupti_set_dropped(7);
    fact("steps", steps);
    fact("rounds", rounds);
    fact("emitted", fake_cupti_records_emitted());
    fact("cupti_dropped", fake_cupti_records_dropped());
    return 0;
}

/* ---- the PyTorch bridge (fake_bridge.c, fake_c10.c) ---------------------- */

#define TSEG 0x7f0001400000ull /* after the fake bridge's seeded segment */
#define TSEG1 0x7f1000000000ull
#define TSTREAM 0x5000ull

typedef int (*bridge_event_fn)(unsigned, unsigned, uint64_t, uint64_t, uint64_t, uint64_t);
static bridge_event_fn g_bev;
typedef void (*bridge_op_fn)(int, const char *, int);
static bridge_op_fn g_bop;

/* Device 0's context, which attaches the fake bridge (GMEMPROF_TORCH_BRIDGE,
 * already loaded by the profiler); its handle, with g_bev and g_bop set
 * from it (NULL each when no bridge listens). */
static void *bridge_open(void)
{
    fake_cupti_context_created(0);
    const char *bp = getenv("GMEMPROF_TORCH_BRIDGE");
    void *h = bp ? dlopen(bp, RTLD_NOW | RTLD_NOLOAD) : NULL;
    g_bev = h ? (bridge_event_fn)dlsym(h, "fake_bridge_event") : NULL;
    g_bop = h ? (bridge_op_fn)dlsym(h, "fake_bridge_op") : NULL;
    return h;
}

/* An allocator event; a no-op (fact "bridge_off") when no bridge listens. */
static void bev(unsigned action, unsigned dev, uint64_t addr, uint64_t bytes)
{
    if (!g_bev || g_bev(action, dev, addr, bytes, TSTREAM, 0) != 0)
        fact("bridge_off", 1);
}

static void *torch_thread(void *p)
{
    (void)p;
    fact("t2.tid", gettid_());
    bev(GMT_BLK_SEGMENT_ALLOC, 1, TSEG1, 2 * MIB);
    bev(GMT_BLK_ALLOC, 1, TSEG1, 1 * MIB);
    return NULL;
}

/* Seeded: a 20 MiB segment with 1 MiB + 512 KiB live (fake_bridge.c). A
 * tag before the first context (the program's first CUDA call), as a
 * script's snapshot before its model is built. */
/* The allocator's events while the writer is held (profiler.e2e.torch_overflow):
 * 20,000 tensors of 4 KiB allocated and freed in one 20 MiB segment, three
 * events each, far more than the event ring holds. The program must go on,
 * and every event must be written or counted as dropped. */
static int sc_torch_overflow(void)
{
    (void)bridge_open();
    fake_cupti_context_created(1);
    cuda_malloc(TSEG, 20 * MIB);
    bev(GMT_BLK_SEGMENT_ALLOC, 0, TSEG, 20 * MIB);
    fake_cupti_block_flush(1);
    for (int i = 0; i < 5000 && !fake_cupti_flush_blocked(); i++)
        sleep_ms(1);
    fact("blocked", (uint64_t)fake_cupti_flush_blocked());
    for (uint64_t i = 0; i < 20000; i++) {
        uint64_t a = TSEG + (i % 5000) * 4096;
        bev(GMT_BLK_ALLOC, 0, a, 4096);
        bev(GMT_BLK_FREE_REQUESTED, 0, a, 4096);
        bev(GMT_BLK_FREE_COMPLETED, 0, a, 4096);
    }
    fact("produced", 1 + 3 * 20000);
    fake_cupti_block_flush(0);
    return 0;
}

static int sc_torch(void)
{
    gmemprof_mark("before_model");
    (void)bridge_open();
    fact("tid", gettid_());
    fake_cupti_context_created(1);
    cuda_malloc(0x7f0000000000ull, 20 * MIB); /* the seeded segment, as CUPTI saw it */
    gmemprof_step();                          /* step 1 */
    fact("seg.corr", cuda_malloc(TSEG, 20 * MIB));
    bev(GMT_BLK_SEGMENT_ALLOC, 0, TSEG, 20 * MIB);
    nvtxRangePushA("forward");
    bev(GMT_BLK_ALLOC, 0, TSEG, 4 * MIB);
    fact("ka.corr", launch("k_a"));
    bev(GMT_BLK_ALLOC, 0, TSEG + 4 * MIB, 2 * MIB);
    fact("kb.corr", launch("k_b"));
    bev(GMT_BLK_FREE_REQUESTED, 0, TSEG + 4 * MIB, 2 * MIB);
    bev(GMT_BLK_FREE_COMPLETED, 0, TSEG + 4 * MIB, 2 * MIB);
    nvtxRangePop();
    gmemprof_mark("after_forward");
    pthread_t th;
    pthread_create(&th, NULL, torch_thread, NULL);
    pthread_join(th, NULL);
    /* record_stream: freed by the program, reusable only after k_c */
    bev(GMT_BLK_ALLOC, 0, TSEG + 6 * MIB, 1 * MIB);
    bev(GMT_BLK_FREE_REQUESTED, 0, TSEG + 6 * MIB, 1 * MIB);
    fact("kc.corr", launch("k_c"));
    bev(GMT_BLK_FREE_COMPLETED, 0, TSEG + 6 * MIB, 1 * MIB);
    gmemprof_mark("end");
    return 0;
}

/* Small tensors while a large one waits for its size (FAKE_BRIDGE_COUNTERS=1):
 * the small ones carry their size and no reading, the large ones a reading
 * that counts the small ones too. */
static int sc_torch_small(void)
{
    (void)bridge_open();
    fake_cupti_context_created(1);
    cuda_malloc(TSEG, 20 * MIB);
    bev(GMT_BLK_SEGMENT_ALLOC, 0, TSEG, 20 * MIB);
    bev(GMT_BLK_ALLOC, 0, TSEG, 4 * MIB); /* held until the next reading */
    bev(GMT_BLK_ALLOC, 0, TSEG + 4 * MIB, 64 * 1024);
    bev(GMT_BLK_ALLOC, 0, TSEG + 4 * MIB + 64 * 1024, 512);
    bev(GMT_BLK_FREE_REQUESTED, 0, TSEG + 4 * MIB, 64 * 1024);
    bev(GMT_BLK_FREE_COMPLETED, 0, TSEG + 4 * MIB, 64 * 1024);
    bev(GMT_BLK_ALLOC, 0, TSEG + 8 * MIB, 3 * MIB); /* its reading settles the first */
    gmemprof_mark("end");                          /* a flush: settles the second */
    return 0;
}

/* A free requested on one thread and completed on another right after it
 * (a record_stream block whose event another thread's allocator call finds
 * done): the completion is that thread's, never folded into the request;
 * then a same-thread pair, which is (profiler/sources/torch.c, complete_newest). */
static _Atomic int xt_ready, xt_go;

static void *completer_thread(void *p)
{
    (void)p;
    fact("t3.tid", gettid_());
    atomic_store(&xt_ready, 1);
    while (!atomic_load(&xt_go))
        ;
    bev(GMT_BLK_FREE_COMPLETED, 0, TSEG, 1 * MIB);
    return NULL;
}

static int sc_torch_xthread(void)
{
    (void)bridge_open();
    fact("tid", gettid_());
    fake_cupti_context_created(1);
    cuda_malloc(TSEG, 20 * MIB);
    bev(GMT_BLK_SEGMENT_ALLOC, 0, TSEG, 20 * MIB);
    bev(GMT_BLK_ALLOC, 0, TSEG, 1 * MIB);
    pthread_t th;
    pthread_create(&th, NULL, completer_thread, NULL);
    while (!atomic_load(&xt_ready))
        ;
    bev(GMT_BLK_FREE_REQUESTED, 0, TSEG, 1 * MIB);
    atomic_store(&xt_go, 1);
    pthread_join(th, NULL);
    bev(GMT_BLK_ALLOC, 0, TSEG + 1 * MIB, 2 * MIB);
    bev(GMT_BLK_FREE_REQUESTED, 0, TSEG + 1 * MIB, 2 * MIB);
    bev(GMT_BLK_FREE_COMPLETED, 0, TSEG + 1 * MIB, 2 * MIB);
    return 0;
}

/* With the bridge and the flight recorder: a segment and blocks, then in
 * step 2, inside "aten::mm", the allocator's cudaMalloc fails (it may
 * still recover: no dump) and it gives up (its OOM event: the dump). */
static int sc_torch_oom(void)
{
    (void)bridge_open();
    fact("tid", gettid_());
    fake_cuda_set_meminfo(0, 2 * MIB, 80 * GIB_);
    cuda_malloc(0x7f0000000000ull, 20 * MIB); /* the seeded segment, as CUPTI saw it */
    gmemprof_step();                          /* step 1 */
    cuda_malloc(TSEG, 20 * MIB);
    bev(GMT_BLK_SEGMENT_ALLOC, 0, TSEG, 20 * MIB);
    bev(GMT_BLK_ALLOC, 0, TSEG, 4 * MIB);
    gmemprof_step(); /* step 2 */
    nvtxRangePushA("aten::mm");
    bev(GMT_BLK_ALLOC, 0, TSEG + 4 * MIB, 8 * MIB);
    cuda_malloc_oom(64 * MIB);
    if (!g_bev || g_bev(GMT_BLK_OOM, 0, 2 * MIB, 64 * MIB, TSTREAM, 0) != 0) /* address: the free bytes */
        fact("bridge_off", 1);
    nvtxRangePop();
    sleep_ms(50);
    return 0;
}

/* ---- op ranges and optimizer steps from the bridge (fake_bridge.c) ------- */

typedef void (*bridge_opt_fn)(const char *);
typedef unsigned (*bridge_watching_fn)(unsigned *);

#define OSEG 0x7f0002800000ull /* a segment of the scenario's own */

static void op(int begin, const char *name, int backward)
{
    if (g_bop)
        g_bop(begin, name, backward);
}

/* autograd's backward thread: MmBackward0 takes 512 KiB and frees the
 * 2 MiB that aten::mm made */
static void *backward_thread(void *p)
{
    uint64_t base = *(const uint64_t *)p;
    fact("bw.tid", gettid_());
    op(1, "MmBackward0", 1);
    bev(GMT_BLK_ALLOC, 0, base + 3 * MIB, 512 * 1024);
    bev(GMT_BLK_FREE_REQUESTED, 0, base + 1 * MIB, 2 * MIB);
    bev(GMT_BLK_FREE_COMPLETED, 0, base + 1 * MIB, 2 * MIB);
    op(0, NULL, 0);
    return NULL;
}

/* One forward and backward pass: aten::linear 1 MiB, inside it aten::t (a
 * view: nothing) and aten::mm 2 MiB; aten::view (nothing); aten::relu_ (a
 * launch only); aten::sdpa around an NVTX range "attn" (nothing else); the
 * backward on its own thread; then the 1 MiB and the 512 KiB freed outside
 * any op. */
static void pass(int k)
{
    uint64_t base = OSEG + (uint64_t)k * 4 * MIB;
    op(1, "aten::linear", 0);
    op(1, "aten::t", 0);
    op(0, NULL, 0);
    bev(GMT_BLK_ALLOC, 0, base, 1 * MIB);
    op(1, "aten::mm", 0);
    bev(GMT_BLK_ALLOC, 0, base + 1 * MIB, 2 * MIB);
    op(0, NULL, 0);
    op(0, NULL, 0);
    op(1, "aten::view", 0);
    op(0, NULL, 0);
    op(1, "aten::relu_", 0);
    launch("k_relu");
    op(0, NULL, 0);
    op(1, "aten::sdpa", 0);
    nvtxRangePushA("attn");
    nvtxRangePop();
    op(0, NULL, 0);
    pthread_t th;
    pthread_create(&th, NULL, backward_thread, &base);
    pthread_join(th, NULL);
    bev(GMT_BLK_FREE_REQUESTED, 0, base, 1 * MIB);
    bev(GMT_BLK_FREE_COMPLETED, 0, base, 1 * MIB);
    bev(GMT_BLK_FREE_REQUESTED, 0, base + 3 * MIB, 512 * 1024);
    bev(GMT_BLK_FREE_COMPLETED, 0, base + 3 * MIB, 512 * 1024);
}

/* An optimizer step that takes and gives back `bytes` inside its op. */
static void optimizer_step(bridge_opt_fn ostep, const char *name, uint64_t bytes)
{
    op(1, name, 0);
    bev(GMT_BLK_ALLOC, 0, OSEG + 16 * MIB, bytes);
    bev(GMT_BLK_FREE_REQUESTED, 0, OSEG + 16 * MIB, bytes);
    bev(GMT_BLK_FREE_COMPLETED, 0, OSEG + 16 * MIB, bytes);
    op(0, NULL, 0);
    if (ostep)
        ostep(name);
}

/* Six iterations of a training loop that marks nothing: one pass and an
 * SGD step each; iteration 2 steps a second optimizer (Adam) right after
 * SGD, iteration 3 accumulates two passes before its SGD step. */
static int sc_torch_ops(void)
{
    void *h = bridge_open();
    bridge_opt_fn ostep = h ? (bridge_opt_fn)dlsym(h, "fake_bridge_optimizer_step") : NULL;
    bridge_watching_fn watching = h ? (bridge_watching_fn)dlsym(h, "fake_bridge_watching") : NULL;
    fact("tid", gettid_());
    bev(GMT_BLK_SEGMENT_ALLOC, 0, OSEG, 20 * MIB);
    for (int it = 0; it < 6; it++) {
        unsigned ops_on = 0;
        factf(watching ? watching(&ops_on) : 99, "watch.%d", it);
        pass(0);
        if (it == 3)
            pass(1);
        optimizer_step(ostep, "Optimizer.step#SGD.step", 256 * 1024);
        if (it == 2)
            optimizer_step(ostep, "Optimizer.step#Adam.step", 128 * 1024);
        launch("k_iter");
    }
    unsigned ops_on = 0;
    fact("watch.end", watching ? watching(&ops_on) : 99);
    fact("ops_on_calls", ops_on);
    return 0;
}

/* ---- module ranges, backward and frames from the bridge (fake_bridge.c) --- */

typedef void (*bridge_mod_fn)(int, const char *);
typedef void (*bridge_seqop_fn)(int, const char *, int64_t, uint32_t);
typedef int (*bridge_evat_fn)(unsigned, unsigned, uint64_t, uint64_t, uint64_t, const char *, const char *);
typedef unsigned (*bridge_count_fn)(void);

#define MSEG 0x7f0003c00000ull /* a segment of the scenario's own */

static struct {
    bridge_mod_fn mod;
    bridge_seqop_fn fwd, bwd;
    bridge_evat_fn evat;
    uint32_t tid_a, tid_b;
} M;

static const char F_EMB[] = "train.py:20 GPT.forward";
static const char F_MM[] = "model.py:7 Block.forward";
static const char F_CONV[] = "cnn.py:5 CNN.forward";
static const char S_EMB[] = "train.py:20 GPT.forward\ntrain.py:41 main";

static void mev(unsigned action, uint64_t addr, uint64_t bytes, const char *frame, const char *stack)
{
    if (!M.evat || M.evat(action, 0, addr, bytes, TSTREAM, frame, stack) != 0)
        fact("bridge_off", 1);
}

/* Thread A: GPT's forward: aten::embedding (1 MiB, twice at one line,
 * 2 x 1 MiB) in GPT, then aten::mm (2 MiB) in GPT.h.0; sequence numbers 1
 * and 2. */
static void *module_thread_a(void *p)
{
    (void)p;
    M.tid_a = (uint32_t)gettid_();
    fact("a.tid", M.tid_a);
    M.mod(1, "GPT");
    M.fwd(1, "aten::embedding", 1, M.tid_a);
    mev(GMT_BLK_ALLOC, MSEG, 1 * MIB, F_EMB, S_EMB);
    mev(GMT_BLK_ALLOC, MSEG + 1 * MIB, 1 * MIB, F_EMB, S_EMB);
    M.fwd(0, NULL, 0, 0);
    M.mod(1, "GPT.h.0");
    M.fwd(1, "aten::mm", 2, M.tid_a);
    mev(GMT_BLK_ALLOC, MSEG + 2 * MIB, 2 * MIB, F_MM, NULL);
    M.fwd(0, NULL, 0, 0);
    M.mod(0, NULL);
    M.mod(0, NULL);
    return NULL;
}

/* Thread B: CNN's forward: aten::conv2d (4 MiB) with the same sequence
 * number 1 as thread A's embedding (numbers are per thread). */
static void *module_thread_b(void *p)
{
    (void)p;
    M.tid_b = (uint32_t)gettid_();
    fact("b.tid", M.tid_b);
    M.mod(1, "CNN");
    M.fwd(1, "aten::conv2d", 1, M.tid_b);
    mev(GMT_BLK_ALLOC, MSEG + 4 * MIB, 4 * MIB, F_CONV, NULL);
    M.fwd(0, NULL, 0, 0);
    M.mod(0, NULL);
    return NULL;
}

/* autograd's thread: MmBackward0 (512 KiB) of A's 2, EmbeddingBackward0
 * (256 KiB) of A's 1, ConvolutionBackward0 (128 KiB) of B's 1,
 * AccumulateGrad (no number, allocates nothing). No frame: not Python. */
static void *module_thread_bw(void *p)
{
    (void)p;
    fact("bw.tid", gettid_());
    M.bwd(1, "MmBackward0", 2, M.tid_a);
    mev(GMT_BLK_ALLOC, MSEG + 8 * MIB, 512 * 1024, NULL, NULL);
    M.bwd(0, NULL, 0, 0);
    M.bwd(1, "EmbeddingBackward0", 1, M.tid_a);
    mev(GMT_BLK_ALLOC, MSEG + 9 * MIB, 256 * 1024, NULL, NULL);
    M.bwd(0, NULL, 0, 0);
    M.bwd(1, "ConvolutionBackward0", 1, M.tid_b);
    mev(GMT_BLK_ALLOC, MSEG + 10 * MIB, 128 * 1024, NULL, NULL);
    M.bwd(0, NULL, 0, 0);
    M.bwd(1, "AccumulateGrad", -1, M.tid_a);
    M.bwd(0, NULL, 0, 0);
    return NULL;
}

/* Two forward threads, one after the other, then the backward thread;
 * then every block freed outside any range. */
static int sc_torch_modules(void)
{
    void *h = bridge_open();
    M.mod = h ? (bridge_mod_fn)dlsym(h, "fake_bridge_module") : NULL;
    M.fwd = h ? (bridge_seqop_fn)dlsym(h, "fake_bridge_fwd_op") : NULL;
    M.bwd = h ? (bridge_seqop_fn)dlsym(h, "fake_bridge_bwd_op") : NULL;
    M.evat = h ? (bridge_evat_fn)dlsym(h, "fake_bridge_event_at") : NULL;
    bridge_count_fn interned = h ? (bridge_count_fn)dlsym(h, "fake_bridge_interned") : NULL;
    if (!M.mod || !M.fwd || !M.bwd || !M.evat) {
        fact("bridge_off", 1);
        return 0;
    }
    mev(GMT_BLK_SEGMENT_ALLOC, MSEG, 20 * MIB, NULL, NULL);
    void *(*fns[])(void *) = {module_thread_a, module_thread_b, module_thread_bw};
    for (int i = 0; i < 3; i++) {
        pthread_t th;
        pthread_create(&th, NULL, fns[i], NULL);
        pthread_join(th, NULL);
    }
    static const uint64_t at[] = {0, 1, 2, 4, 8, 9, 10};
    static const uint64_t kib[] = {1024, 1024, 2048, 4096, 512, 256, 128};
    for (int i = 0; i < 7; i++) {
        mev(GMT_BLK_FREE_REQUESTED, MSEG + at[i] * MIB, kib[i] * 1024, NULL, NULL);
        mev(GMT_BLK_FREE_COMPLETED, MSEG + at[i] * MIB, kib[i] * 1024, NULL, NULL);
    }
    fact("interned", interned ? interned() : 0);
    return 0;
}

/* Owners (fake_bridge_owner): GPT's parameters (1 MiB block at MSEG,
 * 1,000,000 bytes of tensors) and its buffer GPT.ln (512 KiB block at
 * MSEG + 1 MiB, 2048 bytes) are allocated before any module runs and
 * reported at GPT's first forward; a second forward reports nothing. */
typedef int (*bridge_owner_fn)(const char *, unsigned, unsigned, uint64_t, uint64_t);

static int sc_torch_owners(void)
{
    void *h = bridge_open();
    M.mod = h ? (bridge_mod_fn)dlsym(h, "fake_bridge_module") : NULL;
    M.evat = h ? (bridge_evat_fn)dlsym(h, "fake_bridge_event_at") : NULL;
    bridge_owner_fn owner = h ? (bridge_owner_fn)dlsym(h, "fake_bridge_owner") : NULL;
    if (!M.mod || !M.evat || !owner) {
        fact("bridge_off", 1);
        return 0;
    }
    mev(GMT_BLK_SEGMENT_ALLOC, MSEG, 20 * MIB, NULL, NULL);
    mev(GMT_BLK_ALLOC, MSEG, 1 * MIB, NULL, NULL);
    mev(GMT_BLK_ALLOC, MSEG + 1 * MIB, 512 * 1024, NULL, NULL);
    for (int call = 0; call < 2; call++) {
        M.mod(1, "GPT");
        if (call == 0) {
            fact("owner.param", (uint64_t)(owner("GPT", GMT_BLKF_PARAMETER, 0, MSEG, 1000000) == 0));
            fact("owner.buffer", (uint64_t)(owner("GPT.ln", GMT_BLKF_BUFFER, 0, MSEG + 1 * MIB, 2048) == 0));
        }
        mev(GMT_BLK_ALLOC, MSEG + 2 * MIB, 2 * MIB, NULL, NULL);
        mev(GMT_BLK_FREE_REQUESTED, MSEG + 2 * MIB, 2 * MIB, NULL, NULL);
        mev(GMT_BLK_FREE_COMPLETED, MSEG + 2 * MIB, 2 * MIB, NULL, NULL);
        M.mod(0, NULL);
    }
    if (getenv("OWNERS_OOM")) {
        /* three steps later the allocator gives up on 64 MiB (its OOM
         * event, with 2 MiB free as the address): the flight recorder keeps
         * one step, so the dump knows the owners from its baseline only */
        for (int i = 0; i < 3; i++)
            gmemprof_step();
        mev(GMT_BLK_OOM, 2 * MIB, 64 * MIB, NULL, NULL);
    }
    return 0;
}

/* Op ranges in a burst (OPS_N ops, OPS_SPIN_NS of the program's own time
 * after each): every odd op allocates and frees a 4 KiB block inside it
 * (its range must begin, before the block), every even op does nothing (it
 * must leave no event). Facts: ops, ns (the loop's time). */
static int sc_torch_ops_rate(void)
{
    (void)bridge_open();
    long n = getenv("OPS_N") ? atol(getenv("OPS_N")) : 1000000;
    long spin = getenv("OPS_SPIN_NS") ? atol(getenv("OPS_SPIN_NS")) : 0; /* the program's own time per op */
    static const char *const names[] = {"aten::add", "aten::mm", "aten::empty_strided", "aten::_softmax"};
    struct timespec a, b;
    bev(GMT_BLK_SEGMENT_ALLOC, 0, OSEG, 2 * MIB);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        op(1, names[i & 3], 0);
        if (i & 1) {
            uint64_t at = OSEG + (uint64_t)(i & 255) * 4096;
            bev(GMT_BLK_ALLOC, 0, at, 4096);
            bev(GMT_BLK_FREE_REQUESTED, 0, at, 4096);
            bev(GMT_BLK_FREE_COMPLETED, 0, at, 4096);
        }
        op(0, NULL, 0);
        if (spin) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            do
                clock_gettime(CLOCK_MONOTONIC, &t1);
            while ((t1.tv_sec - t0.tv_sec) * 1000000000l + (t1.tv_nsec - t0.tv_nsec) < spin);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    fact("ops", (uint64_t)n);
    fact("ns", (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec)));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: e2e_app SCENARIO\n");
        return 2;
    }
    const char *sc = argv[1];
    const char *fp = getenv("E2E_FACTS");
    if (fp)
        g_facts = fopen(fp, "w");
    fact("pid", (uint64_t)getpid());
    if (strcmp(sc, "sigchain") == 0)
        signal(SIGTERM, app_handler); /* installed before the profiler */
    if (strcmp(sc, "sigign") == 0)
        signal(SIGTERM, SIG_IGN);
    if (strcmp(sc, "exitload") == 0 && atexit(after_profiler_end) != 0)
        return 97;
    if (getenv("E2E_STDOUT_NULL"))
        stdout_devnull();
    if (getenv("E2E_CONFLICT"))
        fake_cupti_set_conflict(getenv("E2E_CONFLICT")); /* another tool came first */
    load_profiler();
    if (strncmp(sc, "torch", 5) == 0 && getenv("E2E_C10") && !dlopen(getenv("E2E_C10"), RTLD_NOW | RTLD_GLOBAL))
        return 92; /* "import torch": before the first context, as in PyTorch */
    if (strcmp(sc, "agent") != 0 && strncmp(sc, "torch", 5) != 0 && strcmp(sc, "oom_ranks") != 0) /* sc_torch: after a tag */
        fake_cupti_context_created(0);
    int rc;
    if (strcmp(sc, "whole") == 0)
        rc = sc_whole();
    else if (strcmp(sc, "schedule") == 0)
        rc = sc_schedule();
    else if (strcmp(sc, "nvtx_steps") == 0)
        rc = sc_nvtx_steps();
    else if (strcmp(sc, "nvtx_window") == 0)
        rc = sc_nvtx_window();
    else if (strcmp(sc, "api_precedence") == 0)
        rc = sc_api_precedence();
    else if (strcmp(sc, "capture") == 0)
        rc = sc_capture();
    else if (strcmp(sc, "tags") == 0)
        rc = sc_tags();
    else if (strcmp(sc, "clock") == 0)
        rc = sc_clock();
    else if (strcmp(sc, "threads") == 0)
        rc = sc_threads();
    else if (strcmp(sc, "burst") == 0)
        rc = sc_burst();
    else if (strcmp(sc, "launch") == 0)
        rc = sc_launch();
    else if (strcmp(sc, "xthread") == 0)
        rc = sc_xthread();
    else if (strcmp(sc, "launch_many") == 0)
        rc = sc_launch_many();
    else if (strcmp(sc, "copies") == 0)
        rc = e2e_sc_copies(fact);
    else if (strcmp(sc, "overflow") == 0)
        rc = sc_overflow();
    else if (strcmp(sc, "settings") == 0)
        rc = sc_settings();
    else if (strcmp(sc, "plain") == 0 || strcmp(sc, "devstdout") == 0 || strcmp(sc, "longname") == 0)
        rc = sc_plain();
    else if (strcmp(sc, "torch_ops") == 0)
        rc = sc_torch_ops();
    else if (strcmp(sc, "torch_modules") == 0)
        rc = sc_torch_modules();
    else if (strcmp(sc, "torch_owners") == 0)
        rc = sc_torch_owners();
    else if (strcmp(sc, "torch_ops_rate") == 0)
        rc = sc_torch_ops_rate();
    else if (strcmp(sc, "torch_overflow") == 0)
        rc = sc_torch_overflow();
    else if (strcmp(sc, "sigterm") == 0)
        rc = sc_signal(SIGTERM);
    else if (strcmp(sc, "sigint") == 0)
        rc = sc_signal(SIGINT);
    else if (strcmp(sc, "sighup") == 0)
        rc = sc_signal(SIGHUP);
    else if (strcmp(sc, "closefds") == 0)
        rc = sc_closefds();
    else if (strcmp(sc, "exitload") == 0)
        rc = sc_exitload();
    else if (strcmp(sc, "sigexit") == 0)
        rc = sc_sigexit();
    else if (strcmp(sc, "sigload") == 0)
        rc = sc_sigload();
    else if (strcmp(sc, "sigchain") == 0)
        rc = sc_sigchain();
    else if (strcmp(sc, "sigkill") == 0)
        rc = sc_sigkill();
    else if (strcmp(sc, "fork") == 0)
        rc = sc_fork();
    else if (strcmp(sc, "sigign") == 0)
        rc = sc_sigign();
    else if (strcmp(sc, "time") == 0)
        rc = sc_time();
    else if (strcmp(sc, "budget") == 0)
        rc = sc_budget();
    else if (strcmp(sc, "vmm") == 0)
        rc = sc_vmm();
    else if (strcmp(sc, "sources") == 0)
        rc = sc_sources();
    else if (strcmp(sc, "attrs") == 0)
        rc = sc_attrs();
    else if (strcmp(sc, "exit") == 0)
        rc = sc_exit();
    else if (strcmp(sc, "abort") == 0)
        rc = sc_abort();
    else if (strcmp(sc, "forkexec") == 0)
        rc = sc_forkexec(argv[0], 0);
    else if (strcmp(sc, "agent") == 0)
        rc = sc_forkexec(argv[0], 1);
    else if (strcmp(sc, "devices") == 0)
        rc = sc_devices();
    else if (strcmp(sc, "long") == 0)
        rc = sc_long();
    else if (strcmp(sc, "soak") == 0)
        rc = sc_soak();
    else if (strcmp(sc, "accounting") == 0)
        rc = sc_accounting();
    else if (strcmp(sc, "torch_oom") == 0)
        rc = sc_torch_oom();
    else if (strcmp(sc, "torch_small") == 0)
        rc = sc_torch_small();
    else if (strcmp(sc, "torch_xthread") == 0)
        rc = sc_torch_xthread();
    else if (strncmp(sc, "torch", 5) == 0)
        rc = sc_torch();
    else if (strcmp(sc, "oom_ranks") == 0)
        rc = sc_oom_ranks(argv[0]);
    else if (strcmp(sc, "oom_nosteps") == 0)
        rc = sc_oom_nosteps();
    else if (strncmp(sc, "oom", 3) == 0)
        rc = sc_oom();
    else {
        fprintf(stderr, "e2e_app: unknown scenario %s\n", sc);
        rc = 2;
    }
    if (g_facts)
        fclose(g_facts);
    g_facts = NULL;
    return rc;
}
