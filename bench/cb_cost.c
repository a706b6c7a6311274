/*
 * cb_cost: what libgmemprof.so adds to one kernel launch on the application
 * thread, in nanoseconds.
 *
 * A launch through the CUDA runtime makes four CUPTI callback sites
 * (cudaLaunchKernel ENTER/EXIT and the nested cuLaunchKernel ENTER/EXIT), of
 * which the profiler subscribes the driver's two (profiler/collect.c,
 * rt_cbid_wanted). This program drives all four through the fake CUPTI
 * (tests/profiler/fake_cupti.c), once with the profiler's callback
 * subscribed and once with the callbacks of those ids disabled, and reports
 * the difference per launch: the cost of our callback bodies (TLS, the
 * correlation-table publish), not CUPTI's own dispatch (which a real GPU run
 * adds; see docs/benchmarks.md). Run it on several threads to see the
 * effect of sharing (the table is written by all of them).
 *
 *   gmp_cb_cost LIBGMEMPROF [LAUNCHES [THREADS [KERNELS [COLD_KIB]]]]
 * COLD_KIB > 0: between two launches each thread reads COLD_KIB KiB of its
 * own memory, as a Python interpreter and a framework's dispatcher do
 * between the launches of a launch-bound loop, so the callbacks find their
 * data evicted; only the launches are timed then (a monotonic clock around
 * each, the same with and without the profiler).
 * (LD_LIBRARY_PATH must reach the fake libcupti.so.13 / libcuda.so.1.)
 * It also times an NVTX push/pop pair through the real NVTX v3 headers
 * (the library's own export-table handlers), in paced batches so the event
 * ring never overflows (a dropped event would be a cheaper path).
 * With CB_COST_BRIDGE (the tests' fake bridge, tests/profiler/fake_bridge.c)
 * and CB_COST_C10 (its stand-in libc10_cuda.so) it also times the PyTorch
 * bridge's hot path: host->block, which the allocator's trace tracker calls
 * three times for a tensor's alloc + free (ALLOC, FREE_REQUESTED,
 * FREE_COMPLETED), paced like the NVTX batches, beside host->origin alone
 * at the alloc and at the free (who and when: the least any record of the
 * tensor costs the profiler on that thread), and an op range through
 * host->op_begin/op_end, with and without a block allocated inside it.
 * Prints one line per configuration; exits non-zero only when the profiler
 * did not see the launches at all.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include "fake_cupti.h"
#include "gmemprof/trace_format.h"
#include "torch_bridge.h"

#define RTD CUPTI_CB_DOMAIN_RUNTIME_API
#define DRD CUPTI_CB_DOMAIN_DRIVER_API
#define RT_LAUNCH CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
#define DRV_LAUNCH CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel

static long g_launches = 1000000;

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of the calling thread: a shared, loaded machine (CI) must not
 * count time the thread spent preempted. */
static uint64_t now_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

/* Around a single launch (COLD_KIB): the thread's CPU clock is a system
 * call, the monotonic one is not. */
static uint64_t mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

static int g_threads;
static size_t g_cold; /* bytes read between two launches (COLD_KIB) */

/* Reads every cache line of buf once: the lines the callbacks used are
 * evicted from the caches this thread's core has. */
static uint64_t evict(const volatile uint8_t *buf, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i += 64)
        sum += buf[i];
    return sum;
}

/* COLD_KIB's buffer, filled (NULL without COLD_KIB). */
static uint8_t *cold_open(void)
{
    uint8_t *cold = g_cold ? malloc(g_cold) : NULL;
    if (cold)
        memset(cold, 1, g_cold);
    return cold;
}

/* ps per item from the timed ns less the timing's own (sink keeps the
 * evictions from being optimized away). */
static uint64_t ps_per(uint64_t ns, uint64_t empty, uint64_t sink, long items)
{
    return ((ns > empty ? ns - empty : 0) + (sink == 1)) * 1000 / (uint64_t)items;
}

typedef struct job {
    int index;
    uint64_t ns;
} job;

/* What a real launch hands the callbacks: the kernel's name and the
 * parameter blocks (launch mode reads grid, block and stream from them;
 * GPU mode ignores them), so both modes are priced on the same input. */
static const char k_name[] = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_";
/* KERNELS > 1: that many kernels launched round robin, their names and
 * function handles 4 KiB apart (the strides the driver's handles come in:
 * launch mode's per-thread caches must hold them). */
