/*
 * gen_corpus OUTDIR: writes the seed corpus of the fuzz targets, deterministically.
 *
 *   OUTDIR/reader/   small traces written with gmt_writer (one frame, several
 *                    frames, no trailer, a frame whose shape and context
 *                    tables fill up), cut and damaged copies of them,
 *                    hand-built streams (a newer minor version with longer
 *                    payloads and an unknown record type, a newer major
 *                    version, a skippable frame, a zstd file that is not a
 *                    trace, an empty file, text, 1.1 streams without the
 *                    _REF records of 1.2, a _REF whose index is past its
 *                    table), and raw decompressed streams for the reader
 *                    target's second reading.
 *   OUTDIR/config/   NUL-separated KEY=VALUE environments: every setting
 *                    valid, every setting bad, schedules, output patterns.
 *   OUTDIR/analyze/  the traces of reader/ that make sense to an analyzer, and
 *                    raw streams (fuzz_analyze compresses a non-zstd input),
 *                    each after fuzz_analyze's 4 option bytes (a table by
 *                    kernel, no filter); then full.zst with other options:
 *                    every format, every extra (Chrome, SVG, HTML, diff, insights),
 *                    every --by, filters (fuzz_analyze.c, opts_from); and
 *                    the PyTorch bridge's module scenarios of the analyzer
 *                    tests (module ranges, frames, OWNER records).
 *
 * The committed corpus under tests/fuzz/corpus/ came from this program
 * (docs/reliability.md says how to regenerate it); a test runs it and replays
 * what it wrote, so it cannot rot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "gmt_io.h"
#include "sc_modules.h"

static const char *outdir;

static void die(const char *what)
{
    fprintf(stderr, "gen_corpus: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void mkdir_p(const char *sub)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", outdir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        die(path);
    snprintf(path, sizeof path, "%s/%s", outdir, sub);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        die(path);
}

static void put_file(const char *sub, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", outdir, sub, name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
        die(path);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die(path);
    size_t cap = 1 << 16, len = 0;
    unsigned char *b = malloc(cap);
    for (;;) {
        if (!b)
            die("out of memory");
        size_t k = fread(b + len, 1, cap - len, f);
        len += k;
        if (k == 0)
            break;
        if (len == cap)
            b = realloc(b, cap *= 2);
    }
    fclose(f);
    *n = len;
    return b;
}

/* ---- a small, realistic trace ------------------------------------------------ */

typedef struct emit {
    gmt_writer *w;       /* through the writer, or */
    unsigned char *raw;  /* into a raw stream buffer */
    size_t raw_len, raw_cap;
    gmt_codec codec;
    gmt_strtab *tab;
    int extra;           /* append extra payload bytes (a newer minor version) */
    int plain;           /* raw stream only: no _REF records (as format 1.1 wrote) */
} emit;

static void put(emit *e, const gmt_record *r)
{
    if (e->w) {
        if (gmt_writer_put(e->w, r) != GMT_OK)
            die("gmt_writer_put");
        return;
    }
    unsigned char tmp[1 << 19];
    if (e->plain) {
        /* empty tables before every record: the encoder finds no shape or
         * context and writes every KERNEL, ALLOC and FREE plain */
        gmt_deltas d = e->codec.d;
        gmt_codec_reset(&e->codec);
        e->codec.d = d;
    }
    size_t n = gmt_encode(&e->codec, r, tmp, sizeof tmp);
    if (n == 0)
        die("gmt_encode");
    if (e->extra) {
        /* Rewrite the length to carry 3 more payload bytes a newer minor
         * version might add; a reader of this version must skip them. */
        uint64_t plen;
        int lb = gmt_varint_get(tmp + 1, n - 1, &plen);
        unsigned char re[1 << 19];
        size_t k = 0;
        re[k++] = tmp[0];
        k += gmt_varint_put(re + k, 10, plen + 3);
        memcpy(re + k, tmp + 1 + lb, (size_t)plen);
        k += (size_t)plen;
        re[k++] = 0x7f;
        re[k++] = 0x01;
        re[k++] = 0x00;
        memcpy(tmp, re, k);
        n = k;
    }
    if (e->raw_len + n > e->raw_cap) {
        e->raw_cap = (e->raw_len + n) * 2;
        e->raw = realloc(e->raw, e->raw_cap);
        if (!e->raw)
            die("out of memory");
    }
    memcpy(e->raw + e->raw_len, tmp, n);
    e->raw_len += n;
}

static uint64_t str_id(emit *e, const char *s)
{
    int is_new = 0;
    uint64_t id = gmt_strtab_intern(e->tab, s, strlen(s), &is_new);
    if (!id)
        die("gmt_strtab_intern");
    if (is_new) {
        gmt_record r = {.type = GMT_REC_STRING};
        r.u.string.id = id;
        r.u.string.str.ptr = s;
        r.u.string.str.len = (uint32_t)strlen(s);
        put(e, &r);
    }
    return id;
}

