/*
 * The CUDA API and resource callbacks (callbacks.h): the hot path. CUPTI
 * calls gmp_cupti_callback at the ENTER and EXIT of every CUDA call whose
 * callback is on, on the application thread, and at context and module
 * events.
 *
 * Hot path (an API callback on an application thread): one table lookup for
 * the API family, the thread's TLS block, and a seqlock publish of
 * {corr, tid, epoch, seq, range, family} into the correlation table. No
 * lock, no allocation, no system call (the tid is cached once per thread).
 * Everything else (joining activity records, the live table, encoding)
 * happens on the writer thread. Launch mode's launches and copies are
 * launch.c and copies.c; VMM calls post their ranges to the writer.
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
#include "callbacks.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "activity.h"
#include "copies.h"
#include "devices.h"
#include "families.h"
#include "gmp_rt.h"
#include "launch.h"
#include "log.h"
#include "nvtx.h"
#include "post.h"
#include "steps.h"
#include "torch.h"
#include "wthread.h"

static _Atomic int collecting;   /* kernel/memcpy/memset collection is on */
static _Atomic uint32_t cb_gen;  /* bumped when launch callbacks are switched */

/* The settings, written once at init, before any callback is on. */
static int g_kernels;      /* GMEMPROF_KERNELS: GMP_KERNELS_* */
static int g_capture;      /* the schedule's transitions are cudaProfilerStart/Stop */

static inline int launch_mode(void) { return g_kernels == GMP_KERNELS_LAUNCH; }

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

/* The allocation calls' parameter blocks, for the size of a request that
 * failed: every one but the pitched one has the size second. */
typedef struct gmp_alloc_params {
    CUdeviceptr *dptr;
    size_t bytesize;
} gmp_alloc_params;
typedef struct gmp_cuMemAllocPitch_params {
    CUdeviceptr *dptr;
    size_t *pPitch;
    size_t WidthInBytes;
    size_t Height;
    unsigned int ElementSizeBytes;
} gmp_cuMemAllocPitch_params;
typedef struct gmp_cuMemAllocAsync_params {
    CUdeviceptr *dptr;
    size_t bytesize;
    CUstream hStream;
} gmp_cuMemAllocAsync_params;
typedef struct gmp_cuMemAllocFromPoolAsync_params {
    CUdeviceptr *dptr;
    size_t bytesize;
    CUmemoryPool pool;
    CUstream hStream;
} gmp_cuMemAllocFromPoolAsync_params;
typedef struct gmp_cuMemCreate_params {
    CUmemGenericAllocationHandle *handle;
    size_t size;
    const CUmemAllocationProp *prop;
    unsigned long long flags;
} gmp_cuMemCreate_params;

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

void gmp_callbacks_init(int kernels, const gmp_sched_spec *schedule)
{
    g_kernels = kernels;
    g_capture = schedule->kind == GMP_SCHED_CAPTURE;
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
    ev.vmm.start = t->vmm_ts;
    ev.len = sizeof ev.vmm;
    gmp_post(&ev);
}


/* The families whose failure with CUDA_ERROR_OUT_OF_MEMORY is a failed
 * device allocation (host and VMM address space are other resources). */
static int fam_allocates_device(unsigned fam)
{
    return fam == GMP_FAM_MALLOC || fam == GMP_FAM_PITCH || fam == GMP_FAM_MANAGED || fam == GMP_FAM_ASYNC ||
           fam == GMP_FAM_VMM_CREATE;
}

