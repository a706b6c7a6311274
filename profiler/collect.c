/*
 * CUPTI side of the profiler: subscription, the API and resource callbacks
 * (the hot path), the activity buffer pool, device information, and the
 * schedule transitions that every step source goes through.
 *
 * Hot path (an API callback on an application thread): one table lookup for
 * the API family, the thread's TLS block, and a seqlock publish of
 * {corr, tid, epoch, seq, range, family} into the correlation table. No
 * lock, no allocation, no system call (the tid is cached once per thread).
 * Everything else (joining activity records, the live table, encoding)
 * happens on the writer thread.
 *
 * Nesting: a runtime call (cudaMalloc, cudaMemcpy) makes driver calls
 * (cuMemAlloc, cuMemcpy) that CUPTI reports too. The thread keeps a depth of
 * runtime calls in progress; a driver call made inside one reuses the
 * runtime call's seq/range/epoch and only adds its own correlation id to the
 * table, because an activity record may carry either id. Launches are the
 * exception: they are heard from the driver alone (rt_cbid_wanted). Launch
 * callbacks are switched off outside warmup/active; a switch bumps cb_gen so
 * a depth left over from an ENTER whose EXIT was never delivered is
 * recognised as stale and reset.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmp_rt.h"
#include "torch.h"

/* ---- API families -------------------------------------------------------- */

