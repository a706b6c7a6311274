/*
 * The bridge trace of tl_bridge.h. Device 0, one host thread (tid 100);
 * a block made after the thread's kernel n belongs to kernel n + 1, the
 * thread's next launch. Times are ms after the trace start.
 *
 *   10  driver: 12 MiB used (the CUDA context)
 *   11  cudaMalloc WS 8 MiB                      outside the allocator; driver 20 MiB
 *   12  step 1
 *   13  cudaMalloc S1 20 MiB + SEGMENT_ALLOC S1  reserved 20; driver 40 MiB
 *   14  block S1          4 MiB  (kernel 1 gemm_kernel)
 *   15  kernel 1 gemm_kernel
 *   16  block S1+4 MiB   10 MiB  (kernel 2 softmax_kernel)
 *   17  kernel 2 softmax_kernel
 *   18  cudaMalloc S2 20 MiB + SEGMENT_ALLOC S2  reserved 40; driver 60 MiB
 *   19  block S2         12 MiB  (kernel 3 softmax_kernel)       THE PEAK
 *   20  kernel 3 softmax_kernel
 *   21  free S1+4 MiB (requested and completed)
 *   22  cudaMalloc NC 2 MiB                      outside the allocator; driver 62 MiB
 *   23  free S2 (requested and completed)
 *   24  SEGMENT_FREE S2 + cudaFree S2 (empty_cache)  reserved 20; driver 42 MiB
 *   25  step 2
 *   26  block S1+4 MiB    6 MiB  (kernel 4 gemm_kernel)
 *   27  kernel 4 gemm_kernel
 *   29  free S1+4 MiB
 *
 * So: 4 tensor bands (4, 10, 12, 6 MiB); at the peak (19 ms) 26 MiB live,
 * softmax_kernel 22 MiB and gemm_kernel 4 MiB; 2 segment bands, 40 MiB
 * reserved at the peak (14 MiB of it in no tensor); CUDA saw 4
 * allocations, 2 of them the segments: 2 bands outside the allocator,
 * 8 MiB of them at the peak (CUDA's 48 less the 40 reserved). Reserve and
 * outside together are highest from 22 to 24 ms: 40 + 8 + 2 = 50 MiB; the
 * driver (12 MiB of context and CUDA's allocations) at 62 MiB.
 */
#include "tl_bridge.h"

#include <stdio.h>
#include <string.h>

#include "gmt_io.h"
#include "sc_writer.h"

typedef struct tw {
    sc_tb t;
    uint64_t shift; /* added to every time, the start's too */
} tw;

static uint64_t t_of(const tw *b, uint64_t i) { return TLB_T(i) + b->shift; }

static void put(tw *b, const gmt_record *r) { sc_put(&b->t, r); }

static void header(tw *b)
{
    sc_header(&b->t, &SC_HEAD(4321, TLB_START + b->shift));
    sc_device(&b->t, 0, NULL, 80ull << 30);
    sc_string(&b->t, 1, "gemm_kernel");
    sc_string(&b->t, 2, "softmax_kernel");
}

static void cuda_src(tw *b, gmt_type type, uint64_t i, uint64_t addr, uint64_t bytes, uint64_t seq, uint64_t step,
                     uint64_t src)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = type;
    r.u.mem = (gmt_mem){ .ts = t_of(b, i), .address = addr, .bytes = bytes, .kind = GMT_MEMKIND_DEVICE,
                         .source = src, .corr = 500 + i, .tid = 100, .seq = seq, .step = step };
    put(b, &r);
}

static void cuda(tw *b, gmt_type type, uint64_t i, uint64_t addr, uint64_t bytes, uint64_t seq, uint64_t step)
{
    cuda_src(b, type, i, addr, bytes, seq, step, GMT_SRC_MALLOC);
}

static void block(tw *b, unsigned action, uint64_t i, uint64_t addr, uint64_t bytes, uint64_t seq, uint64_t step)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_BLOCK;
    r.u.block = (gmt_block){ .ts = t_of(b, i), .action = action, .address = addr, .bytes = bytes, .stream = 0x5000,
                             .tid = 100, .seq = seq, .step = step, .requested = bytes };
    put(b, &r);
}

static void kernel(tw *b, uint64_t i, uint64_t name, uint64_t seq, uint64_t step)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_KERNEL;
    r.u.kernel.start = t_of(b, i);
    r.u.kernel.end = t_of(b, i) + 500000;
    r.u.kernel.stream = 7;
    r.u.kernel.corr = 900 + seq;
    r.u.kernel.name = name;
    r.u.kernel.grid[0] = r.u.kernel.grid[1] = r.u.kernel.grid[2] = 1;
    r.u.kernel.block[0] = 256;
    r.u.kernel.block[1] = r.u.kernel.block[2] = 1;
    r.u.kernel.tid = 100;
    r.u.kernel.seq = seq;
    r.u.kernel.step = step;
    put(b, &r);
}

static void step(tw *b, uint64_t i, uint64_t n)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_STEP;
    r.u.step = (gmt_step){ .ts = t_of(b, i), .step = n, .phase = GMT_PHASE_ACTIVE, .source = GMT_STEPSRC_API };
    put(b, &r);
}

static void driver(tw *b, uint64_t i, uint64_t used)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_MEMSAMPLE;
    r.u.sample = (gmt_memsample){ .ts = t_of(b, i), .used = used, .total = 80ull << 30, .free_ = (80ull << 30) - used };
    put(b, &r);
}

static void end(tw *b, uint64_t i) { sc_trailer(&b->t, t_of(b, i), 40); }

