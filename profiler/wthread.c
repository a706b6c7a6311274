/*
 * The writer thread: the only thread that touches the trace writer, the
 * string table and the live-allocation table.
 *
 * Inputs, in one loop:
 *   - the event ring (NVTX ranges/marks, tags, devices, VMM notices, syncs),
 *   - the schedule epochs (gmp_g.epochs, published by whoever made a step),
 *   - completed CUPTI buffers (the buffer queue of collect.c).
 * Each round it pops the ring FIRST, then reads the epochs, then takes the
 * buffers. Whoever wants a record to be ordered before an event (a tag, a
 * window edge) does a forced CUPTI flush before publishing it, so the
 * buffers with those records are already queued when the writer sees the
 * event.
 *
 * Ordering rule: every API call and every event is stamped with the
 * schedule epoch it was made in. Activity records are joined with their API
 * call through the correlation table (epoch, thread, launch seq, range) and
 * staged; the round then merges staged records (sorted by epoch, then
 * timestamp) with the ring events (ring order) and applies each transition
 * once everything of the epochs before it is out. So the baseline at a
 * window begin holds exactly the allocations made before the step call, and
 * a record is in a window iff the epoch of its API call is; a record that
 * arrives late still lands in the step it belongs to.
 *
 * What is written:
 *   HEADER first; DEVICE when a device is first seen; STRING on first use.
 *   ALLOC/FREE (any epoch updates the live table; written when the epoch is
 *   in an active window). KERNEL/MEMCPY/MEMSET in ACTIVE epochs only (WARMUP
 *   ones are collected so the window starts warm, then discarded). RANGE_*
 *   and MARK inside windows; each window begins with WINDOW_BEGIN, the
 *   baseline ALLOC records (GMT_MEMF_BASELINE) and a RANGE_BEGIN for every
 *   range still open, and ends with WINDOW_END and a frame end. STEP and
 *   MEMSAMPLE at every schedule transition, TAG (+ MEMSAMPLE) at every tag,
 *   MEMSAMPLE every GMEMPROF_SAMPLE_MS inside windows, STATS at every frame
 *   end, TRAILER last.
 *   Kernel records complete on the GPU after their launch: those of a
 *   window's last step can come after its WINDOW_END (they carry their step).
 *   An ALLOC/FREE whose window is already closed is not written (the forced
 *   flush at the edge makes this rare: a call racing the step on another
 *   thread); it still updates the live table.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gmp_rt.h"
#include "torch.h"
#include "torch_bridge.h"
#include "gmt_io.h"
#include "live.h"
#include "summary.h"

GMP_HIDDEN void gmp_post_rearm(void);
GMP_HIDDEN size_t gmp_writer_staging_bytes(void);

/* ---- staged activity records ------------------------------------------------ */

typedef struct staged {
    uint64_t ts;
    uint32_t epoch;
    uint8_t type; /* GMT_REC_ALLOC/FREE/KERNEL/MEMCPY/MEMSET */
    uint8_t matched;
    uint8_t fam;
    uint8_t is_async;
    uint8_t pool_type;
    const char *kname; /* KERNEL: CUPTI's name (stable for the kernel's life) */
    union {
        gmt_mem m;
        gmt_kernel k;
        gmt_copy c;
    } u;
} staged;

typedef struct vrange {
    uint64_t base, size;
    uint32_t tid, epoch;
    uint64_t range, seq;
} vrange;

typedef struct open_range {
    uint64_t id; /* 0: empty slot */
    uint64_t tid, parent, name, ts;
} open_range;

#define KCACHE 1024
#define EV_BATCH 4096

static struct {
    gmt_writer *w;
    gmt_strtab *strtab;
    gmp_live *live;
    /* The framework allocator's view (GMP_EV_BLOCK): live blocks, segments,
     * and per device the bytes mapped into expandable segments. */
    gmp_live *blocks, *segs;
    uint64_t mapped[GMP_MAX_DEVICES];
    int fw_seen;
    /* per device, an ALLOC waiting for its size (emit_counted) */
    gmt_block held[GMP_MAX_DEVICES];
    uint64_t held_base[GMP_MAX_DEVICES], held_freed[GMP_MAX_DEVICES];
    uint32_t held_epoch[GMP_MAX_DEVICES];
    uint8_t held_on[GMP_MAX_DEVICES];
    uint64_t block_events, ooms;
    pthread_t th;
    _Atomic int running;
    _Atomic int finish_req; /* reason + 1 */
    _Atomic int finish_sig; /* signal number */
    _Atomic int finished;
    int done_pipe[2];
    _Atomic uint64_t sync_ticket;
    _Atomic uint64_t sync_done;

    gmp_epoch_info hist[GMP_EPOCH_HIST];
    uint32_t next_epoch; /* next transition to apply */
    uint32_t known;      /* newest epoch copied into hist */
    uint32_t safe;       /* newest epoch whose earlier events have all been popped (round_once) */
    int have_epochs;

    int win_open;
    uint64_t win_index;
    uint64_t windows;
    uint64_t cur_step;
    int cur_phase;

    staged *st;
    size_t nst, cap_st;
    uint64_t horizon; /* trace time just before this round popped the ring */
    gmp_ev *evs;
    size_t nev;

    vrange *res;
    size_t nres, capres;
    vrange *maps; /* sorted by base */
    size_t nmaps, capmaps;
    vrange unmapped[64]; /* recent cuMemUnmap calls, for release records without an id */
    unsigned nunmapped;

    open_range *open;
    size_t open_cap, open_n;

    struct {
        const char *p;
        uint64_t id;
    } kcache[KCACHE];
    uint8_t dev_written[GMP_MAX_DEVICES];

    /* Launch mode: (symbolName pointer, module generation) -> string id.
     * Open addressing; never shrinks (a thread sends a name only once). */
    struct lname {
        uint64_t key; /* 0: empty */
        uint32_t gen;
        uint64_t id;
    } *lmap;
    size_t lmap_cap, lmap_n;
    uint64_t launch_noname; /* launch events whose name was not known (should stay 0) */

    /* Finishing for a signal: the interrupted thread may hold step_lock or
     * dev_lock (it can be inside a step call or a context callback), so the
     * writer takes them only with trylock and skips what it cannot get. */
    int sig_mode;
    uint64_t unmatched, late_mem, bad_records, pool_records, lost_epochs, live_replaced;
    uint64_t frame_records;
    int io_error;
    uint64_t last_frame_ns, last_sample_ns, last_flush_ns;
    uint64_t summary_bytes, summary_records, summary_dropped;
    int summary_status_ok;
} W = {.done_pipe = {-1, -1}};

size_t gmp_writer_staging_bytes(void)
{
    size_t total = (size_t)gmp_g.cfg.host_buffer_mb << 20;
    size_t n = total / 16 / sizeof(staged);
    if (n < 4096)
        n = 4096;
    if (n > 65536)
        n = 65536;
    return n * sizeof(staged) + EV_BATCH * sizeof(gmp_ev);
}

static inline uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- output -------------------------------------------------------------- */

static void report_io_error(void)
{
    if (W.io_error)
        return;
    W.io_error = 1;
    int e = gmt_writer_errno(W.w);
    gmp_log_error("writing the trace %s failed: %s; the rest of this run is counted as dropped records",
                  gmp_g.path, e ? strerror(e) : "compression error");
}

static void put(const gmt_record *r)
{
    if (gmt_writer_put(W.w, r) != GMT_OK)
        report_io_error();
    W.frame_records++;
}

static uint64_t intern(const char *s, size_t n)
{
    uint64_t id = 0;
    if (n > GMT_MAX_STRING)
        n = GMT_MAX_STRING;
    if (gmt_writer_intern(W.w, W.strtab, s, n, &id) != GMT_OK)
        report_io_error();
    return id;
}

static uint64_t kernel_name_id(const char *p)
{
    if (!p)
        return 0;
    size_t h = ((uintptr_t)p >> 4) & (KCACHE - 1);
    if (W.kcache[h].p == p)
        return W.kcache[h].id;
    uint64_t id = intern(p, strlen(p));
    W.kcache[h].p = p;
    W.kcache[h].id = id;
    return id;
}

static size_t lmap_slot(const struct lname *m, size_t cap, uint64_t key, uint32_t gen)
{
    uint64_t h = (key ^ ((uint64_t)gen << 32)) * 0x9e3779b97f4a7c15ull;
    size_t i = (size_t)(h >> 32) & (cap - 1);
    while (m[i].key && !(m[i].key == key && m[i].gen == gen))
        i = (i + 1) & (cap - 1);
    return i;
}

