/*
 * Insights (analyzer/views/insights.h) on traces built here record by record, where
 * every class, hint and what-if is known by construction; the expected bytes
 * are worked out in the comments. Usage: test_insights DIR (scratch folder).
 * It also writes DIR/insights.gmt for the golden and JSON tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gma.h"
#include "view.h"
#include "gmt_io.h"
#include "hints.h"
#include "insights.h"
#include "report.h"
#include "print.h"

#include "../check.h"

#define MiB (1ull << 20)
#define T0 1000000000ull
#define T(i) (T0 + 10000000ull + (uint64_t)(i) * 1000000ull) /* event i: 10 ms + i ms */
#define TID 100u

static gmt_writer *W;
static gmt_status St;

static int close_trace(uint64_t ts);

static void put(gmt_record *r)
{
    if (St == GMT_OK)
        St = gmt_writer_put(W, r);
}

static void rec_header(void)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_HEADER;
    r.u.header.pid = 4343;
    r.u.header.start_unix_ns = 1700000000000000000ull;
    r.u.header.start_ts = T0;
    r.u.header.rank = r.u.header.local_rank = r.u.header.world_size = -1;
    r.u.header.host = (gmt_bytes){ "testhost", 8 };
    r.u.header.profiler_version = (gmt_bytes){ "test", 4 };
    put(&r);
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_DEVICE;
    r.u.device.total_mem = 16ull << 30;
    r.u.device.name = (gmt_bytes){ "Test GPU", 8 };
    put(&r);
}

static void str(uint64_t id, const char *s)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_STRING;
    r.u.string.id = id;
    r.u.string.str = (gmt_bytes){ s, (uint32_t)strlen(s) };
    put(&r);
}

typedef struct mem {
    uint64_t ts, addr, bytes, src, flags, seq, range, step;
    int on_stream0;  /* a plain cudaMalloc's: no stream; else stream 7 */
} mem;

static void memrec(gmt_type type, mem m)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = type;
    r.u.mem.ts = m.ts;
    r.u.mem.address = m.addr;
    r.u.mem.bytes = m.bytes;
    r.u.mem.kind = GMT_MEMKIND_DEVICE;
    r.u.mem.source = m.src ? m.src : GMT_SRC_ASYNC_POOL;
    r.u.mem.flags = m.flags;
    r.u.mem.tid = TID;
    r.u.mem.seq = m.seq;
    r.u.mem.range = m.range;
    r.u.mem.step = m.step;
    r.u.mem.stream = m.on_stream0 ? 0 : 7;
    put(&r);
}
#define ALLOC(...) memrec(GMT_REC_ALLOC, (mem){ __VA_ARGS__ })
#define FREE(...) memrec(GMT_REC_FREE, (mem){ __VA_ARGS__ })

static void kernel_on(uint64_t ts, uint64_t stream, uint64_t name, uint64_t seq, uint64_t step)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_KERNEL;
    r.u.kernel.start = ts;
    r.u.kernel.end = ts + 500000; /* 0.5 ms */
    r.u.kernel.stream = stream;
    r.u.kernel.corr = seq;
    r.u.kernel.name = name;
    r.u.kernel.tid = TID;
    r.u.kernel.seq = seq;
    r.u.kernel.step = step;
    put(&r);
}

static void kernel(uint64_t ts, uint64_t name, uint64_t seq, uint64_t step) { kernel_on(ts, 7, name, seq, step); }

static void range(int begin, uint64_t ts, uint64_t id, uint64_t parent, uint64_t name)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = begin ? GMT_REC_RANGE_BEGIN : GMT_REC_RANGE_END;
    r.u.range.ts = ts;
    r.u.range.tid = TID;
    r.u.range.id = id;
    r.u.range.parent = parent;
    r.u.range.name = name;
    put(&r);
}

static void step(uint64_t ts, uint64_t n)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_STEP;
    r.u.step.ts = ts;
    r.u.step.step = n;
    r.u.step.phase = GMT_PHASE_ACTIVE;
    put(&r);
}

static void window(int begin, uint64_t ts, uint64_t stp)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = begin ? GMT_REC_WINDOW_BEGIN : GMT_REC_WINDOW_END;
    if (begin) {
        r.u.wbegin.ts = ts;
        r.u.wbegin.step = stp;
        r.u.wbegin.baseline_count = 1;
        r.u.wbegin.baseline_bytes = 16 * MiB;
    } else {
        r.u.wend.ts = ts;
        r.u.wend.step = stp;
        r.u.wend.reason = GMT_WEND_SCHEDULE;
    }
    put(&r);
}

enum { K_GEMM = 1, K_SOFTMAX, K_ADD, R_LINEAR = 10, R_SOFTMAX, R_ADD, R_EMPTY, R_CAT };

