/*
 * The one codec of the gmemprof trace format (include/gmemprof/trace_format.h,
 * docs/trace-format.md): varints, zigzag deltas, the preamble, and the
 * encoding and decoding of every record type.
 *
 * Field lists appear once per direction (put_* / get_*) in struct order,
 * which is the payload order.  The decoder trusts nothing: every length is
 * bounded by the bytes actually present and by the GMT_MAX_* limits.
 */
#include <string.h>

#include "gmemprof/trace_format.h"
#include "codec_fast.h"

/* ---- names -------------------------------------------------------------- */

const char *gmt_status_str(gmt_status s)
{
    switch (s) {
    case GMT_OK: return "ok";
    case GMT_E_SHORT: return "input ended early";
    case GMT_E_CORRUPT: return "corrupt data";
    case GMT_E_VERSION: return "unsupported format version";
    case GMT_E_MAGIC: return "not a gmemprof trace";
    case GMT_E_IO: return "I/O error";
    case GMT_E_ZSTD: return "zstd error";
    case GMT_E_NOMEM: return "out of memory";
    case GMT_E_TYPE: return "unknown record type";
    case GMT_E_ARG: return "invalid argument";
    }
    return "unknown status";
}

static const char *name_of(const char *const *tab, size_t n, uint64_t v)
{
    return v < n && tab[v] ? tab[v] : "unknown";
}

#define NAME_OF(tab, v) name_of(tab, sizeof(tab) / sizeof(tab[0]), (v))

const char *gmt_type_name(gmt_type t)
{
    static const char *const tab[GMT_WIRE_TYPE_MAX_] = {
        [GMT_REC_HEADER] = "header",         [GMT_REC_DEVICE] = "device",
        [GMT_REC_STRING] = "string",         [GMT_REC_ALLOC] = "alloc",
        [GMT_REC_FREE] = "free",             [GMT_REC_KERNEL] = "kernel",
        [GMT_REC_MEMCPY] = "memcpy",         [GMT_REC_MEMSET] = "memset",
        [GMT_REC_RANGE_BEGIN] = "range_begin", [GMT_REC_RANGE_END] = "range_end",
        [GMT_REC_MARK] = "mark",             [GMT_REC_TAG] = "tag",
        [GMT_REC_STEP] = "step",             [GMT_REC_WINDOW_BEGIN] = "window_begin",
        [GMT_REC_WINDOW_END] = "window_end", [GMT_REC_MEMSAMPLE] = "memsample",
        [GMT_REC_STATS] = "stats",           [GMT_REC_TRAILER] = "trailer",
        /* the stream-only forms (1.2), for dumps of the raw bytes */
        [GMT_WIRE_KERNEL_REF] = "kernel_ref", [GMT_WIRE_ALLOC_REF] = "alloc_ref",
        [GMT_WIRE_FREE_REF] = "free_ref", [GMT_WIRE_TIMES] = "times",
        [GMT_REC_BLOCK] = "block", [GMT_REC_OOM] = "oom", [GMT_REC_LIVE] = "live",
    };
    /* An enum value may be anything a caller cast into it. */
    return NAME_OF(tab, (uint64_t)(unsigned)t);
}

const char *gmt_mem_kind_name(uint64_t kind)
{
    static const char *const tab[GMT_MEMKIND_COUNT_] = {
        "unknown", "pageable", "pinned", "device", "array", "managed", "device_static", "managed_static",
    };
    return NAME_OF(tab, kind);
}

const char *gmt_mem_source_name(uint64_t source)
{
    static const char *const tab[GMT_SRC_COUNT_] = {
        "unknown", "malloc", "async_pool", "vmm", "managed", "pinned_host", "pitched", "static", "framework",
    };
    return NAME_OF(tab, source);
}

const char *gmt_phase_name(uint64_t phase)
{
    static const char *const tab[GMT_PHASE_COUNT_] = { "none", "wait", "warmup", "active", "done" };
    return NAME_OF(tab, phase);
}

const char *gmt_step_source_name(uint64_t source)
{
    static const char *const tab[GMT_STEPSRC_COUNT_] = { "none", "api", "nvtx", "capture", "time", "optimizer" };
    return NAME_OF(tab, source);
}

const char *gmt_window_end_reason_name(uint64_t reason)
{
    static const char *const tab[GMT_WEND_COUNT_] = { "schedule", "exit", "signal", "reset", "error", "failure" };
    return NAME_OF(tab, reason);
}

const char *gmt_block_action_name(uint64_t action)
{
    static const char *const tab[GMT_BLK_COUNT_] = { "alloc", "free_requested", "free_completed", "segment_alloc",
                                                     "segment_free", "segment_map", "segment_unmap", "oom", "owner" };
    return NAME_OF(tab, action);
}

const char *gmt_oom_cause_name(uint64_t cause)
{
    static const char *const tab[GMT_OOM_CAUSE_COUNT_] = { NULL, "cuda", "framework", "signal", "exit" };
    return NAME_OF(tab, cause);
}

const char *gmt_copy_kind_name(uint64_t kind)
{
    static const char *const tab[GMT_COPY_COUNT_] = { "unknown", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "other" };
    return NAME_OF(tab, kind);
}

/* ---- varints and preamble ----------------------------------------------- */

/* O(1) whatever the state held: the tables empty with their counts (see
 * gmt_itab), so a frame start costs no clearing of 37 KB. */
void gmt_codec_reset(gmt_codec *c)
{
    memset(&c->d, 0, sizeof c->d);
    c->tsink = NULL;
    c->tsink_len = c->tsink_cap = 0;
    c->tsep = 0;
    c->tp = c->tend = NULL;
    c->shapes.n = 0;
    c->ctxs.n = 0;
}

