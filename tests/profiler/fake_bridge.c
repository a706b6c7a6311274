/*
 * A bridge for the CPU tests (profiler/torch_bridge.h), written in C: it
 * speaks the interface of libgmemprof_torch.so, seeds a fixed snapshot when
 * attached, and replays the allocator events that the test program hands it
 * through fake_bridge_event().
 *
 * Environment:
 *   FAKE_BRIDGE_BUILD_ID  the build id it claims to be built for ("" = none,
 *                         which the profiler does not check)
 *   FAKE_BRIDGE_REFUSE    attach() answers NEVER with this text (the
 *                         cudaMallocAsync backend's refusal)
 *   FAKE_BRIDGE_LATER     attach() answers LATER this many times first
 *   FAKE_BRIDGE_EMIT_NVTX watch() withholds op ranges, as the real bridge
 *                         does while the program runs emit_nvtx
 *
 * Ops and optimizer steps (fake_bridge_op, fake_bridge_optimizer_step) reach
 * the profiler only while it watches them, as RecordFunction callbacks
 * would: registered by watch(), removed by it.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "gmemprof/trace_format.h"
#include "torch_bridge.h"

#define EXPORT __attribute__((visibility("default")))

/* The snapshot: one 20 MiB segment on device 0 with two live blocks. */
#define SEED_SEG 0x7f0000000000ull
#define SEED_SEG_BYTES (20ull << 20)
#define SEED_B1 (1ull << 20)
#define SEED_B2 (512ull << 10)

static const gmp_bridge_host *g_host;
static uint64_t g_counter[8]; /* FAKE_BRIDGE_COUNTERS, below */
static int g_later;

static int fake_attach(const gmp_bridge_host *host, char *err, size_t cap)
{
    const char *refuse = getenv("FAKE_BRIDGE_REFUSE");
    if (refuse && refuse[0]) {
        snprintf(err, cap, "%s", refuse);
        return GMP_BRIDGE_NEVER;
    }
    const char *later = getenv("FAKE_BRIDGE_LATER");
    if (later && g_later < atoi(later)) {
        g_later++;
        return GMP_BRIDGE_LATER;
    }
    g_host = host;
    host->block(NULL, GMT_BLK_SEGMENT_ALLOC, 0, SEED_SEG, SEED_SEG_BYTES, 0, 0, 0, GMT_BLKF_SEEDED, 0);
    host->block(NULL, GMT_BLK_ALLOC, 0, SEED_SEG, SEED_B1, SEED_B1 - 100, 0, 0, GMT_BLKF_SEEDED, 0);
    host->block(NULL, GMT_BLK_ALLOC, 0, SEED_SEG + SEED_B1, SEED_B2, SEED_B2, 0, 0, GMT_BLKF_SEEDED, 0);
    g_counter[0] = SEED_B1 + SEED_B2;
    return GMP_BRIDGE_ATTACHED;
}

static void fake_detach(void) { g_host = NULL; }

static _Atomic unsigned g_watch; /* what the profiler asked to watch, as granted */
static _Atomic int g_backward; /* a backward op since the last optimizer step */
static unsigned g_watch_calls, g_ops_on_calls;

static unsigned fake_watch(unsigned what, char *err, size_t cap)
{
    const char *nv = getenv("FAKE_BRIDGE_EMIT_NVTX");
    g_watch_calls++;
    if ((what & GMP_BRIDGE_WATCH_OPS) && nv && nv[0] == '1') {
        what &= ~GMP_BRIDGE_WATCH_OPS;
        if (err && cap)
            snprintf(err, cap, "emit_nvtx is on: its NVTX ranges are the op ranges (fake)");
    }
    if ((what & GMP_BRIDGE_WATCH_OPS) && !(g_watch & GMP_BRIDGE_WATCH_OPS))
        g_ops_on_calls++;
    if (!(what & GMP_BRIDGE_WATCH_STEPS))
        g_backward = 0;
    g_watch = what;
    return what;
}