/*
 * One window, steps 0-4, one host thread, one device; cudaMallocAsync
 * (framework) but LIB, a plain cudaMalloc (a library's workspace).
 *
 *  i   record                                        live after (MiB)
 *  -   baseline W 16 (allocated before the window)   16
 *  1   step 0
 *  2   op 1 aten::linear begins
 *  3   ALLOC X 8    (op 1)                           24
 *  4   ALLOC WS 2   (op 1)                           26
 *  5   kernel gemm (seq 1, 0.5 ms)
 *  6   FREE WS      (op 1): a temporary              24
 *  8   op 2 aten::softmax begins, 9: its child aten::empty (id 3)
 * 10   ALLOC S 32   (range 3, op 2)                  56
 * 12   kernel softmax (seq 2)
 * 14   ALLOC LIB 4  cudaMalloc, no range             60
 * 15   kernel add (seq 3)
 * 20   op 5 aten::add begins
 * 21   ALLOC T 1    (op 5)                           61   PEAK (31 ms, step 0)
 * 22   kernel add (seq 4)
 * 23   FREE S       (op 5)                           29
 * 24   FREE T       (op 5): a temporary              28
 * 26   FREE X       (no op; the last op begun: 5)    20
 * 28   ALLOC L0 2   (op 10 aten::cat), never freed   22
 * 30   step 1; 38: ALLOC L1 2 (op 11 aten::cat)      24
 * 40   step 2; 48: ALLOC L2 2 (op 12)                26
 * 50   step 3; 58: ALLOC L3 2 (op 13)                28
 * 60   step 4; 70: window end
 *
 * 1. At the peak (61 MiB): persistent W 16 (baseline); step-scoped S 32
 *    (aten::softmax: made in op 2, freed in op 5) + X 8 (aten::linear) = 40;
 *    temporary T 1 (aten::add: op 5 both ends); outside LIB 4 (owner: the
 *    kernel it is attributed to, add, seq 3). 16 + 40 + 1 + 4 = 61.
 * 3. Complete steps 0-3 (step 4 is the last, cut by the window end). Live at
 *    their ends: W 16 + LIB 4 + aten::cat 2, 4, 6, 8 = 22, 24, 26, 28 MiB.
 *    Slope: x - 1.5 = -1.5, -0.5, 0.5, 1.5; sum((x - 1.5) y) = 10 MiB over
 *    sum((x - 1.5)^2) = 5: 2 MiB per step, total and aten::cat, which grew in
 *    3 of 3 steps: the one leak suspect.
 * 4. Freed allocations of 1 ms or more whose idle head (to the first kernel
 *    of the thread after the allocation) plus idle tail (from the end of the
 *    last kernel before the free) exceed half the lifetime:
 *    X 23 ms: 2 + 3.5 no; WS 2 ms: 1 + 0.5 yes; S 13 ms: 2 + 0.5 no;
 *    T 3 ms: 1 + 1.5 yes. Idle: 2 allocations, 3 MiB; at the peak (31 ms,
 *    before T's first kernel at 32 ms): T, 1 MiB, owner aten::add.
 * 5. Movable at the peak (the op holding the free began after the
 *    allocation): S (op 5 began at 30 ms, after 20 ms) and X (free outside an
 *    op: the last op begun, 5). S freed at 30 ms: levels ... 56, 60, 28, 29:
 *    peak 60 MiB (-1). X freed at 30 ms: also 60; the tie keeps the larger,
 *    aten::softmax, 1 allocation.
 */
static int write_trace(const char *path)
{
    gmt_writer_opts o = { 3, 1u << 20 };
    St = GMT_OK;
    if (!(W = gmt_writer_open(path, &o)))
        return -1;
    rec_header();
    str(K_GEMM, "gemm_kernel");
    str(K_SOFTMAX, "softmax_kernel");
    str(K_ADD, "add_kernel");
    str(R_LINEAR, "aten::linear, seq = 1, op_id = 1");
    str(R_SOFTMAX, "aten::softmax, seq = 2, op_id = 2");
    str(R_ADD, "aten::add, seq = 3, op_id = 5");
    str(R_EMPTY, "aten::empty, op_id = 3");
    str(R_CAT, "aten::cat");
    window(1, T(0), 0);
    ALLOC(.ts = T0 + 1000000, .addr = 0x1000000, .bytes = 16 * MiB, .flags = GMT_MEMF_BASELINE);
    step(T(1), 0);
    range(1, T(2), 1, 0, R_LINEAR);
    ALLOC(.ts = T(3), .addr = 0x2000000, .bytes = 8 * MiB, .range = 1);
    ALLOC(.ts = T(4), .addr = 0x3000000, .bytes = 2 * MiB, .range = 1);
    kernel(T(5), K_GEMM, 1, 0);
    FREE(.ts = T(6), .addr = 0x3000000, .bytes = 2 * MiB, .range = 1, .seq = 1);
    range(0, T(7), 1, 0, 0);
    range(1, T(8), 2, 0, R_SOFTMAX);
    range(1, T(9), 3, 2, R_EMPTY);
    ALLOC(.ts = T(10), .addr = 0x4000000, .bytes = 32 * MiB, .range = 3, .seq = 1);
    range(0, T(11), 3, 0, 0);
    kernel(T(12), K_SOFTMAX, 2, 0);
    range(0, T(13), 2, 0, 0);
    ALLOC(.ts = T(14), .addr = 0x5000000, .bytes = 4 * MiB, .src = GMT_SRC_MALLOC, .seq = 2);
    kernel(T(15), K_ADD, 3, 0);
    range(1, T(20), 5, 0, R_ADD);
    ALLOC(.ts = T(21), .addr = 0x6000000, .bytes = 1 * MiB, .range = 5, .seq = 3);
    kernel(T(22), K_ADD, 4, 0);
    FREE(.ts = T(23), .addr = 0x4000000, .bytes = 32 * MiB, .range = 5, .seq = 4);
    FREE(.ts = T(24), .addr = 0x6000000, .bytes = 1 * MiB, .range = 5, .seq = 4);
    range(0, T(25), 5, 0, 0);
    FREE(.ts = T(26), .addr = 0x2000000, .bytes = 8 * MiB, .seq = 4);
    for (uint64_t s = 0; s < 4; s++) {
        if (s)
            step(T(20 + 10 * s), s);
        range(1, T(27 + 10 * s), 10 + s, 0, R_CAT);
        ALLOC(.ts = T(28 + 10 * s), .addr = 0x7000000 + s * 0x1000000, .bytes = 2 * MiB, .range = 10 + s, .seq = 4,
              .step = s);
        range(0, T(29 + 10 * s), 10 + s, 0, 0);
    }
    step(T(60), 4);
    window(0, T(70), 4);
    return close_trace(T(71));
}

static void block(uint64_t ts, uint64_t action, uint64_t addr, uint64_t bytes)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_BLOCK;
    r.u.block.ts = ts;
    r.u.block.action = action;
    r.u.block.address = addr;
    r.u.block.bytes = bytes;
    r.u.block.requested = bytes;
    r.u.block.tid = TID;
    put(&r);
}

static int close_trace(uint64_t ts)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_STATS;
    r.u.stats.ts = ts;
    put(&r);
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_TRAILER;
    r.u.trailer.ts = ts;
    put(&r);
    gmt_status c = gmt_writer_close(W);
    return St == GMT_OK && c == GMT_OK ? 0 : -1;
}

