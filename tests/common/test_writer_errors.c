/*
 * The writer's failure behaviour: an unopenable path, a full disk
 * (/dev/full), a closed descriptor; the first error is sticky, later puts
 * fail fast and count as dropped, errno is kept; a writer given no records
 * writes nothing; frame policy (frame_bytes) and counters.
 */
#include <fcntl.h>

#include "tutil.h"

static gmt_record kernel(uint64_t i)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_KERNEL;
    r.u.kernel.start = 1000 + i * 10;
    r.u.kernel.end = r.u.kernel.start + 5;
    r.u.kernel.name = 1 + i % 3;
    r.u.kernel.seq = i + 1;
    return r;
}

int main(void)
{
    /* unopenable path */
    errno = 0;
    CHECK(gmt_writer_open("/nonexistent/dir/t.zst", NULL) == NULL && errno == ENOENT, "open errno");
    CHECK(gmt_writer_open(NULL, NULL) == NULL && errno == EINVAL, "NULL path");
    CHECK(gmt_writer_open_fd(-1, NULL) == NULL, "bad fd");

    /* no records: nothing written, the reader says "empty" */
    char path[256];
    tu_tmp_path(path, sizeof path, "none");
    gmt_writer *w = gmt_writer_open(path, NULL);
    REQUIRE(w, "open");
    CHECK(gmt_writer_end_frame(w) == GMT_OK && gmt_writer_frames(w) == 0, "empty end_frame");
    CHECK(gmt_writer_close(w) == GMT_OK, "close");
    tu_buf b = tu_slurp(path);
    CHECK(b.n == 0, "no records wrote %zu bytes", b.n);
    tu_buf_free(&b);
    unlink(path);

    /* full disk */
    int fd = open("/dev/full", O_WRONLY);
    if (fd >= 0) {
        gmt_writer_opts o = { 1, 256 };
        w = gmt_writer_open_fd(fd, &o);
        REQUIRE(w, "open /dev/full");
        gmt_status st = GMT_OK;
        uint64_t i = 0;
        for (; i < 100 && st == GMT_OK; i++) {
            gmt_record k = kernel(i);
            st = gmt_writer_put(w, &k);
        }
        CHECK(st == GMT_E_IO && gmt_writer_errno(w) == ENOSPC, "full disk: %s errno %d", gmt_status_str(st),
              gmt_writer_errno(w));
        uint64_t accepted = gmt_writer_records(w);
        for (int j = 0; j < 10; j++) {
            gmt_record k = kernel(j);
            CHECK(gmt_writer_put(w, &k) == GMT_E_IO, "put after error");
        }
        CHECK(gmt_writer_dropped(w) == 10 && gmt_writer_records(w) == accepted, "dropped %llu",
              (unsigned long long)gmt_writer_dropped(w));
        CHECK(gmt_writer_end_frame(w) == GMT_E_IO, "end_frame after error");
        CHECK(gmt_writer_close(w) == GMT_E_IO, "close returns the first error");
    } else {
        fprintf(stderr, "no /dev/full: full-disk case skipped\n");
    }

    /* a descriptor closed under the writer */
    int p[2];
    REQUIRE(pipe(p) == 0, "pipe");
    close(p[0]);
    close(p[1]);
    w = gmt_writer_open_fd(p[1], NULL);
    REQUIRE(w, "open closed fd");
    gmt_record k = kernel(0);
    CHECK(gmt_writer_put(w, &k) == GMT_OK, "put buffers");
    CHECK(gmt_writer_end_frame(w) == GMT_E_IO && gmt_writer_errno(w) == EBADF, "EBADF");
    CHECK(gmt_writer_close(w) == GMT_E_IO, "close");

    /* frame policy: a frame ends once frame_bytes of input are in */
    tu_tmp_path(path, sizeof path, "frames");
    gmt_writer_opts o = { 3, 1000 };
    w = gmt_writer_open(path, &o);
    REQUIRE(w, "open");
    for (uint64_t i = 0; i < 1000; i++) {
        k = kernel(i);
        CHECK(gmt_writer_put(w, &k) == GMT_OK, "put");
    }
    uint64_t in = gmt_writer_bytes_in(w);
    uint64_t frames = gmt_writer_frames(w);
    /* every complete frame holds at least frame_bytes; the open one less */
    CHECK(frames == in / 1000 || frames + 1 == in / 1000 || frames == in / 1000 - 1, "%llu frames for %llu bytes",
          (unsigned long long)frames, (unsigned long long)in);
    CHECK(frames >= 5, "frames %llu", (unsigned long long)frames);
    CHECK(gmt_writer_close(w) == GMT_OK, "close");
    gmt_reader *r = gmt_reader_open(path);
    REQUIRE(r, "reader");
    gmt_record rec;
    uint64_t n = 0;
    while (gmt_reader_next(r, &rec) > 0) {
        gmt_record want = kernel(n);
        char why[200];
        CHECK(tu_record_eq(&want, &rec, why, sizeof why), "record %llu: %s", (unsigned long long)n, why);
        n++;
    }
    CHECK(n == 1000 && gmt_reader_end_info(r)->frames >= frames, "read %llu records", (unsigned long long)n);
    gmt_reader_close(r);
    unlink(path);

    /* an invalid record is refused without poisoning the writer */
    tu_tmp_path(path, sizeof path, "inval");
    w = gmt_writer_open(path, NULL);
    REQUIRE(w, "open");
    gmt_record bad;
    memset(&bad, 0, sizeof bad);
    bad.type = (gmt_type)0;
    CHECK(gmt_writer_put(w, &bad) == GMT_E_ARG, "type 0 refused");
    CHECK(gmt_writer_put(w, NULL) == GMT_E_ARG, "NULL refused");
    k = kernel(0);
    CHECK(gmt_writer_put(w, &k) == GMT_OK, "writer still works");
    CHECK(gmt_writer_dropped(w) == 2 && gmt_writer_records(w) == 1, "counters");
    CHECK(gmt_writer_close(w) == GMT_OK, "close");
    unlink(path);
    return tc_result("test_writer_errors");
}