static void mem(emit *e, gmt_type t, uint64_t ts, uint64_t addr, uint64_t bytes, uint64_t kind, uint64_t src,
                uint64_t flags, uint64_t corr, uint64_t tid, uint64_t range, uint64_t seq, uint64_t step)
{
    gmt_record r = {.type = t};
    gmt_mem *m = &r.u.mem;
    m->ts = ts;
    m->device = 0;
    m->address = addr;
    m->bytes = bytes;
    m->kind = kind;
    m->source = src;
    m->flags = flags;
    m->corr = corr;
    m->stream = src == GMT_SRC_ASYNC_POOL ? 7 : 0;
    m->tid = tid;
    m->range = range;
    m->seq = seq;
    m->step = step;
    put(e, &r);
}

static void kernel(emit *e, uint64_t start, uint64_t dur, uint64_t corr, uint64_t name, uint64_t tid, uint64_t seq,
                   uint64_t range, uint64_t step)
{
    gmt_record r = {.type = GMT_REC_KERNEL};
    gmt_kernel *k = &r.u.kernel;
    k->start = start;
    k->end = start + dur;
    k->device = 0;
    k->stream = 7;
    k->corr = corr;
    k->name = name;
    k->grid[0] = 128;
    k->grid[1] = 1;
    k->grid[2] = 1;
    k->block[0] = 256;
    k->block[1] = 1;
    k->block[2] = 1;
    k->registers = 32;
    k->static_smem = 0;
    k->dynamic_smem = 4096;
    k->local_mem = 0;
    k->tid = tid;
    k->seq = seq;
    k->range = range;
    k->step = step;
    put(e, &r);
}

/* Header, devices, one window over 3 steps with a baseline, allocations of
 * every source, kernels, copies, nested ranges, a mark, a tag, samples,
 * stats, and (when trailer) the trailer. */
