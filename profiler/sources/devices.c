/*
 * Devices: the contexts the program created (one per device is enough to ask
 * the driver), each device's properties, and driver memory samples
 * (cuMemGetInfo) taken now or as a snapshot kept for the writer.
 *
 * Threads: gmp_devices_add/forget and the sampling pause run in CUPTI's
 * callbacks on application threads; gmp_devices_query on the writer;
 * gmp_devices_meminfo and the snapshots on either.
 */
#include "devices.h"

#include <stddef.h>
#include <string.h>
#include <time.h>

#include "gmp_rt.h"
#include "post.h"

static struct {
    pthread_mutex_t lock;       /* the context pointers only */
    gmp_devinfo dev[GMP_MAX_DEVICES];
    pthread_mutex_t snap_lock;
    uint64_t snap_next;
    gmp_snap snaps[GMP_SNAPS];
    _Atomic uint64_t per_context_bytes; /* CUPTI's device buffers per context (activity.c) */
    _Atomic uint64_t own_device_bytes;
} D = {.lock = PTHREAD_MUTEX_INITIALIZER, .snap_lock = PTHREAD_MUTEX_INITIALIZER};

void gmp_devices_set_context_bytes(uint64_t bytes) { atomic_store(&D.per_context_bytes, bytes); }

uint64_t gmp_devices_own_bytes(void) { return atomic_load(&D.own_device_bytes); }

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

void gmp_devices_pause_sampling(void)
{
    atomic_fetch_add(&g_sample_pause, 1);
    for (int i = 0; i < 100000 && atomic_load(&g_samplers) > 0; i++) {
        struct timespec ts = {0, 10000};
        nanosleep(&ts, NULL); /* bounded: 1 s at most, then go on regardless */
    }
}

void gmp_devices_resume_sampling(void) { atomic_fetch_sub(&g_sample_pause, 1); }

/* Context created (resource callback, inside the driver): note the device
 * and its context; the writer queries the device's properties. */
void gmp_devices_add(CUcontext ctx)
{
    uint32_t id = 0;
    atomic_store(&gmp_g.ctx_seen, 1);
    if (!gmp_g.api.GetDeviceId || gmp_g.api.GetDeviceId(ctx, &id) != CUPTI_SUCCESS)
        return;
    atomic_fetch_add(&D.own_device_bytes, atomic_load(&D.per_context_bytes));
    if (id >= GMP_MAX_DEVICES)
        return;
    pthread_mutex_lock(&D.lock);
    int first = D.dev[id].ctx == NULL && !atomic_load(&D.dev[id].ready);
    if (!D.dev[id].ctx)
        D.dev[id].ctx = ctx;
    pthread_mutex_unlock(&D.lock);
    if (!first)
        return;
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name));
    ev.type = GMP_EV_DEVICE;
    ev.a = id;
    gmp_post(&ev);
    gmp_wake();
}

void gmp_devices_forget(CUcontext ctx)
{
    pthread_mutex_lock(&D.lock);
    for (unsigned i = 0; i < GMP_MAX_DEVICES; i++)
        if (D.dev[i].ctx == ctx)
            D.dev[i].ctx = NULL;
    pthread_mutex_unlock(&D.lock);
}

/* The writer, when it handles the device's event: name, memory, SMs,
 * compute capability (no context needed for these). */
const gmp_devinfo *gmp_devices_query(unsigned id)
{
    gmp_devinfo *d = &D.dev[id];
    CUdevice dev = (CUdevice)id;
    int v = 0;
    size_t total = 0;
    if (id >= GMP_MAX_DEVICES)
        return NULL;
    if (atomic_load(&d->ready))
        return d;
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
    return d;
}

int gmp_devices_meminfo(unsigned dev, uint64_t *free_b, uint64_t *total_b)
{
    int rc = -1;
    if (dev >= GMP_MAX_DEVICES || !gmp_g.api.MemGetInfo)
        return -1;
    atomic_fetch_add(&g_samplers, 1);
    if (atomic_load(&g_sample_pause) == 0) {
        pthread_mutex_lock(&D.lock);
        CUcontext ctx = D.dev[dev].ctx;
        pthread_mutex_unlock(&D.lock);
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
    pthread_mutex_lock(&D.lock);
    for (unsigned d = 0; d < GMP_MAX_DEVICES; d++)
        if (D.dev[d].ctx)
            with_ctx |= (uint64_t)1 << d;
    pthread_mutex_unlock(&D.lock);
    s.mask = 0;
    for (unsigned d = 0; d < GMP_MAX_DEVICES; d++) {
        if ((with_ctx >> d & 1) && gmp_devices_meminfo(d, &s.free_b[d], &s.total_b[d]) == 0)
            s.mask |= (uint64_t)1 << d;
    }
    if (!s.mask)
        return 0;
    s.ts = gmp_now();
    pthread_mutex_lock(&D.snap_lock);
    s.ticket = ++D.snap_next;
    D.snaps[s.ticket % GMP_SNAPS] = s;
    pthread_mutex_unlock(&D.snap_lock);
    return s.ticket;
}

int gmp_snapshot_get(uint64_t ticket, gmp_snap *out)
{
    int ok = 0;
    if (!ticket)
        return 0;
    pthread_mutex_lock(&D.snap_lock);
    if (D.snaps[ticket % GMP_SNAPS].ticket == ticket) {
        *out = D.snaps[ticket % GMP_SNAPS];
        ok = 1;
    }
    pthread_mutex_unlock(&D.snap_lock);
    return ok;
}
