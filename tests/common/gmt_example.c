/*
 * gmt-example: writes a tiny trace with the real writer and prints its
 * decompressed bytes as an annotated hex dump, field by field: the worked
 * example of docs/trace-format.md is this program's output.
 *
 * It doubles as a test of the document: its own field table (below, in
 * payload order) walks every record independently of common/codec.c, with
 * its own copy of the frame's shape and context tables (format 1.2), and
 * the program fails unless the walk consumes exactly each payload, yields
 * the values that were written and ends every record with the codec's
 * delta state and tables.
 *
 *   gmt-example            the annotated dump (exit 0 when it all agrees)
 *   gmt-example --fields   the payload layout of every record type (markdown)
 *   gmt-example -o FILE    also keep the tiny trace in FILE
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "gmt_io.h"

#include "../check.h"

/* Field codings, as docs/trace-format.md names them. */
enum {
    F_V = 'v',    /* varint */
    F_SV = 's',   /* zigzag varint */
    F_TS = 't',   /* "ts" host time delta */
    F_GTS = 'g',  /* "gts" GPU start delta, then "dur" */
    F_ADDR = 'a', /* "addr" */
    F_CORR = 'c', /* "corr" */
    F_SEQ = 'q',  /* "seq" */
    F_RID = 'r',  /* "rid" */
    F_PRID = 'P', /* RANGE_BEGIN parent: "rid", then last_rid = id */
    F_STEP = 'p', /* "step" */
    F_BYTES = 'b',
    F_UUID = 'u',
    F_DEVS = 'n', /* TAG: ndev, then ndev x 5 varints */
    F_SHAPE = 'K', /* KERNEL_REF: index into the frame's shape table */
    F_CTX = 'M',   /* ALLOC_REF / FREE_REF: index into the frame's context table */
    F_BADDR = 'A', /* BLOCK (2.1): zigzag(value - last_baddr) */
    F_BTS = 'T',   /* BLOCK (2.1): zigzag(value - last_bts), in the payload */
    F_FWDEVS = 'F', /* TAG (2.1): ndev x 2 varints, present only with has_framework */
    F_OPTV = 'o',   /* STATS (2.2): a trailing varint, present only when not 0 */
};

typedef struct fdesc {
    const char *name;
    char code;
    size_t off;  /* offset in gmt_record.u */
    size_t off2; /* F_GTS: offset of end */
} fdesc;

#define U(f) offsetof(gmt_record, u.f) - offsetof(gmt_record, u)
#define FD(n, c, f) { n, c, U(f), 0 }
#define END { NULL, 0, 0, 0 }

static const fdesc F_HEADER[] = {
    FD("pid", F_V, header.pid), FD("ppid", F_V, header.ppid), FD("start_unix_ns", F_V, header.start_unix_ns),
    FD("start_ts", F_V, header.start_ts), FD("rank", F_SV, header.rank), FD("local_rank", F_SV, header.local_rank),
    FD("world_size", F_SV, header.world_size), FD("cupti_version", F_V, header.cupti_version),
    FD("driver_version", F_V, header.driver_version), FD("flags", F_V, header.flags), FD("host", F_BYTES, header.host),
    FD("cmdline", F_BYTES, header.cmdline), FD("config", F_BYTES, header.config),
    FD("profiler_version", F_BYTES, header.profiler_version), END,
};
static const fdesc F_DEVICE[] = {
    FD("device", F_V, device.device), FD("total_mem", F_V, device.total_mem), FD("sm_count", F_V, device.sm_count),
    FD("cc_major", F_V, device.cc_major), FD("cc_minor", F_V, device.cc_minor), FD("uuid", F_UUID, device.uuid),
    FD("name", F_BYTES, device.name), END,
};
static const fdesc F_STRING[] = { FD("id", F_V, string.id), FD("str", F_BYTES, string.str), END };
static const fdesc F_MEM[] = {
    FD("device", F_V, mem.device), FD("address", F_ADDR, mem.address), FD("bytes", F_V, mem.bytes),
    FD("kind", F_V, mem.kind), FD("source", F_V, mem.source), FD("flags", F_V, mem.flags), FD("corr", F_CORR, mem.corr),
    FD("stream", F_V, mem.stream), FD("tid", F_V, mem.tid), FD("range", F_RID, mem.range), FD("seq", F_SEQ, mem.seq),
    FD("step", F_STEP, mem.step), FD("ts", F_TS, mem.ts), END,
};
static const fdesc F_KERNEL[] = {
    FD("device", F_V, kernel.device), FD("stream", F_V, kernel.stream), FD("corr", F_CORR, kernel.corr),
    FD("name", F_V, kernel.name), FD("grid[0]", F_V, kernel.grid[0]), FD("grid[1]", F_V, kernel.grid[1]),
    FD("grid[2]", F_V, kernel.grid[2]), FD("block[0]", F_V, kernel.block[0]), FD("block[1]", F_V, kernel.block[1]),
    FD("block[2]", F_V, kernel.block[2]), FD("registers", F_V, kernel.registers),
    FD("static_smem", F_V, kernel.static_smem), FD("dynamic_smem", F_V, kernel.dynamic_smem),
    FD("local_mem", F_V, kernel.local_mem), FD("tid", F_V, kernel.tid), FD("seq", F_SEQ, kernel.seq),
    FD("range", F_RID, kernel.range), FD("step", F_STEP, kernel.step),
    { "start", F_GTS, U(kernel.start), U(kernel.end) }, END,
};
/* 1.2: the interned forms (payload order of codec.c's put_kernel_ref and
 * put_mem_ref); the index stands for the fields of the table entry. */
