/*
 * Launch mode (GMEMPROF_KERNELS=launch, launch.h): no CUPTI kernel
 * activity; the launch callbacks make the KERNEL records.
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
 * mod_gen: every thread then forgets its caches, and the writer keys
 * names by (pointer, generation), so a new module whose kernel name lands
 * at a recycled address gets its own name.
 */
#include "launch.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "families.h"
#include "log.h"
#include "post.h"

#define DRV(x) CUPTI_DRIVER_TRACE_CBID_##x

/* Bumped when a module is unloaded or a stream or context destroyed, so no
 * thread keeps using a cached name pointer, stream or context that may now
 * denote something else. */
static _Atomic uint32_t mod_gen;

/* The per-thread caches missed (GMEMPROF_LOG=debug prints them at the
 * end): each is work a launch paid beyond a probe. */
static struct {
    _Atomic uint64_t lmiss_name, lmiss_func, lmiss_stream, lmiss_gen;
} M;

void gmp_launch_new_generation(void) { atomic_fetch_add_explicit(&mod_gen, 1, memory_order_release); }

void gmp_launch_log_misses(void)
{
    gmp_log_debug("launch mode: cache misses: %" PRIu64 " names sent, %" PRIu64 " functions queried, %" PRIu64
                  " stream lookups, %" PRIu64 " cache resets",
                  atomic_load(&M.lmiss_name), atomic_load(&M.lmiss_func), atomic_load(&M.lmiss_stream),
                  atomic_load(&M.lmiss_gen));
}

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
    atomic_fetch_add_explicit(&M.lmiss_stream, 1, memory_order_relaxed);
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
    atomic_fetch_add_explicit(&M.lmiss_name, 1, memory_order_relaxed);
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
        atomic_fetch_add_explicit(&M.lmiss_func, 1, memory_order_relaxed);
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

void gmp_launch_begin(gmp_tls *t, CUpti_CallbackId cbid, unsigned fam, const CUpti_CallbackData *cb)
{
    launch_forget(t); /* a launch whose EXIT never came (callbacks switched off meanwhile) */
    uint32_t gen = atomic_load_explicit(&mod_gen, memory_order_acquire);
    if (t->lgen != gen) {
        atomic_fetch_add_explicit(&M.lmiss_gen, 1, memory_order_relaxed);
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

void gmp_launch_end(gmp_tls *t, const CUpti_CallbackData *cb)
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