#define CB_MAX_KERNELS 256
static int g_kernels = 1;
static char (*g_names)[4096];
typedef struct { const void *func; unsigned grid[3], block[3]; void **args; size_t smem; void *stream; } rt_params;
typedef struct { void *f; unsigned grid[3], block[3], smem; void *stream; void **params, **extra; } drv_params;

static void *launches(void *arg)
{
    rt_params rp = {NULL, {1024, 1, 1}, {256, 1, 1}, NULL, 0, NULL};
    drv_params dp = {NULL, {1024, 1, 1}, {256, 1, 1}, 0, NULL, NULL, NULL};
    job *j = arg;
    /* Ids as CUPTI hands them out with several threads launching: unique
     * and interleaved (thread k gets every T-th pair); computed, so the
     * measurement holds no shared counter of our own. */
    uint32_t corr = (1u << 20) + 2u * (uint32_t)j->index, stride = 2u * (uint32_t)g_threads;
    uint8_t *cold = cold_open();
    uint64_t t0 = now_ns(), timed = 0, sink = 0;
    int k = 0;
    for (long i = 0; i < g_launches; i++, corr += stride) {
        uint32_t rt = corr, drv = corr + 1;
        const char *name = g_kernels > 1 ? g_names[k] : k_name;
        dp.f = (void *)name; /* a handle per kernel, as the driver's */
        if (++k == g_kernels)
            k = 0;
        uint64_t l0 = cold ? mono_ns() : 0;
        fake_cupti_api_enter(RTD, RT_LAUNCH, rt, name, &rp);
        fake_cupti_api_enter(DRD, DRV_LAUNCH, drv, name, &dp);
        fake_cupti_api_exit(DRD, DRV_LAUNCH, drv, name, &dp, 0);
        fake_cupti_api_exit(RTD, RT_LAUNCH, rt, name, &rp, 0);
        if (cold) {
            timed += mono_ns() - l0;
            sink += evict(cold, g_cold);
        }
    }
    j->ns = cold ? timed + (sink == 1) : now_ns() - t0;
    free(cold);
    return NULL;
}

/* ns per launch on `threads` threads (the mean over threads). */
static double measure(int threads)
{
    pthread_t th[64];
    job jobs[64];
    g_threads = threads;
    for (int i = 0; i < threads; i++) {
        jobs[i].index = i;
        pthread_create(&th[i], NULL, launches, &jobs[i]);
    }
    double sum = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        sum += (double)jobs[i].ns;
    }
    return sum / threads / (double)g_launches;
}

/* The blocks of one batch of op_cost, freed untimed after it: the
 * writer's live table stays as small as a program's (a table grown to a
 * million blocks would time its rehashing, on the other core). */
static void free_blocks(const gmp_bridge_host *host, uint64_t from, uint64_t to)
{
    for (uint64_t a = from; a < to; a += 4096) {
        host->block(NULL, GMT_BLK_FREE_REQUESTED, 0, a, 4096, 4000, 7, 0, 0, 0);
        host->block(NULL, GMT_BLK_FREE_COMPLETED, 0, a, 4096, 0, 7, 0, 0, 0);
    }
}

/* One op range as the RecordFunction callback makes it, in ps (ns x 1000):
 * an op that touches no memory (it waits on the stack and ends without an
 * event), or (with_block) one whose range begins at a block allocated
 * inside it (its RANGE_BEGIN, the ALLOC, its RANGE_END); 150 batches of
 * 3000, 20 ms apart, each batch's blocks freed after it. With COLD_KIB
 * each op is timed alone after the caches were evicted, less the same
 * timing around nothing, over 10 batches. */