/*
 * With the PyTorch bridge: BLOCK records are the allocations, CUPTI's
 * ALLOCs (segments, and a library's 8 MiB) feed the layer. No window
 * records, no steps: one implicit window, one step.
 *
 *  i  record                                        allocated  reserved  CUDA
 *  1  segment A 20 MiB at 0x10000000 (+ CUPTI)       0          20        20
 *  2  CUPTI LIB 8 MiB at 0x90000000 (outside)        0          20        28
 *  3  block b1  8 MiB at A + 0                       8
 *  4  block b2  4 MiB at A + 8 MiB                   12
 *  5  block b3  8 MiB at A + 12 MiB                  20
 *  6  free b1: a hole of 8 MiB at A + 0              12
 *  7  segment B 12 MiB at 0x20000000 (+ CUPTI): b4 does not fit the hole
 *                                                               32        40
 *  8  block b4 12 MiB at B                           24   PEAK
 *
 * At the peak: allocated 24, reserved 32, CUDA 40: outside 40 - 32 = 8,
 * reserved-unallocated 32 - 24 = 8 (a quarter of the reserve: shown).
 * Largest hole: A's first 8 MiB (B is full) in 2 segments; largest request
 * 12 MiB. The cache (8 MiB) is smaller than that request, so no allocator
 * setting would have served it: the row says so.
 * Classes: b2, b3, b4 never freed, no steps: persistent 24 MiB.
 */
static int write_bridge(const char *path)
{
    gmt_writer_opts o = { 3, 1u << 20 };
    St = GMT_OK;
    if (!(W = gmt_writer_open(path, &o)))
        return -1;
    rec_header();
    block(T(1), GMT_BLK_SEGMENT_ALLOC, 0x10000000, 20 * MiB);
    ALLOC(.ts = T(1), .addr = 0x10000000, .bytes = 20 * MiB, .src = GMT_SRC_MALLOC);
    ALLOC(.ts = T(2), .addr = 0x90000000, .bytes = 8 * MiB, .src = GMT_SRC_MALLOC);
    block(T(3), GMT_BLK_ALLOC, 0x10000000, 8 * MiB);
    block(T(4), GMT_BLK_ALLOC, 0x10800000, 4 * MiB);
    block(T(5), GMT_BLK_ALLOC, 0x10C00000, 8 * MiB);
    block(T(6), GMT_BLK_FREE_REQUESTED, 0x10000000, 8 * MiB);
    block(T(7), GMT_BLK_SEGMENT_ALLOC, 0x20000000, 12 * MiB);
    ALLOC(.ts = T(7), .addr = 0x20000000, .bytes = 12 * MiB, .src = GMT_SRC_MALLOC);
    block(T(8), GMT_BLK_ALLOC, 0x20000000, 12 * MiB);
    return close_trace(T(9));
}

/* The options every replay here uses: the top 10, every window, step and
 * device. */
static gma_opts test_opts(void)
{
    gma_opts o;
    memset(&o, 0, sizeof(o));
    o.top = 10;
    o.window = o.step = o.device = -1;
    return o;
}

/* Replays path into r with the insights' consumer. */
static void replay_insights(gma_replay *r, const char *path)
{
    gma_opts o = test_opts();
    char msg[600];
    REQUIRE(gma_replay_open(r, &o, path) == 0);
    REQUIRE(gma_insights_open(r) == 0);
    REQUIRE(gma_replay_read(r, msg, sizeof(msg)) == 0, "%s", msg);
}

/*
 * The same trace with its categories (category.h): no range at all, so the
 * blocks made before the first range and never freed (b2, b3, b4) are
 * parameters: 24 MiB in 3; beside them the allocator cache 32 - 24 = 8 MiB
 * and outside the allocator 40 - 32 = 8 MiB. The lifetime split stays
 * beside them (persistent 24 MiB), and a build in lifetimes is today's.
 */
static void check_bridge_categories(const char *path)
{
    tc_context("bridge, categories");
    static gma_replay r;
    gma_opts o = test_opts();
    char msg[600];
    REQUIRE(gma_replay_open(&r, &o, path) == 0);
    REQUIRE(gma_insights_open(&r) == 0);
    REQUIRE(gma_category_open(&r) == 0);
    REQUIRE(gma_replay_read(&r, msg, sizeof(msg)) == 0, "%s", msg);
    REQUIRE(gma_category_finish(&r) == 0);
    CHECK(gma_insights_categories(&r));
    gma_ins_result res;
    REQUIRE(gma_insights_build(&res, &r) == 0);
    REQUIRE(res.ndev == 1);
    CHECK(res.categories);
    CHECK_EQ_U64(res.ncls, GMA_CAT_COUNT_);
    CHECK_STR(res.cls_names[GMA_CAT_CACHE], "allocator cache");
    const gma_ins_dev *D = &res.dev[0];
    CHECK_EQ_U64(D->cls[GMA_CAT_PARAMETER].bytes, 24 * MiB);
    CHECK_EQ_U64(D->cls[GMA_CAT_PARAMETER].count, 3);
    for (unsigned k = GMA_CAT_GRADIENT; k < GMA_CAT_TENSORS_; k++)
        CHECK_EQ_U64(D->cls[k].bytes, 0);
    CHECK_EQ_U64(D->cls[GMA_CAT_CACHE].bytes, 8 * MiB);
    CHECK_EQ_U64(D->cls[GMA_CAT_OUTSIDE].bytes, 8 * MiB);
    CHECK_EQ_U64(D->life[GMA_IC_PERSISTENT], 24 * MiB);
    CHECK_EQ_U64(D->life_count[GMA_IC_PERSISTENT], 3);
    CHECK_EQ_U64(D->life[GMA_IC_STEP] + D->life[GMA_IC_TEMP], 0);
    gma_insights_result_free(&res);
    REQUIRE(gma_insights_build_in(&res, &r, 0) == 0);
    CHECK(!res.categories);
    CHECK_EQ_U64(res.dev[0].cls[GMA_IC_PERSISTENT].bytes, 24 * MiB);
    CHECK_EQ_U64(res.dev[0].cls[GMA_IC_RESERVED].bytes, 8 * MiB);
    gma_insights_result_free(&res);
    gma_replay_free(&r);
    tc_context(NULL);
}

