/*
 * Inputs that are not good traces, each with the exact outcome a user must
 * see: empty file, garbage, a zstd file holding something else, a newer
 * major version (crafted preamble, compressed with zstd), major 0, an
 * unknown record type (skipped), a bad varint, a frame that ends inside a
 * record, a KERNEL_REF whose shape was in the previous frame, zero bytes
 * after a good trace, a missing file.  The hand-built streams are format
 * 1.2 (times inline, what gmt_encode writes without a time sink) unless
 * they say 2.0: then each frame is put together here as the writer does,
 * its TIMES record first (sb2_frame).
 */
#include <zstd.h>

#include "tutil.h"

typedef struct outcome {
    size_t records;
    int rc;
    gmt_reader_end end;
    gmt_record last;
} outcome;

static outcome read_mem(const void *p, size_t n)
{
    outcome o;
    memset(&o, 0, sizeof o);
    gmt_reader *r = gmt_reader_open_mem(p, n);
    REQUIRE(r != NULL, "open");
    gmt_record rec;
    while ((o.rc = gmt_reader_next(r, &rec)) > 0) {
        o.records++;
        o.last = rec;
        REQUIRE(o.records < 1000000, "runaway");
    }
    o.end = *gmt_reader_end_info(r);
    gmt_reader_close(r);
    fprintf(stderr, "  -> %zu records, rc %d, status %s: %s\n", o.records, o.rc, gmt_status_str(o.end.status),
            o.end.message);
    return o;
}

/* Compresses raw stream bytes as one zstd frame. */
static size_t zframe(const void *raw, size_t n, uint8_t *out, size_t cap)
{
    size_t k = ZSTD_compress(out, cap, raw, n, 3);
    REQUIRE(!ZSTD_isError(k), "compress");
    return k;
}

/* raw stream builder */
typedef struct sb {
    uint8_t b[4096];
    size_t n;
} sb;

static void sb_pre(sb *s, uint16_t major, uint16_t minor)
{
    memcpy(s->b + s->n, GMT_MAGIC, GMT_MAGIC_LEN);
    s->n += GMT_MAGIC_LEN;
    s->b[s->n++] = (uint8_t)major;
    s->b[s->n++] = (uint8_t)(major >> 8);
    s->b[s->n++] = (uint8_t)minor;
    s->b[s->n++] = (uint8_t)(minor >> 8);
}

static void sb_rec(sb *s, gmt_codec *c, const gmt_record *r)
{
    size_t k = gmt_encode(c, r, s->b + s->n, sizeof s->b - s->n);
    REQUIRE(k > 0, "encode");
    s->n += k;
}

/* A 2.0 frame of n records: [preamble] TIMES(time stream) rows.  `extra`
 * bytes are appended to the time stream, `drop` bytes cut from its end, to
 * damage it; the codec is reset first, as at every frame start. */
static void sb2_frame(sb *s, int pre, const gmt_record *recs, size_t n, size_t extra, size_t drop)
{
    static gmt_codec c;
    uint8_t times[1024], rows[2048];
    size_t rn = 0;
    gmt_codec_reset(&c);
    gmt_codec_set_time_sink(&c, times, sizeof times);
    for (size_t i = 0; i < n; i++) {
        size_t k = gmt_encode(&c, &recs[i], rows + rn, sizeof rows - rn);
        REQUIRE(k > 0, "encode");
        rn += k;
    }
    size_t tn = gmt_codec_time_len(&c);
    for (size_t i = 0; i < extra; i++)
        times[tn++] = 0x02;
    REQUIRE(drop <= tn, "drop");
    tn -= drop;
    if (pre)
        sb_pre(s, GMT_VERSION_MAJOR, GMT_VERSION_MINOR);
    s->b[s->n++] = GMT_WIRE_TIMES;
    s->n += gmt_varint_put(s->b + s->n, 4, tn);
    memcpy(s->b + s->n, times, tn);
    s->n += tn;
    memcpy(s->b + s->n, rows, rn);
    s->n += rn;
}

/* One 2.0 frame of recs (sb2_frame's extra and drop), compressed whole or
 * only its first `cut` bytes (0: whole), and what the reader makes of it. */
static outcome read_frame2(const gmt_record *recs, size_t n, size_t extra, size_t drop, size_t cut)
{
    static sb s;
    static uint8_t z[1 << 16];
    s.n = 0;
    sb2_frame(&s, 1, recs, n, extra, drop);
    return read_mem(z, zframe(s.b, cut ? cut : s.n, z, sizeof z));
}

static gmt_record mark(uint64_t ts, uint64_t name)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_MARK;
    r.u.mark.ts = ts;
    r.u.mark.tid = 77;
    r.u.mark.name = name;
    return r;
}

static gmt_record trailer(uint64_t records)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_TRAILER;
    r.u.trailer.ts = 99;
    r.u.trailer.records = records;
    return r;
}

