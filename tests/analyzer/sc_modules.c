/*
 * modules: a PyTorch bridge trace with module ranges (format 2.3). Device 0
 * (1 GiB); forward on thread 100, backward on autograd's thread 200, a data
 * thread 300 with an op under no module. Times: event i at 10 + i ms. Every
 * block is an allocation (the blocks layer).
 *
 * Module paths: M (root, depth 1), M.enc (a container, never called), M.enc.0,
 * M.enc.0.fc, M.head. Frames: F1 "train.py:12 main", F2 "model.py:20 forward",
 * F3 "model.py:31 forward".
 *
 *  i  thread record                                       live   owner (module; line)
 *  1  100 MODULE M (r1)
 *  2  300 OP aten::zeros (r10, no parent)
 *  3  100 ALLOC A 1 MiB in r1, F1                            1   M; F1
 *  4  100 MODULE M.enc.0 (r2 in r1); 5 OP aten::mm (r3 in r2)
 *  6  100 ALLOC B 4 MiB in r3, F2                            5   M.enc.0 (the op's module); F2
 *  7  100 end r3; 8 MODULE M.enc.0.fc (r4 in r2); 9 OP aten::addmm (r5 in r4)
 * 10  100 ALLOC C 2 MiB in r5, F3                            7   M.enc.0.fc; F3
 * 11  300 ALLOC I 1 MiB in r10, F1                           8   (no module): M is open on thread 100 only
 * 12  100 end r5, r4; FREE B                                 4
 * 13  100 end r2; MODULE M.head (r6 in r1)
 * 14  100 ALLOC D 8 MiB in r6, F2                           12   M.head; F2
 * 15  100 end r6, r1; ALLOC E 3 MiB, no range, F1           15   (no module); F1
 * 16  200 MODULE_BWD M.head (r7); OP (r8 in r7)
 * 17  200 ALLOC G 16 MiB in r8, no frame                    31   M.head (backward); (no line)
 * 18  200 end r8, r7; MODULE_BWD M.enc.0.fc (r9)
 * 19  200 ALLOC H 2 MiB in r9, F3                           33   M.enc.0.fc (backward); F3  PEAK
 * 20  200 FREE G; end r9                                    17
 * 21  100 FREE D                                             9
 * 22  100 FREE C                                             7
 * 23  300 FREE I; end r10                                    6
 *
 * Peak 33 MiB at 29.000 ms: A 1, C 2, I 1, D 8, E 3, G 16, H 2 live.
 * --by module, self (alloc / freed / at the peak, MiB; freed = of its own allocations):
 *   (no module) 4 (E, I) / 1 / 4;  M 1 / 0 / 1 (1 call);  M.enc 0 (0 calls);
 *   M.enc.0 4 / 4 / 0;  M.enc.0.fc 2 / 2 / 2;  M.head 8 / 8 / 8;
 *   M.head (backward) 16 / 16 / 16;  M.enc.0.fc (backward) 2 / 0 / 2; M, M.enc,
 *   M.enc.0 (backward): 0 calls, nothing of their own.
 * total = self + descendants': M.enc.0 6 / 6 / 2 (2 allocs); M.enc 6 / 6 / 2;
 *   M 1 + 6 + 8 = 15 / 14 / 11 (4 allocs); M.enc.0 (backward), M.enc (backward)
 *   2 / 0 / 2; M (backward) 18 / 16 / 18. Roots: 11 + 18 + (no module) 4 = 33, the peak.
 * Ranked by total at the peak: M (backward) 18, M.head (backward) 16, M 11, M.head 8,
 *   (no module) 4, then the 2s by name (' ' sorts before '.'): M.enc, M.enc (backward),
 *   M.enc.0, M.enc.0 (backward), M.enc.0.fc, M.enc.0.fc (backward).
 * --depth 2: M.enc's self takes M.enc.0's and M.enc.0.fc's: 6 / 6 / 2 (2 allocs); M.enc
 *   (backward) self 2 / 0 / 2; totals unchanged; 7 rows.
 * --by line (allocs, allocated / freed / peak, module of most bytes):
 *   (no line)  1, 16 / 16 / 16, M.head (backward)
 *   model.py:20 forward  2, 12 / 12 / 8 (D), M.head (8 > 4)
 *   train.py:12 main  3, 5 / 1 / 5, (no module) (4 > 1)
 *   model.py:31 forward  2, 4 / 2 / 4, M.enc.0.fc (2 = 2: the first made)
 * The report names the owners (owners.h), whatever --by:
 *   Peak line: "...; range M.enc.0.fc; module M.enc.0.fc (backward); line model.py:31 forward":
 *   H made the peak, in r9 (MODULE_BWD M.enc.0.fc), frame F3.
 *   Live at the peak by module: M.head (backward) 16 (G), M.head 8 (D), (no module) 4 in 2
 *   (I, E), M.enc.0.fc 2 (C), M.enc.0.fc (backward) 2 (H), M 1 (A); by line: (no line) 16 (G),
 *   F2 8 (D), F1 5 in 3 (A, I, E), F3 4 in 2 (C, H).
 *   Leaks: live at the end are A, E and H; H is a gradient kept by design, so A 1 (M, F1) and
 *   E 3 ((no module), F1): by module (no module) 3, M 1; by line F1 4 in 2. One step: no growth.
 *   CSV and JSON carry the same: peak module= line=, live_at_peak...module/line, leaks.module/line;
 *   the peak's categories (c42's split: gradient 2, temporary 27, other 4) in every format.
 *   Without --by the first table is --by module: the trace has module ranges.
 * modules_b: D is 24 MiB: peak 49 MiB; M.head 8 -> 24 and M 11 -> 27 at the peak, the
 *   rest as in modules: --diff ranks M and M.head first (+16 MiB held at the peak).
 */
