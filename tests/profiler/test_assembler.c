/*
 * The assembler without a thread: synthetic CUPTI records, ring events and
 * schedule epochs in, the records it emits caught by a fake io table and
 * checked one by one. Every expected value is worked out by hand in the
 * comments next to it.
 */
#include <stdlib.h>
#include <string.h>

#include "assembler.h"
#include "fake_asm_io.h"
#include "families.h"
#include "frames.h"
#include "schedule.h"
#include "../check.h"
#include "torch_bridge.h"

/* ---- a fake io: the records in an array -------------------------------------- */

#define OUT_MAX 256
static gmt_record out[OUT_MAX];
static size_t nout;
static unsigned frames_ended;
static char strings[16][64];
static unsigned nstrings;
/* Where each string's STRING record would be written, as the writer does
 * it: at its first intern, or for a held one (intern_held) before the first
 * RANGE_BEGIN or OOM that names it: the index in out of the record it
 * precedes; -1 while held back. */
static int string_at[16];

static uint64_t nput_alloc;     /* every ALLOC put, beyond OUT_MAX too */
static uint64_t nput_range_end; /* every RANGE_END put */
static int window_end_at_alloc; /* ALLOCs put before the WINDOW_END (-1: none) */

static void io_put(void *ctx, const gmt_record *r)
{
    (void)ctx;
    uint64_t named = r->type == GMT_REC_RANGE_BEGIN ? r->u.range.name : r->type == GMT_REC_OOM ? r->u.oom.op : 0;
    if (named >= 1 && named <= nstrings && string_at[named - 1] < 0)
        string_at[named - 1] = (int)nout;
    if (r->type == GMT_REC_ALLOC)
        nput_alloc++;
    if (r->type == GMT_REC_RANGE_END)
        nput_range_end++;
    if (r->type == GMT_REC_WINDOW_END && window_end_at_alloc < 0)
        window_end_at_alloc = (int)nput_alloc;
    if (nout < OUT_MAX)
        out[nout++] = *r;
}

static uint64_t fake_intern(const char *s, size_t n, int held)
{
    for (unsigned i = 0; i < nstrings; i++) {
        if (strlen(strings[i]) != n || memcmp(strings[i], s, n) != 0)
            continue;
        if (!held && string_at[i] < 0)
            string_at[i] = (int)nout;
        return i + 1;
    }
    if (nstrings == 16 || n >= 64)
        return 0;
    memcpy(strings[nstrings], s, n);
    strings[nstrings][n] = '\0';
    string_at[nstrings] = held ? -1 : (int)nout;
    return ++nstrings;
}

static uint64_t io_intern(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    return fake_intern(s, n, 0);
}

static uint64_t io_intern_held(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    return fake_intern(s, n, 1);
}

static void io_end_frame(void *ctx)
{
    (void)ctx;
    frames_ended++;
}

/* A STATS marker: the writer fills the real one. */
static void io_stats(void *ctx)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_STATS;
    io_put(ctx, &r);
}

static gmt_oom g_fail;
static int n_fail;

static void io_failure(void *ctx, gmt_oom *o)
{
    (void)ctx;
    g_fail = *o;
    n_fail++;
}

/* Where the fake io puts its output; fresh_asm sets it up: devices of 1000
 * bytes, the trace clock at 99999. */
static const fake_asm_sink sink = {io_put, io_intern, io_end_frame, io_stats, io_failure};
static fake_asm_io fake_io;

/* The flight recorder's side of a trace with windows (gmp_asm_set_aside): the
 * records the gate keeps out, in their own array. */
static gmt_record aside_out[OUT_MAX];
static size_t naside;

static void io_put_aside(void *ctx, const gmt_record *r)
{
    (void)ctx;
    if (naside < OUT_MAX)
        aside_out[naside++] = *r;
}

static void reset_out(void)
{
    nout = 0;
    nput_alloc = 0;
    window_end_at_alloc = -1;
    frames_ended = 0;
    nstrings = 0;
}

/* ---- inputs ------------------------------------------------------------------- */

static gmp_epoch_info hist[GMP_EPOCH_HIST];

static void epoch(uint32_t e, unsigned ev, uint64_t ts, uint64_t step, uint64_t window, unsigned phase,
                  int in_window)
{
    gmp_epoch_info *i = &hist[e % GMP_EPOCH_HIST];
    memset(i, 0, sizeof *i);
    i->epoch = e;
    i->ev = ev;
    i->ts = ts;
    i->step = step;
    i->window = window;
    i->phase = (uint8_t)phase;
    i->in_window = (uint8_t)in_window;
}

/* The schedule most tests use: epoch 0 waits; epoch 1, step 1, opens
 * window 1 (index 0); epoch 2, step 2, closes it. */
static void one_window(void)
{
    epoch(0, 0, 100, 0, 0, GMT_PHASE_WAIT, 0);
    epoch(1, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 1000, 1, 1, GMT_PHASE_ACTIVE, 1);
    epoch(2, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_END, 2000, 2, 1, GMT_PHASE_DONE, 0);
}

/* A MEMORY2 record (an allocation when alloc, else a release). */
static CUpti_ActivityMemory4 mem_rec(int alloc, uint32_t corr, uint64_t addr, uint64_t bytes, uint64_t ts)
{
    CUpti_ActivityMemory4 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    r.memoryOperationType = alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                  : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    r.correlationId = corr;
    r.address = addr;
    r.bytes = bytes;
    r.timestamp = ts;
    r.streamId = CUPTI_INVALID_STREAM_ID;
    r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
    return r;
}

static void stage(gmp_asm *a, CUpti_ActivityMemory4 r) { gmp_asm_stage(a, (const CUpti_Activity *)&r); }

/* The next event slot, filled; gmp_asm_event_added hands it over. */
static gmp_ev *ev_fill(gmp_asm *a, uint16_t type, uint32_t epoch_, uint64_t ts, uint64_t x, uint64_t y,
                       const char *name)
{
    gmp_ev *e = gmp_asm_event_slot(a);
    REQUIRE(e != NULL, "the event batch is full");
    memset(e, 0, sizeof *e);
    e->type = type;
    e->tid = 7;
    e->epoch = epoch_;
    e->ts = ts;
    e->a = x;
    e->b = y;
    if (name)
        gmp_ev_set_name(e, name, strlen(name));
    return e;
}

static void event(gmp_asm *a, uint16_t type, uint32_t epoch_, uint64_t ts, uint64_t x, uint64_t y,
                  const char *name)
{
    ev_fill(a, type, epoch_, ts, x, y, name);
    gmp_asm_event_added(a, 1);
}

/* A RANGE_BEGIN of kind `kind` (gmt_range_kind, the ring event's c). */
static void range_kind(gmp_asm *a, uint32_t epoch_, uint64_t ts, uint64_t id, const char *name, uint64_t kind)
{
    ev_fill(a, GMP_EV_RANGE_BEGIN, epoch_, ts, id, 0, name)->c = kind;
    gmp_asm_event_added(a, 1);
}

static gmp_corrtab corr;

/* An assembler on the fake io with the given host budget, its outputs
 * forgotten. */
static gmp_asm *fresh_asm(size_t budget)
{
    reset_out();
    fake_asm_io_init(&fake_io, &sink, 1000, 99999);
    gmp_asm *a = gmp_asm_create(&fake_io.io, &corr, budget);
    REQUIRE(a != NULL, "create");
    gmp_asm_set_intern_held(a, io_intern_held);
    return a;
}

/* Record i of recs (n of them, `what` in messages), checked to be of type. */
static const gmt_record *nth_of(const gmt_record *recs, size_t n, const char *what, size_t i, gmt_type type)
{
    static gmt_record none;
    tc_context("%s record %zu", what, i);
    CHECK(i < n, "only %zu %s records", n, what);
    if (i >= n)
        return &none;
    CHECK_EQ_U64(recs[i].type, type);
    return &recs[i];
}

static const gmt_record *rec_at(size_t i, gmt_type type) { return nth_of(out, nout, "written", i, type); }

/* ---- one window: join, order, gate, baseline ---------------------------------- */