static void trace(emit *e, int trailer, int steps)
{
    const uint64_t tid = 4242, t0 = 1700000000000000000ull;
    uint64_t ts = 5000000, corr = 100, seq = 0, nrec = 0;
    gmt_record r;

    memset(&r, 0, sizeof r);
    r.type = GMT_REC_HEADER;
    r.u.header.pid = 4242;
    r.u.header.ppid = 1;
    r.u.header.start_unix_ns = t0;
    r.u.header.start_ts = ts;
    r.u.header.rank = -1;
    r.u.header.local_rank = -1;
    r.u.header.world_size = -1;
    r.u.header.cupti_version = 26;
    r.u.header.driver_version = 13000;
    r.u.header.host = (gmt_bytes){"node-1", 6};
    r.u.header.cmdline = (gmt_bytes){"python train.py --steps 3", 25};
    r.u.header.config = (gmt_bytes){"enabled=1;schedule=whole;zstd_level=3", 37};
    r.u.header.profiler_version = (gmt_bytes){"0.1.0", 5};
    put(e, &r), nrec++;

    for (uint64_t d = 0; d < 2; d++) {
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_DEVICE;
        r.u.device.device = d;
        r.u.device.total_mem = 150ull << 30;
        r.u.device.sm_count = 132;
        r.u.device.cc_major = 9;
        r.u.device.cc_minor = 0;
        for (int i = 0; i < 16; i++)
            r.u.device.uuid[i] = (uint8_t)(i * 17 + d);
        r.u.device.name = (gmt_bytes){"NVIDIA H200", 11};
        put(e, &r), nrec++;
    }

    /* Weights allocated before the window: they come back as the baseline. */
    mem(e, GMT_REC_ALLOC, ts += 1000, 0x7f0000000000ull, 64ull << 20, GMT_MEMKIND_DEVICE, GMT_SRC_MALLOC, 0, ++corr,
        tid, 0, seq, 0), nrec++;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_WINDOW_BEGIN;
    r.u.wbegin.ts = ts += 1000;
    r.u.wbegin.window = 0;
    r.u.wbegin.step = 0;
    r.u.wbegin.baseline_count = 1;
    r.u.wbegin.baseline_bytes = 64ull << 20;
    put(e, &r), nrec++;
    mem(e, GMT_REC_ALLOC, ts, 0x7f0000000000ull, 64ull << 20, GMT_MEMKIND_DEVICE, GMT_SRC_MALLOC, GMT_MEMF_BASELINE,
        corr, tid, 0, seq, 0), nrec++;

    uint64_t k_fwd = str_id(e, "void fwd_kernel<float>(float*, int)");
    uint64_t k_bwd = str_id(e, "_Z10bwd_kernelPfi");
    uint64_t n_step = str_id(e, "train_step");
    uint64_t n_fwd = str_id(e, "forward");
    uint64_t n_mark = str_id(e, "checkpoint");
    uint64_t n_tag = str_id(e, "after_optimizer");
    uint64_t range_id = 0;
    for (int s = 0; s < steps; s++) {
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_STEP;
        r.u.step.ts = ts += 500;
        r.u.step.step = (uint64_t)s;
        r.u.step.phase = GMT_PHASE_ACTIVE;
        r.u.step.source = GMT_STEPSRC_NVTX;
        put(e, &r), nrec++;
        uint64_t outer = ++range_id, inner = ++range_id;
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_RANGE_BEGIN;
        r.u.range.ts = ts += 10;
        r.u.range.tid = tid;
        r.u.range.id = outer;
        r.u.range.parent = 0;
        r.u.range.name = n_step;
        put(e, &r), nrec++;
        r.u.range.ts = ts += 10;
        r.u.range.id = inner;
        r.u.range.parent = outer;
        r.u.range.name = n_fwd;
        put(e, &r), nrec++;
        uint64_t a1 = 0x7f0010000000ull + (uint64_t)s * 0x1000000ull;
        mem(e, GMT_REC_ALLOC, ts += 100, a1, 8ull << 20, GMT_MEMKIND_DEVICE, GMT_SRC_ASYNC_POOL, 0, ++corr, tid, inner,
            seq, (uint64_t)s), nrec++;
        kernel(e, ts += 50, 20000, ++corr, k_fwd, tid, ++seq, inner, (uint64_t)s), nrec++;
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_RANGE_END;
        r.u.range.ts = ts += 30000;
        r.u.range.tid = tid;
        r.u.range.id = inner;
        put(e, &r), nrec++;
        mem(e, GMT_REC_ALLOC, ts += 100, 0x7f0020000000ull, 2ull << 20, GMT_MEMKIND_DEVICE, GMT_SRC_VMM, 0, 0, 0,
            0, 0, (uint64_t)s), nrec++;
        mem(e, GMT_REC_ALLOC, ts += 100, 0x7f0030000000ull + (uint64_t)s * 4096, 4096, GMT_MEMKIND_MANAGED,
            GMT_SRC_MANAGED, GMT_MEMF_NO_THREAD, ++corr, 0, 0, seq, (uint64_t)s), nrec++;
        mem(e, GMT_REC_ALLOC, ts += 100, 0x200000000ull + (uint64_t)s * 8192, 8192, GMT_MEMKIND_PINNED,
            GMT_SRC_PINNED_HOST, 0, ++corr, tid, outer, seq, (uint64_t)s), nrec++;
        kernel(e, ts += 50, 15000, ++corr, k_bwd, tid, ++seq, outer, (uint64_t)s), nrec++;
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_MEMCPY;
        r.u.copy.start = ts += 20000;
        r.u.copy.end = ts + 3000;
        r.u.copy.device = 0;
        r.u.copy.stream = 7;
        r.u.copy.corr = ++corr;
        r.u.copy.bytes = 8192;
        r.u.copy.copy_kind = GMT_COPY_HTOD;
        r.u.copy.src_kind = GMT_MEMKIND_PINNED;
        r.u.copy.dst_kind = GMT_MEMKIND_DEVICE;
        r.u.copy.tid = tid;
        r.u.copy.step = (uint64_t)s;
        put(e, &r), nrec++;
        r.type = GMT_REC_MEMSET;
        r.u.copy.start = ts += 4000;
        r.u.copy.end = ts + 800;
        r.u.copy.corr = ++corr;
        r.u.copy.copy_kind = 0;
        r.u.copy.src_kind = GMT_MEMKIND_DEVICE;
        r.u.copy.dst_kind = 0;
        put(e, &r), nrec++;
        mem(e, GMT_REC_FREE, ts += 1000, a1, 8ull << 20, GMT_MEMKIND_DEVICE, GMT_SRC_ASYNC_POOL, 0, ++corr, tid,
            outer, seq, (uint64_t)s), nrec++;
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_MARK;
        r.u.mark.ts = ts += 10;
        r.u.mark.tid = tid;
        r.u.mark.name = n_mark;
        put(e, &r), nrec++;
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_TAG;
        r.u.tag.ts = ts += 10;
        r.u.tag.name = n_tag;
        r.u.tag.step = (uint64_t)s;
        r.u.tag.ndev = 2;
        for (int d = 0; d < 2; d++) {
            r.u.tag.dev[d].device = (uint64_t)d;
            r.u.tag.dev[d].live_bytes = d ? 0 : (74ull << 20) + 4096 * (uint64_t)(s + 1);
            r.u.tag.dev[d].driver_used = (600ull << 20) + (uint64_t)d;
            r.u.tag.dev[d].driver_free = (150ull << 30) - (600ull << 20);
            r.u.tag.dev[d].driver_total = 150ull << 30;
        }
        put(e, &r), nrec++;
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_MEMSAMPLE;
        r.u.sample.ts = ts += 10;
        r.u.sample.device = 0;
        r.u.sample.used = 600ull << 20;
        r.u.sample.free_ = (150ull << 30) - (600ull << 20);
        r.u.sample.total = 150ull << 30;
        put(e, &r), nrec++;
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_RANGE_END;
        r.u.range.ts = ts += 10;
        r.u.range.tid = tid;
        r.u.range.id = outer;
        put(e, &r), nrec++;
    }
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_WINDOW_END;
    r.u.wend.ts = ts += 100;
    r.u.wend.window = 0;
    r.u.wend.step = (uint64_t)(steps > 0 ? steps - 1 : 0);
    r.u.wend.reason = GMT_WEND_EXIT;
    put(e, &r), nrec++;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_STATS;
    r.u.stats.ts = ts += 100;
    r.u.stats.records_written = nrec + gmt_strtab_count(e->tab);
    r.u.stats.dropped_cupti = 0;
    r.u.stats.dropped_writer = 0;
    r.u.stats.host_time_ns = 1234567;
    r.u.stats.own_device_bytes = 2u << 20;
    r.u.stats.own_host_bytes = 8u << 20;
    r.u.stats.bytes_written = 4096;
    r.u.stats.unmatched_corr = 1;
    put(e, &r), nrec++;
    if (trailer) {
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_TRAILER;
        r.u.trailer.ts = ts += 100;
        r.u.trailer.records = nrec + gmt_strtab_count(e->tab);
        r.u.trailer.status = GMT_TRAILER_CLEAN;
        put(e, &r);
    }
}