static void lmap_put(uint64_t key, uint32_t gen, uint64_t id)
{
    if ((W.lmap_n + 1) * 2 > W.lmap_cap) {
        size_t cap = W.lmap_cap ? W.lmap_cap * 2 : 1024;
        struct lname *m = calloc(cap, sizeof *m);
        if (!m)
            return; /* the name of this kernel is then unknown: counted at use */
        for (size_t i = 0; i < W.lmap_cap; i++)
            if (W.lmap[i].key)
                m[lmap_slot(m, cap, W.lmap[i].key, W.lmap[i].gen)] = W.lmap[i];
        free(W.lmap);
        W.lmap = m;
        W.lmap_cap = cap;
    }
    size_t i = lmap_slot(W.lmap, W.lmap_cap, key, gen);
    if (!W.lmap[i].key)
        W.lmap_n++;
    W.lmap[i] = (struct lname){key, gen, id};
}

/* The string id of a launch event's kernel: the name it carries (interned
 * and remembered under its key), else the one remembered. The key is a
 * pointer value in the application: never dereferenced here. Frees the
 * event's heap copy. */
static uint64_t launch_name_id(gmp_ev *ev)
{
    gmp_ev_launch *l = &ev->launch;
    uint64_t id = 0;
    if (!l->key)
        return 0;
    if (l->heap || l->nlen) {
        const char *p = l->heap ? l->heap : l->name;
        id = intern(p, l->heap ? strlen(l->heap) : l->nlen);
        free(l->heap);
        l->heap = NULL;
        l->nlen = 0;
        lmap_put(l->key, l->gen, id);
        return id;
    }
    if (W.lmap_cap) {
        size_t i = lmap_slot(W.lmap, W.lmap_cap, l->key, l->gen);
        if (W.lmap[i].key)
            return W.lmap[i].id;
    }
    W.launch_noname++;
    return 0;
}

static void end_frame(void)
{
    if (gmt_writer_end_frame(W.w) != GMT_OK)
        report_io_error();
    W.frame_records = 0;
    W.last_frame_ns = mono_ns();
}

static uint64_t writer_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t dropped_writer(void)
{
    return atomic_load(&gmp_g.ring.dropped) + atomic_load(&gmp_g.dropped_buffers) +
           gmt_writer_dropped(W.w) + W.bad_records;
}

static void put_stats(void)
{
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.stats + 16);
    r.type = GMT_REC_STATS;
    gmt_stats *s = &r.u.stats;
    s->ts = gmp_now();
    s->records_written = gmt_writer_records(W.w) + 1; /* this one included */
    s->dropped_cupti = atomic_load(&gmp_g.dropped_cupti);
    s->dropped_writer = dropped_writer();
    s->host_time_ns = writer_cpu_ns() + atomic_load(&gmp_g.cb_time_ns);
    s->own_device_bytes = atomic_load(&gmp_g.own_device_bytes);
    s->own_host_bytes = gmp_bufq_host_bytes() + gmp_live_footprint(W.live) +
                        (W.fw_seen ? gmp_live_footprint(W.blocks) + gmp_live_footprint(W.segs) : 0) +
                        W.open_cap * sizeof(open_range) + (W.capres + W.capmaps) * sizeof(vrange);
    s->bytes_written = gmt_writer_bytes_out(W.w);
    s->unmatched_corr = W.unmatched;
    put(&r);
}

/* ---- epochs -------------------------------------------------------------- */

static void pull_epochs(void)
{
    uint32_t cur = atomic_load_explicit(&gmp_g.epoch, memory_order_acquire);
    if (W.have_epochs && cur == W.known)
        return;
    if (W.sig_mode) {
        if (pthread_mutex_trylock(&gmp_g.step_lock) != 0)
            return;
    } else {
        pthread_mutex_lock(&gmp_g.step_lock);
    }
    cur = atomic_load_explicit(&gmp_g.epoch, memory_order_relaxed);
    uint32_t from = W.have_epochs ? W.known + 1 : 0;
    if (cur - from >= GMP_EPOCH_HIST - 1) {
        /* The writer fell more than the history behind: the oldest
         * transitions are gone. Skip to what is left (counted). */
        uint32_t nf = cur - (GMP_EPOCH_HIST - 2);
        W.lost_epochs += nf - from;
        from = nf;
        if (W.next_epoch < from)
            W.next_epoch = from;
    }
    for (uint32_t e = from; e != cur + 1; e++)
        W.hist[e % GMP_EPOCH_HIST] = gmp_g.epochs[e % GMP_EPOCH_HIST];
    pthread_mutex_unlock(&gmp_g.step_lock);
    W.known = cur;
    W.have_epochs = 1;
}

static const gmp_epoch_info *epinfo(uint32_t e)
{
    if (!W.have_epochs)
        return NULL;
    if ((int32_t)(e - W.known) > 0)
        e = W.known;
    const gmp_epoch_info *i = &W.hist[e % GMP_EPOCH_HIST];
    return i->epoch == e ? i : NULL;
}

/* The epoch a record without an API callback belongs to: the last
 * transition at or before its time. */
static uint32_t epoch_by_ts(uint64_t ts)
{
    if (!W.have_epochs)
        return 0;
    uint32_t e = W.known;
    for (uint32_t n = 0; n < GMP_EPOCH_HIST - 1; n++, e--) {
        const gmp_epoch_info *i = &W.hist[e % GMP_EPOCH_HIST];
        if (i->epoch != e)
            return e + 1;
        if (i->ts <= ts || e == 0)
            return e;
    }
    return e;
}

static int in_window(const gmp_epoch_info *i)
{
    return i && i->in_window && i->phase == GMT_PHASE_ACTIVE;
}

/* ---- VMM address ranges -------------------------------------------------- */

static void vr_add(vrange **a, size_t *n, size_t *cap, const vrange *v, int sorted)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        vrange *p = realloc(*a, nc * sizeof *p);
        if (!p)
            return;
        *a = p;
        *cap = nc;
    }
    size_t i = *n;
    if (sorted) {
        size_t lo = 0, hi = *n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if ((*a)[mid].base < v->base)
                lo = mid + 1;
            else
                hi = mid;
        }
        i = lo;
        if (i < *n && (*a)[i].base == v->base) {
            (*a)[i] = *v; /* remapped at the same address */
            return;
        }
        memmove(*a + i + 1, *a + i, (*n - i) * sizeof **a);
    }
    (*a)[i] = *v;
    (*n)++;
}

static void vr_remove(vrange *a, size_t *n, uint64_t base)
{
    for (size_t i = 0; i < *n; i++)
        if (a[i].base == base) {
            memmove(a + i, a + i + 1, (*n - i - 1) * sizeof *a);
            (*n)--;
            return;
        }
}