static uint8_t fam_rt[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static uint8_t fam_drv[CUPTI_DRIVER_TRACE_CBID_SIZE];

typedef struct cbid_fam {
    uint32_t cbid;
    uint8_t fam;
} cbid_fam;

#define RT(x) CUPTI_RUNTIME_TRACE_CBID_##x
#define DRV(x) CUPTI_DRIVER_TRACE_CBID_##x

static const cbid_fam rt_list[] = {
    {RT(cudaMalloc_v3020), GMP_FAM_MALLOC},
    {RT(cudaMallocPitch_v3020), GMP_FAM_PITCH},
    {RT(cudaMalloc3D_v3020), GMP_FAM_PITCH},
    {RT(cudaMallocArray_v3020), GMP_FAM_PITCH},
    {RT(cudaMalloc3DArray_v3020), GMP_FAM_PITCH},
    {RT(cudaMallocMipmappedArray_v5000), GMP_FAM_PITCH},
    {RT(cudaMallocHost_v3020), GMP_FAM_HOST},
    {RT(cudaHostAlloc_v3020), GMP_FAM_HOST},
    {RT(cudaMallocManaged_v6000), GMP_FAM_MANAGED},
    {RT(cudaMallocAsync_v11020), GMP_FAM_ASYNC},
    {RT(cudaMallocAsync_ptsz_v11020), GMP_FAM_ASYNC},
    {RT(cudaMallocFromPoolAsync_v11020), GMP_FAM_ASYNC},
    {RT(cudaMallocFromPoolAsync_ptsz_v11020), GMP_FAM_ASYNC},
    {RT(cudaFree_v3020), GMP_FAM_FREE},
    {RT(cudaFreeArray_v3020), GMP_FAM_FREE},
    {RT(cudaFreeMipmappedArray_v5000), GMP_FAM_FREE},
    {RT(cudaFreeHost_v3020), GMP_FAM_FREE_HOST},
    {RT(cudaFreeAsync_v11020), GMP_FAM_FREE_ASYNC},
    {RT(cudaFreeAsync_ptsz_v11020), GMP_FAM_FREE_ASYNC},
    {RT(cudaLaunch_v3020), GMP_FAM_LAUNCH},
    {RT(cudaLaunch_ptsz_v7000), GMP_FAM_LAUNCH},
    {RT(cudaLaunchKernel_v7000), GMP_FAM_LAUNCH},
    {RT(cudaLaunchKernel_ptsz_v7000), GMP_FAM_LAUNCH},
    {RT(cudaLaunchKernelExC_v11060), GMP_FAM_LAUNCH},
    {RT(cudaLaunchKernelExC_ptsz_v11060), GMP_FAM_LAUNCH},
    {RT(cudaLaunchCooperativeKernel_v9000), GMP_FAM_LAUNCH},
    {RT(cudaLaunchCooperativeKernel_ptsz_v9000), GMP_FAM_LAUNCH},
    {RT(cudaLaunchCooperativeKernelMultiDevice_v9000), GMP_FAM_LAUNCH},
    {RT(__cudaLaunchKernel_v13000), GMP_FAM_LAUNCH},
    {RT(__cudaLaunchKernel_ptsz_v13000), GMP_FAM_LAUNCH},
    {RT(cudaGraphLaunch_v10000), GMP_FAM_GRAPH},
    {RT(cudaGraphLaunch_ptsz_v10000), GMP_FAM_GRAPH},
    {RT(cudaProfilerStart_v4000), GMP_FAM_PROF_START},
    {RT(cudaProfilerStop_v4000), GMP_FAM_PROF_STOP},
    {RT(cudaDeviceReset_v3020), GMP_FAM_RESET},
};

static const cbid_fam drv_list[] = {
    {DRV(cuMemAlloc), GMP_FAM_MALLOC},
    {DRV(cuMemAlloc_v2), GMP_FAM_MALLOC},
    {DRV(cuMemAllocPitch), GMP_FAM_PITCH},
    {DRV(cuMemAllocPitch_v2), GMP_FAM_PITCH},
    {DRV(cuArrayCreate), GMP_FAM_PITCH},
    {DRV(cuArrayCreate_v2), GMP_FAM_PITCH},
    {DRV(cuArray3DCreate), GMP_FAM_PITCH},
    {DRV(cuArray3DCreate_v2), GMP_FAM_PITCH},
    {DRV(cuMipmappedArrayCreate), GMP_FAM_PITCH},
    {DRV(cuMemAllocHost), GMP_FAM_HOST},
    {DRV(cuMemAllocHost_v2), GMP_FAM_HOST},
    {DRV(cuMemHostAlloc), GMP_FAM_HOST},
    {DRV(cuMemAllocManaged), GMP_FAM_MANAGED},
    {DRV(cuMemAllocAsync), GMP_FAM_ASYNC},
    {DRV(cuMemAllocAsync_ptsz), GMP_FAM_ASYNC},
    {DRV(cuMemAllocFromPoolAsync), GMP_FAM_ASYNC},
    {DRV(cuMemAllocFromPoolAsync_ptsz), GMP_FAM_ASYNC},
    {DRV(cuMemFree), GMP_FAM_FREE},
    {DRV(cuMemFree_v2), GMP_FAM_FREE},
    {DRV(cuArrayDestroy), GMP_FAM_FREE},
    {DRV(cuMipmappedArrayDestroy), GMP_FAM_FREE},
    {DRV(cuMemFreeHost), GMP_FAM_FREE_HOST},
    {DRV(cuMemFreeAsync), GMP_FAM_FREE_ASYNC},
    {DRV(cuMemFreeAsync_ptsz), GMP_FAM_FREE_ASYNC},
    {DRV(cuMemCreate), GMP_FAM_VMM_CREATE},
    {DRV(cuMemRelease), GMP_FAM_VMM_RELEASE},
    {DRV(cuMemMap), GMP_FAM_VMM_MAP},
    {DRV(cuMemUnmap), GMP_FAM_VMM_UNMAP},
    {DRV(cuMemAddressReserve), GMP_FAM_VMM_RESERVE},
    {DRV(cuMemAddressFree), GMP_FAM_VMM_ADDRFREE},
    {DRV(cuLaunch), GMP_FAM_LAUNCH},
    {DRV(cuLaunchGrid), GMP_FAM_LAUNCH},
    {DRV(cuLaunchGridAsync), GMP_FAM_LAUNCH},
    {DRV(cuLaunchKernel), GMP_FAM_LAUNCH},
    {DRV(cuLaunchKernel_ptsz), GMP_FAM_LAUNCH},
    {DRV(cuLaunchKernelEx), GMP_FAM_LAUNCH},
    {DRV(cuLaunchKernelEx_ptsz), GMP_FAM_LAUNCH},
    {DRV(cuLaunchCooperativeKernel), GMP_FAM_LAUNCH},
    {DRV(cuLaunchCooperativeKernel_ptsz), GMP_FAM_LAUNCH},
    {DRV(cuLaunchCooperativeKernelMultiDevice), GMP_FAM_LAUNCH},
    {DRV(cuGraphLaunch), GMP_FAM_GRAPH},
    {DRV(cuGraphLaunch_ptsz), GMP_FAM_GRAPH},
    {DRV(cuProfilerStart), GMP_FAM_PROF_START},
    {DRV(cuProfilerStop), GMP_FAM_PROF_STOP},
    {DRV(cuDevicePrimaryCtxReset), GMP_FAM_RESET},
    {DRV(cuDevicePrimaryCtxReset_v2), GMP_FAM_RESET},
    {DRV(cuDevicePrimaryCtxRelease), GMP_FAM_CTX_DESTROY},
    {DRV(cuDevicePrimaryCtxRelease_v2), GMP_FAM_CTX_DESTROY},
    {DRV(cuCtxDestroy), GMP_FAM_CTX_DESTROY},
    {DRV(cuCtxDestroy_v2), GMP_FAM_CTX_DESTROY},
};

/* The parameter blocks of the VMM calls, as the driver passes them to
 * callbacks (functionParams). They mirror generated_cuda_meta.h, which
 * cannot be included on its own; the layout is the driver's ABI. */
typedef struct gmp_cuMemAddressReserve_params {
    CUdeviceptr *ptr;
    size_t size;
    size_t alignment;
    CUdeviceptr addr;
    unsigned long long flags;
} gmp_cuMemAddressReserve_params;
typedef struct gmp_cuMemAddressFree_params {
    CUdeviceptr ptr;
    size_t size;
} gmp_cuMemAddressFree_params;
typedef struct gmp_cuMemMap_params {
    CUdeviceptr ptr;
    size_t size;
    size_t offset;
    CUmemGenericAllocationHandle handle;
    unsigned long long flags;
} gmp_cuMemMap_params;
typedef struct gmp_cuMemUnmap_params {
    CUdeviceptr ptr;
    size_t size;
} gmp_cuMemUnmap_params;

/* memcpy/memset have dozens of variants (_v2, _ptds, _ptsz, 2D, 3D, Peer,
 * Batch...): they are recognised by the names CUPTI gives their callback
 * ids, so new variants are covered without a list to maintain. Only
 * families we cannot get wrong are classified this way: their records carry
 * no memory-accounting meaning, only the host thread. */
static void classify_by_name(CUpti_CallbackDomain dom, uint8_t *tab, uint32_t n)
{
    if (!gmp_g.api.GetCallbackName)
        return;
    for (uint32_t cbid = 1; cbid < n; cbid++) {
        const char *name = NULL;
        if (tab[cbid] || gmp_g.api.GetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name)
            continue;
        if (strncmp(name, "cudaMemcpy", 10) == 0 || strncmp(name, "cuMemcpy", 8) == 0)
            tab[cbid] = GMP_FAM_MEMCPY;
        else if (strncmp(name, "cudaMemset", 10) == 0 || strncmp(name, "cuMemset", 8) == 0)
            tab[cbid] = GMP_FAM_MEMSET;
    }
}

static void families_init(void)
{
    memset(fam_rt, 0, sizeof fam_rt);
    memset(fam_drv, 0, sizeof fam_drv);
    for (size_t i = 0; i < sizeof rt_list / sizeof rt_list[0]; i++)
        if (rt_list[i].cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
            fam_rt[rt_list[i].cbid] = rt_list[i].fam;
    for (size_t i = 0; i < sizeof drv_list / sizeof drv_list[0]; i++)
        if (drv_list[i].cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
            fam_drv[drv_list[i].cbid] = drv_list[i].fam;
    classify_by_name(CUPTI_CB_DOMAIN_RUNTIME_API, fam_rt, CUPTI_RUNTIME_TRACE_CBID_SIZE);
    classify_by_name(CUPTI_CB_DOMAIN_DRIVER_API, fam_drv, CUPTI_DRIVER_TRACE_CBID_SIZE);
    gmp_copy_init();
}

/* ---- events to the writer ------------------------------------------------ */

static _Atomic int ring_wake_pending;

void gmp_post(gmp_ev *ev)
{
    gmp_tls *t = gmp_self();
    if (!ev->tid)
        ev->tid = gmp_tid(t);
    if (!ev->epoch)
        ev->epoch = atomic_load_explicit(&gmp_g.epoch, memory_order_acquire);
    if (!ev->ts)
        ev->ts = gmp_now();
    gmp_post_ready(ev);
}

int gmp_post_ready(const gmp_ev *ev)
{
    uint64_t pos;
    if (gmp_ring_push(&gmp_g.ring, ev, &pos) != 0)
        return -1; /* counted by the ring */
    /* The writer polls the ring on its own; wake it early when the ring is
     * half full so a burst does not overflow it (one wake per burst). Only
     * every 32nd push looks: the size reads the writer's head, a cache line
     * another core writes, a miss on every launch otherwise. */
    if ((pos & 31) == 0 && gmp_ring_size(&gmp_g.ring) > gmp_ring_capacity(&gmp_g.ring) / 2 &&
        !atomic_exchange_explicit(&ring_wake_pending, 1, memory_order_relaxed))
        gmp_wt_wake();
    return 0;
}

/* Called by the writer after it drained the ring. */
GMP_HIDDEN void gmp_post_rearm(void);
void gmp_post_rearm(void) { atomic_store_explicit(&ring_wake_pending, 0, memory_order_relaxed); }

/* ---- activity buffers ---------------------------------------------------- */

static struct {
    pthread_mutex_t mu;
    size_t bufsize;     /* one CUPTI buffer */
    size_t budget;      /* bytes for CUPTI buffers (the rest of the host budget is fixed parts) */
    size_t allocated;   /* bytes of buffers that exist */
    uint8_t **free;
    size_t nfree, free_cap;
    gmp_done_buf *done; /* FIFO of completed buffers waiting for the writer */
    size_t done_head, done_n, done_cap;
    uint8_t *emergency; /* last resort when malloc fails: never hand out NULL */
    int emergency_busy;
    size_t fixed;       /* ring + correlation table + writer staging, for STATS */
} bp = {.mu = PTHREAD_MUTEX_INITIALIZER};

#define GMP_EMERGENCY_BYTES (64u * 1024u)

static size_t count_records(uint8_t *buf, size_t valid)
{
    CUpti_Activity *r = NULL;
    size_t n = 0;
    while (gmp_g.api.ActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
        n++;
    return n;
}

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    uint8_t *b = NULL;
    size_t sz = bp.bufsize;
    *max_records = 0;
    if (atomic_load(&gmp_g.forked)) {
        /* A fork child: the pool's lock may have been held by a thread that
         * does not exist here. Its records are never used: plain memory. */
        *size = posix_memalign((void **)buffer, 8, sz ? sz : GMP_EMERGENCY_BYTES) == 0
                    ? (sz ? sz : GMP_EMERGENCY_BYTES) : 0;
        if (!*size)
            *buffer = NULL;
        return;
    }
    pthread_mutex_lock(&bp.mu);
    if (bp.nfree > 0) {
        b = bp.free[--bp.nfree];
    } else if (bp.allocated + bp.bufsize <= bp.budget) {
        if (posix_memalign((void **)&b, 8, bp.bufsize) == 0)
            bp.allocated += bp.bufsize;
        else
            b = NULL;
    } else if (bp.done_n > 0) {
        /* Over budget and the writer is behind: reuse the oldest waiting
         * buffer. Its records are lost, and counted. */
        gmp_done_buf d = bp.done[bp.done_head];
        bp.done_head = (bp.done_head + 1) % bp.done_cap;
        bp.done_n--;
        atomic_fetch_add_explicit(&gmp_g.dropped_buffers, count_records(d.buf, d.valid),
                                  memory_order_relaxed);
        b = d.buf;
    }
    if (!b) {
        /* Every buffer is inside CUPTI or the writer: CUPTI must still get
         * one (older CUPTI crashes on NULL). Go over the budget, and say so
         * in the STATS (own_host_bytes). */
        if (posix_memalign((void **)&b, 8, bp.bufsize) == 0) {
            bp.allocated += bp.bufsize;
            atomic_fetch_add_explicit(&gmp_g.buf_overbudget, 1, memory_order_relaxed);
        } else if (bp.emergency && !bp.emergency_busy) {
            bp.emergency_busy = 1;
            b = bp.emergency;
            sz = GMP_EMERGENCY_BYTES;
        } else {
            sz = 0; /* out of memory entirely: CUPTI drops and counts */
        }
    }
    pthread_mutex_unlock(&bp.mu);
    *buffer = b;
    *size = b ? sz : 0;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                   size_t valid)
{
    (void)size;
    if (atomic_load(&gmp_g.forked)) {
        free(buf); /* every buffer comes from posix_memalign */
        return;
    }
    if (gmp_g.api.ActivityGetNumDroppedRecords) {
        size_t n = 0;
        if (gmp_g.api.ActivityGetNumDroppedRecords(ctx, stream, &n) == CUPTI_SUCCESS && n)
            atomic_fetch_add_explicit(&gmp_g.dropped_cupti, n, memory_order_relaxed);
    }
    if (!buf)
        return;
    int keep = valid > 0 && gmp_wt_running();
    pthread_mutex_lock(&bp.mu);
    if (keep && bp.done_n < bp.done_cap) {
        bp.done[(bp.done_head + bp.done_n) % bp.done_cap] = (gmp_done_buf){buf, valid};
        bp.done_n++;
        pthread_mutex_unlock(&bp.mu);
        gmp_wt_wake();
        return;
    }
    pthread_mutex_unlock(&bp.mu);
    if (keep) /* the queue is full: this buffer's records are lost, and counted */
        atomic_fetch_add_explicit(&gmp_g.dropped_buffers, count_records(buf, valid),
                                  memory_order_relaxed);
    gmp_bufq_release(buf);
}

size_t gmp_bufq_take(gmp_done_buf *out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&bp.mu);
    while (n < max && bp.done_n > 0) {
        out[n++] = bp.done[bp.done_head];
        bp.done_head = (bp.done_head + 1) % bp.done_cap;
        bp.done_n--;
    }
    pthread_mutex_unlock(&bp.mu);
    return n;
}

void gmp_bufq_release(uint8_t *buf)
{
    pthread_mutex_lock(&bp.mu);
    if (buf == bp.emergency) {
        bp.emergency_busy = 0;
    } else if (bp.nfree < bp.free_cap) {
        bp.free[bp.nfree++] = buf;
    } else {
        free(buf);
        bp.allocated -= bp.bufsize;
    }
    pthread_mutex_unlock(&bp.mu);
}

size_t gmp_bufq_host_bytes(void)
{
    pthread_mutex_lock(&bp.mu);
    size_t n = bp.allocated + bp.fixed;
    pthread_mutex_unlock(&bp.mu);
    return n;
}

size_t gmp_bufq_pending(void)
{
    pthread_mutex_lock(&bp.mu);
    size_t n = bp.done_n;
    pthread_mutex_unlock(&bp.mu);
    return n;
}

size_t gmp_collect_fixed_bytes(void) { return bp.fixed; }

GMP_HIDDEN size_t gmp_writer_staging_bytes(void); /* wthread.c */

/* The host budget (GMEMPROF_HOST_BUFFER_MB) covers the event ring, the
 * correlation table, the writer's staging area and the CUPTI buffers; the
 * ring and table are already allocated (light init). The buffers get what
 * is left, at least two. */
int gmp_collect_setup_buffers(char *err, size_t cap)
{
    size_t total = (size_t)gmp_g.cfg.host_buffer_mb << 20;
    bp.fixed = gmp_ring_bytes(&gmp_g.ring) + ((size_t)gmp_g.corr.mask + 1) * sizeof(gmp_corr_slot) +
               gmp_writer_staging_bytes();
    bp.bufsize = (size_t)gmp_g.cfg.cupti_buffer_kb << 10;
    bp.budget = total > bp.fixed + 2 * bp.bufsize ? total - bp.fixed : 2 * bp.bufsize;
    size_t nmax = bp.budget / bp.bufsize + 64; /* + over-budget ones */
    bp.free = calloc(nmax, sizeof *bp.free);
    bp.done = calloc(nmax, sizeof *bp.done);
    if (posix_memalign((void **)&bp.emergency, 8, GMP_EMERGENCY_BYTES) != 0)
        bp.emergency = NULL;
    if (!bp.free || !bp.done) {
        snprintf(err, cap, "out of memory for the activity buffer pool");
        return -1;
    }
    bp.free_cap = nmax;
    bp.done_cap = nmax;
    gmp_log_debug("host budget %zu MiB: %zu KiB fixed, %zu buffers of %zu KiB", total >> 20,
                  bp.fixed >> 10, bp.budget / bp.bufsize, bp.bufsize >> 10);
    return 0;
}

/* ---- devices ------------------------------------------------------------- */

/* No lock of ours is ever held across a driver call: the context callbacks
 * run inside the driver (which may hold its own locks then), so a thread
 * that held dev_lock while waiting in cuCtxPushCurrent could deadlock with
 * them. dev_lock only guards the context pointers, for a few instructions.
 *
 * What keeps a context alive while a sampler uses it: context teardown
 * (cudaDeviceReset, cuDevicePrimaryCtxReset/Release, cuCtxDestroy) pauses
 * sampling at the ENTER of the call, before the driver takes anything, and
 * waits for samplers in flight (cuMemGetInfo: microseconds); EXIT resumes.
 * The pause and sampler counters form a Dekker handshake (sequentially
 * consistent atomics). */
static _Atomic int g_sample_pause;
static _Atomic int g_samplers;

static void sampling_pause(void)
{
    atomic_fetch_add(&g_sample_pause, 1);
    for (int i = 0; i < 100000 && atomic_load(&g_samplers) > 0; i++) {
        struct timespec ts = {0, 10000};
        nanosleep(&ts, NULL); /* bounded: 1 s at most, then go on regardless */
    }
}

static void sampling_resume(void) { atomic_fetch_sub(&g_sample_pause, 1); }

/* Context created (resource callback, inside the driver): note the device
 * and its context; the writer queries the device's properties. */
static void device_add(CUcontext ctx)
{
    uint32_t id = 0;
    atomic_store(&gmp_g.ctx_seen, 1);
    if (!gmp_g.api.GetDeviceId || gmp_g.api.GetDeviceId(ctx, &id) != CUPTI_SUCCESS)
        return;
    atomic_fetch_add(&gmp_g.own_device_bytes, (uint64_t)(gmp_g.devbuf_bytes * gmp_g.devbuf_prealloc));
    if (id >= GMP_MAX_DEVICES)
        return;
    pthread_mutex_lock(&gmp_g.dev_lock);
    int first = gmp_g.dev[id].ctx == NULL && !atomic_load(&gmp_g.dev[id].ready);
    if (!gmp_g.dev[id].ctx)
        gmp_g.dev[id].ctx = ctx;
    pthread_mutex_unlock(&gmp_g.dev_lock);
    if (!first)
        return;
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name));
    ev.type = GMP_EV_DEVICE;
    ev.a = id;
    gmp_post(&ev);
    gmp_wt_wake();
}

