/*
 * A fake libcupti.so.13 for the CPU end-to-end tests (see fake_cupti.h).
 * It implements the CUPTI functions libgmemprof.so calls, with CUPTI's
 * observable behaviour where the profiler depends on it: callbacks only for
 * enabled ids, activity records only for enabled kinds, buffers from the
 * client's bufferRequested and back through bufferCompleted, the dropped
 * count reset on read, one subscriber at a time.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cupti.h>

#include "fake_cupti.h"

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static struct {
    char conflict[128];
    int subscribed;
    CUpti_CallbackFunc cb;
    void *ud;
    uint8_t enabled[CUPTI_CB_DOMAIN_SIZE][1024];
    uint8_t kinds[64];
    size_t attrs[32];
    uint32_t attrs_set; /* bit a: attribute a was set */
    CUpti_BuffersCallbackRequestFunc req;
    CUpti_BuffersCallbackCompleteFunc done;
    CUpti_TimestampCallbackFunc tsfn;
    int block_flush;
    int blocked;
} F;

static _Atomic uint32_t next_corr = 1;
static _Atomic size_t dropped;
static _Atomic uint64_t emitted, completed, dropped_total;

/* ---- helpers ---- */

static size_t rec_size(CUpti_ActivityKind k)
{
    switch (k) {
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
        return sizeof(CUpti_ActivityMemoryPool3);
    default:
        return 0;
    }
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Activity buffers as CUPTI keeps them: one stream of buffers per thread
 * that records (CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, CUPTI's
 * default), or one stream for all threads when that attribute is 0. A flush
 * hands the per-thread streams back newest thread first, so with per-thread
 * buffers the records of two threads reach the client out of time order,
 * as CUPTI's can. */
typedef struct fstream {
    uint8_t *buf;
    size_t size, used;
    struct fstream *next; /* per-thread streams, newest first */
} fstream;
static fstream g_shared;
static fstream *g_streams;
static __thread fstream *t_stream;

static int per_thread_buffers(void)
{
    const int a = CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER;
    return (F.attrs_set >> a & 1u) ? F.attrs[a] != 0 : 1;
}

/* The calling thread's stream (mu held); NULL when out of memory. */
static fstream *stream_of_caller(void)
{
    if (!per_thread_buffers())
        return &g_shared;
    if (!t_stream && (t_stream = calloc(1, sizeof *t_stream)) != NULL) {
        t_stream->next = g_streams; /* reachable from the list after the thread ends */
        g_streams = t_stream;
    }
    return t_stream;
}

/* Hands a stream's current buffer back (mu held; the client's callback
 * takes its own locks, never ours). */
static void complete_locked(fstream *st)
{
    if (!st->buf)
        return;
    uint8_t *b = st->buf;
    size_t size = st->size, used = st->used;
    st->buf = NULL;
    st->size = st->used = 0;
    if (F.done)
        F.done(NULL, 0, b, size, used);
    atomic_fetch_add(&completed, 1);
}

static void append(const void *rec, size_t n)
{
    CUpti_ActivityKind kind = ((const CUpti_Activity *)rec)->kind;
    pthread_mutex_lock(&mu);
    fstream *st = stream_of_caller();
    if (!F.kinds[kind] || !F.req || !st) {
        pthread_mutex_unlock(&mu);
        return; /* kind off: CUPTI records nothing */
    }
    if (st->buf && st->used + align8(n) > st->size)
        complete_locked(st);
    if (!st->buf) {
        uint8_t *b = NULL;
        size_t size = 0, maxrec = 0;
        F.req(&b, &size, &maxrec);
        if (!b || size < align8(n)) {
            atomic_fetch_add(&dropped, 1);
            atomic_fetch_add(&dropped_total, 1);
            pthread_mutex_unlock(&mu);
            return;
        }
        st->buf = b;
        st->size = size;
        st->used = 0;
    }
    memcpy(st->buf + st->used, rec, n);
    st->used += align8(n);
    atomic_fetch_add(&emitted, 1);
    pthread_mutex_unlock(&mu);
}

/* Kernel names must outlive the records (CUPTI's do). */
static const char *keep_name(const char *s)
{
    static struct {
        char *s;
    } names[256];
    static int n;
    static pthread_mutex_t nmu = PTHREAD_MUTEX_INITIALIZER;
    if (!s)
        return NULL;
    pthread_mutex_lock(&nmu);
    for (int i = 0; i < n; i++)
        if (strcmp(names[i].s, s) == 0) {
            pthread_mutex_unlock(&nmu);
            return names[i].s;
        }
    const char *r = NULL;
    if (n < 256)
        r = names[n++].s = strdup(s);
    pthread_mutex_unlock(&nmu);
    return r;
}

/* A fork while another thread holds the lock must not leave the child with
 * a lock nobody will release (the fork test's child calls the fake). */
static void fork_prepare(void) { pthread_mutex_lock(&mu); }
static void fork_release(void) { pthread_mutex_unlock(&mu); }
__attribute__((constructor)) static void fake_init(void) { pthread_atfork(fork_prepare, fork_release, fork_release); }

/* ---- control API ---- */

EXPORT void fake_cupti_set_conflict(const char *other)
{
    pthread_mutex_lock(&mu);
    strncpy(F.conflict, other ? other : "", sizeof F.conflict - 1);
    pthread_mutex_unlock(&mu);
}

EXPORT void fake_cupti_set_dropped(size_t n)
{
    atomic_store(&dropped, n);
    atomic_fetch_add(&dropped_total, n);
}
EXPORT uint32_t fake_cupti_corr(void) { return atomic_fetch_add(&next_corr, 1); }

EXPORT uint64_t fake_cupti_now(void)
{
    if (F.tsfn)
        return F.tsfn();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

EXPORT int fake_cupti_subscribed(void) { return F.subscribed; }

EXPORT int fake_cupti_callback_enabled(int domain, uint32_t cbid)
{
    if (domain <= 0 || domain >= CUPTI_CB_DOMAIN_SIZE || cbid >= 1024)
        return 0;
    /* lock-free, like CUPTI's dispatch: the callback benchmark measures us, not a mutex */
    return __atomic_load_n(&F.enabled[domain][cbid], __ATOMIC_ACQUIRE);
}

EXPORT int fake_cupti_activity_enabled(int kind)
{
    if (kind < 0 || kind >= 64)
        return 0;
    pthread_mutex_lock(&mu);
    int e = F.kinds[kind];
    pthread_mutex_unlock(&mu);
    return e;
}

EXPORT size_t fake_cupti_attr(int attr)
{
    if (attr < 0 || attr >= 32)
        return 0;
    if (!(F.attrs_set >> attr & 1u) && attr == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER)
        return 1; /* CUPTI's default */
    return F.attrs[attr];
}

EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char **name);

static void api_cb(int domain, uint32_t cbid, uint32_t corr, const char *symbol, const void *params, int site,
                   int ret)
{
    CUpti_CallbackFunc cb = __atomic_load_n(&F.cb, __ATOMIC_ACQUIRE);
    if (!fake_cupti_callback_enabled(domain, cbid) || !cb)
        return;
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = (CUpti_ApiCallbackSite)site;
    d.functionName = "fake";
    if (cuptiGetCallbackName((CUpti_CallbackDomain)domain, cbid, &d.functionName) != CUPTI_SUCCESS)
        d.functionName = "fake"; /* CUPTI gives the API's name: the ones the tests look at */
    d.functionParams = params;
    d.functionReturnValue = &ret;
    d.symbolName = symbol;
    d.correlationId = corr;
    cb(F.ud, (CUpti_CallbackDomain)domain, cbid, &d);
}

EXPORT void fake_cupti_api_enter(int domain, uint32_t cbid, uint32_t corr, const char *symbol, const void *params)
{
    api_cb(domain, cbid, corr, symbol, params, CUPTI_API_ENTER, 0);
}

EXPORT void fake_cupti_api_exit(int domain, uint32_t cbid, uint32_t corr, const char *symbol, const void *params,
                                int ret)
{
    api_cb(domain, cbid, corr, symbol, params, CUPTI_API_EXIT, ret);
}

static void resource_cb(uint32_t cbid, int device)
{
    if (!fake_cupti_callback_enabled(CUPTI_CB_DOMAIN_RESOURCE, cbid) || !F.cb)
        return;
    CUpti_ResourceData r;
    memset(&r, 0, sizeof r);
    r.context = (CUcontext)(uintptr_t)(0x1000 + device);
    F.cb(F.ud, CUPTI_CB_DOMAIN_RESOURCE, cbid, &r);
}

EXPORT void *fake_cupti_context_created(int device)
{
    resource_cb(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, device);
    return (void *)(uintptr_t)(0x1000 + device);
}

EXPORT void fake_cupti_context_destroyed(int device)
{
    resource_cb(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, device);
}

EXPORT void fake_cupti_emit_memory2(int op, int mem_kind, uint32_t corr, uint64_t addr, uint64_t bytes,
                                    uint32_t device, uint32_t stream, int is_async, int pool_type, uint64_t ts)
{
    CUpti_ActivityMemory4 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    r.memoryOperationType = (CUpti_ActivityMemoryOperationType)op;
    r.memoryKind = (CUpti_ActivityMemoryKind)mem_kind;
    r.correlationId = corr;
    r.address = addr;
    r.bytes = bytes;
    r.timestamp = ts ? ts : fake_cupti_now();
    r.deviceId = device;
    r.streamId = stream;
    r.isAsync = (uint32_t)is_async;
    r.memoryPoolConfig.memoryPoolType = (CUpti_ActivityMemoryPoolType)pool_type;
    append(&r, sizeof r);
}

EXPORT void fake_cupti_emit_kernel(uint32_t corr, uint32_t device, uint32_t stream, const char *name,
                                   uint64_t start, uint64_t end)
{
    CUpti_ActivityKernel10 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    r.correlationId = corr;
    r.deviceId = device;
    r.streamId = stream;
    r.name = keep_name(name);
    r.start = start;
    r.end = end;
    r.gridX = 128;
    r.gridY = 2;
    r.gridZ = 1;
    r.blockX = 256;
    r.blockY = 1;
    r.blockZ = 1;
    r.registersPerThread = 32;
    r.staticSharedMemory = 1024;
    r.dynamicSharedMemory = 4096;
    r.localMemoryPerThread = 16;
    append(&r, sizeof r);
}

EXPORT void fake_cupti_emit_memcpy(uint32_t corr, uint32_t rt_corr, int copy_kind, uint64_t bytes,
                                   uint32_t device, uint32_t stream, uint64_t start, uint64_t end)
{
    CUpti_ActivityMemcpy6 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    r.copyKind = (uint8_t)copy_kind;
    r.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    r.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    r.bytes = bytes;
    r.start = start;
    r.end = end;
    r.deviceId = device;
    r.streamId = stream;
    r.correlationId = corr;
    r.runtimeCorrelationId = rt_corr;
    append(&r, sizeof r);
}

EXPORT void fake_cupti_emit_memset(uint32_t corr, uint32_t value, uint64_t bytes, uint32_t device,
                                   uint32_t stream, uint64_t start, uint64_t end)
{
    CUpti_ActivityMemset4 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    r.value = value;
    r.bytes = bytes;
    r.start = start;
    r.end = end;
    r.deviceId = device;
    r.streamId = stream;
    r.correlationId = corr;
    r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    append(&r, sizeof r);
}

EXPORT void fake_cupti_emit_pool(uint32_t corr, int op, uint64_t size)
{
    CUpti_ActivityMemoryPool3 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
    r.memoryPoolOperationType = (CUpti_ActivityMemoryPoolOperationType)op;
    r.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    r.correlationId = corr;
    r.size = size;
    r.timestamp = fake_cupti_now();
    append(&r, sizeof r);
}

EXPORT void fake_cupti_block_flush(int on)
{
    pthread_mutex_lock(&mu);
    F.block_flush = on;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

EXPORT int fake_cupti_flush_blocked(void)
{
    pthread_mutex_lock(&mu);
    int b = F.blocked;
    pthread_mutex_unlock(&mu);
    return b;
}

EXPORT uint64_t fake_cupti_records_emitted(void) { return atomic_load(&emitted); }
EXPORT uint64_t fake_cupti_buffers_completed(void) { return atomic_load(&completed); }
EXPORT uint64_t fake_cupti_records_dropped(void) { return atomic_load(&dropped_total); }

/* ---- the CUPTI API ---- */

static CUptiResult subscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud, char *old, size_t oldsz)
{
    if (!s)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&mu);
    if (F.conflict[0] || F.subscribed) {
        if (old && oldsz)
            strncpy(old, F.conflict[0] ? F.conflict : "CUPTI for another client", oldsz - 1);
        pthread_mutex_unlock(&mu);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    F.subscribed = 1;
    F.ud = ud;
    __atomic_store_n(&F.cb, cb, __ATOMIC_RELEASE);
    *s = (CUpti_SubscriberHandle)(uintptr_t)0x5ab;
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud)
{
    return subscribe(s, cb, ud, NULL, 0);
}

EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud,
                                     CUpti_SubscriberParams *p)
{
    if (p && p->structSize < CUpti_SubscriberParams_STRUCT_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    return subscribe(s, cb, ud, p ? p->oldSubscriberName : NULL, p ? p->oldSubscriberSize : 0);
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
    (void)s;
    pthread_mutex_lock(&mu);
    F.subscribed = 0;
    __atomic_store_n(&F.cb, (CUpti_CallbackFunc)NULL, __ATOMIC_RELEASE);
    for (int d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++)
        for (int i = 0; i < 1024; i++)
            __atomic_store_n(&F.enabled[d][i], (uint8_t)0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                                       CUpti_CallbackId cbid)
{
    (void)s;
    if (d <= 0 || d >= CUPTI_CB_DOMAIN_SIZE || cbid >= 1024)
        return CUPTI_ERROR_INVALID_PARAMETER;
    __atomic_store_n(&F.enabled[d][cbid], (uint8_t)(enable ? 1 : 0), __ATOMIC_RELEASE);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char **name)
{
    static const struct {
        int d;
        uint32_t cbid;
        const char *name;
    } names[] = {
#define N_RT(x) {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##x, #x}
#define N_DRV(x) {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##x, #x}
        N_RT(cudaMemcpy_v3020), N_RT(cudaMemcpyAsync_v3020), N_RT(cudaMemset_v3020), N_RT(cudaMalloc_v3020),
        N_DRV(cuMemcpyHtoD_v2), N_DRV(cuMemsetD8_v2), N_DRV(cuMemAlloc_v2),
        /* the copies scenario (launch mode's copies, e2e_copies.c) */
        N_RT(cudaMemcpy_ptds_v7000), N_RT(cudaMemsetAsync_ptsz_v7000), N_RT(cudaMemcpy3D_v3020),
        N_RT(cudaMemcpyBatchAsync_v13000), N_RT(cudaMemcpyToSymbol_v3020), N_DRV(cuMemcpyHtoDAsync_v2),
        N_DRV(cuMemcpyDtoH_v2_ptds), N_DRV(cuMemcpyPeerAsync), N_DRV(cuMemsetD32Async), N_DRV(cuMemcpy2DAsync_v2),
        N_DRV(cuMemcpy3D_v2), N_DRV(cuMemcpyBatchAsync_v2), N_DRV(cuMemsetD2D8_v2), N_DRV(cuMemcpyAtoH_v2),
#undef N_RT
#undef N_DRV
    };
    if (!name)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].d == (int)d && names[i].cbid == cbid) {
            *name = names[i].name;
            return CUPTI_SUCCESS;
        }
    return CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
    if ((int)k <= 0 || (int)k >= 64)
        return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&mu);
    F.kinds[k] = 1;
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
    if ((int)k <= 0 || (int)k >= 64)
        return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&mu);
    F.kinds[k] = 0;
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                  CUpti_BuffersCallbackCompleteFunc done)
{
    if (!req || !done)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&mu);
    F.req = req;
    F.done = done;
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    if (!fn)
        return CUPTI_ERROR_INVALID_PARAMETER;
    F.tsfn = fn;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    size_t off;
    if (!buffer || !record)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!*record) {
        off = 0;
    } else {
        size_t n = rec_size((*record)->kind);
        if (!n)
            return CUPTI_ERROR_INVALID_KIND;
        off = (size_t)((uint8_t *)*record - buffer) + align8(n);
    }
    if (off + sizeof(CUpti_Activity) > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    CUpti_Activity *r = (CUpti_Activity *)(buffer + off);
    if (!rec_size(r->kind) || off + rec_size(r->kind) > valid)
        return CUPTI_ERROR_INVALID_KIND;
    *record = r;
    return CUPTI_SUCCESS;
}

