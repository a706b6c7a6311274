/*
 * The recorder sink (profiler/write/rsink.c), driven with records alone.
 *
 * - What the ring takes: not the trace's own records (header, trailer,
 *   strings, failure, live set, window end), not a window's baseline, not
 *   kernels unless asked; DEVICE records are kept aside for the dumps.
 * - Where a chunk begins: at a new step (not at a phase change of the same
 *   step), without steps a quarter of the kept span after the chunk began
 *   (by the records' own times), and past a quarter of the cap.
 * - A chunk begun and its baseline's counts; the ring as one window; the
 *   dumps' limit, names and status.
 */
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "gmt_io.h"
#include "rsink.h"
#include "summary.h"

static gmp_rsink S; /* ~50 KiB of device records: not on the stack */

static gmt_record rec(gmt_type type)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = type;
    return r;
}

static gmt_record alloc_at(uint64_t ts, uint64_t flags)
{
    gmt_record r = rec(GMT_REC_ALLOC);
    r.u.mem.ts = ts;
    r.u.mem.address = 0x1000;
    r.u.mem.bytes = 4096;
    r.u.mem.flags = flags;
    return r;
}

static gmt_record step_rec(uint64_t step, uint64_t ts)
{
    gmt_record r = rec(GMT_REC_STEP);
    r.u.step.step = step;
    r.u.step.ts = ts;
    return r;
}

static void init(uint64_t seconds, uint64_t max_mb, int kernels, uint64_t dumps)
{
    gmp_rsink_settings set = {.steps = 3, .seconds = seconds, .max_mb = max_mb, .dumps = dumps,
                              .kernels = kernels, .zstd_level = 1};
    REQUIRE(gmp_rsink_init(&S, &set, 1000) == 0, "out of memory");
}

static int null_sink(void *ctx, const uint8_t *bytes, size_t n)
{
    (void)bytes;
    *(size_t *)ctx += n;
    return 0;
}

static int take(const gmt_record *r, gmp_rsink_split *sp) { return gmp_rsink_take(&S, r, sp); }

static void test_filter(void)
{
    tc_context("filter");
    init(30, 256, 0, 3);
    gmp_rsink_split sp;
    CHECK_EQ_U64(gmp_rec_count(S.rec), 1); /* the first chunk, for what comes before a step */
    const gmt_type own[] = {GMT_REC_HEADER, GMT_REC_TRAILER, GMT_REC_STRING,
                            GMT_REC_OOM,    GMT_REC_LIVE,    GMT_REC_WINDOW_END};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        gmt_record r = rec(own[i]);
        CHECK(!take(&r, &sp), "type %d", (int)own[i]);
        CHECK(!sp.due);
    }
    gmt_record a = alloc_at(2000, 0), b = alloc_at(2000, GMT_MEMF_BASELINE);
    CHECK(take(&a, &sp));
    CHECK(!take(&b, &sp)); /* the chunks carry their own baselines */
    gmt_record blk = rec(GMT_REC_BLOCK);
    blk.u.block.flags = GMT_BLKF_BASELINE;
    CHECK(!take(&blk, &sp));
    blk.u.block.flags = 0;
    CHECK(take(&blk, &sp));

    /* a window's baseline: its RANGE_BEGINs are the ring's already */
    gmt_record wb = rec(GMT_REC_WINDOW_BEGIN), rb = rec(GMT_REC_RANGE_BEGIN);
    CHECK(!take(&wb, &sp));
    CHECK(!take(&rb, &sp));
    CHECK(!take(&rb, &sp));
    CHECK(take(&a, &sp)); /* the baseline is over */
    CHECK(take(&rb, &sp));

    gmt_record k = rec(GMT_REC_KERNEL);
    CHECK(!take(&k, &sp)); /* kernels only when asked */
    gmt_record cp = rec(GMT_REC_MEMCPY);
    CHECK(!take(&cp, &sp));

    gmt_record dev = rec(GMT_REC_DEVICE);
    char name[] = "Fake GPU 1";
    dev.u.device.device = 1;
    dev.u.device.total_mem = 80ull << 30;
    dev.u.device.name = (gmt_bytes){name, (uint32_t)strlen(name)};
    CHECK(!take(&dev, &sp));
    memset(name, 'x', sizeof name - 1); /* the sink keeps its own copy of the name */
    CHECK(S.dev_have[1] && !S.dev_have[0]);
    CHECK_EQ_U64(S.devs[1].u.device.total_mem, 80ull << 30);
    CHECK(S.devs[1].u.device.name.len == 10 && memcmp(S.devs[1].u.device.name.ptr, "Fake GPU 1", 10) == 0);
    dev.u.device.device = GMP_MAX_DEVICES; /* out of range: not kept, not taken */
    CHECK(!take(&dev, &sp));
    gmp_rsink_free(&S);

    init(30, 256, 1, 3);
    CHECK(take(&k, &sp));
    CHECK(take(&cp, &sp));
    gmp_rsink_free(&S);
}

