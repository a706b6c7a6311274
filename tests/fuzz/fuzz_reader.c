/*
 * fuzz_reader: the trace reader (common/reader.c), the codec (common/codec.c),
 * the writer and the string table, driven by one input read two ways.
 *
 * 1. As a compressed trace file: gmt_reader_open_mem over the input, every
 *    record drained and checked (known type, strings in bounds and read byte
 *    by byte, TAG device count), and the end information checked against
 *    what was returned (status matches the return value, record count,
 *    trailer seen, sizes and offsets, a message, a sticky end). A second
 *    reader over a prefix of the input (cut chosen from the input's hash)
 *    must return a prefix of the same records: truncation never changes or
 *    invents a record. (Except after a zstd error in the whole input: zstd
 *    verifies a frame it holds completely before handing any of it out, so a
 *    damaged frame yields nothing whole but its first records when cut.)
 *
 * 2. As the decompressed record stream (what is inside the zstd frames):
 *    a) a gmt_decode loop over the raw bytes: every record's strings inside
 *       the record, lengths within the input, the codec state unchanged on
 *       any error, and each record re-encoded with gmt_encode and decoded
 *       again to the same values and the same delta state (encode within
 *       gmt_encode_bound, refusing a buffer one byte short);
 *    b) the same bytes compressed here into one or several zstd frames (cut
 *       at record boundaries chosen from the input's hash) and read back with
 *       the reader, which must return exactly the records of the decode loop
 *       (with the delta state reset at each frame, as the format says), skip
 *       the same unknown types and end with the matching status;
 *    c) the decoded records written again with gmt_writer (small frames) and
 *       read back: the same records, a clean end, the writer's frame count;
 *    d) every string of every record interned in a gmt_strtab: ids from 1 in
 *       order of first appearance, stable on the second intern.
 *
 * Every reader here reads one of three ways, chosen from the input's hash
 * per reader: gmt_reader_next alone, or runs of gmt_reader_next_hot (of a
 * cap from 1 to 64) between single records, with the pext decoder or the
 * portable one. The checks above hold for each, so the batch read is
 * compared with the plain one, and both with the decode loop.
 *
 * A single input of a few KiB can declare gigabytes of output through zstd
 * RLE blocks; a pass stops checking its end after MAX_RECORDS records so
 * such inputs stay fast, which is not a finding (the reader is streaming).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "fuzz_util.h"
#include "gmt_io.h"

#define MAX_RECORDS (1u << 20)
/* Largest encoding of any record: a HEADER with four strings at the limit. */
#define ENC_BUF (4u + 10u * 14u + 4u * GMT_MAX_STRING + 64u)

static uint8_t enc_buf[ENC_BUF];

/* The delta state is opaque (trace_format.h): compared whole. */
/* The delta state and the tables; not where a 2.0 time stream is read from
 * or written to, which differs between an encoder and a decoder. */
static int codec_eq(const gmt_codec *a, const gmt_codec *b)
{
    size_t t = offsetof(gmt_codec, shapes);
    return memcmp(&a->d, &b->d, sizeof a->d) == 0 && memcmp((const char *)a + t, (const char *)b + t, sizeof *a - t) == 0;
}

/* ---- checked reader access ------------------------------------------------ */

#define HOT_MAX 64

typedef struct rd {
    gmt_reader *r;
    size_t size;       /* compressed bytes given to it */
    uint64_t n;        /* records returned */
    int ret;           /* last return value of gmt_reader_next */
    int saw_trailer;
    int capped;        /* stopped after MAX_RECORDS: end not checked */
    int hot;           /* reads runs with gmt_reader_next_hot */
    size_t cap, bn, bi; /* run size asked for; records in hot[], next one */
    gmt_hot buf[HOT_MAX];
} rd;

/* Picks each reader's way of reading (see the top of the file). */
static uint64_t g_read_modes;

