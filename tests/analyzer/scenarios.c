/*
 * Scenario traces for the analyzer tests. Times: SC_T(i) is 10 ms + i ms
 * after the trace start, so "event i" prints as (10 + i).000 ms.
 * Every expected number is worked out in the comments and asserted in
 * test_numbers.c.
 */
#include "scenarios.h"
#include "sc_modules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "gmt_io.h"
#include "sc_writer.h"

/* 1 while writing a GMEMPROF_KERNELS=launch trace: kernels carry their
 * launch time only (start = end), flagged, with registers and shared memory
 * where the driver told the profiler (GMT_KERNF_ATTRS), as the profiler
 * writes them in that mode. */
static int g_launch_mode;

static void header_ranked(sc_tb *b, uint64_t pid, int64_t rank, int64_t world, const char *host);
static void header(sc_tb *b, uint64_t pid) { header_ranked(b, pid, -1, -1, "testhost"); }

static void header_ranked(sc_tb *b, uint64_t pid, int64_t rank, int64_t world, const char *host)
{
    sc_head h = { .pid = pid, .start_ts = SC_START, .host = host, .rank = rank, .world = world };
    if (g_launch_mode)
        h.config = "schedule=whole;kernels=launch";
    sc_header(b, &h);
}

typedef struct mem {
    uint64_t ts, dev, addr, bytes, src, kind, flags, tid, seq, range, step, stream;
} mem;

static void memrec(sc_tb *b, gmt_type type, mem m)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = type;
    r.u.mem.ts = m.ts;
    r.u.mem.device = m.dev;
    r.u.mem.address = m.addr;
    r.u.mem.bytes = m.bytes;
    r.u.mem.kind = m.kind ? m.kind : GMT_MEMKIND_DEVICE;
    r.u.mem.source = m.src ? m.src : GMT_SRC_MALLOC;
    r.u.mem.flags = m.flags;
    r.u.mem.tid = m.tid;
    r.u.mem.seq = m.seq;
    r.u.mem.range = m.range;
    r.u.mem.step = m.step;
    r.u.mem.stream = m.stream;
    sc_put(b, &r);
}
#define ALLOC(b, ...) memrec(b, GMT_REC_ALLOC, (mem){ __VA_ARGS__ })
#define FREE(b, ...) memrec(b, GMT_REC_FREE, (mem){ __VA_ARGS__ })

static void kernel(sc_tb *b, uint64_t ts, uint64_t dur, uint64_t dev, uint64_t stream, uint64_t name, uint64_t tid,
                   uint64_t seq, uint64_t step)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_KERNEL;
    r.u.kernel.start = ts;
    r.u.kernel.end = ts + dur;
    r.u.kernel.device = dev;
    r.u.kernel.stream = stream;
    r.u.kernel.corr = seq + 1000;
    r.u.kernel.name = name;
    r.u.kernel.grid[0] = 128;
    r.u.kernel.grid[1] = r.u.kernel.grid[2] = 1;
    r.u.kernel.block[0] = 256;
    r.u.kernel.block[1] = r.u.kernel.block[2] = 1;
    r.u.kernel.registers = 32 + name;
    r.u.kernel.static_smem = 1024;
    r.u.kernel.dynamic_smem = 1024 * name;
    r.u.kernel.local_mem = 0;
    r.u.kernel.tid = tid;
    r.u.kernel.seq = seq;
    r.u.kernel.step = step;
    if (g_launch_mode) {
        r.u.kernel.end = ts;
        r.u.kernel.flags = GMT_KERNF_LAUNCH;
        /* even names: the profiler got the function's resources from the
         * driver (GMT_KERNF_ATTRS); odd ones: unknown, all 0 */
        if (name % 2 == 0)
            r.u.kernel.flags |= GMT_KERNF_ATTRS;
        else
            r.u.kernel.registers = r.u.kernel.static_smem = r.u.kernel.dynamic_smem = 0;
    }
    sc_put(b, &r);
}

static void range(sc_tb *b, int begin, uint64_t ts, uint64_t tid, uint64_t id, uint64_t parent, uint64_t name)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = begin ? GMT_REC_RANGE_BEGIN : GMT_REC_RANGE_END;
    r.u.range.ts = ts;
    r.u.range.tid = tid;
    r.u.range.id = id;
    r.u.range.parent = parent;
    r.u.range.name = name;
    sc_put(b, &r);
}

static void step(sc_tb *b, uint64_t ts, uint64_t n)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_STEP;
    r.u.step.ts = ts;
    r.u.step.step = n;
    r.u.step.phase = GMT_PHASE_ACTIVE;
    r.u.step.source = GMT_STEPSRC_API;
    sc_put(b, &r);
}

static void wbegin(sc_tb *b, uint64_t ts, uint64_t w, uint64_t stp, uint64_t count, uint64_t bytes)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_WINDOW_BEGIN;
    r.u.wbegin.ts = ts;
    r.u.wbegin.window = w;
    r.u.wbegin.step = stp;
    r.u.wbegin.baseline_count = count;
    r.u.wbegin.baseline_bytes = bytes;
    sc_put(b, &r);
}

static void wend(sc_tb *b, uint64_t ts, uint64_t w, uint64_t stp)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_WINDOW_END;
    r.u.wend.ts = ts;
    r.u.wend.window = w;
    r.u.wend.step = stp;
    r.u.wend.reason = GMT_WEND_SCHEDULE;
    sc_put(b, &r);
}

static void tag(sc_tb *b, uint64_t ts, uint64_t name, uint64_t stp, uint64_t live, uint64_t used)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_TAG;
    r.u.tag.ts = ts;
    r.u.tag.name = name;
    r.u.tag.step = stp;
    r.u.tag.ndev = 1;
    r.u.tag.dev[0].device = 0;
    r.u.tag.dev[0].live_bytes = live;
    r.u.tag.dev[0].driver_used = used;
    r.u.tag.dev[0].driver_total = 16 * GiB;
    r.u.tag.dev[0].driver_free = 16 * GiB - used;
    sc_put(b, &r);
}

static void sample(sc_tb *b, uint64_t ts, uint64_t dev, uint64_t used)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_MEMSAMPLE;
    r.u.sample.ts = ts;
    r.u.sample.device = dev;
    r.u.sample.used = used;
    r.u.sample.total = 16 * GiB;
    r.u.sample.free_ = 16 * GiB - used;
    sc_put(b, &r);
}

static void stats_trailer(sc_tb *b, uint64_t ts)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_STATS;
    r.u.stats.ts = ts;
    r.u.stats.records_written = 40;
    r.u.stats.host_time_ns = 5000000;
    r.u.stats.own_device_bytes = 2 * MiB;
    r.u.stats.own_host_bytes = 3 * MiB;
    sc_put(b, &r);
    sc_trailer(b, ts, 40);
}

/* ---- basic ---------------------------------------------------------------
 * dev0 "Test GPU" (16 GiB); host thread 100; kernels on stream 7.
 * Baseline W1 64 MiB + W2 32 MiB = 96 MiB (2).
 *
 *  i  record                              live after   attributed to
 *  3  ALLOC A1 1 MiB  seq0 range fwd          97        (100,1) kernA
 *  4  ALLOC A2 2 MiB  seq0 range fwd          99        (100,1) kernA
 *  5  KERNEL kernA seq1  1 us
 *  6  ALLOC A3 4 MiB  seq1 range fwd         103        (100,2) kernB
 *  7  FREE  A1        seq1 range fwd         102        kernB
 *  8  KERNEL kernB seq2  2 us
 * 10  ALLOC A4 8 MiB  seq2 range inner       110        (100,3) kernA
 * 11  KERNEL kernA seq3  3 us
 * 12  FREE  A4        seq3 range inner       102        (100,4) kernC
 * 14  KERNEL kernC seq4  4 us
 *     --- step 1 ---
 * 17  ALLOC A5 16 MiB seq4                   118        (100,5) kernD (arrives later)
 * 18  FREE  A2        seq4                   116        kernD (arrives later)
 * 19  ALLOC A6 5 MiB  tid 0                  121        (unattributed)
 * 20  KERNEL kernD seq5 5 us                            settles A5 and the free of A2
 * 21  KERNEL kernE seq6 6 us                            (before its allocation)
 * 22  ALLOC A7 6 MiB  seq5 (async, stream 7) 127 PEAK   (100,6) kernE, found in the ring
 * 23  FREE  A5        seq6                   111        (100,7) never launched: (unattributed)
 *
 * kernels (self = allocated - freed):
 *   kernD  alloc 16 freed 2  self +14  peak 118  calls 1  5 us
 *   kernA  alloc 11 freed 0  self +11  peak 110  calls 2  4 us
 *   kernE  alloc  6 freed 0  self  +6  peak 127  calls 1  6 us
 *   kernB  alloc  4 freed 1  self  +3  peak 103  calls 1  2 us
 *   kernC  alloc  0 freed 8  self  -8            calls 1  4 us
 *   (unattributed) alloc 5 freed 16 self -11 peak 121
 * totals: allocated 42 MiB in 7, freed 27 MiB in 4, net +15 MiB.
 * ranges: forward self 7-1 = +6, total 15-9 = +6, peak 110; inner self 0 total 0 peak 110;
 *         (unattributed) alloc 27 (A5 A6 A7) freed 18 (A2 A5) self +9, peak 127.
 * steps: step 0 alloc 15 (4) freed 9 (2) net +6 peak 110 live end 102;
 *        step 1 alloc 27 (3) freed 18 (2) net +9 peak 127 live end 111, growth +9.
 * peak 127 MiB at 32.000 ms, step 1, kernel kernE; nearest driver sample 240 MiB (32.100 ms).
 * live at the peak: baseline 96 MiB (2); A5 16 (kernD), A7 6 (kernE), A6 5 (unattr), A3 4 (kernB):
 *   by kernel kernD 16, kernE 6, (unattributed) 5, kernB 4; by range (unattributed) 27, forward 4.
 * leaks at window end: A3 4 + A6 5 + A7 6 = 15 MiB (3): by kernel kernE 6, (unattributed) 5, kernB 4;
 *   by range (unattributed) 11, forward 4.
 * tags: before_step live 96 MiB used 200 MiB; after_step live 111 MiB used 230 MiB (+15, +30).
 */
