/*
 * The flight recorder's ring (profiler/write/recorder.c).
 *
 *   test_gmp_recorder [EVENTS]
 *
 * - The step rule: the failing step and `steps` steps before it stay;
 *   splits between them stay with them.
 * - The time rule, in a program without steps.
 * - The cap: never more memory than it, the oldest chunks dropped first and
 *   counted as trimmed, the current one never.
 * - EVENTS (default 2,000,000) allocation and free records through a real
 *   writer into the ring, 8 steps in all and a split whenever the current
 *   chunk passes a quarter of the cap (as rsink.c decides): the memory held
 *   never passes the cap of 1 MiB, the cap trims, and the chunks kept read
 *   back as whole frames, all their records.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "gmt_io.h"
#include "recorder.h"

#define MIB (1024u * 1024u)

static void add(gmp_rec *r, size_t n, int base)
{
    static uint8_t junk[1 << 20];
    while (n > 0) {
        size_t k = n < sizeof junk ? n : sizeof junk;
        if (base)
            gmp_rec_sink_baseline(r, junk, k);
        else
            gmp_rec_sink_records(r, junk, k);
        n -= k;
    }
}

static void test_steps(void)
{
    gmp_rec *r = gmp_rec_create(2, 30ull * 1000000000ull, 64 * MIB);
    REQUIRE(r != NULL, "create");
    for (uint64_t s = 0; s <= 10; s++) {
        CHECK(gmp_rec_begin(r, s, 1, s * 1000) == 0, "begin %llu", (unsigned long long)s);
        add(r, 100, 1);
        add(r, 1000, 0);
        if (s == 9) { /* a split inside step 9 */
            CHECK(gmp_rec_begin(r, 9, 0, s * 1000 + 500) == 0, "split");
            add(r, 100, 0);
        }
    }
    /* steps 8, 9 (and its split), 10 */
    CHECK(gmp_rec_count(r) == 4, "%zu chunks", gmp_rec_count(r));
    gmp_rec_chunk c;
    uint64_t want[] = {8, 9, 9, 10};
    int is_step[] = {1, 1, 0, 1};
    for (size_t i = 0; i < 4 && gmp_rec_get(r, i, &c) == 0; i++) {
        CHECK(c.step == want[i] && c.is_step == is_step[i], "chunk %zu: step %llu", i, (unsigned long long)c.step);
        CHECK(c.recs_n == (i == 2 ? 100u : 1000u), "chunk %zu: %zu bytes", i, c.recs_n);
        CHECK(c.base_n == (i == 2 ? 0u : 100u), "chunk %zu: baseline %zu bytes", i, c.base_n);
    }
    CHECK(gmp_rec_get(r, 4, &c) == -1, "past the end");
    gmp_rec_stats st;
    gmp_rec_get_stats(r, &st);
    CHECK(st.trimmed == 0 && st.lost_bytes == 0, "nothing trimmed or lost");
    gmp_rec_destroy(r);
}

static void test_time(void)
{
    const uint64_t s = 1000000000ull;
    gmp_rec *r = gmp_rec_create(3, 30 * s, 64 * MIB);
    gmp_rec_begin(r, 0, 1, 0); /* the first step, then none: no steps */
    for (uint64_t t = 10; t <= 100; t += 10)
        gmp_rec_begin(r, 0, 0, t * s);
    /* at 100 s: the chunks that ended after 70 s (began at 60 s or later) */
    gmp_rec_chunk c;
    CHECK(gmp_rec_count(r) == 5, "%zu chunks", gmp_rec_count(r));
    gmp_rec_destroy(r);
    (void)c;
}

static void test_cap(void)
{
    gmp_rec *r = gmp_rec_create(1000, 30ull * 1000000000ull, 8 * MIB);
    for (uint64_t s = 0; s < 100; s++) {
        gmp_rec_begin(r, s, 1, s);
        add(r, 700 * 1024, 0);
        gmp_rec_stats st;
        gmp_rec_get_stats(r, &st);
        CHECK(st.bytes <= 8 * MIB, "step %llu: %zu bytes", (unsigned long long)s, st.bytes);
    }
    gmp_rec_stats st;
    gmp_rec_get_stats(r, &st);
    CHECK(st.peak <= 8 * MIB && st.trimmed > 0 && st.lost_bytes == 0, "peak %zu, trimmed %llu", st.peak,
          (unsigned long long)st.trimmed);
    gmp_rec_chunk c;
    REQUIRE(gmp_rec_get(r, gmp_rec_count(r) - 1, &c) == 0, "last");
    CHECK(c.step == 99, "the current chunk is kept");
    /* one chunk larger than the cap on its own: what does not fit is lost, counted */
    gmp_rec_begin(r, 100, 1, 100);
    add(r, 9 * MIB, 0);
    gmp_rec_get_stats(r, &st);
    CHECK(st.bytes <= 8 * MIB && st.lost_bytes > 0 && gmp_rec_count(r) == 1, "%zu bytes, %llu lost", st.bytes,
          (unsigned long long)st.lost_bytes);
    gmp_rec_destroy(r);
}

/* ---- real frames ------------------------------------------------------------- */