#include "sc_modules.h"

#include <stdio.h>
#include <string.h>

#include "gmt_io.h"
#include "sc_writer.h"

#define MIB (1ull << 20)
#define T0 1000000000ull
#define T(i) (T0 + 10000000ull + (uint64_t)(i) * 1000000ull)

enum { S_M = 1, S_ENC0, S_FC, S_HEAD, S_ZEROS, S_MM, S_ADDMM, S_MMBWD, S_F1, S_F2, S_F3 };

static void rbegin(sc_tb *b, uint64_t ts, uint64_t tid, uint64_t id, uint64_t parent, uint64_t name, uint64_t kind)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_RANGE_BEGIN;
    r.u.range = (gmt_range){ .ts = ts, .tid = tid, .id = id, .parent = parent, .name = name, .kind = kind };
    sc_put(b, &r);
}

static void rend(sc_tb *b, uint64_t ts, uint64_t tid, uint64_t id)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_RANGE_END;
    r.u.range = (gmt_range){ .ts = ts, .tid = tid, .id = id };
    sc_put(b, &r);
}

static void blk(sc_tb *b, uint64_t ts, unsigned action, uint64_t addr, uint64_t mib, uint64_t tid, uint64_t range,
                uint64_t frame)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_BLOCK;
    r.u.block.ts = ts;
    r.u.block.action = action;
    r.u.block.address = addr;
    r.u.block.bytes = mib * MIB;
    r.u.block.requested = action == GMT_BLK_ALLOC ? mib * MIB : 0;
    r.u.block.stream = 7;
    r.u.block.tid = tid;
    r.u.block.range = range;
    r.u.block.frame = frame;
    sc_put(b, &r);
}

/* Opens path and writes the scenarios' header (pid, a whole-run schedule)
 * and their one device (1 GiB). 0, or -1 when the file cannot be made. */
static int open_trace(sc_tb *b, const char *path, uint64_t pid)
{
    if (sc_open(b, path) != 0)
        return -1;
    sc_header(b, &SC_HEAD(pid, T0));
    sc_device(b, 0, NULL, 1ull << 30);
    return 0;
}

/* Writes the trailer (records: those before it) and closes the file: 0, or
 * -1 with a message on stderr. */
static int close_trace(sc_tb *b, const char *path, uint64_t ts, uint64_t records)
{
    sc_trailer(b, ts, records);
    return sc_close(b, path);
}

#define ALLOC_(ts, a, mib, tid, rg, fr) blk(&b, ts, GMT_BLK_ALLOC, a, mib, tid, rg, fr)
#define FREE_(ts, a, mib, tid, rg) blk(&b, ts, GMT_BLK_FREE_REQUESTED, a, mib, tid, rg, 0)