#define S_KA 1
#define S_KB 2
#define S_KC 3
#define S_KD 4
#define S_KE 5
#define S_FWD 6
#define S_INNER 7
#define S_TBEFORE 8
#define S_TAFTER 9
#define S_KF 10

static void basic_body(sc_tb *b)
{
    header(b, 4242);
    sc_device(b, 0, "Test GPU", 16 * GiB);
    sc_string(b, S_KA, "_ZN4test8kernel_aIfLi4EEEvPT_i");
    sc_string(b, S_KB, "kernel_b");
    sc_string(b, S_KC, "_Z8kernel_cPfS_");
    sc_string(b, S_KD, "triton_poi_fused_add_0");
    sc_string(b, S_KE, "_Z8kernel_ev");
    sc_string(b, S_FWD, "forward");
    sc_string(b, S_INNER, "inner");
    sc_string(b, S_TBEFORE, "before_step");
    sc_string(b, S_TAFTER, "after_step");

    wbegin(b, SC_T(0), 0, 0, 2, 96 * MiB);
    ALLOC(b, .ts = SC_START + 1000000, .addr = 0x10000000, .bytes = 64 * MiB, .flags = GMT_MEMF_BASELINE, .tid = 100);
    ALLOC(b, .ts = SC_START + 2000000, .addr = 0x20000000, .bytes = 32 * MiB, .flags = GMT_MEMF_BASELINE, .tid = 100);
    step(b, SC_T(1), 0);
    tag(b, SC_T(1) + 500000, S_TBEFORE, 0, 96 * MiB, 200 * MiB);
    sample(b, SC_T(1) + 600000, 0, 150 * MiB);
    range(b, 1, SC_T(2), 100, 1, 0, S_FWD);
    ALLOC(b, .ts = SC_T(3), .addr = 0x30000000, .bytes = 1 * MiB, .tid = 100, .seq = 0, .range = 1, .step = 0);
    ALLOC(b, .ts = SC_T(4), .addr = 0x30100000, .bytes = 2 * MiB, .tid = 100, .seq = 0, .range = 1, .step = 0);
    kernel(b, SC_T(5), 1000, 0, 7, S_KA, 100, 1, 0);
    ALLOC(b, .ts = SC_T(6), .addr = 0x30400000, .bytes = 4 * MiB, .tid = 100, .seq = 1, .range = 1, .step = 0);
    FREE(b, .ts = SC_T(7), .addr = 0x30000000, .bytes = 1 * MiB, .tid = 100, .seq = 1, .range = 1, .step = 0);
    kernel(b, SC_T(8), 2000, 0, 7, S_KB, 100, 2, 0);
    range(b, 1, SC_T(9), 100, 2, 1, S_INNER);
    ALLOC(b, .ts = SC_T(10), .addr = 0x31000000, .bytes = 8 * MiB, .tid = 100, .seq = 2, .range = 2, .step = 0);
    kernel(b, SC_T(11), 3000, 0, 7, S_KA, 100, 3, 0);
    FREE(b, .ts = SC_T(12), .addr = 0x31000000, .bytes = 8 * MiB, .tid = 100, .seq = 3, .range = 2, .step = 0);
    range(b, 0, SC_T(13), 100, 2, 0, 0);
    kernel(b, SC_T(14), 4000, 0, 7, S_KC, 100, 4, 0);
    range(b, 0, SC_T(15), 100, 1, 0, 0);
    step(b, SC_T(16), 1);
    ALLOC(b, .ts = SC_T(17), .addr = 0x40000000, .bytes = 16 * MiB, .tid = 100, .seq = 4, .step = 1);
    FREE(b, .ts = SC_T(18), .addr = 0x30100000, .bytes = 2 * MiB, .tid = 100, .seq = 4, .step = 1);
    ALLOC(b, .ts = SC_T(19), .addr = 0x50000000, .bytes = 5 * MiB, .flags = GMT_MEMF_NO_THREAD, .step = 1);
    kernel(b, SC_T(20), 5000, 0, 7, S_KD, 100, 5, 1);
    kernel(b, SC_T(21), 6000, 0, 7, S_KE, 100, 6, 1);
    ALLOC(b, .ts = SC_T(22), .addr = 0x60000000, .bytes = 6 * MiB, .src = GMT_SRC_ASYNC_POOL, .tid = 100, .seq = 5,
          .step = 1, .stream = 7);
    sample(b, SC_T(22) + 100000, 0, 240 * MiB);
    FREE(b, .ts = SC_T(23), .addr = 0x40000000, .bytes = 16 * MiB, .tid = 100, .seq = 6, .step = 1);
    tag(b, SC_T(24), S_TAFTER, 1, 111 * MiB, 230 * MiB);
    gmt_writer_end_frame(b->w);
    wend(b, SC_T(25), 0, 1);
}

int sc_basic(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    basic_body(&b);
    stats_trailer(&b, SC_T(26));
    return sc_close(&b, path);
}

/* ---- launch: basic as GMEMPROF_KERNELS=launch writes it ----------------------
 * The same allocations, ranges and launches; the kernels have no GPU time.
 * Peak, attribution and the peak's kernel are exactly basic's. */
int sc_launch(const char *path)
{
    g_launch_mode = 1;
    int rc = sc_basic(path);
    g_launch_mode = 0;
    return rc;
}

/* ---- multiwin: basic, then window 1 ------------------------------------------
 * Window 1 begins at 40 ms (step 3) with the live set as its baseline:
 * W1 64 + W2 32 + A3 4 + A6 5 + A7 6 = 111 MiB (5).
 * 32  ALLOC B1 20 MiB seq6 -> (100,7) kernF     live 131 MiB: the new peak (52 ms, step 3)
 * 33  KERNEL kernF seq7 7 us
 * 34  FREE B1 seq7 -> (100,8) never: (unattributed)   live 111
 * window 1 leaks nothing; window 0 still leaked 15 MiB (its entries are window 1's baseline).
 * --window 0: peak 127 MiB as in basic. --window 1: peak 131, allocated 20, freed 20.
 */
int sc_multiwin(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    basic_body(&b);
    sc_string(&b, S_KF, "kernel_f");
    gmt_writer_end_frame(b.w);
    wbegin(&b, SC_T(30), 1, 3, 5, 111 * MiB);
    ALLOC(&b, .ts = SC_START + 1000000, .addr = 0x10000000, .bytes = 64 * MiB, .flags = GMT_MEMF_BASELINE, .tid = 100);
    ALLOC(&b, .ts = SC_START + 2000000, .addr = 0x20000000, .bytes = 32 * MiB, .flags = GMT_MEMF_BASELINE, .tid = 100);
    ALLOC(&b, .ts = SC_T(6), .addr = 0x30400000, .bytes = 4 * MiB, .flags = GMT_MEMF_BASELINE, .tid = 100, .seq = 1,
          .range = 1);
    ALLOC(&b, .ts = SC_T(19), .addr = 0x50000000, .bytes = 5 * MiB, .flags = GMT_MEMF_BASELINE | GMT_MEMF_NO_THREAD,
          .step = 1);
    ALLOC(&b, .ts = SC_T(22), .addr = 0x60000000, .bytes = 6 * MiB, .src = GMT_SRC_ASYNC_POOL,
          .flags = GMT_MEMF_BASELINE, .tid = 100, .seq = 5, .step = 1, .stream = 7);
    step(&b, SC_T(31), 3);
    ALLOC(&b, .ts = SC_T(32), .addr = 0x70000000, .bytes = 20 * MiB, .tid = 100, .seq = 6, .step = 3);
    kernel(&b, SC_T(33), 7000, 0, 7, S_KF, 100, 7, 3);
    FREE(&b, .ts = SC_T(34), .addr = 0x70000000, .bytes = 20 * MiB, .tid = 100, .seq = 7, .step = 3);
    wend(&b, SC_T(35), 1, 3);
    stats_trailer(&b, SC_T(36));
    return sc_close(&b, path);
}

/* ---- threads ----------------------------------------------------------------
 * Threads 100 and 200 both start at seq 0: the join must use the thread.
 *  T1 1 MiB tid100 seq0 range main(1)      -> (100,1) k_main
 *  T2 2 MiB tid200 seq0 range loader(2)    -> (200,1) k_loader   (kernel before k_main)
 *  T3 4 MiB tid100 seq1 range block(4), whose parent block(3) has the same name, in main(1)
 *                                          -> (100,2) k_main
 * kernels: k_main alloc 5 MiB (2 calls), k_loader 2 MiB.
 * ranges: main self 1 total 5; loader self 2 total 2; block self 4 total 4 (not 8), 2 calls.
 */