static void device_forget(CUcontext ctx)
{
    pthread_mutex_lock(&gmp_g.dev_lock);
    for (unsigned i = 0; i < GMP_MAX_DEVICES; i++)
        if (gmp_g.dev[i].ctx == ctx)
            gmp_g.dev[i].ctx = NULL;
    pthread_mutex_unlock(&gmp_g.dev_lock);
}

/* The writer, when it handles the device's event: name, memory, SMs,
 * compute capability (no context needed for these). */
void gmp_device_query(unsigned id)
{
    gmp_devinfo *d = &gmp_g.dev[id];
    CUdevice dev = (CUdevice)id;
    int v = 0;
    size_t total = 0;
    if (id >= GMP_MAX_DEVICES || atomic_load(&d->ready))
        return;
    if (gmp_g.api.DeviceGet && gmp_g.api.DeviceGet(&dev, (int)id) != CUDA_SUCCESS)
        dev = (CUdevice)id;
    if (!gmp_g.api.DeviceGetName || gmp_g.api.DeviceGetName(d->name, (int)sizeof d->name - 1, dev) != CUDA_SUCCESS)
        d->name[0] = '\0';
    if (gmp_g.api.DeviceGetUuid) {
        CUuuid u;
        if (gmp_g.api.DeviceGetUuid(&u, dev) == CUDA_SUCCESS)
            memcpy(d->uuid, u.bytes, 16);
    }
    if (gmp_g.api.DeviceTotalMem && gmp_g.api.DeviceTotalMem(&total, dev) == CUDA_SUCCESS)
        d->total_mem = total;
    if (gmp_g.api.DeviceGetAttribute) {
        if (gmp_g.api.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) == CUDA_SUCCESS)
            d->sm_count = (uint64_t)v;
        if (gmp_g.api.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS)
            d->cc_major = (uint64_t)v;
        if (gmp_g.api.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS)
            d->cc_minor = (uint64_t)v;
    }
    atomic_store_explicit(&d->ready, 1, memory_order_release);
}