void gmt_codec_set_time_sink(gmt_codec *c, uint8_t *buf, size_t cap)
{
    c->tsink = buf;
    c->tsink_len = 0;
    c->tsink_cap = buf ? cap : 0;
}

size_t gmt_codec_time_len(const gmt_codec *c) { return c->tsink_len; }

void gmt_codec_set_time_source(gmt_codec *c, const uint8_t *times, size_t len)
{
    c->tsep = 1;
    c->tp = times;
    c->tend = times ? times + len : times;
}

size_t gmt_codec_time_left(const gmt_codec *c) { return c->tsep ? (size_t)(c->tend - c->tp) : 0; }

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

size_t gmt_varint_put(uint8_t *out, size_t cap, uint64_t v)
{
    size_t n = varint_len(v);
    if (n > cap)
        return 0;
    for (size_t i = 0; i + 1 < n; i++) {
        out[i] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n - 1] = (uint8_t)v;
    return n;
}

/* The decoder's hot path: most fields are one or two bytes, so those are
 * decoded inline; longer ones take the loop. Same contract as gmt_varint_get. */
static inline __attribute__((always_inline)) int varint_get_fast(const uint8_t *in, size_t len,
                                                                 uint64_t *v)
{
    if (len < 10) /* near the end of the buffer: the bounds-checked loop */
        return gmt_varint_get(in, len, v);
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        uint8_t b = in[i];
        if (i == 9 && b > 1)
            return -1;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    return -1;
}

int gmt_varint_get(const uint8_t *in, size_t len, uint64_t *v)
{
    uint64_t x = 0;
    for (size_t i = 0; i < 10; i++) {
        if (i >= len)
            return 0;
        uint8_t b = in[i];
        /* The 10th byte holds bit 63 only: anything more overflows 64 bits. */
        if (i == 9 && b > 1)
            return -1;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return (int)i + 1;
        }
    }
    return -1;
}

void gmt_preamble_put(uint8_t out[GMT_PREAMBLE_LEN])
{
    memcpy(out, GMT_MAGIC, GMT_MAGIC_LEN);
    out[8] = (uint8_t)(GMT_VERSION_MAJOR & 0xff);
    out[9] = (uint8_t)(GMT_VERSION_MAJOR >> 8);
    out[10] = (uint8_t)(GMT_VERSION_MINOR & 0xff);
    out[11] = (uint8_t)(GMT_VERSION_MINOR >> 8);
}

gmt_status gmt_preamble_parse(const uint8_t *in, size_t len, uint16_t *major, uint16_t *minor)
{
    if (!in || len < GMT_PREAMBLE_LEN)
        return GMT_E_SHORT;
    if (memcmp(in, GMT_MAGIC, GMT_MAGIC_LEN) != 0)
        return GMT_E_MAGIC;
    uint16_t ma = (uint16_t)(in[8] | (in[9] << 8));
    uint16_t mi = (uint16_t)(in[10] | (in[11] << 8));
    if (major)
        *major = ma;
    if (minor)
        *minor = mi;
    /* Major 0 was never written by any version: the bytes are damaged. */
    if (ma == 0)
        return GMT_E_CORRUPT;
    if (ma > GMT_VERSION_MAJOR)
        return GMT_E_VERSION;
    return GMT_OK;
}

/* ---- encoder ------------------------------------------------------------ */

/* Output cursor: a field that does not fit marks the cursor bad and the
 * whole record is refused, so callers never see half a record. */
typedef struct ocur {
    uint8_t *p;
    uint8_t *end;
    int bad;
    struct ocur *t; /* where the time fields go: itself (1.x) or the time stream (2.0) */
} ocur;

static inline void put_v(ocur *c, uint64_t v)
{
    if (c->end - c->p >= 10) {
        while (v >= 0x80) {
            *c->p++ = (uint8_t)(v | 0x80);
            v >>= 7;
        }
        *c->p++ = (uint8_t)v;
        return;
    }
    size_t n = gmt_varint_put(c->p, (size_t)(c->end - c->p), v);
    if (!n) {
        c->bad = 1;
        c->p = c->end;
    } else {
        c->p += n;
    }
}

static inline void put_sv(ocur *c, int64_t v) { put_v(c, gmt_zigzag(v)); }

static inline void put_delta(ocur *c, uint64_t *last, uint64_t v)
{
    put_v(c, gmt_zigzag((int64_t)(v - *last)));
    *last = v;
}

static void put_raw(ocur *c, const void *src, size_t n)
{
    if ((size_t)(c->end - c->p) < n) {
        c->bad = 1;
        c->p = c->end;
        return;
    }
    if (n)
        memcpy(c->p, src, n);
    c->p += n;
}

/* Strings longer than GMT_MAX_STRING are cut to that length: a reader
 * rejects longer ones, and a cut command line beats a lost header. */
static uint32_t clamp_len(const gmt_bytes *b)
{
    if (!b->ptr)
        return 0;
    return b->len > GMT_MAX_STRING ? GMT_MAX_STRING : b->len;
}

static void put_bytes(ocur *c, const gmt_bytes *b)
{
    uint32_t n = clamp_len(b);
    put_v(c, n);
    put_raw(c, b->ptr, n);
}

static uint64_t tag_ndev(const gmt_tag *t)
{
    return t->ndev > GMT_MAX_TAG_DEVICES ? GMT_MAX_TAG_DEVICES : t->ndev;
}

/* GPU activity: start as a delta from the end of the previous GPU activity
 * (back-to-back kernels on a stream give small gaps), then the duration. */