static void rd_open(rd *d, const void *p, size_t n)
{
    d->r = gmt_reader_open_mem(p, n);
    FZ_CHECK(d->r != NULL, "gmt_reader_open_mem failed: %s", strerror(errno));
    d->size = n;
    d->n = 0;
    d->ret = 1;
    d->saw_trailer = d->capped = 0;
    unsigned mode = (unsigned)(g_read_modes & 3);
    d->hot = mode >= 2;
    d->cap = 1 + (size_t)((g_read_modes >> 2) % HOT_MAX);
    d->bn = d->bi = 0;
    g_read_modes = (g_read_modes >> 8) | (g_read_modes << 56);
    if (d->hot)
        gmt_reader_set_pext(d->r, mode == 2);
}

/* The next record through a run of gmt_reader_next_hot: 1 with *rec, or
 * 0 when no run is there (gmt_reader_next reads the next record). */
static int rd_next_hot(rd *d, gmt_record *rec)
{
    if (d->bi == d->bn) {
        size_t cap = d->cap;
        if (d->n + cap > MAX_RECORDS)
            cap = (size_t)(MAX_RECORDS - d->n);
        d->bn = gmt_reader_next_hot(d->r, d->buf, cap);
        d->bi = 0;
        FZ_CHECK(d->bn <= cap, "gmt_reader_next_hot returned %zu records for a run of %zu", d->bn, cap);
        if (d->bn == 0)
            return 0;
    }
    const gmt_hot *h = &d->buf[d->bi++];
    rec->type = h->type;
    switch (h->type) {
    case GMT_REC_ALLOC:
    case GMT_REC_FREE:
        rec->u.mem = h->u.mem;
        break;
    case GMT_REC_KERNEL:
        rec->u.kernel = h->u.kernel;
        break;
    case GMT_REC_MEMCPY:
    case GMT_REC_MEMSET:
        rec->u.copy = h->u.copy;
        break;
    case GMT_REC_RANGE_BEGIN:
    case GMT_REC_RANGE_END:
        rec->u.range = h->u.range;
        break;
    default:
        FZ_CHECK(0, "gmt_reader_next_hot returned a %s record", gmt_type_name(h->type));
    }
    return 1;
}

/* 1 with *rec, else the end value; checks every record. */
static int rd_next(rd *d, gmt_record *rec)
{
    if (d->ret != 1)
        return d->ret;
    if (d->n >= MAX_RECORDS) {
        d->capped = 1;
        d->ret = 0;
        return 0;
    }
    int k = d->hot && rd_next_hot(d, rec) ? 1 : gmt_reader_next(d->r, rec);
    FZ_CHECK(k == 1 || k == 0 || (k < 0 && k >= GMT_E_ARG), "gmt_reader_next returned %d", k);
    d->ret = k;
    if (k == 1) {
        fz_record_check(rec, NULL, NULL);
        d->n++;
        if (rec->type == GMT_REC_TRAILER)
            d->saw_trailer = 1;
    }
    return k;
}