static void check_bridge(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/insights_bridge.gmt", dir);
    REQUIRE(write_bridge(path) == 0, "writing %s", path);
    tc_context("bridge");
    static gma_replay r;
    replay_insights(&r, path);
    REQUIRE(r.fw);
    gma_ins_result res;
    REQUIRE(gma_insights_build(&res, &r) == 0);
    REQUIRE(res.ndev == 1);
    const gma_ins_dev *D = &res.dev[0];
    CHECK_EQ_U64(D->peak, 24 * MiB);
    CHECK_EQ_U64(D->cls[GMA_IC_PERSISTENT].bytes, 24 * MiB);
    CHECK_EQ_U64(D->cls[GMA_IC_PERSISTENT].count, 3);
    CHECK_EQ_U64(D->cls[GMA_IC_STEP].bytes + D->cls[GMA_IC_TEMP].bytes, 0);
    CHECK(D->cls[GMA_IC_OUTSIDE].known && D->cls[GMA_IC_RESERVED].known);
    CHECK_EQ_U64(D->cls[GMA_IC_OUTSIDE].bytes, 8 * MiB);
    CHECK_EQ_U64(D->cls[GMA_IC_RESERVED].bytes, 8 * MiB);
    CHECK(D->has_fw);
    CHECK_EQ_U64(D->fw_allocated, 24 * MiB);
    CHECK_EQ_U64(D->fw_reserved, 32 * MiB);
    CHECK_EQ_U64(D->fw_cuda, 40 * MiB);
    CHECK_EQ_U64(D->segments, 2);
    CHECK_EQ_U64(D->largest_hole, 8 * MiB);
    CHECK_EQ_U64(D->largest_request, 12 * MiB);
    gma_table t;
    REQUIRE(gma_insights_table(&t, &res, NULL, 0) == 0);
    size_t frag = 0;
    for (size_t i = 0; i < t.nrows; i++)
        if (strcmp(gma_cell_text(&t, gma_table_cell(&t, i, 1)), "fragmentation") == 0) {
            frag++;
            CHECK_EQ_U64(gma_table_cell(&t, i, 3)->v.u, 8 * MiB);
            CHECK_HAS(gma_cell_text(&t, gma_table_cell(&t, i, 7)), "largest free hole 8.00 MiB in 2 segments");
        }
    CHECK_EQ_U64(frag, 1);
    gma_table_free(&t);
    gma_insights_result_free(&res);
    gma_replay_free(&r);
    check_bridge_categories(path);
}

/*
 * Idle time counts kernels of the allocation's stream: A on stream 7 at 11 ms,
 * a kernel on stream 9 at 12 ms, one on stream 7 at 19 ms, A freed at 20 ms:
 * head 19 - 11 = 8 ms + tail 20 - 19.5 = 0.5 ms of 9: idle. B, a plain
 * cudaMalloc (no stream), same times: head 1 ms (the stream-9 kernel) +
 * tail 0.5 ms of 9: not idle. Idle: 1 allocation, 2 MiB (A).
 */
static void check_streams(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/insights_streams.gmt", dir);
    gmt_writer_opts wo = { 3, 1u << 20 };
    St = GMT_OK;
    REQUIRE((W = gmt_writer_open(path, &wo)) != NULL);
    rec_header();
    str(K_GEMM, "gemm_kernel");
    ALLOC(.ts = T(1), .addr = 0x1000000, .bytes = 2 * MiB);
    ALLOC(.ts = T(1), .addr = 0x2000000, .bytes = 4 * MiB, .src = GMT_SRC_MALLOC, .on_stream0 = 1);
    kernel_on(T(2), 9, K_GEMM, 1, 0);
    kernel_on(T(9), 7, K_GEMM, 2, 0);
    FREE(.ts = T(10), .addr = 0x1000000, .bytes = 2 * MiB, .seq = 2);
    FREE(.ts = T(10), .addr = 0x2000000, .bytes = 4 * MiB, .src = GMT_SRC_MALLOC, .seq = 2, .on_stream0 = 1);
    REQUIRE(close_trace(T(11)) == 0);
    tc_context("streams");
    static gma_replay r;
    replay_insights(&r, path);
    gma_ins_result res;
    REQUIRE(gma_insights_build(&res, &r) == 0);
    REQUIRE(res.ndev == 1);
    CHECK_EQ_U64(res.dev[0].idle_count, 1);
    CHECK_EQ_U64(res.dev[0].idle_bytes, 2 * MiB);
    gma_insights_result_free(&res);
    gma_replay_free(&r);
}

static const gma_ins_owner *owner(const gma_vec *v, size_t i)
{
    return i < v->len ? &GMA_VEC_AT(v, gma_ins_owner, i) : NULL;
}

static void check_owner(const gma_ins_result *res, const gma_vec *v, size_t i, const char *name, uint64_t bytes)
{
    const gma_ins_owner *o = owner(v, i);
    CHECK(o != NULL, "owner %zu missing (want %s)", i, name);
    if (!o)
        return;
    CHECK_STR(gma_ins_str(res, o->name), name);
    CHECK_EQ_U64(o->bytes, bytes);
}

static void check_result(const gma_ins_result *res)
{
    REQUIRE(res->ndev == 1);
    const gma_ins_dev *D = &res->dev[0];
    CHECK_STR(res->owner_kind, "op");
    CHECK_EQ_U64(D->peak, 61 * MiB);
    CHECK_EQ_U64(D->ts, T(21));
    CHECK_EQ_U64(D->step, 0);
    CHECK_EQ_U64(D->live_sum, 61 * MiB);
    /* 1. classes */
    CHECK_EQ_U64(D->cls[GMA_IC_PERSISTENT].bytes, 16 * MiB);
    CHECK_EQ_U64(D->cls[GMA_IC_PERSISTENT].count, 1);
    CHECK_EQ_U64(D->cls[GMA_IC_STEP].bytes, 40 * MiB);
    CHECK_EQ_U64(D->cls[GMA_IC_STEP].count, 2);
    CHECK_EQ_U64(D->cls[GMA_IC_TEMP].bytes, 1 * MiB);
    CHECK_EQ_U64(D->cls[GMA_IC_OUTSIDE].bytes, 4 * MiB);
    CHECK(D->cls[GMA_IC_OUTSIDE].known);
    CHECK(!D->cls[GMA_IC_RESERVED].known); /* no bridge */
    check_owner(res, &D->cls[GMA_IC_PERSISTENT].owners, 0, "(baseline)", 16 * MiB);
    check_owner(res, &D->cls[GMA_IC_STEP].owners, 0, "aten::softmax", 32 * MiB);
    check_owner(res, &D->cls[GMA_IC_STEP].owners, 1, "aten::linear", 8 * MiB);
    check_owner(res, &D->cls[GMA_IC_TEMP].owners, 0, "aten::add", 1 * MiB);
    check_owner(res, &D->cls[GMA_IC_OUTSIDE].owners, 0, "add_kernel", 4 * MiB);
    /* 3. growth */
    CHECK_EQ_U64(D->nsteps, 4);
    CHECK_EQ_U64(D->step_first, 0);
    CHECK_EQ_U64(D->step_last, 3);
    CHECK_EQ_U64(D->total_first, 22 * MiB);
    CHECK_EQ_U64(D->total_last, 28 * MiB);
    CHECK_EQ_U64((uint64_t)D->total_slope, 2 * MiB);
    CHECK_EQ_U64(D->growth.len, 1);
    const gma_ins_owner *g = owner(&D->growth, 0);
    if (g) {
        CHECK_STR(gma_ins_str(res, g->name), "aten::cat");
        CHECK_EQ_U64((uint64_t)g->slope, 2 * MiB);
        CHECK_EQ_U64(g->first, 2 * MiB);
        CHECK_EQ_U64(g->last, 8 * MiB);
        CHECK_EQ_U64(g->grew, 3);
    }
    /* 4. idle */
    CHECK_EQ_U64(D->idle_count, 2);
    CHECK_EQ_U64(D->idle_bytes, 3 * MiB);
    CHECK_EQ_U64(D->idle_at_peak, 1 * MiB);
    CHECK_EQ_U64(D->idle_at_peak_count, 1);
    check_owner(res, &D->idle_owners, 0, "aten::add", 1 * MiB);
    /* 5. what-if */
    CHECK(D->has_whatif);
    CHECK_STR(gma_ins_str(res, D->whatif_owner), "aten::softmax");
    CHECK_EQ_U64(D->whatif_base, 61 * MiB);
    CHECK_EQ_U64(D->whatif_peak, 60 * MiB);
    CHECK_EQ_U64(D->whatif_count, 1);
    CHECK_EQ_U64(D->whatif_moved_at_peak, 32 * MiB);
}

