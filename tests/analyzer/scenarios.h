/*
 * Small synthetic traces with hand-computed answers, written with the real
 * gmt_writer. scenarios.c documents every expected number next to the
 * records that produce it; test_numbers.c asserts them through the analyzer
 * library and the golden tests print them through gmem-analyze.
 */
#ifndef GMA_TEST_SCENARIOS_H
#define GMA_TEST_SCENARIOS_H

#include <stdint.h>

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define SC_START 1000000000ull        /* header start_ts: time 0 of the reports */
#define SC_T(i) (SC_START + 10000000ull + (uint64_t)(i) * 1000000ull) /* event i: 10 ms + i ms */

/* Each returns 0, or -1 with a message on stderr. */
int sc_launch(const char *path);         /* basic, as GMEMPROF_KERNELS=launch writes it */
int sc_basic(const char *path);          /* one window, two steps, nesting, out-of-order kernels */
int sc_multiwin(const char *path);       /* basic + a second window with a higher peak */
int sc_threads(const char *path);        /* two host threads, recursion in ranges */
int sc_nowindow(const char *path);       /* no window records: the whole trace */
int sc_twodev(const char *path);         /* two devices, streams, pinned host memory */
int sc_edge(const char *path);           /* lost free, reused address, unknown range, unnamed kernel */
int sc_torchnames(const char *path);     /* emit_nvtx range names, colliding template instances */
int sc_attn_naive(const char *path);     /* attention with a materialized score matrix */
int sc_attn_flash(const char *path);     /* the same layer with a fused kernel */
int sc_hostile(const char *path);        /* control bytes, bad UTF-8, formulas and a long range in names */
int sc_huge(const char *path);           /* allocations of 2^63 bytes: sums that would wrap */
int sc_torch(const char *path);
int sc_train(const char *path);          /* a training step under the bridge: every category, a planted leak */          /* PyTorch bridge blocks beside CUPTI's segments, two devices */
int sc_truncated(const char *path);      /* basic, cut inside its last frame */
int sc_damaged(const char *path);        /* basic, a byte of its last frame flipped */
int sc_nochecksum(const char *path);     /* basic, its frames without zstd checksums */
int sc_newer(const char *path);          /* a valid zstd file with format major 2 */
int sc_garbage(const char *path);        /* bytes that are not a trace */
int sc_empty(const char *path);          /* zero bytes */
/* one rank of a data-parallel run: rank (-1: none) of world (-1: none), on device rank */
int sc_rank(const char *path, int64_t rank, int64_t world);

/* Writes every scenario into dir as NAME.gmt. */
int sc_write_all(const char *dir);

#endif