static const fdesc F_KERNEL_REF[] = {
    FD("shape", F_SHAPE, kernel.name), FD("device", F_V, kernel.device), FD("stream", F_V, kernel.stream),
    FD("corr", F_CORR, kernel.corr), FD("tid", F_V, kernel.tid), FD("seq", F_SEQ, kernel.seq),
    FD("range", F_RID, kernel.range), FD("step", F_STEP, kernel.step), FD("flags", F_V, kernel.flags),
    { "start", F_GTS, U(kernel.start), U(kernel.end) }, END,
};
static const fdesc F_MEM_REF[] = {
    FD("context", F_CTX, mem.device), FD("address", F_ADDR, mem.address), FD("bytes", F_V, mem.bytes),
    FD("corr", F_CORR, mem.corr), FD("range", F_RID, mem.range), FD("seq", F_SEQ, mem.seq),
    FD("step", F_STEP, mem.step), FD("ts", F_TS, mem.ts), END,
};
static const fdesc F_COPY[] = {
    FD("device", F_V, copy.device), FD("stream", F_V, copy.stream), FD("corr", F_CORR, copy.corr),
    FD("bytes", F_V, copy.bytes), FD("copy_kind", F_V, copy.copy_kind), FD("src_kind", F_V, copy.src_kind),
    FD("dst_kind", F_V, copy.dst_kind), FD("tid", F_V, copy.tid), FD("step", F_STEP, copy.step),
    { "start", F_GTS, U(copy.start), U(copy.end) }, END,
};
static const fdesc F_RANGE_BEGIN[] = {
    FD("tid", F_V, range.tid), FD("id", F_RID, range.id), FD("parent", F_PRID, range.parent),
    FD("name", F_V, range.name), FD("ts", F_TS, range.ts), FD("kind", F_OPTV, range.kind), END,
};
static const fdesc F_RANGE_END[] = { FD("tid", F_V, range.tid), FD("id", F_RID, range.id), FD("ts", F_TS, range.ts),
                                     END };
static const fdesc F_MARK[] = { FD("tid", F_V, mark.tid), FD("name", F_V, mark.name), FD("ts", F_TS, mark.ts), END };
static const fdesc F_TAG[] = { FD("name", F_V, tag.name), FD("step", F_STEP, tag.step), FD("ndev", F_DEVS, tag.ndev),
                               FD("ts", F_TS, tag.ts), FD("framework", F_FWDEVS, tag.has_framework), END };
static const fdesc F_BLOCK[] = {
    FD("action", F_V, block.action), FD("device", F_V, block.device), FD("address", F_BADDR, block.address),
    FD("bytes", F_V, block.bytes), FD("stream", F_V, block.stream), FD("tid", F_V, block.tid),
    FD("range", F_V, block.range), FD("seq", F_V, block.seq), FD("step", F_V, block.step),
    FD("flags", F_V, block.flags), FD("pool", F_V, block.pool), FD("ts", F_BTS, block.ts),
    FD("requested", F_V, block.requested), FD("frame", F_OPTV, block.frame), FD("stack", F_OPTV, block.stack), END,
};
/* 2.2: plain varints, times included */
static const fdesc F_OOM[] = {
    FD("ts", F_V, oom.ts), FD("cause", F_V, oom.cause), FD("dump", F_V, oom.dump), FD("device", F_V, oom.device),
    FD("bytes", F_V, oom.bytes), FD("stream", F_V, oom.stream), FD("tid", F_V, oom.tid),
    FD("range", F_V, oom.range), FD("op", F_V, oom.op), FD("api", F_V, oom.api), FD("status", F_V, oom.status),
    FD("step", F_V, oom.step), FD("flags", F_V, oom.flags), FD("driver_free", F_V, oom.driver_free),
    FD("driver_total", F_V, oom.driver_total), FD("fw_allocated", F_V, oom.fw_allocated),
    FD("fw_reserved", F_V, oom.fw_reserved), FD("live_count", F_V, oom.live_count),
    FD("live_bytes", F_V, oom.live_bytes), FD("first_step", F_V, oom.first_step),
    FD("ring_bytes", F_V, oom.ring_bytes), END,
};
static const fdesc F_LIVE[] = {
    FD("ts", F_V, live.ts), FD("device", F_V, live.device), FD("address", F_V, live.address),
    FD("bytes", F_V, live.bytes), FD("kind", F_V, live.kind), FD("source", F_V, live.source),
    FD("flags", F_V, live.flags), FD("corr", F_V, live.corr), FD("stream", F_V, live.stream),
    FD("tid", F_V, live.tid), FD("range", F_V, live.range), FD("seq", F_V, live.seq), FD("step", F_V, live.step),
    END,
};
static const fdesc F_STEP_[] = { FD("step", F_STEP, step.step), FD("phase", F_V, step.phase),
                                 FD("source", F_V, step.source), FD("ts", F_TS, step.ts), END };
static const fdesc F_WBEGIN[] = { FD("window", F_V, wbegin.window), FD("step", F_STEP, wbegin.step),
                                  FD("baseline_count", F_V, wbegin.baseline_count),
                                  FD("baseline_bytes", F_V, wbegin.baseline_bytes), FD("ts", F_TS, wbegin.ts), END };
static const fdesc F_WEND[] = { FD("window", F_V, wend.window), FD("step", F_STEP, wend.step),
                                FD("reason", F_V, wend.reason), FD("ts", F_TS, wend.ts), END };
static const fdesc F_SAMPLE[] = { FD("device", F_V, sample.device), FD("used", F_V, sample.used),
                                  FD("free", F_V, sample.free_), FD("total", F_V, sample.total),
                                  FD("ts", F_TS, sample.ts), END };