/* The rows: each holds a number, a reason and (for the class rows) what to try. */
static void check_table(const gma_ins_result *res)
{
    gma_table t;
    REQUIRE(gma_insights_table(&t, res, NULL, 0) == 0);
    size_t classes = 0, whatif = 0;
    for (size_t i = 0; i < t.nrows; i++) {
        const gma_cell *f = gma_table_cell(&t, i, 1), *o = gma_table_cell(&t, i, 2);
        const gma_cell *reason = gma_table_cell(&t, i, 7), *try_ = gma_table_cell(&t, i, 8);
        CHECK(!reason->null, "row %zu has no reason", i);
        if (o->null) { /* a finding's first row: what to try */
            CHECK(!try_->null || gma_table_cell(&t, i, 3)->v.u == 0, "row %zu (%s) has nothing to try", i,
                  gma_cell_text(&t, f));
            classes++;
        }
        if (strcmp(gma_cell_text(&t, f), "what-if") == 0) {
            whatif++;
            CHECK_EQ_U64(gma_table_cell(&t, i, 3)->v.u, 60 * MiB);
            CHECK_EQ_U64((uint64_t)-gma_table_cell(&t, i, 6)->v.i, 1 * MiB);
        }
    }
    CHECK_EQ_U64(classes, 5); /* persistent, step-scoped, temporary, outside, idle */
    CHECK_EQ_U64(whatif, 1);
    gma_table_free(&t);
}

/* ---- what-if: one layer recomputed ---------------------------------------------- */

enum { R_BLOCK = 20, R_HEAD, R_BACK };

/*
 * One step (no step records: step 0), one thread; ops (top-level ranges):
 *   op 1 block [1, 6] ms   op 2 block [7, 11]   op 3 head [12, 16]
 *   op 4 block_backward [20, 25]   op 5 block_backward [26, 31]
 *
 *  ms  record                                  live (MiB)
 *   0  ALLOC W 10 (no op, never freed)         10
 *   2  ALLOC A1 4 (op 1)                       14
 *   3  ALLOC X1 1 (op 1), 4: FREE X1 (op 1)    15, 14   a temporary
 *   5  ALLOC I1 2 (op 1)                       16
 *   8  ALLOC A2 8 (op 2)                       24
 *  13  FREE I1 (op 3)                          22       freed in the forward
 *  21  ALLOC G2 3 (op 4)                       25       PEAK
 *  22  FREE A2 (op 4), 24: FREE G2 (op 4)      17, 14
 *  27  ALLOC G1 5 (op 5), 28: FREE A1 (op 5)   19, 15
 *  30  FREE G1 (op 5)                          10
 *
 * The step turns at its peak (21 ms). The activations of a layer are made
 * in it and freed at or after the turn: block #1 (op 1): A1 (X1 is its
 * temporary, I1 is freed before the turn); block #2 (op 2): A2. Backward
 * begins: A1's free is in op 5, begun at 26 ms; A2's in op 4, at 20 ms.
 * Candidates by their bytes at the peak: block #2 (8 MiB), block #1 (4).
 *  - block #2 recomputed: A2 live [8, 11) and [20, 22): 24 at 8, 16 at 11,
 *    14 at 13, 22 at 20, 25 at 21: the peak stays 25 MiB.
 *  - block #1 recomputed: A1 live [2, 6) and [26, 28): 14, 15, 14, 16, 12
 *    at 6, 20 at 8, 18, 21 at 21, 13, 10, 14 at 26, 19 at 27, 15, 10:
 *    peak 21 MiB. Kept: block #1, -4 MiB, 1 activation of 4 MiB.
 * The free-one-op-earlier what-if, for comparison: owner block (A1 freed at
 * 26, A2 at 20, I1 at 12; X1 and G2 cannot move): 24 at 8, 22 at 12, 14 at
 * 20, 17 at 21: peak 24 MiB, 3 allocations, 12 MiB of them at the peak.
 * Hints: step-scoped 12 of 25 MiB = 48% < 50%, temporary 3 = 12% < 20%:
 * none.
 */