static void test_window(void)
{
    gmp_asm *a = fresh_asm(64u << 20);

    one_window();
    /* the API calls: thread 7 before and inside the window, thread 8 after */
    gmp_corr_put(&corr, 10, 7, 0, 0, 0, GMP_FAM_MALLOC);
    gmp_corr_put(&corr, 11, 7, 1, 3, 5, GMP_FAM_MALLOC);
    gmp_corr_put(&corr, 12, 8, 2, 0, 0, GMP_FAM_MALLOC);

    gmp_asm_round_begin(a, 10000); /* every record below is older than the horizon */
    event(a, GMP_EV_RANGE_BEGIN, 1, 1200, 5, 0, "fwd");
    event(a, GMP_EV_RANGE_END, 1, 1550, 5, 0, NULL);
    gmp_asm_events_done(a, 2);
    REQUIRE(gmp_asm_wants_epochs(a, 2));
    gmp_asm_take_epochs(a, hist, 2);
    CHECK(!gmp_asm_wants_epochs(a, 2));
    /* out of time order on purpose: the assembler sorts by (epoch, time) */
    stage(a, mem_rec(1, 12, 0x3000, 1024, 2500));
    stage(a, mem_rec(0, 13, 0x1000, 0, 1600)); /* corr 13: no API call (unmatched) */
    stage(a, mem_rec(1, 11, 0x2000, 512, 1500));
    stage(a, mem_rec(1, 10, 0x1000, 256, 500));
    /* epoch 3 is not published yet: its record waits */
    gmp_corr_put(&corr, 14, 7, 3, 4, 0, GMP_FAM_MALLOC);
    stage(a, mem_rec(1, 14, 0x4000, 2048, 3500));
    gmp_asm_drain(a, 0);

    /* Expected, in order:
     *  0 STEP 0 (epoch 0 applied first)        the 0x1000 ALLOC: epoch 0, not in a window: live only
     *  1 WINDOW_BEGIN ts 1000 window 0 step 1, baseline 1 allocation of 256 bytes
     *  2 ALLOC 0x1000 baseline (step 0, thread 7, source MALLOC)
     *  3 STEP 1 ACTIVE
     *  4 RANGE_BEGIN 5 "fwd" at 1200 (before the 1500 ALLOC of its epoch)
     *  5 ALLOC 0x2000 512 step 1, thread 7, seq 3, range 5
     *  6 RANGE_END 5 at 1550
     *  7 FREE 0x1000: no API call, so the epoch of its time (1600: epoch 1), step 1,
     *    no thread, bytes and source from the live table (256, MALLOC)
     *  8 WINDOW_END ts 2000 window 0 step 1 reason SCHEDULE, 9 STATS (and a frame end)
     * 10 STEP 2                                 the 0x3000 ALLOC: epoch 2, out of window
     */
    const gmt_record *r = rec_at(0, GMT_REC_STEP);
    CHECK_EQ_U64(r->u.step.step, 0);
    r = rec_at(1, GMT_REC_WINDOW_BEGIN);
    CHECK_EQ_U64(r->u.wbegin.ts, 1000);
    CHECK_EQ_U64(r->u.wbegin.window, 0);
    CHECK_EQ_U64(r->u.wbegin.step, 1);
    CHECK_EQ_U64(r->u.wbegin.baseline_count, 1);
    CHECK_EQ_U64(r->u.wbegin.baseline_bytes, 256);
    r = rec_at(2, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x1000);
    CHECK_EQ_U64(r->u.mem.flags, GMT_MEMF_BASELINE);
    CHECK_EQ_U64(r->u.mem.tid, 7);
    CHECK_EQ_U64(r->u.mem.step, 0);
    CHECK_EQ_U64(r->u.mem.source, GMT_SRC_MALLOC);
    CHECK_EQ_U64(r->u.mem.kind, GMT_MEMKIND_DEVICE);
    r = rec_at(3, GMT_REC_STEP);
    CHECK_EQ_U64(r->u.step.step, 1);
    CHECK_EQ_U64(r->u.step.phase, GMT_PHASE_ACTIVE);
    r = rec_at(4, GMT_REC_RANGE_BEGIN);
    CHECK_EQ_U64(r->u.range.id, 5);
    CHECK_EQ_U64(r->u.range.ts, 1200);
    CHECK_EQ_U64(r->u.range.name, 1);
    CHECK_STR(strings[0], "fwd");
    r = rec_at(5, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x2000);
    CHECK_EQ_U64(r->u.mem.bytes, 512);
    CHECK_EQ_U64(r->u.mem.step, 1);
    CHECK_EQ_U64(r->u.mem.tid, 7);
    CHECK_EQ_U64(r->u.mem.seq, 3);
    CHECK_EQ_U64(r->u.mem.range, 5);
    CHECK_EQ_U64(r->u.mem.corr, 11);
    CHECK_EQ_U64(r->u.mem.flags, 0);
    r = rec_at(6, GMT_REC_RANGE_END);
    CHECK_EQ_U64(r->u.range.id, 5);
    r = rec_at(7, GMT_REC_FREE);
    CHECK_EQ_U64(r->u.mem.address, 0x1000);
    CHECK_EQ_U64(r->u.mem.bytes, 256);
    CHECK_EQ_U64(r->u.mem.step, 1);
    CHECK_EQ_U64(r->u.mem.tid, 0);
    CHECK_EQ_U64(r->u.mem.flags, GMT_MEMF_NO_THREAD);
    CHECK_EQ_U64(r->u.mem.source, GMT_SRC_MALLOC);
    r = rec_at(8, GMT_REC_WINDOW_END);
    CHECK_EQ_U64(r->u.wend.ts, 2000);
    CHECK_EQ_U64(r->u.wend.window, 0);
    CHECK_EQ_U64(r->u.wend.step, 1);
    CHECK_EQ_U64(r->u.wend.reason, GMT_WEND_SCHEDULE);
    rec_at(9, GMT_REC_STATS);
    r = rec_at(10, GMT_REC_STEP);
    CHECK_EQ_U64(r->u.step.step, 2);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 11);
    CHECK_EQ_U64(frames_ended, 2); /* one at the window's begin, one at its end */
    CHECK(!gmp_asm_epochs_pending(a));

    /* Round 2: epoch 3 (step 3) opens window 2; the record that waited goes out.
     * Baseline: 0x2000 (512, ts 1500) and 0x3000 (1024, ts 2500) are live
     * (0x1000 was freed): 2 allocations, 1536 bytes, in time order. */
    nout = 0;
    epoch(3, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 3000, 3, 2, GMT_PHASE_ACTIVE, 1);
    gmp_asm_round_begin(a, 10000);
    gmp_asm_events_done(a, 3);
    gmp_asm_take_epochs(a, hist, 3);
    gmp_asm_drain(a, 0);
    r = rec_at(0, GMT_REC_WINDOW_BEGIN);
    CHECK_EQ_U64(r->u.wbegin.window, 1);
    CHECK_EQ_U64(r->u.wbegin.baseline_count, 2);
    CHECK_EQ_U64(r->u.wbegin.baseline_bytes, 1536);
    r = rec_at(1, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x2000);
    r = rec_at(2, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x3000);
    CHECK_EQ_U64(r->u.mem.tid, 8);
    CHECK_EQ_U64(r->u.mem.step, 2);
    rec_at(3, GMT_REC_STEP);
    r = rec_at(4, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x4000);
    CHECK_EQ_U64(r->u.mem.step, 3);
    CHECK_EQ_U64(r->u.mem.seq, 4);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 5);

    /* The end inside the window: WINDOW_END at the io's clock, reason EXIT. */
    nout = 0;
    gmp_asm_finish(a, GMT_WEND_EXIT);
    r = rec_at(0, GMT_REC_WINDOW_END);
    CHECK_EQ_U64(r->u.wend.ts, 99999);
    CHECK_EQ_U64(r->u.wend.window, 1);
    CHECK_EQ_U64(r->u.wend.step, 3);
    CHECK_EQ_U64(r->u.wend.reason, GMT_WEND_EXIT);
    rec_at(1, GMT_REC_STATS);
    tc_context(NULL);

    gmp_asm_counts c;
    gmp_asm_get_counts(a, &c);
    CHECK_EQ_U64(c.windows, 2);
    CHECK_EQ_U64(c.unmatched, 1); /* corr 13 */
    CHECK_EQ_U64(c.late, 0);
    CHECK_EQ_U64(c.outside, 2); /* the ALLOCs 0x1000 (epoch 0) and 0x3000 (epoch 2) */
    gmp_asm_destroy(a);
}

/* ---- records that reach the writer after their window closed ---------------------- */

/* One rule for every kind: a record whose step was in a window is written,
 * with its step, also after that window's WINDOW_END; a record of a step
 * outside every window is counted, not written. Round 1 opens and closes
 * window 0 (steps 1 and 2); round 2 brings step 1's ALLOC, FREE, KERNEL,
 * MEMCPY and MARK late, and an ALLOC of step 2. */