/* What must hold once the reader has stopped, whatever the input. */
static void rd_check_end(rd *d)
{
    if (d->capped)
        return;
    const gmt_reader_end *e = gmt_reader_end_info(d->r);
    FZ_CHECK(e != NULL, "no end info");
    FZ_CHECK(d->ret <= 0, "end checked before the end");
    if (d->ret == 0)
        FZ_CHECK(e->status == GMT_OK, "returned 0 but status is %d (%s)", e->status, e->message);
    else
        FZ_CHECK((int)e->status == d->ret && e->status != GMT_OK, "returned %d but status is %d", d->ret,
                 e->status);
    FZ_CHECK(memchr(e->message, '\0', sizeof e->message) != NULL, "end message not terminated");
    FZ_CHECK(e->message[0] != '\0', "end message empty (status %d)", e->status);
    FZ_CHECK(strchr(e->message, '\n') == NULL, "end message spans lines: %s", e->message);
    FZ_CHECK(e->records == d->n, "end says %llu records, %llu were returned", (unsigned long long)e->records,
             (unsigned long long)d->n);
    FZ_CHECK(!!e->has_trailer == d->saw_trailer, "has_trailer %d but a trailer was %sreturned",
             e->has_trailer, d->saw_trailer ? "" : "not ");
    FZ_CHECK(e->file_size == d->size, "file_size %llu, input %zu bytes", (unsigned long long)e->file_size,
             d->size);
    FZ_CHECK(e->good_offset <= e->file_size, "good_offset %llu > file_size %llu",
             (unsigned long long)e->good_offset, (unsigned long long)e->file_size);
    if (e->status == GMT_OK) {
        FZ_CHECK(!e->truncated, "clean end marked truncated: %s", e->message);
        FZ_CHECK(e->good_offset == e->file_size, "clean end but good_offset %llu != file_size %llu: %s",
                 (unsigned long long)e->good_offset, (unsigned long long)e->file_size, e->message);
        FZ_CHECK(e->major >= 1 && e->major <= GMT_VERSION_MAJOR, "clean end with version %u.%u", e->major,
                 e->minor);
    }
    if (d->n > 0)
        FZ_CHECK(e->major >= 1 && e->major <= GMT_VERSION_MAJOR, "records returned under version %u.%u", e->major,
                 e->minor);
    /* The end is sticky: asking again changes nothing. */
    gmt_record rec;
    uint64_t before = e->records;
    int k = gmt_reader_next(d->r, &rec);
    FZ_CHECK(k == d->ret, "gmt_reader_next after the end returned %d, first %d", k, d->ret);
    FZ_CHECK(gmt_reader_end_info(d->r)->records == before, "records changed after the end");
}

static void rd_drain(rd *d)
{
    gmt_record rec;
    while (rd_next(d, &rec) == 1)
        ;
}

static void rd_close(rd *d)
{
    gmt_reader_close(d->r);
    d->r = NULL;
}

/* ---- 1. the input as a compressed trace ------------------------------------- */

static void fuzz_compressed(const uint8_t *data, size_t size, uint64_t h, int with_prefix)
{
    rd whole, part;
    gmt_record ra, rb;
    rd_open(&whole, data, size);
    if (with_prefix) {
        size_t cut = (size_t)(h % ((uint64_t)size + 1));
        rd_open(&part, data, cut);
        /* Lockstep: every record of the prefix is the next record of the whole. */
        while (rd_next(&part, &rb) == 1) {
            uint64_t db = fz_record_digest(&rb);
            int k = rd_next(&whole, &ra);
            if (whole.capped)
                break;
            /* zstd checks a frame that is whole in its input before it hands
             * out any of it, but streams a cut one: a frame whose checksum or
             * a later block is bad yields its first records to a prefix only. */
            if (k != 1 && gmt_reader_end_info(whole.r)->status == GMT_E_ZSTD)
                break;
            FZ_CHECK(k == 1, "a %zu-byte prefix gave record %llu (%s), the whole %zu-byte input ended (%d)", cut,
                     (unsigned long long)part.n, gmt_type_name(rb.type), size, k);
            FZ_CHECK(fz_record_digest(&ra) == db, "record %llu differs between a %zu-byte prefix (%s) and the "
                     "whole input (%s)", (unsigned long long)part.n, cut, gmt_type_name(rb.type),
                     gmt_type_name(ra.type));
        }
        if (part.ret <= 0)
            rd_check_end(&part);
        rd_close(&part);
    }
    rd_drain(&whole);
    rd_check_end(&whole);
    rd_close(&whole);
}

/* ---- 2. the input as the decompressed record stream ------------------------ */

typedef struct raw_it {
    const uint8_t *p;
    size_t len, pos;
    gmt_codec codec;
    const size_t *cuts; /* stream offsets where a new frame starts: delta reset */
    size_t ncuts, ci;
    uint64_t ok, skipped;
    gmt_status pre;     /* preamble status */
    uint16_t major, minor;
    int saw_trailer;
    int times_first;    /* 2.0: every frame starts with its TIMES record */
    int need_times;
    size_t fstart;      /* where the current frame started */
} raw_it;