static inline void put_gpu_time(ocur *c, gmt_deltas *s, uint64_t start, uint64_t end)
{
    put_delta(c->t, &s->last_gpu, start);
    put_v(c->t, end - start);
    s->last_gpu = end;
}

static void put_mem(ocur *c, gmt_deltas *s, const gmt_mem *m)
{
    put_v(c, m->device);
    put_delta(c, &s->last_addr, m->address);
    put_v(c, m->bytes);
    put_v(c, m->kind);
    put_v(c, m->source);
    put_v(c, m->flags);
    put_delta(c, &s->last_corr, m->corr);
    put_v(c, m->stream);
    put_v(c, m->tid);
    put_delta(c, &s->last_rid, m->range);
    put_delta(c, &s->last_seq, m->seq);
    put_delta(c, &s->last_step, m->step);
    put_delta(c->t, &s->last_ts, m->ts);
}

static void put_kernel(ocur *c, gmt_deltas *s, const gmt_kernel *k)
{
    put_v(c, k->device);
    put_v(c, k->stream);
    put_delta(c, &s->last_corr, k->corr);
    put_v(c, k->name);
    for (int i = 0; i < 3; i++)
        put_v(c, k->grid[i]);
    for (int i = 0; i < 3; i++)
        put_v(c, k->block[i]);
    put_v(c, k->registers);
    put_v(c, k->static_smem);
    put_v(c, k->dynamic_smem);
    put_v(c, k->local_mem);
    put_v(c, k->tid);
    put_delta(c, &s->last_seq, k->seq);
    put_delta(c, &s->last_rid, k->range);
    put_delta(c, &s->last_step, k->step);
    put_gpu_time(c, s, k->start, k->end);
    /* 1.1: flags after the times, only when set, so a GPU-timed kernel
     * keeps its 1.0 bytes (and its size) */
    if (k->flags)
        put_v(c, k->flags);
}

/* ALLOC_REF / FREE_REF (1.2): the context's index instead of device, kind,
 * source, flags, stream and tid; the rest as in put_mem. */
static void put_mem_ref(ocur *c, gmt_deltas *s, const gmt_mem *m, uint64_t idx)
{
    put_v(c, idx);
    put_delta(c, &s->last_addr, m->address);
    put_v(c, m->bytes);
    put_delta(c, &s->last_corr, m->corr);
    put_delta(c, &s->last_rid, m->range);
    put_delta(c, &s->last_seq, m->seq);
    put_delta(c, &s->last_step, m->step);
    put_delta(c->t, &s->last_ts, m->ts);
}

/* KERNEL_REF (1.2): the shape's index instead of name, grid, block,
 * registers, shared and local memory; flags always present, before the
 * times so that they stay last. */
static void put_kernel_ref(ocur *c, gmt_deltas *s, const gmt_kernel *k, uint64_t idx)
{
    put_v(c, idx);
    put_v(c, k->device);
    put_v(c, k->stream);
    put_delta(c, &s->last_corr, k->corr);
    put_v(c, k->tid);
    put_delta(c, &s->last_seq, k->seq);
    put_delta(c, &s->last_rid, k->range);
    put_delta(c, &s->last_step, k->step);
    put_v(c, k->flags);
    put_gpu_time(c, s, k->start, k->end);
}

static void put_copy(ocur *c, gmt_deltas *s, const gmt_copy *k)
{
    put_v(c, k->device);
    put_v(c, k->stream);
    put_delta(c, &s->last_corr, k->corr);
    put_v(c, k->bytes);
    put_v(c, k->copy_kind);
    put_v(c, k->src_kind);
    put_v(c, k->dst_kind);
    put_v(c, k->tid);
    put_delta(c, &s->last_step, k->step);
    put_gpu_time(c, s, k->start, k->end);
}

/* BLOCK (2.1): its own delta state and its time inline, so a 2.0 reader
 * that skips it stays in step. */
static void put_block(ocur *c, gmt_deltas *s, const gmt_block *b)
{
    put_v(c, b->action);
    put_v(c, b->device);
    put_delta(c, &s->last_baddr, b->address);
    put_v(c, b->bytes);
    put_v(c, b->stream);
    put_v(c, b->tid);
    put_v(c, b->range);
    put_v(c, b->seq);
    put_v(c, b->step);
    put_v(c, b->flags);
    put_v(c, b->pool);
    put_delta(c, &s->last_bts, b->ts);
    put_v(c, b->requested);
    if (b->frame || b->stack) /* 2.3, optional */
        put_v(c, b->frame);
    if (b->stack)
        put_v(c, b->stack);
}

/* OOM and LIVE (2.2): plain varints only, times included, no delta
 * state: a reader that skips them keeps its place. */
static void put_oom(ocur *c, const gmt_oom *o)
{
    const uint64_t v[] = { o->ts, o->cause, o->dump, o->device, o->bytes, o->stream, o->tid,
                           o->range, o->op, o->api, o->status, o->step, o->flags, o->driver_free,
                           o->driver_total, o->fw_allocated, o->fw_reserved, o->live_count,
                           o->live_bytes, o->first_step, o->ring_bytes };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        put_v(c, v[i]);
}

static void put_live(ocur *c, const gmt_mem *m)
{
    const uint64_t v[] = { m->ts, m->device, m->address, m->bytes, m->kind, m->source, m->flags,
                           m->corr, m->stream, m->tid, m->range, m->seq, m->step };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        put_v(c, v[i]);
}