static const fdesc F_STATS[] = {
    FD("records_written", F_V, stats.records_written), FD("dropped_cupti", F_V, stats.dropped_cupti),
    FD("dropped_writer", F_V, stats.dropped_writer), FD("host_time_ns", F_V, stats.host_time_ns),
    FD("own_device_bytes", F_V, stats.own_device_bytes), FD("own_host_bytes", F_V, stats.own_host_bytes),
    FD("bytes_written", F_V, stats.bytes_written), FD("unmatched_corr", F_V, stats.unmatched_corr),
    FD("ts", F_TS, stats.ts), FD("outside_window", F_OPTV, stats.outside_window), END,
};
static const fdesc F_TRAILER[] = { FD("records", F_V, trailer.records), FD("status", F_V, trailer.status),
                                   FD("ts", F_TS, trailer.ts), END };

static const fdesc *fields_of(int type)
{
    switch (type) {
    case GMT_REC_HEADER: return F_HEADER;
    case GMT_REC_DEVICE: return F_DEVICE;
    case GMT_REC_STRING: return F_STRING;
    case GMT_REC_ALLOC:
    case GMT_REC_FREE: return F_MEM;
    case GMT_REC_KERNEL: return F_KERNEL;
    case GMT_REC_MEMCPY:
    case GMT_REC_MEMSET: return F_COPY;
    case GMT_REC_RANGE_BEGIN: return F_RANGE_BEGIN;
    case GMT_REC_RANGE_END: return F_RANGE_END;
    case GMT_REC_MARK: return F_MARK;
    case GMT_REC_TAG: return F_TAG;
    case GMT_REC_STEP: return F_STEP_;
    case GMT_REC_WINDOW_BEGIN: return F_WBEGIN;
    case GMT_REC_WINDOW_END: return F_WEND;
    case GMT_REC_MEMSAMPLE: return F_SAMPLE;
    case GMT_REC_STATS: return F_STATS;
    case GMT_REC_TRAILER: return F_TRAILER;
    case GMT_WIRE_KERNEL_REF: return F_KERNEL_REF;
    case GMT_WIRE_ALLOC_REF:
    case GMT_WIRE_FREE_REF: return F_MEM_REF;
    case GMT_REC_BLOCK: return F_BLOCK;
    case GMT_REC_OOM: return F_OOM;
    case GMT_REC_LIVE: return F_LIVE;
    default: return NULL;
    }
}

/* The record type a stream type decodes to. */
static int record_type_of(int type)
{
    switch (type) {
    case GMT_WIRE_KERNEL_REF: return GMT_REC_KERNEL;
    case GMT_WIRE_ALLOC_REF: return GMT_REC_ALLOC;
    case GMT_WIRE_FREE_REF: return GMT_REC_FREE;
    default: return type;
    }
}

static const char *coding_doc(char c)
{
    switch (c) {
    case F_V: return "varint";
    case F_SV: return "sv: zigzag varint";
    case F_TS: return "ts: zigzag(value - last_ts); in the frame's TIMES record (2.0), not the payload";
    case F_GTS: return "gts: zigzag(start - last_gpu), then dur: varint(end - start); last_gpu = end; both in the "
                       "frame's TIMES record (2.0), not the payload";
    case F_ADDR: return "addr: zigzag(value - last_addr)";
    case F_CORR: return "corr: zigzag(value - last_corr)";
    case F_SEQ: return "seq: zigzag(value - last_seq)";
    case F_RID: return "rid: zigzag(value - last_rid)";
    case F_PRID: return "rid: zigzag(value - last_rid), then last_rid = id";
    case F_STEP: return "step: zigzag(value - last_step)";
    case F_BYTES: return "bytes: varint length + raw bytes";
    case F_UUID: return "16 raw bytes";
    case F_DEVS: return "varint ndev, then ndev x (device, live_bytes, driver_used, driver_free, driver_total) varints";
    case F_SHAPE: return "shape: varint index of an entry of the frame's shape table (name, grid, block, registers, "
                         "static_smem, dynamic_smem, local_mem)";
    case F_CTX: return "context: varint index of an entry of the frame's context table (device, kind, source, "
                       "flags, stream, tid)";
    case F_BADDR: return "baddr: zigzag(value - last_baddr), BLOCK's own address state (2.1)";
    case F_BTS: return "bts: zigzag(value - last_bts), BLOCK's own time state, in the payload (2.1: a type added "
                       "after 2.0 keeps its time out of TIMES)";
    case F_FWDEVS: return "(2.1) only when the payload goes on after the fields before it: ndev x (fw_allocated, "
                          "fw_reserved) varints, the framework allocator's allocated and reserved bytes";
    case F_OPTV: return "(2.2, 2.3) a varint after the fields before it, written only when not 0: a payload that "
                        "ends before it reads as 0";
    default: return "?";
    }
}


static uint64_t *u64_at(const gmt_record *r, size_t off) { return (uint64_t *)((char *)&r->u + off); }

/* ---- the annotated dump ----------------------------------------------- */

static size_t g_off; /* stream offset of the next byte */

static void line(const uint8_t *p, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* One line per field: offset, up to 8 hex bytes a line, the meaning on the
 * first line; strings longer than 24 bytes show their first 16. */
static void line(const uint8_t *p, size_t n, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t shown = n <= 24 ? n : 16;
    size_t i = 0;
    do {
        char hex[3 * 8 + 1] = "";
        size_t k = 0;
        for (; k < 8 && i + k < shown; k++)
            sprintf(hex + 3 * k, "%02x ", p[i + k]);
        char out[400];
        snprintf(out, sizeof out, "%06zx  %-24s %s", (size_t)g_off + i, hex, i == 0 ? text : "");
        size_t len = strlen(out);
        while (len > 0 && out[len - 1] == ' ') /* no trailing blanks in the document */
            out[--len] = '\0';
        printf("%s\n", out);
        i += 8;
    } while (i < shown);
    if (shown < n)
        printf("%6s  %-24s (%zu more bytes)\n", "", "", n - shown);
    g_off += n;
}

static int get_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *v)
{
    int k = gmt_varint_get(p + *pos, n - *pos, v);
    if (k <= 0)
        return -1;
    *pos += (size_t)k;
    return k;
}

