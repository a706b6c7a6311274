/*
 * Random records of every kind through gmt_writer and back through
 * gmt_reader: from a path, from a FILE*, from memory and from stdin; with
 * frames of 1 byte (one record per frame) up to the default; with the
 * largest records (HEADER with four maximal strings, TAG with 64 devices).
 * Every record must come back equal, field by field, in order; the
 * writer's counters must match the file and what the reader saw.  Frames
 * across and larger than the file reader's input chunks read the same from
 * a path as from memory, whole and cut.
 */
#include <zstd.h>

#include "tutil.h"

#define NREC 400

static tu_rec recs[NREC + 1];
static tu_strpool pool;

static int read_all(gmt_reader *r, size_t n, const char *how)
{
    gmt_record rec;
    char why[200];
    size_t i = 0;
    int rc;
    while ((rc = gmt_reader_next(r, &rec)) > 0) {
        if (i < n)
            CHECK(tu_record_eq(&recs[i].r, &rec, why, sizeof why), "%s: record %zu: %s", how, i, why);
        i++;
    }
    CHECK(rc == 0, "%s: reader returned %d", how, rc);
    CHECK(i == n, "%s: %zu records read, %zu written", how, i, n);
    const gmt_reader_end *e = gmt_reader_end_info(r);
    CHECK(e->status == GMT_OK && !e->truncated && e->has_trailer && e->records == n, "%s: end %s / %s", how,
          gmt_status_str(e->status), e->message);
    CHECK(strstr(e->message, "complete trace") != NULL, "%s: message '%s'", how, e->message);
    CHECK(e->major == GMT_VERSION_MAJOR && e->minor == GMT_VERSION_MINOR, "%s: version", how);
    /* after the end, next keeps returning the same */
    CHECK(gmt_reader_next(r, &rec) == 0, "%s: next after end", how);
    return (int)e->frames;
}