static const vrange *map_find(uint64_t addr)
{
    size_t lo = 0, hi = W.nmaps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (W.maps[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const vrange *v = &W.maps[lo - 1];
    return addr - v->base < v->size ? v : NULL;
}

/* The latest cuMemUnmap that covered addr (a release record without a
 * correlation id is attributed to it). */
static const vrange *unmap_find(uint64_t addr)
{
    unsigned n = W.nunmapped < 64 ? W.nunmapped : 64;
    for (unsigned k = 0; k < n; k++) {
        const vrange *v = &W.unmapped[(W.nunmapped - 1 - k) % 64];
        if (addr - v->base < v->size)
            return v;
    }
    return NULL;
}

static int in_reserved(uint64_t addr)
{
    for (size_t i = 0; i < W.nres; i++)
        if (addr - W.res[i].base < W.res[i].size)
            return 1;
    return map_find(addr) != NULL;
}

/* ---- open NVTX ranges (for the RANGE_BEGINs at a window begin) ----------- */

#define OPEN_MAX (1u << 20)

static open_range *open_slot(uint64_t id)
{
    size_t m = W.open_cap - 1, i = (size_t)(id * 0x9E3779B97F4A7C15ull) & m;
    while (W.open[i].id && W.open[i].id != id)
        i = (i + 1) & m;
    return &W.open[i];
}

static void open_insert(const open_range *r)
{
    if ((W.open_n + 1) * 2 > W.open_cap) {
        if (W.open_cap >= OPEN_MAX)
            return; /* a program that never pops: stop tracking new ones */
        size_t oc = W.open_cap, nc = oc ? oc * 2 : 1024;
        open_range *old = W.open, *p = calloc(nc, sizeof *p);
        if (!p)
            return;
        W.open = p;
        W.open_cap = nc;
        for (size_t i = 0; i < oc; i++)
            if (old[i].id)
                *open_slot(old[i].id) = old[i];
        free(old);
    }
    open_range *s = open_slot(r->id);
    if (!s->id)
        W.open_n++;
    *s = *r;
}

static int open_remove(uint64_t id, open_range *out)
{
    if (!W.open_cap)
        return 0;
    size_t m = W.open_cap - 1, i = (size_t)(id * 0x9E3779B97F4A7C15ull) & m;
    while (W.open[i].id && W.open[i].id != id)
        i = (i + 1) & m;
    if (!W.open[i].id)
        return 0;
    *out = W.open[i];
    /* backward-shift deletion keeps probe chains intact */
    size_t j = i;
    for (;;) {
        W.open[i].id = 0;
        for (;;) {
            j = (j + 1) & m;
            if (!W.open[j].id)
                return 1;
            size_t k = (size_t)(W.open[j].id * 0x9E3779B97F4A7C15ull) & m;
            if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
                continue;
            W.open[i] = W.open[j];
            i = j;
            break;
        }
    }
}

/* ---- devices and samples ------------------------------------------------- */

static void put_device(unsigned d)
{
    if (d >= GMP_MAX_DEVICES)
        return;
    const gmp_devinfo *i = &gmp_g.dev[d];
    if (W.dev_written[d])
        return;
    gmp_device_query(d);
    W.dev_written[d] = 1;
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.device + 16);
    r.type = GMT_REC_DEVICE;
    r.u.device.device = d;
    r.u.device.total_mem = i->total_mem;
    r.u.device.sm_count = i->sm_count;
    r.u.device.cc_major = i->cc_major;
    r.u.device.cc_minor = i->cc_minor;
    memcpy(r.u.device.uuid, i->uuid, 16);
    r.u.device.name.ptr = i->name;
    r.u.device.name.len = (uint32_t)strnlen(i->name, sizeof i->name);
    put(&r);
}

/* One MEMSAMPLE per device: from the snapshot taken at the event when it
 * is still there, else sampled now. */
static void sample_devices_at(uint64_t ticket)
{
    gmp_snap sn;
    if (W.sig_mode)
        return; /* the driver and our locks may be held by the interrupted thread */
    int have = gmp_snapshot_get(ticket, &sn);
    for (unsigned d = 0; d < GMP_MAX_DEVICES; d++) {
        uint64_t f, t, ts;
        if (!W.dev_written[d])
            continue;
        if (have && (sn.mask >> d & 1)) {
            f = sn.free_b[d];
            t = sn.total_b[d];
            ts = sn.ts;
        } else if (gmp_device_meminfo(d, &f, &t) == 0) {
            ts = gmp_now();
        } else {
            continue;
        }
        gmt_record r;
        memset(&r, 0, sizeof r.type + sizeof r.u.sample + 16);
        r.type = GMT_REC_MEMSAMPLE;
        r.u.sample.ts = ts;
        r.u.sample.device = d;
        r.u.sample.used = t >= f ? t - f : 0;
        r.u.sample.free_ = f;
        r.u.sample.total = t;
        put(&r);
    }
    W.last_sample_ns = mono_ns();
}

static void sample_devices(void) { sample_devices_at(0); }

/* ---- windows ------------------------------------------------------------- */

static int cmp_mem(const void *a, const void *b)
{
    const gmt_mem *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->address < y->address ? -1 : x->address > y->address;
}

typedef struct collect_ctx {
    gmt_mem *a;
    size_t n, cap;
    uint64_t bytes;
} collect_ctx;

static int collect_live(const gmt_mem *m, void *vctx)
{
    collect_ctx *c = vctx;
    if (c->n < c->cap)
        c->a[c->n++] = *m;
    c->bytes += m->bytes;
    return 0;
}

static int cmp_open(const void *a, const void *b)
{
    const open_range *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* A block or segment of the live tables as its BLOCK record. */
static void put_block_mem(const gmt_mem *m, unsigned action, uint64_t flags)
{
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.block + 16);
    r.type = GMT_REC_BLOCK;
    r.u.block = (gmt_block){ .ts = m->ts, .action = action, .device = m->device, .address = m->address,
                             .bytes = m->bytes, .stream = m->stream, .tid = m->tid, .range = m->range,
                             .seq = m->seq, .step = m->step, .flags = m->flags | flags, .pool = m->corr,
                             .requested = m->source };
    put(&r);
}

static void put_live_sorted(gmp_live *t, unsigned action)
{
    collect_ctx c = {NULL, 0, gmp_live_count(t), 0};
    c.a = c.cap ? malloc(c.cap * sizeof *c.a) : NULL;
    if (!c.a)
        c.cap = 0;
    gmp_live_foreach(t, collect_live, &c);
    if (c.n > 1)
        qsort(c.a, c.n, sizeof *c.a, cmp_mem);
    for (size_t i = 0; i < c.n; i++)
        put_block_mem(&c.a[i], action, GMT_BLKF_BASELINE);
    free(c.a);
}

/* The framework's part of a window's baseline, after the CUPTI one: its
 * segments, the bytes mapped into expandable segments (one SEGMENT_MAP per
 * device at address 0), then its live blocks. */
static void block_baseline(uint64_t step)
{
    put_live_sorted(W.segs, GMT_BLK_SEGMENT_ALLOC);
    for (unsigned d = 0; d < GMP_MAX_DEVICES; d++) {
        if (!W.mapped[d])
            continue;
        gmt_mem m = {.ts = gmp_now(), .device = d, .bytes = W.mapped[d], .step = step};
        put_block_mem(&m, GMT_BLK_SEGMENT_MAP, GMT_BLKF_BASELINE);
    }
    put_live_sorted(W.blocks, GMT_BLK_ALLOC);
}

static void window_begin(const gmp_epoch_info *e)
{
    end_frame(); /* a window starts a fresh frame: it decodes on its own */
    collect_ctx c = {NULL, 0, gmp_live_count(W.live), 0};
    c.a = c.cap ? malloc(c.cap * sizeof *c.a) : NULL;
    if (!c.a)
        c.cap = 0;
    gmp_live_foreach(W.live, collect_live, &c);
    if (c.n > 1)
        qsort(c.a, c.n, sizeof *c.a, cmp_mem);
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.wbegin + 16);
    r.type = GMT_REC_WINDOW_BEGIN;
    r.u.wbegin.ts = e->ts;
    r.u.wbegin.window = e->window ? e->window - 1 : 0;
    r.u.wbegin.step = e->step;
    r.u.wbegin.baseline_count = c.n;
    r.u.wbegin.baseline_bytes = c.bytes;
    put(&r);
    for (size_t i = 0; i < c.n; i++) {
        gmt_record a;
        memset(&a, 0, sizeof a.type + sizeof a.u.mem + 16);
        a.type = GMT_REC_ALLOC;
        a.u.mem = c.a[i];
        a.u.mem.flags |= GMT_MEMF_BASELINE;
        put(&a);
    }
    free(c.a);
    if (W.fw_seen)
        block_baseline(e->step);
    /* The NVTX ranges open at this moment, outermost first (ids grow). */
    if (W.open_n) {
        open_range *o = malloc(W.open_n * sizeof *o);
        size_t n = 0;
        for (size_t i = 0; o && i < W.open_cap; i++)
            if (W.open[i].id)
                o[n++] = W.open[i];
        if (o) {
            qsort(o, n, sizeof *o, cmp_open);
            for (size_t i = 0; i < n; i++) {
                gmt_record b;
                memset(&b, 0, sizeof b.type + sizeof b.u.range + 16);
                b.type = GMT_REC_RANGE_BEGIN;
                b.u.range.ts = o[i].ts;
                b.u.range.tid = o[i].tid;
                b.u.range.id = o[i].id;
                b.u.range.parent = o[i].parent;
                b.u.range.name = o[i].name;
                put(&b);
            }
            free(o);
        }
    }
    W.win_open = 1;
    W.win_index = r.u.wbegin.window;
    W.windows++;
}

static void window_end(uint64_t ts, int reason)
{
    if (!W.win_open)
        return;
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.wend + 16);
    r.type = GMT_REC_WINDOW_END;
    r.u.wend.ts = ts;
    r.u.wend.window = W.win_index;
    r.u.wend.step = W.cur_step;
    r.u.wend.reason = (uint64_t)reason;
    put(&r);
    W.win_open = 0;
    put_stats();
    end_frame();
}