static void write_trace(const char *name, size_t frame_bytes, int trailer, int steps)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/reader/%s", outdir, name);
    gmt_writer_opts o = {.level = 3, .frame_bytes = frame_bytes};
    emit e;
    memset(&e, 0, sizeof e);
    e.w = gmt_writer_open(path, &o);
    e.tab = gmt_strtab_create();
    if (!e.w || !e.tab)
        die(path);
    trace(&e, trailer, steps);
    if (gmt_writer_close(e.w) != GMT_OK)
        die("gmt_writer_close");
    gmt_strtab_free(e.tab);
}

/* Format 1.2's tables at their limit, in one frame: GMT_TAB_CAP + 4
 * distinct kernel shapes and allocation contexts (the last 4 stay plain),
 * then kernels and frees naming the first, the 128th (a 2-byte index) and
 * the last entries, and one beyond the cap again. */
static void write_table_full(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/reader/%s", outdir, name);
    gmt_writer_opts o = {.level = 3, .frame_bytes = 1 << 20};
    emit e;
    memset(&e, 0, sizeof e);
    e.w = gmt_writer_open(path, &o);
    e.tab = gmt_strtab_create();
    if (!e.w || !e.tab)
        die(path);
    uint64_t kname = str_id(&e, "_Z6kernelPfi");
    uint64_t ts = 1000, corr = 1;
    static const unsigned again[] = {0, 127, 128, GMT_TAB_CAP - 1, GMT_TAB_CAP + 1};
    for (unsigned i = 0; i < GMT_TAB_CAP + 4 + sizeof again / sizeof again[0]; i++) {
        unsigned s = i < GMT_TAB_CAP + 4 ? i : again[i - (GMT_TAB_CAP + 4)];
        gmt_record r = {.type = GMT_REC_KERNEL};
        gmt_kernel *k = &r.u.kernel;
        k->start = ts += 100;
        k->end = ts + 50;
        k->stream = 7;
        k->corr = ++corr;
        k->name = kname;
        k->grid[0] = 1 + s;
        k->grid[1] = k->grid[2] = 1;
        k->block[0] = 128;
        k->block[1] = k->block[2] = 1;
        k->registers = 32;
        k->tid = 4242;
        k->seq = i + 1;
        put(&e, &r);
        mem(&e, i < GMT_TAB_CAP + 4 ? GMT_REC_ALLOC : GMT_REC_FREE, ts += 10, 0x7f0000000000ull + 4096ull * s, 4096,
            GMT_MEMKIND_DEVICE, GMT_SRC_ASYNC_POOL, 0, ++corr, 1000 + s, 0, i + 1, 0);
    }
    if (gmt_writer_close(e.w) != GMT_OK)
        die("gmt_writer_close");
    gmt_strtab_free(e.tab);
}