static void run(uint64_t seed, size_t frame_bytes, int big)
{
    tu_rng r = { seed };
    size_t n = 0;
    for (; n < NREC - 1; n++) {
        gmt_record tmp;
        gmt_type t = (gmt_type)(1 + tu_below(&r, GMT_REC_TYPE_MAX_ - 1));
        if (t == GMT_REC_TRAILER)
            t = GMT_REC_KERNEL;
        if (!big && (t == GMT_REC_HEADER || t == GMT_REC_DEVICE || t == GMT_REC_STRING) && tu_below(&r, 4))
            t = GMT_REC_ALLOC; /* keep most runs small and fast */
        tu_random_record(&r, &pool, t, &tmp);
        if (big && n % 50 == 0) {
            /* the largest records the format allows */
            tu_random_record(&r, &pool, GMT_REC_HEADER, &tmp);
            static char s4[4][GMT_MAX_STRING];
            for (int k = 0; k < 4; k++)
                memset(s4[k], 'a' + k + (int)(n % 7), GMT_MAX_STRING);
            tmp.u.header.host = (gmt_bytes){ s4[0], GMT_MAX_STRING };
            tmp.u.header.cmdline = (gmt_bytes){ s4[1], GMT_MAX_STRING };
            tmp.u.header.config = (gmt_bytes){ s4[2], GMT_MAX_STRING };
            tmp.u.header.profiler_version = (gmt_bytes){ s4[3], GMT_MAX_STRING };
        }
        tu_rec_copy(&recs[n], &tmp);
    }
    gmt_record tr;
    tu_random_record(&r, &pool, GMT_REC_TRAILER, &tr);
    tu_rec_copy(&recs[n++], &tr);

    char path[256];
    tu_tmp_path(path, sizeof path, "wr");
    uint64_t wframes = 0;
    gmt_writer_opts o = { 0, frame_bytes };
    gmt_writer *w = gmt_writer_open(path, &o);
    REQUIRE(w != NULL, "open %s", path);
    for (size_t i = 0; i < n; i++) {
        CHECK(gmt_writer_put(w, &recs[i].r) == GMT_OK, "put %zu", i);
        if (i == n / 2)
            CHECK(gmt_writer_end_frame(w) == GMT_OK && gmt_writer_end_frame(w) == GMT_OK, "end_frame twice");
    }
    CHECK(gmt_writer_end_frame(w) == GMT_OK, "final end_frame");
    wframes = gmt_writer_frames(w);
    uint64_t out = gmt_writer_bytes_out(w), in = gmt_writer_bytes_in(w);
    CHECK(gmt_writer_records(w) == n && gmt_writer_dropped(w) == 0, "writer counters");
    CHECK(gmt_writer_errno(w) == 0, "writer errno");
    CHECK(gmt_writer_close(w) == GMT_OK, "close");
    tu_buf file = tu_slurp(path);
    CHECK(file.n == out, "bytes_out %llu != file size %zu", (unsigned long long)out, file.n);
    CHECK(in > n * 2, "bytes_in");
    if (frame_bytes == 1)
        CHECK(wframes == n, "frame_bytes %zu: %llu frames for %zu records", frame_bytes, (unsigned long long)wframes, n);
    CHECK(wframes >= 2, "end_frame in the middle gives >= 2 frames, got %llu", (unsigned long long)wframes);

    char how[128];
    snprintf(how, sizeof how, "seed %llu frame %zu path", (unsigned long long)seed, frame_bytes);
    gmt_reader *rd = gmt_reader_open(path);
    REQUIRE(rd != NULL, "reader open");
    int frames = read_all(rd, n, how);
    CHECK((uint64_t)frames == wframes, "%s: reader saw %d frames, writer wrote %llu", how, frames,
          (unsigned long long)wframes);
    CHECK(gmt_reader_end_info(rd)->file_size == file.n && gmt_reader_end_info(rd)->good_offset == file.n,
          "%s: offsets", how);
    gmt_reader_close(rd);

    snprintf(how, sizeof how, "seed %llu frame %zu mem", (unsigned long long)seed, frame_bytes);
    rd = gmt_reader_open_mem(file.p, file.n);
    REQUIRE(rd != NULL, "reader mem");
    read_all(rd, n, how);
    gmt_reader_close(rd);

    snprintf(how, sizeof how, "seed %llu frame %zu FILE", (unsigned long long)seed, frame_bytes);
    FILE *f = fopen(path, "rb");
    REQUIRE(f != NULL, "fopen");
    rd = gmt_reader_open_file(f);
    REQUIRE(rd != NULL, "reader FILE");
    read_all(rd, n, how);
    gmt_reader_close(rd);
    CHECK(fgetc(f) == EOF, "FILE still usable after close (not closed by the reader)");
    fclose(f);

    if (seed == 1) {
        snprintf(how, sizeof how, "stdin");
        REQUIRE(freopen(path, "rb", stdin) != NULL, "freopen stdin");
        rd = gmt_reader_open("-");
        REQUIRE(rd != NULL, "reader stdin");
        read_all(rd, n, how);
        gmt_reader_close(rd);
    }
    tu_buf_free(&file);
    unlink(path);
    for (size_t i = 0; i < n; i++)
        tu_rec_free(&recs[i]);
}

/* Reads a from a path and b from memory in lockstep: the same records and
 * the same end (status, message, counts, offsets). */
static void same_reading(gmt_reader *a, gmt_reader *b, const char *how)
{
    gmt_record ra, rb;
    char why[200];
    size_t n = 0;
    int ka, kb;
    do {
        ka = gmt_reader_next(a, &ra);
        kb = gmt_reader_next(b, &rb);
        CHECK(ka == kb, "%s: record %zu: path gives %d, memory %d", how, n, ka, kb);
        if (ka == 1 && kb == 1 && !tu_record_eq(&ra, &rb, why, sizeof why)) {
            CHECK(0, "%s: record %zu: %s", how, n, why);
            break;
        }
        n++;
    } while (ka == 1 && kb == 1);
    const gmt_reader_end *ea = gmt_reader_end_info(a), *eb = gmt_reader_end_info(b);
    CHECK(ea->status == eb->status && ea->records == eb->records && ea->frames == eb->frames &&
              ea->good_offset == eb->good_offset && ea->file_size == eb->file_size &&
              ea->truncated == eb->truncated && strcmp(ea->message, eb->message) == 0,
          "%s: ends differ:\n  path:   %s\n  memory: %s", how, ea->message, eb->message);
}