static _Atomic uint64_t forced_ts;

EXPORT uint64_t fake_cupti_forced_flush_ts(void) { return atomic_load(&forced_ts); }

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    const char *wait = getenv("E2E_FORCED_FLUSH_WAIT");
    uint64_t none = 0, now = fake_cupti_now();
    if ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) && wait && atomic_compare_exchange_strong(&forced_ts, &none, now)) {
        /* The first forced flush (the profiler's end) lets the program's
         * other threads make E2E_FORCED_FLUSH_WAIT more records first, all
         * after its start (profiler.e2e.exitload). */
        uint64_t until = atomic_load(&emitted) + strtoull(wait, NULL, 10);
        while (atomic_load(&emitted) < until)
            sched_yield();
    }
    pthread_mutex_lock(&mu);
    if (flag == 0 && F.block_flush) {
        F.blocked = 1;
        while (F.block_flush)
            pthread_cond_wait(&cv, &mu);
        F.blocked = 0;
    }
    for (fstream *st = g_streams; st; st = st->next)
        if (st->buf && st->used)
            complete_locked(st);
    if (g_shared.buf && g_shared.used)
        complete_locked(&g_shared);
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
    (void)ctx;
    (void)stream;
    if (!n)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *n = atomic_exchange(&dropped, 0);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute a, size_t *size, void *value)
{
    if (!size || !value || (int)a < 0 || (int)a >= 32)
        return CUPTI_ERROR_INVALID_PARAMETER;
    /* as CUPTI documents it: this one only before the buffer callbacks */
    if (a == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER && (F.req || *size != sizeof(uint8_t)))
        return CUPTI_ERROR_INVALID_OPERATION;
    size_t v = 0;
    memcpy(&v, value, *size < sizeof v ? *size : sizeof v);
    F.attrs[a] = v;
    F.attrs_set |= 1u << a;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
    if (!ts)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *ts = fake_cupti_now();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
    if (!v)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *v = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    if (!s)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *s = r == CUPTI_SUCCESS ? "CUPTI_SUCCESS"
         : r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
                                                               : "CUPTI_ERROR_UNKNOWN";
    return CUPTI_SUCCESS;
}

/* Stream ids as the fake numbers them: the legacy default stream is 7, the
 * per-thread one 8, any other handle its low 16 bits + 100. */
EXPORT CUptiResult cuptiGetStreamIdEx(CUcontext ctx, CUstream stream, uint8_t per_thread, uint32_t *id)
{
    (void)ctx;
    if (!id)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *id = stream ? (uint32_t)((uintptr_t)stream & 0xffff) + 100 : per_thread ? 8 : 7;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetDeviceId(CUcontext ctx, uint32_t *id)
{
    uintptr_t c = (uintptr_t)ctx;
    if (!id || c < 0x1000 || c >= 0x1000 + 64)
        return CUPTI_ERROR_INVALID_CONTEXT;
    *id = (uint32_t)(c - 0x1000);
    return CUPTI_SUCCESS;
}