static void test_late(void)
{
    gmp_asm *a = fresh_asm(64u << 20);
    one_window();
    gmp_asm_round_begin(a, 10000);
    gmp_asm_events_done(a, 2);
    gmp_asm_take_epochs(a, hist, 2);
    gmp_asm_drain(a, 0);
    /* STEP 0, WINDOW_BEGIN, STEP 1, WINDOW_END, STATS, STEP 2 */
    rec_at(3, GMT_REC_WINDOW_END);
    rec_at(5, GMT_REC_STEP);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 6);

    nout = 0;
    for (uint32_t c = 30; c <= 33; c++)
        gmp_corr_put(&corr, c, 7, 1, 0, c, GMP_FAM_MALLOC); /* step 1's calls */
    gmp_corr_put(&corr, 34, 7, 2, 0, 34, GMP_FAM_MALLOC);   /* step 2's */
    gmp_asm_round_begin(a, 20000);
    event(a, GMP_EV_MARK, 1, 1700, 0, 0, "late");
    gmp_asm_events_done(a, 2);
    stage(a, mem_rec(1, 30, 0x5000, 64, 1500));
    stage(a, mem_rec(0, 31, 0x5000, 64, 1600));
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.correlationId = 32;
    k.start = 1800;
    k.end = 2600; /* completes on the GPU after the step call */
    k.name = "k";
    gmp_asm_stage(a, (const CUpti_Activity *)&k);
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.correlationId = 33;
    m.start = 1900;
    m.end = 2100;
    m.bytes = 4096;
    gmp_asm_stage(a, (const CUpti_Activity *)&m);
    stage(a, mem_rec(1, 34, 0x6000, 64, 2500));
    gmp_asm_drain(a, 0);
    /* Step 1's records in (epoch, time) order, each with step 1: ALLOC 1500,
     * FREE 1600, MARK 1700, KERNEL 1800, MEMCPY 1900; step 2's ALLOC is
     * outside every window: not written. */
    const gmt_record *r = rec_at(0, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.step, 1);
    r = rec_at(1, GMT_REC_FREE);
    CHECK_EQ_U64(r->u.mem.step, 1);
    CHECK_EQ_U64(r->u.mem.bytes, 64);
    rec_at(2, GMT_REC_MARK);
    r = rec_at(3, GMT_REC_KERNEL);
    CHECK_EQ_U64(r->u.kernel.step, 1);
    r = rec_at(4, GMT_REC_MEMCPY);
    CHECK_EQ_U64(r->u.copy.step, 1);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 5);
    gmp_asm_counts c;
    gmp_asm_get_counts(a, &c);
    CHECK_EQ_U64(c.late, 5);
    CHECK_EQ_U64(c.outside, 1);
    CHECK_EQ_U64(c.bad_records, 0);
    gmp_asm_destroy(a);
}

/* ---- the flight recorder beside windows: what the gate keeps out goes aside ------- */

static CUpti_ActivityKernel10 kernel_rec(uint32_t corr_, uint64_t start, const char *name)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.correlationId = corr_;
    k.start = start;
    k.end = start + 50;
    k.name = name;
    return k;
}

static const gmt_record *aside_at(size_t i, gmt_type type) { return nth_of(aside_out, naside, "aside", i, type); }

/* Step 0 waits, step 1 is window 0, step 2 is after it. Step 0 makes an
 * ALLOC (0x1000, 256 B, ts 200), a MARK (ts 300) and a KERNEL (ts 400);
 * step 1 an ALLOC (0x2000, ts 1500); step 2 the FREE of 0x1000 (ts 2500)
 * and a KERNEL (ts 2600). The trace is what it is with nothing aside;
 * the records of steps 0 and 2 go aside, in order, with their steps; the
 * kernels only when asked. `outside` counts the ALLOC, FREE and KERNELs of
 * steps 0 and 2 (4; a MARK is not counted) either way. */
static void aside_case(int kernels)
{
    naside = 0;
    gmp_asm *a = fresh_asm(64u << 20);
    gmp_asm_set_aside(a, io_put_aside, kernels);
    one_window();
    gmp_corr_put(&corr, 40, 7, 0, 0, 0, GMP_FAM_MALLOC);
    gmp_corr_put(&corr, 41, 7, 0, 1, 0, GMP_FAM_LAUNCH);
    gmp_corr_put(&corr, 42, 7, 1, 0, 0, GMP_FAM_MALLOC);
    gmp_corr_put(&corr, 43, 7, 2, 0, 0, GMP_FAM_FREE);
    gmp_corr_put(&corr, 44, 7, 2, 2, 0, GMP_FAM_LAUNCH);
    gmp_asm_round_begin(a, 10000);
    event(a, GMP_EV_MARK, 0, 300, 0, 0, "m0");
    gmp_asm_events_done(a, 2);
    gmp_asm_take_epochs(a, hist, 2);
    stage(a, mem_rec(1, 40, 0x1000, 256, 200));
    CUpti_ActivityKernel10 k0 = kernel_rec(41, 400, "k0"), k2 = kernel_rec(44, 2600, "k2");
    gmp_asm_stage(a, (const CUpti_Activity *)&k0);
    stage(a, mem_rec(1, 42, 0x2000, 512, 1500));
    stage(a, mem_rec(0, 43, 0x1000, 0, 2500));
    gmp_asm_stage(a, (const CUpti_Activity *)&k2);
    gmp_asm_drain(a, 1);

    /* The trace: STEP 0, WINDOW_BEGIN (baseline: 0x1000), the baseline ALLOC,
     * STEP 1, ALLOC 0x2000, WINDOW_END, STATS, STEP 2. */
    rec_at(0, GMT_REC_STEP);
    rec_at(1, GMT_REC_WINDOW_BEGIN);
    const gmt_record *r = rec_at(2, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x1000);
    CHECK_EQ_U64(r->u.mem.flags, GMT_MEMF_BASELINE);
    rec_at(3, GMT_REC_STEP);
    r = rec_at(4, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x2000);
    rec_at(5, GMT_REC_WINDOW_END);
    rec_at(6, GMT_REC_STATS);
    rec_at(7, GMT_REC_STEP);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 8);

    size_t i = 0;
    r = aside_at(i++, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x1000);
    CHECK_EQ_U64(r->u.mem.step, 0);
    CHECK_EQ_U64(r->u.mem.flags, 0);
    r = aside_at(i++, GMT_REC_MARK);
    CHECK_EQ_U64(r->u.mark.ts, 300);
    if (kernels) {
        r = aside_at(i++, GMT_REC_KERNEL);
        CHECK_EQ_U64(r->u.kernel.start, 400);
        CHECK_EQ_U64(r->u.kernel.step, 0);
    }
    r = aside_at(i++, GMT_REC_FREE);
    CHECK_EQ_U64(r->u.mem.address, 0x1000);
    CHECK_EQ_U64(r->u.mem.bytes, 256); /* from the live table */
    CHECK_EQ_U64(r->u.mem.step, 2);
    if (kernels) {
        r = aside_at(i++, GMT_REC_KERNEL);
        CHECK_EQ_U64(r->u.kernel.start, 2600);
        CHECK_EQ_U64(r->u.kernel.step, 2);
    }
    tc_context(NULL);
    CHECK_EQ_U64(naside, kernels ? 5 : 3);
    /* kernel names are interned only for kernels that are written */
    CHECK_EQ_U64(nstrings, kernels ? 3 : 1);
    gmp_asm_counts c;
    gmp_asm_get_counts(a, &c);
    CHECK_EQ_U64(c.outside, 4);
    CHECK_EQ_U64(c.late, 0);
    gmp_asm_destroy(a);
}

static void test_aside(void)
{
    aside_case(0);
    aside_case(1);
}

/* ---- a round that left buffers writes no event ahead of them ---------------------- */

/* An end request stops a round before it takes its buffers, and the round
 * is drained held: the mark popped this round may not go out, since a
 * buffer left holds an allocation made before it. The next round stages
 * that buffer: the allocation, then the mark. (Before: the mark went out
 * first; a tag then missed the allocations made before it, as
 * profiler.e2e.tags did about once in 40 runs under ASan on a loaded VM.) */
static void test_held_events(void)
{
    gmp_asm *a = fresh_asm(64u << 20);
    epoch(0, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 100, 0, 1, GMT_PHASE_ACTIVE, 1);
    gmp_asm_round_begin(a, 1000); /* a first round opens the window */
    gmp_asm_events_done(a, 0);
    gmp_asm_take_epochs(a, hist, 0);
    gmp_asm_drain(a, 0);
    rec_at(0, GMT_REC_WINDOW_BEGIN);
    rec_at(1, GMT_REC_STEP);
    tc_context(NULL);
    nout = 0;
    gmp_asm_round_begin(a, 10000);
    event(a, GMP_EV_MARK, 0, 3000, 0, 0, "m");
    gmp_asm_events_done(a, 0);
    gmp_asm_drain_held(a); /* the round's buffers were left */
    CHECK_EQ_U64(nout, 0); /* the mark waits */
    gmp_asm_round_begin(a, 20000);
    gmp_asm_events_done(a, 0);
    stage(a, mem_rec(1, 0, 0x7000, 64, 2000));
    gmp_asm_drain(a, 0);
    const gmt_record *r = rec_at(0, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x7000);
    rec_at(1, GMT_REC_MARK);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 2);
    gmp_asm_destroy(a);
}