/* Frames that straddle the file reader's input chunks, and frames larger
 * than a chunk when compressed (random fields barely compress): the reader
 * gathers a frame whole before decompressing it in one call.  From a path
 * and from memory, whole and cut at several places, the same reading. */
static void chunk_boundaries(void)
{
    static const size_t frame_bytes[2] = { 20000, 0 };
    for (int pass = 0; pass < 2; pass++) {
        tu_rng r = { 77 + (uint64_t)pass };
        char path[256];
        tu_tmp_path(path, sizeof path, "chunks");
        gmt_writer_opts o = { 0, frame_bytes[pass] };
        gmt_writer *w = gmt_writer_open(path, &o);
        REQUIRE(w != NULL, "open %s", path);
        for (int i = 0; i < 40000; i++) {
            gmt_record rec;
            static const gmt_type ts[] = { GMT_REC_KERNEL, GMT_REC_ALLOC, GMT_REC_FREE, GMT_REC_MEMCPY,
                                           GMT_REC_RANGE_BEGIN, GMT_REC_STEP };
            tu_random_record(&r, &pool, ts[tu_below(&r, 6)], &rec);
            REQUIRE(gmt_writer_put(w, &rec) == GMT_OK, "put");
        }
        REQUIRE(gmt_writer_close(w) == GMT_OK, "close");
        tu_buf file = tu_slurp(path);
        CHECK(file.n > (2u << 20), "pass %d: %zu bytes: not larger than the reader's chunks", pass, file.n);
        const size_t cuts[] = { file.n, file.n - 1, file.n / 2, (128u << 10) + 5, 1u << 20, file.n - 70000 };
        for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
            size_t cut = cuts[c] < file.n ? cuts[c] : file.n;
            char cpath[256];
            tu_tmp_path(cpath, sizeof cpath, "chunks-cut");
            FILE *f = fopen(cpath, "wb");
            REQUIRE(f && fwrite(file.p, 1, cut, f) == cut && fclose(f) == 0, "write %s", cpath);
            gmt_reader *a = gmt_reader_open(cpath), *b = gmt_reader_open_mem(file.p, cut);
            REQUIRE(a && b, "readers");
            char how[96];
            snprintf(how, sizeof how, "frames of %zu bytes, cut at %zu of %zu", frame_bytes[pass], cut, file.n);
            same_reading(a, b, how);
            gmt_reader_close(a);
            gmt_reader_close(b);
            unlink(cpath);
        }
        tu_buf_free(&file);
        unlink(path);
    }
}

/* Format 2.0 at its limit: frames as large as the writer makes them
 * (32 MiB), of kernels whose times are long varints, so that the time
 * stream reaches the TIMES record's limit (GMT_MAX_PAYLOAD) first and ends
 * the frame, and the frame's content is larger than the reader decompresses
 * whole: its 1 MiB TIMES record comes through the streaming path. */
static gmt_record big_kernel(uint64_t i, uint64_t *t)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_KERNEL;
    uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull;
    *t += 1000 + (h >> 44);                  /* gaps up to 2^20 ns */
    r.u.kernel.start = *t;
    r.u.kernel.end = *t + 1 + (h >> 40 & 0xffffff); /* up to 2^24 ns */
    *t = r.u.kernel.end;
    r.u.kernel.name = 1 + i % 1000;          /* more shapes than a frame's table holds */
    r.u.kernel.grid[0] = 1 + i % 997;
    r.u.kernel.block[0] = 256;
    r.u.kernel.registers = 1 + i % 255;
    r.u.kernel.stream = 7;
    r.u.kernel.corr = i + 1;
    r.u.kernel.tid = 4242;
    r.u.kernel.seq = i + 1;
    return r;
}