/* FAKE_BRIDGE_COUNTERS=1: events carry the request (the size less 100
 * bytes), as the real bridge sends them: an ALLOC of more than 1 MiB with
 * the allocated count as PyTorch's allocator shows it in its callbacks
 * (updated after an ALLOC is reported, before a FREE_REQUESTED is), a
 * smaller one with its size (a multiple of 512 here) and no reading. The
 * profiler must find the sizes. */
static int counters_on(void)
{
    const char *c = getenv("FAKE_BRIDGE_COUNTERS");
    return c && c[0] == '1';
}

static void fake_flush(void)
{
    for (unsigned d = 0; g_host && counters_on() && d < 8; d++)
        g_host->block(NULL, GMP_BRIDGE_COUNTER, d, 0, 0, 0, 0, 0, GMP_BRIDGE_HAS_COUNTER, g_counter[d]);
}

static gmp_bridge g_bridge = { GMP_BRIDGE_ABI, sizeof(gmp_bridge), "torch", "0.0.0-fake", "libc10_cuda.so", "",
                               fake_attach, fake_detach, fake_flush, fake_watch };

EXPORT const gmp_bridge *gmemprof_torch_bridge(uint32_t abi)
{
    const char *id = getenv("FAKE_BRIDGE_BUILD_ID");
    g_bridge.build_id = id ? id : "";
    return abi == GMP_BRIDGE_ABI ? &g_bridge : NULL;
}

/* The profiler's side of the interface once attached (NULL before): lets
 * bench/cb_cost.c time host->block as the real bridge calls it. */
EXPORT const gmp_bridge_host *fake_bridge_host(void) { return g_host; }

/* One allocator event, as the tracker would deliver it; 0 when attached. */
EXPORT int fake_bridge_event(unsigned action, unsigned device, uint64_t addr, uint64_t bytes, uint64_t stream,
                             uint64_t pool)
{
    if (!g_host)
        return -1;
    int sized = action == GMT_BLK_ALLOC || action == GMT_BLK_FREE_REQUESTED;
    if (!counters_on() || !sized || device >= 8) {
        g_host->block(NULL, action, device, addr, bytes, sized ? bytes : 0, stream, pool, 0, 0);
        return 0;
    }
    /* as the real bridge: the request, and the reading with allocations */
    uint64_t req = bytes > 100 ? bytes - 100 : bytes;
    if (action == GMT_BLK_FREE_REQUESTED) {
        g_counter[device] -= bytes;
        g_host->block(NULL, action, device, addr, req, req, stream, pool, 0, 0);
        return 0;
    }
    if (bytes <= (1u << 20))
        g_host->block(NULL, action, device, addr, bytes, req, stream, pool, 0, 0);
    else
        g_host->block(NULL, action, device, addr, req, req, stream, pool, GMP_BRIDGE_HAS_COUNTER, g_counter[device]);
    g_counter[device] += bytes;
    return 0;
}

/* What the bridge watches now (GMP_BRIDGE_WATCH_* bits), and how many times
 * op watching was switched on. */
EXPORT unsigned fake_bridge_watching(unsigned *ops_on_calls)
{
    if (ops_on_calls)
        *ops_on_calls = g_ops_on_calls;
    return g_watch;
}

/* An op starts (begin 1, with its name) or ends on the calling thread;
 * backward: an op of the backward pass (autograd's BACKWARD_FUNCTION). */
EXPORT void fake_bridge_op(int begin, const char *name, int backward)
{
    if (!g_host)
        return;
    if (begin && backward && (g_watch & GMP_BRIDGE_WATCH_STEPS))
        g_backward = 1;
    if (!(g_watch & GMP_BRIDGE_WATCH_OPS))
        return;
    if (begin)
        g_host->op_begin(name);
    else
        g_host->op_end();
}

/* The end of an optimizer step ("Optimizer.step#AdamW.step"). */
EXPORT void fake_bridge_optimizer_step(const char *name)
{
    if (!g_host || !(g_watch & GMP_BRIDGE_WATCH_STEPS))
        return;
    int after = g_backward;
    g_backward = 0;
    g_host->optimizer_step(name, after);
}