int sc_modules_write(const char *path, uint64_t head_mib)
{
    sc_tb b;
    if (open_trace(&b, path, 4141) != 0)
        return -1;
    static const char *const names[] = { "M", "M.enc.0", "M.enc.0.fc", "M.head", "aten::zeros", "aten::mm",
                                         "aten::addmm", "MmBackward0", "train.py:12 main", "model.py:20 forward",
                                         "model.py:31 forward" };
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        sc_string(&b, i + 1, names[i]);
    const uint64_t A = 0x10000000, B = A + 0x1000000, C = B + 0x1000000, D = C + 0x1000000, E = D + 0x2000000,
                   G = E + 0x1000000, H = G + 0x2000000, I = H + 0x1000000;
    rbegin(&b, T(1), 100, 1, 0, S_M, GMT_RANGE_MODULE);
    rbegin(&b, T(2), 300, 10, 0, S_ZEROS, GMT_RANGE_OP);
    ALLOC_(T(3), A, 1, 100, 1, S_F1);
    rbegin(&b, T(4), 100, 2, 1, S_ENC0, GMT_RANGE_MODULE);
    rbegin(&b, T(5), 100, 3, 2, S_MM, GMT_RANGE_OP);
    ALLOC_(T(6), B, 4, 100, 3, S_F2);
    rend(&b, T(7), 100, 3);
    rbegin(&b, T(8), 100, 4, 2, S_FC, GMT_RANGE_MODULE);
    rbegin(&b, T(9), 100, 5, 4, S_ADDMM, GMT_RANGE_OP);
    ALLOC_(T(11), I, 1, 300, 10, S_F1);
    rend(&b, T(12), 100, 5);
    rend(&b, T(12) + 1000, 100, 4);
    /* C's block comes after its op and module have ended, as the bridge's
     * blocks do (their sizes wait for the allocator's next reading): it
     * still names its op's range r5, so its module is M.enc.0.fc */
    ALLOC_(T(10), C, 2, 100, 5, S_F3);
    FREE_(T(12) + 2000, B, 4, 100, 2);
    rend(&b, T(13), 100, 2);
    rbegin(&b, T(13) + 1000, 100, 6, 1, S_HEAD, GMT_RANGE_MODULE);
    ALLOC_(T(14), D, head_mib, 100, 6, S_F2);
    rend(&b, T(15), 100, 6);
    rend(&b, T(15) + 1000, 100, 1);
    ALLOC_(T(15) + 2000, E, 3, 100, 0, S_F1);
    rbegin(&b, T(16), 200, 7, 0, S_HEAD, GMT_RANGE_MODULE_BWD);
    rbegin(&b, T(16) + 1000, 200, 8, 7, S_MMBWD, GMT_RANGE_OP);
    ALLOC_(T(17), G, 16, 200, 8, 0);
    rend(&b, T(18), 200, 8);
    rend(&b, T(18) + 1000, 200, 7);
    rbegin(&b, T(18) + 2000, 200, 9, 0, S_FC, GMT_RANGE_MODULE_BWD);
    ALLOC_(T(19), H, 2, 200, 9, S_F3);
    FREE_(T(20), G, 16, 200, 9);
    rend(&b, T(20) + 1000, 200, 9);
    FREE_(T(21), D, head_mib, 100, 0);
    FREE_(T(22), C, 2, 100, 0);
    FREE_(T(23), I, 1, 300, 10);
    rend(&b, T(23) + 1000, 300, 10);
    return close_trace(&b, path, T(24), 40);
}

int sc_modules(const char *path) { return sc_modules_write(path, 8); }
int sc_modules_b(const char *path) { return sc_modules_write(path, 24); }

/*
 * oom_modules: a failure inside a module (the OOM section names modules and
 * lines). Device 0 (1 GiB), thread 100, events at 10 + i ms:
 *  1 MODULE M (r1);  2 ALLOC A 1 MiB in r1, F1 "train.py:12 main"
 *  3 MODULE M.fc (r2 in r1); 4 OP aten::mm (r3 in r2); 5 ALLOC B 4 MiB in r3, F2 "model.py:20 forward"
 *  6 OOM: the framework's allocator refused 64 MiB in r3 (aten::mm), allocated 5 MiB, reserved 6 MiB
 *  7 end r3, r2, r1
 * The failure: asked 64 MiB ... in "aten::mm", module M.fc (r3's module); held 5 MiB in 2;
 *   by owner aten::mm 4 MiB, M 1 MiB; by module (2 modules) M.fc 4 MiB 1, M 1 MiB 1;
 *   by line (2 lines) model.py:20 forward 4 MiB 1, train.py:12 main 1 MiB 1.
 * The report without --by opens on --by module: M.fc self 4 (total 4), M self 1 total 5.
 *   Peak 5 MiB at 15.000 ms, made by B: "module M.fc; line model.py:20 forward"; A and B
 *   are live at the end (leaks), grouped by module and line as at the failure; one step: no growth.
 */