/* ---- a record newer than the horizon waits for the next round ------------------- */

static void test_horizon(void)
{
    gmp_asm *a = fresh_asm(64u << 20);
    epoch(0, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 100, 0, 1, GMT_PHASE_ACTIVE, 1);
    gmp_corr_put(&corr, 20, 7, 0, 0, 0, GMP_FAM_MALLOC);
    gmp_corr_put(&corr, 21, 7, 0, 0, 0, GMP_FAM_MALLOC);
    gmp_asm_round_begin(a, 5000);
    gmp_asm_events_done(a, 0);
    gmp_asm_take_epochs(a, hist, 0);
    stage(a, mem_rec(1, 20, 0xa000, 64, 4000));
    stage(a, mem_rec(1, 21, 0xb000, 64, 6000)); /* after the horizon (5000): the next round's */
    gmp_asm_drain(a, 0);
    /* WINDOW_BEGIN (empty baseline), STEP 0, ALLOC 0xa000; 0xb000 waits */
    rec_at(0, GMT_REC_WINDOW_BEGIN);
    rec_at(1, GMT_REC_STEP);
    const gmt_record *r = rec_at(2, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0xa000);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 3);
    /* an event at 5500 popped in the next round comes before the 6000 record */
    nout = 0;
    gmp_asm_round_begin(a, 7000);
    event(a, GMP_EV_MARK, 0, 5500, 0, 0, "m");
    gmp_asm_events_done(a, 0);
    gmp_asm_drain(a, 0);
    rec_at(0, GMT_REC_MARK);
    r = rec_at(1, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0xb000);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 2);
    gmp_asm_destroy(a);
}

/* ---- a full staging area while a window ends ------------------------------------ */

/* The staging area (4096 records at the smallest budget) fills up in the
 * middle of a round's buffers while the window's end is known: the room is
 * made without closing the window, since the records still to be staged in
 * this round belong to it. All 4106 allocations come before WINDOW_END. */
static void test_full_staging(void)
{
    gmp_asm *a = fresh_asm(0);
    epoch(0, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 100, 0, 1, GMT_PHASE_ACTIVE, 1);
    epoch(1, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_END, 100000, 1, 1, GMT_PHASE_DONE, 0);
    gmp_asm_round_begin(a, 200000);
    gmp_asm_events_done(a, 1);
    gmp_asm_take_epochs(a, hist, 1);
    for (uint64_t i = 0; i < 4106; i++) /* no API call: the epoch by time (0) */
        stage(a, mem_rec(1, 0, 0x100000 + i * 0x1000, 64, 200 + i));
    gmp_asm_drain(a, 0);
    CHECK_EQ_U64(nput_alloc, 4106);
    CHECK_EQ_U64((uint64_t)window_end_at_alloc, 4106);
    gmp_asm_counts c;
    gmp_asm_get_counts(a, &c);
    CHECK_EQ_U64(c.late, 0);
    gmp_asm_destroy(a);
}

/* ---- the drain's order: in order, lanes, runs, ties ------------------------------ */

/* Stages n allocations (address i + 1 at ts[i], no API call: epoch 0 by
 * time) and drains once; the addresses written, in order, go to got. */
static size_t order_of(const uint64_t *ts, size_t n, uint64_t *got)
{
    gmp_asm *a = fresh_asm(0);
    epoch(0, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 100, 0, 1, GMT_PHASE_ACTIVE, 1);
    gmp_asm_round_begin(a, 1000000);
    gmp_asm_events_done(a, 0);
    gmp_asm_take_epochs(a, hist, 0);
    for (size_t i = 0; i < n; i++)
        stage(a, mem_rec(1, 0, i + 1, 64, ts[i]));
    gmp_asm_drain(a, 0);
    size_t k = 0;
    for (size_t i = 0; i < nout; i++)
        if (out[i].type == GMT_REC_ALLOC)
            got[k++] = out[i].u.mem.address;
    gmp_asm_destroy(a);
    return k;
}

static void check_order(const char *what, const uint64_t *ts, size_t n, const uint64_t *want)
{
    uint64_t got[64] = {0};
    tc_context("%s", what);
    CHECK_EQ_U64(order_of(ts, n, got), n);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ_U64(got[i], want[i]);
    tc_context(NULL);
}

static void test_order(void)
{
    /* in order already (one pass) */
    const uint64_t t1[] = {200, 300, 300, 400};
    const uint64_t w1[] = {1, 2, 3, 4};
    check_order("in order", t1, 4, w1);
    /* two streams interleaved (allocations and kernels of one buffer: two
     * lanes); ties keep the staging order: 5 before 6 (both 500) */
    const uint64_t t2[] = {1000, 200, 1001, 300, 500, 500, 1002, 900};
    const uint64_t w2[] = {2, 4, 5, 6, 8, 1, 3, 7};
    check_order("two lanes", t2, 8, w2);
    /* 12 descending times: more lanes than 8, the runs are merged; the two
     * 150s keep their staging order (11 before 12) */
    const uint64_t t3[] = {1200, 1100, 1000, 900, 800, 700, 600, 500, 400, 300, 150, 150};
    const uint64_t w3[] = {11, 12, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    check_order("runs", t3, 12, w3);
}

/* ---- VMM ranges ----------------------------------------------------------------- */

static void vmm_event(gmp_asm *a, uint16_t type, uint64_t start, uint64_t ts, uint64_t base, uint64_t size,
                      uint64_t range, uint64_t seq)
{
    gmp_ev *e = ev_fill(a, type, 0, ts, base, size, NULL);
    e->c = range;
    e->d = seq;
    e->vmm.start = start;
    e->len = sizeof e->vmm;
    gmp_asm_event_added(a, 1);
}

/* Reservations and mappings cover records from their call on, whatever
 * batch they come in: a plain allocation at an address that is reserved
 * afterwards stays a plain allocation. */
static void test_vmm(void)
{
    gmp_asm *a = fresh_asm(64u << 20);
    epoch(0, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 100, 0, 1, GMT_PHASE_ACTIVE, 1);
    gmp_corr_put(&corr, 31, 7, 0, 0, 0, GMP_FAM_MALLOC);
    gmp_corr_put(&corr, 32, 7, 0, 0, 0, GMP_FAM_FREE);
    gmp_corr_put(&corr, 33, 7, 0, 0, 0, GMP_FAM_MALLOC);
    gmp_asm_round_begin(a, 10000);
    /* cuMemAddressReserve [1 MiB, +64 KiB) from 3000 to 3100, then cuMemMap
     * of its first 32 KiB from 3200 to 3300 by thread 7 in range 9, seq 2 */
    vmm_event(a, GMP_EV_VMM_RESERVE, 3000, 3100, 0x100000, 0x10000, 0, 0);
    vmm_event(a, GMP_EV_VMM_MAP, 3200, 3300, 0x100000, 0x8000, 9, 2);
    gmp_asm_events_done(a, 0);
    gmp_asm_take_epochs(a, hist, 0);
    stage(a, mem_rec(1, 31, 0x104000, 4096, 1000)); /* cudaMalloc before the reservation */
    stage(a, mem_rec(0, 32, 0x104000, 4096, 1500)); /* and its cudaFree */
    stage(a, mem_rec(1, 0, 0x102000, 2048, 2500));  /* no API call, before the mapping */
    stage(a, mem_rec(1, 0, 0x100000, 0x8000, 3250)); /* the mapping's own record, inside cuMemMap */
    stage(a, mem_rec(1, 33, 0x10c000, 4096, 4000)); /* cudaMalloc inside the reservation, after it */
    gmp_asm_drain(a, 0);
    /* WINDOW_BEGIN, STEP 0, then the records in time order:
     *   0x104000 ALLOC and FREE: MALLOC (the reservation came after them)
     *   0x102000: MALLOC (its memory kind), no thread: the mapping came after it
     *   0x100000: VMM, with the mapping's thread 7, range 9, seq 2
     *   0x10c000: VMM (inside the reservation, after it) */
    rec_at(0, GMT_REC_WINDOW_BEGIN);
    rec_at(1, GMT_REC_STEP);
    const gmt_record *r = rec_at(2, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x104000);
    CHECK_EQ_U64(r->u.mem.source, GMT_SRC_MALLOC);
    r = rec_at(3, GMT_REC_FREE);
    CHECK_EQ_U64(r->u.mem.address, 0x104000);
    CHECK_EQ_U64(r->u.mem.source, GMT_SRC_MALLOC);
    r = rec_at(4, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x102000);
    CHECK_EQ_U64(r->u.mem.source, GMT_SRC_MALLOC);
    CHECK_EQ_U64(r->u.mem.tid, 0);
    CHECK_EQ_U64(r->u.mem.flags, GMT_MEMF_NO_THREAD);
    r = rec_at(5, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x100000);
    CHECK_EQ_U64(r->u.mem.source, GMT_SRC_VMM);
    CHECK_EQ_U64(r->u.mem.tid, 7);
    CHECK_EQ_U64(r->u.mem.range, 9);
    CHECK_EQ_U64(r->u.mem.seq, 2);
    CHECK_EQ_U64(r->u.mem.flags, 0);
    r = rec_at(6, GMT_REC_ALLOC);
    CHECK_EQ_U64(r->u.mem.address, 0x10c000);
    CHECK_EQ_U64(r->u.mem.source, GMT_SRC_VMM);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 7);
    gmp_asm_destroy(a);
}