int gmp_device_meminfo(unsigned dev, uint64_t *free_b, uint64_t *total_b)
{
    int rc = -1;
    if (dev >= GMP_MAX_DEVICES || !gmp_g.api.MemGetInfo)
        return -1;
    atomic_fetch_add(&g_samplers, 1);
    if (atomic_load(&g_sample_pause) == 0) {
        pthread_mutex_lock(&gmp_g.dev_lock);
        CUcontext ctx = gmp_g.dev[dev].ctx;
        pthread_mutex_unlock(&gmp_g.dev_lock);
        if (ctx && gmp_g.api.CtxPushCurrent(ctx) == CUDA_SUCCESS) {
            size_t f = 0, t = 0;
            if (gmp_g.api.MemGetInfo(&f, &t) == CUDA_SUCCESS) {
                *free_b = f;
                *total_b = t;
                rc = 0;
            }
            CUcontext dummy;
            gmp_g.api.CtxPopCurrent(&dummy);
        }
    }
    atomic_fetch_sub(&g_samplers, 1);
    return rc;
}

uint64_t gmp_snapshot_take(void)
{
    gmp_snap s;
    if (!gmp_on())
        return 0;
    uint64_t with_ctx = 0;
    pthread_mutex_lock(&gmp_g.dev_lock);
    for (unsigned d = 0; d < GMP_MAX_DEVICES; d++)
        if (gmp_g.dev[d].ctx)
            with_ctx |= (uint64_t)1 << d;
    pthread_mutex_unlock(&gmp_g.dev_lock);
    s.mask = 0;
    for (unsigned d = 0; d < GMP_MAX_DEVICES; d++) {
        if ((with_ctx >> d & 1) && gmp_device_meminfo(d, &s.free_b[d], &s.total_b[d]) == 0)
            s.mask |= (uint64_t)1 << d;
    }
    if (!s.mask)
        return 0;
    s.ts = gmp_now();
    pthread_mutex_lock(&gmp_g.snap_lock);
    s.ticket = ++gmp_g.snap_next;
    gmp_g.snaps[s.ticket % GMP_SNAPS] = s;
    pthread_mutex_unlock(&gmp_g.snap_lock);
    return s.ticket;
}

int gmp_snapshot_get(uint64_t ticket, gmp_snap *out)
{
    int ok = 0;
    if (!ticket)
        return 0;
    pthread_mutex_lock(&gmp_g.snap_lock);
    if (gmp_g.snaps[ticket % GMP_SNAPS].ticket == ticket) {
        *out = gmp_g.snaps[ticket % GMP_SNAPS];
        ok = 1;
    }
    pthread_mutex_unlock(&gmp_g.snap_lock);
    return ok;
}

/* ---- the callbacks ------------------------------------------------------- */

/* GMEMPROF_TEST_COLLECT parts (test_collect_mask below); TC_EMPTY is not a
 * part of the collection but a switch: the window's callbacks stay enabled
 * and return at once, which prices CUPTI's own dispatch apart from ours.
 * TC_DRVACT is not part of the collection either: CUPTI's DRIVER activity
 * records of the launch APIs (thread, correlation id, times; no name) in the
 * window, which the writer skips. It prices what a launch costs CUPTI when
 * it is seen through an activity record instead of a callback. */
enum {
    TC_KERNEL = 1, TC_MEMCPY = 2, TC_MEMSET = 4, TC_RTCB = 8, TC_DRVCB = 16, TC_ALL = 31,
    TC_EMPTY = 32, TC_DRVACT = 64
};
static unsigned g_test_collect = TC_ALL;

static inline uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void post_vmm(int type, uint64_t a, uint64_t b, const gmp_tls *t, uint32_t corr)
{
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name));
    ev.type = (uint16_t)type;
    ev.a = a;
    ev.b = b;
    ev.c = t->cur_range;
    ev.d = t->cur_seq;
    ev.corr = corr;
    ev.epoch = t->cur_epoch;
    gmp_post(&ev);
}


/* ---- launch mode (GMEMPROF_KERNELS=launch) -------------------------------
 *
 * No CUPTI kernel activity: the launch callbacks make the KERNEL records.
 * A driver launch (every runtime launch makes one: rt_cbid_wanted) fills
 * the thread's pending event at ENTER (time, correlation id, seq, range,
 * name, device, and grid/block/stream from its parameter block), and its
 * EXIT queues it when the launch succeeded (a failed launch runs nothing;
 * GPU mode has no record of it either). One event per launch.
 *
 * Per launch: no lock, no allocation, no string copy. The name is copied
 * once per (thread, symbolName pointer, module generation) and afterwards
 * identified by the pointer value, which the writer uses as a key only and
 * never dereferences, so a module unloaded meanwhile cannot make it read
 * freed memory. A module unload (and a stream or context destruction) bumps
 * gmp_g.mod_gen: every thread then forgets its caches, and the writer keys
 * names by (pointer, generation), so a new module whose kernel name lands
 * at a recycled address gets its own name. */

/* Parameter blocks of the driver's launch calls (functionParams), mirrored
 * from generated_cuda_meta.h (the driver's ABI; that header needs the whole
 * driver API to include). */
typedef struct gmp_cuLaunchKernel_params { /* also _ptsz, cuLaunchCooperativeKernel(_ptsz) */
    CUfunction f;
    unsigned grid[3], block[3];
    unsigned shared_mem;
    CUstream stream;
} gmp_cuLaunchKernel_params;
typedef struct gmp_cuLaunchKernelEx_params { /* also _ptsz */
    const CUlaunchConfig *config;
    CUfunction f;
} gmp_cuLaunchKernelEx_params;

static const char graph_launch_name[] = "(graph launch)";

static inline int launch_mode(void) { return gmp_g.cfg.kernels == GMP_KERNELS_LAUNCH; }

static void launch_forget(gmp_tls *t)
{
    if (t->lpend && t->lev.launch.heap)
        free(t->lev.launch.heap);
    t->lev.launch.heap = NULL;
    t->lpend = 0;
}

uint32_t gmp_launch_device(gmp_tls *t, CUcontext ctx)
{
    if (t->lctx_ok && t->lctx == ctx)
        return t->ldev;
    uint32_t id = 0;
    if (!gmp_g.api.GetDeviceId || gmp_g.api.GetDeviceId(ctx, &id) != CUPTI_SUCCESS)
        id = 0; /* no context (the fake CUPTI) or an error: device 0 */
    t->lctx = ctx;
    t->ldev = id;
    t->lctx_ok = 1;
    return id;
}

/* The CUPTI stream id of a stream handle (GPU-mode KERNEL records carry
 * CUPTI's ids, and so do ALLOC/MEMCPY records): a 4-entry cache per thread,
 * cuptiGetStreamIdEx on a miss (programs use few streams). */
uint32_t gmp_launch_stream(gmp_tls *t, CUcontext ctx, CUstream h, int ptsz)
{
    if (h == CU_STREAM_PER_THREAD) {
        h = NULL;
        ptsz = 1;
    } else if (h == CU_STREAM_LEGACY) {
        h = NULL;
        ptsz = 0;
    }
    for (unsigned i = 0; i < 4; i++)
        if (t->lstream[i].ctx == ctx && t->lstream[i].h == h && t->lstream[i].ptsz == (uint32_t)ptsz &&
            t->lstream[i].id)
            return t->lstream[i].id;
    uint32_t id = 0;
    atomic_fetch_add_explicit(&gmp_g.lmiss_stream, 1, memory_order_relaxed);
    if (gmp_g.api.GetStreamIdEx) {
        t->internal = 1; /* whatever CUPTI calls inside is not the program's */
        if (gmp_g.api.GetStreamIdEx(ctx, h, (uint8_t)ptsz, &id) != CUPTI_SUCCESS ||
            id == CUPTI_INVALID_STREAM_ID)
            id = 0;
        t->internal = 0;
    }
    if (id) {
        unsigned k = t->lsnext++ & 3;
        t->lstream[k].ctx = ctx;
        t->lstream[k].h = h;
        t->lstream[k].ptsz = (uint32_t)ptsz;
        t->lstream[k].id = id;
    }
    return id;
}

/* The first entry of the set of a key in a cache of n entries (n / GMP_LWAYS
 * sets): a multiplicative hash, because the driver's handles and the names'
 * addresses come in strides that leave the low bits alike. */