static int write_layers(const char *path)
{
    gmt_writer_opts o = { 3, 1u << 20 };
    St = GMT_OK;
    if (!(W = gmt_writer_open(path, &o)))
        return -1;
    rec_header();
    str(R_BLOCK, "block");
    str(R_HEAD, "head");
    str(R_BACK, "block_backward");
    ALLOC(.ts = T(0), .addr = 0x1000000, .bytes = 10 * MiB);
    range(1, T(1), 1, 0, R_BLOCK);
    ALLOC(.ts = T(2), .addr = 0x2000000, .bytes = 4 * MiB, .range = 1);
    ALLOC(.ts = T(3), .addr = 0x3000000, .bytes = 1 * MiB, .range = 1);
    FREE(.ts = T(4), .addr = 0x3000000, .bytes = 1 * MiB, .range = 1);
    ALLOC(.ts = T(5), .addr = 0x4000000, .bytes = 2 * MiB, .range = 1);
    range(0, T(6), 1, 0, 0);
    range(1, T(7), 2, 0, R_BLOCK);
    ALLOC(.ts = T(8), .addr = 0x5000000, .bytes = 8 * MiB, .range = 2);
    range(0, T(11), 2, 0, 0);
    range(1, T(12), 3, 0, R_HEAD);
    FREE(.ts = T(13), .addr = 0x4000000, .bytes = 2 * MiB, .range = 3);
    range(0, T(16), 3, 0, 0);
    range(1, T(20), 4, 0, R_BACK);
    ALLOC(.ts = T(21), .addr = 0x6000000, .bytes = 3 * MiB, .range = 4);
    FREE(.ts = T(22), .addr = 0x5000000, .bytes = 8 * MiB, .range = 4);
    FREE(.ts = T(24), .addr = 0x6000000, .bytes = 3 * MiB, .range = 4);
    range(0, T(25), 4, 0, 0);
    range(1, T(26), 5, 0, R_BACK);
    ALLOC(.ts = T(27), .addr = 0x7000000, .bytes = 5 * MiB, .range = 5);
    FREE(.ts = T(28), .addr = 0x2000000, .bytes = 4 * MiB, .range = 5);
    FREE(.ts = T(30), .addr = 0x7000000, .bytes = 5 * MiB, .range = 5);
    range(0, T(31), 5, 0, 0);
    return close_trace(T(32));
}

static void check_layers(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/insights_layers.gmt", dir);
    REQUIRE(write_layers(path) == 0, "writing %s", path);
    tc_context("recompute");
    static gma_replay r;
    replay_insights(&r, path);
    gma_ins_result res;
    REQUIRE(gma_insights_build(&res, &r) == 0);
    REQUIRE(res.ndev == 1);
    const gma_ins_dev *D = &res.dev[0];
    CHECK_EQ_U64(D->peak, 25 * MiB);
    CHECK_EQ_U64(D->ts, T(21));
    CHECK_EQ_U64(D->cls[GMA_IC_PERSISTENT].bytes, 10 * MiB);
    CHECK_EQ_U64(D->cls[GMA_IC_STEP].bytes, 12 * MiB);
    CHECK_EQ_U64(D->cls[GMA_IC_TEMP].bytes, 3 * MiB);
    CHECK(D->has_base);
    CHECK_EQ_U64(D->whatif_base, 25 * MiB);
    CHECK(D->has_recompute);
    CHECK_STR(gma_ins_str(&res, D->rc_layer), "block");
    CHECK_EQ_U64(D->rc_ordinal, 1);
    CHECK_EQ_U64(D->rc_peak, 21 * MiB);
    CHECK_EQ_U64(D->rc_count, 1);
    CHECK_EQ_U64(D->rc_bytes, 4 * MiB);
    CHECK_EQ_U64(D->rc_at_peak, 4 * MiB);
    CHECK_EQ_U64(D->rc_steps, 1);
    CHECK_EQ_U64(D->rc_begin, T(1));
    CHECK_EQ_U64(D->rc_end, T(6));
    CHECK_EQ_U64(D->rc_back, T(26));
    CHECK(D->has_whatif);
    CHECK_STR(gma_ins_str(&res, D->whatif_owner), "block");
    CHECK_EQ_U64(D->whatif_peak, 24 * MiB);
    CHECK_EQ_U64(D->whatif_count, 3);
    CHECK_EQ_U64(D->whatif_moved_at_peak, 12 * MiB);
    gma_table t;
    REQUIRE(gma_insights_table(&t, &res, NULL, 0) == 0);
    size_t rows = 0;
    for (size_t i = 0; i < t.nrows; i++)
        if (strcmp(gma_cell_text(&t, gma_table_cell(&t, i, 1)), "what-if recompute") == 0) {
            rows++;
            CHECK_STR(gma_cell_text(&t, gma_table_cell(&t, i, 2)), "block #1");
            CHECK_EQ_U64(gma_table_cell(&t, i, 3)->v.u, 21 * MiB);
            CHECK_EQ_U64((uint64_t)-gma_table_cell(&t, i, 6)->v.i, 4 * MiB);
            CHECK_HAS(gma_cell_text(&t, gma_table_cell(&t, i, 7)),
                      "live only during that forward (11.000-16.000 ms in the peak's step) and again from its "
                      "backward's begin (36.000 ms");
            CHECK_HAS(gma_cell_text(&t, gma_table_cell(&t, i, 8)), "checkpoint this layer");
        }
    CHECK_EQ_U64(rows, 1);
    gma_table_free(&t);
    gma_insights_result_free(&res);
    gma_replay_free(&r);
    /* the default report of the same trace: no hint crosses its threshold */
    static gma_replay r2;
    static gma_report rep;
    gma_opts o = test_opts();
    char msg[600];
    REQUIRE(gma_replay_file(&r2, &o, path, msg, sizeof(msg)) == 0, "%s", msg);
    REQUIRE(gma_report_build(&rep, &r2) == 0);
    CHECK_EQ_U64(rep.hints.n, 0);
    CHECK_EQ_U64(rep.hints.dev[0].step, 12 * MiB);
    CHECK_EQ_U64(rep.hints.dev[0].temp, 3 * MiB);
    gma_report_free(&rep);
    gma_replay_free(&r2);
}

/* ---- the default report's hints (hints.h) ---------------------------------------- */

/* Replays path the default way (no consumer: the plain replay) and builds
 * the report; its table output goes to out (cap bytes). */
static void report_of(const char *path, gma_replay *r, gma_report *rep, char *out, size_t cap)
{
    gma_opts o = test_opts();
    char msg[600];
    REQUIRE(gma_replay_file(r, &o, path, msg, sizeof(msg)) == 0, "%s", msg);
    REQUIRE(gma_report_build(rep, r) == 0);
    FILE *f = tmpfile();
    REQUIRE(f != NULL);
    REQUIRE(gma_print_table(f, rep) == 0);
    size_t n = (size_t)ftell(f);
    rewind(f);
    n = fread(out, 1, n < cap - 1 ? n : cap - 1, f);
    out[n] = 0;
    fclose(f);
}

static const gma_hint *hint_of(const gma_hints *h, gma_hint_kind k)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->hint[i].kind == k)
            return &h->hint[i];
    return NULL;
}