int sc_oom_modules(const char *path)
{
    sc_tb b;
    if (open_trace(&b, path, 4142) != 0)
        return -1;
    gmt_record r;
    static const char *const names[] = { "M", "M.fc", "aten::mm", "train.py:12 main", "model.py:20 forward" };
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        sc_string(&b, i + 1, names[i]);
    const uint64_t A = 0x10000000, B = A + 0x1000000;
    rbegin(&b, T(1), 100, 1, 0, 1, GMT_RANGE_MODULE);
    ALLOC_(T(2), A, 1, 100, 1, 4);
    rbegin(&b, T(3), 100, 2, 1, 2, GMT_RANGE_MODULE);
    rbegin(&b, T(4), 100, 3, 2, 3, GMT_RANGE_OP);
    ALLOC_(T(5), B, 4, 100, 3, 5);
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_OOM;
    r.u.oom = (gmt_oom){ .ts = T(6), .cause = GMT_OOM_FRAMEWORK, .device = 0, .bytes = 64 * MIB, .stream = 7,
                         .tid = 100, .range = 3, .op = 3, .flags = GMT_OOMF_FRAMEWORK, .fw_allocated = 5 * MIB,
                         .fw_reserved = 6 * MIB };
    sc_put(&b, &r);
    rend(&b, T(7), 100, 3);
    rend(&b, T(7) + 1000, 100, 2);
    rend(&b, T(7) + 2000, 100, 1);
    return close_trace(&b, path, T(8), 14);
}

/*
 * modules_owned: parameters and buffers made under .cuda(), outside every
 * module range, then named by the bridge's OWNER records at each module's
 * first forward. Device 0 (1 GiB), thread 100, events at 10 + i ms, no
 * window records (the whole trace is one window, every allocation counted).
 *
 *  1-4  ALLOC W1 4 MiB, B1 1 MiB, W2 2 MiB, RM 1 MiB, no range        8
 *  5    MODULE Net (r1); 6 MODULE Net.fc1 (r2 in r1)
 *  7    OWNER W1 Net.fc1 PARAMETER 4 MiB; OWNER B1 Net.fc1 PARAMETER 1,000,000 B
 *  8    OP aten::addmm (r3 in r2); 9 ALLOC X1 8 MiB in r3                16
 * 10    end r3, r2
 * 11    MODULE Net.fc2 (r4 in r1); 12 OWNER W2 Net.fc2 PARAMETER 2 MiB, and an
 *       OWNER of an address where nothing is live (ignored)
 * 13    ALLOC X2 2 MiB in r4                                              18
 * 14    end r4; 15 MODULE Net.head (r5 in r1)
 * 16    OWNER W1 Net.head PARAMETER (a tied weight: W1 stays Net.fc1's); end r5
 * 17    MODULE Net.norm (r6 in r1); 18 OWNER RM Net.norm BUFFER 1 MiB; end r6, r1
 * 19-21 FREE X1, X2, W2                                                    6
 * 22    ALLOC W2b 2 MiB at W2's address, no range (no OWNER: (no module))  8
 * 23    ALLOC X3 16 MiB, no range                                         24  PEAK
 * 24-28 FREE X3, W1, B1, RM, W2b: the teardown at exit                     0
 *
 * Peak 24 MiB at 33.000 ms: W1 4, B1 1, RM 1, W2b 2, X3 16. The parameters
 * freed after the peak still count at it.
 * --by module, self (alloc / freed / at the peak / params held at the peak):
 *   (no module) 18 MiB in 2 (W2b, X3) / 18 MiB in 2 / 18 MiB / 0
 *   Net.fc1 13 MiB in 3 (W1, B1, X1) / 13 MiB in 3 / 5 MiB / 4 MiB + 1,000,000 = 5,194,304 B
 *   Net.fc2 4 MiB in 2 (W2, X2) / 4 MiB in 2 / 0 / 0 (W2 is freed; W2b was never named)
 *   Net.norm 1 / 1 MiB / 1 MiB / 1,048,576 B;  Net and Net.head: a call each, nothing of their own
 *   Net total: 18 MiB in 6 / 18 MiB / 6 MiB / 6,242,880 B. Roots: 6 + 18 = 24, the peak.
 * Ranked by total at the peak: (no module) 18, Net 6, Net.fc1 5, Net.norm 1, then Net.fc2
 *   and Net.head (0, by name).
 */