static void put_payload(ocur *c, gmt_deltas *s, const gmt_record *r)
{
    switch (r->type) {
    case GMT_REC_HEADER: {
        const gmt_header *h = &r->u.header;
        put_v(c, h->pid);
        put_v(c, h->ppid);
        put_v(c, h->start_unix_ns);
        put_v(c, h->start_ts);
        put_sv(c, h->rank);
        put_sv(c, h->local_rank);
        put_sv(c, h->world_size);
        put_v(c, h->cupti_version);
        put_v(c, h->driver_version);
        put_v(c, h->flags);
        put_bytes(c, &h->host);
        put_bytes(c, &h->cmdline);
        put_bytes(c, &h->config);
        put_bytes(c, &h->profiler_version);
        break;
    }
    case GMT_REC_DEVICE: {
        const gmt_device *d = &r->u.device;
        put_v(c, d->device);
        put_v(c, d->total_mem);
        put_v(c, d->sm_count);
        put_v(c, d->cc_major);
        put_v(c, d->cc_minor);
        put_raw(c, d->uuid, 16);
        put_bytes(c, &d->name);
        break;
    }
    case GMT_REC_STRING:
        put_v(c, r->u.string.id);
        put_bytes(c, &r->u.string.str);
        break;
    case GMT_REC_ALLOC:
    case GMT_REC_FREE:
        put_mem(c, s, &r->u.mem);
        break;
    case GMT_REC_KERNEL:
        put_kernel(c, s, &r->u.kernel);
        break;
    case GMT_REC_MEMCPY:
    case GMT_REC_MEMSET:
        put_copy(c, s, &r->u.copy);
        break;
    case GMT_REC_RANGE_BEGIN:
    case GMT_REC_RANGE_END: {
        const gmt_range *g = &r->u.range;
        put_v(c, g->tid);
        put_delta(c, &s->last_rid, g->id);
        if (r->type == GMT_REC_RANGE_BEGIN) {
            put_delta(c, &s->last_rid, g->parent);
            s->last_rid = g->id; /* the open range is what follows refers to */
            put_v(c, g->name);
        }
        put_delta(c->t, &s->last_ts, g->ts);
        if (r->type == GMT_REC_RANGE_BEGIN && g->kind) /* 2.3, optional: last, after a 1.x time */
            put_v(c, g->kind);
        break;
    }
    case GMT_REC_MARK:
        put_v(c, r->u.mark.tid);
        put_v(c, r->u.mark.name);
        put_delta(c->t, &s->last_ts, r->u.mark.ts);
        break;
    case GMT_REC_TAG: {
        const gmt_tag *t = &r->u.tag;
        uint64_t n = tag_ndev(t);
        put_v(c, t->name);
        put_delta(c, &s->last_step, t->step);
        put_v(c, n);
        for (uint64_t i = 0; i < n; i++) {
            put_v(c, t->dev[i].device);
            put_v(c, t->dev[i].live_bytes);
            put_v(c, t->dev[i].driver_used);
            put_v(c, t->dev[i].driver_free);
            put_v(c, t->dev[i].driver_total);
        }
        put_delta(c->t, &s->last_ts, t->ts);
        for (uint64_t i = 0; t->has_framework && i < n; i++) {
            put_v(c, t->dev[i].fw_allocated);
            put_v(c, t->dev[i].fw_reserved);
        }
        break;
    }
    case GMT_REC_STEP:
        put_delta(c, &s->last_step, r->u.step.step);
        put_v(c, r->u.step.phase);
        put_v(c, r->u.step.source);
        put_delta(c->t, &s->last_ts, r->u.step.ts);
        break;
    case GMT_REC_WINDOW_BEGIN:
        put_v(c, r->u.wbegin.window);
        put_delta(c, &s->last_step, r->u.wbegin.step);
        put_v(c, r->u.wbegin.baseline_count);
        put_v(c, r->u.wbegin.baseline_bytes);
        put_delta(c->t, &s->last_ts, r->u.wbegin.ts);
        break;
    case GMT_REC_WINDOW_END:
        put_v(c, r->u.wend.window);
        put_delta(c, &s->last_step, r->u.wend.step);
        put_v(c, r->u.wend.reason);
        put_delta(c->t, &s->last_ts, r->u.wend.ts);
        break;
    case GMT_REC_MEMSAMPLE:
        put_v(c, r->u.sample.device);
        put_v(c, r->u.sample.used);
        put_v(c, r->u.sample.free_);
        put_v(c, r->u.sample.total);
        put_delta(c->t, &s->last_ts, r->u.sample.ts);
        break;
    case GMT_REC_STATS: {
        const gmt_stats *t = &r->u.stats;
        put_v(c, t->records_written);
        put_v(c, t->dropped_cupti);
        put_v(c, t->dropped_writer);
        put_v(c, t->host_time_ns);
        put_v(c, t->own_device_bytes);
        put_v(c, t->own_host_bytes);
        put_v(c, t->bytes_written);
        put_v(c, t->unmatched_corr);
        put_delta(c->t, &s->last_ts, t->ts);
        if (t->outside_window) /* 2.2, optional */
            put_v(c, t->outside_window);
        break;
    }
    case GMT_REC_TRAILER:
        put_v(c, r->u.trailer.records);
        put_v(c, r->u.trailer.status);
        put_delta(c->t, &s->last_ts, r->u.trailer.ts);
        break;
    case GMT_REC_BLOCK:
        put_block(c, s, &r->u.block);
        break;
    case GMT_REC_OOM:
        put_oom(c, &r->u.oom);
        break;
    case GMT_REC_LIVE:
        put_live(c, &r->u.live);
        break;
    default:
        c->bad = 1;
        break;
    }
}

/* 1 type byte + 3 length bytes (payloads stay below 2^21) + fields. */
#define FIXED_BOUND(nfields) (4u + 10u * (nfields))