/* What the walk keeps between records of a frame: the delta state and the
 * shape and context tables, kept here by the rule of docs/trace-format.md
 * (a plain record's shape or context is appended unless already there). */
#define SHAPE_W 11
#define CTX_W 6
typedef struct walk_state {
    gmt_deltas d;
    const uint8_t *t;  /* the frame's time stream (format 2.0: its TIMES record) */
    size_t tn, tpos;
    size_t toff;       /* its stream offset */
    uint64_t shape[GMT_TAB_CAP][SHAPE_W];
    uint64_t ctx[GMT_TAB_CAP][CTX_W];
    unsigned nshape, nctx;
} walk_state;

static void shape_of(const gmt_kernel *k, uint64_t out[SHAPE_W])
{
    const uint64_t v[SHAPE_W] = { k->name,         k->grid[0],  k->grid[1],        k->grid[2],
                                  k->block[0],     k->block[1], k->block[2],       k->registers,
                                  k->static_smem,  k->dynamic_smem, k->local_mem };
    memcpy(out, v, sizeof v);
}

static void ctx_of(const gmt_mem *m, uint64_t out[CTX_W])
{
    const uint64_t v[CTX_W] = { m->device, m->kind, m->source, m->flags, m->stream, m->tid };
    memcpy(out, v, sizeof v);
}

/* Index of key in rows[0..n), or -1. */
static int find_row(const uint64_t *rows, unsigned n, unsigned w, const uint64_t *key)
{
    for (unsigned i = 0; i < n; i++)
        if (memcmp(rows + (size_t)i * w, key, w * sizeof *key) == 0)
            return (int)i;
    return -1;
}

/* Walks one record with the table above, printing and checking each field
 * against the record that was written. Returns bytes consumed. */