static inline uint32_t lcache_set(uint64_t key, uint32_t n)
{
    uint32_t sets = n / GMP_LWAYS;
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) % sets * GMP_LWAYS;
}

/* The way to fill in a set: an empty one (bit w of `used` clear), else
 * round robin. */
static inline uint32_t lcache_victim(gmp_tls *t, uint32_t set, unsigned used)
{
    for (uint32_t w = 0; w < GMP_LWAYS; w++)
        if (!(used >> w & 1))
            return set + w;
    return set + (t->lvictim++ & (GMP_LWAYS - 1));
}

/* The name: the pointer as key; its bytes too unless this thread sent them
 * in this generation. */
static void launch_name(gmp_tls *t, const char *sym)
{
    gmp_ev_launch *l = &t->lev.launch;
    l->key = (uint64_t)(uintptr_t)sym;
    l->nlen = 0;
    l->heap = NULL;
    t->lname_slot = 0;
    if (!sym)
        return;
    uint32_t set = lcache_set(l->key, GMP_LNAMES);
    unsigned used = 0;
    for (uint32_t w = 0; w < GMP_LWAYS; w++) {
        if (t->lnames[set + w] == l->key)
            return; /* the writer knows it */
        used |= (unsigned)(t->lnames[set + w] != 0) << w;
    }
    uint32_t slot = lcache_victim(t, set, used);
    atomic_fetch_add_explicit(&gmp_g.lmiss_name, 1, memory_order_relaxed);
    size_t n = strnlen(sym, GMT_MAX_STRING);
    if (n < sizeof l->name) {
        memcpy(l->name, sym, n);
        l->nlen = (uint32_t)n;
    } else if ((l->heap = malloc(n + 1)) != NULL) {
        /* once per long name and thread: the ring cell has no room */
        memcpy(l->heap, sym, n);
        l->heap[n] = '\0';
    } else {
        /* out of memory: the name cut to what fits, visibly */
        memcpy(l->name, sym, sizeof l->name - 3);
        memcpy(l->name + sizeof l->name - 3, "...", 3);
        l->nlen = sizeof l->name;
    }
    t->lname_slot = slot + 1;
}

/* One attribute of the launched function. The runtime (CUDA 12 and later)
 * loads its kernels as library kernels and hands the driver a CUkernel in
 * the CUfunction slot of cuLaunchKernel*, which cuFuncGetAttribute may
 * refuse; cuKernelGetAttribute answers for it on the launch's device (dev;
 * NULL: not known). */
static int func_attr(CUfunction f, const CUdevice *dev, CUfunction_attribute a, int *v)
{
    CUresult r = gmp_g.api.FuncGetAttribute ? gmp_g.api.FuncGetAttribute(v, a, f) : CUDA_ERROR_NOT_FOUND;
    if (r != CUDA_SUCCESS && dev && gmp_g.api.KernelGetAttribute)
        r = gmp_g.api.KernelGetAttribute(v, a, (CUkernel)(void *)f, *dev);
    return r == CUDA_SUCCESS && *v >= 0;
}

/* What CUPTI's kernel record would say of the function's resources
 * (registers per thread, static shared and local memory per thread): three
 * attribute queries the first time this thread launches f in this module
 * generation, a cache probe afterwards; and the launch's own dynamic shared
 * memory. Nothing when the driver does not say. */
static void launch_attrs(gmp_tls *t, CUfunction f, uint32_t dynamic_smem)
{
    if (!f || (!gmp_g.api.FuncGetAttribute && !gmp_g.api.KernelGetAttribute))
        return;
    uintptr_t v = (uintptr_t)f;
    uint32_t set = lcache_set(v, GMP_LFUNCS), slot = set;
    unsigned used = 0;
    for (; slot < set + GMP_LWAYS && t->lfuncs[slot].f != f; slot++)
        used |= (unsigned)(t->lfuncs[slot].f != NULL) << (slot - set);
    if (slot == set + GMP_LWAYS) {
        slot = lcache_victim(t, set, used);
        atomic_fetch_add_explicit(&gmp_g.lmiss_func, 1, memory_order_relaxed);
        int regs = 0, smem = 0, local = 0;
        t->internal = 1; /* CUPTI may report these calls: not the program's */
        CUdevice dev = (CUdevice)t->ldev; /* the handle of the launch's device, once */
        int dev_ok = !gmp_g.api.DeviceGet || gmp_g.api.DeviceGet(&dev, (int)t->ldev) == CUDA_SUCCESS;
        const CUdevice *d = dev_ok ? &dev : NULL;
        int ok = func_attr(f, d, CU_FUNC_ATTRIBUTE_NUM_REGS, &regs) &&
                 func_attr(f, d, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &smem) &&
                 func_attr(f, d, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &local);
        t->internal = 0;
        if (!ok)
            gmp_log_debug("launch mode: no resources of function %p from the driver (registers etc. unknown)",
                          (void *)f);
        t->lfuncs[slot].f = f;
        t->lfuncs[slot].ok = (uint32_t)ok;
        t->lfuncs[slot].regs = ok ? (uint32_t)regs : 0;
        t->lfuncs[slot].static_smem = ok ? (uint32_t)smem : 0;
        t->lfuncs[slot].local_mem = ok ? (uint32_t)local : 0;
    }
    if (!t->lfuncs[slot].ok)
        return;
    gmp_ev_launch *l = &t->lev.launch;
    l->regs = t->lfuncs[slot].regs;
    l->static_smem = t->lfuncs[slot].static_smem;
    l->local_mem = t->lfuncs[slot].local_mem;
    l->dynamic_smem = dynamic_smem;
    l->has_attrs = 1;
}

static void launch_params(gmp_tls *t, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
    gmp_ev_launch *l = &t->lev.launch;
    const void *p = cb->functionParams;
    if (!p)
        return;
    if (cbid == DRV(cuLaunchKernel) || cbid == DRV(cuLaunchKernel_ptsz) || cbid == DRV(cuLaunchCooperativeKernel) ||
        cbid == DRV(cuLaunchCooperativeKernel_ptsz)) {
        const gmp_cuLaunchKernel_params *k = p;
        memcpy(l->grid, k->grid, sizeof l->grid);
        memcpy(l->block, k->block, sizeof l->block);
        t->lev.c = gmp_launch_stream(t, cb->context, k->stream,
                                 cbid == DRV(cuLaunchKernel_ptsz) || cbid == DRV(cuLaunchCooperativeKernel_ptsz));
        launch_attrs(t, k->f, k->shared_mem);
    } else if (cbid == DRV(cuLaunchKernelEx) || cbid == DRV(cuLaunchKernelEx_ptsz)) {
        const gmp_cuLaunchKernelEx_params *x = p;
        const CUlaunchConfig *c = x->config;
        if (!c)
            return;
        l->grid[0] = c->gridDimX, l->grid[1] = c->gridDimY, l->grid[2] = c->gridDimZ;
        l->block[0] = c->blockDimX, l->block[1] = c->blockDimY, l->block[2] = c->blockDimZ;
        t->lev.c = gmp_launch_stream(t, cb->context, c->hStream, cbid == DRV(cuLaunchKernelEx_ptsz));
        launch_attrs(t, x->f, c->sharedMemBytes);
    }
}

/* Outermost launch ENTER (after api_enter set cur_seq/range/epoch). */
static void launch_begin(gmp_tls *t, CUpti_CallbackId cbid, unsigned fam, const CUpti_CallbackData *cb)
{
    launch_forget(t); /* a launch whose EXIT never came (callbacks switched off meanwhile) */
    uint32_t gen = atomic_load_explicit(&gmp_g.mod_gen, memory_order_acquire);
    if (t->lgen != gen) {
        atomic_fetch_add_explicit(&gmp_g.lmiss_gen, 1, memory_order_relaxed);
        memset(t->lnames, 0, sizeof t->lnames);
        memset(t->lfuncs, 0, sizeof t->lfuncs);
        memset(t->lstream, 0, sizeof t->lstream);
        t->lctx_ok = 0;
        t->lgen = gen;
    }
    gmp_ev *ev = &t->lev;
    ev->type = GMP_EV_LAUNCH;
    ev->tid = gmp_tid(t);
    ev->epoch = t->cur_epoch;
    ev->corr = cb->correlationId;
    ev->ts = gmp_now();
    ev->a = t->cur_seq;
    ev->b = t->cur_range;
    ev->c = 0;
    ev->d = gmp_launch_device(t, cb->context);
    memset(&ev->launch, 0, offsetof(gmp_ev_launch, gen)); /* grid, block, resources */
    ev->launch.gen = gen;
    /* a graph launch is one KERNEL too, so that attribution (the next
     * launch of the thread) finds it as in GPU mode, where its kernels
     * carry its seq */
    launch_name(t, fam == GMP_FAM_GRAPH ? graph_launch_name : cb->symbolName);
    if (fam == GMP_FAM_LAUNCH)
        launch_params(t, cbid, cb);
    t->lpend = 1;
}