size_t gmt_encode_bound(const gmt_record *r)
{
    if (!r)
        return 0;
    switch (r->type) {
    case GMT_REC_HEADER: {
        const gmt_header *h = &r->u.header;
        return FIXED_BOUND(14) + clamp_len(&h->host) + clamp_len(&h->cmdline) + clamp_len(&h->config) +
               clamp_len(&h->profiler_version);
    }
    case GMT_REC_DEVICE:
        return FIXED_BOUND(6) + 16 + clamp_len(&r->u.device.name);
    case GMT_REC_STRING:
        return FIXED_BOUND(2) + clamp_len(&r->u.string.str);
    case GMT_REC_TAG:
        return FIXED_BOUND(4 + 7 * tag_ndev(&r->u.tag));
    default:
        return GMT_ENCODE_MAX;
    }
}

size_t gmt_encode(gmt_codec *c, const gmt_record *r, uint8_t *out, size_t cap)
{
    if (!c || !r || !out || cap < 2 || !gmt_type_is_record((unsigned)r->type))
        return 0;
    /* 1.2: a KERNEL, ALLOC or FREE whose shape or context is in the frame's
     * table goes out as its _REF; otherwise as itself, and its shape or
     * context joins the table if there is room (the decoder's rule,
     * gmt_tab_note).  The table changes only once the record fits. */
    uint64_t key[GMT_SHAPE_WORDS];
    gmt_itab *tab = NULL;
    uint64_t *ent = NULL;
    unsigned words = 0;
    uint32_t where = 0;
    int idx = -1;
    uint8_t wire = (uint8_t)r->type;
    if (r->type == GMT_REC_KERNEL) {
        gmt_shape_of(&r->u.kernel, key);
        tab = &c->shapes, ent = c->shape, words = GMT_SHAPE_WORDS;
        idx = gmt_tab_find(tab, ent, words, key, &where);
        if (idx >= 0)
            wire = GMT_WIRE_KERNEL_REF;
    } else if (r->type == GMT_REC_ALLOC || r->type == GMT_REC_FREE) {
        gmt_ctx_of(&r->u.mem, key);
        tab = &c->ctxs, ent = c->ctx, words = GMT_CTX_WORDS;
        idx = gmt_tab_find(tab, ent, words, key, &where);
        if (idx >= 0)
            wire = r->type == GMT_REC_ALLOC ? GMT_WIRE_ALLOC_REF : GMT_WIRE_FREE_REF;
    }
    /* Deltas run in place; the state before is put back if the record does
     * not fit. (Running them on a copy and storing it back stalled every
     * record: the copy's 16-byte loads waited on the 8-byte stores just
     * made to it, about a sixth of the encoder's time.) */
    gmt_deltas *s = &c->d;
    const gmt_deltas before = c->d;
    out[0] = wire;
    /* Most payloads are < 128 bytes: encode them after a 1-byte length and
     * move them only in the rare case of a longer one. */
    ocur cur = { out + 2, out + cap, 0, NULL };
    ocur tcur = { c->tsink ? c->tsink + c->tsink_len : NULL, c->tsink ? c->tsink + c->tsink_cap : NULL, 0, NULL };
    tcur.t = &tcur;
    cur.t = c->tsink ? &tcur : &cur;
    if (wire == GMT_WIRE_KERNEL_REF)
        put_kernel_ref(&cur, s, &r->u.kernel, (uint64_t)idx);
    else if (idx >= 0)
        put_mem_ref(&cur, s, &r->u.mem, (uint64_t)idx);
    else
        put_payload(&cur, s, r);
    size_t plen = (size_t)(cur.p - (out + 2));
    size_t lb = varint_len(plen);
    if (cur.bad || tcur.bad || 1 + lb + plen > cap) {
        c->d = before;
        return 0;
    }
    if (lb > 1)
        memmove(out + 1 + lb, out + 2, plen);
    gmt_varint_put(out + 1, lb, plen);
    if (c->tsink)
        c->tsink_len = (size_t)(tcur.p - c->tsink);
    if (tab && idx < 0 && tab->n < GMT_TAB_CAP)
        gmt_tab_add(tab, ent, words, key, where);
    return 1 + lb + plen;
}

/* ---- decoder ------------------------------------------------------------ */

/* Input cursor over one payload.  `end` is the payload's end; `lim` is the
 * end of the caller's whole input (>= end).  A multi-byte varint is decoded
 * with the unchecked loop whenever 10 bytes remain before `lim`, even when
 * fewer remain in the payload: the bytes read are the caller's, and a varint
 * that runs past `end` is then refused all the same (p > end below).  Without
 * this, every field in the last 10 bytes of a payload -- the timestamps, which
 * are the multi-byte ones -- took the bounds-checked loop. */
typedef struct icur {
    const uint8_t *p;
    const uint8_t *end;
    const uint8_t *lim;
    int bad;
    struct icur *t;
} icur;

static inline __attribute__((always_inline)) void cur_bad(icur *c)
{
    /* Inside a complete payload a cut varint is as bad as a malformed one. */
    c->bad = 1;
    c->p = c->end;
}

static uint64_t get_v_slow(icur *c)
{
    uint64_t v = 0;
    int n = gmt_varint_get(c->p, (size_t)(c->end - c->p), &v);
    if (n <= 0) {
        cur_bad(c);
        return 0;
    }
    c->p += n;
    return v;
}