static int close_trace(tw *b, const char *path) { return sc_close(&b->t, path); }

static int open_trace(tw *b, const char *path, uint64_t shift)
{
    b->shift = shift;
    if (sc_open(&b->t, path) != 0)
        return -1;
    header(b);
    return 0;
}

/*
 * Expandable segments: one mapped range of 40 MiB at TLB_EX that CUDA sees
 * as two 20 MiB chunks (VMM), then half of it unmapped.
 *
 *   11  cuMemMap TLB_EX and TLB_EX + 20 MiB, 20 MiB each; SEGMENT_MAP TLB_EX 40 MiB
 *   12  block TLB_EX 30 MiB (kernel 1)                          THE PEAK
 *   13  kernel 1 gemm_kernel
 *   14  free TLB_EX
 *   15  SEGMENT_UNMAP TLB_EX + 20 MiB, 20 MiB; its chunk unmapped
 *   16  block TLB_EX 8 MiB (kernel 2)
 *   17  kernel 2 softmax_kernel
 *
 * So: the segment layer has the 40 MiB range (11 to 15 ms) and its lower
 * 20 MiB from 15 ms on; nothing is outside the allocator (both chunks lie
 * in the range); at the peak 40 MiB reserved in one band, 10 MiB of it
 * in no tensor; the reserve is highest at 40 MiB.
 */
int tlb_write_expandable(const char *path)
{
    const uint64_t M = TLB_MIB;
    tw b;
    if (open_trace(&b, path, 0) != 0)
        return -1;
    cuda_src(&b, GMT_REC_ALLOC, 1, TLB_EX, 20 * M, 0, 0, GMT_SRC_VMM);
    cuda_src(&b, GMT_REC_ALLOC, 1, TLB_EX + 20 * M, 20 * M, 0, 0, GMT_SRC_VMM);
    block(&b, GMT_BLK_SEGMENT_MAP, 1, TLB_EX, 40 * M, 0, 0);
    block(&b, GMT_BLK_ALLOC, 2, TLB_EX, 30 * M, 0, 0);
    kernel(&b, 3, 1, 1, 0);
    block(&b, GMT_BLK_FREE_REQUESTED, 4, TLB_EX, 30 * M, 1, 0);
    block(&b, GMT_BLK_SEGMENT_UNMAP, 5, TLB_EX + 20 * M, 20 * M, 1, 0);
    cuda_src(&b, GMT_REC_FREE, 5, TLB_EX + 20 * M, 20 * M, 1, 0, GMT_SRC_VMM);
    block(&b, GMT_BLK_ALLOC, 6, TLB_EX, 8 * M, 1, 0);
    kernel(&b, 7, 2, 2, 0);
    end(&b, 8);
    return close_trace(&b, path);
}

int tlb_write(const char *path) { return tlb_write_at(path, 0); }

int tlb_write_at(const char *path, uint64_t shift)
{
    const uint64_t M = TLB_MIB;
    tw b;
    if (open_trace(&b, path, shift) != 0)
        return -1;
    driver(&b, 0, 12 * M);
    cuda(&b, GMT_REC_ALLOC, 1, TLB_WS, 8 * M, 0, 0);
    driver(&b, 1, 20 * M);
    step(&b, 2, 1);
    cuda(&b, GMT_REC_ALLOC, 3, TLB_S1, 20 * M, 0, 1);
    block(&b, GMT_BLK_SEGMENT_ALLOC, 3, TLB_S1, 20 * M, 0, 1);
    driver(&b, 3, 40 * M);
    block(&b, GMT_BLK_ALLOC, 4, TLB_S1, 4 * M, 0, 1);
    kernel(&b, 5, 1, 1, 1);
    block(&b, GMT_BLK_ALLOC, 6, TLB_S1 + 4 * M, 10 * M, 1, 1);
    kernel(&b, 7, 2, 2, 1);
    cuda(&b, GMT_REC_ALLOC, 8, TLB_S2, 20 * M, 2, 1);
    block(&b, GMT_BLK_SEGMENT_ALLOC, 8, TLB_S2, 20 * M, 2, 1);
    driver(&b, 8, 60 * M);
    block(&b, GMT_BLK_ALLOC, 9, TLB_S2, 12 * M, 2, 1);
    kernel(&b, 10, 2, 3, 1);
    block(&b, GMT_BLK_FREE_REQUESTED, 11, TLB_S1 + 4 * M, 10 * M, 3, 1);
    block(&b, GMT_BLK_FREE_COMPLETED, 11, TLB_S1 + 4 * M, 10 * M, 3, 1);
    cuda(&b, GMT_REC_ALLOC, 12, TLB_NC, 2 * M, 3, 1);
    driver(&b, 12, 62 * M);
    block(&b, GMT_BLK_FREE_REQUESTED, 13, TLB_S2, 12 * M, 3, 1);
    block(&b, GMT_BLK_FREE_COMPLETED, 13, TLB_S2, 12 * M, 3, 1);
    block(&b, GMT_BLK_SEGMENT_FREE, 14, TLB_S2, 20 * M, 3, 1);
    cuda(&b, GMT_REC_FREE, 14, TLB_S2, 20 * M, 3, 1);
    driver(&b, 14, 42 * M);
    step(&b, 15, 2);
    block(&b, GMT_BLK_ALLOC, 16, TLB_S1 + 4 * M, 6 * M, 3, 2);
    kernel(&b, 17, 1, 4, 2);
    block(&b, GMT_BLK_FREE_REQUESTED, 19, TLB_S1 + 4 * M, 6 * M, 4, 2);
    end(&b, 20);
    return close_trace(&b, path);
}