static void test_steps(void)
{
    tc_context("steps");
    init(30, 256, 0, 3);
    gmp_rsink_split sp;
    gmt_record s0 = step_rec(0, 1500);
    CHECK(take(&s0, &sp)); /* step 0's STEP: the first chunk is its chunk */
    CHECK(!sp.due);
    CHECK(!take(&s0, &sp)); /* a phase change in the same step: not the ring's */
    gmt_record s1 = step_rec(1, 2500);
    CHECK(take(&s1, &sp));
    CHECK(sp.due && sp.is_step && sp.step_known);
    CHECK_EQ_U64(sp.step, 1);
    CHECK_EQ_U64(sp.ts, 2500);
    CHECK(!take(&s1, &sp));
    CHECK(!sp.due);
    /* with steps, time does not split: 1000 s later, no chunk */
    gmt_record late = alloc_at(1000 + 1000000000000ull, 0);
    CHECK(take(&late, &sp));
    CHECK(!sp.due);
    gmp_rsink_free(&S);
}

static void test_time_split(void)
{
    tc_context("time split");
    /* 4 s kept: a chunk ends a quarter of that, 1 s, after it began (1000) */
    init(4, 256, 0, 3);
    gmp_rsink_split sp;
    gmt_record a = alloc_at(1000 + 1000000000ull, 0);
    CHECK(take(&a, &sp));
    CHECK(!sp.due); /* exactly 1 s: not past it */
    a.u.mem.ts++;
    CHECK(take(&a, &sp));
    CHECK(sp.due && !sp.is_step && !sp.step_known);
    CHECK_EQ_U64(sp.ts, 1000 + 1000000001ull); /* the record's own time */
    /* a record without a time never splits by time */
    gmt_record st = rec(GMT_REC_STATS);
    CHECK(take(&st, &sp));
    CHECK(!sp.due);
    CHECK(gmp_rsink_begin(&S, 0, 0, a.u.mem.ts) == 0);
    CHECK_EQ_U64(gmp_rec_count(S.rec), 2);
    CHECK(take(&a, &sp));
    CHECK(!sp.due); /* the new chunk began at that time */
    gmp_rsink_free(&S);
}

static void test_size_split(void)
{
    tc_context("size split");
    init(30, 1, 0, 3); /* a 1 MiB cap: a chunk ends past 256 KiB (its buffers' capacity counted) */
    gmp_rsink_split sp;
    static uint8_t junk[300 * 1024];
    gmp_rec_sink_records(S.rec, junk, 64 * 1024);
    gmt_record a = alloc_at(1100, 0);
    CHECK(take(&a, &sp));
    CHECK(!sp.due); /* 64 KiB of records, at most twice that held: not past a quarter */
    gmp_rec_sink_records(S.rec, junk, sizeof junk - 64 * 1024); /* 300 KiB in all */
    CHECK(take(&a, &sp));
    CHECK(sp.due && !sp.is_step && !sp.step_known);
    CHECK_EQ_U64(sp.ts, 1100);
    gmp_rsink_free(&S);
}

/* Records of a chunk and its baseline through the sink's writers, then the
 * ring as one window into a memory writer. */