int sc_threads(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    header(&b, 4243);
    sc_device(&b, 0, "Test GPU", 16 * GiB);
    sc_string(&b, 1, "k_main");
    sc_string(&b, 2, "k_loader");
    sc_string(&b, 3, "main");
    sc_string(&b, 4, "loader");
    sc_string(&b, 5, "block");
    wbegin(&b, SC_T(0), 0, 0, 0, 0);
    step(&b, SC_T(0), 0);
    range(&b, 1, SC_T(1), 100, 1, 0, 3);
    range(&b, 1, SC_T(2), 200, 2, 0, 4);
    ALLOC(&b, .ts = SC_T(3), .addr = 0x1000000, .bytes = 1 * MiB, .tid = 100, .seq = 0, .range = 1);
    ALLOC(&b, .ts = SC_T(4), .addr = 0x2000000, .bytes = 2 * MiB, .tid = 200, .seq = 0, .range = 2);
    kernel(&b, SC_T(5), 1000, 0, 7, 2, 200, 1, 0);
    kernel(&b, SC_T(6), 1000, 0, 7, 1, 100, 1, 0);
    range(&b, 1, SC_T(7), 100, 3, 1, 5);
    range(&b, 1, SC_T(8), 100, 4, 3, 5);
    ALLOC(&b, .ts = SC_T(9), .addr = 0x3000000, .bytes = 4 * MiB, .tid = 100, .seq = 1, .range = 4);
    kernel(&b, SC_T(10), 1000, 0, 7, 1, 100, 2, 0);
    range(&b, 0, SC_T(11), 100, 4, 0, 0);
    range(&b, 0, SC_T(12), 100, 3, 0, 0);
    range(&b, 0, SC_T(13), 200, 2, 0, 0);
    range(&b, 0, SC_T(14), 100, 1, 0, 0);
    wend(&b, SC_T(15), 0, 0);
    stats_trailer(&b, SC_T(16));
    return sc_close(&b, path);
}

/* ---- nowindow -----------------------------------------------------------------
 * No window records: one implicit window over the whole trace.
 *  Y1 1 MiB seq0 -> (100,1) k;  Y2 2 MiB seq1 -> (100,2) never;  free Y1 seq1 -> never.
 * allocated 3 MiB, freed 1 MiB, peak 3 MiB; leak Y2 2 MiB measured at the trace end.
 * kernel k: alloc 1, self +1; (unattributed): alloc 2 freed 1, self +1.
 */
int sc_nowindow(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    header(&b, 4244);
    sc_device(&b, 0, "Test GPU", 16 * GiB);
    sc_string(&b, 1, "k");
    ALLOC(&b, .ts = SC_T(1), .addr = 0x1000000, .bytes = 1 * MiB, .tid = 100, .seq = 0);
    kernel(&b, SC_T(2), 1000, 0, 7, 1, 100, 1, 0);
    ALLOC(&b, .ts = SC_T(3), .addr = 0x2000000, .bytes = 2 * MiB, .tid = 100, .seq = 1);
    FREE(&b, .ts = SC_T(4), .addr = 0x1000000, .bytes = 1 * MiB, .tid = 100, .seq = 1);
    stats_trailer(&b, SC_T(5));
    return sc_close(&b, path);
}

/* ---- twodev ---------------------------------------------------------------------
 *  X0 10 MiB dev0 stream 3 async seq0 -> k0 (dev0, stream 3)
 *  X1 20 MiB dev1 stream 5 async seq1 -> k1 (dev1, stream 5)
 *  free X0 seq2 -> k2 (dev0, stream 3)
 *  P0 4 MiB pinned host (dev0) seq3 -> never: not device memory
 * dev0 peak 10 MiB (freed, no leak); dev1 peak 20 MiB (leaked). Pinned host peak 4 MiB.
 * --device 1: allocated 20 MiB, 1 kernel (k1), peak 20 MiB, leaks 20 MiB.
 */
int sc_twodev(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    header(&b, 4245);
    sc_device(&b, 0, "Test GPU 0", 16 * GiB);
    sc_device(&b, 1, "Test GPU 1", 32 * GiB);
    sc_string(&b, 1, "k0");
    sc_string(&b, 2, "k1");
    sc_string(&b, 3, "k2");
    wbegin(&b, SC_T(0), 0, 0, 0, 0);
    step(&b, SC_T(0), 0);
    ALLOC(&b, .ts = SC_T(1), .dev = 0, .addr = 0x1000000, .bytes = 10 * MiB, .src = GMT_SRC_ASYNC_POOL, .tid = 100,
          .seq = 0, .stream = 3);
    kernel(&b, SC_T(2), 1000, 0, 3, 1, 100, 1, 0);
    ALLOC(&b, .ts = SC_T(3), .dev = 1, .addr = 0x1000000, .bytes = 20 * MiB, .src = GMT_SRC_ASYNC_POOL, .tid = 100,
          .seq = 1, .stream = 5);
    kernel(&b, SC_T(4), 2000, 1, 5, 2, 100, 2, 0);
    FREE(&b, .ts = SC_T(5), .dev = 0, .addr = 0x1000000, .bytes = 10 * MiB, .src = GMT_SRC_ASYNC_POOL, .tid = 100,
         .seq = 2, .stream = 3);
    kernel(&b, SC_T(6), 3000, 0, 3, 3, 100, 3, 0);
    ALLOC(&b, .ts = SC_T(7), .dev = 0, .addr = 0x7f0000000000ull, .bytes = 4 * MiB, .src = GMT_SRC_PINNED_HOST,
          .kind = GMT_MEMKIND_PINNED, .tid = 100, .seq = 3);
    sample(&b, SC_T(3), 1, 300 * MiB);
    wend(&b, SC_T(8), 0, 0);
    stats_trailer(&b, SC_T(9));
    return sc_close(&b, path);
}

/* ---- edge ----------------------------------------------------------------------
 *  free of 0xdead (never allocated): ignored, counted
 *  E1 1 MiB @0x1000; E2 2 MiB @0x1000 (E1's free was lost: E1 replaced); E3 3 MiB range 99 (unknown)
 *  KERNEL with no name, seq1: E1, E2, E3 all attributed to it (6 MiB allocated)
 *  E4 4 MiB with no host thread: (unattributed), a row apart from the unnamed kernel
 *  a memcpy of 1 MiB on stream 7
 * live after: 2 + 3 + 4 = 9 MiB = the peak; leaks 9 MiB (3); allocated 10 MiB in 4.
 */
int sc_edge(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    header(&b, 4246);
    sc_device(&b, 0, "Test GPU", 16 * GiB);
    wbegin(&b, SC_T(0), 0, 0, 0, 0);
    step(&b, SC_T(0), 0);
    FREE(&b, .ts = SC_T(1), .addr = 0xdead000, .bytes = 7 * MiB, .tid = 100, .seq = 0);
    ALLOC(&b, .ts = SC_T(2), .addr = 0x1000, .bytes = 1 * MiB, .tid = 100, .seq = 0);
    ALLOC(&b, .ts = SC_T(3), .addr = 0x1000, .bytes = 2 * MiB, .tid = 100, .seq = 0);
    ALLOC(&b, .ts = SC_T(4), .addr = 0x9000000, .bytes = 3 * MiB, .tid = 100, .seq = 0, .range = 99);
    kernel(&b, SC_T(5), 1000, 0, 7, 0, 100, 1, 0);
    ALLOC(&b, .ts = SC_T(5) + 500, .addr = 0xa000000, .bytes = 4 * MiB, .flags = GMT_MEMF_NO_THREAD);
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_MEMCPY;
    r.u.copy.start = SC_T(6);
    r.u.copy.end = SC_T(6) + 500;
    r.u.copy.stream = 7;
    r.u.copy.bytes = 1 * MiB;
    r.u.copy.copy_kind = GMT_COPY_HTOD;
    r.u.copy.tid = 100;
    sc_put(&b, &r);
    wend(&b, SC_T(7), 0, 0);
    stats_trailer(&b, SC_T(8));
    return sc_close(&b, path);
}

/* ---- torchnames ----------------------------------------------------------------
 * PyTorch's emit_nvtx decorates every call ("aten::mm, seq = 1, op_id = 2"): both
 * calls below are one "aten::mm" row (2 calls, self 1 + 2 = 3 MiB).
 * Two template instances of one kernel share the short form
 * "at::native::vectorized_elementwise_kernel<...>": their labels must differ
 * (FillFunctor<float> gets 1 MiB, FillFunctor<double> 2 MiB).
 */
int sc_torchnames(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    header(&b, 4247);
    sc_device(&b, 0, "Test GPU", 16 * GiB);
    sc_string(&b, 1, "aten::mm, seq = 1, op_id = 2");
    sc_string(&b, 2, "aten::mm, seq = 5, op_id = 9, sizes = [[8, 8], [8, 8]]");
    sc_string(&b, 3, "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_");
    sc_string(&b, 4, "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIdEESt5arrayIPcLm1EEEEviT0_T1_");
    wbegin(&b, SC_T(0), 0, 0, 0, 0);
    step(&b, SC_T(0), 0);
    range(&b, 1, SC_T(1), 100, 1, 0, 1);
    ALLOC(&b, .ts = SC_T(2), .addr = 0x1000000, .bytes = 1 * MiB, .tid = 100, .seq = 0, .range = 1);
    kernel(&b, SC_T(3), 1000, 0, 7, 3, 100, 1, 0);
    range(&b, 0, SC_T(4), 100, 1, 0, 0);
    range(&b, 1, SC_T(5), 100, 2, 0, 2);
    ALLOC(&b, .ts = SC_T(6), .addr = 0x2000000, .bytes = 2 * MiB, .tid = 100, .seq = 1, .range = 2);
    kernel(&b, SC_T(7), 1000, 0, 7, 4, 100, 2, 0);
    range(&b, 0, SC_T(8), 100, 2, 0, 0);
    wend(&b, SC_T(9), 0, 0);
    stats_trailer(&b, SC_T(10));
    return sc_close(&b, path);
}

/* ---- hostile names ------------------------------------------------------------------
 * Names a trace may carry that no output may pass on raw: control bytes (a
 * terminal's clear-screen, CR, LF) and invalid UTF-8 in a kernel name, the
 * host and the device name; a range name of 62 bytes that the table elides
 * (over 60) and CSV and JSON carry whole; kernel names that a spreadsheet
 * would run as formulas. One allocation each: 1, 2, 3 and 4 MiB.
 */