static inline __attribute__((always_inline)) uint64_t get_v(icur *c)
{
    const uint8_t *p = c->p;
    if (__builtin_expect(p < c->end && *p < 0x80, 1)) {
        c->p = p + 1;
        return *p;
    }
    if (c->lim - p < 10 || p >= c->end)
        return get_v_slow(c);
    /* At least 10 readable bytes, the first with its high bit set. */
    uint64_t x = *p & 0x7f;
    for (int i = 1; i < 10; i++) {
        uint8_t b = p[i];
        if (i == 9 && b > 1)
            break;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            p += i + 1;
            if (__builtin_expect(p > c->end, 0))
                break;
            c->p = p;
            return x;
        }
    }
    cur_bad(c);
    return 0;
}

static inline int64_t get_sv(icur *c) { return gmt_unzigzag(get_v(c)); }

static inline uint64_t get_delta(icur *c, uint64_t *last)
{
    uint64_t v = *last + (uint64_t)gmt_unzigzag(get_v(c));
    *last = v;
    return v;
}

static void get_bytes(icur *c, gmt_bytes *b)
{
    uint64_t n = get_v(c);
    if (c->bad || n > GMT_MAX_STRING || n > (uint64_t)(c->end - c->p)) {
        c->bad = 1;
        c->p = c->end;
        b->ptr = "";
        b->len = 0;
        return;
    }
    b->ptr = (const char *)c->p;
    b->len = (uint32_t)n;
    c->p += n;
}

static inline void get_gpu_time(icur *c, gmt_deltas *s, uint64_t *start, uint64_t *end)
{
    *start = get_delta(c->t, &s->last_gpu);
    *end = *start + get_v(c->t);
    s->last_gpu = *end;
}

static void get_mem(icur *c, gmt_deltas *s, gmt_mem *m)
{
    m->device = get_v(c);
    m->address = get_delta(c, &s->last_addr);
    m->bytes = get_v(c);
    m->kind = get_v(c);
    m->source = get_v(c);
    m->flags = get_v(c);
    m->corr = get_delta(c, &s->last_corr);
    m->stream = get_v(c);
    m->tid = get_v(c);
    m->range = get_delta(c, &s->last_rid);
    m->seq = get_delta(c, &s->last_seq);
    m->step = get_delta(c, &s->last_step);
    m->ts = get_delta(c->t, &s->last_ts);
}

static void get_kernel(icur *c, gmt_deltas *s, gmt_kernel *k)
{
    k->device = get_v(c);
    k->stream = get_v(c);
    k->corr = get_delta(c, &s->last_corr);
    k->name = get_v(c);
    for (int i = 0; i < 3; i++)
        k->grid[i] = get_v(c);
    for (int i = 0; i < 3; i++)
        k->block[i] = get_v(c);
    k->registers = get_v(c);
    k->static_smem = get_v(c);
    k->dynamic_smem = get_v(c);
    k->local_mem = get_v(c);
    k->tid = get_v(c);
    k->seq = get_delta(c, &s->last_seq);
    k->range = get_delta(c, &s->last_rid);
    k->step = get_delta(c, &s->last_step);
    get_gpu_time(c, s, &k->start, &k->end);
    /* 1.1: optional trailing flags (absent: 0). Unknown bits are kept;
     * bytes after it belong to a newer minor version and are ignored. */
    k->flags = c->p < c->end ? get_v(c) : 0;
}

/* ALLOC_REF / FREE_REF and KERNEL_REF (1.2), as put_mem_ref and
 * put_kernel_ref write them; the index is checked against the table by the
 * caller, once the payload is known to be whole. */
static uint64_t get_mem_ref(icur *c, gmt_deltas *s, gmt_mem *m)
{
    uint64_t idx = get_v(c);
    m->address = get_delta(c, &s->last_addr);
    m->bytes = get_v(c);
    m->corr = get_delta(c, &s->last_corr);
    m->range = get_delta(c, &s->last_rid);
    m->seq = get_delta(c, &s->last_seq);
    m->step = get_delta(c, &s->last_step);
    m->ts = get_delta(c->t, &s->last_ts);
    return idx;
}

static uint64_t get_kernel_ref(icur *c, gmt_deltas *s, gmt_kernel *k)
{
    uint64_t idx = get_v(c);
    k->device = get_v(c);
    k->stream = get_v(c);
    k->corr = get_delta(c, &s->last_corr);
    k->tid = get_v(c);
    k->seq = get_delta(c, &s->last_seq);
    k->range = get_delta(c, &s->last_rid);
    k->step = get_delta(c, &s->last_step);
    k->flags = get_v(c);
    get_gpu_time(c, s, &k->start, &k->end);
    return idx;
}

static void get_copy(icur *c, gmt_deltas *s, gmt_copy *k)
{
    k->device = get_v(c);
    k->stream = get_v(c);
    k->corr = get_delta(c, &s->last_corr);
    k->bytes = get_v(c);
    k->copy_kind = get_v(c);
    k->src_kind = get_v(c);
    k->dst_kind = get_v(c);
    k->tid = get_v(c);
    k->step = get_delta(c, &s->last_step);
    get_gpu_time(c, s, &k->start, &k->end);
}

/* The header: who wrote the trace, where and how. */
static inline void get_header(icur *c, gmt_header *h)
{
    h->pid = get_v(c);
    h->ppid = get_v(c);
    h->start_unix_ns = get_v(c);
    h->start_ts = get_v(c);
    h->rank = get_sv(c);
    h->local_rank = get_sv(c);
    h->world_size = get_sv(c);
    h->cupti_version = get_v(c);
    h->driver_version = get_v(c);
    h->flags = get_v(c);
    get_bytes(c, &h->host);
    get_bytes(c, &h->cmdline);
    get_bytes(c, &h->config);
    get_bytes(c, &h->profiler_version);
}