/* insights.gmt by the default report: the classes of check_result (16, 40,
 * 1, 4 MiB). Step-scoped 40 of 61 MiB = 65.6% >= 50%: shown, first owner
 * aten::softmax 32 MiB. Temporary 1 MiB = 1.6% < 20%: not shown. Growth:
 * live at the end of steps 0-3 22, 24, 26, 28 MiB (the last memory event of
 * each), +6 MiB = 9.8% of the 61 MiB peak >= 5%, 2 MiB per step, higher in 3
 * of 3 steps: shown. */
static void check_hints_main(const char *path)
{
    tc_context("hints: insights.gmt");
    static gma_replay r;
    static gma_report rep;
    static char out[1 << 16];
    report_of(path, &r, &rep, out, sizeof(out));
    const gma_hints *h = &rep.hints;
    REQUIRE(h->ndev == 1);
    CHECK_EQ_U64(h->dev[0].peak, 61 * MiB);
    CHECK_EQ_U64(h->dev[0].persistent, 16 * MiB);
    CHECK_EQ_U64(h->dev[0].step, 40 * MiB);
    CHECK_EQ_U64(h->dev[0].temp, 1 * MiB);
    CHECK(h->dev[0].outside_known && !h->dev[0].reserved_known);
    CHECK_EQ_U64(h->dev[0].outside, 4 * MiB);
    CHECK_EQ_U64(h->n, 2);
    const gma_hint *x = hint_of(h, GMA_HINT_STEP);
    CHECK(x != NULL);
    if (x) {
        CHECK_EQ_U64(x->bytes, 40 * MiB);
        CHECK_EQ_U64(x->whole, 61 * MiB);
        CHECK_STR(x->owner, "aten::softmax");
        CHECK_EQ_U64(x->owner_bytes, 32 * MiB);
    }
    CHECK(hint_of(h, GMA_HINT_TEMP) == NULL);
    x = hint_of(h, GMA_HINT_GROWTH);
    CHECK(x != NULL);
    if (x) {
        CHECK_EQ_U64(x->step_first, 0);
        CHECK_EQ_U64(x->step_last, 3);
        CHECK_EQ_U64(x->first, 22 * MiB);
        CHECK_EQ_U64(x->last, 28 * MiB);
        CHECK_EQ_U64(x->bytes, 6 * MiB);
        CHECK_EQ_U64((uint64_t)x->slope, 2 * MiB);
        CHECK_EQ_U64(x->grew, 3);
    }
    CHECK_HAS(out, "\nHints (gmem-analyze --insights for the whole picture)\n"
                   "  dev0 step-scoped 40.00 MiB, 65.6% of the peak: made and freed in the peak's step, live across "
                   "ops: activations kept for backward; first owner aten::softmax, 32.00 MiB\n");
    CHECK_HAS(out, "  dev0 growth 6.00 MiB, 9.8% of the peak: live at the end of steps 0-3: 22.00 MiB to 28.00 MiB, "
                   "+2.00 MiB per step");
    gma_report_free(&rep);
    gma_replay_free(&r);
}

/*
 * One implicit window, no steps (all step 0), op ranges on one thread:
 *   op 1: ALLOC W (never freed)             W        persistent
 *   op 2: ALLOC T, ALLOC S                  W+T+S    the peak
 *         FREE T (op 2: a temporary)
 *   op 3: FREE S (step-scoped: made in op 2, freed in op 3)
 * Temporaries are shown from 20% of the peak, step-scoped from 50%; each
 * case sits on one side of a threshold, by a byte.
 */
static int write_classes(const char *path, uint64_t w, uint64_t t, uint64_t sb)
{
    gmt_writer_opts o = { 3, 1u << 20 };
    St = GMT_OK;
    if (!(W = gmt_writer_open(path, &o)))
        return -1;
    rec_header();
    str(R_LINEAR, "aten::linear");
    str(R_ADD, "aten::add");
    str(R_SOFTMAX, "aten::softmax");
    range(1, T(1), 1, 0, R_LINEAR);
    ALLOC(.ts = T(2), .addr = 0x1000000, .bytes = w, .range = 1);
    range(0, T(3), 1, 0, 0);
    range(1, T(4), 2, 0, R_ADD);
    ALLOC(.ts = T(5), .addr = 0x2000000, .bytes = t, .range = 2);
    if (sb)
        ALLOC(.ts = T(6), .addr = 0x3000000, .bytes = sb, .range = 2);
    FREE(.ts = T(7), .addr = 0x2000000, .bytes = t, .range = 2);
    range(0, T(8), 2, 0, 0);
    range(1, T(9), 3, 0, R_SOFTMAX);
    if (sb)
        FREE(.ts = T(10), .addr = 0x3000000, .bytes = sb, .range = 3);
    range(0, T(11), 3, 0, 0);
    return close_trace(T(12));
}

static void check_hints_case(const char *dir, const char *name, uint64_t w, uint64_t t, uint64_t sb, int temp_shown,
                             int step_shown)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/hints_%s.gmt", dir, name);
    REQUIRE(write_classes(path, w, t, sb) == 0, "writing %s", path);
    tc_context("hints: %s", name);
    static gma_replay r;
    static gma_report rep;
    static char out[1 << 16];
    report_of(path, &r, &rep, out, sizeof(out));
    const gma_hints *h = &rep.hints;
    REQUIRE(h->ndev == 1);
    CHECK_EQ_U64(h->dev[0].peak, w + t + sb);
    CHECK_EQ_U64(h->dev[0].persistent, w);
    CHECK_EQ_U64(h->dev[0].temp, t);
    CHECK_EQ_U64(h->dev[0].step, sb);
    CHECK_EQ_U64(h->n, (uint64_t)(temp_shown + step_shown));
    const gma_hint *x = hint_of(h, GMA_HINT_TEMP);
    CHECK((x != NULL) == temp_shown);
    if (x) {
        CHECK_EQ_U64(x->bytes, t);
        CHECK_STR(x->owner, "aten::add");
    }
    x = hint_of(h, GMA_HINT_STEP);
    CHECK((x != NULL) == step_shown);
    if (x) {
        CHECK_EQ_U64(x->bytes, sb);
        CHECK_STR(x->owner, "aten::add");
    }
    CHECK((strstr(out, "\nHints (") != NULL) == (temp_shown || step_shown), "the section %s", out);
    gma_report_free(&rep);
    gma_replay_free(&r);
}