static void raw_init(raw_it *it, const uint8_t *p, size_t len, const size_t *cuts, size_t ncuts)
{
    memset(it, 0, sizeof *it);
    it->p = p;
    it->len = len;
    it->cuts = cuts;
    it->ncuts = ncuts;
    gmt_codec_reset(&it->codec);
    it->pre = gmt_preamble_parse(p, len, &it->major, &it->minor);
    FZ_CHECK(it->pre == GMT_OK || it->pre == GMT_E_SHORT || it->pre == GMT_E_MAGIC || it->pre == GMT_E_VERSION ||
                 it->pre == GMT_E_CORRUPT,
             "gmt_preamble_parse returned %d", it->pre);
    if (it->pre == GMT_OK)
        it->pos = GMT_PREAMBLE_LEN;
    it->times_first = it->need_times = it->pre == GMT_OK && it->major >= 2;
}

/* At a frame's end in a 2.0 stream: the frame had content but no TIMES
 * record, or its records left time bytes unused (the reader's rule). */
static int raw_frame_bad(const raw_it *it)
{
    return it->times_first && ((it->need_times && it->pos > it->fstart) || gmt_codec_time_left(&it->codec) > 0);
}

/* Encodes a decoded record again and decodes that: same values, same delta
 * state, never more than gmt_encode_bound, refused in one byte less. */
static void roundtrip(const gmt_codec *before, const gmt_record *rec, const gmt_codec *after)
{
    uint64_t want = fz_record_digest(rec);
    size_t bound = gmt_encode_bound(rec);
    FZ_CHECK(bound > 0 && bound <= sizeof enc_buf, "gmt_encode_bound %zu for %s", bound, gmt_type_name(rec->type));
    /* a 2.0 stream's record goes out with its times in a time stream */
    static uint8_t tb[64];
    int ts = before->tsep;
    gmt_codec c = *before;
    if (ts)
        gmt_codec_set_time_sink(&c, tb, sizeof tb);
    size_t n = gmt_encode(&c, rec, enc_buf, sizeof enc_buf);
    FZ_CHECK(n >= 2 && n <= bound, "gmt_encode gave %zu bytes for a decoded %s (bound %zu)", n,
             gmt_type_name(rec->type), bound);
    FZ_CHECK(codec_eq(&c, after), "encoding a decoded %s moved the delta state differently",
             gmt_type_name(rec->type));
    gmt_codec d = *before;
    if (ts)
        gmt_codec_set_time_source(&d, tb, gmt_codec_time_len(&c));
    gmt_record back;
    size_t used = 0;
    gmt_status st = gmt_decode(&d, enc_buf, n, &back, &used);
    FZ_CHECK(gmt_codec_time_left(&d) == 0, "re-encoded %s left %zu time bytes", gmt_type_name(rec->type),
             gmt_codec_time_left(&d));
    FZ_CHECK(st == GMT_OK && used == n, "re-encoded %s does not decode: status %d, used %zu of %zu",
             gmt_type_name(rec->type), st, used, n);
    FZ_CHECK(fz_record_digest(&back) == want, "re-encoded %s decodes to other values", gmt_type_name(rec->type));
    FZ_CHECK(codec_eq(&d, after), "re-encoded %s moves the delta state differently", gmt_type_name(rec->type));
    gmt_codec e = *before;
    if (ts)
        gmt_codec_set_time_sink(&e, tb, sizeof tb);
    FZ_CHECK(gmt_encode(&e, rec, enc_buf, n - 1) == 0, "gmt_encode of %s fit in %zu bytes, needs %zu",
             gmt_type_name(rec->type), n - 1, n);
    FZ_CHECK(codec_eq(&e, before), "a refused gmt_encode changed the delta state");
}

/* 1: a record; 0: the stream ended cleanly; <0: the decode status that
 * stopped it (GMT_E_SHORT: bytes left that are not a whole record). */