/* ---- the PyTorch bridge's blocks: a held ALLOC keeps its place ---------------- */

/* popped: what gmp_ring_pop returned for it (GMP_RING_MARKED: marked) */
static void block_ev_popped(gmp_asm *a, uint64_t ts, unsigned action, uint64_t addr, uint64_t req,
                            uint64_t counter, int has_counter, int popped)
{
    gmp_ev *e = ev_fill(a, GMP_EV_BLOCK, 1, ts, addr, 0, NULL);
    e->d = 0;
    e->block.action = (uint8_t)action;
    e->block.device = 0;
    e->block.requested = req;
    e->block.counter = counter;
    e->block.has_counter = (uint8_t)has_counter;
    gmp_asm_event_added(a, popped);
}

static void block_ev(gmp_asm *a, uint64_t ts, unsigned action, uint64_t addr, uint64_t req, uint64_t counter,
                     int has_counter)
{
    block_ev_popped(a, ts, action, addr, req, counter, has_counter, 1);
}

/* A counting bridge's ALLOC waits for the next reading of the allocator's
 * counter to know its size; the block events that come meanwhile must be
 * written after it, or a reader replaying the trace in order frees X
 * before Y exists and sees a peak 1,000 bytes too low. */
static void block_order(int marked)
{
    gmp_asm *a = fresh_asm(64u << 20);
    epoch(0, 0, 100, 0, 0, GMT_PHASE_WAIT, 0);
    epoch(1, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 1000, 1, 1, GMT_PHASE_ACTIVE, 1);
    gmp_asm_round_begin(a, 10000);
    /* counter before X: 0; before Y: 1024 (X is 1024); Y's reading then
     * comes alone at 1400: 2048 = 1024 (X) + 2048 (Y) - 1024 (X freed) */
    block_ev(a, 1100, GMT_BLK_ALLOC, 0x10000, 1000, 0, 1);
    block_ev(a, 1200, GMT_BLK_ALLOC, 0x20000, 2000, 1024, 1);
    if (marked) { /* the completion as the ring's mark on the request (torch.c) */
        block_ev_popped(a, 1300, GMT_BLK_FREE_REQUESTED, 0x10000, 1000, 0, 0, GMP_RING_MARKED);
    } else {
        block_ev(a, 1300, GMT_BLK_FREE_REQUESTED, 0x10000, 1000, 0, 0);
        block_ev(a, 1350, GMT_BLK_FREE_COMPLETED, 0x10000, 1000, 0, 0);
    }
    block_ev(a, 1400, GMP_BRIDGE_COUNTER, 0, 0, 2048, 1);
    gmp_asm_events_done(a, 1);
    gmp_asm_take_epochs(a, hist, 1);
    gmp_asm_drain(a, 0);

    /* after STEP 0, WINDOW_BEGIN (no baseline) and STEP 1: ALLOC X 1024,
     * ALLOC Y 2048, FREE_REQUESTED X 1024, FREE_COMPLETED X, in time order */
    const uint64_t want_ts[] = {1100, 1200, 1300, marked ? 1300 : 1350};
    static const unsigned want_action[] = {GMT_BLK_ALLOC, GMT_BLK_ALLOC, GMT_BLK_FREE_REQUESTED,
                                           GMT_BLK_FREE_COMPLETED};
    static const uint64_t want_bytes[] = {1024, 2048, 1024};
    static const uint64_t want_req[] = {1000, 2000, 1000, 0};
    size_t k = 0;
    for (size_t i = 0; i < nout; i++) {
        if (out[i].type != GMT_REC_BLOCK)
            continue;
        tc_context("marked %d, block record %zu", marked, k);
        REQUIRE(k < 4, "more than 4 block records");
        CHECK_EQ_U64(out[i].u.block.ts, want_ts[k]);
        CHECK_EQ_U64(out[i].u.block.action, want_action[k]);
        CHECK_EQ_U64(out[i].u.block.requested, marked || k < 3 ? want_req[k] : 1000);
        if (k < 3)
            CHECK_EQ_U64(out[i].u.block.bytes, want_bytes[k]);
        k++;
    }
    CHECK_EQ_U64(k, 4);
    gmp_asm_destroy(a);
}

static void test_block_order(void)
{
    block_order(0);
    block_order(1);
}

/* ---- owners: which module holds a block (GMT_BLK_OWNER) ----------------------- */

/* A bridge block event of epoch e on device 0; frame: the owner's name (NULL none). */
static void owner_blk(gmp_asm *a, uint32_t e, uint64_t ts, unsigned action, uint64_t addr, uint64_t bytes,
                      unsigned flags, const char *frame)
{
    gmp_ev *ev = ev_fill(a, GMP_EV_BLOCK, e, ts, addr, bytes, NULL);
    ev->block.action = (uint8_t)action;
    ev->block.flags = (uint8_t)flags;
    ev->block.frame = frame ? gmp_frames_intern(frame, strlen(frame)) : 0;
    gmp_asm_event_added(a, 1);
}

/* Record i is a BLOCK of this action, address, bytes and flags. */
static const gmt_record *blk_at(size_t i, unsigned action, uint64_t addr, uint64_t bytes, uint64_t flags)
{
    const gmt_record *r = rec_at(i, GMT_REC_BLOCK);
    CHECK_EQ_U64(r->u.block.action, action);
    CHECK_EQ_U64(r->u.block.address, addr);
    CHECK_EQ_U64(r->u.block.bytes, bytes);
    CHECK_EQ_U64(r->u.block.flags, flags);
    return r;
}

static const char *sid_text(uint64_t id) { return id >= 1 && id <= nstrings ? strings[id - 1] : ""; }

/* Parameters are made before the first window: their owners are reported
 * outside it (not written) and named by every later window's baseline,
 * after the blocks, as long as the block lives. Step 0 (no window): block
 * P 0x10000 (2560 bytes) holds Net.fc's parameters (weight 16x32 float =
 * 2048 bytes, bias 16 floats = 64: 2112 bytes); block B 0x20000 (512)
 * Net.bn's buffer running_mean (64 floats = 256); B is reported again as
 * Net.tied's parameter (a tied one: the first owner stays). Window 0 (step
 * 1): block C 0x30000 (1024) gets its owner Net.head (1000 bytes) inside
 * the window, and B is freed. Window 1 (step 3): P and C live, B gone. */
