/*
 * The trace sink (profiler/write/tsink.c).
 *
 * - A STRING held back goes out just before the first record that names
 *   it (a RANGE_BEGIN's name, an OOM's op), once; other records alone.
 * - The held bits grow past their first size; an id never held is not.
 * - A failure is said once and stays in the status.
 * - The claim: a file stays under its temporary name until a claim that is
 *   due, then takes its name; a file never claimed is removed at close.
 * - The summary file: lines appended, a line that did not fit refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "gmt_io.h"
#include "tsink.h"

static gmp_tsink T; /* a path buffer of GMP_PATH_MAX: not on the stack */

static int count_sink(void *ctx, const uint8_t *bytes, size_t n)
{
    (void)bytes;
    *(size_t *)ctx += n;
    return 0;
}

static void test_held(void)
{
    tc_context("held");
    size_t out = 0;
    gmt_writer_opts wo = {1, 0};
    gmt_writer *w = gmt_writer_open_sink(count_sink, &out, &wo);
    gmt_strtab *st = gmt_strtab_create();
    REQUIRE(w && st);
    gmp_tsink_init(&T, w, "/r/run.zst", st);
    CHECK_STR(T.path, "/r/run.zst");
    CHECK(T.io_error == 0 && T.held_cap == 0);

    int is_new = 0;
    uint64_t attn = gmt_strtab_intern(st, "attn", 4, &is_new);
    uint64_t mlp = gmt_strtab_intern(st, "mlp", 3, &is_new);
    REQUIRE(attn == 1 && mlp == 2);
    CHECK(!gmp_tsink_unhold(&T, attn)); /* never held (and no bits yet) */
    CHECK(gmp_tsink_hold(&T, attn) == 0);
    CHECK(gmp_tsink_hold(&T, mlp) == 0);
    CHECK(!gmp_tsink_unhold(&T, 3));
    CHECK(!gmp_tsink_unhold(&T, 100000)); /* beyond the bits */

    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_ALLOC;
    CHECK_EQ_U64(gmp_tsink_put(&T, &r), 1);
    r.type = GMT_REC_RANGE_BEGIN;
    r.u.range.name = attn;
    CHECK_EQ_U64(gmp_tsink_put(&T, &r), 2); /* its STRING first */
    CHECK_EQ_U64(gmp_tsink_put(&T, &r), 1); /* once */
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_OOM;
    r.u.oom.op = mlp;
    CHECK_EQ_U64(gmp_tsink_put(&T, &r), 2);
    CHECK_EQ_U64(gmt_writer_records(w), 6);

    /* the bits grow past their first 64 bytes (ids 0..511) */
    CHECK(gmp_tsink_hold(&T, 5000) == 0);
    CHECK(T.held_cap > 5000 / 8);
    CHECK(gmp_tsink_unhold(&T, 5000));
    CHECK(!gmp_tsink_unhold(&T, 5000));
    CHECK(!gmp_tsink_unhold(&T, 4999));

    gmp_tsink_put_string(&T, 9, "x", 1);
    CHECK_EQ_U64(gmt_writer_records(w), 7);
    CHECK(T.io_error == 0);
    gmp_tsink_failed(&T, w); /* said once, on stderr */
    gmp_tsink_failed(&T, w);
    CHECK(T.io_error == 1);
    gmt_writer_close(w);
    gmt_strtab_free(st);
    gmp_tsink_free(&T);
    CHECK(T.held == NULL && T.held_cap == 0);
}

static int exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