static void apply_epoch(const gmp_epoch_info *e)
{
    if ((e->ev & GMP_SCHED_EV_WINDOW_END) && W.win_open)
        window_end(e->ts, GMT_WEND_SCHEDULE);
    if (e->ev & GMP_SCHED_EV_WINDOW_BEGIN)
        window_begin(e);
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.step + 16);
    r.type = GMT_REC_STEP;
    r.u.step.ts = e->ts;
    r.u.step.step = e->step;
    r.u.step.phase = e->phase;
    r.u.step.source = e->source;
    put(&r);
    W.cur_step = e->step;
    W.cur_phase = e->phase;
    sample_devices_at(e->snap);
}

/* ---- records ------------------------------------------------------------- */

static uint64_t mem_source(const staged *s, int vmm)
{
    const gmt_mem *m = &s->u.m;
    if (gmp_fam_is_vmm(s->fam) || vmm)
        return GMT_SRC_VMM;
    if (s->is_async || s->pool_type != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID || s->fam == GMP_FAM_ASYNC)
        return GMT_SRC_ASYNC_POOL;
    switch (s->fam) {
    case GMP_FAM_MALLOC:
        return GMT_SRC_MALLOC;
    case GMP_FAM_PITCH:
        return GMT_SRC_PITCHED;
    case GMP_FAM_HOST:
        return GMT_SRC_PINNED_HOST;
    case GMP_FAM_MANAGED:
        return GMT_SRC_MANAGED;
    default:
        break;
    }
    switch (m->kind) {
    case GMT_MEMKIND_MANAGED:
        return GMT_SRC_MANAGED;
    case GMT_MEMKIND_PINNED:
        return GMT_SRC_PINNED_HOST;
    case GMT_MEMKIND_ARRAY:
        return GMT_SRC_PITCHED;
    case GMT_MEMKIND_DEVICE_STATIC:
    case GMT_MEMKIND_MANAGED_STATIC:
        return GMT_SRC_STATIC;
    case GMT_MEMKIND_DEVICE:
        return GMT_SRC_MALLOC;
    default:
        return GMT_SRC_UNKNOWN;
    }
}

static void emit_mem(staged *s)
{
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.mem + 16);
    r.type = (gmt_type)s->type;
    r.u.mem = s->u.m;
    gmt_mem *m = &r.u.mem;
    const gmp_epoch_info *ep = epinfo(s->epoch);
    int vmm = in_reserved(m->address);
    if (!s->matched) {
        /* No API callback (PyTorch's expandable segments show correlation id
         * 0): the VMM mapping covering the address says who mapped it, or
         * for a release, the unmap that covered it. */
        const vrange *v = map_find(m->address);
        if (!v && s->type == GMT_REC_FREE)
            v = unmap_find(m->address);
        if (v) {
            vmm = 1;
            m->tid = v->tid;
            m->range = v->range;
            m->seq = v->seq;
            m->flags &= ~(uint64_t)GMT_MEMF_NO_THREAD;
            const gmp_epoch_info *me = epinfo(v->epoch);
            if (me)
                ep = me;
        }
    }
    m->step = ep ? ep->step : W.cur_step;
    int write = in_window(ep);
    if (s->type == GMT_REC_ALLOC) {
        m->source = mem_source(s, vmm);
        int rc = gmp_live_insert(W.live, m);
        if (rc == 1)
            W.live_replaced++;
    } else {
        gmt_mem old;
        if (gmp_live_remove(W.live, m->device, m->address, &old)) {
            m->kind = old.kind;
            m->source = old.source;
            if (!m->bytes)
                m->bytes = old.bytes;
        } else {
            m->source = mem_source(s, vmm);
        }
    }
    if (!write)
        return;
    if (!W.win_open) {
        W.late_mem++;
        return;
    }
    put(&r);
}

static void emit_kernel_or_copy(staged *s)
{
    const gmp_epoch_info *ep = epinfo(s->epoch);
    if (!in_window(ep))
        return; /* WARMUP (collected so the window starts warm) or outside */
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.kernel + 16);
    r.type = (gmt_type)s->type;
    if (s->type == GMT_REC_KERNEL) {
        r.u.kernel = s->u.k;
        r.u.kernel.step = ep->step;
        r.u.kernel.name = kernel_name_id(s->kname);
    } else {
        r.u.copy = s->u.c;
        r.u.copy.step = ep->step;
    }
    put(&r);
}

static void emit_staged(staged *s)
{
    if (s->type == GMT_REC_ALLOC || s->type == GMT_REC_FREE)
        emit_mem(s);
    else
        emit_kernel_or_copy(s);
}

static void put_tag(const gmp_ev *ev)
{
    gmt_record *r = calloc(1, sizeof *r); /* a TAG is 2.6 KB: not on the stack */
    if (!r)
        return;
    r->type = GMT_REC_TAG;
    r->u.tag.ts = ev->ts;
    r->u.tag.name = intern(ev->name, ev->len);
    const gmp_epoch_info *ep = epinfo(ev->epoch);
    r->u.tag.step = ep ? ep->step : W.cur_step;
    r->u.tag.has_framework = (uint64_t)W.fw_seen;
    gmp_snap sn;
    int have = !W.sig_mode && gmp_snapshot_get(ev->c, &sn);
    for (unsigned d = 0; d < GMP_MAX_DEVICES; d++) {
        if (!W.dev_written[d])
            continue;
        gmt_tag_device *td = &r->u.tag.dev[r->u.tag.ndev++];
        uint64_t f = 0, t = 0;
        td->device = d;
        td->live_bytes = gmp_live_bytes(W.live, d);
        if (W.fw_seen) {
            td->fw_allocated = gmp_live_bytes(W.blocks, d);
            td->fw_reserved = gmp_live_bytes(W.segs, d) + W.mapped[d];
        }
        if (have && (sn.mask >> d & 1)) {
            td->driver_free = sn.free_b[d];
            td->driver_total = sn.total_b[d];
            td->driver_used = sn.total_b[d] >= sn.free_b[d] ? sn.total_b[d] - sn.free_b[d] : 0;
        } else if (!W.sig_mode && gmp_device_meminfo(d, &f, &t) == 0) {
            td->driver_free = f;
            td->driver_total = t;
            td->driver_used = t >= f ? t - f : 0;
        }
    }
    put(r);
    free(r);
    sample_devices_at(ev->c);
}

/* A kernel launch (launch mode): its KERNEL record, written like a GPU one
 * (active steps only) but flagged: start = end = the launch time. */
static void emit_launch(gmp_ev *ev, const gmp_epoch_info *ep)
{
    uint64_t name = launch_name_id(ev); /* also in warmup: later launches refer to it */
    if (!in_window(ep))
        return;
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.kernel + 16);
    r.type = GMT_REC_KERNEL;
    gmt_kernel *k = &r.u.kernel;
    k->start = k->end = ev->ts;
    k->device = ev->d;
    k->stream = ev->c;
    k->corr = ev->corr;
    k->name = name;
    for (int i = 0; i < 3; i++) {
        k->grid[i] = ev->launch.grid[i];
        k->block[i] = ev->launch.block[i];
    }
    k->tid = ev->tid;
    k->seq = ev->a;
    k->range = ev->b;
    k->step = ep->step;
    k->flags = GMT_KERNF_LAUNCH;
    if (ev->launch.has_attrs) {
        k->registers = ev->launch.regs;
        k->static_smem = ev->launch.static_smem;
        k->dynamic_smem = ev->launch.dynamic_smem;
        k->local_mem = ev->launch.local_mem;
        k->flags |= GMT_KERNF_ATTRS;
    }
    put(&r);
}

/* A memcpy or memset from its API call (launch mode, copies.c): written like
 * a CUPTI one (active steps only), start = end = the time of the call. */
static void emit_copy(const gmp_ev *ev, const gmp_epoch_info *ep)
{
    if (!in_window(ep))
        return;
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.copy + 16);
    r.type = ev->copy.is_memset ? GMT_REC_MEMSET : GMT_REC_MEMCPY;
    gmt_copy *c = &r.u.copy;
    c->start = c->end = ev->ts;
    c->device = ev->d;
    c->stream = ev->c;
    c->corr = ev->corr;
    c->bytes = ev->a;
    c->copy_kind = ev->b;
    c->src_kind = ev->copy.src_kind;
    c->dst_kind = ev->copy.dst_kind;
    c->tid = ev->tid;
    c->step = ep->step;
    put(&r);
}

/* The live tables keep what a later window's baseline and a tag need; the
 * pool id rides in gmt_mem's corr and the requested size in its source (a
 * block has neither). */