static size_t walk(const uint8_t *p, size_t n, walk_state *c, const gmt_record *want)
{
    size_t pos = 0;
    uint64_t type = p[0], plen = 0;
    const fdesc *fd = fields_of((int)type);
    line(p, 1, "type %llu = %s", (unsigned long long)type, gmt_type_name((gmt_type)type));
    pos = 1;
    size_t lp = pos;
    if (get_varint(p, n, &pos, &plen) < 0 || !fd) {
        CHECK(0, "bad record at %zu", g_off);
        return n;
    }
    line(p + lp, pos - lp, "payload length %llu", (unsigned long long)plen);
    size_t end = pos + (size_t)plen;
    CHECK(want && (int)want->type == record_type_of((int)type), "type %llu", (unsigned long long)type);
    for (; fd->name; fd++) {
        size_t s = pos;
        uint64_t v = 0, raw = 0;
        switch (fd->code) {
        case F_BYTES: {
            get_varint(p, end, &pos, &raw);
            line(p + s, pos - s, "%s: length %llu", fd->name, (unsigned long long)raw);
            const gmt_bytes *b = (const gmt_bytes *)((const char *)&want->u + fd->off);
            CHECK(raw == b->len && pos + raw <= end && memcmp(p + pos, b->ptr, raw) == 0, "%s", fd->name);
            char shown[80];
            size_t m = raw < 60 ? (size_t)raw : 60;
            memcpy(shown, p + pos, m);
            shown[m] = '\0';
            line(p + pos, (size_t)raw, "  \"%s%s\"", shown, raw > m ? "..." : "");
            pos += (size_t)raw;
            continue;
        }
        case F_UUID: {
            CHECK(memcmp(p + pos, (const char *)&want->u + fd->off, 16) == 0, "uuid");
            line(p + pos, 16, "%s (16 raw bytes)", fd->name);
            pos += 16;
            continue;
        }
        case F_SHAPE:
        case F_CTX: {
            get_varint(p, end, &pos, &v);
            int is_shape = fd->code == F_SHAPE;
            unsigned count = is_shape ? c->nshape : c->nctx;
            uint64_t key[SHAPE_W];
            if (is_shape)
                shape_of(&want->u.kernel, key);
            else
                ctx_of(&want->u.mem, key);
            const uint64_t *row = v < count ? (is_shape ? c->shape[v] : c->ctx[v]) : NULL;
            CHECK(row && memcmp(row, key, (is_shape ? SHAPE_W : CTX_W) * sizeof *key) == 0,
                   "%s %llu is not the written record's", fd->name, (unsigned long long)v);
            if (is_shape && row)
                line(p + s, pos - s, "shape = %llu: name %llu, grid %llux%llux%llu, block %llux%llux%llu, "
                     "registers %llu, smem %llu+%llu, local %llu", (unsigned long long)v,
                     (unsigned long long)row[0], (unsigned long long)row[1], (unsigned long long)row[2],
                     (unsigned long long)row[3], (unsigned long long)row[4], (unsigned long long)row[5],
                     (unsigned long long)row[6], (unsigned long long)row[7], (unsigned long long)row[8],
                     (unsigned long long)row[9], (unsigned long long)row[10]);
            else if (row)
                line(p + s, pos - s, "context = %llu: device %llu, kind %llu, source %llu, flags %llu, "
                     "stream %llu, tid %llu", (unsigned long long)v, (unsigned long long)row[0],
                     (unsigned long long)row[1], (unsigned long long)row[2], (unsigned long long)row[3],
                     (unsigned long long)row[4], (unsigned long long)row[5]);
            else
                line(p + s, pos - s, "%s = %llu (no such entry)", fd->name, (unsigned long long)v);
            continue;
        }
        case F_DEVS: {
            get_varint(p, end, &pos, &v);
            line(p + s, pos - s, "%s = %llu", fd->name, (unsigned long long)v);
            CHECK(v == want->u.tag.ndev, "ndev");
            static const char *const dn[5] = { "device", "live_bytes", "driver_used", "driver_free", "driver_total" };
            for (uint64_t d = 0; d < v && d < GMT_MAX_TAG_DEVICES; d++) {
                const uint64_t *dv = &want->u.tag.dev[d].device;
                for (int k = 0; k < 5; k++) {
                    size_t s2 = pos;
                    uint64_t x = 0;
                    get_varint(p, end, &pos, &x);
                    line(p + s2, pos - s2, "  dev[%llu].%s = %llu", (unsigned long long)d, dn[k],
                         (unsigned long long)x);
                    CHECK(x == dv[k], "tag dev field");
                }
            }
            continue;
        }
        case F_OPTV: {
            if (*u64_at(want, fd->off) == 0)
                continue; /* not written */
            get_varint(p, end, &pos, &v);
            line(p + s, pos - s, "%s = %llu", fd->name, (unsigned long long)v);
            CHECK(v == *u64_at(want, fd->off), "%s", fd->name);
            continue;
        }
        case F_FWDEVS: {
            if (!want->u.tag.has_framework)
                continue;
            static const char *const fn[2] = { "fw_allocated", "fw_reserved" };
            for (uint64_t d = 0; d < want->u.tag.ndev && d < GMT_MAX_TAG_DEVICES; d++) {
                const uint64_t *dv = &want->u.tag.dev[d].fw_allocated;
                for (int k = 0; k < 2; k++) {
                    size_t s2 = pos;
                    uint64_t x = 0;
                    get_varint(p, end, &pos, &x);
                    line(p + s2, pos - s2, "  dev[%llu].%s = %llu", (unsigned long long)d, fn[k],
                         (unsigned long long)x);
                    CHECK(x == dv[k], "tag framework field");
                }
            }
            continue;
        }
        default:
            break;
        }
        /* Time fields come from the frame's TIMES record (format 2.0):
         * shown here, with their own offsets, in the record they belong to. */
        int is_time = fd->code == F_TS || fd->code == F_GTS;
        size_t keep_off = g_off;
        if (is_time) {
            s = c->tpos;
            g_off = c->toff + c->tpos;
            CHECK(get_varint(c->t, c->tn, &c->tpos, &raw) > 0, "%s: the time stream ran out", fd->name);
        } else {
            get_varint(p, end, &pos, &raw);
        }
        const uint8_t *fp = is_time ? c->t : p;
        uint64_t expect = *u64_at(want, fd->off);
        switch (fd->code) {
        case F_V:
            v = raw;
            line(p + s, pos - s, "%s = %llu", fd->name, (unsigned long long)v);
            break;
        case F_SV:
            v = (uint64_t)gmt_unzigzag(raw);
            line(p + s, pos - s, "%s = %lld (zigzag %llu)", fd->name, (long long)v, (unsigned long long)raw);
            break;
        case F_GTS: {
            v = c->d.last_gpu + (uint64_t)gmt_unzigzag(raw);
            line(fp + s, c->tpos - s, "%s = last_gpu %+lld = %llu  (in TIMES)", fd->name, (long long)gmt_unzigzag(raw),
                 (unsigned long long)v);
            size_t s2 = c->tpos;
            uint64_t dur = 0;
            CHECK(get_varint(c->t, c->tn, &c->tpos, &dur) > 0, "dur: the time stream ran out");
            line(fp + s2, c->tpos - s2, "dur = %llu ns (end = %llu)  (in TIMES)", (unsigned long long)dur,
                 (unsigned long long)(v + dur));
            CHECK(v + dur == *u64_at(want, fd->off2), "end");
            c->d.last_gpu = v + dur;
            break;
        }
        default: {
            uint64_t *last = fd->code == F_TS     ? &c->d.last_ts
                             : fd->code == F_BTS  ? &c->d.last_bts
                             : fd->code == F_BADDR ? &c->d.last_baddr
                             : fd->code == F_ADDR ? &c->d.last_addr
                             : fd->code == F_CORR ? &c->d.last_corr
                             : fd->code == F_SEQ  ? &c->d.last_seq
                             : fd->code == F_STEP ? &c->d.last_step
                                                  : &c->d.last_rid;
            const char *base = fd->code == F_TS     ? "last_ts"
                               : fd->code == F_BTS  ? "last_bts"
                               : fd->code == F_BADDR ? "last_baddr"
                               : fd->code == F_ADDR ? "last_addr"
                               : fd->code == F_CORR ? "last_corr"
                               : fd->code == F_SEQ  ? "last_seq"
                               : fd->code == F_STEP ? "last_step"
                                                    : "last_rid";
            v = *last + (uint64_t)gmt_unzigzag(raw);
            if (is_time)
                line(fp + s, c->tpos - s, "%s = %s %+lld = %llu  (in TIMES)", fd->name, base,
                     (long long)gmt_unzigzag(raw), (unsigned long long)v);
            else if (fd->code == F_ADDR || fd->code == F_BADDR)
                line(p + s, pos - s, "%s = %s %+lld = 0x%llx", fd->name, base, (long long)gmt_unzigzag(raw),
                     (unsigned long long)v);
            else
                line(p + s, pos - s, "%s = %s %+lld = %llu", fd->name, base, (long long)gmt_unzigzag(raw),
                     (unsigned long long)v);
            *last = v;
            if (fd->code == F_PRID)
                c->d.last_rid = want->u.range.id;
            break;
        }
        }
        if (is_time)
            g_off = keep_off;
        CHECK(v == expect, "%s.%s: walked %llu, wrote %llu", gmt_type_name((gmt_type)type), fd->name,
               (unsigned long long)v, (unsigned long long)expect);
    }
    CHECK(pos == end, "%s: the field table covers %zu of %llu payload bytes", gmt_type_name((gmt_type)type),
           pos - (end - (size_t)plen), (unsigned long long)plen);
    /* the append rule: a plain KERNEL's shape, a plain ALLOC's or FREE's
     * context joins its table unless it is there or the table is full */
    uint64_t key[SHAPE_W];
    if (type == GMT_REC_KERNEL) {
        shape_of(&want->u.kernel, key);
        if (c->nshape < GMT_TAB_CAP && find_row(&c->shape[0][0], c->nshape, SHAPE_W, key) < 0)
            memcpy(c->shape[c->nshape++], key, sizeof c->shape[0]);
    } else if (type == GMT_REC_ALLOC || type == GMT_REC_FREE) {
        ctx_of(&want->u.mem, key);
        if (c->nctx < GMT_TAB_CAP && find_row(&c->ctx[0][0], c->nctx, CTX_W, key) < 0)
            memcpy(c->ctx[c->nctx++], key, sizeof c->ctx[0]);
    }
    return end;
}