static size_t count_records(const gmp_rec_chunk *c, uint64_t *steps)
{
    /* the chunk's frames after a preamble and a header of their own */
    char path[] = "/tmp/gmp-recorder-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0, "mkstemp");
    close(fd);
    gmt_writer_opts o = {1, 0};
    gmt_writer *w = gmt_writer_open_fd(open(path, O_WRONLY | O_TRUNC), &o);
    gmt_record h;
    memset(&h, 0, sizeof h);
    h.type = GMT_REC_HEADER;
    gmt_writer_put(w, &h);
    REQUIRE(gmt_writer_put_frames(w, c->recs, c->recs_n, c->records, c->frames) == GMT_OK, "frames");
    gmt_writer_close(w);
    gmt_reader *rd = gmt_reader_open(path);
    REQUIRE(rd != NULL, "reader");
    gmt_record r;
    size_t n = 0;
    while (gmt_reader_next(rd, &r) == 1)
        if (r.type != GMT_REC_HEADER) {
            n++;
            *steps += r.type == GMT_REC_STEP;
        }
    CHECK(gmt_reader_end_info(rd)->status == GMT_OK, "%s", gmt_reader_end_info(rd)->message);
    gmt_reader_close(rd);
    unlink(path);
    return n;
}

static void test_events(uint64_t events)
{
    const size_t cap = 1 * MIB;
    const uint64_t per_step = events / 8 ? events / 8 : 1;
    gmp_rec *r = gmp_rec_create(3, 30ull * 1000000000ull, cap);
    gmt_writer_opts o = {3, 0};
    gmt_writer *w = gmt_writer_open_sink(gmp_rec_sink_records, r, &o);
    REQUIRE(r && w, "create");
    uint64_t rec0 = 0, fr0 = 1, step = 0, splits = 0;
    size_t worst = 0;
    gmt_record m;
    memset(&m, 0, sizeof m);
    m.u.mem = (gmt_mem){.device = 0, .kind = GMT_MEMKIND_DEVICE, .source = GMT_SRC_MALLOC, .tid = 4242};
    gmp_rec_begin(r, 0, 1, 0);
    for (uint64_t i = 0; i < events; i++) {
        if (i % per_step == 0 || gmp_rec_current_bytes(r) > cap / 4) {
            int is_step = i % per_step == 0;
            gmt_writer_end_frame(w);
            gmp_rec_set_counts(r, 0, 0, gmt_writer_records(w) - rec0, gmt_writer_frames(w) - fr0);
            step += is_step;
            splits += !is_step;
            gmp_rec_begin(r, step, is_step, i);
            rec0 = gmt_writer_records(w);
            fr0 = gmt_writer_frames(w);
            if (is_step) {
                gmt_record st = {.type = GMT_REC_STEP};
                st.u.step = (gmt_step){.ts = 1000 + i, .step = step, .phase = GMT_PHASE_ACTIVE};
                gmt_writer_put(w, &st);
            }
        }
        /* a distinct address and size each time, as a training loop's
         * allocations are not: the worst case for the compressor */
        m.type = i % 2 ? GMT_REC_FREE : GMT_REC_ALLOC;
        m.u.mem.ts = 1000 + i * 37 + (i * 2654435761u % 1000);
        m.u.mem.address = 0x7f0000000000ull + ((i / 2) * 2654435761ull % (1ull << 36)) * 512;
        m.u.mem.bytes = 512 + (i / 2) * 40503 % (1 << 24);
        m.u.mem.step = step;
        REQUIRE(gmt_writer_put(w, &m) == GMT_OK, "put %llu", (unsigned long long)i);
        if ((i & 0xffff) == 0) {
            gmp_rec_stats st;
            gmp_rec_get_stats(r, &st);
            worst = st.bytes > worst ? st.bytes : worst;
        }
    }
    gmt_writer_end_frame(w);
    gmp_rec_set_counts(r, 0, 0, gmt_writer_records(w) - rec0, gmt_writer_frames(w) - fr0);
    gmp_rec_stats st;
    gmp_rec_get_stats(r, &st);
    CHECK(st.peak <= cap && worst <= cap, "peak %zu, worst seen %zu > cap %zu", st.peak, worst, cap);
    CHECK(st.lost_bytes == 0, "%llu bytes lost", (unsigned long long)st.lost_bytes);
    CHECK(splits > 0 && st.trimmed > 0, "%llu splits, %llu chunks trimmed: the cap was not reached",
          (unsigned long long)splits, (unsigned long long)st.trimmed);
    /* what is kept reads back: every chunk's records, and steps */
    uint64_t n = 0, steps = 0, want = 0;
    gmp_rec_chunk c;
    for (size_t i = 0; gmp_rec_get(r, i, &c) == 0; i++) {
        n += count_records(&c, &steps);
        want += c.records;
    }
    CHECK(n == want && n > 0, "%llu records read back, %llu kept", (unsigned long long)n, (unsigned long long)want);
    CHECK(steps <= 4, "%llu steps kept", (unsigned long long)steps);
    fprintf(stderr, "recorder: %llu events, %llu steps, %llu splits, peak %zu bytes of a %zu cap, %zu chunks kept "
                    "(%llu records, %llu bytes written in all)\n",
            (unsigned long long)events, (unsigned long long)step, (unsigned long long)splits, st.peak, cap,
            gmp_rec_count(r), (unsigned long long)n, (unsigned long long)gmt_writer_bytes_out(w));
    gmt_writer_close(w);
    gmp_rec_destroy(r);
}

int main(int argc, char **argv)
{
    uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
    test_steps();
    test_time();
    test_cap();
    test_events(events);
    return tc_result("test_recorder");
}