#define SC_EVIL_KERNEL "evil\033[2J\r\nkernel\xff\xfename"
#define SC_LONG_RANGE "autograd::engine::evaluate_function: NativeLayerNormBackward0"
int sc_hostile(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    header_ranked(&b, 4249, -1, -1, "host\033]0;owned\007\n#x");
    sc_device(&b, 0, "GPU\r\n\xc3(", 16 * GiB);
    sc_string(&b, 1, SC_EVIL_KERNEL);
    sc_string(&b, 2, SC_LONG_RANGE);
    sc_string(&b, 3, "=cmd|' /C calc'!A0");
    sc_string(&b, 4, "-2+3");
    sc_string(&b, 5, "@SUM(A1)");
    wbegin(&b, SC_T(0), 0, 0, 0, 0);
    step(&b, SC_T(0), 0);
    range(&b, 1, SC_T(1), 100, 1, 0, 2);
    ALLOC(&b, .ts = SC_T(2), .addr = 0x1000000, .bytes = 1 * MiB, .tid = 100, .seq = 0, .range = 1);
    kernel(&b, SC_T(3), 1000, 0, 7, 1, 100, 1, 0);
    range(&b, 0, SC_T(4), 100, 1, 0, 0);
    for (uint64_t k = 2; k <= 4; k++) {
        ALLOC(&b, .ts = SC_T(3 * k), .addr = 0x1000000 * k, .bytes = k * MiB, .tid = 100, .seq = k - 1);
        kernel(&b, SC_T(3 * k + 1), 1000, 0, 7, k + 1, 100, k, 0);
    }
    wend(&b, SC_T(20), 0, 0);
    stats_trailer(&b, SC_T(21));
    return sc_close(&b, path);
}

/* ---- huge sizes -----------------------------------------------------------------------
 * A hostile trace whose sizes, summed as they come, wrap 64 bits (2^63 +
 * 2^63 = 0). The sizes taken may add up to GMA_BYTES_MAX = 2^62; the rest
 * are refused: 2^63 (twice: each alone is past it), then 2^61, 2^61 - 2 MiB,
 * 1 MiB and its free of 1 MiB are taken (2^62 in all), and a last 2^61 is
 * refused. One kernel owns them all: allocated 2^62 - 1 MiB, freed 1 MiB,
 * leaked 2^62 - 2 MiB, peak 2^62 - 1 MiB; 3 records refused.
 */
int sc_huge(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    header(&b, 4250);
    sc_device(&b, 0, "Test GPU", 16 * GiB);
    sc_string(&b, 1, "huge_kernel");
    wbegin(&b, SC_T(0), 0, 0, 0, 0);
    step(&b, SC_T(0), 0);
    ALLOC(&b, .ts = SC_T(1), .addr = 0x1000000, .bytes = 1ull << 63, .tid = 100, .seq = 0);
    ALLOC(&b, .ts = SC_T(2), .addr = 0x2000000, .bytes = 1ull << 63, .tid = 100, .seq = 0);
    ALLOC(&b, .ts = SC_T(3), .addr = 0x3000000, .bytes = 1ull << 61, .tid = 100, .seq = 0);
    ALLOC(&b, .ts = SC_T(4), .addr = 0x4000000, .bytes = (1ull << 61) - 2 * MiB, .tid = 100, .seq = 0);
    ALLOC(&b, .ts = SC_T(5), .addr = 0x5000000, .bytes = 1 * MiB, .tid = 100, .seq = 0);
    ALLOC(&b, .ts = SC_T(6), .addr = 0x6000000, .bytes = 1ull << 61, .tid = 100, .seq = 0);
    kernel(&b, SC_T(7), 1000, 0, 7, 1, 100, 1, 0);
    FREE(&b, .ts = SC_T(8), .addr = 0x5000000, .bytes = 1 * MiB, .tid = 100, .seq = 1);
    wend(&b, SC_T(9), 0, 0);
    stats_trailer(&b, SC_T(10));
    return sc_close(&b, path);
}

/* ---- attention -------------------------------------------------------------------
 * Both: baseline Q, K, V 4 MiB each = 12 MiB.
 * naive: scores 64 MiB -> bmm_qk (seq1); softmax in place (seq2); out 8 MiB -> bmm_av (seq3);
 *        free scores -> add (seq4). Peak 12 + 64 + 8 = 84 MiB.
 * flash: out 8 MiB + lse 1 MiB -> flash_fwd (seq1); free lse -> add (seq2). Peak 21 MiB.
 * diff by kernel (bytes allocated, |B - A|): bmm_qk -64 MiB (A only), flash_fwd +9 MiB (B only),
 *   bmm_av -8 MiB (A only), then add and attn::softmax with 0.
 */
static void attn_common(sc_tb *b, uint64_t pid)
{
    header(b, pid);
    sc_device(b, 0, "Test GPU", 16 * GiB);
    sc_string(b, 1, "_Z6bmm_qkPKfS0_Pf");
    sc_string(b, 2, "_ZN4attn7softmaxILi128EEEvPf");
    sc_string(b, 3, "_Z6bmm_avPKfS0_Pf");
    sc_string(b, 4, "add_residual");
    sc_string(b, 5, "_ZN5flash9flash_fwdILi64EEEvPKfS2_S2_Pf");
    wbegin(b, SC_T(0), 0, 0, 3, 12 * MiB);
    for (int i = 0; i < 3; i++)
        ALLOC(b, .ts = SC_START + 1000000 * (uint64_t)(i + 1), .addr = 0x10000000 + 0x1000000 * (uint64_t)i,
              .bytes = 4 * MiB, .src = GMT_SRC_ASYNC_POOL, .flags = GMT_MEMF_BASELINE, .tid = 100);
    step(b, SC_T(1), 0);
}

int sc_attn_naive(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    attn_common(&b, 5001);
    ALLOC(&b, .ts = SC_T(2), .addr = 0x40000000, .bytes = 64 * MiB, .src = GMT_SRC_ASYNC_POOL, .tid = 100, .seq = 0);
    kernel(&b, SC_T(3), 3000, 0, 7, 1, 100, 1, 0);
    kernel(&b, SC_T(4), 2000, 0, 7, 2, 100, 2, 0);
    ALLOC(&b, .ts = SC_T(5), .addr = 0x50000000, .bytes = 8 * MiB, .src = GMT_SRC_ASYNC_POOL, .tid = 100, .seq = 2);
    kernel(&b, SC_T(6), 3000, 0, 7, 3, 100, 3, 0);
    FREE(&b, .ts = SC_T(7), .addr = 0x40000000, .bytes = 64 * MiB, .src = GMT_SRC_ASYNC_POOL, .tid = 100, .seq = 3);
    kernel(&b, SC_T(8), 1000, 0, 7, 4, 100, 4, 0);
    wend(&b, SC_T(9), 0, 0);
    stats_trailer(&b, SC_T(10));
    return sc_close(&b, path);
}

int sc_attn_flash(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    attn_common(&b, 5002);
    ALLOC(&b, .ts = SC_T(2), .addr = 0x50000000, .bytes = 8 * MiB, .src = GMT_SRC_ASYNC_POOL, .tid = 100, .seq = 0);
    ALLOC(&b, .ts = SC_T(3), .addr = 0x50800000, .bytes = 1 * MiB, .src = GMT_SRC_ASYNC_POOL, .tid = 100, .seq = 0);
    kernel(&b, SC_T(4), 4000, 0, 7, 5, 100, 1, 0);
    FREE(&b, .ts = SC_T(5), .addr = 0x50800000, .bytes = 1 * MiB, .src = GMT_SRC_ASYNC_POOL, .tid = 100, .seq = 1);
    kernel(&b, SC_T(6), 1000, 0, 7, 4, 100, 2, 0);
    wend(&b, SC_T(7), 0, 0);
    stats_trailer(&b, SC_T(8));
    return sc_close(&b, path);
}

/* ---- damaged files -----------------------------------------------------------------
 * truncated: basic's records up to the frame end before WINDOW_END (events 0-24), then
 * the final frame (WINDOW_END, STATS, TRAILER) cut in its middle: no trailer, no window end.
 * What survives is exactly basic without its window end, so the numbers are basic's
 * except that the leaks are measured at the trace end.
 */
static int slurp(const char *path, unsigned char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 16, n = 0;
    unsigned char *p = malloc(cap);
    size_t k;
    while (p && (k = fread(p + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            unsigned char *q = realloc(p, cap *= 2);
            if (!q) {
                free(p);
                p = NULL;
            }
            p = q;
        }
    }
    fclose(f);
    if (!p)
        return -1;
    *data = p;
    *len = n;
    return 0;
}

static int spit(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return -1;
    }
    int ok = fwrite(data, 1, len, f) == len;
    ok &= fclose(f) == 0;
    return ok ? 0 : -1;
}

int sc_truncated(const char *path)
{
    if (sc_basic(path) != 0)
        return -1;
    unsigned char *d;
    size_t n;
    if (slurp(path, &d, &n) != 0)
        return -1;
    /* Find the start of the last zstd frame (magic 28 b5 2f fd) and cut
     * the file a few bytes into it. */
    size_t last = 0;
    for (size_t i = 0; i + 4 <= n; i++)
        if (d[i] == 0x28 && d[i + 1] == 0xb5 && d[i + 2] == 0x2f && d[i + 3] == 0xfd)
            last = i;
    int rc = last ? spit(path, d, last + 6) : -1;
    free(d);
    return rc;
}

/* damaged: basic with one byte of its last frame's compressed data flipped:
 * the reader stops at that frame with a zstd error; the input is whole
 * (not truncated). */