/* Outermost launch EXIT: queue the event. */
static void launch_end(gmp_tls *t, const CUpti_CallbackData *cb)
{
    gmp_ev *ev = &t->lev;
    if (cb->functionReturnValue && *(const int *)cb->functionReturnValue != 0) {
        launch_forget(t); /* the launch failed: nothing ran */
        return;
    }
    ev->len = (uint16_t)(offsetof(gmp_ev_launch, name) + ev->launch.nlen);
    if (gmp_post_ready(ev) == 0) {
        if (t->lname_slot)
            t->lnames[t->lname_slot - 1] = ev->launch.key; /* the writer has the name now */
        ev->launch.heap = NULL;                            /* and owns the copy */
        t->lpend = 0;
        return;
    }
    launch_forget(t); /* dropped (counted): the name goes again next time */
}

static void api_enter(gmp_tls *t, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, unsigned fam,
                      const CUpti_CallbackData *cb)
{
    uint32_t gen = atomic_load_explicit(&gmp_g.cb_gen, memory_order_relaxed);
    if (t->rt_depth && t->rt_gen != gen)
        t->rt_depth = 0; /* an EXIT was lost while callbacks were switched */
    int nested = t->rt_depth > 0;
    if (!nested) {
        if (fam == GMP_FAM_LAUNCH || fam == GMP_FAM_GRAPH)
            t->seq++;
        t->cur_seq = t->seq;
        uint32_t n = t->nranges < GMP_RANGE_STACK ? t->nranges : GMP_RANGE_STACK;
        t->cur_range = n ? t->ranges[n - 1] : 0;
        t->cur_epoch = atomic_load_explicit(&gmp_g.epoch, memory_order_acquire);
    }
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API && t->rt_depth++ == 0)
        t->rt_gen = gen;
    /* The table joins CUPTI's activity records to their calls. Launch mode
     * has no kernel, memcpy or memset activity: no record will ask for a
     * launch's or a copy's id. */
    if (!gmp_fam_is_collect(fam) || !launch_mode())
        gmp_corr_put(&gmp_g.corr, cb->correlationId, gmp_tid(t), t->cur_epoch, t->cur_seq, t->cur_range,
                     (uint8_t)fam);
    if (nested) {
        /* the runtime call around it handles what follows; launch mode
         * reads a copy from its driver call when the runtime's could not
         * be read (copies.c) */
        if (t->cp.state == GMP_CP_UNREAD && dom == CUPTI_CB_DOMAIN_DRIVER_API &&
            (fam == GMP_FAM_MEMCPY || fam == GMP_FAM_MEMSET))
            gmp_copy_nested(t, cbid, cb);
        return;
    }
    switch (fam) {
    case GMP_FAM_LAUNCH:
    case GMP_FAM_GRAPH:
        if (launch_mode())
            launch_begin(t, cbid, fam, cb);
        break;
    case GMP_FAM_MEMCPY:
    case GMP_FAM_MEMSET:
        if (launch_mode())
            gmp_copy_begin(t, dom, cbid, cb);
        break;
    case GMP_FAM_PROF_START:
    case GMP_FAM_PROF_STOP:
        if (gmp_g.cfg.schedule.kind == GMP_SCHED_CAPTURE)
            gmp_transition(GMP_TR_CAPTURE, fam == GMP_FAM_PROF_START, GMT_STEPSRC_CAPTURE);
        break;
    case GMP_FAM_RESET:
        /* The reset destroys the context and CUPTI's buffers with it:
         * everything recorded so far goes to the file first. */
        gmp_flush_forced();
        gmp_wt_sync(2000);
        /* no sampling through a context being destroyed: */
        __attribute__((fallthrough));
    case GMP_FAM_CTX_DESTROY:
        if (!t->pause_corr) {
            sampling_pause();
            t->pause_corr = cb->correlationId;
        }
        break;
    default:
        break;
    }
}

static void api_exit(gmp_tls *t, CUpti_CallbackDomain dom, unsigned fam, const CUpti_CallbackData *cb)
{
    if (t->pause_corr && t->pause_corr == cb->correlationId) {
        t->pause_corr = 0;
        sampling_resume();
    }
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (t->rt_depth)
            t->rt_depth--;
        if (t->lpend && t->rt_depth == 0 && (fam == GMP_FAM_LAUNCH || fam == GMP_FAM_GRAPH))
            launch_end(t, cb);
        else if (t->cp.state && t->rt_depth == 0 && (fam == GMP_FAM_MEMCPY || fam == GMP_FAM_MEMSET))
            gmp_copy_end(t, cb);
        return;
    }
    /* a driver launch or copy outside any runtime call is the outermost one */
    if (t->lpend && t->rt_depth == 0 && (fam == GMP_FAM_LAUNCH || fam == GMP_FAM_GRAPH)) {
        launch_end(t, cb);
        return;
    }
    if (t->cp.state && t->rt_depth == 0 && (fam == GMP_FAM_MEMCPY || fam == GMP_FAM_MEMSET)) {
        gmp_copy_end(t, cb);
        return;
    }
    if (!gmp_fam_is_vmm(fam) || !cb->functionReturnValue ||
        *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS || !cb->functionParams)
        return;
    switch (fam) {
    case GMP_FAM_VMM_RESERVE: {
        const gmp_cuMemAddressReserve_params *p = cb->functionParams;
        if (p->ptr)
            post_vmm(GMP_EV_VMM_RESERVE, (uint64_t)*p->ptr, p->size, t, cb->correlationId);
        break;
    }
    case GMP_FAM_VMM_ADDRFREE: {
        const gmp_cuMemAddressFree_params *p = cb->functionParams;
        post_vmm(GMP_EV_VMM_ADDRFREE, (uint64_t)p->ptr, p->size, t, cb->correlationId);
        break;
    }
    case GMP_FAM_VMM_MAP: {
        const gmp_cuMemMap_params *p = cb->functionParams;
        post_vmm(GMP_EV_VMM_MAP, (uint64_t)p->ptr, p->size, t, cb->correlationId);
        break;
    }
    case GMP_FAM_VMM_UNMAP: {
        const gmp_cuMemUnmap_params *p = cb->functionParams;
        post_vmm(GMP_EV_VMM_UNMAP, (uint64_t)p->ptr, p->size, t, cb->correlationId);
        break;
    }
    default:
        break;
    }
}

/* Every 256th callback of a thread is timed; the sum times 256 estimates the
 * time spent in our callbacks (host_time_ns in STATS) at the cost of one
 * counter increment on the other 255. */
#define GMP_CB_SAMPLE_SHIFT 8

static void CUPTIAPI gmp_cupti_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                                        const void *data)
{
    (void)ud;
    if (!gmp_on())
        return;
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API || dom == CUPTI_CB_DOMAIN_DRIVER_API) {
        unsigned fam = dom == CUPTI_CB_DOMAIN_RUNTIME_API
                           ? (cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE ? fam_rt[cbid] : 0)
                           : (cbid < CUPTI_DRIVER_TRACE_CBID_SIZE ? fam_drv[cbid] : 0);
        gmp_tls *t = gmp_self();
        if (!fam || t->internal || __builtin_expect((g_test_collect & TC_EMPTY) && gmp_fam_is_collect(fam), 0))
            return;
        const CUpti_CallbackData *cb = data;
        if (__builtin_expect((++t->sample & ((1u << GMP_CB_SAMPLE_SHIFT) - 1)) == 0, 0)) {
            uint64_t t0 = mono_ns();
            if (cb->callbackSite == CUPTI_API_ENTER)
                api_enter(t, dom, cbid, fam, cb);
            else
                api_exit(t, dom, fam, cb);
            atomic_fetch_add_explicit(&gmp_g.cb_time_ns, (mono_ns() - t0) << GMP_CB_SAMPLE_SHIFT,
                                      memory_order_relaxed);
            return;
        }
        if (cb->callbackSite == CUPTI_API_ENTER)
            api_enter(t, dom, cbid, fam, cb);
        else
            api_exit(t, dom, fam, cb);
        return;
    }
    if (dom == CUPTI_CB_DOMAIN_RESOURCE) {
        const CUpti_ResourceData *r = data;
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
            device_add(r->context);
            gmp_torch_maybe_attach();
        } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
            device_forget(r->context);
            atomic_fetch_add_explicit(&gmp_g.mod_gen, 1, memory_order_release);
        } else if (cbid == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING ||
                   cbid == CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING) {
            /* launch mode: cached name pointers / stream handles may now
             * denote something else (see launch_begin) */
            atomic_fetch_add_explicit(&gmp_g.mod_gen, 1, memory_order_release);
        }
    }
}