static void test_owners(void)
{
    gmp_asm *a = fresh_asm(64u << 20);
    one_window();
    gmp_asm_round_begin(a, 10000);
    owner_blk(a, 0, 200, GMT_BLK_ALLOC, 0x10000, 2560, 0, NULL);
    owner_blk(a, 0, 250, GMT_BLK_OWNER, 0x10000, 2112, GMT_BLKF_PARAMETER, "Net.fc");
    owner_blk(a, 0, 300, GMT_BLK_ALLOC, 0x20000, 512, 0, NULL);
    owner_blk(a, 0, 400, GMT_BLK_OWNER, 0x20000, 256, GMT_BLKF_BUFFER, "Net.bn");
    owner_blk(a, 0, 450, GMT_BLK_OWNER, 0x20000, 256, GMT_BLKF_PARAMETER, "Net.tied");
    owner_blk(a, 1, 1100, GMT_BLK_ALLOC, 0x30000, 1024, 0, NULL);
    owner_blk(a, 1, 1200, GMT_BLK_OWNER, 0x30000, 1000, GMT_BLKF_PARAMETER, "Net.head");
    owner_blk(a, 1, 1300, GMT_BLK_FREE_REQUESTED, 0x20000, 512, 0, NULL);
    gmp_asm_events_done(a, 2);
    gmp_asm_take_epochs(a, hist, 2);
    gmp_asm_drain(a, 0);

    /*  0 STEP 0, 1 WINDOW_BEGIN (no CUPTI baseline), 2-3 the blocks' baseline
     *  (P at 200, B at 300), 4-5 their owners (Net.fc at 250, Net.bn at 400:
     *  not Net.tied), 6 STEP 1, 7 ALLOC C, 8 OWNER C, 9 FREE_REQUESTED B,
     * 10 WINDOW_END, 11 STATS, 12 STEP 2. String ids in order of first use:
     * Net.fc 1, Net.bn 2, Net.tied 3, Net.head 4. */
    rec_at(0, GMT_REC_STEP);
    rec_at(1, GMT_REC_WINDOW_BEGIN);
    blk_at(2, GMT_BLK_ALLOC, 0x10000, 2560, GMT_BLKF_BASELINE);
    blk_at(3, GMT_BLK_ALLOC, 0x20000, 512, GMT_BLKF_BASELINE);
    const gmt_record *r = blk_at(4, GMT_BLK_OWNER, 0x10000, 2112, GMT_BLKF_BASELINE | GMT_BLKF_PARAMETER);
    CHECK_EQ_U64(r->u.block.ts, 250);
    CHECK_EQ_U64(r->u.block.step, 0);
    CHECK_EQ_U64(r->u.block.frame, 1);
    CHECK_STR(sid_text(r->u.block.frame), "Net.fc");
    r = blk_at(5, GMT_BLK_OWNER, 0x20000, 256, GMT_BLKF_BASELINE | GMT_BLKF_BUFFER);
    CHECK_EQ_U64(r->u.block.ts, 400);
    CHECK_STR(sid_text(r->u.block.frame), "Net.bn");
    rec_at(6, GMT_REC_STEP);
    blk_at(7, GMT_BLK_ALLOC, 0x30000, 1024, 0);
    r = blk_at(8, GMT_BLK_OWNER, 0x30000, 1000, GMT_BLKF_PARAMETER);
    CHECK_EQ_U64(r->u.block.ts, 1200);
    CHECK_EQ_U64(r->u.block.step, 1);
    CHECK_EQ_U64(r->u.block.frame, 4);
    CHECK_STR(sid_text(r->u.block.frame), "Net.head");
    blk_at(9, GMT_BLK_FREE_REQUESTED, 0x20000, 512, 0);
    rec_at(10, GMT_REC_WINDOW_END);
    rec_at(11, GMT_REC_STATS);
    rec_at(12, GMT_REC_STEP);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 13);
    CHECK_EQ_U64(nstrings, 4);

    /* window 1 at step 3: 0 WINDOW_BEGIN, 1-2 blocks P (200) and C (1100),
     * 3-4 owners Net.fc (250) and Net.head (1200); B's owner went with B. */
    nout = 0;
    epoch(3, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 3000, 3, 2, GMT_PHASE_ACTIVE, 1);
    gmp_asm_round_begin(a, 10000);
    gmp_asm_events_done(a, 3);
    gmp_asm_take_epochs(a, hist, 3);
    gmp_asm_drain(a, 0);
    rec_at(0, GMT_REC_WINDOW_BEGIN);
    blk_at(1, GMT_BLK_ALLOC, 0x10000, 2560, GMT_BLKF_BASELINE);
    blk_at(2, GMT_BLK_ALLOC, 0x30000, 1024, GMT_BLKF_BASELINE);
    r = blk_at(3, GMT_BLK_OWNER, 0x10000, 2112, GMT_BLKF_BASELINE | GMT_BLKF_PARAMETER);
    CHECK_STR(sid_text(r->u.block.frame), "Net.fc");
    r = blk_at(4, GMT_BLK_OWNER, 0x30000, 1000, GMT_BLKF_BASELINE | GMT_BLKF_PARAMETER);
    CHECK_EQ_U64(r->u.block.ts, 1200);
    CHECK_EQ_U64(r->u.block.step, 1);
    CHECK_STR(sid_text(r->u.block.frame), "Net.head");
    rec_at(5, GMT_REC_STEP);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 6);
    gmp_asm_destroy(a);
}

/* An OWNER that comes while its block's ALLOC waits for its size (a
 * counting bridge) is written after that ALLOC; were it first, the ALLOC
 * would take the block as new and drop its owner. Window 0 (step 1): ALLOC
 * X (request 1000, counter 0), OWNER X (Net.w, 1000 bytes), ALLOC Y
 * (request 2000, counter 1024: X is 1024 bytes), a reading of 3072 (Y:
 * 3072 - 1024 = 2048). Window 1 still names X's owner. */
static void test_owner_held(void)
{
    gmp_asm *a = fresh_asm(64u << 20);
    one_window();
    gmp_asm_round_begin(a, 10000);
    block_ev(a, 1100, GMT_BLK_ALLOC, 0x10000, 1000, 0, 1);
    owner_blk(a, 1, 1150, GMT_BLK_OWNER, 0x10000, 1000, GMT_BLKF_PARAMETER, "Net.w");
    block_ev(a, 1200, GMT_BLK_ALLOC, 0x20000, 2000, 1024, 1);
    block_ev(a, 1400, GMP_BRIDGE_COUNTER, 0, 0, 3072, 1);
    gmp_asm_events_done(a, 2);
    gmp_asm_take_epochs(a, hist, 2);
    gmp_asm_drain(a, 0);
    /* 0 STEP 0, 1 WINDOW_BEGIN, 2 STEP 1, 3 ALLOC X, 4 OWNER X, 5 ALLOC Y,
     * 6 WINDOW_END, 7 STATS, 8 STEP 2 */
    rec_at(2, GMT_REC_STEP);
    blk_at(3, GMT_BLK_ALLOC, 0x10000, 1024, 0);
    const gmt_record *r = blk_at(4, GMT_BLK_OWNER, 0x10000, 1000, GMT_BLKF_PARAMETER);
    CHECK_STR(sid_text(r->u.block.frame), "Net.w");
    blk_at(5, GMT_BLK_ALLOC, 0x20000, 2048, 0);
    rec_at(6, GMT_REC_WINDOW_END);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 9);

    nout = 0;
    epoch(3, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 3000, 3, 2, GMT_PHASE_ACTIVE, 1);
    gmp_asm_round_begin(a, 10000);
    gmp_asm_events_done(a, 3);
    gmp_asm_take_epochs(a, hist, 3);
    gmp_asm_drain(a, 0);
    rec_at(0, GMT_REC_WINDOW_BEGIN);
    blk_at(1, GMT_BLK_ALLOC, 0x10000, 1024, GMT_BLKF_BASELINE);
    blk_at(2, GMT_BLK_ALLOC, 0x20000, 2048, GMT_BLKF_BASELINE);
    r = blk_at(3, GMT_BLK_OWNER, 0x10000, 1000, GMT_BLKF_BASELINE | GMT_BLKF_PARAMETER);
    CHECK_EQ_U64(r->u.block.ts, 1150);
    CHECK_STR(sid_text(r->u.block.frame), "Net.w");
    rec_at(4, GMT_REC_STEP);
    tc_context(NULL);
    CHECK_EQ_U64(nout, 5);
    gmp_asm_destroy(a);
}

/* A failure: the CUDA call's OOM event reaches io.failure in its place, with
 * the live set after the records before it and the name of its range; with
 * a framework allocator, the CUDA failure is left to the allocator's own
 * OOM (a BLOCK), which takes the call's name and gives its own numbers. */
static const char *str_of(uint64_t id) { return id >= 1 && id <= nstrings ? strings[id - 1] : ""; }

static void oom_ev(gmp_asm *a, uint64_t ts, uint64_t bytes, uint64_t range)
{
    gmp_ev *e = ev_fill(a, GMP_EV_OOM, 0, ts, bytes, 3u << 20, NULL);
    e->d = 80ull << 30;
    e->c = 0x5000;
    e->oom.range = range;
    e->oom.status = 2;
    e->oom.has_mem = 1;
    memcpy(e->oom.api, "cuMemAlloc_v2", 13);
    e->oom.api_len = 13;
    e->len = sizeof e->oom;
    gmp_asm_event_added(a, 1);
}

