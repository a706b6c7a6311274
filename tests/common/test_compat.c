/*
 * Traces of earlier format versions still read, and say the same in the
 * current one.  Each trace given is read to its end (complete, trailer,
 * nothing skipped), written again with today's writer at the same frame
 * boundaries, read back: the same records, the current version, and never
 * more encoded bytes than before but each frame's TIMES header (a 1.2 _REF
 * record is always shorter than the plain record it stands for; 2.0 moves
 * the times, it adds none).  The first trace must be a 1.1 trace (the
 * frozen fixture tests/common/data/synth-v1.1.zst, written by gmem-synth
 * before format 1.2); it is also read as a 1.0 trace (its preamble's minor
 * set to 0: it has no KERNEL flags, so its bytes are valid 1.0).  The
 * others: tests/common/data/synth-v1.2.zst (gmem-synth before format 2.0)
 * and the recordings of samples/traces.
 * usage: test_compat V1_1_TRACE [TRACE...]
 */
#include <zstd.h>

#include "tutil.h"

typedef struct loaded {
    tu_rec *recs;
    size_t n, cap;
    size_t *frame_end; /* records before the end of each frame */
    size_t nframes;
    gmt_reader_end end;
} loaded;

static void loaded_free(loaded *l)
{
    for (size_t i = 0; i < l->n; i++)
        tu_rec_free(&l->recs[i]);
    free(l->recs);
    free(l->frame_end);
    memset(l, 0, sizeof *l);
}

/* Reads every record of p[0..n) with the frame each one ended. */
static loaded load(const uint8_t *p, size_t n, const char *what)
{
    loaded l;
    memset(&l, 0, sizeof l);
    gmt_reader *r = gmt_reader_open_mem(p, n);
    REQUIRE(r != NULL, "open %s", what);
    gmt_record rec;
    int rc;
    uint64_t frames = 0;
    while ((rc = gmt_reader_next(r, &rec)) > 0) {
        /* end info is live: frames counts the frames completed so far */
        uint64_t f = gmt_reader_end_info(r)->frames;
        for (; frames < f; frames++) {
            l.frame_end = realloc(l.frame_end, (l.nframes + 1) * sizeof *l.frame_end);
            REQUIRE(l.frame_end != NULL, "out of memory");
            l.frame_end[l.nframes++] = l.n;
        }
        if (l.n == l.cap) {
            l.cap = l.cap ? 2 * l.cap : 4096;
            l.recs = realloc(l.recs, l.cap * sizeof *l.recs);
            REQUIRE(l.recs != NULL, "out of memory");
        }
        tu_rec_copy(&l.recs[l.n++], &rec);
    }
    l.end = *gmt_reader_end_info(r);
    gmt_reader_close(r);
    CHECK(rc == 0 && l.end.status == GMT_OK && l.end.has_trailer && l.end.skipped_unknown == 0,
          "%s: rc %d: %s", what, rc, l.end.message);
    return l;
}

/* Sum of the frames' content sizes: the encoded bytes of a trace. */
static uint64_t content_bytes(const uint8_t *p, size_t n)
{
    uint64_t sum = 0;
    for (size_t pos = 0; pos < n;) {
        size_t fl = ZSTD_findFrameCompressedSize(p + pos, n - pos);
        REQUIRE(!ZSTD_isError(fl), "frame at %zu", pos);
        unsigned long long cs = ZSTD_getFrameContentSize(p + pos, fl);
        REQUIRE(cs != ZSTD_CONTENTSIZE_UNKNOWN && cs != ZSTD_CONTENTSIZE_ERROR, "content size");
        sum += cs;
        pos += fl;
    }
    return sum;
}