int main(void)
{
    static uint8_t z[1 << 16];
    size_t zn;
    outcome o;
    gmt_codec c;

    fprintf(stderr, "empty file\n");
    o = read_mem("", 0);
    CHECK(o.rc == GMT_E_SHORT && o.end.truncated && strstr(o.end.message, "empty file"), "empty");
    char path[256];
    tu_tmp_path(path, sizeof path, "empty");
    FILE *f = fopen(path, "wb");
    REQUIRE(f, "create");
    fclose(f);
    gmt_reader *r = gmt_reader_open(path);
    REQUIRE(r, "open empty");
    gmt_record rec;
    CHECK(gmt_reader_next(r, &rec) == GMT_E_SHORT && strstr(gmt_reader_end_info(r)->message, "empty file"),
          "empty file on disk");
    gmt_reader_close(r);
    unlink(path);

    fprintf(stderr, "garbage\n");
    const char text[] = "this is a text file, not a trace\n";
    o = read_mem(text, sizeof text - 1);
    CHECK(o.rc == GMT_E_MAGIC && o.records == 0 && strstr(o.end.message, "not a gmemprof trace (bad zstd magic at byte 0)"),
          "garbage");
    o = read_mem("ab", 2);
    CHECK(o.rc == GMT_E_MAGIC, "2 bytes of garbage");
    o = read_mem("\x28\xb5", 2); /* the start of a zstd magic: a cut trace */
    CHECK(o.rc == GMT_E_SHORT && o.end.truncated, "2 bytes of zstd magic");

    fprintf(stderr, "zstd holding something else\n");
    zn = zframe(text, sizeof text - 1, z, sizeof z);
    o = read_mem(z, zn);
    CHECK(o.rc == GMT_E_MAGIC && strstr(o.end.message, "does not start with \"GMEMPROF\""), "zstd text");
    zn = zframe("GMEM", 4, z, sizeof z);
    o = read_mem(z, zn);
    CHECK(o.rc == GMT_E_MAGIC, "4-byte frame");

    fprintf(stderr, "newer major version\n");
    sb s = { { 0 }, 0 };
    gmt_codec_reset(&c);
    sb_pre(&s, GMT_VERSION_MAJOR + 1, 3);
    gmt_record m = mark(1000, 1);
    sb_rec(&s, &c, &m);
    zn = zframe(s.b, s.n, z, sizeof z);
    o = read_mem(z, zn);
    char want[160];
    snprintf(want, sizeof want, "trace format version %d.3 is newer than this reader supports (%d.%d): upgrade gmem-analyze",
             GMT_VERSION_MAJOR + 1, GMT_VERSION_MAJOR, GMT_VERSION_MINOR);
    CHECK(o.rc == GMT_E_VERSION && o.records == 0 && strstr(o.end.message, want), "newer major: '%s'", o.end.message);
    CHECK(o.end.major == GMT_VERSION_MAJOR + 1 && o.end.minor == 3, "version reported");

    fprintf(stderr, "major 0\n");
    s.n = 0;
    sb_pre(&s, 0, 0);
    zn = zframe(s.b, s.n, z, sizeof z);
    o = read_mem(z, zn);
    CHECK(o.rc == GMT_E_CORRUPT && strstr(o.end.message, "preamble"), "major 0");

    fprintf(stderr, "format 1.x: a newer minor version with an unknown type and longer records\n");
    s.n = 0;
    gmt_codec_reset(&c);
    sb_pre(&s, 1, 3);
    m = mark(1000, 1);
    sb_rec(&s, &c, &m);
    s.b[s.n++] = 77; /* a record type from the future */
    s.b[s.n++] = 4;
    memcpy(s.b + s.n, "\x01\x02\x03\x04", 4);
    s.n += 4;
    /* a MARK with two extra trailing payload bytes */
    size_t at = s.n;
    m = mark(1500, 2);
    sb_rec(&s, &c, &m);
    s.b[at + 1] += 2;
    s.b[s.n++] = 0x05;
    s.b[s.n++] = 0x06;
    gmt_record t = trailer(2);
    sb_rec(&s, &c, &t);
    zn = zframe(s.b, s.n, z, sizeof z);
    o = read_mem(z, zn);
    CHECK(o.rc == 0 && o.records == 3 && o.end.skipped_unknown == 1 && o.end.has_trailer && o.end.status == GMT_OK,
          "newer minor: %zu records, %llu skipped", o.records, (unsigned long long)o.end.skipped_unknown);
    CHECK(o.end.major == 1 && o.end.minor == 3, "minor reported");

    fprintf(stderr, "bad varint\n");
    s.n = 0;
    gmt_codec_reset(&c);
    sb_pre(&s, 1, 2);
    m = mark(1000, 1);
    sb_rec(&s, &c, &m);
    s.b[s.n++] = GMT_REC_ALLOC;
    memset(s.b + s.n, 0xff, 11); /* a length that never ends */
    s.n += 11;
    zn = zframe(s.b, s.n, z, sizeof z);
    o = read_mem(z, zn);
    CHECK(o.rc == GMT_E_CORRUPT && o.records == 1 && strstr(o.end.message, "corrupt record in frame 1") &&
              strstr(o.end.message, "1 records recovered"),
          "bad varint");

    fprintf(stderr, "zero bytes inside the stream\n");
    s.n = 0;
    gmt_codec_reset(&c);
    sb_pre(&s, 1, 2);
    sb_rec(&s, &c, &m);
    memset(s.b + s.n, 0, 16);
    s.n += 16;
    zn = zframe(s.b, s.n, z, sizeof z);
    o = read_mem(z, zn);
    CHECK(o.rc == GMT_E_CORRUPT && o.records == 1 && strstr(o.end.message, "zero type byte"), "zeroed records");

    fprintf(stderr, "a frame that ends inside a record\n");
    s.n = 0;
    gmt_codec_reset(&c);
    sb_pre(&s, 1, 2);
    sb_rec(&s, &c, &m);
    size_t cut = s.n;
    m = mark(2000, 3);
    sb_rec(&s, &c, &m);
    zn = zframe(s.b, cut + 2, z, sizeof z);
    zn += zframe(s.b + cut + 2, s.n - cut - 2, z + zn, sizeof z - zn);
    o = read_mem(z, zn);
    CHECK(o.rc == GMT_E_CORRUPT && o.records == 1 && strstr(o.end.message, "ends inside this record"),
          "record straddling frames");

    fprintf(stderr, "a KERNEL_REF naming a shape of the previous frame\n");
    s.n = 0;
    gmt_codec_reset(&c);
    sb_pre(&s, 1, 2);
    gmt_record kr;
    memset(&kr, 0, sizeof kr);
    kr.type = GMT_REC_KERNEL;
    kr.u.kernel = (gmt_kernel){ .start = 1000, .end = 2000, .stream = 7, .corr = 5, .name = 1, .grid = { 8, 1, 1 },
                                .block = { 128, 1, 1 }, .registers = 32, .tid = 9, .seq = 1 };
    sb_rec(&s, &c, &kr); /* plain: the shape joins the table */
    kr.u.kernel.seq++;
    sb_rec(&s, &c, &kr); /* KERNEL_REF */
    CHECK(c.shapes.n == 1, "one shape in the table");
    cut = s.n;
    kr.u.kernel.seq++;
    sb_rec(&s, &c, &kr); /* KERNEL_REF, as if the frame went on */
    CHECK(s.b[cut] == GMT_WIRE_KERNEL_REF, "third kernel as a KERNEL_REF: type %u", s.b[cut]);
    zn = zframe(s.b, s.n, z, sizeof z);
    o = read_mem(z, zn);
    CHECK(o.rc == 0 && o.records == 3 && o.last.type == GMT_REC_KERNEL && o.last.u.kernel.seq == 3 &&
              o.last.u.kernel.block[0] == 128,
          "one frame: three kernels");
    /* the third in a frame of its own: its index names nothing there */
    zn = zframe(s.b, cut, z, sizeof z);
    zn += zframe(s.b + cut, s.n - cut, z + zn, sizeof z - zn);
    o = read_mem(z, zn);
    CHECK(o.rc == GMT_E_CORRUPT && o.records == 2 && strstr(o.end.message, "corrupt record in frame 2") &&
              strstr(o.end.message, "type byte 19") && strstr(o.end.message, "2 records recovered"),
          "KERNEL_REF across a frame boundary: %s", o.end.message);

    fprintf(stderr, "format 2.0: a good frame built by hand\n");
    gmt_record two[3] = { mark(1000, 1), mark(1500, 2), trailer(2) };
    o = read_frame2(two, 3, 0, 0, 0);
    CHECK(o.rc == 0 && o.records == 3 && o.end.has_trailer && o.last.u.trailer.ts == 99, "2.0 by hand");

    fprintf(stderr, "format 2.0: a frame without its TIMES record\n");
    s.n = 0;
    sb_pre(&s, GMT_VERSION_MAJOR, GMT_VERSION_MINOR);
    gmt_codec_reset(&c);
    m = mark(1000, 1);
    sb_rec(&s, &c, &m);
    zn = zframe(s.b, s.n, z, sizeof z);
    o = read_mem(z, zn);
    CHECK(o.rc == GMT_E_CORRUPT && o.records == 0 && strstr(o.end.message, "frame without its TIMES record"),
          "no TIMES: %s", o.end.message);

    fprintf(stderr, "format 2.0: a second frame without its TIMES record\n");
    s.n = 0;
    sb2_frame(&s, 1, two, 1, 0, 0);
    size_t first = s.n;
    gmt_codec_reset(&c);
    sb_rec(&s, &c, &two[1]);
    zn = zframe(s.b, first, z, sizeof z);
    zn += zframe(s.b + first, s.n - first, z + zn, sizeof z - zn);
    o = read_mem(z, zn);
    CHECK(o.rc == GMT_E_CORRUPT && o.records == 1 && strstr(o.end.message, "corrupt record in frame 2") &&
              strstr(o.end.message, "frame without its TIMES record"),
          "no TIMES in frame 2: %s", o.end.message);

    fprintf(stderr, "format 2.0: a time stream longer than its records use\n");
    o = read_frame2(two, 3, 1, 0, 0);
    CHECK(o.rc == GMT_E_CORRUPT && o.records == 3 && strstr(o.end.message, "corrupt frame 1") &&
              strstr(o.end.message, "more times than its records use"),
          "TIMES too long: %s", o.end.message);

    fprintf(stderr, "format 2.0: a time stream that runs out\n");
    o = read_frame2(two, 3, 0, 1, 0);
    CHECK(o.rc == GMT_E_CORRUPT && o.records == 2 && strstr(o.end.message, "corrupt record in frame 1") &&
              strstr(o.end.message, "type byte 18"),
          "TIMES too short: %s", o.end.message);

    fprintf(stderr, "format 2.0: a frame that ends inside its TIMES record\n");
    o = read_frame2(two, 3, 0, 0, GMT_PREAMBLE_LEN + 3);
    CHECK(o.rc == GMT_E_CORRUPT && o.records == 0 && strstr(o.end.message, "ends inside this record"),
          "cut TIMES: %s", o.end.message);

    fprintf(stderr, "format 2.0: a newer minor version with an unknown type and longer records\n");
    s.n = 0;
    sb2_frame(&s, 1, two, 2, 0, 0);
    s.b[10] = (uint8_t)(GMT_VERSION_MINOR + 1);
    s.b[s.n++] = 77; /* a record type from the future: its fields are its own */
    s.b[s.n++] = 2;
    s.b[s.n++] = 0x05;
    s.b[s.n++] = 0x06;
    zn = zframe(s.b, s.n, z, sizeof z);
    o = read_mem(z, zn);
    CHECK(o.rc == 0 && o.records == 2 && o.end.skipped_unknown == 1 && o.end.minor == GMT_VERSION_MINOR + 1 &&
              o.last.u.mark.ts == 1500,
          "2.x newer minor: %s", o.end.message);

    fprintf(stderr, "a good trace followed by zero bytes (a crash after the file grew)\n");
    tu_tmp_path(path, sizeof path, "zeros");
    gmt_writer *w = gmt_writer_open(path, NULL);
    REQUIRE(w, "writer");
    m = mark(5, 1);
    gmt_writer_put(w, &m);
    gmt_writer_end_frame(w);
    gmt_writer_put(w, &m);
    REQUIRE(gmt_writer_close(w) == GMT_OK, "close");
    tu_buf b = tu_slurp(path);
    unlink(path);
    uint8_t *zz = calloc(1, b.n + 4096);
    REQUIRE(zz, "oom");
    memcpy(zz, b.p, b.n);
    o = read_mem(zz, b.n + 4096);
    CHECK(o.rc == GMT_E_ZSTD && o.records == 2 && strstr(o.end.message, "corrupt frame 3 at byte") &&
              strstr(o.end.message, "2 records recovered"),
          "trailing zeros");
    o = read_mem(zz, b.n);
    CHECK(o.rc == 0 && o.records == 2 && !o.end.has_trailer && strstr(o.end.message, "without a trailer record"),
          "no trailer");
    /* a bit flip in the checksum of the second frame */
    zz[b.n - 1] ^= 0x10;
    o = read_mem(zz, b.n);
    CHECK(o.rc == GMT_E_ZSTD && strstr(o.end.message, "corrupt frame 2") && strstr(o.end.message, "checksum"),
          "checksum: %s", o.end.message);
    free(zz);
    tu_buf_free(&b);

    fprintf(stderr, "missing file\n");
    errno = 0;
    CHECK(gmt_reader_open("/nonexistent/gmemprof/trace.zst") == NULL && errno == ENOENT, "missing file");
    fprintf(stderr, "a directory\n");
    r = gmt_reader_open("/");
    if (r) { /* fopen of a directory succeeds on Linux; reading fails */
        int rc = gmt_reader_next(r, &rec);
        CHECK(rc == GMT_E_IO && strstr(gmt_reader_end_info(r)->message, "read error"), "directory: %d %s", rc,
              gmt_reader_end_info(r)->message);
        gmt_reader_close(r);
    }
    return tc_result("test_bad_inputs");
}