/* Exposed for the callback-cost benchmark (bench/cb_cost.c) through the
 * library's test hook; not part of the public API. */
GMP_HIDDEN CUpti_CallbackFunc gmp_collect_callback_fn(void);
CUpti_CallbackFunc gmp_collect_callback_fn(void) { return gmp_cupti_callback; }

static uint64_t CUPTIAPI gmp_cupti_timestamp(void) { return gmp_now(); }

/* ---- subscription and switches --------------------------------------------- */

int gmp_collect_subscribe(char *err, size_t cap)
{
    char buf[96];
    CUptiResult r;
    char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 2];
    other[0] = '\0';
    families_init();
    /* cuptiSubscribe_v2 first: it names us ("CUPTI for gmemprof") to any
     * tool that comes second, and names the tool that came first to us. */
    r = CUPTI_ERROR_NOT_SUPPORTED;
    if (gmp_g.api.Subscribe_v2) {
        CUpti_SubscriberParams p;
        memset(&p, 0, sizeof p);
        p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
        p.subscriberName = "gmemprof";
        p.oldSubscriberName = other;
        p.oldSubscriberSize = sizeof other;
        r = gmp_g.api.Subscribe_v2(&gmp_g.sub, gmp_cupti_callback, NULL, &p);
        other[sizeof other - 1] = '\0';
    }
    if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        r = gmp_g.api.Subscribe(&gmp_g.sub, gmp_cupti_callback, NULL);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        snprintf(err, cap,
                 "another CUPTI client is already attached to this process (%s); CUPTI allows "
                 "only one here, so gmemprof is off for this run (the program runs on)",
                 other[0] ? other : "its name is unknown: e.g. Nsight Systems, torch.profiler");
        return -1;
    }
    if (r != CUPTI_SUCCESS) {
        snprintf(err, cap, "cuptiSubscribe failed: %s; profiling is off (the program runs on)",
                 gmp_cuapi_strerror(&gmp_g.api, r, buf, sizeof buf));
        return -1;
    }
    return 0;
}

void gmp_collect_unsubscribe(void)
{
    if (gmp_g.sub && gmp_g.api.Unsubscribe) {
        gmp_g.api.Unsubscribe(gmp_g.sub);
        gmp_g.sub = NULL;
    }
}

static void set_attr(CUpti_ActivityAttribute a, size_t v, const char *what)
{
    size_t sz = sizeof v;
    char buf[96];
    if (!gmp_g.api.ActivitySetAttribute)
        return;
    CUptiResult r = gmp_g.api.ActivitySetAttribute(a, &sz, &v);
    if (r != CUPTI_SUCCESS)
        gmp_log_debug("cannot set CUPTI %s to %zu: %s", what, v,
                      gmp_cuapi_strerror(&gmp_g.api, r, buf, sizeof buf));
}

/* GMEMPROF_TEST_COLLECT (benchmark diagnosis only, not a user setting):
 * which parts of the window's collection run, as a list of kernel,
 * memcpy, memset, rtcb (runtime-API callbacks of the collect families),
 * drvcb (driver-API ones), empty (TC_EMPTY: those callbacks return at
 * once) and drvact (TC_DRVACT: DRIVER activity of the launch APIs),
 * separated by ',' or '+' ('+' fits inside the comma-separated --variant
 * of bench/ab_bench.sh, which uses it to price each part); a trace made
 * with a part missing is incomplete by construction. */

static unsigned test_collect_mask(void)
{
    const char *v = getenv("GMEMPROF_TEST_COLLECT");
    if (!v)
        return TC_ALL;
    unsigned m = 0;
    static const struct { const char *name; unsigned bit; } parts[] = {
        {"kernel", TC_KERNEL}, {"memcpy", TC_MEMCPY}, {"memset", TC_MEMSET},
        {"rtcb", TC_RTCB},     {"drvcb", TC_DRVCB},   {"empty", TC_EMPTY},
        {"drvact", TC_DRVACT},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t n = strlen(parts[i].name);
        for (const char *p = v; (p = strstr(p, parts[i].name)) != NULL; p += n)
            if ((p == v || p[-1] == ',' || p[-1] == '+') && (p[n] == ',' || p[n] == '+' || p[n] == '\0'))
                m |= parts[i].bit;
    }
    gmp_log_info("GMEMPROF_TEST_COLLECT=%s: a diagnosis setting, the trace is incomplete", v);
    return m;
}

/* Launches are taken from the driver API alone, in both kernel modes: every
 * runtime launch (cudaLaunchKernel, cudaGraphLaunch, CUDA 13's
 * __cudaLaunchKernel) reaches the driver's cuLaunchKernel* / cuGraphLaunch,
 * which CUPTI reports on the same thread with the symbol name, the grid and
 * the stream, so the driver callback is the outermost launch (rt_depth 0);
 * and the KERNEL activity record of a runtime launch carries the nested
 * driver call's correlation id, so GPU mode's join needs nothing else. Both
 * were checked on the H200 (driver 580, CUDA 13.0): the GPU suite's exact
 * consumer checks pass with the runtime launch callbacks off, and a PyTorch
 * loop gives the same kernel table with and without them. Measured there
 * (bench/ab_bench.sh, gm_launch_cost), launch mode costs +122-148 ns per
 * launch with the driver's callbacks alone against +634-724 ns with the
 * runtime pair too: CUPTI's runtime-API callbacks cost several times its
 * driver ones. */
static int rt_cbid_wanted(unsigned fam)
{
    return fam != GMP_FAM_LAUNCH && fam != GMP_FAM_GRAPH;
}

static void enable_cbids(uint32_t on, int collect_only)
{
    if (!collect_only || (g_test_collect & TC_RTCB))
        for (uint32_t i = 1; i < CUPTI_RUNTIME_TRACE_CBID_SIZE; i++)
            if (fam_rt[i] && gmp_fam_is_collect(fam_rt[i]) == collect_only && rt_cbid_wanted(fam_rt[i]))
                gmp_g.api.EnableCallback(on, gmp_g.sub, CUPTI_CB_DOMAIN_RUNTIME_API, i);
    if (!collect_only || (g_test_collect & TC_DRVCB))
        for (uint32_t i = 1; i < CUPTI_DRIVER_TRACE_CBID_SIZE; i++)
            if (fam_drv[i] && gmp_fam_is_collect(fam_drv[i]) == collect_only)
                gmp_g.api.EnableCallback(on, gmp_g.sub, CUPTI_CB_DOMAIN_DRIVER_API, i);
}

/* Before any context exists (InitializeInjection runs inside cuInit): the
 * device buffer settings only apply to contexts created afterwards. */