/* The walk's state against the codec's: the same deltas and tables. */
static int same_state(const walk_state *w, const gmt_codec *c)
{
    if (memcmp(&w->d, &c->d, sizeof w->d) != 0 || w->nshape != c->shapes.n || w->nctx != c->ctxs.n)
        return 0;
    for (unsigned i = 0; i < w->nshape; i++)
        if (memcmp(w->shape[i], c->shape + (size_t)i * GMT_SHAPE_WORDS, sizeof w->shape[i]) != 0)
            return 0;
    /* The codec keeps a context's words in gmt_mem's field order (its own
     * business: the wire sees only entry indices); compared as fields. */
    for (unsigned i = 0; i < w->nctx; i++) {
        const uint64_t *e = c->ctx + (size_t)i * GMT_CTX_WORDS;
        const uint64_t *x = w->ctx[i]; /* device, kind, source, flags, stream, tid */
        if (x[0] != e[5] || x[1] != e[0] || x[2] != e[1] || x[3] != e[2] || x[4] != e[3] || x[5] != e[4])
            return 0;
    }
    return 1;
}

/* ---- the tiny trace ---------------------------------------------------- */

#define T0 1718000000000000000ull

static gmt_record recs[32];
static int nrec;
static int frame_after[32]; /* end a frame after record i */

static gmt_record *add(gmt_type t)
{
    gmt_record *r = &recs[nrec++];
    memset(r, 0, sizeof *r);
    r->type = t;
    return r;
}

