/*
 * Helpers shared by the tests of common/ (the checks are tests/check.h):
 * a deterministic PRNG, random records of every type with full-range and
 * edge values, field-by-field record comparison, and in-memory traces.
 * Header-only (static functions) so each test is one .c file.
 */
#ifndef GMT_TESTS_TUTIL_H
#define GMT_TESTS_TUTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gmt_io.h"
#include "synth.h"

/* A test that goes wrong in a loop stops after 20 failures. */
#define TC_MAX_FAILURES 20
#include "../check.h"


/* ---- PRNG (splitmix64: any seed, including 0) ---------------------------- */

typedef struct tu_rng {
    uint64_t s;
} tu_rng;

static inline uint64_t tu_next(tu_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t tu_below(tu_rng *r, uint64_t n) { return n ? tu_next(r) % n : 0; }

/* A value from the whole 64-bit range, biased to the edges a codec gets
 * wrong: 0, 1, 2^63, UINT64_MAX, varint length boundaries, small numbers. */
static inline uint64_t tu_u64(tu_rng *r)
{
    static const uint64_t edges[] = {
        0, 1, 2, 127, 128, 255, 16383, 16384, (1ull << 21) - 1, 1ull << 21, (1ull << 32) - 1, 1ull << 32,
        (1ull << 56) - 1, 1ull << 56, (1ull << 63) - 1, 1ull << 63, (1ull << 63) + 1, UINT64_MAX - 1, UINT64_MAX,
    };
    switch (tu_below(r, 4)) {
    case 0:
        return edges[tu_below(r, sizeof edges / sizeof edges[0])];
    case 1:
        return tu_below(r, 300);
    case 2:
        return tu_next(r) >> tu_below(r, 64);
    default:
        return tu_next(r);
    }
}

/* ---- random records ----------------------------------------------------- */

/* Storage for the strings of generated records: each record's strings live
 * until the next tu_random_record call on the same pool slot. */
#define TU_POOL_BYTES (4u * (GMT_MAX_STRING + 1u))

typedef struct tu_strpool {
    char buf[TU_POOL_BYTES];
    size_t used;
} tu_strpool;

static inline gmt_bytes tu_str(tu_rng *r, tu_strpool *p)
{
    size_t len;
    switch (tu_below(r, 6)) {
    case 0:
        len = 0;
        break;
    case 1:
        len = GMT_MAX_STRING;
        break;
    case 2:
        len = tu_below(r, 2000);
        break;
    default:
        len = tu_below(r, 40);
        break;
    }
    if (p->used + len > sizeof p->buf)
        len = 0;
    char *s = p->buf + p->used;
    for (size_t i = 0; i < len; i++)
        s[i] = (char)tu_next(r); /* any byte, NUL included */
    p->used += len;
    gmt_bytes b = { len ? s : "", (uint32_t)len };
    return b;
}

/* Fills *rec with a random record of `type` (0: a random known type).  The
 * fields a type does not carry (RANGE_END's parent and name) are 0, as the
 * decoder returns them. */
static inline void tu_random_record(tu_rng *r, tu_strpool *p, gmt_type type, gmt_record *rec)
{
    p->used = 0;
    if (type == 0)
        type = (gmt_type)(1 + tu_below(r, GMT_REC_TYPE_MAX_ - 1));
    memset(rec, 0, sizeof *rec);
    rec->type = type;
    switch (type) {
    case GMT_REC_HEADER: {
        gmt_header *h = &rec->u.header;
        h->pid = tu_u64(r);
        h->ppid = tu_u64(r);
        h->start_unix_ns = tu_u64(r);
        h->start_ts = tu_u64(r);
        h->rank = (int64_t)tu_u64(r);
        h->local_rank = (int64_t)tu_u64(r);
        h->world_size = (int64_t)tu_u64(r);
        h->cupti_version = tu_u64(r);
        h->driver_version = tu_u64(r);
        h->flags = tu_u64(r);
        h->host = tu_str(r, p);
        h->cmdline = tu_str(r, p);
        h->config = tu_str(r, p);
        h->profiler_version = tu_str(r, p);
        break;
    }
    case GMT_REC_DEVICE: {
        gmt_device *d = &rec->u.device;
        d->device = tu_u64(r);
        d->total_mem = tu_u64(r);
        d->sm_count = tu_u64(r);
        d->cc_major = tu_u64(r);
        d->cc_minor = tu_u64(r);
        for (int i = 0; i < 16; i++)
            d->uuid[i] = (uint8_t)tu_next(r);
        d->name = tu_str(r, p);
        break;
    }
    case GMT_REC_STRING:
        rec->u.string.id = tu_u64(r);
        rec->u.string.str = tu_str(r, p);
        break;
    case GMT_REC_ALLOC:
    case GMT_REC_FREE: {
        gmt_mem *m = &rec->u.mem;
        uint64_t *f[] = { &m->ts, &m->device, &m->address, &m->bytes, &m->kind, &m->source, &m->flags,
                          &m->corr, &m->stream, &m->tid, &m->range, &m->seq, &m->step };
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            *f[i] = tu_u64(r);
        break;
    }
    case GMT_REC_KERNEL: {
        gmt_kernel *k = &rec->u.kernel;
        uint64_t *f[] = { &k->start, &k->end, &k->device, &k->stream, &k->corr, &k->name, &k->grid[0],
                          &k->grid[1], &k->grid[2], &k->block[0], &k->block[1], &k->block[2], &k->registers,
                          &k->static_smem, &k->dynamic_smem, &k->local_mem, &k->tid, &k->seq, &k->range,
                          &k->step };
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            *f[i] = tu_u64(r);
        /* the 1.1 flags, set on about half of them (derived, so the random
         * streams of the other fields are what they were before 1.1) */
        k->flags = (k->seq >> 7) & 3;
        break;
    }
    case GMT_REC_MEMCPY:
    case GMT_REC_MEMSET: {
        gmt_copy *c = &rec->u.copy;
        uint64_t *f[] = { &c->start, &c->end, &c->device, &c->stream, &c->corr, &c->bytes,
                          &c->copy_kind, &c->src_kind, &c->dst_kind, &c->tid, &c->step };
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            *f[i] = tu_u64(r);
        break;
    }
    case GMT_REC_RANGE_BEGIN:
    case GMT_REC_RANGE_END:
        rec->u.range.ts = tu_u64(r);
        rec->u.range.tid = tu_u64(r);
        rec->u.range.id = tu_u64(r);
        if (type == GMT_REC_RANGE_BEGIN) {
            rec->u.range.parent = tu_u64(r);
            rec->u.range.name = tu_u64(r);
            rec->u.range.kind = (rec->u.range.name >> 5) & 3; /* 2.3, derived: the other streams stay */
        }
        break;
    case GMT_REC_MARK:
        rec->u.mark.ts = tu_u64(r);
        rec->u.mark.tid = tu_u64(r);
        rec->u.mark.name = tu_u64(r);
        break;
    case GMT_REC_TAG: {
        gmt_tag *t = &rec->u.tag;
        t->ts = tu_u64(r);
        t->name = tu_u64(r);
        t->step = tu_u64(r);
        t->ndev = tu_below(r, 4) == 0 ? GMT_MAX_TAG_DEVICES : tu_below(r, 4);
        for (uint64_t i = 0; i < t->ndev; i++) {
            t->dev[i].device = tu_u64(r);
            t->dev[i].live_bytes = tu_u64(r);
            t->dev[i].driver_used = tu_u64(r);
            t->dev[i].driver_free = tu_u64(r);
            t->dev[i].driver_total = tu_u64(r);
        }
        break;
    }
    case GMT_REC_STEP:
        rec->u.step.ts = tu_u64(r);
        rec->u.step.step = tu_u64(r);
        rec->u.step.phase = tu_u64(r);
        rec->u.step.source = tu_u64(r);
        break;
    case GMT_REC_WINDOW_BEGIN:
        rec->u.wbegin.ts = tu_u64(r);
        rec->u.wbegin.window = tu_u64(r);
        rec->u.wbegin.step = tu_u64(r);
        rec->u.wbegin.baseline_count = tu_u64(r);
        rec->u.wbegin.baseline_bytes = tu_u64(r);
        break;
    case GMT_REC_WINDOW_END:
        rec->u.wend.ts = tu_u64(r);
        rec->u.wend.window = tu_u64(r);
        rec->u.wend.step = tu_u64(r);
        rec->u.wend.reason = tu_u64(r);
        break;
    case GMT_REC_MEMSAMPLE:
        rec->u.sample.ts = tu_u64(r);
        rec->u.sample.device = tu_u64(r);
        rec->u.sample.used = tu_u64(r);
        rec->u.sample.free_ = tu_u64(r);
        rec->u.sample.total = tu_u64(r);
        break;
    case GMT_REC_STATS: {
        gmt_stats *s = &rec->u.stats;
        uint64_t *f[] = { &s->ts, &s->records_written, &s->dropped_cupti, &s->dropped_writer, &s->host_time_ns,
                          &s->own_device_bytes, &s->own_host_bytes, &s->bytes_written, &s->unmatched_corr,
                          &s->outside_window };
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            *f[i] = tu_u64(r);
        break;
    }
    case GMT_REC_TRAILER:
        rec->u.trailer.ts = tu_u64(r);
        rec->u.trailer.records = tu_u64(r);
        rec->u.trailer.status = tu_u64(r);
        break;
    default:
        break;
    }
}

/* ---- comparison --------------------------------------------------------- */

static inline int tu_bytes_eq(const gmt_bytes *a, const gmt_bytes *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

#define TU_F(field)                                                                                  \
    do {                                                                                             \
        if (a->field != b->field) {                                                                  \
            snprintf(why, whylen, "%s." #field ": %llu != %llu", gmt_type_name(a->type),           \
                     (unsigned long long)a->field, (unsigned long long)b->field);                    \
            return 0;                                                                                \
        }                                                                                            \
    } while (0)
#define TU_B(field)                                                                                  \
    do {                                                                                             \
        if (!tu_bytes_eq(&a->field, &b->field)) {                                                    \
            snprintf(why, whylen, "%s." #field ": strings differ (len %u vs %u)", gmt_type_name(a->type), \
                     a->field.len, b->field.len);                                                    \
            return 0;                                                                                \
        }                                                                                            \
    } while (0)

/* 1 when equal field by field; else 0 with the first difference in why. */
static inline int tu_record_eq(const gmt_record *a, const gmt_record *b, char *why, size_t whylen)
{
    snprintf(why, whylen, "equal");
    if (a->type != b->type) {
        snprintf(why, whylen, "type %s != %s", gmt_type_name(a->type), gmt_type_name(b->type));
        return 0;
    }
    switch (a->type) {
    case GMT_REC_HEADER:
        TU_F(u.header.pid); TU_F(u.header.ppid); TU_F(u.header.start_unix_ns); TU_F(u.header.start_ts);
        TU_F(u.header.rank); TU_F(u.header.local_rank); TU_F(u.header.world_size);
        TU_F(u.header.cupti_version); TU_F(u.header.driver_version); TU_F(u.header.flags);
        TU_B(u.header.host); TU_B(u.header.cmdline); TU_B(u.header.config); TU_B(u.header.profiler_version);
        break;
    case GMT_REC_DEVICE:
        TU_F(u.device.device); TU_F(u.device.total_mem); TU_F(u.device.sm_count); TU_F(u.device.cc_major);
        TU_F(u.device.cc_minor); TU_B(u.device.name);
        if (memcmp(a->u.device.uuid, b->u.device.uuid, 16) != 0) {
            snprintf(why, whylen, "device.uuid differs");
            return 0;
        }
        break;
    case GMT_REC_STRING:
        TU_F(u.string.id); TU_B(u.string.str);
        break;
    case GMT_REC_ALLOC:
    case GMT_REC_FREE:
        TU_F(u.mem.ts); TU_F(u.mem.device); TU_F(u.mem.address); TU_F(u.mem.bytes); TU_F(u.mem.kind);
        TU_F(u.mem.source); TU_F(u.mem.flags); TU_F(u.mem.corr); TU_F(u.mem.stream); TU_F(u.mem.tid);
        TU_F(u.mem.range); TU_F(u.mem.seq); TU_F(u.mem.step);
        break;
    case GMT_REC_KERNEL:
        TU_F(u.kernel.start); TU_F(u.kernel.end); TU_F(u.kernel.device); TU_F(u.kernel.stream);
        TU_F(u.kernel.corr); TU_F(u.kernel.name); TU_F(u.kernel.grid[0]); TU_F(u.kernel.grid[1]);
        TU_F(u.kernel.grid[2]); TU_F(u.kernel.block[0]); TU_F(u.kernel.block[1]); TU_F(u.kernel.block[2]);
        TU_F(u.kernel.registers); TU_F(u.kernel.static_smem); TU_F(u.kernel.dynamic_smem);
        TU_F(u.kernel.local_mem); TU_F(u.kernel.tid); TU_F(u.kernel.seq); TU_F(u.kernel.range);
        TU_F(u.kernel.step); TU_F(u.kernel.flags);
        break;
    case GMT_REC_MEMCPY:
    case GMT_REC_MEMSET:
        TU_F(u.copy.start); TU_F(u.copy.end); TU_F(u.copy.device); TU_F(u.copy.stream); TU_F(u.copy.corr);
        TU_F(u.copy.bytes); TU_F(u.copy.copy_kind); TU_F(u.copy.src_kind); TU_F(u.copy.dst_kind);
        TU_F(u.copy.tid); TU_F(u.copy.step);
        break;
    case GMT_REC_RANGE_BEGIN:
    case GMT_REC_RANGE_END:
        TU_F(u.range.ts); TU_F(u.range.tid); TU_F(u.range.id); TU_F(u.range.parent); TU_F(u.range.name);
        TU_F(u.range.kind);
        break;
    case GMT_REC_MARK:
        TU_F(u.mark.ts); TU_F(u.mark.tid); TU_F(u.mark.name);
        break;
    case GMT_REC_TAG:
        TU_F(u.tag.ts); TU_F(u.tag.name); TU_F(u.tag.step); TU_F(u.tag.ndev);
        for (uint64_t i = 0; i < a->u.tag.ndev && i < GMT_MAX_TAG_DEVICES; i++) {
            TU_F(u.tag.dev[i].device); TU_F(u.tag.dev[i].live_bytes); TU_F(u.tag.dev[i].driver_used);
            TU_F(u.tag.dev[i].driver_free); TU_F(u.tag.dev[i].driver_total);
        }
        break;
    case GMT_REC_STEP:
        TU_F(u.step.ts); TU_F(u.step.step); TU_F(u.step.phase); TU_F(u.step.source);
        break;
    case GMT_REC_WINDOW_BEGIN:
        TU_F(u.wbegin.ts); TU_F(u.wbegin.window); TU_F(u.wbegin.step); TU_F(u.wbegin.baseline_count);
        TU_F(u.wbegin.baseline_bytes);
        break;
    case GMT_REC_WINDOW_END:
        TU_F(u.wend.ts); TU_F(u.wend.window); TU_F(u.wend.step); TU_F(u.wend.reason);
        break;
    case GMT_REC_MEMSAMPLE:
        TU_F(u.sample.ts); TU_F(u.sample.device); TU_F(u.sample.used); TU_F(u.sample.free_);
        TU_F(u.sample.total);
        break;
    case GMT_REC_STATS:
        TU_F(u.stats.ts); TU_F(u.stats.records_written); TU_F(u.stats.dropped_cupti);
        TU_F(u.stats.dropped_writer); TU_F(u.stats.host_time_ns); TU_F(u.stats.own_device_bytes);
        TU_F(u.stats.own_host_bytes); TU_F(u.stats.bytes_written); TU_F(u.stats.unmatched_corr);
        TU_F(u.stats.outside_window);
        break;
    case GMT_REC_TRAILER:
        TU_F(u.trailer.ts); TU_F(u.trailer.records); TU_F(u.trailer.status);
        break;
    case GMT_REC_BLOCK:
        TU_F(u.block.ts); TU_F(u.block.action); TU_F(u.block.device); TU_F(u.block.address);
        TU_F(u.block.bytes); TU_F(u.block.stream); TU_F(u.block.tid); TU_F(u.block.range);
        TU_F(u.block.seq); TU_F(u.block.step); TU_F(u.block.flags); TU_F(u.block.pool);
        TU_F(u.block.requested); TU_F(u.block.frame); TU_F(u.block.stack);
        break;
    case GMT_REC_OOM:
        TU_F(u.oom.ts); TU_F(u.oom.cause); TU_F(u.oom.dump); TU_F(u.oom.device); TU_F(u.oom.bytes);
        TU_F(u.oom.stream); TU_F(u.oom.tid); TU_F(u.oom.range); TU_F(u.oom.op); TU_F(u.oom.api);
        TU_F(u.oom.status); TU_F(u.oom.step); TU_F(u.oom.flags); TU_F(u.oom.driver_free);
        TU_F(u.oom.driver_total); TU_F(u.oom.fw_allocated); TU_F(u.oom.fw_reserved); TU_F(u.oom.live_count);
        TU_F(u.oom.live_bytes); TU_F(u.oom.first_step); TU_F(u.oom.ring_bytes);
        break;
    case GMT_REC_LIVE:
        TU_F(u.live.ts); TU_F(u.live.device); TU_F(u.live.address); TU_F(u.live.bytes); TU_F(u.live.kind);
        TU_F(u.live.source); TU_F(u.live.flags); TU_F(u.live.corr); TU_F(u.live.stream); TU_F(u.live.tid);
        TU_F(u.live.range); TU_F(u.live.seq); TU_F(u.live.step);
        break;
    default:
        snprintf(why, whylen, "unknown type %d", (int)a->type);
        return 0;
    }
    return 1;
}

/* ---- owned copies of records (the reader's strings are borrowed) -------- */

typedef struct tu_rec {
    gmt_record r;
    char *str[4]; /* owned copies of the gmt_bytes fields */
} tu_rec;

static inline void tu_own_bytes(gmt_bytes *b, char **slot)
{
    *slot = malloc(b->len ? b->len : 1);
    REQUIRE(*slot != NULL, "out of memory");
    if (b->len)
        memcpy(*slot, b->ptr, b->len);
    b->ptr = *slot;
}

/* Deep copy; tu_rec_free releases it. */
static inline void tu_rec_copy(tu_rec *dst, const gmt_record *src)
{
    memset(dst->str, 0, sizeof dst->str);
    dst->r = *src;
    switch (src->type) {
    case GMT_REC_HEADER:
        tu_own_bytes(&dst->r.u.header.host, &dst->str[0]);
        tu_own_bytes(&dst->r.u.header.cmdline, &dst->str[1]);
        tu_own_bytes(&dst->r.u.header.config, &dst->str[2]);
        tu_own_bytes(&dst->r.u.header.profiler_version, &dst->str[3]);
        break;
    case GMT_REC_DEVICE:
        tu_own_bytes(&dst->r.u.device.name, &dst->str[0]);
        break;
    case GMT_REC_STRING:
        tu_own_bytes(&dst->r.u.string.str, &dst->str[0]);
        break;
    default:
        break;
    }
}

static inline void tu_rec_free(tu_rec *t)
{
    for (int i = 0; i < 4; i++)
        free(t->str[i]);
}

/* ---- traces in memory ---------------------------------------------------- */

typedef struct tu_buf {
    uint8_t *p;
    size_t n;
} tu_buf;

static inline void tu_buf_free(tu_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = 0;
}

/* Reads a whole file into memory. */
static inline tu_buf tu_slurp(const char *path)
{
    tu_buf b = { NULL, 0 };
    FILE *f = fopen(path, "rb");
    REQUIRE(f != NULL, "open %s: %s", path, strerror(errno));
    size_t cap = 1 << 16;
    b.p = malloc(cap);
    REQUIRE(b.p != NULL, "out of memory");
    size_t k;
    while ((k = fread(b.p + b.n, 1, cap - b.n, f)) > 0) {
        b.n += k;
        if (b.n == cap) {
            cap *= 2;
            b.p = realloc(b.p, cap);
            REQUIRE(b.p != NULL, "out of memory");
        }
    }
    fclose(f);
    return b;
}

/* A fresh temporary file path under TMPDIR (or /tmp); unlinked by caller. */
static inline void tu_tmp_path(char *out, size_t cap, const char *tag)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    static unsigned counter;
    snprintf(out, cap, "%s/gmt-test-%s-%ld-%u.zst", dir, tag, (long)getpid(), counter++);
}

/* Writes records through gmt_writer to path; returns the writer's status. */
static inline gmt_status tu_write_records(const char *path, const tu_rec *recs, size_t n, size_t frame_bytes, int level,
                                   uint64_t *frames_out)
{
    gmt_writer_opts o = { level, frame_bytes };
    gmt_writer *w = gmt_writer_open(path, &o);
    REQUIRE(w != NULL, "gmt_writer_open %s: %s", path, strerror(errno));
    gmt_status st = GMT_OK;
    for (size_t i = 0; i < n && st == GMT_OK; i++)
        st = gmt_writer_put(w, &recs[i].r);
    gmt_writer_end_frame(w);
    if (frames_out)
        *frames_out = gmt_writer_frames(w);
    gmt_status cst = gmt_writer_close(w);
    return st != GMT_OK ? st : cst;
}


/* The bytes of a gmem-synth trace of `events` events (seed, two layers,
 * zstd level 1, frames of frame_bytes), written to a temporary file named
 * after tag and read back. */
static inline tu_buf tu_synth_trace(const char *tag, uint64_t seed, uint64_t events, size_t frame_bytes)
{
    char path[256];
    tu_tmp_path(path, sizeof path, tag);
    gmt_synth_opts o;
    gmt_synth_opts_default(&o);
    o.events = events;
    o.seed = seed;
    o.layers = 2;
    gmt_writer_opts wo = { 1, frame_bytes };
    REQUIRE(gmt_synth_write(path, &o, &wo, NULL) == GMT_OK, "synth");
    tu_buf b = tu_slurp(path);
    unlink(path);
    return b;
}

/* ---- one frame through the codec ------------------------------------------ */

/* Encodes recs[0..n) into one frame's bytes, with a time stream (4096
 * bytes at most) when times is not NULL; returns the record bytes and sets
 * *tlen. */
static inline size_t tu_encode_all(const gmt_record *recs, size_t n, uint8_t *out, size_t cap, uint8_t *times, size_t *tlen)
{
    static gmt_codec c;
    gmt_codec_reset(&c);
    if (times)
        gmt_codec_set_time_sink(&c, times, 4096);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = gmt_encode(&c, &recs[i], out + len, cap - len);
        REQUIRE(k > 0, "record %zu (%s) did not encode", i, gmt_type_name(recs[i].type));
        len += k;
    }
    *tlen = times ? gmt_codec_time_len(&c) : 0;
    return len;
}

