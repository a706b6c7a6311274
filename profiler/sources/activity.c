/*
 * CUPTI's side of the records: the subscription, the activity settings and
 * kinds, and the host buffer pool that CUPTI fills with activity records and
 * the writer empties (activity.h).
 *
 * CUPTI asks for a buffer (buf_requested) on whatever thread needs one and
 * hands it back full (buf_completed), usually on its own thread; the pool's
 * mutex guards the free list and the FIFO of completed buffers, never a
 * driver call. The writer takes completed buffers in order and gives them
 * back once read.
 */
#include "activity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices.h"
#include "gmp_rt.h"
#include "log.h"
#include "post.h"

static struct {
    CUpti_SubscriberHandle sub;
    _Atomic uint64_t dropped_cupti;   /* CUPTI's own drops */
    _Atomic uint64_t dropped_buffers; /* records in buffers we had to discard */
    _Atomic uint64_t buf_overbudget;  /* buffers handed out beyond the budget */
} A;

CUpti_SubscriberHandle gmp_activity_subscriber(void) { return A.sub; }

uint64_t gmp_activity_dropped_cupti(void) { return atomic_load(&A.dropped_cupti); }

uint64_t gmp_activity_dropped_buffers(void) { return atomic_load(&A.dropped_buffers); }

/* ---- the buffer pool ------------------------------------------------------ */

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
    _Atomic int accept; /* the writer takes completed buffers */
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
        atomic_fetch_add_explicit(&A.dropped_buffers, count_records(d.buf, d.valid),
                                  memory_order_relaxed);
        b = d.buf;
    }
    if (!b) {
        /* Every buffer is inside CUPTI or the writer: CUPTI must still get
         * one (older CUPTI crashes on NULL). Go over the budget, and say so
         * in the STATS (own_host_bytes). */
        if (posix_memalign((void **)&b, 8, bp.bufsize) == 0) {
            bp.allocated += bp.bufsize;
            atomic_fetch_add_explicit(&A.buf_overbudget, 1, memory_order_relaxed);
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

/* CUPTI's own drops (no buffer to put a record in) since the last read:
 * CUPTI resets its count on each read. */
static void take_cupti_dropped(CUcontext ctx, uint32_t stream)
{
    size_t n = 0;
    if (gmp_g.api.ActivityGetNumDroppedRecords &&
        gmp_g.api.ActivityGetNumDroppedRecords(ctx, stream, &n) == CUPTI_SUCCESS && n)
        atomic_fetch_add_explicit(&A.dropped_cupti, n, memory_order_relaxed);
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                   size_t valid)
{
    (void)size;
    if (atomic_load(&gmp_g.forked)) {
        free(buf); /* every buffer comes from posix_memalign */
        return;
    }
    take_cupti_dropped(ctx, stream);
    if (!buf)
        return;
    if (valid > 0 && atomic_load(&bp.accept)) {
        pthread_mutex_lock(&bp.mu);
        if (bp.done_n < bp.done_cap) {
            bp.done[(bp.done_head + bp.done_n) % bp.done_cap] = (gmp_done_buf){buf, valid};
            bp.done_n++;
            pthread_mutex_unlock(&bp.mu);
            gmp_wake();
            return;
        }
        pthread_mutex_unlock(&bp.mu);
    }
    /* The queue is full, or the writer takes no more buffers (not started,
     * or ending): this buffer's records are lost, and counted. */
    if (valid > 0)
        atomic_fetch_add_explicit(&A.dropped_buffers, count_records(buf, valid),
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

void gmp_bufq_accept(int on) { atomic_store(&bp.accept, on); }

void gmp_bufq_discard(uint8_t *buf, size_t valid)
{
    atomic_fetch_add_explicit(&A.dropped_buffers, count_records(buf, valid), memory_order_relaxed);
    gmp_bufq_release(buf);
}

/* The host budget (GMEMPROF_HOST_BUFFER_MB) covers the event ring, the
 * correlation table, the writer's staging area (together `fixed`) and the
 * CUPTI buffers; the buffers get what is left, at least two. */
int gmp_activity_setup_buffers(size_t budget, size_t fixed, size_t buf_bytes, char *err, size_t cap)
{
    size_t total = budget;
    bp.fixed = fixed;
    bp.bufsize = buf_bytes;
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

/* ---- subscription and settings -------------------------------------------- */

int gmp_activity_subscribe(CUpti_CallbackFunc cb, char *err, size_t cap)
{
    char buf[96];
    CUptiResult r;
    char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 2];
    other[0] = '\0';
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
        r = gmp_g.api.Subscribe_v2(&A.sub, cb, NULL, &p);
        other[sizeof other - 1] = '\0';
    }
    if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        r = gmp_g.api.Subscribe(&A.sub, cb, NULL);
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

void gmp_activity_unsubscribe(void)
{
    if (A.sub && gmp_g.api.Unsubscribe) {
        gmp_g.api.Unsubscribe(A.sub);
        A.sub = NULL;
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

static uint64_t CUPTIAPI gmp_cupti_timestamp(void) { return gmp_now(); }


/* Before any context exists (InitializeInjection runs inside cuInit): the
 * device buffer settings only apply to contexts created afterwards. */
int gmp_activity_enable(size_t devbuf_bytes, char *err, size_t cap)
{
    char buf[96];
    CUptiResult r;
    /* CUPTI's device buffers live in GPU memory (3.2 MB each, 3 per context
     * pre-allocated, up to 250 by default): small, 2 pre-allocated, and a
     * pool limit that keeps the total at 16 MiB per context. */
    size_t devbuf_prealloc = 2;
    size_t limit = (16u << 20) / devbuf_bytes;
    if (limit < devbuf_prealloc + 1)
        limit = devbuf_prealloc + 1;
    set_attr(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, devbuf_bytes, "device buffer size");
    set_attr(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, limit, "device buffer pool limit");
    set_attr(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, devbuf_prealloc,
             "device buffer pre-allocation");
    gmp_devices_set_context_bytes((uint64_t)(devbuf_bytes * devbuf_prealloc));
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
    return 0;
}

static const CUpti_ActivityKind collect_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
};

void gmp_activity_collect(int on, unsigned mask)
{
    for (size_t i = 0; i < sizeof collect_kinds / sizeof collect_kinds[0]; i++) {
        if (!(mask & (1u << i)))
            continue;
        CUptiResult r = on ? gmp_g.api.ActivityEnable(collect_kinds[i])
                           : gmp_g.api.ActivityDisable(collect_kinds[i]);
        if (r != CUPTI_SUCCESS) {
            char buf[96];
            gmp_log_debug("cannot %s activity kind %d: %s", on ? "enable" : "disable",
                          (int)collect_kinds[i], gmp_cuapi_strerror(&gmp_g.api, r, buf, sizeof buf));
        }
    }
}

void gmp_activity_flush_forced(void)
{
    if (!gmp_on() || !A.sub)
        return;
    gmp_g.api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    /* Drops since the last completed buffer: read here too, or those of the
     * run's tail (no buffer completes after them) would go uncounted. */
    take_cupti_dropped(NULL, 0);
}

void gmp_activity_flush_completed(void)
{
    if (gmp_on() && A.sub)
        gmp_g.api.ActivityFlushAll(0);
}
