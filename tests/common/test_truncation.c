/*
 * A small multi-frame trace cut at EVERY byte offset, read from memory and
 * through a FILE*: the reader never crashes, returns exactly a prefix of the
 * written records (compared field by field), never a record that was not
 * written, recovers every complete frame before the cut, and says how the
 * trace ended: "empty file", "cut short" (inside a frame) or "without a
 * trailer" (cut at a frame boundary).
 */
#include <zstd.h>

#include "tutil.h"

#define NREC 90

static tu_rec recs[NREC];
static tu_strpool pool;

typedef struct result {
    size_t n;
    int rc;
    gmt_reader_end end;
} result;

static result read_prefix(gmt_reader *r, size_t cut, const char *how)
{
    result res = { 0, 0, { 0 } };
    REQUIRE(r != NULL, "reader open");
    gmt_record rec;
    char why[200];
    while ((res.rc = gmt_reader_next(r, &rec)) > 0) {
        CHECK(res.n < NREC, "%s cut %zu: more records than written", how, cut);
        if (res.n >= NREC)
            break;
        CHECK(tu_record_eq(&recs[res.n].r, &rec, why, sizeof why), "%s cut %zu: record %zu: %s", how, cut, res.n,
              why);
        res.n++;
    }
    res.end = *gmt_reader_end_info(r);
    gmt_reader_close(r);
    return res;
}