static void test_failure(void)
{
    n_fail = 0;
    gmp_asm *a = fresh_asm(64u << 20);
    epoch(0, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 100, 0, 1, GMT_PHASE_ACTIVE, 1);
    gmp_asm_round_begin(a, 10000);
    event(a, GMP_EV_RANGE_BEGIN, 0, 1050, 5, 0, "fwd");
    stage(a, mem_rec(1, 0, 0x1000, 1u << 20, 1100));
    stage(a, mem_rec(1, 0, 0x2000, 2u << 20, 1200));
    stage(a, mem_rec(0, 0, 0x1000, 1u << 20, 1300));
    oom_ev(a, 1400, 64u << 20, 5);
    stage(a, mem_rec(1, 0, 0x3000, 4u << 20, 1500)); /* after it: not in its live set */
    gmp_asm_events_done(a, 0);
    gmp_asm_take_epochs(a, hist, 0);
    gmp_asm_drain(a, 1);
    CHECK_EQ_U64(n_fail, 1);
    CHECK_EQ_U64(g_fail.cause, GMT_OOM_CUDA);
    CHECK_EQ_U64(g_fail.bytes, 64u << 20);
    CHECK_EQ_U64(g_fail.ts, 1400);
    CHECK_EQ_U64(g_fail.stream, 0x5000);
    CHECK_EQ_U64(g_fail.tid, 7);
    CHECK_EQ_U64(g_fail.range, 5);
    CHECK_STR(str_of(g_fail.op), "fwd");
    CHECK_STR(str_of(g_fail.api), "cuMemAlloc_v2");
    CHECK_EQ_U64(g_fail.driver_free, 3u << 20);
    CHECK_EQ_U64(g_fail.driver_total, 80ull << 30);
    CHECK_EQ_U64(g_fail.flags, GMT_OOMF_DRIVER);
    CHECK_EQ_U64(g_fail.live_count, 1);
    CHECK_EQ_U64(g_fail.live_bytes, 2u << 20);
    /* now (after the later ALLOC): two live, oldest first */
    size_t before = nout;
    CHECK_EQ_U64(gmp_asm_put_live(a), 2);
    CHECK(nout == before + 2 && out[before].type == GMT_REC_LIVE && out[before].u.live.address == 0x2000 &&
              out[before + 1].u.live.address == 0x3000,
          "LIVE records");

    /* the framework: a 20 MiB segment, a 4 MiB block; the CUDA failure
     * waits for the allocator's OOM */
    gmp_asm_round_begin(a, 20000);
    gmp_ev *e = ev_fill(a, GMP_EV_BLOCK, 0, 2000, 0x7f00000, 20u << 20, NULL);
    e->block.action = GMT_BLK_SEGMENT_ALLOC;
    gmp_asm_event_added(a, 1);
    e = ev_fill(a, GMP_EV_BLOCK, 0, 2100, 0x7f00000, 4u << 20, NULL);
    e->block.action = GMT_BLK_ALLOC;
    gmp_asm_event_added(a, 1);
    oom_ev(a, 2200, 32u << 20, 0);
    e = ev_fill(a, GMP_EV_BLOCK, 0, 2300, 1u << 20, 32u << 20, NULL); /* OOM: address = free bytes */
    e->block.action = GMT_BLK_OOM;
    gmp_asm_event_added(a, 1);
    gmp_asm_events_done(a, 0);
    gmp_asm_drain(a, 1);
    CHECK_EQ_U64(n_fail, 2);
    CHECK_EQ_U64(g_fail.cause, GMT_OOM_FRAMEWORK);
    CHECK_EQ_U64(g_fail.bytes, 32u << 20);
    CHECK_EQ_U64(g_fail.driver_free, 1u << 20);
    CHECK_EQ_U64(g_fail.driver_total, 80ull << 30);
    CHECK_STR(str_of(g_fail.api), "cuMemAlloc_v2");
    CHECK_EQ_U64(g_fail.fw_allocated, 4u << 20);
    CHECK_EQ_U64(g_fail.fw_reserved, 20u << 20);
    CHECK_EQ_U64(g_fail.flags, GMT_OOMF_DRIVER | GMT_OOMF_FRAMEWORK);
    CHECK_EQ_U64(g_fail.live_count, 3);

    /* a counted ALLOC waits for its size; the OOM inside "aten::mm" queues
     * behind it, and the op's range closes (the exception) before the next
     * reading: the failure still names the op */
    gmp_asm_round_begin(a, 40000);
    event(a, GMP_EV_RANGE_BEGIN, 0, 3000, 9, 0, "aten::mm");
    e = ev_fill(a, GMP_EV_BLOCK, 0, 3100, 0x7f00000 + (4u << 20), 2u << 20, NULL);
    e->block.action = GMT_BLK_ALLOC;
    e->block.range = 9;
    e->block.has_counter = 1;
    e->block.counter = 4u << 20;
    gmp_asm_event_added(a, 1);
    e = ev_fill(a, GMP_EV_BLOCK, 0, 3200, 1u << 20, 64u << 20, NULL);
    e->block.action = GMT_BLK_OOM;
    e->block.range = 9;
    gmp_asm_event_added(a, 1);
    event(a, GMP_EV_RANGE_END, 0, 3300, 9, 0, NULL);
    e = ev_fill(a, GMP_EV_BLOCK, 0, 3400, 0, 0, NULL); /* the next reading */
    e->block.action = GMP_BRIDGE_COUNTER;
    e->block.has_counter = 1;
    e->block.counter = 6u << 20;
    gmp_asm_event_added(a, 1);
    gmp_asm_events_done(a, 0);
    gmp_asm_drain(a, 1);
    CHECK_EQ_U64(n_fail, 3);
    CHECK_EQ_U64(g_fail.bytes, 64u << 20);
    CHECK_STR(str_of(g_fail.op), "aten::mm");
    gmp_asm_destroy(a);
}

/* ---- the names of ranges outside the windows ---------------------------------- */

/* A range begun outside every window has its name held back (intern_held):
 * its STRING is written only before a record that names it, here the
 * RANGE_BEGIN of the baseline of the window it is open across. */
static void test_held_names(void)
{
    gmp_asm *a = fresh_asm(64u << 20);
    one_window();
    gmp_asm_round_begin(a, 10000);
    event(a, GMP_EV_RANGE_BEGIN, 0, 200, 1, 0, "before");
    event(a, GMP_EV_RANGE_END, 0, 210, 1, 0, NULL);
    event(a, GMP_EV_RANGE_BEGIN, 0, 300, 2, 0, "reused");
    event(a, GMP_EV_RANGE_END, 0, 310, 2, 0, NULL);
    range_kind(a, 0, 400, 3, "across", GMT_RANGE_MODULE);
    event(a, GMP_EV_RANGE_END, 1, 1100, 3, 0, NULL);
    range_kind(a, 1, 1200, 4, "reused", GMT_RANGE_MODULE_BWD);
    event(a, GMP_EV_RANGE_END, 1, 1210, 4, 0, NULL);
    event(a, GMP_EV_RANGE_BEGIN, 2, 2100, 5, 0, "after");
    event(a, GMP_EV_RANGE_END, 2, 2110, 5, 0, NULL);
    gmp_asm_events_done(a, 2);
    gmp_asm_take_epochs(a, hist, 2);
    gmp_asm_drain(a, 1);

    /* Expected: 0 STEP 0; 1 WINDOW_BEGIN (no live allocation); 2 RANGE_BEGIN 3
     * "across" (the baseline); 3 STEP 1; 4 RANGE_END 3; 5 RANGE_BEGIN 4
     * "reused"; 6 RANGE_END 4; 7 WINDOW_END, 8 STATS; 9 STEP 2. The strings
     * in the order interned: before 1, reused 2, across 3, after 4. */
    CHECK_EQ_U64(nout, 10);
    CHECK_EQ_U64(nstrings, 4);
    const gmt_record *r = rec_at(2, GMT_REC_RANGE_BEGIN);
    CHECK_EQ_U64(r->u.range.id, 3);
    CHECK_STR(str_of(r->u.range.name), "across");
    CHECK_EQ_U64(r->u.range.kind, GMT_RANGE_MODULE); /* the kind kept in the open-range table */
    r = rec_at(5, GMT_REC_RANGE_BEGIN);
    CHECK_EQ_U64(r->u.range.id, 4);
    CHECK_STR(str_of(r->u.range.name), "reused");
    CHECK_EQ_U64(r->u.range.kind, GMT_RANGE_MODULE_BWD);
    /* "before" and "after": never written; "reused" at its intern for the
     * RANGE_BEGIN in the window (before record 5); "across" before the
     * baseline's RANGE_BEGIN (record 2) */
    static const char *const name[4] = {"before", "reused", "across", "after"};
    static const int want_at[4] = {-1, 5, 2, -1};
    for (unsigned i = 0; i < 4 && i < nstrings; i++) {
        CHECK_STR(strings[i], name[i]);
        CHECK(string_at[i] == want_at[i], "%s: written before record %d, not %d", name[i], string_at[i], want_at[i]);
    }
    gmp_asm_destroy(a);
}