int sc_damaged(const char *path)
{
    if (sc_basic(path) != 0)
        return -1;
    unsigned char *d;
    size_t n;
    if (slurp(path, &d, &n) != 0)
        return -1;
    size_t last = 0;
    for (size_t i = 0; i + 4 <= n; i++)
        if (d[i] == 0x28 && d[i + 1] == 0xb5 && d[i + 2] == 0x2f && d[i + 3] == 0xfd)
            last = i;
    int rc = -1;
    if (last && n - last > 16) {
        d[last + (n - last) / 2] ^= 0x5a;
        rc = spit(path, d, n);
    }
    free(d);
    return rc;
}

/* nochecksum: basic with every frame compressed again without zstd's
 * checksum, which gmemprof always writes: the same records, each frame
 * unverified. */
int sc_nochecksum(const char *path)
{
    if (sc_basic(path) != 0)
        return -1;
    unsigned char *d, *out = NULL, *plain = NULL;
    size_t n, on = 0;
    if (slurp(path, &d, &n) != 0)
        return -1;
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    int rc = cc && (out = malloc(2 * n + 4096)) ? 0 : -1;
    for (size_t pos = 0; rc == 0 && pos < n;) {
        size_t fl = ZSTD_findFrameCompressedSize(d + pos, n - pos);
        unsigned long long cl = ZSTD_getFrameContentSize(d + pos, n - pos);
        if (ZSTD_isError(fl) || cl == ZSTD_CONTENTSIZE_UNKNOWN || cl == ZSTD_CONTENTSIZE_ERROR ||
            !(plain = realloc(plain, (size_t)cl + 1)) ||
            ZSTD_decompress(plain, (size_t)cl, d + pos, fl) != (size_t)cl) {
            rc = -1;
            break;
        }
        ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
        ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 0);
        size_t k = ZSTD_compress2(cc, out + on, 2 * n + 4096 - on, plain, (size_t)cl);
        if (ZSTD_isError(k))
            rc = -1;
        else
            on += k;
        pos += fl;
    }
    if (rc == 0)
        rc = spit(path, out, on);
    ZSTD_freeCCtx(cc);
    free(plain);
    free(out);
    free(d);
    return rc;
}

int sc_newer(const char *path)
{
    unsigned char pre[GMT_PREAMBLE_LEN] = { 'G', 'M', 'E', 'M', 'P', 'R', 'O', 'F', GMT_VERSION_MAJOR + 1, 0, 0, 0 };
    unsigned char out[256];
    size_t n = ZSTD_compress(out, sizeof(out), pre, sizeof(pre), 3);
    if (ZSTD_isError(n))
        return -1;
    return spit(path, out, n);
}

int sc_garbage(const char *path)
{
    unsigned char d[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof(d); i++) {
        x = x * 1103515245u + 12345u;
        d[i] = (unsigned char)(x >> 16);
    }
    return spit(path, d, sizeof(d));
}

int sc_empty(const char *path) { return spit(path, "", 0); }

/* ---- rank: one rank of a data-parallel run -------------------------------------
 * Rank r (RANK=r, world size w) on device r, pid 5000 + r, host node-a
 * (ranks 0-1) or node-b (2-); host thread 100, stream 7. Baseline 64 MiB.
 *
 *  i  record                                   live after
 *  2  ALLOC A 32 MiB seq0 -> gemm (seq1)        96
 *  3  KERNEL gemm 100 us
 *  4  ALLOC N (8 + 8r) MiB seq1 -> nccl (seq2)  104 + 8r   PEAK (14 ms, step 0)
 *  5  KERNEL nccl (100 + 50r) us
 *  6  FREE A seq2 -> gemm (seq3)                72 + 8r
 *     --- step 1 ---
 *  8  ALLOC B 16 MiB seq2 -> gemm (seq3)        88 + 8r
 *  9  KERNEL gemm 100 us
 * 10  FREE B seq3 -> (unattributed)             72 + 8r
 *     window ends at 22 ms: N leaks, 8 + 8r MiB.
 * per rank: peak 104 + 8r MiB, allocated 56 + 8r, freed 48, leaked 8 + 8r,
 *   3 kernels, 300 + 50r us; kernel rows: gemm calls 2 alloc 48 freed 32
 *   peak max(96, 88 + 8r) time 200 us; nccl calls 1 alloc 8 + 8r peak 104 + 8r
 *   time 100 + 50r us; (unattributed) freed 16.
 * ranks 0-3: peaks 104, 112, 120, 128 MiB, mean 116, imbalance -8/116 ...
 *   +12/116 = -10.3 %, -3.4 %, +3.4 %, +10.3 %.
 */
#define R_GEMM 1
#define R_NCCL 2

int sc_rank(const char *path, int64_t rank, int64_t world)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    uint64_t r = rank < 0 ? 0 : (uint64_t)rank, dev = r;
    header_ranked(&b, 5000 + r, rank, world, r < 2 ? "node-a" : "node-b");
    sc_device(&b, dev, "Test GPU", 16 * GiB);
    sc_string(&b, R_GEMM, "gemm_kernel");
    sc_string(&b, R_NCCL, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
    wbegin(&b, SC_T(0), 0, 0, 1, 64 * MiB);
    ALLOC(&b, .ts = SC_START + 1000000, .dev = dev, .addr = 0x10000000, .bytes = 64 * MiB, .flags = GMT_MEMF_BASELINE,
          .tid = 100);
    step(&b, SC_T(1), 0);
    ALLOC(&b, .ts = SC_T(2), .dev = dev, .addr = 0x20000000, .bytes = 32 * MiB, .tid = 100, .seq = 0, .step = 0);
    kernel(&b, SC_T(3), 100000, dev, 7, R_GEMM, 100, 1, 0);
    ALLOC(&b, .ts = SC_T(4), .dev = dev, .addr = 0x30000000, .bytes = (8 + 8 * r) * MiB, .tid = 100, .seq = 1, .step = 0);
    kernel(&b, SC_T(5), 100000 + 50000 * r, dev, 7, R_NCCL, 100, 2, 0);
    FREE(&b, .ts = SC_T(6), .dev = dev, .addr = 0x20000000, .bytes = 32 * MiB, .tid = 100, .seq = 2, .step = 0);
    step(&b, SC_T(7), 1);
    ALLOC(&b, .ts = SC_T(8), .dev = dev, .addr = 0x40000000, .bytes = 16 * MiB, .tid = 100, .seq = 2, .step = 1);
    kernel(&b, SC_T(9), 100000, dev, 7, R_GEMM, 100, 3, 1);
    FREE(&b, .ts = SC_T(10), .dev = dev, .addr = 0x40000000, .bytes = 16 * MiB, .tid = 100, .seq = 3, .step = 1);
    wend(&b, SC_T(12), 0, 1);
    stats_trailer(&b, SC_T(13));
    return sc_close(&b, path);
}

/* ---- torch: the PyTorch bridge's blocks beside CUPTI's allocations -------------
 * dev0 "Test GPU" and dev1 "Test GPU 1"; main thread 100, a second thread
 * 200 (dev1). CUPTI sees the caching allocator's segments S1 (20 MiB at
 * 0x10000000), S2 (16 MiB right after it) and an 8 MiB library workspace
 * W; the bridge sees the blocks (B*) and the segments.
 *
 *  i  record                                   dev0 alloc  reserved  CUDA
 *  1  TAG before_model: no device (before CUDA)    0           0        0
 *  2  MEMSAMPLE dev0 1 GiB
 *  3  ALLOC S1 20 MiB; BLOCK SEGMENT_ALLOC S1      0          20       20
 *  4  BLOCK ALLOC B1 4 MiB at S1+0, seq0           4          20       20   -> kernel_a
 *  5  ALLOC W 8 MiB (cuBLAS), seq0                 4          20       28
 *  6  TAG after_model (fw 4 / 20, CUDA 28, used 1 GiB + 32 MiB)
 *  7  STEP 0;  8 RANGE forward (id 1)
 *  9  BLOCK ALLOC B2 6 MiB at S1+4, seq0 fwd      10          20       28   -> kernel_a
 * 10  KERNEL kernel_a seq1
 * 11  BLOCK ALLOC B3 2 MiB at S1+10, seq1 fwd     12          20       28   -> kernel_b
 * 12  thread 200, dev1: ALLOC + BLOCK SEGMENT_ALLOC S3 2 MiB
 * 13  thread 200, dev1: BLOCK ALLOC B4 1 MiB (no kernel: unattributed)
 * 14  ALLOC S2 16 MiB; BLOCK SEGMENT_ALLOC S2     12          36       44
 * 15  BLOCK ALLOC B5 10 MiB at S2+0, seq1 fwd     22 PEAK     36       44   -> kernel_b
 *     MEMSAMPLE dev0 1 GiB + 60 MiB at 25.2 ms (nearer the peak than 1 GiB at 12 ms)
 * 16  KERNEL kernel_b seq2
 * 17  BLOCK FREE_REQUESTED B2 6 MiB, seq2 fwd     16                           -> kernel_c
 * 18  RANGE end
 * 19  BLOCK ALLOC B6 3 MiB at S1+4, seq2          19                           -> kernel_c
 * 20  BLOCK FREE_REQUESTED B6 (record_stream)     16                           -> kernel_c
 * 21  KERNEL kernel_c seq3;  22 BLOCK FREE_COMPLETED B6
 * 23  TAG end: dev0 fw 16 / 36, CUDA 44, used 1 GiB + 64 MiB; dev1 fw 1 / 2, CUDA 2, used 512 MiB
 *
 * At the dev0 allocated peak (22 MiB, 25.000 ms): reserved 36, of it 14 MiB
 * unallocated: holes S1 12..20 = 8 MiB and S2 10..16 = 6 MiB (2 holes);
 * outside the allocator 44 - 36 = 8 MiB (W); driver used 1 GiB + 60 MiB.
 * Reserved peak 36 MiB; CUDA peak 44 MiB. dev1: allocated peak 1 MiB
 * (23.000 ms), reserved 2, one hole of 1 MiB, outside 0, driver used 512 MiB
 * (the end tag: the one reading after the peak, and none before).
 * Blocks layer, by kernel: kernel_a alloc 10 (B1 B2); kernel_b alloc 12 (B3
 * B5); kernel_c alloc 3 freed 9 (B2 B6), self -6; (unattributed) alloc 1.
 * Totals: allocated 26 MiB in 6, freed 9 MiB in 2. Peak dev0 22 MiB kernel_b
 * range forward. Segments layer: dev0 S1 20 + W 8 (kernel_a), S2 16
 * (kernel_b), peak 44 MiB at 24.000 ms; dev1 S3 2 (unattributed).
 * Tags (fw): before_model 0 / 0, no driver reading; after_model 4 / 20,
 * outside 8, +4 / +20; end dev0 16 / 36, outside 8, +12 / +16, used
 * +32 MiB; end dev1 1 / 2, outside 0.
 */