static void build(void)
{
    gmt_record *r = add(GMT_REC_HEADER);
    r->u.header = (gmt_header){ .pid = 4242, .ppid = 4200, .start_unix_ns = T0, .start_ts = T0, .rank = -1,
                                .local_rank = -1, .world_size = -1, .cupti_version = 26, .driver_version = 13000,
                                .host = { "node1", 5 }, .cmdline = { "python train.py", 15 },
                                .config = { "schedule=1,1,1", 14 }, .profiler_version = { "0.1.0", 5 } };
    r = add(GMT_REC_DEVICE);
    r->u.device = (gmt_device){ .device = 0, .total_mem = 150754820096ull, .sm_count = 132, .cc_major = 9,
                                .cc_minor = 0, .name = { "NVIDIA H200", 11 } };
    for (int i = 0; i < 16; i++)
        r->u.device.uuid[i] = (uint8_t)(0xa0 + i);
    r = add(GMT_REC_STEP);
    r->u.step = (gmt_step){ .ts = T0 + 2000000, .step = 0, .phase = GMT_PHASE_WARMUP, .source = GMT_STEPSRC_API };
    frame_after[nrec - 1] = 1; /* a window edge: the frame ends */
    r = add(GMT_REC_WINDOW_BEGIN);
    r->u.wbegin = (gmt_window_begin){ .ts = T0 + 9000000, .window = 0, .step = 1, .baseline_count = 1,
                                      .baseline_bytes = 4194304 };
    r = add(GMT_REC_ALLOC);
    r->u.mem = (gmt_mem){ .ts = T0 + 1500000, .device = 0, .address = 0x7f3a00000000ull, .bytes = 4194304,
                          .kind = GMT_MEMKIND_DEVICE, .source = GMT_SRC_MALLOC, .flags = GMT_MEMF_BASELINE,
                          .corr = 12, .stream = 0, .tid = 4242, .range = 0, .seq = 0, .step = 0 };
    r = add(GMT_REC_STEP);
    r->u.step = (gmt_step){ .ts = T0 + 9000400, .step = 1, .phase = GMT_PHASE_ACTIVE, .source = GMT_STEPSRC_API };
    r = add(GMT_REC_STRING);
    r->u.string = (gmt_string){ .id = 1, .str = { "forward", 7 } };
    r = add(GMT_REC_RANGE_BEGIN);
    r->u.range = (gmt_range){ .ts = T0 + 9001000, .tid = 4242, .id = 1, .parent = 0, .name = 1,
                              .kind = GMT_RANGE_MODULE };
    r = add(GMT_REC_ALLOC);
    r->u.mem = (gmt_mem){ .ts = T0 + 9002300, .device = 0, .address = 0x7f3a00400000ull, .bytes = 1048576,
                          .kind = GMT_MEMKIND_DEVICE, .source = GMT_SRC_ASYNC_POOL, .flags = 0, .corr = 40,
                          .stream = 7, .tid = 4242, .range = 1, .seq = 2, .step = 1 };
    r = add(GMT_REC_STRING);
    r->u.string = (gmt_string){ .id = 3, .str = { "train.py:42 step", 16 } };
    r = add(GMT_REC_BLOCK);
    r->u.block = (gmt_block){ .ts = T0 + 9002500, .action = GMT_BLK_ALLOC, .device = 0,
                              .address = 0x7f3a00400000ull, .bytes = 524288, .stream = 0, .tid = 4242, .range = 1,
                              .seq = 2, .step = 1, .flags = 0, .pool = 0, .requested = 524000, .frame = 3 };
    r = add(GMT_REC_STRING);
    r->u.string = (gmt_string){ .id = 2, .str = { "_Z11gemm_kernelPKfS0_Pfi", 24 } };
    r = add(GMT_REC_KERNEL);
    r->u.kernel = (gmt_kernel){ .start = T0 + 9010016, .end = T0 + 9052128, .device = 0, .stream = 7, .corr = 41,
                                .name = 2, .grid = { 256, 1, 1 }, .block = { 256, 1, 1 }, .registers = 32,
                                .static_smem = 0, .dynamic_smem = 16384, .local_mem = 0, .tid = 4242, .seq = 3,
                                .range = 1, .step = 1 };
    r = add(GMT_REC_KERNEL);
    r->u.kernel = (gmt_kernel){ .start = T0 + 9053152, .end = T0 + 9060000, .device = 0, .stream = 7, .corr = 42,
                                .name = 2, .grid = { 256, 1, 1 }, .block = { 256, 1, 1 }, .registers = 32,
                                .static_smem = 0, .dynamic_smem = 16384, .local_mem = 0, .tid = 4242, .seq = 4,
                                .range = 1, .step = 1 };
    r = add(GMT_REC_FREE);
    r->u.mem = (gmt_mem){ .ts = T0 + 9004100, .device = 0, .address = 0x7f3a00400000ull, .bytes = 1048576,
                          .kind = GMT_MEMKIND_DEVICE, .source = GMT_SRC_ASYNC_POOL, .flags = 0, .corr = 43,
                          .stream = 7, .tid = 4242, .range = 1, .seq = 4, .step = 1 };
    r = add(GMT_REC_RANGE_END);
    r->u.range = (gmt_range){ .ts = T0 + 9004500, .tid = 4242, .id = 1 };
    r = add(GMT_REC_MEMSAMPLE);
    r->u.sample = (gmt_memsample){ .ts = T0 + 9061000, .device = 0, .used = 1258291200ull,
                                   .free_ = 150754820096ull - 1258291200ull, .total = 150754820096ull };
    r = add(GMT_REC_STRING);
    r->u.string = (gmt_string){ .id = 3, .str = { "after_step", 10 } };
    r = add(GMT_REC_TAG);
    r->u.tag.ts = T0 + 9062000;
    r->u.tag.name = 3;
    r->u.tag.step = 1;
    r->u.tag.ndev = 1;
    r->u.tag.has_framework = 1;
    r->u.tag.dev[0] = (gmt_tag_device){ 0, 4194304, 1258291200ull, 150754820096ull - 1258291200ull, 150754820096ull,
                                        524288, 1048576 };
    r = add(GMT_REC_WINDOW_END);
    r->u.wend = (gmt_window_end){ .ts = T0 + 9063000, .window = 0, .step = 1, .reason = GMT_WEND_EXIT };
    frame_after[nrec - 1] = 1;
    r = add(GMT_REC_STATS);
    r->u.stats = (gmt_stats){ .ts = T0 + 9070000, .records_written = 19, .host_time_ns = 812345,
                              .own_device_bytes = 3145728, .own_host_bytes = 9437184, .bytes_written = 461 };
    r = add(GMT_REC_TRAILER);
    r->u.trailer = (gmt_trailer){ .ts = T0 + 9070000, .records = 20, .status = GMT_TRAILER_CLEAN };
}

static void print_fields(void)
{
    printf("| type | record | payload fields, in order |\n|---|---|---|\n");
    for (int t = 1; t < GMT_WIRE_TYPE_MAX_; t++) {
        printf("| %d | %s | ", t, gmt_type_name((gmt_type)t));
        if (t == GMT_WIRE_TIMES) {
            printf("(2.0) the frame's time fields, the fields marked (ts) and (gts), dur above, of its records "
                   "in record order: the payload is their varints, nothing else |\n");
            continue;
        }
        const fdesc *fd = fields_of(t);
        for (int i = 0; fd[i].name; i++) {
            const char *c = fd[i].code == F_V ? "" : fd[i].code == F_SV ? " (sv)" : fd[i].code == F_TS ? " (ts)"
                          : fd[i].code == F_GTS ? " (gts), dur" : fd[i].code == F_ADDR ? " (addr)"
                          : fd[i].code == F_CORR ? " (corr)" : fd[i].code == F_SEQ ? " (seq)"
                          : fd[i].code == F_RID || fd[i].code == F_PRID ? " (rid)" : fd[i].code == F_STEP ? " (step)"
                          : fd[i].code == F_BYTES ? " (bytes)" : fd[i].code == F_UUID ? " (16 raw bytes)"
                          : fd[i].code == F_SHAPE ? " (index into the shape table)"
                          : fd[i].code == F_CTX ? " (index into the context table)"
                          : fd[i].code == F_BADDR ? " (baddr)" : fd[i].code == F_BTS ? " (bts)"
                          : fd[i].code == F_FWDEVS ? " (2.1, optional: ndev x 2 varints)"
                          : fd[i].code == F_OPTV ? " (optional)"
                          : " (ndev, then ndev x 5 varints)";
            printf("%s%s%s", i ? ", " : "", fd[i].name, c);
        }
        printf(" |\n");
    }
    printf("\nCodings:\n");
    const char codes[] = { F_V,     F_SV,    F_TS,   F_GTS,  F_ADDR,  F_CORR, F_SEQ, F_RID,
                           F_PRID,  F_STEP,  F_BYTES, F_UUID, F_DEVS, F_SHAPE, F_CTX,
                           F_BADDR, F_BTS,   F_FWDEVS, F_OPTV };
    for (size_t i = 0; i < sizeof codes; i++)
        printf("- %s\n", coding_doc(codes[i]));
}