/* A device: its size, SM count, compute capability, UUID and name. */
static inline void get_device(icur *c, gmt_device *d)
{
    d->device = get_v(c);
    d->total_mem = get_v(c);
    d->sm_count = get_v(c);
    d->cc_major = get_v(c);
    d->cc_minor = get_v(c);
    if (c->end - c->p < 16) {
        c->bad = 1;
        c->p = c->end;
        memset(d->uuid, 0, 16);
    } else {
        memcpy(d->uuid, c->p, 16);
        c->p += 16;
    }
    get_bytes(c, &d->name);
}

/* A range begin (with its parent and name) or end. */
static inline void get_range(icur *c, gmt_deltas *s, int begin, gmt_range *g)
{
    g->tid = get_v(c);
    g->id = get_delta(c, &s->last_rid);
    if (begin) {
        g->parent = get_delta(c, &s->last_rid);
        s->last_rid = g->id;
        g->name = get_v(c);
    } else {
        g->parent = 0;
        g->name = 0;
    }
    g->ts = get_delta(c->t, &s->last_ts);
    /* 2.3: the kind, when the payload goes on (after a 1.x payload's time) */
    g->kind = begin && c->p < c->end ? get_v(c) : 0;
}

/* A tag: its step and, per device, the live and driver views. */
static inline void get_tag(icur *c, gmt_deltas *s, gmt_tag *t)
{
    t->name = get_v(c);
    t->step = get_delta(c, &s->last_step);
    t->ndev = get_v(c);
    if (t->ndev > GMT_MAX_TAG_DEVICES) {
        c->bad = 1;
        t->ndev = 0;
        return;
    }
    for (uint64_t i = 0; i < t->ndev; i++) {
        t->dev[i].device = get_v(c);
        t->dev[i].live_bytes = get_v(c);
        t->dev[i].driver_used = get_v(c);
        t->dev[i].driver_free = get_v(c);
        t->dev[i].driver_total = get_v(c);
        t->dev[i].fw_allocated = t->dev[i].fw_reserved = 0;
    }
    t->ts = get_delta(c->t, &s->last_ts);
    /* 2.1: the framework's view, when the payload goes on */
    t->has_framework = t->ndev && c->p < c->end;
    for (uint64_t i = 0; t->has_framework && i < t->ndev; i++) {
        t->dev[i].fw_allocated = get_v(c);
        t->dev[i].fw_reserved = get_v(c);
    }
}

/* The profiler's own counts. */
static inline void get_stats(icur *c, gmt_deltas *s, gmt_stats *t)
{
    t->records_written = get_v(c);
    t->dropped_cupti = get_v(c);
    t->dropped_writer = get_v(c);
    t->host_time_ns = get_v(c);
    t->own_device_bytes = get_v(c);
    t->own_host_bytes = get_v(c);
    t->bytes_written = get_v(c);
    t->unmatched_corr = get_v(c);
    t->ts = get_delta(c->t, &s->last_ts);
    t->outside_window = c->p < c->end ? get_v(c) : 0; /* 2.2: when the payload goes on */
}

/* An allocator block event. */
static inline void get_block(icur *c, gmt_deltas *s, gmt_block *b)
{
    b->action = get_v(c);
    b->device = get_v(c);
    b->address = get_delta(c, &s->last_baddr);
    b->bytes = get_v(c);
    b->stream = get_v(c);
    b->tid = get_v(c);
    b->range = get_v(c);
    b->seq = get_v(c);
    b->step = get_v(c);
    b->flags = get_v(c);
    b->pool = get_v(c);
    b->ts = get_delta(c, &s->last_bts);
    b->requested = get_v(c);
    b->frame = c->p < c->end ? get_v(c) : 0; /* 2.3: when the payload goes on */
    b->stack = c->p < c->end ? get_v(c) : 0;
}

/* The failure of a flight recorder's dump (2.2). */
static void get_oom(icur *c, gmt_oom *o)
{
    uint64_t *v[] = { &o->ts, &o->cause, &o->dump, &o->device, &o->bytes, &o->stream, &o->tid,
                      &o->range, &o->op, &o->api, &o->status, &o->step, &o->flags, &o->driver_free,
                      &o->driver_total, &o->fw_allocated, &o->fw_reserved, &o->live_count,
                      &o->live_bytes, &o->first_step, &o->ring_bytes };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        *v[i] = get_v(c);
}

static void get_live(icur *c, gmt_mem *m)
{
    uint64_t *v[] = { &m->ts, &m->device, &m->address, &m->bytes, &m->kind, &m->source, &m->flags,
                      &m->corr, &m->stream, &m->tid, &m->range, &m->seq, &m->step };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        *v[i] = get_v(c);
}