#define T_KA 1
#define T_KB 2
#define T_KC 3
#define T_FWD 6
#define T_BEFORE 8
#define T_MODEL 9
#define T_END 11

typedef struct tagdev {
    uint64_t dev, live, used, fw_alloc, fw_res;
} tagdev;

static void fwtag(sc_tb *b, uint64_t ts, uint64_t name, int fw, size_t n, const tagdev *d)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_TAG;
    r.u.tag.ts = ts;
    r.u.tag.name = name;
    r.u.tag.ndev = n;
    r.u.tag.has_framework = (uint64_t)fw;
    for (size_t i = 0; i < n; i++) {
        gmt_tag_device *t = &r.u.tag.dev[i];
        t->device = d[i].dev;
        t->live_bytes = d[i].live;
        t->driver_used = d[i].used;
        t->driver_total = 16 * GiB;
        t->driver_free = 16 * GiB - d[i].used;
        t->fw_allocated = d[i].fw_alloc;
        t->fw_reserved = d[i].fw_res;
    }
    sc_put(b, &r);
}

static void blk(sc_tb *b, uint64_t ts, unsigned action, uint64_t dev, uint64_t addr, uint64_t bytes, uint64_t tid,
                uint64_t seq, uint64_t range)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_BLOCK;
    r.u.block.ts = ts;
    r.u.block.action = action;
    r.u.block.device = dev;
    r.u.block.address = addr;
    r.u.block.bytes = bytes;
    r.u.block.requested = action == GMT_BLK_ALLOC ? bytes - 100 : 0;
    r.u.block.stream = 7;
    r.u.block.tid = tid;
    r.u.block.seq = seq;
    r.u.block.range = range;
    sc_put(b, &r);
}

int sc_torch(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    const uint64_t s1 = 0x10000000, s2 = s1 + 20 * MiB, s3 = 0x20000000;
    header(&b, 4343);
    sc_device(&b, 0, "Test GPU", 16 * GiB);
    sc_device(&b, 1, "Test GPU 1", 16 * GiB);
    sc_string(&b, T_KA, "kernel_a");
    sc_string(&b, T_KB, "kernel_b");
    sc_string(&b, T_KC, "kernel_c");
    sc_string(&b, T_FWD, "forward");
    sc_string(&b, T_BEFORE, "before_model");
    sc_string(&b, T_MODEL, "after_model");
    sc_string(&b, T_END, "end");
    wbegin(&b, SC_T(0), 0, 0, 0, 0);
    fwtag(&b, SC_T(1), T_BEFORE, 0, 0, NULL);
    sample(&b, SC_T(2), 0, 1 * GiB);
    ALLOC(&b, .ts = SC_T(3), .addr = s1, .bytes = 20 * MiB, .tid = 100);
    blk(&b, SC_T(3) + 1000, GMT_BLK_SEGMENT_ALLOC, 0, s1, 20 * MiB, 100, 0, 0);
    blk(&b, SC_T(4), GMT_BLK_ALLOC, 0, s1, 4 * MiB, 100, 0, 0);
    ALLOC(&b, .ts = SC_T(5), .addr = 0x90000000, .bytes = 8 * MiB, .tid = 100);
    fwtag(&b, SC_T(6), T_MODEL, 1, 1, (const tagdev[]){ { 0, 28 * MiB, 1 * GiB + 32 * MiB, 4 * MiB, 20 * MiB } });
    step(&b, SC_T(7), 0);
    range(&b, 1, SC_T(8), 100, 1, 0, T_FWD);
    blk(&b, SC_T(9), GMT_BLK_ALLOC, 0, s1 + 4 * MiB, 6 * MiB, 100, 0, 1);
    kernel(&b, SC_T(10), 1000, 0, 7, T_KA, 100, 1, 0);
    blk(&b, SC_T(11), GMT_BLK_ALLOC, 0, s1 + 10 * MiB, 2 * MiB, 100, 1, 1);
    ALLOC(&b, .ts = SC_T(12), .dev = 1, .addr = s3, .bytes = 2 * MiB, .tid = 200);
    blk(&b, SC_T(12) + 1000, GMT_BLK_SEGMENT_ALLOC, 1, s3, 2 * MiB, 200, 0, 0);
    blk(&b, SC_T(13), GMT_BLK_ALLOC, 1, s3, 1 * MiB, 200, 0, 0);
    ALLOC(&b, .ts = SC_T(14), .addr = s2, .bytes = 16 * MiB, .tid = 100, .seq = 1, .range = 1);
    blk(&b, SC_T(14) + 1000, GMT_BLK_SEGMENT_ALLOC, 0, s2, 16 * MiB, 100, 1, 1);
    blk(&b, SC_T(15), GMT_BLK_ALLOC, 0, s2, 10 * MiB, 100, 1, 1);
    sample(&b, SC_T(15) + 200000, 0, 1 * GiB + 60 * MiB);
    kernel(&b, SC_T(16), 2000, 0, 7, T_KB, 100, 2, 0);
    blk(&b, SC_T(17), GMT_BLK_FREE_REQUESTED, 0, s1 + 4 * MiB, 6 * MiB, 100, 2, 1);
    range(&b, 0, SC_T(18), 100, 1, 0, 0);
    blk(&b, SC_T(19), GMT_BLK_ALLOC, 0, s1 + 4 * MiB, 3 * MiB, 100, 2, 0);
    blk(&b, SC_T(20), GMT_BLK_FREE_REQUESTED, 0, s1 + 4 * MiB, 3 * MiB, 100, 2, 0);
    kernel(&b, SC_T(21), 3000, 0, 7, T_KC, 100, 3, 0);
    blk(&b, SC_T(22), GMT_BLK_FREE_COMPLETED, 0, s1 + 4 * MiB, 3 * MiB, 100, 3, 0);
    fwtag(&b, SC_T(23), T_END, 1, 2,
          (const tagdev[]){ { 0, 44 * MiB, 1 * GiB + 64 * MiB, 16 * MiB, 36 * MiB }, { 1, 2 * MiB, 512 * MiB, 1 * MiB, 2 * MiB } });
    wend(&b, SC_T(24), 0, 0);
    stats_trailer(&b, SC_T(25));
    return sc_close(&b, path);
}

/* ---- growth with a size (--fit) ---------------------------------------------------
 * One step at size s, in four ranges on one thread: "nn.init" makes the weights (100 MiB,
 * made in step 0 and kept), "aten::linear" an activation of 64 KiB x s, "aten::add" a
 * 1 MiB temporary freed at once, "aten::softmax" scores of 16 B x s^2; then the scores and
 * the activation are freed. The step's peak is after the scores:
 *   100 MiB + 65536 s + 16 s^2   (s = 512: 136 MiB; 1024: 180 MiB; 2048: 292 MiB)
 * the temporary's moment (100 MiB + 65536 s + 1 MiB) stays below it for s >= 512.
 * grow_N: one trace per size (the device 1 GiB); grow_steps: one trace whose steps 0, 1
 * and 2 run at 512, 1024 and 2048, the weights made once in step 0.
 */
static uint64_t grow_ti;
static void grow_step(sc_tb *b, uint64_t stp, uint64_t s, int weights)
{
    uint64_t base = 10 * stp; /* range instance ids of this step */
    step(b, SC_T(grow_ti++), stp);
    if (weights) {
        range(b, 1, SC_T(grow_ti++), 100, base + 1, 0, 1);
        ALLOC(b, .ts = SC_T(grow_ti++), .addr = 0x100000000ull, .bytes = 100 * MiB, .tid = 100, .range = base + 1,
              .step = stp);
        range(b, 0, SC_T(grow_ti++), 100, base + 1, 0, 1);
    }
    range(b, 1, SC_T(grow_ti++), 100, base + 2, 0, 2);
    ALLOC(b, .ts = SC_T(grow_ti++), .addr = 0x200000000ull, .bytes = 65536 * s, .tid = 100, .range = base + 2,
          .step = stp);
    range(b, 0, SC_T(grow_ti++), 100, base + 2, 0, 2);
    range(b, 1, SC_T(grow_ti++), 100, base + 4, 0, 4);
    ALLOC(b, .ts = SC_T(grow_ti++), .addr = 0x300000000ull, .bytes = 1 * MiB, .tid = 100, .range = base + 4, .step = stp);
    FREE(b, .ts = SC_T(grow_ti++), .addr = 0x300000000ull, .bytes = 1 * MiB, .tid = 100, .range = base + 4, .step = stp);
    range(b, 0, SC_T(grow_ti++), 100, base + 4, 0, 4);
    range(b, 1, SC_T(grow_ti++), 100, base + 3, 0, 3);
    ALLOC(b, .ts = SC_T(grow_ti++), .addr = 0x400000000ull, .bytes = 16 * s * s, .tid = 100, .range = base + 3,
          .step = stp);
    range(b, 0, SC_T(grow_ti++), 100, base + 3, 0, 3);
    FREE(b, .ts = SC_T(grow_ti++), .addr = 0x400000000ull, .bytes = 16 * s * s, .tid = 100, .step = stp);
    FREE(b, .ts = SC_T(grow_ti++), .addr = 0x200000000ull, .bytes = 65536 * s, .tid = 100, .step = stp);
}