static int raw_next(raw_it *it, gmt_record *rec, int check)
{
    if (it->pre != GMT_OK)
        return it->pre;
    for (;;) {
        while (it->ci < it->ncuts && it->cuts[it->ci] <= it->pos) {
            if (it->cuts[it->ci] == it->pos) {
                if (raw_frame_bad(it))
                    return GMT_E_CORRUPT;
                gmt_codec_reset(&it->codec);
                it->need_times = it->times_first;
                it->fstart = it->pos;
            }
            it->ci++;
        }
        if (it->pos == it->len)
            return raw_frame_bad(it) ? GMT_E_CORRUPT : 0;
        if (it->need_times) {
            size_t fend = it->ci < it->ncuts ? it->cuts[it->ci] : it->len;
            const uint8_t *tp = it->p + it->pos;
            uint64_t tl = 0;
            int lb = fend - it->pos > 1 ? gmt_varint_get(tp + 1, fend - it->pos - 1, &tl) : 0;
            if (tp[0] != GMT_WIRE_TIMES || lb <= 0 || tl > GMT_MAX_PAYLOAD || 1 + (size_t)lb + tl > fend - it->pos)
                return GMT_E_CORRUPT;
            gmt_codec_set_time_source(&it->codec, tp + 1 + lb, (size_t)tl);
            it->pos += 1 + (size_t)lb + (size_t)tl;
            it->need_times = 0;
            continue;
        }
        size_t avail = it->len - it->pos, used = 0;
        const uint8_t *at = it->p + it->pos;
        gmt_codec before = it->codec;
        gmt_status st = gmt_decode(&it->codec, at, avail, rec, &used);
        if (st == GMT_OK) {
            FZ_CHECK(used >= 2 && used <= avail, "gmt_decode used %zu of %zu bytes", used, avail);
            if (check) {
                fz_record_check(rec, at, at + used);
                roundtrip(&before, rec, &it->codec);
            }
            it->pos += used;
            it->ok++;
            if (rec->type == GMT_REC_TRAILER)
                it->saw_trailer = 1;
            return 1;
        }
        FZ_CHECK(codec_eq(&before, &it->codec), "gmt_decode status %d changed the delta state", st);
        if (st == GMT_E_TYPE) {
            FZ_CHECK(used >= 2 && used <= avail, "unknown type: used %zu of %zu bytes", used, avail);
            FZ_CHECK(at[0] >= GMT_REC_TYPE_MAX_, "type %u reported unknown", at[0]);
            it->pos += used;
            it->skipped++;
            continue;
        }
        FZ_CHECK(st == GMT_E_SHORT || st == GMT_E_CORRUPT, "gmt_decode returned %d", st);
        return st;
    }
}

/* Interns every string of rec: ids count up from 1 in order of first sight. */
static void strtab_check(gmt_strtab *t, const gmt_record *rec)
{
    const gmt_bytes *s[4];
    size_t n = fz_record_strings(rec, s);
    for (size_t i = 0; i < n; i++) {
        if (s[i]->len == 0 && fz_known("strtab-empty-null"))
            continue;
        int is_new = -1;
        size_t count = gmt_strtab_count(t);
        uint64_t id = gmt_strtab_intern(t, s[i]->ptr, s[i]->len, &is_new);
        FZ_CHECK(id != 0, "gmt_strtab_intern returned 0 (out of memory?)");
        if (is_new) {
            FZ_CHECK(id == count + 1 && gmt_strtab_count(t) == count + 1, "new string got id %llu with %zu known",
                     (unsigned long long)id, count);
        } else {
            FZ_CHECK(is_new == 0 && id <= count && gmt_strtab_count(t) == count, "known string: id %llu, is_new %d",
                     (unsigned long long)id, is_new);
        }
        int again = -1;
        FZ_CHECK(gmt_strtab_intern(t, s[i]->ptr, s[i]->len, &again) == id && again == 0,
                 "second intern of a string changed its id or said new");
    }
}

static ZSTD_CCtx *cctx(void)
{
    static ZSTD_CCtx *c;
    if (!c) {
        c = ZSTD_createCCtx();
        FZ_CHECK(c != NULL, "ZSTD_createCCtx");
        FZ_CHECK(!ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1)), "zstd level");
        FZ_CHECK(!ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)), "zstd checksum");
    }
    return c;
}