static void block_track(const gmt_block *b)
{
    gmt_mem m = {.ts = b->ts, .device = b->device, .address = b->address, .bytes = b->bytes,
                 .kind = GMT_MEMKIND_DEVICE, .source = b->requested, .flags = b->flags & GMT_BLKF_SEEDED,
                 .corr = b->pool,
                 .stream = b->stream, .tid = b->tid, .range = b->range, .seq = b->seq, .step = b->step};
    unsigned d = b->device < GMP_MAX_DEVICES ? (unsigned)b->device : 0;
    switch (b->action) {
    case GMT_BLK_ALLOC:
        if (gmp_live_insert(W.blocks, &m) == 1)
            W.live_replaced++;
        break;
    case GMT_BLK_FREE_REQUESTED:
        gmp_live_remove(W.blocks, b->device, b->address, NULL);
        break;
    case GMT_BLK_SEGMENT_ALLOC:
        gmp_live_insert(W.segs, &m);
        break;
    case GMT_BLK_SEGMENT_FREE:
        gmp_live_remove(W.segs, b->device, b->address, NULL);
        break;
    case GMT_BLK_SEGMENT_MAP:
        W.mapped[d] += b->bytes;
        break;
    case GMT_BLK_SEGMENT_UNMAP:
        W.mapped[d] -= b->bytes <= W.mapped[d] ? b->bytes : W.mapped[d];
        break;
    case GMT_BLK_OOM:
        W.ooms++;
        break;
    default:
        break;
    }
}

/* One block event into the live tables and, inside a window, the trace. */
static void block_out(const gmt_block *b, uint32_t epoch)
{
    const gmp_epoch_info *ep = epinfo(epoch);
    W.block_events++;
    block_track(b);
    if (in_window(ep) && W.win_open) {
        gmt_record r;
        memset(&r, 0, sizeof r.type + sizeof r.u.block + 16);
        r.type = GMT_REC_BLOCK;
        r.u.block = *b;
        r.u.block.step = ep->step;
        put(&r);
    }
}

/* The size of a block as the allocator counts it, from its counter
 * (torch_bridge.h): an ALLOC waits in held[] for the device's next reading
 * (the next ALLOC, or a flush); the counter's change since its own reading,
 * plus the blocks freed in between (their sizes known from the live
 * table), is its size. Only an ALLOC freed before the next reading leaves
 * the counter no say: its size is then the allocator's rounding of the
 * request (512-byte multiples). */
static uint64_t rounded_request(uint64_t req) { return req < 512 ? 512 : (req + 511) / 512 * 512; }

static void held_settle(unsigned d, uint64_t counter)
{
    if (!W.held_on[d])
        return;
    gmt_block *h = &W.held[d];
    int64_t s = (int64_t)(counter - W.held_base[d]) + (int64_t)W.held_freed[d];
    h->bytes = s > 0 ? (uint64_t)s : rounded_request(h->requested);
    W.held_on[d] = 0;
    block_out(h, W.held_epoch[d]);
}

/* A FREE_REQUESTED while an ALLOC of its device is held. */
static void held_free(unsigned d, gmt_block *b)
{
    if (W.held[d].address == b->address) { /* the held block itself */
        W.held[d].bytes = rounded_request(W.held[d].requested);
        W.held_on[d] = 0;
        block_out(&W.held[d], W.held_epoch[d]);
        b->bytes = W.held[d].bytes;
        return;
    }
    const gmt_mem *m = gmp_live_find(W.blocks, b->device, b->address);
    b->bytes = m ? m->bytes : rounded_request(b->requested);
    W.held_freed[d] += b->bytes;
}

static void emit_block(const gmp_ev *ev, const gmp_epoch_info *ep, int inwin)
{
    (void)inwin;
    gmt_block blk = { .ts = ev->ts, .action = ev->block.action, .device = ev->block.device,
                      .address = ev->a, .bytes = ev->b, .stream = ev->c, .tid = ev->tid,
                      .range = ev->block.range, .seq = ev->block.seq, .step = ep ? ep->step : W.cur_step,
                      .flags = ev->block.flags, .pool = ev->d, .requested = ev->block.requested };
    if (!W.fw_seen) {
        /* made at the first event: a process without the bridge pays nothing */
        W.blocks = gmp_live_create(1024);
        W.segs = gmp_live_create(64);
        if (!W.blocks || !W.segs) {
            gmp_live_free(W.blocks);
            gmp_live_free(W.segs);
            W.blocks = W.segs = NULL;
            W.bad_records++;
            return;
        }
        W.fw_seen = 1;
    }
    unsigned d = ev->block.device < GMP_MAX_DEVICES ? ev->block.device : GMP_MAX_DEVICES;
    if (ev->block.action == GMP_BRIDGE_COUNTER) {
        if (d < GMP_MAX_DEVICES)
            held_settle(d, ev->block.counter);
        return;
    }
    if (d < GMP_MAX_DEVICES && blk.action == GMT_BLK_FREE_REQUESTED && W.held_on[d]) {
        held_free(d, &blk);
    } else if (d < GMP_MAX_DEVICES && blk.action == GMT_BLK_ALLOC && ev->block.has_counter) {
        held_settle(d, ev->block.counter); /* the reading is before this ALLOC's own count */
        W.held[d] = blk;
        W.held_epoch[d] = ev->epoch;
        W.held_base[d] = ev->block.counter;
        W.held_freed[d] = 0;
        W.held_on[d] = 1;
        return;
    } else if (blk.action == GMT_BLK_FREE_REQUESTED && blk.requested) {
        const gmt_mem *m = gmp_live_find(W.blocks, blk.device, blk.address);
        if (m)
            blk.bytes = m->bytes; /* the request, from a counting bridge: the block's size is known */
    }
    block_out(&blk, ev->epoch);
}

static void emit_event(gmp_ev *ev)
{
    gmt_record r;
    const gmp_epoch_info *ep = epinfo(ev->epoch);
    int inwin = in_window(ep) && W.win_open;
    memset(&r, 0, sizeof r.type + sizeof r.u.range + 16);
    switch (ev->type) {
    case GMP_EV_RANGE_BEGIN: {
        open_range o = {ev->a, ev->tid, ev->b, intern(ev->name, ev->len), ev->ts};
        open_insert(&o);
        if (!inwin)
            break;
        r.type = GMT_REC_RANGE_BEGIN;
        r.u.range = (gmt_range){ev->ts, ev->tid, ev->a, ev->b, o.name};
        put(&r);
        break;
    }
    case GMP_EV_RANGE_END: {
        open_range o;
        if (!open_remove(ev->a, &o) || !inwin)
            break;
        r.type = GMT_REC_RANGE_END;
        r.u.range = (gmt_range){ev->ts, ev->tid, ev->a, 0, 0};
        put(&r);
        break;
    }
    case GMP_EV_MARK:
        if (!inwin)
            break;
        r.type = GMT_REC_MARK;
        r.u.mark.ts = ev->ts;
        r.u.mark.tid = ev->tid;
        r.u.mark.name = intern(ev->name, ev->len);
        put(&r);
        break;
    case GMP_EV_TAG:
        put_tag(ev);
        break;
    case GMP_EV_DEVICE:
        put_device((unsigned)ev->a);
        break;
    case GMP_EV_VMM_ADDRFREE:
        vr_remove(W.res, &W.nres, ev->a);
        break;
    case GMP_EV_VMM_UNMAP: {
        vrange v = {ev->a, ev->b, ev->tid, ev->epoch, ev->c, ev->d};
        W.unmapped[W.nunmapped++ % 64] = v;
        vr_remove(W.maps, &W.nmaps, ev->a);
        break;
    }
    case GMP_EV_LAUNCH:
        emit_launch(ev, ep);
        break;
    case GMP_EV_COPY:
        emit_copy(ev, ep);
        break;
    case GMP_EV_BLOCK:
        emit_block(ev, ep, inwin);
        break;
    case GMP_EV_SYNC:
        end_frame();
        atomic_store_explicit(&W.sync_done, ev->a, memory_order_release);
        break;
    default:
        break; /* RESERVE/MAP were applied when popped */
    }
}

/* ---- staging CUPTI records ----------------------------------------------- */

static staged *stage_new(void)
{
    if (W.nst == W.cap_st)
        return NULL;
    staged *s = &W.st[W.nst++];
    memset(s, 0, sizeof *s);
    return s;
}

static void join(staged *s, uint32_t corr, uint32_t alt, uint64_t ts, uint64_t *tid, uint64_t *range,
                 uint64_t *seq)
{
    gmp_corr_info ci;
    int ok = corr && gmp_corr_get(&gmp_g.corr, corr, &ci);
    if (!ok && alt)
        ok = gmp_corr_get(&gmp_g.corr, alt, &ci);
    if (ok) {
        s->matched = 1;
        s->epoch = ci.epoch;
        s->fam = ci.fam;
        if (tid)
            *tid = ci.tid;
        if (range)
            *range = ci.range;
        if (seq)
            *seq = ci.seq;
    } else {
        if (corr || alt)
            W.unmatched++;
        s->epoch = epoch_by_ts(ts);
    }
}