/* A raw stream: preamble (with the given version) and the trace records. */
static unsigned char *raw_trace(uint16_t major, uint16_t minor, int extra, int unknown, size_t *n)
{
    emit e;
    memset(&e, 0, sizeof e);
    /* the 1.1 streams have no _REF records: no writer of 1.1 wrote any */
    e.plain = major == 1 && minor < 2;
    e.tab = gmt_strtab_create();
    e.raw_cap = 1 << 16;
    e.raw = malloc(e.raw_cap);
    if (!e.tab || !e.raw)
        die("out of memory");
    gmt_preamble_put(e.raw);
    e.raw[8] = (unsigned char)major;
    e.raw[9] = (unsigned char)(major >> 8);
    e.raw[10] = (unsigned char)minor;
    e.raw[11] = (unsigned char)(minor >> 8);
    e.raw_len = GMT_PREAMBLE_LEN;
    gmt_codec_reset(&e.codec);
    /* 2.0 and later: the times go to the frame's TIMES record, put in
     * front of the records below once they are all encoded */
    static unsigned char times[1 << 16];
    if (major >= 2)
        gmt_codec_set_time_sink(&e.codec, times, sizeof times);
    e.extra = extra;
    if (unknown) {
        /* A record type this version does not know, with a 5-byte payload. */
        static const unsigned char unk[] = {40, 5, 1, 2, 3, 4, 5};
        memcpy(e.raw + e.raw_len, unk, sizeof unk);
        e.raw_len += sizeof unk;
    }
    trace(&e, 1, 2);
    gmt_strtab_free(e.tab);
    if (major >= 2) {
        size_t tn = gmt_codec_time_len(&e.codec);
        unsigned char hdr[4];
        size_t hn = 0;
        hdr[hn++] = GMT_WIRE_TIMES;
        hn += gmt_varint_put(hdr + hn, 3, tn);
        if (e.raw_len + hn + tn > e.raw_cap && !(e.raw = realloc(e.raw, e.raw_cap = e.raw_len + hn + tn)))
            die("out of memory");
        memmove(e.raw + GMT_PREAMBLE_LEN + hn + tn, e.raw + GMT_PREAMBLE_LEN, e.raw_len - GMT_PREAMBLE_LEN);
        memcpy(e.raw + GMT_PREAMBLE_LEN, hdr, hn);
        memcpy(e.raw + GMT_PREAMBLE_LEN + hn, times, tn);
        e.raw_len += hn + tn;
    }
    *n = e.raw_len;
    return e.raw;
}

static unsigned char *compress(const unsigned char *p, size_t n, size_t *out_n)
{
    size_t cap = ZSTD_compressBound(n);
    unsigned char *out = malloc(cap);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    if (!out || !c)
        die("out of memory");
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    size_t k = ZSTD_compress2(c, out, cap, p, n);
    ZSTD_freeCCtx(c);
    if (ZSTD_isError(k)) {
        fprintf(stderr, "gen_corpus: zstd: %s\n", ZSTD_getErrorName(k));
        exit(1);
    }
    *out_n = k;
    return out;
}

static void damaged(const char *from, const char *stem)
{
    char path[4096], name[256];
    size_t n;
    snprintf(path, sizeof path, "%s/reader/%s", outdir, from);
    unsigned char *b = slurp(path, &n);
    /* Cuts: inside the zstd magic, inside the first frame, half, all but one. */
    size_t cuts[] = {3, n / 5, n / 2, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        snprintf(name, sizeof name, "%s-cut%zu.zst", stem, cuts[i]);
        put_file("reader", name, b, cuts[i]);
    }
    /* Damage: a flipped bit mid-file, the last byte (checksum), 16 zero bytes. */
    unsigned char *c = malloc(n);
    if (!c)
        die("out of memory");
    memcpy(c, b, n);
    c[n / 2] ^= 0x10;
    snprintf(name, sizeof name, "%s-flip.zst", stem);
    put_file("reader", name, c, n);
    memcpy(c, b, n);
    c[n - 1] ^= 0xff;
    snprintf(name, sizeof name, "%s-badsum.zst", stem);
    put_file("reader", name, c, n);
    memcpy(c, b, n);
    memset(c + n / 3, 0, n / 3 + 16 < n ? 16 : 1);
    snprintf(name, sizeof name, "%s-zeros.zst", stem);
    put_file("reader", name, c, n);
    free(c);
    free(b);
}

/* ---- settings environments ----------------------------------------------------- */

static void env_file(const char *name, const char *const *vars)
{
    char buf[8192];
    size_t n = 0;
    for (size_t i = 0; vars[i]; i++) {
        size_t k = strlen(vars[i]);
        if (n + k + 1 > sizeof buf)
            break;
        memcpy(buf + n, vars[i], k);
        n += k;
        if (vars[i + 1])
            buf[n++] = '\0';
    }
    put_file("config", name, buf, n);
}