/* The request, device and stream of a failed allocation call. */
static void oom_request(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, uint64_t *bytes, int *dev,
                        uint64_t *stream)
{
    const void *p = cb->functionParams;
    if (!p)
        return;
    switch (cbid) {
    case DRV(cuMemAlloc_v2):
    case DRV(cuMemAllocManaged):
        *bytes = ((const gmp_alloc_params *)p)->bytesize;
        break;
    case DRV(cuMemAllocPitch_v2): {
        const gmp_cuMemAllocPitch_params *q = p;
        *bytes = (uint64_t)q->WidthInBytes * q->Height;
        break;
    }
    case DRV(cuMemAllocAsync):
    case DRV(cuMemAllocAsync_ptsz): {
        const gmp_cuMemAllocAsync_params *q = p;
        *bytes = q->bytesize;
        *stream = (uint64_t)(uintptr_t)q->hStream;
        break;
    }
    case DRV(cuMemAllocFromPoolAsync):
    case DRV(cuMemAllocFromPoolAsync_ptsz): {
        const gmp_cuMemAllocFromPoolAsync_params *q = p;
        *bytes = q->bytesize;
        *stream = (uint64_t)(uintptr_t)q->hStream;
        break;
    }
    case DRV(cuMemCreate): {
        const gmp_cuMemCreate_params *q = p;
        *bytes = q->size;
        if (q->prop && q->prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
            *dev = q->prop->location.id;
        break;
    }
    default:
        break; /* cuMemAlloc (32-bit sizes), arrays: the size stays unknown */
    }
}

/* A device allocation failed out of memory (the EXIT of its driver call):
 * the request and the driver's free and total memory go to the writer,
 * which writes the failure (a flight recorder's dump, GMEMPROF_SCHEDULE=
 * on-oom). Rare, so this path may ask the driver: cuMemGetInfo here runs
 * after the failed call returned, on the calling thread, holding no lock
 * of ours (gmp_devices_meminfo); a framework allocator's lock may be held
 * by the caller, which cuMemGetInfo does not need. */
static void post_oom(gmp_tls *t, CUpti_CallbackId cbid, const CUpti_CallbackData *cb, CUresult rc)
{
    uint64_t bytes = 0, stream = 0, f = 0, tot = 0;
    uint32_t id = 0;
    int dev = cb->context && gmp_g.api.GetDeviceId && gmp_g.api.GetDeviceId(cb->context, &id) == CUPTI_SUCCESS
                  ? (int)id
                  : 0;
    oom_request(cbid, cb, &bytes, &dev, &stream);
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name) + sizeof ev.oom);
    ev.type = GMP_EV_OOM;
    ev.ts = gmp_now();
    ev.tid = (uint32_t)gmp_tid(t);
    ev.epoch = t->cur_epoch;
    ev.corr = cb->correlationId;
    ev.a = bytes;
    ev.c = stream;
    ev.oom.range = t->cur_range;
    ev.oom.device = dev >= 0 ? (uint32_t)dev : 0;
    ev.oom.status = (uint32_t)rc;
    if (gmp_devices_meminfo(ev.oom.device, &f, &tot) == 0) {
        ev.b = f;
        ev.d = tot;
        ev.oom.has_mem = 1;
    }
    const char *fn = cb->functionName ? cb->functionName : "";
    size_t n = strnlen(fn, GMP_OOM_API_MAX);
    memcpy(ev.oom.api, fn, n);
    ev.oom.api_len = (uint8_t)n;
    ev.len = sizeof ev.oom;
    /* the allocations made before the failure go to the queue first */
    gmp_activity_flush_forced();
    gmp_post(&ev);
    gmp_wake();
}

static void api_enter(gmp_tls *t, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, unsigned fam,
                      const CUpti_CallbackData *cb)
{
    uint32_t gen = atomic_load_explicit(&cb_gen, memory_order_relaxed);
    if (t->rt_depth && t->rt_gen != gen)
        t->rt_depth = 0; /* an EXIT was lost while callbacks were switched */
    int nested = t->rt_depth > 0;
    if (!nested) {
        if (fam == GMP_FAM_LAUNCH || fam == GMP_FAM_GRAPH)
            t->seq++;
        t->cur_seq = t->seq;
        t->cur_range = gmp_nvtx_current(t);
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
            gmp_launch_begin(t, cbid, fam, cb);
        break;
    case GMP_FAM_MEMCPY:
    case GMP_FAM_MEMSET:
        if (launch_mode())
            gmp_copy_begin(t, dom, cbid, cb);
        break;
    case GMP_FAM_VMM_RESERVE:
    case GMP_FAM_VMM_MAP:
    case GMP_FAM_VMM_UNMAP:
        /* when the range starts to cover records (a mapping's own MEMORY2
         * record is made inside the call), or an unmapping stops */
        t->vmm_ts = gmp_now();
        break;
    case GMP_FAM_PROF_START:
    case GMP_FAM_PROF_STOP:
        if (g_capture)
            gmp_steps_transition(GMP_TR_CAPTURE, fam == GMP_FAM_PROF_START, GMT_STEPSRC_CAPTURE);
        break;
    case GMP_FAM_RESET:
        /* The reset destroys the context and CUPTI's buffers with it:
         * everything recorded so far goes to the file first. */
        gmp_activity_flush_forced();
        gmp_wt_sync(2000);
        /* no sampling through a context being destroyed: */
        __attribute__((fallthrough));
    case GMP_FAM_CTX_DESTROY:
        if (!t->pause_corr) {
            gmp_devices_pause_sampling();
            t->pause_corr = cb->correlationId;
        }
        break;
    default:
        break;
    }
}

