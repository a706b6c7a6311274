/*
 * Frames without a zstd checksum (issue 26, item 10): gmemprof writes one
 * in every frame, so the reader counts the frames that carry none
 * (gmt_reader_end.unchecked_frames) for the analyzer's warning. The same
 * records come out either way; a trace as the writer made it counts 0; a
 * file with some frames recompressed without a checksum counts exactly those.
 */
#include <zstd.h>

#include "tutil.h"

/* Reads all of data; returns the end info, *n the records. */
static gmt_reader_end read_all(const uint8_t *data, size_t len, uint64_t *n)
{
    gmt_reader *r = gmt_reader_open_mem(data, len);
    REQUIRE(r, "reader");
    gmt_record rec;
    *n = 0;
    while (gmt_reader_next(r, &rec) > 0)
        (*n)++;
    gmt_reader_end e = *gmt_reader_end_info(r);
    gmt_reader_close(r);
    return e;
}

/* data's frames, every `every`-th (from the first) recompressed without a
 * checksum; the others copied as they are. Returns the new length. */
static size_t strip(const uint8_t *d, size_t n, uint8_t *out, size_t cap, unsigned every, uint64_t *stripped)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    size_t on = 0;
    unsigned k = 0;
    *stripped = 0;
    for (size_t pos = 0; pos < n; k++) {
        size_t fl = ZSTD_findFrameCompressedSize(d + pos, n - pos);
        REQUIRE(!ZSTD_isError(fl), "frame size");
        if (k % every == 0) {
            unsigned long long cl = ZSTD_getFrameContentSize(d + pos, fl);
            REQUIRE(cl != ZSTD_CONTENTSIZE_UNKNOWN && cl != ZSTD_CONTENTSIZE_ERROR, "content size");
            uint8_t *plain = malloc((size_t)cl + 1);
            REQUIRE(plain && ZSTD_decompress(plain, (size_t)cl, d + pos, fl) == (size_t)cl, "decompress");
            ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
            ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 0);
            size_t w = ZSTD_compress2(cc, out + on, cap - on, plain, (size_t)cl);
            REQUIRE(!ZSTD_isError(w), "compress");
            on += w;
            (*stripped)++;
            free(plain);
        } else {
            REQUIRE(on + fl <= cap, "room");
            memcpy(out + on, d + pos, fl);
            on += fl;
        }
        pos += fl;
    }
    ZSTD_freeCCtx(cc);
    return on;
}

int main(void)
{
    tu_buf b = tu_synth_trace("unchecked", 7, 20000, 16384);
    uint64_t n0, n1, n2, s1, s2;
    gmt_reader_end e0 = read_all(b.p, b.n, &n0);
    CHECK(e0.status == GMT_OK && e0.has_trailer, "the trace as written: %s", e0.message);
    CHECK(e0.frames > 4, "frames %" PRIu64, e0.frames);
    CHECK_EQ_U64(e0.unchecked_frames, 0);

    size_t cap = 2 * b.n + 65536;
    uint8_t *o = malloc(cap);
    REQUIRE(o, "oom");
    size_t on = strip(b.p, b.n, o, cap, 1, &s1);
    gmt_reader_end e1 = read_all(o, on, &n1);
    CHECK(e1.status == GMT_OK && e1.has_trailer, "no checksums: %s", e1.message);
    CHECK_EQ_U64(n1, n0);
    CHECK_EQ_U64(s1, e0.frames);
    CHECK_EQ_U64(e1.unchecked_frames, e0.frames);

    on = strip(b.p, b.n, o, cap, 3, &s2); /* frames 1, 4, 7, ... */
    gmt_reader_end e2 = read_all(o, on, &n2);
    CHECK_EQ_U64(n2, n0);
    CHECK_EQ_U64(s2, (e0.frames + 2) / 3);
    CHECK_EQ_U64(e2.unchecked_frames, s2);
    free(o);
    tu_buf_free(&b);
    return tc_result("test_unchecked_frames");
}