int main(void)
{
    tu_rng rng = { 42 };
    /* a realistic little trace: header, device, strings, then activity */
    for (size_t i = 0; i < NREC; i++) {
        gmt_record tmp;
        gmt_type t;
        if (i == 0)
            t = GMT_REC_HEADER;
        else if (i == 1)
            t = GMT_REC_DEVICE;
        else if (i == NREC - 1)
            t = GMT_REC_TRAILER;
        else {
            static const gmt_type mix[] = { GMT_REC_ALLOC, GMT_REC_KERNEL, GMT_REC_FREE, GMT_REC_STRING,
                                            GMT_REC_RANGE_BEGIN, GMT_REC_RANGE_END, GMT_REC_TAG, GMT_REC_STEP,
                                            GMT_REC_MEMCPY, GMT_REC_MEMSAMPLE, GMT_REC_STATS, GMT_REC_MARK };
            t = mix[tu_below(&rng, sizeof mix / sizeof mix[0])];
        }
        tu_random_record(&rng, &pool, t, &tmp);
        /* keep strings short so the trace stays small */
        if (t == GMT_REC_HEADER) {
            tmp.u.header.host = (gmt_bytes){ "node7", 5 };
            tmp.u.header.cmdline = (gmt_bytes){ "python train.py", 15 };
            tmp.u.header.config = (gmt_bytes){ "", 0 };
            tmp.u.header.profiler_version = (gmt_bytes){ "0.1.0", 5 };
        } else if (t == GMT_REC_DEVICE) {
            tmp.u.device.name = (gmt_bytes){ "NVIDIA H200", 11 };
        } else if (t == GMT_REC_STRING) {
            tmp.u.string.str = (gmt_bytes){ "ampere_sgemm_128x64_nn", 22 };
        } else if (t == GMT_REC_TAG) {
            tmp.u.tag.ndev = 2;
        }
        tu_rec_copy(&recs[i], &tmp);
    }
    char path[256];
    tu_tmp_path(path, sizeof path, "trunc");
    gmt_writer_opts o = { 3, 300 };
    gmt_writer *w = gmt_writer_open(path, &o);
    REQUIRE(w != NULL, "open");
    for (size_t i = 0; i < NREC; i++) {
        if (i == NREC - 1)
            gmt_writer_end_frame(w); /* the trailer in a frame of its own */
        REQUIRE(gmt_writer_put(w, &recs[i].r) == GMT_OK, "put");
    }
    REQUIRE(gmt_writer_close(w) == GMT_OK, "close");
    tu_buf f = tu_slurp(path);
    unlink(path);

    /* frame boundaries, and how many records each frame completes */
    size_t bounds[NREC + 2], nb = 0, pos = 0;
    while (pos < f.n) {
        size_t k = ZSTD_findFrameCompressedSize(f.p + pos, f.n - pos);
        REQUIRE(!ZSTD_isError(k) && k > 0, "frame size");
        pos += k;
        bounds[nb++] = pos;
    }
    REQUIRE(nb >= 5, "want a multi-frame trace, got %zu frames", nb);
    fprintf(stderr, "trace: %zu bytes, %zu frames, %d records\n", f.n, nb, NREC);
    size_t recs_at_bound[NREC + 2];
    for (size_t b = 0; b < nb; b++) {
        result res = read_prefix(gmt_reader_open_mem(f.p, bounds[b]), bounds[b], "boundary");
        recs_at_bound[b] = res.n;
    }
    CHECK(recs_at_bound[nb - 1] == NREC, "whole file gives %zu records", recs_at_bound[nb - 1]);

    size_t prev = 0;
    size_t n_trunc = 0, n_bound = 0;
    for (size_t cut = 0; cut <= f.n; cut++) {
        result res = read_prefix(gmt_reader_open_mem(f.p, cut), cut, "mem");
        /* the same through a FILE* */
        FILE *mf = fmemopen(cut ? f.p : (void *)"", cut ? cut : 1, "rb");
        REQUIRE(mf != NULL, "fmemopen");
        if (!cut)
            fgetc(mf); /* an empty stream */
        result res2 = read_prefix(gmt_reader_open_file(mf), cut, "FILE");
        fclose(mf);
        CHECK(res2.n == res.n && res2.end.status == res.end.status && res2.end.truncated == res.end.truncated,
              "cut %zu: FILE and memory readers disagree (%zu vs %zu records)", cut, res2.n, res.n);

        CHECK(res.n >= prev, "cut %zu: fewer records (%zu) than at a shorter cut (%zu)", cut, res.n, prev);
        prev = res.n;
        CHECK(res.end.records == res.n, "cut %zu: end.records", cut);
        CHECK(res.end.file_size == cut, "cut %zu: file_size %llu", cut, (unsigned long long)res.end.file_size);
        CHECK(res.end.message[0] != '\0', "cut %zu: no message", cut);
        /* complete frames before the cut are all recovered */
        size_t full = 0, b = 0;
        while (b < nb && bounds[b] <= cut)
            full = recs_at_bound[b++];
        CHECK(res.n >= full, "cut %zu: %zu records, but %zu frames before it hold %zu", cut, res.n, b, full);
        CHECK(res.end.frames == b, "cut %zu: %llu frames, want %zu", cut, (unsigned long long)res.end.frames, b);
        int at_bound = cut > 0 && b > 0 && bounds[b - 1] == cut;
        if (cut == f.n) {
            CHECK(res.rc == 0 && res.end.status == GMT_OK && res.end.has_trailer && !res.end.truncated && res.n == NREC,
                  "full file: %s", res.end.message);
        } else if (cut == 0) {
            CHECK(res.rc < 0 && res.end.truncated && strstr(res.end.message, "empty file"), "cut 0: %s",
                  res.end.message);
        } else if (at_bound) {
            n_bound++;
            CHECK(res.rc == 0 && res.end.status == GMT_OK && !res.end.truncated && !res.end.has_trailer,
                  "cut %zu at a frame end: %s", cut, res.end.message);
            CHECK(strstr(res.end.message, "without a trailer") != NULL, "cut %zu: message '%s'", cut,
                  res.end.message);
            CHECK(res.end.good_offset == cut, "cut %zu: good_offset", cut);
        } else {
            n_trunc++;
            CHECK(res.rc == GMT_E_SHORT && res.end.status == GMT_E_SHORT && res.end.truncated,
                  "cut %zu inside a frame: rc %d, %s", cut, res.rc, res.end.message);
            CHECK(strstr(res.end.message, "cut short") != NULL, "cut %zu: message '%s'", cut, res.end.message);
            /* the trailer is the last record of the last frame: only a cut in
             * that frame's checksum can have it */
            if (res.end.has_trailer)
                CHECK(cut >= bounds[nb - 1] - 4 && res.n == NREC, "cut %zu: trailer seen before the last frame", cut);
            else
                CHECK(strstr(res.end.message, "no trailer") != NULL, "cut %zu: message '%s'", cut, res.end.message);
            CHECK(res.end.good_offset == (b ? bounds[b - 1] : 0), "cut %zu: good_offset %llu", cut,
                  (unsigned long long)res.end.good_offset);
        }
    }
    fprintf(stderr, "checked %zu cuts: %zu inside frames, %zu at frame ends\n", f.n + 1, n_trunc, n_bound);
    /* an example of what a user sees */
    result ex = read_prefix(gmt_reader_open_mem(f.p, bounds[2] + 7), bounds[2] + 7, "example");
    fprintf(stderr, "example: %s\n", ex.end.message);
    tu_buf_free(&f);
    for (size_t i = 0; i < NREC; i++)
        tu_rec_free(&recs[i]);
    return tc_result("test_truncation");
}