static void get_payload(icur *c, gmt_deltas *s, gmt_record *r)
{
    switch (r->type) {
    case GMT_REC_HEADER:
        get_header(c, &r->u.header);
        break;
    case GMT_REC_DEVICE:
        get_device(c, &r->u.device);
        break;
    case GMT_REC_STRING:
        r->u.string.id = get_v(c);
        get_bytes(c, &r->u.string.str);
        break;
    case GMT_REC_ALLOC:
    case GMT_REC_FREE:
        get_mem(c, s, &r->u.mem);
        break;
    case GMT_REC_KERNEL:
        get_kernel(c, s, &r->u.kernel);
        break;
    case GMT_REC_MEMCPY:
    case GMT_REC_MEMSET:
        get_copy(c, s, &r->u.copy);
        break;
    case GMT_REC_RANGE_BEGIN:
    case GMT_REC_RANGE_END:
        get_range(c, s, r->type == GMT_REC_RANGE_BEGIN, &r->u.range);
        break;
    case GMT_REC_MARK:
        r->u.mark.tid = get_v(c);
        r->u.mark.name = get_v(c);
        r->u.mark.ts = get_delta(c->t, &s->last_ts);
        break;
    case GMT_REC_TAG:
        get_tag(c, s, &r->u.tag);
        break;
    case GMT_REC_STEP:
        r->u.step.step = get_delta(c, &s->last_step);
        r->u.step.phase = get_v(c);
        r->u.step.source = get_v(c);
        r->u.step.ts = get_delta(c->t, &s->last_ts);
        break;
    case GMT_REC_WINDOW_BEGIN:
        r->u.wbegin.window = get_v(c);
        r->u.wbegin.step = get_delta(c, &s->last_step);
        r->u.wbegin.baseline_count = get_v(c);
        r->u.wbegin.baseline_bytes = get_v(c);
        r->u.wbegin.ts = get_delta(c->t, &s->last_ts);
        break;
    case GMT_REC_WINDOW_END:
        r->u.wend.window = get_v(c);
        r->u.wend.step = get_delta(c, &s->last_step);
        r->u.wend.reason = get_v(c);
        r->u.wend.ts = get_delta(c->t, &s->last_ts);
        break;
    case GMT_REC_MEMSAMPLE:
        r->u.sample.device = get_v(c);
        r->u.sample.used = get_v(c);
        r->u.sample.free_ = get_v(c);
        r->u.sample.total = get_v(c);
        r->u.sample.ts = get_delta(c->t, &s->last_ts);
        break;
    case GMT_REC_STATS:
        get_stats(c, s, &r->u.stats);
        break;
    case GMT_REC_TRAILER:
        r->u.trailer.records = get_v(c);
        r->u.trailer.status = get_v(c);
        r->u.trailer.ts = get_delta(c->t, &s->last_ts);
        break;
    case GMT_REC_BLOCK:
        get_block(c, s, &r->u.block);
        break;
    case GMT_REC_OOM:
        get_oom(c, &r->u.oom);
        break;
    case GMT_REC_LIVE:
        get_live(c, &r->u.live);
        break;
    default:
        c->bad = 1;
        break;
    }
}

gmt_status gmt_decode(gmt_codec *c, const uint8_t *in, size_t len, gmt_record *r, size_t *used)
{
    if (!c || !r || !used || (!in && len))
        return GMT_E_ARG;
    if (len < 1)
        return GMT_E_SHORT;
    uint8_t type = in[0];
    /* Type 0 is reserved and never written: it is how zeroed bytes look. */
    if (type == 0)
        return GMT_E_CORRUPT;
    uint64_t plen = 0;
    int lb;
    if (len >= 2 && in[1] < 0x80) { /* payloads below 128 bytes: nearly all */
        plen = in[1];
        lb = 1;
    } else {
        lb = varint_get_fast(in + 1, len - 1, &plen);
    }
    if (lb < 0)
        return GMT_E_CORRUPT;
    if (lb == 0)
        return GMT_E_SHORT;
    if (plen > GMT_MAX_PAYLOAD)
        return GMT_E_CORRUPT;
    size_t total = 1 + (size_t)lb + (size_t)plen;
    if (total > len)
        return GMT_E_SHORT;
    if (type >= GMT_WIRE_TYPE_MAX_) {
        *used = total;
        return GMT_E_TYPE;
    }
    if (len >= GMT_FAST_MARGIN && lb == 1) {
        size_t n = gmt_decode_hot_any(c, in, r);
        if (n == total)
            return *used = total, GMT_OK;
        if (n == GMT_FAST_BAD)
            return GMT_E_CORRUPT;
    }
    /* The fields update *c in place; a copy undoes them if the record turns
     * out malformed.  (Decoding into a local copy and storing it back made
     * the compiler reload the copy with 16-byte loads right after its
     * 8-byte stores: a store-forwarding stall on every record.) */
    gmt_deltas saved = c->d;
    icur cur = { in + 1 + lb, in + total, in + len, 0, NULL };
    icur tcur = { c->tp, c->tend, c->tend, 0, NULL };
    tcur.t = &tcur;
    cur.t = c->tsep ? &tcur : &cur;
    if (type == GMT_WIRE_KERNEL_REF) {
        r->type = GMT_REC_KERNEL;
        uint64_t idx = get_kernel_ref(&cur, &c->d, &r->u.kernel);
        if (!cur.bad && idx >= c->shapes.n)
            cur.bad = 1; /* names no shape of this frame */
        if (!cur.bad)
            gmt_shape_put(c, idx, &r->u.kernel);
    } else if (type == GMT_WIRE_ALLOC_REF || type == GMT_WIRE_FREE_REF) {
        r->type = type == GMT_WIRE_ALLOC_REF ? GMT_REC_ALLOC : GMT_REC_FREE;
        uint64_t idx = get_mem_ref(&cur, &c->d, &r->u.mem);
        if (!cur.bad && idx >= c->ctxs.n)
            cur.bad = 1;
        if (!cur.bad)
            gmt_ctx_put(c, idx, &r->u.mem);
    } else {
        r->type = (gmt_type)type;
        get_payload(&cur, &c->d, r);
    }
    if (cur.bad || tcur.bad) {
        c->d = saved;
        return GMT_E_CORRUPT;
    }
    if (c->tsep)
        c->tp = tcur.p;
    /* A good plain record's shape or context joins its table (the rule of
     * codec_fast.h, which the encoder mirrors). */
    if (type == GMT_REC_KERNEL)
        gmt_note_shape(c, &r->u.kernel);
    else if (type == GMT_REC_ALLOC || type == GMT_REC_FREE)
        gmt_note_ctx(c, &r->u.mem);
    /* Bytes after the known fields belong to a newer minor version. */
    *used = total;
    return GMT_OK;
}