static void owner(sc_tb *b, uint64_t ts, uint64_t addr, uint64_t bytes, uint64_t name, uint64_t flags)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_BLOCK;
    r.u.block.ts = ts;
    r.u.block.action = GMT_BLK_OWNER;
    r.u.block.address = addr;
    r.u.block.bytes = bytes;
    r.u.block.tid = 100;
    r.u.block.flags = flags;
    r.u.block.frame = name;
    sc_put(b, &r);
}

int sc_modules_owned(const char *path)
{
    sc_tb b;
    if (open_trace(&b, path, 4143) != 0)
        return -1;
    enum { N_NET = 1, N_FC1, N_FC2, N_HEAD, N_NORM, N_ADDMM };
    static const char *const names[] = { "Net", "Net.fc1", "Net.fc2", "Net.head", "Net.norm", "aten::addmm" };
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        sc_string(&b, i + 1, names[i]);
    const uint64_t W1 = 0x10000000, B1 = W1 + 0x400000, W2 = B1 + 0x100000, RM = W2 + 0x200000,
                   X1 = RM + 0x100000, X2 = X1 + 0x800000, X3 = X2 + 0x200000;
    ALLOC_(T(1), W1, 4, 100, 0, 0);
    ALLOC_(T(2), B1, 1, 100, 0, 0);
    ALLOC_(T(3), W2, 2, 100, 0, 0);
    ALLOC_(T(4), RM, 1, 100, 0, 0);
    rbegin(&b, T(5), 100, 1, 0, N_NET, GMT_RANGE_MODULE);
    rbegin(&b, T(6), 100, 2, 1, N_FC1, GMT_RANGE_MODULE);
    owner(&b, T(7), W1, 4 * MIB, N_FC1, GMT_BLKF_PARAMETER);
    owner(&b, T(7) + 1000, B1, 1000000, N_FC1, GMT_BLKF_PARAMETER);
    rbegin(&b, T(8), 100, 3, 2, N_ADDMM, GMT_RANGE_OP);
    ALLOC_(T(9), X1, 8, 100, 3, 0);
    rend(&b, T(10), 100, 3);
    rend(&b, T(10) + 1000, 100, 2);
    rbegin(&b, T(11), 100, 4, 1, N_FC2, GMT_RANGE_MODULE);
    owner(&b, T(12), W2, 2 * MIB, N_FC2, GMT_BLKF_PARAMETER);
    owner(&b, T(12) + 1000, 0x7000, 4096, N_FC2, GMT_BLKF_PARAMETER);
    ALLOC_(T(13), X2, 2, 100, 4, 0);
    rend(&b, T(14), 100, 4);
    rbegin(&b, T(15), 100, 5, 1, N_HEAD, GMT_RANGE_MODULE);
    owner(&b, T(16), W1, 4 * MIB, N_HEAD, GMT_BLKF_PARAMETER);
    rend(&b, T(16) + 1000, 100, 5);
    rbegin(&b, T(17), 100, 6, 1, N_NORM, GMT_RANGE_MODULE);
    owner(&b, T(18), RM, 1 * MIB, N_NORM, GMT_BLKF_BUFFER);
    rend(&b, T(18) + 1000, 100, 6);
    rend(&b, T(18) + 2000, 100, 1);
    FREE_(T(19), X1, 8, 100, 0);
    FREE_(T(20), X2, 2, 100, 0);
    FREE_(T(21), W2, 2, 100, 0);
    ALLOC_(T(22), W2, 2, 100, 0, 0);
    ALLOC_(T(23), X3, 16, 100, 0, 0);
    FREE_(T(24), X3, 16, 100, 0);
    FREE_(T(25), W1, 4, 100, 0);
    FREE_(T(26), B1, 1, 100, 0);
    FREE_(T(27), RM, 1, 100, 0);
    FREE_(T(28), W2, 2, 100, 0);
    return close_trace(&b, path, T(29), 43);
}