/* The bridge trace (write_bridge): reserved 32, allocated 24 MiB at the peak:
 * 8 MiB reserved but unallocated, 25% of the reserve >= 20%: shown; the
 * classes all persistent (24 MiB), outside 8 MiB. */
static void check_hints_bridge(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/insights_bridge.gmt", dir);
    tc_context("hints: bridge");
    static gma_replay r;
    static gma_report rep;
    static char out[1 << 16];
    report_of(path, &r, &rep, out, sizeof(out));
    const gma_hints *h = &rep.hints;
    REQUIRE(h->ndev == 1);
    CHECK_EQ_U64(h->dev[0].persistent, 24 * MiB);
    CHECK_EQ_U64(h->dev[0].outside, 8 * MiB);
    CHECK_EQ_U64(h->dev[0].reserved, 8 * MiB);
    CHECK_EQ_U64(h->dev[0].reserve, 32 * MiB);
    CHECK_EQ_U64(h->n, 1);
    CHECK(hint_of(h, GMA_HINT_RESERVED) != NULL);
    CHECK_HAS(out, "  dev0 reserved, unallocated 8.00 MiB, 25.0% of the reserve: ");
    gma_report_free(&rep);
    gma_replay_free(&r);
}

/*
 * Growth: steps 0-4 (STEP records, one implicit window), no ranges. W 100 MiB
 * at step 0 (never freed); each step allocates T 10 MiB and frees it (a
 * temporary, by the kernel-gap rule: same thread, no launch between), then
 * leaks L. Live at the end of step s: 100 + (s + 1) L. The peak is T's
 * allocation in step 4: 100 + 4 L + 10. Complete steps 0-3: growth 3 L,
 * slope L per step, higher in 3 of 3 steps.
 *   L = 2 MiB:   6 of 118 MiB = 5.08% >= 5%: shown.
 *   L = 1.9 MiB: 5.7 of 117.6 MiB = 4.85%: not shown.
 * Temporary 10 of 118 MiB = 8.5% < 20%: no other hint.
 */
static int write_growth(const char *path, uint64_t leak)
{
    gmt_writer_opts o = { 3, 1u << 20 };
    St = GMT_OK;
    if (!(W = gmt_writer_open(path, &o)))
        return -1;
    rec_header();
    for (uint64_t s = 0; s < 5; s++) {
        step(T(10 * s), s);
        if (!s)
            ALLOC(.ts = T(1), .addr = 0x1000000, .bytes = 100 * MiB, .step = 0);
        ALLOC(.ts = T(10 * s + 2), .addr = 0x2000000, .bytes = 10 * MiB, .step = s);
        FREE(.ts = T(10 * s + 3), .addr = 0x2000000, .bytes = 10 * MiB, .step = s);
        ALLOC(.ts = T(10 * s + 4), .addr = 0x10000000 + s * 0x1000000, .bytes = leak, .step = s);
    }
    return close_trace(T(50));
}

static void check_hints_growth(const char *dir, const char *name, uint64_t leak, int shown)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/hints_%s.gmt", dir, name);
    REQUIRE(write_growth(path, leak) == 0, "writing %s", path);
    tc_context("hints: %s", name);
    static gma_replay r;
    static gma_report rep;
    static char out[1 << 16];
    report_of(path, &r, &rep, out, sizeof(out));
    const gma_hints *h = &rep.hints;
    REQUIRE(h->ndev == 1);
    CHECK_EQ_U64(h->dev[0].peak, 110 * MiB + 4 * leak);
    CHECK_EQ_U64(h->dev[0].temp, 10 * MiB);
    CHECK_EQ_U64(h->n, (uint64_t)shown);
    const gma_hint *x = hint_of(h, GMA_HINT_GROWTH);
    CHECK((x != NULL) == shown);
    if (x) {
        CHECK_EQ_U64(x->step_first, 0);
        CHECK_EQ_U64(x->step_last, 3);
        CHECK_EQ_U64(x->first, 100 * MiB + leak);
        CHECK_EQ_U64(x->last, 100 * MiB + 4 * leak);
        CHECK_EQ_U64((uint64_t)x->slope, leak);
        CHECK_EQ_U64(x->grew, 3);
        CHECK_HAS(out, "  dev0 growth 6.00 MiB, 5.1% of the peak: live at the end of steps 0-3: 102.00 MiB to "
                       "108.00 MiB, +2.00 MiB per step (least squares), higher in 3 of 3 steps: a leak suspect\n");
    }
    CHECK((strstr(out, "\nHints (") != NULL) == shown);
    gma_report_free(&rep);
    gma_replay_free(&r);
}

static void check_hints(const char *dir, const char *main_trace)
{
    check_hints_growth(dir, "growth_at", 2 * MiB, 1);
    check_hints_growth(dir, "growth_under", 19 * MiB / 10, 0);
    check_hints_main(main_trace);
    check_hints_bridge(dir);
    /* 2 of 10 MiB: 20.0%, shown; one byte less: (2 MiB - 1) / (10 MiB - 1) < 20% */
    check_hints_case(dir, "temp_at", 8 * MiB, 2 * MiB, 0, 1, 0);
    check_hints_case(dir, "temp_under", 8 * MiB, 2 * MiB - 1, 0, 0, 0);
    /* S 5 of 10 MiB: 50.0%, shown; T 1 of 10 MiB: 10%, not; then S one byte less */
    check_hints_case(dir, "step_at", 4 * MiB, 1 * MiB, 5 * MiB, 0, 1);
    check_hints_case(dir, "step_under", 4 * MiB, 1 * MiB, 5 * MiB - 1, 0, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_insights DIR\n");
        return 2;
    }
    char path[4200];
    snprintf(path, sizeof(path), "%s/insights.gmt", argv[1]);
    REQUIRE(write_trace(path) == 0, "writing %s", path);

    static gma_replay r;
    replay_insights(&r, path);
    CHECK_EQ_U64(r.dev[0].peak, 61 * MiB); /* the replay's own peak, as above */
    gma_ins_result res;
    REQUIRE(gma_insights_build(&res, &r) == 0);
    check_result(&res);
    check_table(&res);
    gma_insights_result_free(&res);
    gma_replay_free(&r);
    check_bridge(argv[1]);
    check_streams(argv[1]);
    check_hints(argv[1], path);
    check_layers(argv[1]);
    return tc_result("analyzer.insights");
}