static uint64_t op_cost(const gmp_bridge_host *host, int with_block, uint64_t *addr)
{
    uint8_t *cold = cold_open();
    uint64_t ns = 0, empty = 0, sink = 0;
    long ops = 0;
    for (int b = 0; b < (cold ? 10 : 150); b++) {
        uint64_t t0 = now_ns(), first = *addr;
        for (int i = 0; i < 3000; i++, *addr += 4096) {
            uint64_t l0 = cold ? mono_ns() : 0;
            host->op_begin(with_block ? "aten::empty" : "aten::view");
            if (with_block)
                host->block(NULL, GMT_BLK_ALLOC, 0, *addr, 4096, 4000, 7, 0, 0, 0);
            host->op_end();
            if (cold) {
                ns += mono_ns() - l0;
                sink += evict(cold, g_cold);
                l0 = mono_ns();
                empty += mono_ns() - l0;
                sink += evict(cold, g_cold);
            }
        }
        if (!cold)
            ns += now_ns() - t0;
        if (with_block)
            free_blocks(host, first, *addr);
        ops += 3000;
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    free(cold);
    return ps_per(ns, empty, sink, ops);
}

/* One block's alloc + free as the allocator's tracker reports it, in ps:
 * ALLOC, then FREE_REQUESTED and FREE_COMPLETED back to back (c10 reports
 * the two under one lock when no other stream uses the block). 150 batches
 * of 3000, 20 ms apart (the writer drains the ring in between), thread CPU
 * time. With COLD_KIB the caches are evicted before the ALLOC and before
 * the free, as the program's own work between them does, and each is timed
 * alone, less the same timing around nothing, over 10 batches.
 * origin_only: host->origin at the alloc and at the free instead, which
 * records nothing: who and when, the least that a tensor's attribution
 * asks of the profiler on the allocating thread. */
static uint64_t block_cost(const gmp_bridge_host *host, uint64_t *addr, int origin_only)
{
    uint8_t *cold = cold_open();
    uint64_t ns = 0, empty = 0, sink = 0;
    long pairs = 0;
    for (int b = 0; b < (cold ? 10 : 150); b++) {
        uint64_t t0 = now_ns();
        for (int i = 0; i < 3000; i++, *addr += 4096) {
            uint64_t a = *addr, l0 = 0;
            for (int half = 0; half < 2; half++) {
                if (cold) {
                    sink += evict(cold, g_cold);
                    l0 = mono_ns();
                }
                if (origin_only) {
                    gmp_bridge_origin o;
                    host->origin(&o);
                    sink += o.w[0] & 1;
                } else if (half == 0) {
                    host->block(NULL, GMT_BLK_ALLOC, 0, a, 4096, 4000, 7, 0, GMP_BRIDGE_HAS_COUNTER, 4096);
                } else {
                    host->block(NULL, GMT_BLK_FREE_REQUESTED, 0, a, 4096, 4000, 7, 0, 0, 0);
                    host->block(NULL, GMT_BLK_FREE_COMPLETED, 0, a, 4096, 0, 7, 0, 0, 0);
                }
                if (cold) {
                    ns += mono_ns() - l0;
                    l0 = mono_ns();
                    empty += mono_ns() - l0;
                }
            }
        }
        if (!cold)
            ns += now_ns() - t0;
        pairs += 3000;
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    free(cold);
    return ps_per(ns, empty, sink, pairs);
}

/* The bridge's hot paths through its host table. */
static void bridge_cost(void)
{
    const char *bp = getenv("CB_COST_BRIDGE");
    void *h = bp ? dlopen(bp, RTLD_NOW | RTLD_NOLOAD) : NULL;
    const gmp_bridge_host *(*get)(void) = h ? (const gmp_bridge_host *(*)(void))dlsym(h, "fake_bridge_host") : NULL;
    const gmp_bridge_host *host = get ? get() : NULL;
    if (!host) {
        printf("PyTorch bridge: not attached (CB_COST_BRIDGE, CB_COST_C10 unset or refused)\n");
        return;
    }
    uint64_t addr = 0x7f0000000000ull;
    const char *how = g_cold ? ", caches evicted before the alloc and before the free (COLD_KIB)" : "";
    uint64_t nb = block_cost(host, &addr, 0);
    printf("PyTorch bridge: alloc+free of a block with profiler %.1f ns (3 host->block calls%s)\n", nb / 1000.0,
           how);
    uint64_t no = block_cost(host, &addr, 1);
    printf("PyTorch bridge: who and when of a block's alloc and free %.1f ns (2 host->origin calls, nothing "
           "recorded%s)\n", no / 1000.0, how);

    uint64_t ns0 = op_cost(host, 0, &addr), ns1 = op_cost(host, 1, &addr);
    how = g_cold ? ", caches evicted between ops (COLD_KIB)" : "";
    printf("PyTorch bridge: an op with no GPU work %.1f ns (op_begin + op_end, no event%s)\n", ns0 / 1000.0, how);
    printf("PyTorch bridge: an op that allocates a block %.1f ns (op_begin, block, op_end: 3 events into the "
           "ring%s)\n", ns1 / 1000.0, how);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gmp_cb_cost LIBGMEMPROF [LAUNCHES [THREADS [KERNELS [COLD_KIB]]]]\n");
        return 2;
    }
    if (argc > 2)
        g_launches = atol(argv[2]);
    int maxthreads = argc > 3 ? atoi(argv[3]) : 4;
    if (maxthreads < 1 || maxthreads > 64)
        maxthreads = 4;
    g_kernels = argc > 4 ? atoi(argv[4]) : 1;
    if (g_kernels < 1 || g_kernels > CB_MAX_KERNELS) {
        fprintf(stderr, "gmp_cb_cost: KERNELS %s: 1..%d\n", argv[4], CB_MAX_KERNELS);
        return 2;
    }
    if (argc > 5)
        g_cold = (size_t)atol(argv[5]) << 10;
    if (g_kernels > 1) {
        g_names = calloc((size_t)g_kernels, sizeof *g_names);
        if (!g_names)
            return 2;
        for (int i = 0; i < g_kernels; i++)
            snprintf(g_names[i], sizeof g_names[i], "%s_%d", k_name, i);
    }
    char out[256];
    snprintf(out, sizeof out, "/tmp/gmp_cb_cost-%d.zst", (int)getpid());
    setenv("GMEMPROF_OUTPUT", out, 1);
    setenv("GMEMPROF_LOG", "quiet", 1);
    /* "import torch" before CUDA starts: the bridge attaches at the context */
    if (getenv("CB_COST_BRIDGE") && getenv("CB_COST_C10") && dlopen(getenv("CB_COST_C10"), RTLD_NOW | RTLD_GLOBAL))
        setenv("GMEMPROF_TORCH_BRIDGE", getenv("CB_COST_BRIDGE"), 1);
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
    if (!init) {
        fprintf(stderr, "gmp_cb_cost: cannot load %s: %s\n", argv[1], dlerror());
        return 2;
    }
    init();
    fake_cupti_context_created(0);
    /* the profiler subscribes the driver's launch alone (profiler/collect.c,
     * rt_cbid_wanted): the runtime pair is delivered to no one */
    int rt_on = fake_cupti_callback_enabled(RTD, RT_LAUNCH);
    if (!fake_cupti_callback_enabled(DRD, DRV_LAUNCH)) {
        fprintf(stderr, "gmp_cb_cost: the profiler did not enable the launch callbacks\n");
        return 1;
    }
    const char *mode = getenv("GMEMPROF_KERNELS");
    printf("GMEMPROF_KERNELS=%s; launch = cudaLaunchKernel ENTER/EXIT (%s) + nested cuLaunchKernel ENTER/EXIT, "
           "%ld launches per thread, %d kernel%s%s\n", mode ? mode : "launch (default)",
           rt_on ? "subscribed" : "not subscribed", g_launches, g_kernels, g_kernels > 1 ? "s round robin" : "",
           g_cold ? ", caches evicted between launches (COLD_KIB)" : "");
    for (int threads = 1; threads <= maxthreads; threads *= 2) {
        measure(threads); /* warm up: TLS, table pages */
        double on = measure(threads);
        cuptiEnableCallback(0, NULL, RTD, RT_LAUNCH);
        cuptiEnableCallback(0, NULL, DRD, DRV_LAUNCH);
        double off = measure(threads);
        cuptiEnableCallback((uint32_t)rt_on, NULL, RTD, RT_LAUNCH);
        cuptiEnableCallback(1, NULL, DRD, DRV_LAUNCH);
        printf("threads=%d  with profiler %.1f ns/launch  without %.1f ns/launch  profiler adds %.1f ns/launch"
               "  (driver attribute queries so far: %" PRIu64 ")\n",
               threads, on, off, on - off, fake_cuda_func_attr_calls());
    }
    /* NVTX: 100 batches of 5000 push/pop pairs, 20 ms apart (the writer
     * drains the ring in between); thread CPU time of the pushes only. */
    nvtxRangePushA("warm up");
    nvtxRangePop();
    uint64_t ns = 0;
    long pairs = 0;
    for (int b = 0; b < 100; b++) {
        uint64_t t0 = now_ns();
        for (int i = 0; i < 5000; i++) {
            nvtxRangePushA("layer");
            nvtxRangePop();
        }
        ns += now_ns() - t0;
        pairs += 5000;
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    printf("nvtx push+pop pair with profiler %.1f ns (2 events into the ring)\n", (double)ns / (double)pairs);
    bridge_cost();
    unlink(out);
    free(g_names);
    return 0;
}