static uint64_t kind_of(uint64_t k) { return k < GMT_MEMKIND_COUNT_ ? k : GMT_MEMKIND_UNKNOWN; }
static uint64_t stream_of(uint32_t s) { return s == CUPTI_INVALID_STREAM_ID ? 0 : s; }

/* The fields a MEMCPY and a MEMSET record share, staged (NULL: the stage is
 * full). */
static gmt_copy *stage_copy(uint8_t type, uint64_t start, uint64_t end, uint32_t device, uint32_t stream,
                            uint32_t corr, uint64_t bytes, staged **out)
{
    staged *s = stage_new();
    *out = s;
    if (!s)
        return NULL;
    gmt_copy *c = &s->u.c;
    s->type = type;
    s->ts = start;
    c->start = start;
    c->end = end >= start ? end : start;
    c->device = device;
    c->stream = stream_of(stream);
    c->corr = corr;
    c->bytes = bytes;
    return c;
}

static uint64_t copy_kind_of(uint8_t k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return GMT_COPY_HTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return GMT_COPY_DTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return GMT_COPY_DTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return GMT_COPY_HTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return GMT_COPY_PTOP;
    case CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN:
        return GMT_COPY_UNKNOWN;
    default:
        return GMT_COPY_OTHER; /* array copies */
    }
}

static void stage_record(const CUpti_Activity *a)
{
    staged *s;
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
        const CUpti_ActivityMemory4 *r = (const CUpti_ActivityMemory4 *)a;
        if (r->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION &&
            r->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
            return;
        if (!(s = stage_new()))
            return;
        gmt_mem *m = &s->u.m;
        s->type = r->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION ? GMT_REC_ALLOC
                                                                                            : GMT_REC_FREE;
        s->ts = r->timestamp;
        s->is_async = r->isAsync != 0;
        s->pool_type = (uint8_t)r->memoryPoolConfig.memoryPoolType;
        m->ts = r->timestamp;
        m->device = r->deviceId;
        m->address = r->address;
        m->bytes = r->bytes;
        m->kind = kind_of(r->memoryKind);
        m->corr = r->correlationId;
        m->stream = stream_of(r->streamId);
        join(s, r->correlationId, 0, r->timestamp, &m->tid, &m->range, &m->seq);
        if (!s->matched)
            m->flags |= GMT_MEMF_NO_THREAD;
        return;
    }
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *r = (const CUpti_ActivityKernel10 *)a;
        if (!(s = stage_new()))
            return;
        gmt_kernel *k = &s->u.k;
        s->type = GMT_REC_KERNEL;
        s->ts = r->start;
        s->kname = r->name;
        k->start = r->start;
        k->end = r->end >= r->start ? r->end : r->start;
        k->device = r->deviceId;
        k->stream = stream_of(r->streamId);
        k->corr = r->correlationId;
        k->grid[0] = (uint64_t)(int64_t)r->gridX;
        k->grid[1] = (uint64_t)(int64_t)r->gridY;
        k->grid[2] = (uint64_t)(int64_t)r->gridZ;
        k->block[0] = (uint64_t)(int64_t)r->blockX;
        k->block[1] = (uint64_t)(int64_t)r->blockY;
        k->block[2] = (uint64_t)(int64_t)r->blockZ;
        k->registers = r->registersPerThread;
        k->static_smem = (uint64_t)(uint32_t)r->staticSharedMemory;
        k->dynamic_smem = (uint64_t)(uint32_t)r->dynamicSharedMemory;
        k->local_mem = r->localMemoryPerThread;
        join(s, r->correlationId, 0, r->start, &k->tid, &k->range, &k->seq);
        return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *r = (const CUpti_ActivityMemcpy6 *)a;
        gmt_copy *c = stage_copy(GMT_REC_MEMCPY, r->start, r->end, r->deviceId, r->streamId, r->correlationId,
                                 r->bytes, &s);
        if (!c)
            return;
        c->copy_kind = copy_kind_of(r->copyKind);
        c->src_kind = kind_of(r->srcKind);
        c->dst_kind = kind_of(r->dstKind);
        join(s, r->correlationId, r->runtimeCorrelationId, r->start, &c->tid, NULL, NULL);
        return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *r = (const CUpti_ActivityMemset4 *)a;
        gmt_copy *c = stage_copy(GMT_REC_MEMSET, r->start, r->end, r->deviceId, r->streamId, r->correlationId,
                                 r->bytes, &s);
        if (!c)
            return;
        c->copy_kind = r->value; /* a memset's "kind" field holds its byte value */
        c->src_kind = kind_of(r->memoryKind);
        join(s, r->correlationId, 0, r->start, &c->tid, NULL, NULL);
        return;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
        W.pool_records++;
        return;
    default:
        return;
    }
}

static int cmp_staged(const void *a, const void *b)
{
    const staged *x = a, *y = b;
    if (x->epoch != y->epoch)
        return (int32_t)(x->epoch - y->epoch) < 0 ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return 0;
}

/* Merges staged records and ring events in (epoch, time) order, applying
 * each transition when everything of the epochs before it is out.
 *
 * A staged record newer than the horizon (the time just before this round
 * popped the ring) waits for the next round: an event its thread published
 * before making the record's API call may not have been popped yet (the
 * ring was read before the record's buffer was taken), and must come first.
 * What waits behind it (later events, transitions) waits too; events not
 * written are kept, in order, for the next round.
 *
 * force (the end): write everything, ignoring the horizon and epochs not
 * yet published (impossible unless the history was lost). */
static void drain(int force)
{
    size_t si = 0, ei = 0;
    if (W.nst > 1)
        qsort(W.st, W.nst, sizeof *W.st, cmp_staged);
    for (;;) {
        int has_tr = W.have_epochs && (int32_t)(W.known - W.next_epoch) >= 0;
        /* a known transition holds back what comes after it even while it
         * waits for the ring (round_once: W.safe) */
        int may_apply = has_tr && (force || (int32_t)(W.safe - W.next_epoch) >= 0);
        uint32_t lim = W.next_epoch;
        int s_ok = si < W.nst && (!has_tr || (int32_t)(W.st[si].epoch - lim) < 0) &&
                   (force || (int32_t)(W.st[si].epoch - W.known) <= 0);
        int e_ok = ei < W.nev && (!has_tr || (int32_t)(W.evs[ei].epoch - lim) < 0);
        if (s_ok && e_ok) {
            const staged *st = &W.st[si];
            const gmp_ev *e = &W.evs[ei];
            if (st->epoch == e->epoch ? st->ts <= e->ts : (int32_t)(st->epoch - e->epoch) < 0)
                e_ok = 0;
            else
                s_ok = 0;
        }
        if (s_ok) {
            /* (a time far beyond the horizon is a clock step, not a race:
             * such a record is not held) */
            if (!force && W.st[si].ts >= W.horizon && W.st[si].ts - W.horizon < 1000000000ull)
                break; /* next round, with what comes after it */
            emit_staged(&W.st[si++]);
        } else if (e_ok) {
            emit_event(&W.evs[ei++]);
        } else if (may_apply && !(si < W.nst && (int32_t)(W.st[si].epoch - lim) < 0)) {
            const gmp_epoch_info *e = &W.hist[W.next_epoch % GMP_EPOCH_HIST];
            if (e->epoch == W.next_epoch)
                apply_epoch(e);
            W.next_epoch++;
        } else {
            break;
        }
    }
    if (force) {
        /* Events of epochs never published cannot exist (an event's epoch is
         * read before it is pushed); at the end, write them anyway. */
        while (ei < W.nev)
            emit_event(&W.evs[ei++]);
    }
    if (ei < W.nev)
        memmove(W.evs, W.evs + ei, (W.nev - ei) * sizeof *W.evs);
    W.nev -= ei;
    if (si < W.nst)
        memmove(W.st, W.st + si, (W.nst - si) * sizeof *W.st);
    W.nst -= si;
}