int gmp_collect_enable(char *err, size_t cap)
{
    char buf[96];
    CUptiResult r;
    /* CUPTI's device buffers live in GPU memory (3.2 MB each, 3 per context
     * pre-allocated, up to 250 by default): small, 2 pre-allocated, and a
     * pool limit that keeps the total at 16 MiB per context. */
    gmp_g.devbuf_bytes = (size_t)gmp_g.cfg.device_buffer_kb << 10;
    gmp_g.devbuf_prealloc = 2;
    size_t limit = (16u << 20) / gmp_g.devbuf_bytes;
    if (limit < gmp_g.devbuf_prealloc + 1)
        limit = gmp_g.devbuf_prealloc + 1;
    set_attr(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, gmp_g.devbuf_bytes, "device buffer size");
    set_attr(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, limit, "device buffer pool limit");
    set_attr(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, gmp_g.devbuf_prealloc,
             "device buffer pre-allocation");
    /* One buffer stream for all threads, not CUPTI's default of one per
     * thread: a thread's buffer completes when it fills, so with per-thread
     * buffers the records of two threads reach us out of order — on the
     * H200, PyTorch's autograd thread freed blocks whose allocation by the
     * main thread came 12,000 records later in the trace, and a
     * free before its allocation matches nothing. Must precede the buffer
     * callbacks' registration. */
    {
        uint8_t per_thread = 0;
        size_t sz = sizeof per_thread;
        if (gmp_g.api.ActivitySetAttribute &&
            (r = gmp_g.api.ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &sz, &per_thread)) !=
                CUPTI_SUCCESS)
            gmp_log_info("cannot ask CUPTI for one activity buffer stream (%s): records of different threads may "
                         "reach the trace out of order",
                         gmp_cuapi_strerror(&gmp_g.api, r, buf, sizeof buf));
    }
    g_test_collect = test_collect_mask();
    if (gmp_g.api.ActivityRegisterTimestampCallback)
        gmp_g.api.ActivityRegisterTimestampCallback(gmp_cupti_timestamp);
    r = gmp_g.api.ActivityRegisterCallbacks(buf_requested, buf_completed);
    if (r != CUPTI_SUCCESS) {
        snprintf(err, cap, "cuptiActivityRegisterCallbacks failed: %s",
                 gmp_cuapi_strerror(&gmp_g.api, r, buf, sizeof buf));
        return -1;
    }
    r = gmp_g.api.ActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2);
    if (r != CUPTI_SUCCESS) {
        snprintf(err, cap, "cannot enable CUPTI memory records (MEMORY2): %s",
                 gmp_cuapi_strerror(&gmp_g.api, r, buf, sizeof buf));
        return -1;
    }
    r = gmp_g.api.ActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
    if (r != CUPTI_SUCCESS)
        gmp_log_debug("memory pool records unavailable: %s",
                      gmp_cuapi_strerror(&gmp_g.api, r, buf, sizeof buf));
    gmp_g.api.EnableCallback(1, gmp_g.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    gmp_g.api.EnableCallback(1, gmp_g.sub, CUPTI_CB_DOMAIN_RESOURCE,
                             CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    if (gmp_g.cfg.kernels == GMP_KERNELS_LAUNCH) {
        /* rare events; launch mode's caches must hear of them */
        gmp_g.api.EnableCallback(1, gmp_g.sub, CUPTI_CB_DOMAIN_RESOURCE,
                                 CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
        gmp_g.api.EnableCallback(1, gmp_g.sub, CUPTI_CB_DOMAIN_RESOURCE,
                                 CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING);
    }
    enable_cbids(1, 0);
    return 0;
}

static const CUpti_ActivityKind collect_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
};

void gmp_collect_kernels(int on)
{
    if (!gmp_g.cfg.kernels || !gmp_g.sub)
        return;
    if (atomic_load(&gmp_g.collecting) == on)
        return;
    /* launch mode: the launch and copy callbacks make the KERNEL, MEMCPY
     * and MEMSET records (copies.c); CUPTI's activity for them is what
     * costs, on every launch (docs/benchmarks.md) */
    for (size_t i = 0; i < sizeof collect_kinds / sizeof collect_kinds[0] && gmp_g.cfg.kernels != GMP_KERNELS_LAUNCH;
         i++) {
        if (!(g_test_collect & (1u << i)))
            continue;
        CUptiResult r = on ? gmp_g.api.ActivityEnable(collect_kinds[i])
                           : gmp_g.api.ActivityDisable(collect_kinds[i]);
        if (r != CUPTI_SUCCESS) {
            char buf[96];
            gmp_log_debug("cannot %s activity kind %d: %s", on ? "enable" : "disable",
                          (int)collect_kinds[i], gmp_cuapi_strerror(&gmp_g.api, r, buf, sizeof buf));
        }
    }
    if ((g_test_collect & TC_DRVACT) && gmp_g.api.ActivityEnableDriverApi) {
        unsigned n = 0, bad = 0;
        for (uint32_t i = 1; i < CUPTI_DRIVER_TRACE_CBID_SIZE; i++)
            if (fam_drv[i] == GMP_FAM_LAUNCH || fam_drv[i] == GMP_FAM_GRAPH) {
                n++;
                bad += gmp_g.api.ActivityEnableDriverApi(i, (uint8_t)on) != CUPTI_SUCCESS;
            }
        gmp_log_debug("GMEMPROF_TEST_COLLECT=drvact: DRIVER activity %s for %u launch APIs, %u refused",
                      on ? "on" : "off", n, bad);
    }
    enable_cbids((uint32_t)on, 1);
    atomic_fetch_add(&gmp_g.cb_gen, 1);
    atomic_store(&gmp_g.collecting, on);
}

void gmp_flush_forced(void)
{
    if (!gmp_on() || !gmp_g.sub)
        return;
    gmp_g.api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* ---- the window ---------------------------------------------------------- */

static void publish_epoch(unsigned ev, int kind, int source, uint64_t snap)
{
    const gmp_sched *s = &gmp_g.sched;
    uint32_t e = atomic_load_explicit(&gmp_g.epoch, memory_order_relaxed) + (kind == GMP_TR_INIT ? 0 : 1);
    gmp_epoch_info *info = &gmp_g.epochs[e % GMP_EPOCH_HIST];
    info->epoch = e;
    info->ev = ev;
    info->ts = gmp_now();
    info->step = s->step;
    info->window = s->window;
    info->phase = (uint8_t)s->phase;
    info->source = (uint8_t)source;
    info->kind = (uint8_t)kind;
    info->in_window = (uint8_t)s->in_window;
    info->snap = snap;
    atomic_store_explicit(&gmp_g.epoch, e, memory_order_release);
}

void gmp_transition_init(void)
{
    pthread_mutex_lock(&gmp_g.step_lock);
    unsigned ev = gmp_sched_init(&gmp_g.sched, &gmp_g.cfg.schedule, gmp_now());
    atomic_store(&gmp_g.epoch, 0);
    publish_epoch(ev, GMP_TR_INIT, GMT_STEPSRC_NONE, 0);
    pthread_mutex_unlock(&gmp_g.step_lock);
}

void gmp_transition(int kind, int arg, int source)
{
    if (!gmp_live_state() || atomic_load(&gmp_g.stopping))
        return;
    gmp_torch_flush(); /* the allocator's events of the step that ends, first */
    pthread_mutex_lock(&gmp_g.step_lock);
    unsigned ev;
    switch (kind) {
    case GMP_TR_STEP:
        ev = gmp_sched_step(&gmp_g.sched);
        break;
    case GMP_TR_CAPTURE:
        ev = gmp_sched_capture(&gmp_g.sched, arg);
        break;
    case GMP_TR_TICK:
        ev = gmp_sched_tick(&gmp_g.sched, gmp_now());
        break;
    default:
        ev = 0;
        break;
    }
    if (kind != GMP_TR_STEP && ev == 0) {
        pthread_mutex_unlock(&gmp_g.step_lock);
        return; /* nothing changed: no new epoch */
    }
    /* A window edge needs every record made before it in our queue first,
     * so the writer can put the baseline (and the window's last records)
     * exactly: forced flush, synchronous. Edges are rare. */
    if (ev & (GMP_SCHED_EV_WINDOW_BEGIN | GMP_SCHED_EV_WINDOW_END))
        gmp_flush_forced();
    if (ev & GMP_SCHED_EV_COLLECT_BEGIN)
        gmp_collect_kernels(1);
    if (ev & GMP_SCHED_EV_COLLECT_END)
        gmp_collect_kernels(0);
    publish_epoch(ev, kind, source, gmp_snapshot_take());
    pthread_mutex_unlock(&gmp_g.step_lock);
    gmp_wt_wake();
}

void gmp_on_step(int source)
{
    if (!gmp_live_state())
        return;
    gmp_torch_maybe_attach();
    if (source == GMT_STEPSRC_API)
        atomic_store(&gmp_g.api_steps, 1);
    else if (source == GMT_STEPSRC_NVTX && atomic_load(&gmp_g.api_steps))
        return; /* gmemprof_step() is the step source now */
    gmp_transition(GMP_TR_STEP, 0, source);
}

void gmp_on_tag(const char *name, size_t len)
{
    if (!gmp_live_state())
        return;
    gmp_torch_maybe_attach();
    gmp_torch_flush();
    /* The snapshot must include every allocation made before this call. */
    gmp_flush_forced();
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name));
    ev.type = GMP_EV_TAG;
    ev.c = gmp_snapshot_take(); /* the driver's view now, not when the writer gets there */
    gmp_ev_set_name(&ev, name, len);
    gmp_post(&ev);
    gmp_wt_wake();
}