/* ---- many short ranges: what closes is forgotten ----------------------------- */

/* Ops open and close a range each, a million of them: each END finds its
 * BEGIN, so every END is written and the table of open ranges stays small
 * (it once kept closed ranges until it was full, and lost every END after). */
static void test_range_churn(void)
{
    nput_range_end = 0;
    gmp_asm *a = fresh_asm(64u << 20);
    epoch(0, 0, 100, 0, 0, GMT_PHASE_WAIT, 0);
    epoch(1, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 1000, 1, 1, GMT_PHASE_ACTIVE, 1);
    const uint64_t pairs = 1100000, batch = 500;
    uint64_t id = 1, ts = 2000;
    for (uint64_t done = 0; done < pairs; done += batch) {
        gmp_asm_round_begin(a, ts + 4 * batch);
        for (uint64_t k = 0; k < batch; k++, id++) {
            event(a, GMP_EV_RANGE_BEGIN, 1, ts++, id, 0, "aten::add");
            event(a, GMP_EV_RANGE_END, 1, ts++, id, 0, NULL);
        }
        gmp_asm_events_done(a, 1);
        if (gmp_asm_wants_epochs(a, 1))
            gmp_asm_take_epochs(a, hist, 1);
        gmp_asm_drain(a, 0);
    }
    gmp_asm_drain(a, 1);
    CHECK_EQ_U64(nput_range_end, pairs);
    gmp_asm_destroy(a);
}

/* ---- what an io call asks for ------------------------------------------------- */

/* The flight recorder's side: a chunk begun at the STEP of step 1 asks for
 * its baseline from inside put, a dump asks for the live set from inside
 * failure; the assembler writes each as soon as that call returns, between
 * the two calls of io.asked, and never from inside it. */
static gmp_asm *g_ask_asm;
static int ask_what[8], ask_begin[8];
static size_t ask_at[8]; /* nout when io.asked was called */
static unsigned nask;
static int in_io_put;

static void ask_put(void *ctx, const gmt_record *r)
{
    CHECK(!in_io_put, "a record put from inside put");
    in_io_put = 1;
    io_put(ctx, r);
    if (r->type == GMT_REC_STEP && r->u.step.step == 1)
        gmp_asm_ask_baseline(g_ask_asm, r->u.step.ts, 1);
    in_io_put = 0;
}

static void ask_failure(void *ctx, gmt_oom *o)
{
    io_failure(ctx, o);
    gmp_asm_ask_live(g_ask_asm);
}

static void ask_done(void *ctx, int what, int begin)
{
    (void)ctx;
    if (nask < 8) {
        ask_what[nask] = what;
        ask_begin[nask] = begin;
        ask_at[nask++] = nout;
    }
}

static void test_asked(void)
{
    tc_context("asked");
    reset_out();
    n_fail = 0;
    nask = 0;
    fake_asm_io_init(&fake_io, &sink, 1000, 99999);
    gmp_asm_io io = fake_io.io;
    io.put = ask_put;
    io.failure = ask_failure;
    io.asked = ask_done;
    gmp_asm *a = g_ask_asm = gmp_asm_create(&io, &corr, 64u << 20);
    REQUIRE(a != NULL, "create");
    /* epoch 0: the whole run's window from step 0; epoch 1: step 1 in it */
    epoch(0, GMP_SCHED_EV_PHASE | GMP_SCHED_EV_WINDOW_BEGIN, 100, 0, 1, GMT_PHASE_ACTIVE, 1);
    epoch(1, 0, 1200, 1, 1, GMT_PHASE_ACTIVE, 1);
    gmp_asm_round_begin(a, 10000);
    gmp_ev *e = ev_fill(a, GMP_EV_OOM, 1, 1400, 64u << 20, 3u << 20, NULL);
    e->d = 80ull << 30;
    e->oom.has_mem = 1;
    e->len = sizeof e->oom;
    gmp_asm_event_added(a, 1);
    gmp_asm_events_done(a, 1);
    gmp_asm_take_epochs(a, hist, 1); /* (the round's order: ring, epochs, buffers) */
    stage(a, mem_rec(1, 0, 0x1000, 1u << 20, 1100)); /* step 0 (no call: by its time) */
    stage(a, mem_rec(1, 0, 0x2000, 2u << 20, 1300)); /* step 1 */
    gmp_asm_drain(a, 1);

    /* out: WINDOW_BEGIN (step 0, empty), STEP 0, ALLOC 0x1000, STEP 1, then
     * the baseline asked at it: WINDOW_BEGIN (step 1: one allocation,
     * 1 MiB), its baseline ALLOC; then ALLOC 0x2000; after the failure the
     * live set: LIVE 0x1000, LIVE 0x2000 */
    size_t st = 0;
    while (st < nout && !(out[st].type == GMT_REC_STEP && out[st].u.step.step == 1))
        st++;
    REQUIRE(st + 6 <= nout, "%zu records", nout);
    CHECK(out[st - 1].type == GMT_REC_ALLOC && out[st - 1].u.mem.address == 0x1000);
    const gmt_record *wb = nth_of(out, nout, "out", st + 1, GMT_REC_WINDOW_BEGIN);
    CHECK_EQ_U64(wb->u.wbegin.step, 1);
    CHECK_EQ_U64(wb->u.wbegin.ts, 1200);
    CHECK_EQ_U64(wb->u.wbegin.baseline_count, 1);
    CHECK_EQ_U64(wb->u.wbegin.baseline_bytes, 1u << 20);
    const gmt_record *b = nth_of(out, nout, "out", st + 2, GMT_REC_ALLOC);
    CHECK(b->u.mem.address == 0x1000 && (b->u.mem.flags & GMT_MEMF_BASELINE));
    size_t k = st + 3;
    while (k < nout && out[k].type != GMT_REC_ALLOC)
        k++; /* (a MEMSAMPLE may follow the STEP: none here, no driver) */
    REQUIRE(k + 3 <= nout, "%zu records", nout);
    CHECK(out[k].u.mem.address == 0x2000 && !(out[k].u.mem.flags & GMT_MEMF_BASELINE));
    const gmt_record *l0 = nth_of(out, nout, "out", k + 1, GMT_REC_LIVE);
    const gmt_record *l1 = nth_of(out, nout, "out", k + 2, GMT_REC_LIVE);
    CHECK(l0->u.live.address == 0x1000 && l1->u.live.address == 0x2000);
    CHECK_EQ_U64(n_fail, 1);
    CHECK_EQ_U64(g_fail.live_count, 2);

    REQUIRE(nask == 4, "%u calls of io.asked", nask);
    CHECK(ask_what[0] == GMP_ASM_ASK_BASELINE && ask_begin[0] == 1 && ask_at[0] == st + 1);
    CHECK(ask_what[1] == GMP_ASM_ASK_BASELINE && ask_begin[1] == 0 && ask_at[1] == st + 3);
    CHECK(ask_what[2] == GMP_ASM_ASK_LIVE && ask_begin[2] == 1 && ask_at[2] == k + 1);
    CHECK(ask_what[3] == GMP_ASM_ASK_LIVE && ask_begin[3] == 0 && ask_at[3] == k + 3);
    gmp_asm_destroy(a);

    /* without io.asked, nothing is asked */
    gmp_asm *q = fresh_asm(64u << 20);
    gmp_asm_ask_live(q);
    gmp_asm_ask_baseline(q, 1, 1);
    size_t before = nout;
    epoch(0, 0, 100, 0, 0, GMT_PHASE_WAIT, 0);
    gmp_asm_round_begin(q, 10000);
    gmp_asm_events_done(q, 0);
    gmp_asm_take_epochs(q, hist, 0);
    gmp_asm_drain(q, 1);
    CHECK(nout - before <= 1, "%zu records", nout - before); /* its STEP at most */
    gmp_asm_destroy(q);
    tc_context(NULL);
}

int main(void)
{
    corr.mask = 1023;
    corr.slots = calloc(corr.mask + 1, sizeof *corr.slots);
    REQUIRE(corr.slots != NULL, "out of memory");
    test_window();
    test_late();
    test_aside();
    test_held_events();
    test_horizon();
    test_full_staging();
    test_order();
    test_vmm();
    test_block_order();
    test_owners();
    test_owner_held();
    test_range_churn();
    test_failure();
    test_held_names();
    test_asked();
    free(corr.slots);
    return tc_result("profiler.assembler");
}