static void take_buffers(void)
{
    gmp_done_buf bufs[16];
    size_t n;
    while ((n = gmp_bufq_take(bufs, 16)) > 0) {
        for (size_t i = 0; i < n; i++) {
            CUpti_Activity *rec = NULL;
            for (;;) {
                if (W.nst == W.cap_st) {
                    drain(0); /* make room: what can be written is written */
                    if (W.nst == W.cap_st)
                        drain(1);
                }
                CUptiResult st = gmp_g.api.ActivityGetNextRecord(bufs[i].buf, bufs[i].valid, &rec);
                if (st != CUPTI_SUCCESS) {
                    if (st != CUPTI_ERROR_MAX_LIMIT_REACHED)
                        W.bad_records++; /* an incomplete or unknown record ends the buffer */
                    break;
                }
                stage_record(rec);
            }
            gmp_bufq_release(bufs[i].buf);
        }
    }
}

/* One round: ring first, then epochs, then buffers (see the top comment). */
static void round_once(int force)
{
    size_t first = W.nev; /* events kept from the last round come first */
    W.horizon = gmp_now();
    /* A transition may be applied only when every event made before it has
     * been popped: an event left in the ring would reach a window already
     * closed. The ring is FIFO and an event's epoch is read before its push,
     * so once an event of epoch X is popped, so is every event of an earlier
     * epoch pushed before it; and when a pop empties the ring, every event
     * made before the epoch published ahead of the pop is out. W.safe is the
     * newest epoch known that way. A pop that stops at the batch limit (a
     * burst: a launch-mode step, emit_nvtx ranges) leaves it where the
     * events say, and a later transition waits for the rounds that empty
     * the ring. (A thread that read the old epoch and is preempted before
     * its push can still come late: that race is as old as the epochs.) */
    uint32_t pub = atomic_load_explicit(&gmp_g.epoch, memory_order_acquire);
    for (; W.nev < EV_BATCH && gmp_ring_pop(&gmp_g.ring, &W.evs[W.nev]); W.nev++)
        if ((int32_t)(W.evs[W.nev].epoch - W.safe) > 0)
            W.safe = W.evs[W.nev].epoch;
    if (W.nev < EV_BATCH && (int32_t)(pub - W.safe) > 0)
        W.safe = pub;
    /* A pop that stopped at the batch limit may have left events in the
     * ring that are older than the horizon: an NVTX burst (emit_nvtx makes
     * two events per op) outruns the writer.  The records of their API
     * calls must not overtake them, so the horizon comes down to the newest
     * event popped: the ring is FIFO, and an event is stamped before its
     * push, so every event stamped before that one is out (but for the
     * preemption race above).  Without this, a training step's allocations
     * came before the RANGE_BEGIN of their op (on the H200, 43 of an sdpa
     * run's allocations named a range not yet begun). */
    if (W.nev == EV_BATCH) {
        for (size_t i = W.nev; i-- > 0;)
            if (W.evs[i].ts) {
                if (W.evs[i].ts < W.horizon)
                    W.horizon = W.evs[i].ts;
                break;
            }
    }
    gmp_post_rearm();
    pull_epochs();
    /* VMM reservations and mappings are metadata: apply them before any
     * record of this round needs them (a MEMORY2 record of a mapping can
     * carry an earlier time than the map call's exit). */
    for (size_t i = first; i < W.nev; i++) {
        const gmp_ev *e = &W.evs[i];
        if (e->type == GMP_EV_VMM_RESERVE || e->type == GMP_EV_VMM_MAP) {
            vrange v = {e->a, e->b, e->tid, e->epoch, e->c, e->d};
            if (e->type == GMP_EV_VMM_RESERVE)
                vr_add(&W.res, &W.nres, &W.capres, &v, 0);
            else
                vr_add(&W.maps, &W.nmaps, &W.capmaps, &v, 1);
        }
    }
    take_buffers();
    drain(force);
}

/* ---- header ------------------------------------------------------------- */

static void put_header(void)
{
    char host[256] = "";
    char cmd[4096];
    char cfgtext[2048];
    size_t n = 0;
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0'; /* an empty host field says "unknown" */
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t k = read(fd, cmd, sizeof cmd - 1);
        close(fd);
        if (k > 0) {
            n = (size_t)k;
            while (n > 0 && cmd[n - 1] == '\0')
                n--;
            for (size_t i = 0; i < n; i++)
                if (cmd[i] == '\0')
                    cmd[i] = ' ';
        }
    }
    size_t cl = gmp_config_describe(&gmp_g.cfg, cfgtext, sizeof cfgtext);
    if (cl >= sizeof cfgtext)
        cl = sizeof cfgtext - 1;
    uint32_t cv = 0;
    int dv = 0;
    if (gmp_g.api.GetVersion)
        gmp_g.api.GetVersion(&cv);
    if (gmp_g.api.DriverGetVersion)
        gmp_g.api.DriverGetVersion(&dv);
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.header + 16);
    r.type = GMT_REC_HEADER;
    gmt_header *h = &r.u.header;
    h->pid = (uint64_t)getpid();
    h->ppid = (uint64_t)getppid();
    h->start_unix_ns = gmp_g.start_unix_ns;
    h->start_ts = gmp_g.start_ts;
    long v;
    h->rank = (v = gmp_config_env_int(NULL, NULL, "RANK")) >= 0 ? v : -1;
    h->local_rank = (v = gmp_config_env_int(NULL, NULL, "LOCAL_RANK")) >= 0 ? v : -1;
    h->world_size = (v = gmp_config_env_int(NULL, NULL, "WORLD_SIZE")) >= 0 ? v : -1;
    h->cupti_version = cv;
    h->driver_version = (uint64_t)(dv > 0 ? dv : 0);
    h->host = (gmt_bytes){host, (uint32_t)strlen(host)};
    h->cmdline = (gmt_bytes){cmd, (uint32_t)n};
    h->config = (gmt_bytes){cfgtext, (uint32_t)cl};
    h->profiler_version = (gmt_bytes){GMEMPROF_VERSION, (uint32_t)strlen(GMEMPROF_VERSION)};
    put(&r);
}

/* ---- the end -------------------------------------------------------------- */

static void human_bytes(uint64_t b, char *out, size_t cap)
{
    if (b < 1024)
        snprintf(out, cap, "%" PRIu64 " B", b);
    else if (b < (1u << 20))
        snprintf(out, cap, "%.1f KiB", (double)b / 1024.0);
    else if (b < (1u << 30))
        snprintf(out, cap, "%.1f MiB", (double)b / 1048576.0);
    else
        snprintf(out, cap, "%.2f GiB", (double)b / 1073741824.0);
}

/* One line for the launcher (GMEMPROF_SUMMARY_FILE, O_APPEND: every
 * profiled process of the run appends its own). */
static void append_summary(uint64_t size, uint64_t windows, uint64_t records, uint64_t dropped,
                           const char *status)
{
    char line[GMP_SUMMARY_LINE_MAX];
    size_t n = gmp_summary_format_line(line, sizeof line, gmp_g.path, size, windows, records, dropped,
                                       status);
    int fd = open(gmp_g.cfg.summary_file, O_WRONLY | O_APPEND | O_CLOEXEC);
    int e = fd < 0 ? errno : 0;
    if (fd >= 0) {
        ssize_t w = n < sizeof line ? write(fd, line, n) : -1;
        e = n >= sizeof line ? EMSGSIZE : w < 0 ? errno : w != (ssize_t)n ? ENOSPC : 0;
        if (close(fd) != 0 && !e && errno != EINTR)
            e = errno;
    }
    if (!e)
        return;
    /* Never silent: what the launcher would have said, on stderr. */
    gmp_log_info("cannot add this run's summary to %s (%s): trace %s, %" PRIu64 " bytes, %" PRIu64
                 " windows, %" PRIu64 " records, %" PRIu64 " dropped, status %s",
                 gmp_g.cfg.summary_file, strerror(e), gmp_g.path, size, windows, records, dropped, status);
}

static void write_summary(int ok)
{
    uint64_t dropped = atomic_load(&gmp_g.dropped_cupti) + W.summary_dropped;
    struct stat sb;
    uint64_t size = stat(gmp_g.path, &sb) == 0 ? (uint64_t)sb.st_size : W.summary_bytes;
    if (gmp_g.cfg.summary_file[0]) {
        append_summary(size, W.windows, W.summary_records, dropped,
                       ok ? GMP_SUMMARY_STATUS_OK : GMP_SUMMARY_STATUS_INCOMPLETE);
        return;
    }
    if (!ok)
        return; /* the write error was reported on its own line */
    char hb[32];
    human_bytes(size, hb, sizeof hb);
    char fw[160] = "";
    if (W.fw_seen)
        snprintf(fw, sizeof fw, "; %" PRIu64 " events of the %s", W.block_events,
                 gmp_torch_describe()[0] ? gmp_torch_describe() : "framework allocator");
    gmp_log_info("wrote %s (%s, %" PRIu64 " window%s, %" PRIu64 " records, %" PRIu64 " dropped%s)",
                 gmp_g.path, hb, W.windows, W.windows == 1 ? "" : "s", W.summary_records, dropped, fw);
}