static void test_claim(const char *dir)
{
    tc_context("claim");
    char path[600];
    snprintf(path, sizeof path, "%s/run.zst", dir);
    gmt_writer_opts wo = {1, 0};
    char why[1024];
    gmt_writer *w = gmt_writer_create_unclaimed(path, &wo, why, sizeof why);
    REQUIRE(w, "%s", why);
    gmp_tsink_init(&T, w, path, NULL);
    gmp_tsink_claim(&T, 0); /* no context yet: the name stays free */
    CHECK(!gmt_writer_claimed(w));
    CHECK(!exists(path));
    gmp_tsink_claim(&T, 1);
    CHECK(gmt_writer_claimed(w));
    CHECK(exists(path));
    CHECK_STR(T.path, path);
    gmp_tsink_claim(&T, 1); /* done: nothing more */
    int named = 0;
    CHECK(gmp_tsink_close(&T, 1, &named) == 1);
    CHECK(named);
    CHECK(T.w == NULL);
    CHECK(exists(path));
    unlink(path);

    /* never claimed: the file is removed, the name stays free */
    w = gmt_writer_create_unclaimed(path, &wo, why, sizeof why);
    REQUIRE(w, "%s", why);
    gmp_tsink_init(&T, w, path, NULL);
    gmp_tsink_claim(&T, 0);
    named = 1;
    CHECK(gmp_tsink_close(&T, 0, &named) == 1);
    CHECK(!named);
    CHECK(!exists(path));

    /* the close claims what is due since the last claim */
    w = gmt_writer_create_unclaimed(path, &wo, why, sizeof why);
    REQUIRE(w, "%s", why);
    gmp_tsink_init(&T, w, path, NULL);
    CHECK(gmp_tsink_close(&T, 1, &named) == 1);
    CHECK(named);
    CHECK(exists(path));
    unlink(path);
    gmp_tsink_free(&T);
}

static void test_summary_line(const char *dir)
{
    tc_context("summary line");
    char path[600], buf[64];
    snprintf(path, sizeof path, "%s/summary", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    close(fd);
    CHECK(gmp_tsink_append_line(path, "a 1\n", 4, 64) == 0);
    CHECK(gmp_tsink_append_line(path, "b 2\n", 4, 64) == 0);
    CHECK(gmp_tsink_append_line(path, "", 64, 64) == EMSGSIZE); /* did not fit: nothing written */
    fd = open(path, O_RDONLY);
    REQUIRE(fd >= 0);
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    CHECK(n == 8 && memcmp(buf, "a 1\nb 2\n", 8) == 0);
    snprintf(path, sizeof path, "%s/none/summary", dir);
    CHECK(gmp_tsink_append_line(path, "a 1\n", 4, 64) == ENOENT);
    snprintf(path, sizeof path, "%s/summary", dir);
    unlink(path);
}

static size_t extra_keys(void *ctx, char *line, size_t cap)
{
    size_t n = strlen(line); /* before its '\n' */
    int k = snprintf(line + n - 1, cap - (n - 1), "\t%s=1\n", (const char *)ctx);
    return n - 1 + (size_t)k;
}

static void test_outcome_line(const char *dir)
{
    tc_context("outcome line");
    char path[600], buf[512];
    snprintf(path, sizeof path, "%s/summary", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    close(fd);
    gmp_tsink_init(&T, NULL, "/r/run.zst", NULL);
    gmp_tsink_outcome o;
    memset(&o, 0, sizeof o);
    o.bytes = 900;
    o.windows = 2;
    o.records = 40;
    o.dropped = 1;
    o.steps = 3;
    o.step_source = GMT_STEPSRC_NVTX;
    o.add_keys = extra_keys;
    o.ctx = "dumps";
    gmp_tsink_summary_line(&T, path, &o, "ok");
    gmp_tsink_summary_line(&T, path, &o, "no-context"); /* no recorder keys on that one */
    fd = open(path, O_RDONLY);
    REQUIRE(fd >= 0);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    CHECK_STR(buf, "trace=/r/run.zst\tbytes=900\twindows=2\trecords=40\tdropped=1\tsteps=3\tstep_source=nvtx\t"
                   "status=ok\tdumps=1\n"
                   "trace=/r/run.zst\tbytes=900\twindows=2\trecords=40\tdropped=1\tsteps=3\tstep_source=nvtx\t"
                   "status=no-context\n");
    CHECK_EQ_U64(gmp_tsink_file_size(&T, 77), 77); /* /r/run.zst: no such file */
    gmp_tsink_init(&T, NULL, path, NULL);
    CHECK_EQ_U64(gmp_tsink_file_size(&T, 77), (uint64_t)n);
    unlink(path);
    gmp_tsink_free(&T);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    char dir[256];
    snprintf(dir, sizeof dir, "%s/gmp_tsink.XXXXXX", tmp && tmp[0] && strlen(tmp) < 200 ? tmp : "/tmp");
    REQUIRE(mkdtemp(dir), "mkdtemp %s: %s", dir, strerror(errno));
    test_held();
    test_claim(dir);
    test_summary_line(dir);
    test_outcome_line(dir);
    rmdir(dir);
    return tc_result("test_tsink");
}