static void api_exit(gmp_tls *t, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, unsigned fam,
                     const CUpti_CallbackData *cb)
{
    if (t->pause_corr && t->pause_corr == cb->correlationId) {
        t->pause_corr = 0;
        gmp_devices_resume_sampling();
    }
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (t->rt_depth)
            t->rt_depth--;
        if (t->lpend && t->rt_depth == 0 && (fam == GMP_FAM_LAUNCH || fam == GMP_FAM_GRAPH))
            gmp_launch_end(t, cb);
        else if (t->cp.state && t->rt_depth == 0 && (fam == GMP_FAM_MEMCPY || fam == GMP_FAM_MEMSET))
            gmp_copy_end(t, cb);
        return;
    }
    /* a driver launch or copy outside any runtime call is the outermost one */
    if (t->lpend && t->rt_depth == 0 && (fam == GMP_FAM_LAUNCH || fam == GMP_FAM_GRAPH)) {
        gmp_launch_end(t, cb);
        return;
    }
    if (t->cp.state && t->rt_depth == 0 && (fam == GMP_FAM_MEMCPY || fam == GMP_FAM_MEMSET)) {
        gmp_copy_end(t, cb);
        return;
    }
    if (fam_allocates_device(fam) && cb->functionReturnValue &&
        *(const CUresult *)cb->functionReturnValue == CUDA_ERROR_OUT_OF_MEMORY) {
        post_oom(t, cbid, cb, CUDA_ERROR_OUT_OF_MEMORY);
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
                api_exit(t, dom, cbid, fam, cb);
            atomic_fetch_add_explicit(&gmp_g.cb_time_ns, (mono_ns() - t0) << GMP_CB_SAMPLE_SHIFT,
                                      memory_order_relaxed);
            return;
        }
        if (cb->callbackSite == CUPTI_API_ENTER)
            api_enter(t, dom, cbid, fam, cb);
        else
            api_exit(t, dom, cbid, fam, cb);
        return;
    }
    if (dom == CUPTI_CB_DOMAIN_RESOURCE) {
        const CUpti_ResourceData *r = data;
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
            gmp_devices_add(r->context);
            gmp_wt_claim();
            gmp_torch_maybe_attach();
        } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
            gmp_devices_forget(r->context);
            gmp_launch_new_generation();
        } else if (cbid == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING ||
                   cbid == CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING) {
            /* launch mode: cached name pointers / stream handles may now
             * denote something else (see launch_begin) */
            gmp_launch_new_generation();
        }
    }
}

CUpti_CallbackFunc gmp_callbacks_fn(void) { return gmp_cupti_callback; }

/* ---- switches -------------------------------------------------------------- */

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
                gmp_g.api.EnableCallback(on, gmp_activity_subscriber(), CUPTI_CB_DOMAIN_RUNTIME_API, i);
    if (!collect_only || (g_test_collect & TC_DRVCB))
        for (uint32_t i = 1; i < CUPTI_DRIVER_TRACE_CBID_SIZE; i++)
            if (fam_drv[i] && gmp_fam_is_collect(fam_drv[i]) == collect_only)
                gmp_g.api.EnableCallback(on, gmp_activity_subscriber(), CUPTI_CB_DOMAIN_DRIVER_API, i);
}

/* After gmp_activity_enable: the resource callbacks, and the API callbacks
 * that stay on all run (allocations, VMM, steps, resets). */
void gmp_callbacks_enable(void)
{
    g_test_collect = test_collect_mask();
    gmp_g.api.EnableCallback(1, gmp_activity_subscriber(), CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    gmp_g.api.EnableCallback(1, gmp_activity_subscriber(), CUPTI_CB_DOMAIN_RESOURCE,
                             CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    if (g_kernels == GMP_KERNELS_LAUNCH) {
        /* rare events; launch mode's caches must hear of them */
        gmp_g.api.EnableCallback(1, gmp_activity_subscriber(), CUPTI_CB_DOMAIN_RESOURCE,
                                 CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
        gmp_g.api.EnableCallback(1, gmp_activity_subscriber(), CUPTI_CB_DOMAIN_RESOURCE,
                                 CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING);
    }
    enable_cbids(1, 0);
}

void gmp_callbacks_collect(int on)
{
    if (!g_kernels || !gmp_activity_subscriber())
        return;
    if (atomic_load(&collecting) == on)
        return;
    /* launch mode: the launch and copy callbacks make the KERNEL, MEMCPY
     * and MEMSET records (copies.c); CUPTI's activity for them is what
     * costs, on every launch (docs/benchmarks.md) */
    if (g_kernels != GMP_KERNELS_LAUNCH)
        gmp_activity_collect(on, g_test_collect & (TC_KERNEL | TC_MEMCPY | TC_MEMSET));
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
    atomic_fetch_add(&cb_gen, 1);
    atomic_store(&collecting, on);
}