static void times_at_limit(void)
{
    enum { N = 300000 };
    char path[256];
    tu_tmp_path(path, sizeof path, "tlimit");
    gmt_writer_opts o = { 1, 32u << 20 };
    gmt_writer *w = gmt_writer_open(path, &o);
    REQUIRE(w, "writer");
    uint64_t t = 1u << 30;
    for (uint64_t i = 0; i < N; i++) {
        gmt_record r = big_kernel(i, &t);
        REQUIRE(gmt_writer_put(w, &r) == GMT_OK, "put %llu", (unsigned long long)i);
    }
    uint64_t frames = gmt_writer_frames(w);
    REQUIRE(gmt_writer_close(w) == GMT_OK, "close");
    frames++; /* the one close ended */
    tu_buf f = tu_slurp(path);
    size_t fl = ZSTD_findFrameCompressedSize(f.p, f.n);
    unsigned long long cs = ZSTD_getFrameContentSize(f.p, fl);
    CHECK(frames >= 2 && cs > (4u << 20) && cs < (32u << 20),
          "%llu frames, the first of %llu bytes: not ended by its time stream, or small enough to be read whole",
          (unsigned long long)frames, cs);
    uint8_t *raw = malloc((size_t)cs);
    REQUIRE(raw && ZSTD_decompress(raw, (size_t)cs, f.p, fl) == cs, "decompress");
    uint64_t tl = 0;
    CHECK(raw[GMT_PREAMBLE_LEN] == GMT_WIRE_TIMES && gmt_varint_get(raw + GMT_PREAMBLE_LEN + 1, 3, &tl) == 3 &&
              tl > GMT_MAX_PAYLOAD - 40 && tl <= GMT_MAX_PAYLOAD,
          "first TIMES record: %llu bytes", (unsigned long long)tl);
    free(raw);
    tu_buf_free(&f);
    gmt_reader *rd = gmt_reader_open(path);
    REQUIRE(rd, "reader");
    gmt_record got;
    uint64_t n = 0, bad = 0;
    t = 1u << 30;
    while (gmt_reader_next(rd, &got) > 0) {
        gmt_record want = big_kernel(n, &t);
        char why[200];
        if (!tu_record_eq(&want, &got, why, sizeof why) && bad++ < 3)
            CHECK(0, "record %llu: %s", (unsigned long long)n, why);
        n++;
    }
    const gmt_reader_end *e = gmt_reader_end_info(rd);
    CHECK(n == N && bad == 0 && e->status == GMT_OK && e->frames == frames, "read %llu of %d records in %llu frames: %s",
          (unsigned long long)n, N, (unsigned long long)e->frames, e->message);
    gmt_reader_close(rd);
    unlink(path);
    fprintf(stderr, "times at the limit: %llu kernels in %llu frames, the first %llu bytes with a TIMES record of %llu\n",
            (unsigned long long)n, (unsigned long long)frames, cs, (unsigned long long)tl);
}

int main(void)
{
    const size_t frames[] = { 0, 1, 50, 700, 4096, 100000 };
    for (uint64_t seed = 1; seed <= 12; seed++)
        run(seed, frames[seed % 6], 0);
    run(100, 0, 1);
    run(101, 1000, 1);
    run(102, 1, 1);
    chunk_boundaries();
    times_at_limit();
    /* bad arguments */
    CHECK(gmt_reader_open(NULL) == NULL && gmt_reader_open_file(NULL) == NULL, "NULL reader args");
    CHECK(gmt_reader_open("/nonexistent/dir/trace.zst") == NULL && errno == ENOENT, "missing file errno");
    CHECK(gmt_writer_put(NULL, NULL) == GMT_E_ARG && gmt_writer_close(NULL) == GMT_E_ARG, "NULL writer args");
    CHECK(gmt_reader_next(NULL, NULL) == GMT_E_ARG, "NULL next");
    gmt_reader_close(NULL);
    return tc_result("test_writer_reader");
}