/* Decodes a frame that tu_encode_all made and checks every record against
 * recs[] (a tag's framework fields too); how names the case in messages. */
static inline void tu_decode_all(const uint8_t *in, size_t len, const uint8_t *times, size_t tlen, const gmt_record *recs,
                       size_t n, const char *how)
{
    static gmt_codec c;
    gmt_codec_reset(&c);
    if (times)
        gmt_codec_set_time_source(&c, times, tlen);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        gmt_record r;
        size_t used = 0;
        gmt_status st = gmt_decode(&c, in + pos, len - pos, &r, &used);
        REQUIRE(st == GMT_OK, "%s: record %zu: status %d", how, i, st);
        char why[160];
        CHECK(tu_record_eq(&r, &recs[i], why, sizeof why), "%s: record %zu: %s", how, i, why);
        if (recs[i].type == GMT_REC_TAG) {
            CHECK(r.u.tag.has_framework == recs[i].u.tag.has_framework, "%s: tag has_framework", how);
            for (uint64_t d = 0; d < r.u.tag.ndev; d++)
                CHECK(r.u.tag.dev[d].fw_allocated == recs[i].u.tag.dev[d].fw_allocated &&
                          r.u.tag.dev[d].fw_reserved == recs[i].u.tag.dev[d].fw_reserved,
                      "%s: tag dev %llu framework fields", how, (unsigned long long)d);
        }
        pos += used;
    }
    CHECK(pos == len, "%s: %zu of %zu bytes decoded", how, pos, len);
    if (times)
        CHECK(gmt_codec_time_left(&c) == 0, "%s: %zu time bytes left", how, gmt_codec_time_left(&c));
}

#endif