/* Compresses p[0..len) as one zstd frame per segment between cuts. */
static uint8_t *compress_frames(const uint8_t *p, size_t len, const size_t *cuts, size_t ncuts, size_t *out_len)
{
    size_t cap = 0, start = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        cap += ZSTD_compressBound(end - start);
        start = end;
    }
    uint8_t *out = malloc(cap ? cap : 1);
    FZ_CHECK(out != NULL, "out of memory");
    size_t pos = 0;
    start = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        size_t k = ZSTD_compress2(cctx(), out + pos, cap - pos, p + start, end - start);
        FZ_CHECK(!ZSTD_isError(k), "ZSTD_compress2: %s", ZSTD_getErrorName(k));
        pos += k;
        start = end;
    }
    *out_len = pos;
    return out;
}

/* The reader over frames made from the raw stream: exactly what the decode
 * loop (with the same frame resets) returned, ending the same way. */
static void reader_vs_raw(const uint8_t *comp, size_t comp_len, const uint8_t *data, size_t size, const size_t *cuts,
                          size_t ncuts, uint64_t frames, const char *how)
{
    rd d;
    raw_it it;
    gmt_record ra, rb;
    int kr;
    rd_open(&d, comp, comp_len);
    raw_init(&it, data, size, cuts, ncuts);
    for (;;) {
        kr = raw_next(&it, &ra, 0);
        uint64_t da = kr == 1 ? fz_record_digest(&ra) : 0;
        int kd = rd_next(&d, &rb);
        if (d.capped)
            break;
        if (kr != 1) {
            FZ_CHECK(kd != 1, "%s: the reader returned a record (%s) after the %llu the decode loop found",
                     how, gmt_type_name(rb.type), (unsigned long long)it.ok);
            break;
        }
        FZ_CHECK(kd == 1, "%s: the reader stopped (%d: %s) after %llu records, the decode loop has more", how, kd,
                 gmt_reader_end_info(d.r)->message, (unsigned long long)d.n);
        FZ_CHECK(fz_record_digest(&rb) == da, "%s: record %llu differs (reader %s, decode loop %s)", how,
                 (unsigned long long)d.n, gmt_type_name(rb.type), gmt_type_name(ra.type));
    }
    if (!d.capped) {
        rd_check_end(&d);
        const gmt_reader_end *e = gmt_reader_end_info(d.r);
        if (it.pre != GMT_OK) {
            gmt_status want = it.pre == GMT_E_VERSION ? GMT_E_VERSION
                              : it.pre == GMT_E_CORRUPT ? GMT_E_CORRUPT
                                                        : GMT_E_MAGIC;
            /* A frame holding only part of the preamble: known finding
             * short-preamble-msg (reported as a corrupt record instead). */
            int excused = it.pre == GMT_E_SHORT && e->status == GMT_E_CORRUPT && fz_known("short-preamble-msg");
            FZ_CHECK(e->status == want || excused, "%s: preamble status %d, reader status %d (%s)", how, it.pre,
                     e->status, e->message);
        } else if (kr == 0) {
            FZ_CHECK(e->status == GMT_OK, "%s: a clean stream read with status %d (%s)", how, e->status,
                     e->message);
            FZ_CHECK(e->frames == frames, "%s: %llu frames read, %llu written", how,
                     (unsigned long long)e->frames, (unsigned long long)frames);
            FZ_CHECK(e->skipped_unknown == it.skipped, "%s: %llu unknown records skipped, decode loop %llu", how,
                     (unsigned long long)e->skipped_unknown, (unsigned long long)it.skipped);
            FZ_CHECK(e->major == it.major && e->minor == it.minor, "%s: version %u.%u read as %u.%u", how,
                     it.major, it.minor, e->major, e->minor);
        } else {
            FZ_CHECK(e->status == GMT_E_CORRUPT, "%s: stream ends with decode status %d at byte %zu, reader "
                     "status %d (%s)", how, kr, it.pos, e->status, e->message);
        }
    }
    rd_close(&d);
}