static void write_summary_noctx(void)
{
    if (!gmp_g.cfg.summary_file[0]) {
        gmp_log_debug("no CUDA context was created: nothing recorded, no trace written (%s removed)",
                      gmp_g.path);
        return;
    }
    append_summary(0, 0, 0, 0, GMP_SUMMARY_STATUS_NOCTX);
}

static void finalize(int reason)
{
    /* Take in everything still queued (the caller flushed CUPTI first). */
    for (int i = 0; i < 64; i++) {
        round_once(0);
        if (gmp_ring_size(&gmp_g.ring) == 0 && gmp_bufq_pending() == 0 &&
            (int32_t)(W.known - W.next_epoch) < 0)
            break;
    }
    drain(1);
    if (W.win_open)
        window_end(gmp_now(), reason); /* STATS and a frame end included */
    else
        put_stats();
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.trailer + 16);
    r.type = GMT_REC_TRAILER;
    r.u.trailer.ts = gmp_now();
    r.u.trailer.records = gmt_writer_records(W.w);
    r.u.trailer.status = (W.io_error ? GMT_TRAILER_WRITE_ERRORS : 0) |
                         (reason == GMT_WEND_ERROR ? GMT_TRAILER_DISABLED : 0);
    put(&r);
    end_frame();
    W.summary_records = gmt_writer_records(W.w);
    W.summary_bytes = gmt_writer_bytes_out(W.w);
    W.summary_dropped = dropped_writer();
    if (W.bad_records || W.unmatched || W.lost_epochs || W.late_mem)
        gmp_log_debug("writer: %" PRIu64 " unmatched, %" PRIu64 " unreadable, %" PRIu64
                      " late memory records, %" PRIu64 " lost transitions",
                      W.unmatched, W.bad_records, W.late_mem, W.lost_epochs);
    if (gmp_g.cfg.kernels == GMP_KERNELS_LAUNCH)
        gmp_log_debug("launch mode: cache misses: %" PRIu64 " names sent, %" PRIu64 " functions queried, %" PRIu64
                      " stream lookups, %" PRIu64 " cache resets",
                      atomic_load(&gmp_g.lmiss_name), atomic_load(&gmp_g.lmiss_func),
                      atomic_load(&gmp_g.lmiss_stream), atomic_load(&gmp_g.lmiss_gen));
    int ok = gmt_writer_close(W.w) == GMT_OK && !W.io_error;
    W.w = NULL;
    if (!atomic_load(&gmp_g.ctx_seen) && !atomic_load(&gmp_g.forked)) {
        /* cuInit without a context (a launcher's agent, a device query):
         * nothing was recorded, and a file here would only be clutter, or
         * worse, take a name another process means to use. */
        if (unlink(gmp_g.path) == 0) {
            write_summary_noctx();
            return;
        }
    }
    write_summary(ok);
}

/* ---- the thread ----------------------------------------------------------- */

static unsigned wait_ms(void)
{
    return 20; /* the ring is polled 50 times a second; urgent work wakes us */
}

static void periodic(void)
{
    uint64_t now = mono_ns();
    uint64_t flush_ns = gmp_g.cfg.flush_period_ms * 1000000ull;
    uint64_t cupti_ns = flush_ns / 4 < 100000000ull ? flush_ns / 4 : 100000000ull;
    if (gmp_g.cfg.schedule.kind == GMP_SCHED_TIME)
        gmp_transition(GMP_TR_TICK, 0, GMT_STEPSRC_TIME);
    if (now - W.last_flush_ns >= cupti_ns) {
        /* Completed buffers only: cheap, and never cuts a record short. */
        if (gmp_on() && gmp_g.sub)
            gmp_g.api.ActivityFlushAll(0);
        W.last_flush_ns = now;
    }
    if (W.win_open && gmp_g.cfg.sample_period_ms &&
        now - W.last_sample_ns >= gmp_g.cfg.sample_period_ms * 1000000ull)
        sample_devices();
    if (now - W.last_frame_ns >= flush_ns) {
        if (W.frame_records) {
            put_stats();
            end_frame();
        }
        W.last_frame_ns = now;
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are the program's, not ours */
    gmp_t.internal = 1;
    W.last_frame_ns = W.last_sample_ns = W.last_flush_ns = mono_ns();
    put_header();
    for (;;) {
        int req = atomic_load(&W.finish_req);
        int sig = atomic_load(&W.finish_sig);
        if (sig && !req) {
            W.sig_mode = 1;
            gmp_flush_forced();
            req = GMT_WEND_SIGNAL + 1;
        }
        if (req) {
            finalize(req - 1);
            break;
        }
        round_once(0);
        periodic();
        if (gmp_ring_size(&gmp_g.ring) > 0 || gmp_bufq_pending() > 0)
            continue;
        struct pollfd p = {gmp_g.wake_fd, POLLIN, 0};
        if (poll(&p, 1, (int)wait_ms()) > 0) {
            uint64_t v;
            ssize_t k = read(gmp_g.wake_fd, &v, sizeof v);
            (void)k;
        }
    }
    atomic_store(&W.finished, 1);
    atomic_store(&W.running, 0);
    if (W.done_pipe[1] >= 0) {
        char c = 1;
        ssize_t k = write(W.done_pipe[1], &c, 1);
        (void)k;
    }
    return NULL;
}

int gmp_wt_start(gmt_writer *w, char *err, size_t cap)
{
    W.w = w;
    W.strtab = gmt_strtab_create();
    W.live = gmp_live_create(1024);
    W.cap_st = (gmp_writer_staging_bytes() - EV_BATCH * sizeof(gmp_ev)) / sizeof(staged);
    W.st = calloc(W.cap_st, sizeof *W.st);
    W.evs = calloc(EV_BATCH, sizeof *W.evs);
    if (!W.strtab || !W.live || !W.st || !W.evs || pipe2(W.done_pipe, O_CLOEXEC) != 0) {
        snprintf(err, cap, "out of memory for the trace writer");
        return -1;
    }
    atomic_store(&W.running, 1);
    int e = pthread_create(&W.th, NULL, writer_main, NULL);
    if (e != 0) {
        atomic_store(&W.running, 0);
        snprintf(err, cap, "cannot start the writer thread: %s", strerror(e));
        return -1;
    }
    (void)pthread_setname_np(W.th, "gmemprof-writer"); /* cosmetic (top, gdb) */
    return 0;
}

int gmp_wt_running(void) { return atomic_load_explicit(&W.running, memory_order_relaxed); }

void gmp_wt_wake(void)
{
    if (gmp_g.wake_fd < 0)
        return;
    uint64_t one = 1;
    ssize_t k = write(gmp_g.wake_fd, &one, sizeof one); /* EAGAIN: already pending */
    (void)k;
}

void gmp_wt_sync(unsigned timeout_ms)
{
    if (!gmp_wt_running())
        return;
    uint64_t ticket = atomic_fetch_add(&W.sync_ticket, 1) + 1;
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name));
    ev.type = GMP_EV_SYNC;
    ev.a = ticket;
    gmp_post(&ev);
    gmp_wt_wake();
    for (unsigned waited = 0; waited < timeout_ms && gmp_wt_running(); waited++) {
        if (atomic_load_explicit(&W.sync_done, memory_order_acquire) >= ticket)
            return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

void gmp_wt_finish(int reason, unsigned timeout_ms)
{
    if (!gmp_wt_running())
        return;
    atomic_store(&W.finish_req, reason + 1);
    gmp_wt_wake();
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    if (pthread_timedjoin_np(W.th, NULL, &dl) != 0)
        gmp_log_error("the trace writer did not finish within %u s; %s may lack its end", timeout_ms / 1000,
                      gmp_g.path);
}

/* Async-signal-safe: atomics, write(), poll(), read(). */
void gmp_wt_finish_from_signal(int sig, unsigned timeout_ms)
{
    if (!atomic_load(&W.running) || W.done_pipe[0] < 0)
        return;
    atomic_store(&W.finish_sig, sig);
    gmp_wt_wake();
    struct pollfd p = {W.done_pipe[0], POLLIN, 0};
    int left = (int)timeout_ms;
    while (left > 0 && !atomic_load(&W.finished)) {
        int r = poll(&p, 1, left > 100 ? 100 : left);
        if (r > 0)
            break;
        left -= 100;
    }
}