static int grow_trace(const char *path, const uint64_t *sizes, size_t n)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    header(&b, 7000 + sizes[0]);
    sc_device(&b, 0, "Test GPU", 1 * GiB);
    sc_string(&b, 1, "nn.init");
    sc_string(&b, 2, "aten::linear");
    sc_string(&b, 3, "aten::softmax");
    sc_string(&b, 4, "aten::add");
    grow_ti = 0;
    wbegin(&b, SC_T(grow_ti++), 0, 0, 0, 0);
    for (size_t i = 0; i < n; i++)
        grow_step(&b, i, sizes[i], i == 0);
    wend(&b, SC_T(grow_ti++), 0, n - 1);
    stats_trailer(&b, SC_T(grow_ti++));
    return sc_close(&b, path);
}

static int sc_grow512(const char *p) { return grow_trace(p, (const uint64_t[]){ 512 }, 1); }
static int sc_grow1024(const char *p) { return grow_trace(p, (const uint64_t[]){ 1024 }, 1); }
static int sc_grow2048(const char *p) { return grow_trace(p, (const uint64_t[]){ 2048 }, 1); }
static int sc_grow_steps(const char *p) { return grow_trace(p, (const uint64_t[]){ 512, 1024, 2048 }, 3); }

/* ---- why CUDA ran out of memory (oom.c, gma_oom_explain) ---------------------------
 * Flight recorder dumps built by hand: a device of 80 GiB, weights made before the window
 * (baseline), steps whose activations are made and freed, then in step 7 activations held
 * and an OOM record with the driver's and the allocator's numbers. Each plants one cause:
 *   frag:     steps peak 66 GiB; step 7 holds 50, asks 16; free 12, reserved 65 (cached
 *             15): 16 > 12 but <= 12 + 15 -> fragmentation first (outside 80-12-65 = 3 GiB,
 *             under the 5% mark); frag_exp: the same, expandable_segments:True set.
 *   growth:   steps 4-6 peak 10, 20, 40 GiB; step 7 holds 40, asks 40 (needs 80); free 30,
 *             reserved 48 (cached 8: 40 > 38, not fragmentation), outside 2 GiB: the need
 *             (80) is over the 78 GiB left -> growth first.
 *   spike:    steps peak 30 GiB; step 7 holds 28, "aten::div" asks 50 (needs 78, the request
 *             is the difference 48 and more); free 45, reserved 32 (cached 4: 50 > 49) ->
 *             spike first.
 *   outside:  steps peak 45 GiB; step 7 holds 40, asks 12; free 5, reserved 45 (cached 5:
 *             12 > 10), outside 80-5-45 = 30 GiB (37%), 12 <= 5 + 5 + 30 -> outside first,
 *             then the spike (steady steps, 12 >= 52 - 45).
 */
static void header_cfg(sc_tb *b, uint64_t pid, const char *cfg)
{
    sc_head h = SC_HEAD(pid, SC_START);
    h.config = cfg;
    sc_header(b, &h);
}

typedef struct oomcase {
    const char *cfg;
    uint64_t weights, peaks[3], held, req, free, reserved;
    const char *op;
} oomcase;

static int oom_trace(const char *path, const oomcase *c)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    header_cfg(&b, 9000, c->cfg);
    sc_device(&b, 0, "Test GPU", 80 * GiB);
    sc_string(&b, 1, c->op);
    sc_string(&b, 2, "cuMemAlloc_v2");
    uint64_t t = 0;
    wbegin(&b, SC_T(t++), 0, 4, 1, c->weights);
    ALLOC(&b, .ts = SC_START + 1000000, .addr = 0x100000000000ull, .bytes = c->weights, .flags = GMT_MEMF_BASELINE,
          .tid = 100);
    for (uint64_t k = 0; k < 3; k++) {
        step(&b, SC_T(t++), 4 + k);
        ALLOC(&b, .ts = SC_T(t++), .addr = 0x200000000000ull, .bytes = c->peaks[k] - c->weights, .tid = 100,
              .step = 4 + k);
        FREE(&b, .ts = SC_T(t++), .addr = 0x200000000000ull, .bytes = c->peaks[k] - c->weights, .tid = 100,
             .step = 4 + k);
    }
    step(&b, SC_T(t++), 7);
    ALLOC(&b, .ts = SC_T(t++), .addr = 0x200000000000ull, .bytes = c->held - c->weights, .tid = 100, .step = 7);
    range(&b, 1, SC_T(t++), 100, 70, 0, 1);
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_OOM;
    r.u.oom = (gmt_oom){ .ts = SC_T(t++), .cause = GMT_OOM_FRAMEWORK, .dump = 1, .device = 0, .bytes = c->req,
                         .stream = 7, .tid = 100, .range = 70, .op = 1, .api = 2, .status = 2, .step = 7,
                         .flags = GMT_OOMF_DRIVER | GMT_OOMF_FRAMEWORK, .driver_free = c->free,
                         .driver_total = 80 * GiB, .fw_allocated = c->held, .fw_reserved = c->reserved,
                         .first_step = 4 };
    sc_put(&b, &r);
    wend(&b, SC_T(t++), 0, 7);
    stats_trailer(&b, SC_T(t++));
    return sc_close(&b, path);
}

#define OOM_CFG "schedule=on-oom"
static int sc_oom_frag(const char *p)
{
    return oom_trace(p, &(oomcase){ OOM_CFG, 40 * GiB, { 66 * GiB, 66 * GiB, 66 * GiB }, 50 * GiB, 16 * GiB,
                                    12 * GiB, 65 * GiB, "aten::mm" });
}
static int sc_oom_frag_exp(const char *p)
{
    return oom_trace(p, &(oomcase){ OOM_CFG ";PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", 40 * GiB,
                                    { 66 * GiB, 66 * GiB, 66 * GiB }, 50 * GiB, 16 * GiB, 12 * GiB, 65 * GiB,
                                    "aten::mm" });
}
static int sc_oom_growth(const char *p)
{
    return oom_trace(p, &(oomcase){ OOM_CFG ";PYTORCH_ALLOC_CONF=max_split_size_mb:128", 2 * GiB,
                                    { 10 * GiB, 20 * GiB, 40 * GiB }, 40 * GiB, 40 * GiB, 30 * GiB, 48 * GiB,
                                    "aten::bmm" });
}
static int sc_oom_spike(const char *p)
{
    return oom_trace(p, &(oomcase){ OOM_CFG, 10 * GiB, { 30 * GiB, 30 * GiB, 30 * GiB }, 28 * GiB, 50 * GiB,
                                    45 * GiB, 32 * GiB, "aten::div" });
}
static int sc_oom_outside(const char *p)
{
    return oom_trace(p, &(oomcase){ OOM_CFG, 40 * GiB, { 45 * GiB, 45 * GiB, 45 * GiB }, 40 * GiB, 12 * GiB,
                                    5 * GiB, 45 * GiB, "aten::cat" });
}

/* ---- train: a hand-built training step under the PyTorch bridge (categories) -----------
 * Thread 100, dev0, two steps; ranges of kind OP (1) and MODULE (2); blocks in MiB:
 *   t1   W  8  no range, before training              parameter (kept)
 *   t2-4 aten::_to_copy: X 1, HtoD copy at t3         input (freed t22)
 *   t5   module GPT begins: training begins
 *   t6-9 aten::mm: A1 4 (its first block), WS 2 (its second, kept)   activation, workspace
 *   t10-13 aten::add: T1 3, freed in the op           temporary
 *   t14-16 aten::clone: L1 1, never freed             other: the planted leak
 *   t18-21 MmBackward0: G 8; A1 freed there           gradient; A1 activation
 *   t23-28 Optimizer.step: S1 8, S2 8 (Adam's state, kept), T2 2 freed in the step
 *   t29-31 Optimizer.zero_grad: G freed (set_to_none)
 *   step 1 repeats it 31 ms later: X2 1, A2 4 (mm, first block), L2 1, G2 8 (t50), A2
 *   freed in MmBackward0 at t51, X2 freed t53, T3 2 in the step, G2 freed in zero_grad t61.
 * Live bytes peak at t50 (G2 made, 60.000 ms): W 8 + WS 2 + L1 1 + S1 8 + S2 8 + X2 1
 * + A2 4 + G2 8 + L2 1 = 41 MiB; the step-0 highs are lower (t19: 24, t26: 37), t57: 38.
 * At the peak by category: parameter 8, gradient 8, optimizer state 16, activation 4,
 * input 1, workspace 2, other 2 (L1 + L2), temporary 0.
 * Still live at the window's end: W, WS, S1, S2 (26 MiB in 4: no leaks), L1 and L2
 * (the leaks, 2 MiB in 2).
 * Blocks carry their step (0 before t32, 1 from t32): the peak is in step 1. Net per step:
 * step 0 +27 (made W 8, X 1, A1 4, WS 2, T1 3, L1 1, G 8, S1 8, S2 8, T2 2 = 45; freed T1,
 * A1, X, T2, G = 18), step 1 +1 (made X2 1, A2 4, L2 1, G2 8, T3 2 = 16; freed A2, X2, T3,
 * G2 = 15).
 * Modules (the default table: the trace has a module range): GPT (t5-17, t36-48) made A1,
 * WS, T1, L1, A2, L2: 15 MiB in 6, freed T1, A1, A2 = 11, at the peak WS, L1, A2, L2 = 8;
 * (no module) made the other 9: 46, freed 22, at the peak W, S1, S2, X2, G2 = 33 in 5.
 * The peak's allocation G2 is under MmBackward0 in no module: "module (no module)".
 * Leaks by module: GPT 2 in 2. Growth: GPT leaked 1 MiB in each of steps 0 and 1: "2 (0-1),
 * 1.00 MiB per step, 2.00 MiB, 2 allocs".
 */