/* Writes the decoded records again with gmt_writer and reads them back. */
static void writer_roundtrip(const uint8_t *data, size_t size, uint64_t h)
{
    static int memfd = -1;
    if (memfd < 0) {
        memfd = memfd_create("fuzz_reader", MFD_CLOEXEC);
        FZ_CHECK(memfd >= 0, "memfd_create: %s", strerror(errno));
    }
    FZ_CHECK(ftruncate(memfd, 0) == 0 && lseek(memfd, 0, SEEK_SET) == 0, "memfd reset: %s", strerror(errno));
    int fd = dup(memfd);
    FZ_CHECK(fd >= 0, "dup: %s", strerror(errno));
    gmt_writer_opts o = {.level = 1, .frame_bytes = 32 + (size_t)((h >> 20) % 4096)};
    gmt_writer *w = gmt_writer_open_fd(fd, &o);
    FZ_CHECK(w != NULL, "gmt_writer_open_fd: %s", strerror(errno));
    raw_it it;
    gmt_record rec;
    raw_init(&it, data, size, NULL, 0);
    while (raw_next(&it, &rec, 0) == 1) {
        gmt_status st = gmt_writer_put(w, &rec);
        FZ_CHECK(st == GMT_OK, "gmt_writer_put of a decoded %s: %d", gmt_type_name(rec.type), st);
    }
    FZ_CHECK(gmt_writer_records(w) == it.ok && gmt_writer_dropped(w) == 0, "writer took %llu, dropped %llu of %llu",
             (unsigned long long)gmt_writer_records(w), (unsigned long long)gmt_writer_dropped(w),
             (unsigned long long)it.ok);
    FZ_CHECK(gmt_writer_end_frame(w) == GMT_OK, "gmt_writer_end_frame");
    uint64_t frames = gmt_writer_frames(w), out = gmt_writer_bytes_out(w);
    FZ_CHECK(gmt_writer_close(w) == GMT_OK, "gmt_writer_close");
    off_t len = lseek(memfd, 0, SEEK_END);
    FZ_CHECK(len >= 0 && (uint64_t)len == out, "file holds %lld bytes, writer says %llu", (long long)len,
             (unsigned long long)out);
    uint8_t *buf = malloc((size_t)len + 1);
    FZ_CHECK(buf != NULL, "out of memory");
    FZ_CHECK(pread(memfd, buf, (size_t)len, 0) == len, "pread: %s", strerror(errno));

    /* The writer drops unknown types and resets deltas per frame; the values
     * are what matters: compare record by record against the decode loop. */
    rd d;
    gmt_record ra, rb;
    rd_open(&d, buf, (size_t)len);
    raw_init(&it, data, size, NULL, 0);
    int kr;
    while ((kr = raw_next(&it, &ra, 0)) == 1) {
        uint64_t da = fz_record_digest(&ra);
        int kd = rd_next(&d, &rb);
        FZ_CHECK(kd == 1, "written trace: reader stopped (%d: %s) after %llu of %llu records", kd,
                 gmt_reader_end_info(d.r)->message, (unsigned long long)d.n, (unsigned long long)it.ok);
        FZ_CHECK(fz_record_digest(&rb) == da, "written trace: record %llu (%s) reads back as other values",
                 (unsigned long long)d.n, gmt_type_name(ra.type));
    }
    rd_drain(&d);
    rd_check_end(&d);
    const gmt_reader_end *e = gmt_reader_end_info(d.r);
    FZ_CHECK(e->status == GMT_OK && d.n == it.ok, "written trace: status %d, %llu records of %llu (%s)", e->status,
             (unsigned long long)d.n, (unsigned long long)it.ok, e->message);
    FZ_CHECK(e->frames == frames, "written trace: %llu frames read, %llu written", (unsigned long long)e->frames,
             (unsigned long long)frames);
    FZ_CHECK(e->skipped_unknown == 0, "written trace: unknown records appeared");
    rd_close(&d);
    free(buf);
}

