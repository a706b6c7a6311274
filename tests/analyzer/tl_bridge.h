/*
 * A trace as the PyTorch bridge writes it, for the timeline's layers:
 * BLOCK records (tensors and the allocator's segments) beside CUPTI's
 * allocations (the same segments, and memory outside the allocator) and
 * driver samples. tl_bridge.c gives every record and the numbers the
 * timeline must show; test_timeline.c and run_timeline_browser.py check them.
 */
#ifndef GMA_TEST_TL_BRIDGE_H
#define GMA_TEST_TL_BRIDGE_H

#include <stdint.h>

#define TLB_MIB (1ull << 20)
#define TLB_START 1000000000ull                               /* header start_ts */
#define TLB_T(i) (TLB_START + 10000000ull + (uint64_t)(i) * 1000000ull) /* event i: 10 ms + i ms */

#define TLB_S1 0x7f0000000000ull /* segment 1, 20 MiB, never freed */
#define TLB_S2 0x7f0002000000ull /* segment 2, 20 MiB, 18 ms to 24 ms */
#define TLB_WS 0x7e0000000000ull /* outside: 8 MiB (a cuBLAS workspace), from 11 ms */
#define TLB_NC 0x7e0001000000ull /* outside: 2 MiB (an NCCL buffer), from 22 ms */
#define TLB_EX 0x7f4000000000ull /* tlb_write_expandable's mapped range */

/* Writes the trace; 0, or -1 with a message on stderr. */
int tlb_write(const char *path);
/* The same, every time (the trace's start too) shift ns later. */
int tlb_write_at(const char *path, uint64_t shift);
/* Another: expandable segments (a mapped range, CUDA's chunks of it, an unmap). */
int tlb_write_expandable(const char *path);

#endif