static void test_chunks_and_ring(void)
{
    tc_context("chunks");
    init(30, 256, 0, 3);
    gmt_record a = alloc_at(1200, 0);
    for (int i = 0; i < 5; i++)
        CHECK(gmt_writer_put(S.ring_w, &a) == GMT_OK);
    CHECK(gmt_writer_end_frame(S.ring_w) == GMT_OK);
    gmp_rsink_sync(&S);
    CHECK(gmp_rsink_begin(&S, 1, 1, 1300) == 0);
    CHECK_EQ_U64(S.chunk_rec0, 5);
    CHECK_EQ_U64(S.chunk_frames0, 2); /* a sink writer counts frame 0 (the stream's preamble) as written */
    gmt_writer *bw = gmp_rsink_base_writer(&S);
    REQUIRE(bw == S.base_w);
    gmt_record wb = rec(GMT_REC_WINDOW_BEGIN);
    gmt_record base = alloc_at(1200, GMT_MEMF_BASELINE);
    CHECK(gmt_writer_put(bw, &wb) == GMT_OK);
    CHECK(gmt_writer_put(bw, &base) == GMT_OK);
    CHECK(gmt_writer_end_frame(bw) == GMT_OK);
    gmp_rsink_base_done(&S);
    CHECK_EQ_U64(S.base_records, 2);
    CHECK_EQ_U64(S.base_frames, 1); /* frames it ended, counted from where the baseline began */
    gmt_record s1 = step_rec(1, 1300);
    for (int i = 0; i < 3; i++)
        CHECK(gmt_writer_put(S.ring_w, i ? &a : &s1) == GMT_OK);
    CHECK(gmt_writer_end_frame(S.ring_w) == GMT_OK);
    gmp_rsink_sync(&S);

    gmp_rec_chunk c0, c1;
    REQUIRE(gmp_rec_count(S.rec) == 2 && gmp_rec_get(S.rec, 0, &c0) == 0 && gmp_rec_get(S.rec, 1, &c1) == 0);
    CHECK_EQ_U64(c0.records, 5); /* the first chunk: no baseline */
    CHECK_EQ_U64(c0.base_records, 0);
    CHECK_EQ_U64(c1.records, 3);
    CHECK_EQ_U64(c1.base_records, 2);
    CHECK_EQ_U64(c1.step, 1);

    /* the oldest chunk's baseline (none) and every chunk's records */
    gmt_writer_opts wo = {1, 0};
    size_t out_bytes = 0;
    gmt_writer *f = gmt_writer_open_sink(null_sink, &out_bytes, &wo);
    REQUIRE(f);
    int failed = 0;
    CHECK_EQ_U64(gmp_rsink_put_ring(&S, f, &failed), 0);
    CHECK(!failed);
    CHECK_EQ_U64(gmt_writer_records(f), 8);
    CHECK(out_bytes > 0);
    gmt_writer_close(f);
    gmp_rsink_free(&S);
}

static void test_dumps(void)
{
    tc_context("dumps");
    init(30, 256, 0, 2);
    char name[256];
    gmp_rsink_dump_name(1, "/r/run.zst", 1, name, sizeof name);
    CHECK_STR(name, "/r/run.oom.zst");
    gmp_rsink_dump_name(2, "/r/run.zst", 1, name, sizeof name);
    CHECK_STR(name, "/r/run.oom.2.zst");
    gmp_rsink_dump_name(1, "/r/run.zst", 0, name, sizeof name);
    CHECK_STR(name, "/r/run.zst"); /* the recorder alone: the trace's name first */
    gmp_rsink_dump_name(2, "/r/run.zst", 0, name, sizeof name);
    CHECK_STR(name, "/r/run.2.zst");
    char small[8];
    gmp_rsink_dump_name(1, "/r/run.zst", 1, small, sizeof small);
    CHECK_STR(small, "/r/run."); /* too long: the trace's path, cut */

    CHECK_STR(gmp_rsink_status_name(&S), GMP_SUMMARY_STATUS_NO_OOM);
    CHECK(gmp_rsink_dump_allowed(&S, GMT_OOM_CUDA));
    S.dumps = 1;
    gmp_rsink_dump_done(&S, "/r/run.oom.zst", 40, 900, 1);
    CHECK_STR(S.dump_path, "/r/run.oom.zst");
    CHECK_EQ_U64(S.dump_records, 40);
    CHECK_EQ_U64(S.dump_bytes, 900);
    CHECK_STR(gmp_rsink_status_name(&S), GMP_SUMMARY_STATUS_OOM);
    S.dumps = 2;
    gmp_rsink_dump_done(&S, "/r/run.oom.2.zst", 50, 1000, 0); /* only the first one's are kept */
    CHECK_STR(S.dump_path, "/r/run.oom.zst");
    CHECK_STR(gmp_rsink_status_name(&S), GMP_SUMMARY_STATUS_OOM);
    CHECK(!gmp_rsink_dump_allowed(&S, GMT_OOM_CUDA)); /* GMEMPROF_OOM_DUMPS=2 written */
    CHECK(!gmp_rsink_dump_allowed(&S, GMT_OOM_CUDA));
    CHECK_EQ_U64(S.dumps_skipped, 2);
    S.dump_ok = 0;
    CHECK_STR(gmp_rsink_status_name(&S), GMP_SUMMARY_STATUS_INCOMPLETE);
    gmp_rsink_free(&S);
}

int main(void)
{
    test_filter();
    test_steps();
    test_time_split();
    test_size_split();
    test_chunks_and_ring();
    test_dumps();
    return tc_result("test_rsink");
}