static void fuzz_raw(const uint8_t *data, size_t size, uint64_t h)
{
    raw_it it;
    gmt_record rec;
    size_t *bounds = NULL, nb = 0, capb = 0;
    int k;
    gmt_strtab *tab = gmt_strtab_create();
    FZ_CHECK(tab != NULL, "gmt_strtab_create");

    /* a) the decode loop, with every check; record boundaries for b). */
    raw_init(&it, data, size, NULL, 0);
    if (it.pre == GMT_OK) {
        bounds = malloc(64 * sizeof *bounds);
        FZ_CHECK(bounds != NULL, "out of memory");
        capb = 64;
        bounds[nb++] = GMT_PREAMBLE_LEN;
    }
    while (it.ok < MAX_RECORDS && (k = raw_next(&it, &rec, 1)) == 1) {
        strtab_check(tab, &rec);
        if (nb == capb) {
            capb *= 2;
            size_t *nbuf = realloc(bounds, capb * sizeof *bounds);
            FZ_CHECK(nbuf != NULL, "out of memory");
            bounds = nbuf;
        }
        bounds[nb++] = it.pos;
    }
    gmt_strtab_free(tab);
    uint64_t nrec = it.ok;

    /* b) one frame, or a cut every `every` record boundaries. */
    size_t every = (size_t)((h >> 8) % 6);
    size_t ncuts = 0;
    if (every > 0 && nrec < MAX_RECORDS) {
        for (size_t i = every - 1; i < nb; i += every)
            bounds[ncuts++] = bounds[i];
    }
    /* A stream that does not even start like the magic only tests the
     * reader's first check: sampled (see LLVMFuzzerTestOneInput on the cost
     * of a reader). A preamble that is cut, damaged or newer always runs. */
    size_t m = size < GMT_MAGIC_LEN ? size : GMT_MAGIC_LEN;
    int magic_like = it.pre != GMT_E_MAGIC && !(it.pre == GMT_E_SHORT && (size == 0 || memcmp(data, GMT_MAGIC, m) != 0));
    if (nrec < MAX_RECORDS && (magic_like || ((h >> 12) & 15) == 0)) {
        size_t comp_len = 0;
        uint8_t *comp = compress_frames(data, size, bounds, ncuts, &comp_len);
        reader_vs_raw(comp, comp_len, data, size, bounds, ncuts, ncuts + 1, every ? "several frames" : "one frame");
        free(comp);
    }
    free(bounds);

    /* c) the writer, for one in four streams that decode a record. */
    if (it.pre == GMT_OK && nrec > 0 && nrec <= 65536 && ((h >> 16) & 3) == 0)
        writer_roundtrip(data, size, h);
}

/* Does the input start like a zstd frame or a skippable frame? */
static int zstd_start(const uint8_t *d, size_t n)
{
    if (n < 4)
        return n > 0 && (d[0] == 0x28 || (d[0] & 0xf0) == 0x50);
    if (d[0] == 0x28 && d[1] == 0xb5 && d[2] == 0x2f && d[3] == 0xfd)
        return 1;
    return (d[0] & 0xf0) == 0x50 && d[1] == 0x2a && d[2] == 0x4d && d[3] == 0x18;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t h = fz_hash_bytes(FZ_FNV_INIT, data, size);
    g_read_modes = h * 0x9e3779b97f4a7c15ull;
    /* Opening a reader costs a zstd context and a 256 KiB window (fresh
     * pages under ASan), more than all the checks together. So an input
     * opens about one: the whole input when it looks like zstd (and a prefix
     * of it for half of them), the frames made from it when it holds a
     * preamble; inputs that fail at the first byte are sampled. */
    int z = zstd_start(data, size);
    if (z || (h & 15) == 0)
        fuzz_compressed(data, size, h, z && ((h >> 4) & 1));
    fuzz_raw(data, size, h);
    return 0;
}
