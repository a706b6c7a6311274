/*
 * A bridge for the CPU tests (profiler/sources/torch_bridge.h), written in C: it
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
 * would: registered by watch(), removed by it. So do module calls,
 * forward and backward ops linked by sequence numbers, and frames
 * (fake_bridge_module, _fwd_op, _bwd_op, _event_at, _owner: the end of
 * this file).
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

/* ---- modules, backward and frames (ABI 3) ------------------------------------
 *
 * As the real bridge does them (profiler/torch/py.cpp, bridge.cpp), in
 * miniature: a module call opens a MODULE range while modules are
 * watched; a forward op notes its sequence number with its thread and the
 * innermost module; a backward op whose number and forward thread match a
 * note runs inside a MODULE_BWD range of that module; a frame or stack
 * text is interned once (the id cached by the text's address) and sent
 * with each ALLOC while frames (stacks) are watched. */

#include <pthread.h>
#include <string.h>

#define SEQ_RING 64
static struct {
    int64_t seq;
    uint32_t tid;
    const char *path;
} g_seq[SEQ_RING];
static pthread_mutex_t g_seq_mu = PTHREAD_MUTEX_INITIALIZER;

/* numbers are per thread: the thread spreads them over the ring */
static unsigned seq_slot(int64_t seq, uint32_t tid) { return (unsigned)((uint64_t)seq + tid * 0x9E3779B1ull) % SEQ_RING; }

#define FAKE_DEPTH 16
static _Thread_local const char *tl_mod[FAKE_DEPTH];
static _Thread_local unsigned tl_nmod;
static _Thread_local uint32_t tl_opens[FAKE_DEPTH];
static _Thread_local unsigned tl_nops;

/* A module's call (begin 1, with its path) or its return, on the calling thread. */
EXPORT void fake_bridge_module(int begin, const char *path)
{
    if (!g_host)
        return;
    if (begin) {
        if (!(g_watch & GMP_BRIDGE_WATCH_MODULES) || tl_nmod >= FAKE_DEPTH)
            return;
        tl_mod[tl_nmod++] = path;
        g_host->range_begin(GMT_RANGE_MODULE, path);
    } else if (tl_nmod) {
        tl_nmod--;
        g_host->range_end();
    }
}

static void op_push(uint32_t opened)
{
    if (tl_nops < FAKE_DEPTH)
        tl_opens[tl_nops] = opened;
    tl_nops++;
}

static uint32_t op_pop(void)
{
    if (!tl_nops)
        return 0;
    tl_nops--;
    return tl_nops < FAKE_DEPTH ? tl_opens[tl_nops] : 0;
}

/* A forward op with autograd's sequence number seq (-1 none) on thread
 * `tid` (the caller's id for it). */
EXPORT void fake_bridge_fwd_op(int begin, const char *name, int64_t seq, uint32_t tid)
{
    if (!g_host)
        return;
    if (!begin) {
        if (op_pop() & 1u)
            g_host->op_end();
        return;
    }
    unsigned w = g_watch;
    if ((w & GMP_BRIDGE_WATCH_MODULES) && seq >= 0) {
        pthread_mutex_lock(&g_seq_mu);
        unsigned k = seq_slot(seq, tid);
        g_seq[k].seq = seq;
        g_seq[k].tid = tid;
        g_seq[k].path = tl_nmod ? tl_mod[tl_nmod - 1] : NULL;
        pthread_mutex_unlock(&g_seq_mu);
    }
    uint32_t opened = (w & GMP_BRIDGE_WATCH_OPS) ? 1u : 0u;
    if (opened)
        g_host->op_begin(name);
    op_push(opened);
}

/* A backward op (autograd's node of the forward op seq of thread fwd_tid). */
EXPORT void fake_bridge_bwd_op(int begin, const char *name, int64_t seq, uint32_t fwd_tid)
{
    if (!g_host)
        return;
    if (!begin) {
        uint32_t o = op_pop();
        if (o & 1u)
            g_host->op_end();
        if (o & 2u)
            g_host->range_end();
        return;
    }
    unsigned w = g_watch;
    if (w & GMP_BRIDGE_WATCH_STEPS)
        g_backward = 1;
    const char *path = NULL;
    if ((w & GMP_BRIDGE_WATCH_MODULES) && seq >= 0) {
        pthread_mutex_lock(&g_seq_mu);
        unsigned k = seq_slot(seq, fwd_tid);
        if (g_seq[k].seq == seq && g_seq[k].tid == fwd_tid)
            path = g_seq[k].path;
        pthread_mutex_unlock(&g_seq_mu);
    }
    uint32_t opened = 0;
    if (path) {
        g_host->range_begin(GMT_RANGE_MODULE_BWD, path);
        opened |= 2u;
    }
    if (w & GMP_BRIDGE_WATCH_OPS) {
        g_host->op_begin(name);
        opened |= 1u;
    }
    op_push(opened);
}

#define FRAME_CACHE 64
static struct {
    const char *text;
    uint32_t id;
} g_frames[FRAME_CACHE];
static unsigned g_nframes, g_interned;
static pthread_mutex_t g_frames_mu = PTHREAD_MUTEX_INITIALIZER;

static uint32_t frame_id(const char *text)
{
    if (!text)
        return 0;
    uint32_t id = 0;
    pthread_mutex_lock(&g_frames_mu);
    for (unsigned i = 0; i < g_nframes && !id; i++)
        if (g_frames[i].text == text)
            id = g_frames[i].id;
    if (!id && g_nframes < FRAME_CACHE) {
        id = g_host->intern(text, strlen(text));
        g_interned++;
        g_frames[g_nframes].text = text;
        g_frames[g_nframes++].id = id;
    }
    pthread_mutex_unlock(&g_frames_mu);
    return id;
}

/* An allocator event with the program's frame and stack texts (NULL none),
 * sent as the real bridge sends them: ids, while frames (stacks) are
 * watched. 0 when attached. */
EXPORT int fake_bridge_event_at(unsigned action, unsigned device, uint64_t addr, uint64_t bytes, uint64_t stream,
                                const char *frame, const char *stack)
{
    if (!g_host)
        return -1;
    unsigned w = g_watch;
    int alloc = action == GMT_BLK_ALLOC;
    uint32_t f = alloc && (w & GMP_BRIDGE_WATCH_FRAMES) ? frame_id(frame) : 0;
    uint32_t s = alloc && (w & GMP_BRIDGE_WATCH_STACKS) ? frame_id(stack) : 0;
    int sized = alloc || action == GMT_BLK_FREE_REQUESTED;
    g_host->block_at(NULL, action, device, addr, bytes, sized ? bytes : 0, stream, 0, 0, 0, f, s);
    return 0;
}

/* How many texts were interned (each once). */
EXPORT unsigned fake_bridge_interned(void) { return g_interned; }

/* A module's own tensors, as the real bridge reports them at the module's
 * first forward (py.cpp, report_owners): one OWNER event per storage and
 * role (GMT_BLKF_PARAMETER or GMT_BLKF_BUFFER), the module path interned
 * once, while modules are watched. 0 when sent. */
EXPORT int fake_bridge_owner(const char *path, unsigned role, unsigned device, uint64_t addr, uint64_t bytes)
{
    if (!g_host || !(g_watch & GMP_BRIDGE_WATCH_MODULES))
        return -1;
    g_host->block_at(NULL, GMT_BLK_OWNER, device, addr, bytes, 0, 0, 0, role, 0, frame_id(path), 0);
    return 0;
}