int main(int argc, char **argv)
{
    const char *keep = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--fields") == 0) {
            print_fields();
            return 0;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            keep = argv[++i];
        } else {
            fprintf(stderr, "usage: gmt-example [--fields] [-o FILE]\n");
            return 2;
        }
    }
    build();
    char path[256];
    if (keep)
        snprintf(path, sizeof path, "%s", keep);
    else
        snprintf(path, sizeof path, "%s/gmt-example-%ld.zst", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                 (long)getpid());
    gmt_writer *w = gmt_writer_open(path, NULL);
    if (!w) {
        fprintf(stderr, "gmt-example: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    for (int i = 0; i < nrec; i++) {
        if (gmt_writer_put(w, &recs[i]) != GMT_OK) {
            fprintf(stderr, "gmt-example: write failed\n");
            return 1;
        }
        if (frame_after[i])
            gmt_writer_end_frame(w);
    }
    if (gmt_writer_close(w) != GMT_OK) {
        fprintf(stderr, "gmt-example: close failed\n");
        return 1;
    }
    FILE *f = fopen(path, "rb");
    static uint8_t file[1 << 16], raw[1 << 16];
    size_t fn = f ? fread(file, 1, sizeof file, f) : 0;
    if (f)
        fclose(f);
    if (!keep)
        unlink(path);

    size_t pos = 0, rpos_total = 0;
    int frame = 0, ri = 0;
    size_t fsz[8];
    while (pos < fn && frame < 8) {
        size_t fl = ZSTD_findFrameCompressedSize(file + pos, fn - pos);
        if (ZSTD_isError(fl))
            break;
        fsz[frame++] = fl;
        pos += fl;
    }
    /* Compressed sizes depend on the zstd version: stderr only, so that the
     * printed example stays the same everywhere. */
    fprintf(stderr, "gmt-example: %zu bytes on disk in %d frames (zstd %s)\n", fn, frame, ZSTD_versionString());
    printf("A tiny trace written by the real writer: %d records in %d zstd frames.\n", nrec, frame);
    printf("Decompressed stream, annotated (offsets count stream bytes from the start):\n\n");
    pos = 0;
    g_off = 0;
    for (int fi = 0; fi < frame; fi++) {
        size_t rn = ZSTD_decompress(raw, sizeof raw, file + pos, fsz[fi]);
        CHECK(!ZSTD_isError(rn), "decompress frame %d", fi + 1);
        if (ZSTD_isError(rn))
            break;
        printf("---- frame %d: %zu stream bytes; the delta state starts at 0, the tables empty ----\n", fi + 1, rn);
        size_t p = 0;
        static walk_state c;
        static gmt_codec cd;
        memset(&c, 0, sizeof c);
        gmt_codec_reset(&cd);
        if (fi == 0) {
            line(raw, 8, "magic \"GMEMPROF\"");
            line(raw + 8, 2, "major version %u (u16 little endian)", raw[8] | raw[9] << 8);
            line(raw + 10, 2, "minor version %u (u16 little endian)", raw[10] | raw[11] << 8);
            p = GMT_PREAMBLE_LEN;
        }
        /* 2.0: the frame's TIMES record comes first */
        uint64_t tl = 0;
        size_t tp = p + 1;
        CHECK(p < rn && raw[p] == GMT_WIRE_TIMES && get_varint(raw, rn, &tp, &tl) > 0 && tp + tl <= rn,
               "frame %d does not start with its TIMES record", fi + 1);
        if (tp + tl > rn)
            break;
        printf("\n");
        line(raw + p, 1, "type %u = times (2.0: the time fields of this frame's records)", raw[p]);
        line(raw + p + 1, tp - p - 1, "payload length %llu", (unsigned long long)tl);
        c.t = raw + tp;
        c.tn = (size_t)tl;
        c.tpos = 0;
        c.toff = g_off;
        printf("%06zx  %-24s each shown below with the record it belongs to\n", g_off, "...");
        g_off += (size_t)tl;
        gmt_codec_set_time_source(&cd, raw + tp, (size_t)tl);
        p = tp + (size_t)tl;
        while (p < rn && ri < nrec) {
            printf("\n");
            size_t used = walk(raw + p, rn - p, &c, &recs[ri]);
            gmt_record d;
            size_t dused = 0;
            CHECK(gmt_decode(&cd, raw + p, rn - p, &d, &dused) == GMT_OK && dused == used,
                   "gmt_decode disagrees on record %d", ri);
            CHECK(same_state(&c, &cd), "delta state or tables differ after record %d", ri);
            p += used;
            ri++;
        }
        CHECK(p == rn, "frame %d: %zu of %zu bytes walked", fi + 1, p, rn);
        CHECK(c.tpos == c.tn && gmt_codec_time_left(&cd) == 0, "frame %d: %zu of %zu time bytes walked", fi + 1,
               c.tpos, c.tn);
        rpos_total += rn;
        pos += fsz[fi];
        printf("\n");
    }
    CHECK(ri == nrec, "walked %d of %d records", ri, nrec);
    printf("%zu stream bytes in %d records (%.1f bytes/record before compression).\n", rpos_total, nrec,
           (double)rpos_total / nrec);
    /* a failure is a mismatch between the document's field table and the codec */
    return tc_result("gmt-example");
}