static void config_corpus(void)
{
    static const char *const valid[] = {
        "GMEMPROF_ENABLE=1", "GMEMPROF_OUTPUT=/tmp/run-%h-%p-%r-%t.zst", "GMEMPROF_SCHEDULE=wait=1,warmup=1,active=2,repeat=2",
        "GMEMPROF_STEP_MARKER=step", "GMEMPROF_TAG_PREFIX=tag:", "GMEMPROF_SAMPLE_MS=50", "GMEMPROF_FLUSH_MS=500",
        "GMEMPROF_HOST_BUFFER_MB=32", "GMEMPROF_CUPTI_BUFFER_KB=512", "GMEMPROF_DEVICE_BUFFER_KB=256",
        "GMEMPROF_KERNELS=yes", "GMEMPROF_ZSTD_LEVEL=19", "GMEMPROF_LOG=debug", "GMEMPROF_SUMMARY_FILE=/tmp/s.txt",
        "GMEMPROF_STEP_SOURCE=optimizer", "GMEMPROF_TORCH_OPS=0", "GMEMPROF_CLOCK=TSC", "RANK=3", "LOCAL_RANK=1",
        "WORLD_SIZE=8", NULL};
    static const char *const bad[] = {
        "GMEMPROF_ENABLE=maybe", "GMEMPROF_OUTPUT=/tmp/%q.zst", "GMEMPROF_SCHEDULE=wait=2,warmup=x",
        "GMEMPROF_SAMPLE_MS=-5", "GMEMPROF_FLUSH_MS=1", "GMEMPROF_HOST_BUFFER_MB=99999999999999999999999",
        "GMEMPROF_CUPTI_BUFFER_KB=12k", "GMEMPROF_DEVICE_BUFFER_KB=0x100", "GMEMPROF_KERNELS=2",
        "GMEMPROF_ZSTD_LEVEL=22", "GMEMPROF_LOG=loud", "GMEMPROF_STEP_SOURCE=epoch", "GMEMPROF_CLOCK=hpet", "GMEMPROF_OUTPT=x.zst", "RANK=-1", NULL};
    static const char *const budget[] = {"GMEMPROF_HOST_BUFFER_MB=4", "GMEMPROF_CUPTI_BUFFER_KB=65536", NULL};
    static const char *const blanks[] = {"GMEMPROF_SAMPLE_MS= 250 ", "GMEMPROF_KERNELS=\tOff", "GMEMPROF_LOG= QUIET",
                                         "GMEMPROF_ZSTD_LEVEL=", "GMEMPROF_OUTPUT=out/", NULL};
    static const char *const sched_pos[] = {"GMEMPROF_SCHEDULE=10,2,1,3,0", NULL};
    static const char *const sched_time[] = {"GMEMPROF_SCHEDULE=delay=1.5s,duration=200ms", NULL};
    static const char *const sched_capture[] = {"GMEMPROF_SCHEDULE=capture", NULL};
    static const char *const sched_mixed[] = {"GMEMPROF_SCHEDULE=wait=1,5", NULL};
    static const char *const sched_torch[] = {"GMEMPROF_SCHEDULE=skip_first=3,wait=0,warmup=0,active=1,repeat=0",
                                              NULL};
    static const char *const shorthand[] = {"a=0", "b=%%x%p", "c=2,1,3", "f=100", "l=7", "p=12", NULL};
    static const char *const long_name[] = {
        "GMEMPROF_STEP_MARKER=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "GMEMPROF_TAG_PREFIX=mem/", NULL};
    static const char *const markers[] = {"GMEMPROF_STEP_MARKER=iter", "iter 12", "iteration", "mem:after",
                                          "GMEMPROF_TAG_PREFIX=mem:", NULL};
    env_file("valid.env", valid);
    env_file("bad.env", bad);
    env_file("budget.env", budget);
    env_file("blanks.env", blanks);
    env_file("sched-positional.env", sched_pos);
    env_file("sched-time.env", sched_time);
    env_file("sched-capture.env", sched_capture);
    env_file("sched-mixed.env", sched_mixed);
    env_file("sched-torch.env", sched_torch);
    env_file("shorthand.env", shorthand);
    env_file("long-name.env", long_name);
    env_file("markers.env", markers);
    /* State machine runs: a schedule, then operation bytes (low 2 bits:
     * 0 step, 1 tick, 2 capture; 0xfc finish). '@' steps, 'A' ticks, 'F'
     * starts a capture and 'B' stops it: printable, so that no problem line
     * quotes a control byte. */
    static const char ops[] = "c=1,1,2,2\0@@@@@@@@@@@@\xfc@@";
    static const char ops_time[] = "c=delay=1ms,duration=2ms\0AAAAAAAAAAAAAAAAAAAA@";
    static const char ops_cap[] = "c=capture\0@F@@B@F@B\xfc";
    put_file("config", "ops-time.env", ops_time, sizeof ops_time - 1);
    put_file("config", "ops-capture.env", ops_cap, sizeof ops_cap - 1);
    put_file("config", "steps-ops.env", ops, sizeof ops - 1);
}

/* PyTorch bridge traces (the analyzer tests' module scenarios,
 * tests/analyzer/sc_modules.c): BLOCK records with frames, module ranges
 * forward and backward, OWNER records, each under the views that read them. */
static void bridge_seeds(void)
{
    static const struct {
        const char *name;
        int (*write)(const char *path);
        unsigned char opts[4];
    } seeds[] = {
        {"modules_owned@module", sc_modules_owned, {0x07, 0x04, 0x30, 0x1f}},
        {"modules_owned@insights", sc_modules_owned, {0x07, 0x05, 0x30, 0x1f}},
        {"modules@json-by-line", sc_modules, {0x28, 0x04, 0x30, 0x1f}},
        {"modules@html", sc_modules, {0x07, 0x02, 0x30, 0x1f}},
    };
    char path[4096];
    snprintf(path, sizeof path, "%s/analyze/.scenario.gmt", outdir);
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        if (seeds[i].write(path) != 0)
            die(seeds[i].name);
        size_t k;
        unsigned char *b = slurp(path, &k);
        unsigned char *o = malloc(k + 4);
        if (!o)
            die("out of memory");
        memcpy(o, seeds[i].opts, 4);
        memcpy(o + 4, b, k);
        put_file("analyze", seeds[i].name, o, k + 4);
        free(o);
        free(b);
    }
    if (remove(path) != 0)
        die(path);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_corpus OUTDIR\n");
        return 2;
    }
    outdir = argv[1];
    mkdir_p("reader");
    mkdir_p("config");
    mkdir_p("analyze");

    write_trace("full.zst", 512, 1, 3);       /* several frames */
    write_trace("oneframe.zst", 0, 1, 2);     /* one frame */
    write_trace("notrailer.zst", 700, 0, 2);  /* a process that did not exit cleanly */
    write_trace("empty-run.zst", 0, 1, 0);    /* no steps */
    write_table_full("table-full.zst");       /* 1.2: tables at their cap */
    damaged("full.zst", "full");

    size_t n, cn;
    unsigned char *raw = raw_trace(GMT_VERSION_MAJOR, GMT_VERSION_MINOR, 0, 0, &n);
    put_file("reader", "raw-stream.bin", raw, n);
    unsigned char *c = compress(raw, n, &cn);
    /* A skippable frame (magic 0x184D2A50, 4 bytes) between two frames. */
    static const unsigned char skip[] = {0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 'g', 'm', 'e', 'm'};
    unsigned char *two = malloc(cn + sizeof skip + 32);
    size_t en;
    unsigned char *empty_frame = compress((const unsigned char *)"", 0, &en);
    memcpy(two, c, cn);
    memcpy(two + cn, skip, sizeof skip);
    memcpy(two + cn + sizeof skip, empty_frame, en);
    put_file("reader", "skippable.zst", two, cn + sizeof skip + en);
    free(two);
    free(empty_frame);
    free(c);
    free(raw);

    raw = raw_trace(GMT_VERSION_MAJOR, GMT_VERSION_MINOR + 1, 1, 1, &n);
    put_file("reader", "raw-newer-minor.bin", raw, n);
    c = compress(raw, n, &cn);
    put_file("reader", "newer-minor.zst", c, cn);
    free(c);
    free(raw);

    raw = raw_trace(GMT_VERSION_MAJOR + 1, 0, 0, 0, &n);
    c = compress(raw, n < 200 ? n : 200, &cn);
    put_file("reader", "newer-major.zst", c, cn);
    free(c);
    free(raw);

    /* Format 1.1 as its writers wrote it: no _REF records. */
    raw = raw_trace(1, 1, 0, 0, &n);
    put_file("reader", "raw-v1.1.bin", raw, n);
    c = compress(raw, n, &cn);
    put_file("reader", "v1.1.zst", c, cn);
    free(c);
    free(raw);

    /* A _REF record whose index is past its table: after a plain KERNEL
     * (one shape), a KERNEL_REF naming shape 1 and a FREE_REF naming
     * context 0 of an empty context table. */
    {
        unsigned char bad[256];
        size_t k = 0;
        gmt_codec bc;
        gmt_codec_reset(&bc);
        gmt_preamble_put(bad);
        bad[8] = 1; /* format 1.2: the times inline, as gmt_encode writes them without a time sink */
        bad[9] = 0;
        bad[10] = 2;
        bad[11] = 0;
        k = GMT_PREAMBLE_LEN;
        gmt_record r = {.type = GMT_REC_KERNEL};
        r.u.kernel.start = 5000;
        r.u.kernel.end = 6000;
        r.u.kernel.name = 1;
        r.u.kernel.grid[0] = 64;
        r.u.kernel.block[0] = 256;
        k += gmt_encode(&bc, &r, bad + k, sizeof bad - k);
        size_t ref_at = k;
        r.u.kernel.seq = 1;
        k += gmt_encode(&bc, &r, bad + k, sizeof bad - k);
        if (bad[ref_at] != GMT_WIRE_KERNEL_REF || bad[ref_at + 2] != 0)
            die("the second kernel is not a KERNEL_REF of shape 0");
        bad[ref_at + 2] = 1; /* shape 1: not in the table */
        static const unsigned char free_ref[] = {GMT_WIRE_FREE_REF, 9, 0, 0, 0x80, 0x20, 2, 0, 0, 0, 0x0a};
        memcpy(bad + k, free_ref, sizeof free_ref);
        k += sizeof free_ref;
        put_file("reader", "raw-ref-bad-index.bin", bad, k);
        c = compress(bad, k, &cn);
        put_file("reader", "ref-bad-index.zst", c, cn);
        free(c);
    }

    static const char text[] = "this is not a trace\n";
    c = compress((const unsigned char *)text, sizeof text - 1, &cn);
    put_file("reader", "zstd-not-trace.zst", c, cn);
    free(c);
    put_file("reader", "text.txt", text, sizeof text - 1);
    put_file("reader", "empty", "", 0);
    /* A raw stream that ends inside a record. */
    raw = raw_trace(GMT_VERSION_MAJOR, GMT_VERSION_MINOR, 0, 0, &n);
    put_file("reader", "raw-cut.bin", raw, n / 2 + 3);
    free(raw);

    config_corpus();

    /* The analyzer's seeds: traces a user could hand it. */
    static const char *const for_analyze[] = {"full.zst", "oneframe.zst", "notrailer.zst", "empty-run.zst",
                                              "newer-minor.zst", "newer-major.zst", "full-cut3.zst", "empty",
                                              "text.txt", "full-flip.zst", "raw-stream.bin",
                                              "raw-newer-minor.bin", "raw-cut.bin", "v1.1.zst",
                                              "table-full.zst", "ref-bad-index.zst", NULL};
    /* fuzz_analyze's option bytes (fuzz_analyze.c, opts_from): b0 --by and
     * --format, b1 the extra and --sort, b2 --top and --window, b3 --step and
     * --device. The default: a table by kernel, no extra, no filter. */
    static const unsigned char plain_opts[4] = {0x00, 0x04, 0x30, 0x1f};
    for (size_t i = 0; for_analyze[i]; i++) {
        char path[4096];
        size_t k;
        snprintf(path, sizeof path, "%s/reader/%s", outdir, for_analyze[i]);
        unsigned char *b = slurp(path, &k);
        unsigned char *o = malloc(k + 4);
        if (!o)
            die("out of memory");
        memcpy(o, plain_opts, 4);
        memcpy(o + 4, b, k);
        put_file("analyze", for_analyze[i], o, k + 4);
        free(o);
        free(b);
    }
    static const struct {
        const char *name;
        unsigned char opts[4];
    } views[] = {
        {"full@csv-by-range", {0x11, 0x04, 0x30, 0x1f}},
        {"full@json-by-alloc-time", {0x22, 0x64, 0x30, 0x1f}}, /* --sort time given */
        {"full@json-by-step", {0x23, 0x04, 0x30, 0x1f}},
        {"full@table-by-tag-full-names", {0x04, 0x84, 0x30, 0x1f}},
        {"full@csv-by-stream-top2", {0x15, 0x04, 0x32, 0x1f}},
        {"full@json-by-device", {0x26, 0x04, 0x30, 0x1f}},
        {"full@chrome", {0x00, 0x00, 0x30, 0x1f}},
        {"full@svg", {0x01, 0x01, 0x30, 0x1f}},
        {"full@html", {0x03, 0x02, 0x30, 0x1f}},
        {"full@diff-by-kernel", {0x00, 0x03, 0x30, 0x1f}},
        {"full@diff-json-by-range", {0x21, 0x03, 0x30, 0x1f}},
        {"full@window0-step1-device0", {0x20, 0x04, 0x00, 0x01}},
        {"full@insights", {0x00, 0x05, 0x30, 0x1f}},
        {"full@insights-json", {0x20, 0x05, 0x30, 0x1f}},
    };
    char fpath[4096];
    size_t fk;
    snprintf(fpath, sizeof fpath, "%s/reader/full.zst", outdir);
    unsigned char *full = slurp(fpath, &fk);
    if (fk > ((size_t)1 << 30))
        die("reader/full.zst is implausibly large");
    /* Sized with a constant lower bound: gcc 14's -Wstringop-overflow
     * cannot see that fk + 4 >= 4 otherwise. */
    size_t fo_len = fk + 4;
    unsigned char *fo = malloc(fo_len < 16 ? 16 : fo_len);
    if (!fo)
        die("out of memory");
    memcpy(fo + 4, full, fk);
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
        fo[0] = views[i].opts[0];
        fo[1] = views[i].opts[1];
        fo[2] = views[i].opts[2];
        fo[3] = views[i].opts[3];
        put_file("analyze", views[i].name, fo, fk + 4);
    }
    free(fo);
    free(full);
    bridge_seeds();
    return 0;
}