static void krange(sc_tb *b, uint64_t ts, uint64_t id, uint64_t parent, uint64_t name, uint64_t kind)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_RANGE_BEGIN;
    r.u.range.ts = ts;
    r.u.range.tid = 100;
    r.u.range.id = id;
    r.u.range.parent = parent;
    r.u.range.name = name;
    r.u.range.kind = kind;
    sc_put(b, &r);
}

static void kend(sc_tb *b, uint64_t ts, uint64_t id) { range(b, 0, ts, 100, id, 0, 0); }

static void htod_copy(sc_tb *b, uint64_t ts, uint64_t bytes)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_MEMCPY;
    r.u.copy.start = ts;
    r.u.copy.end = ts + 1000;
    r.u.copy.stream = 7;
    r.u.copy.bytes = bytes;
    r.u.copy.copy_kind = GMT_COPY_HTOD;
    r.u.copy.src_kind = GMT_MEMKIND_PAGEABLE;
    r.u.copy.dst_kind = GMT_MEMKIND_DEVICE;
    r.u.copy.tid = 100;
    sc_put(b, &r);
}

#define TR_MM 3
#define TR_GPT 2
#define TR_MMB 4
#define TR_STEP 5
#define TR_ZERO 6
#define TR_COPY 7
#define TR_ADD 8
#define TR_CLONE 10

/* A block at event i, with the step the bridge stamps: step 1 begins just before t32. */
static void tr_blk(sc_tb *b, int i, unsigned action, uint64_t mib_at, uint64_t mib, uint64_t range)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_BLOCK;
    r.u.block.ts = SC_T(i);
    r.u.block.action = action;
    r.u.block.address = 0x10000000ull + mib_at * MiB;
    r.u.block.bytes = mib * MiB;
    r.u.block.requested = action == GMT_BLK_ALLOC ? mib * MiB - 100 : 0;
    r.u.block.stream = 7;
    r.u.block.tid = 100;
    r.u.block.range = range;
    r.u.block.step = i >= 32;
    sc_put(b, &r);
}

static void tr_alloc(sc_tb *b, int i, uint64_t mib_at, uint64_t mib, uint64_t range)
{
    tr_blk(b, i, GMT_BLK_ALLOC, mib_at, mib, range);
}

static void tr_free(sc_tb *b, int i, uint64_t mib_at, uint64_t mib, uint64_t range)
{
    tr_blk(b, i, GMT_BLK_FREE_REQUESTED, mib_at, mib, range);
}

int sc_train(const char *path)
{
    sc_tb b;
    if (sc_open(&b, path) != 0)
        return -1;
    header(&b, 4444);
    sc_device(&b, 0, "Test GPU", 16 * GiB);
    sc_string(&b, TR_GPT, "GPT");
    sc_string(&b, TR_MM, "aten::mm");
    sc_string(&b, TR_MMB, "MmBackward0");
    sc_string(&b, TR_STEP, "Optimizer.step#Adam.step");
    sc_string(&b, TR_ZERO, "Optimizer.zero_grad#Adam.zero_grad");
    sc_string(&b, TR_COPY, "aten::_to_copy");
    sc_string(&b, TR_ADD, "aten::add");
    sc_string(&b, TR_CLONE, "aten::clone");
    wbegin(&b, SC_T(0), 0, 0, 0, 0);
    step(&b, SC_T(0), 0);
    /* addresses: MiB offsets, each block its own */
    tr_alloc(&b, 1, 0, 8, 0);                   /* W */
    for (int s = 0; s < 2; s++) {
        int o = s * 31;                          /* step 1's events are step 0's + 31 */
        uint64_t id = 1 + (uint64_t)s * 20;
        uint64_t xa = s ? 100 : 10, aa = s ? 110 : 20, la = s ? 120 : 30, ga = s ? 130 : 40, ta = s ? 140 : 50;
        krange(&b, SC_T(2 + o), id, 0, TR_COPY, GMT_RANGE_OP);
        tr_alloc(&b, 3 + o, xa, 1, id);          /* X */
        htod_copy(&b, SC_T(3 + o) + 100, 1 * MiB);
        kend(&b, SC_T(4 + o), id);
        krange(&b, SC_T(5 + o), id + 1, 0, TR_GPT, GMT_RANGE_MODULE);
        krange(&b, SC_T(6 + o), id + 2, id + 1, TR_MM, GMT_RANGE_OP);
        tr_alloc(&b, 7 + o, aa, 4, id + 2);      /* A */
        if (!s)
            tr_alloc(&b, 8, 60, 2, id + 2);      /* WS: the mm's second block */
        kend(&b, SC_T(9 + o), id + 2);
        if (!s) {
            krange(&b, SC_T(10), id + 3, id + 1, TR_ADD, GMT_RANGE_OP);
            tr_alloc(&b, 11, 70, 3, id + 3);     /* T1 */
            tr_free(&b, 12, 70, 3, id + 3);
            kend(&b, SC_T(13), id + 3);
        }
        krange(&b, SC_T(14 + o), id + 4, id + 1, TR_CLONE, GMT_RANGE_OP);
        tr_alloc(&b, 15 + o, la, 1, id + 4);     /* L: the planted leak */
        kend(&b, SC_T(16 + o), id + 4);
        kend(&b, SC_T(17 + o), id + 1);
        krange(&b, SC_T(18 + o), id + 5, 0, TR_MMB, GMT_RANGE_OP);
        tr_alloc(&b, 14 + 5 + o, ga, 8, id + 5); /* G */
        tr_free(&b, 20 + o, aa, 4, id + 5);      /* A, in backward */
        kend(&b, SC_T(21 + o), id + 5);
        tr_free(&b, 22 + o, xa, 1, 0);           /* X */
        krange(&b, SC_T(23 + o), id + 6, 0, TR_STEP, GMT_RANGE_OP);
        if (!s) {
            tr_alloc(&b, 24, 80, 8, id + 6);     /* S1 */
            tr_alloc(&b, 25, 90, 8, id + 6);     /* S2 */
        }
        tr_alloc(&b, 26 + o, ta, 2, id + 6);     /* T2, T3 */
        tr_free(&b, 27 + o, ta, 2, id + 6);
        kend(&b, SC_T(28 + o), id + 6);
        krange(&b, SC_T(29 + o), id + 7, 0, TR_ZERO, GMT_RANGE_OP);
        tr_free(&b, 30 + o, ga, 8, id + 7);      /* G: set_to_none */
        kend(&b, SC_T(31 + o), id + 7);
        step(&b, SC_T(32 + o) - 500000, (uint64_t)s + 1);
    }
    wend(&b, SC_T(64), 0, 2);
    stats_trailer(&b, SC_T(65));
    return sc_close(&b, path);
}

static int sc_rank0(const char *p) { return sc_rank(p, 0, 4); }
static int sc_rank1(const char *p) { return sc_rank(p, 1, 4); }
static int sc_rank2(const char *p) { return sc_rank(p, 2, 4); }
static int sc_rank3(const char *p) { return sc_rank(p, 3, 4); }
static int sc_rank_norank(const char *p) { return sc_rank(p, -1, -1); }
static int sc_rank_world8(const char *p) { return sc_rank(p, 1, 8); }

int sc_write_all(const char *dir)
{
    static const struct {
        const char *name;
        int (*fn)(const char *);
    } all[] = {
        { "basic", sc_basic },     { "launch", sc_launch },         { "multiwin", sc_multiwin },     { "threads", sc_threads },
        { "nowindow", sc_nowindow }, { "twodev", sc_twodev },       { "edge", sc_edge },
        { "torchnames", sc_torchnames }, { "attn_naive", sc_attn_naive }, { "attn_flash", sc_attn_flash },
        { "truncated", sc_truncated },   { "damaged", sc_damaged },       { "nochecksum", sc_nochecksum },
        { "newer", sc_newer },     { "garbage", sc_garbage },       { "empty", sc_empty },
        { "rank0", sc_rank0 },     { "rank1", sc_rank1 },           { "rank2", sc_rank2 },
        { "rank3", sc_rank3 },     { "norank", sc_rank_norank },    { "world8", sc_rank_world8 },
        { "torch", sc_torch },     { "grow512", sc_grow512 },       { "grow1024", sc_grow1024 },
        { "grow2048", sc_grow2048 }, { "grow_steps", sc_grow_steps }, { "oom_frag", sc_oom_frag },
        { "oom_frag_exp", sc_oom_frag_exp }, { "oom_growth", sc_oom_growth }, { "oom_spike", sc_oom_spike },
        { "oom_outside", sc_oom_outside }, { "hostile", sc_hostile }, { "huge", sc_huge },
        { "modules", sc_modules }, { "modules_b", sc_modules_b },
        { "train", sc_train },     { "oom_modules", sc_oom_modules }, { "modules_owned", sc_modules_owned },
    };
    char path[4096];
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s.gmt", dir, all[i].name);
        if (all[i].fn(path) != 0) {
            fprintf(stderr, "writing %s failed\n", path);
            return -1;
        }
    }
    return 0;
}