/* Writes l's records again (same frame ends) and checks what comes back. */
static void rewrite(const loaded *l, uint64_t old_content, size_t old_size, const char *what)
{
    char path[256];
    tu_tmp_path(path, sizeof path, "compat");
    gmt_writer *w = gmt_writer_open(path, NULL);
    REQUIRE(w != NULL, "writer");
    size_t fi = 0;
    for (size_t i = 0; i < l->n; i++) {
        while (fi < l->nframes && l->frame_end[fi] == i) {
            CHECK(gmt_writer_end_frame(w) == GMT_OK, "end frame");
            fi++;
        }
        CHECK(gmt_writer_put(w, &l->recs[i].r) == GMT_OK, "%s: put record %zu", what, i);
    }
    uint64_t new_content = gmt_writer_bytes_in(w);
    REQUIRE(gmt_writer_close(w) == GMT_OK, "close");
    tu_buf b = tu_slurp(path);
    unlink(path);
    loaded back = load(b.p, b.n, "rewritten");
    CHECK(back.n == l->n, "%s: %zu records back of %zu", what, back.n, l->n);
    char why[200];
    for (size_t i = 0; i < back.n && i < l->n; i++)
        if (!tu_record_eq(&l->recs[i].r, &back.recs[i].r, why, sizeof why)) {
            CHECK(0, "%s: record %zu: %s", what, i, why);
            break;
        }
    CHECK(back.end.major == GMT_VERSION_MAJOR && back.end.minor == GMT_VERSION_MINOR, "%s: rewritten as %u.%u",
          what, back.end.major, back.end.minor);
    CHECK(back.end.frames == l->end.frames, "%s: %llu frames, was %llu", what, (unsigned long long)back.end.frames,
          (unsigned long long)l->end.frames);
    /* 2.0 moves the times, it adds nothing but each frame's TIMES header
     * (its type byte and a length of at most 3 bytes) */
    CHECK(new_content <= old_content + 4 * back.end.frames, "%s: %llu encoded bytes, was %llu", what,
          (unsigned long long)new_content, (unsigned long long)old_content);
    fprintf(stderr, "%s: version %u.%u, %zu records: %.2f -> %.2f encoded bytes/record, %.3f -> %.3f compressed\n",
            what, l->end.major, l->end.minor, l->n, (double)old_content / (double)l->n,
            (double)new_content / (double)l->n, (double)old_size / (double)l->n, (double)b.n / (double)l->n);
    loaded_free(&back);
    tu_buf_free(&b);
}

/* The same trace with its preamble's minor version set to 0. */
static tu_buf as_1_0(const tu_buf *in)
{
    size_t fl = ZSTD_findFrameCompressedSize(in->p, in->n);
    REQUIRE(!ZSTD_isError(fl), "first frame");
    unsigned long long cs = ZSTD_getFrameContentSize(in->p, fl);
    REQUIRE(cs != ZSTD_CONTENTSIZE_UNKNOWN && cs != ZSTD_CONTENTSIZE_ERROR && cs >= GMT_PREAMBLE_LEN, "size");
    uint8_t *raw = malloc((size_t)cs);
    REQUIRE(raw != NULL, "out of memory");
    REQUIRE(ZSTD_decompress(raw, (size_t)cs, in->p, fl) == cs, "decompress");
    raw[10] = 0;
    raw[11] = 0;
    size_t cap = ZSTD_compressBound((size_t)cs) + in->n;
    tu_buf out = { malloc(cap), 0 };
    REQUIRE(out.p != NULL, "out of memory");
    ZSTD_CCtx *c = ZSTD_createCCtx();
    REQUIRE(c && !ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)), "cctx");
    out.n = ZSTD_compress2(c, out.p, cap, raw, (size_t)cs);
    REQUIRE(!ZSTD_isError(out.n), "compress");
    ZSTD_freeCCtx(c);
    memcpy(out.p + out.n, in->p + fl, in->n - fl);
    out.n += in->n - fl;
    free(raw);
    return out;
}

int main(int argc, char **argv)
{
    REQUIRE(argc >= 2, "usage: test_compat V1_1_TRACE [TRACE...]");
    char why[200];
    for (int a = 1; a < argc; a++) {
        tu_buf b = tu_slurp(argv[a]);
        loaded l = load(b.p, b.n, argv[a]);
        if (a == 1) {
            CHECK(l.end.major == 1 && l.end.minor == 1, "%s is version %u.%u, not the 1.1 fixture", argv[a],
                  l.end.major, l.end.minor);
            tu_buf old = as_1_0(&b);
            loaded l0 = load(old.p, old.n, "as 1.0");
            CHECK(l0.end.major == 1 && l0.end.minor == 0 && l0.n == l.n, "as 1.0: version %u.%u, %zu records",
                  l0.end.major, l0.end.minor, l0.n);
            for (size_t i = 0; i < l0.n && i < l.n; i++)
                if (!tu_record_eq(&l.recs[i].r, &l0.recs[i].r, why, sizeof why)) {
                    CHECK(0, "as 1.0: record %zu: %s", i, why);
                    break;
                }
            loaded_free(&l0);
            tu_buf_free(&old);
        }
        rewrite(&l, content_bytes(b.p, b.n), b.n, argv[a]);
        loaded_free(&l);
        tu_buf_free(&b);
    }
    return tc_result("test_compat");
}
