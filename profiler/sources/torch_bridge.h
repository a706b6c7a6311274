/*
 * The PyTorch bridge's interface: what libgmemprof.so and libgmemprof_torch.so
 * (or any other bridge, such as the tests' fake one) say to each other.
 *
 * Plain C and versioned, so that the one C++ module of the project stays
 * behind it: libgmemprof.so never includes a torch header, and a bridge
 * built for another ABI is refused before anything is called.
 *
 * The bridge exports one symbol, GMP_BRIDGE_ENTRY, of type gmp_bridge_entry_fn.
 * Called with the ABI the profiler speaks, it returns its table, or NULL
 * when it speaks another ABI.
 *
 * Threads and locks: host->origin and host->block are called on the thread
 * that called the allocator, with the allocator's per-device lock held, and
 * possibly with Python's GIL held. They take no lock, call no CUDA or torch
 * function and never block: block fills one event into the profiler's ring.
 *
 * Sizes: a block event may carry `counter`, the allocator's allocated
 * bytes of the device as read in the callback. PyTorch updates that count
 * after it reports an ALLOC and before it reports a FREE_REQUESTED, so the
 * profiler learns a block's size as PyTorch counts it from the next
 * reading; flush() sends a reading alone (action GMP_BRIDGE_COUNTER). The
 * profiler calls flush() before a step, a tag and the end. An ALLOC
 * without a reading carries its block's size in `bytes` (the bridge knows
 * it: a small-pool request rounded up); the profiler takes it out of the
 * change between two readings.
 */
#ifndef GMEMPROF_PROFILER_TORCH_BRIDGE_H
#define GMEMPROF_PROFILER_TORCH_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GMP_BRIDGE_ABI 3u
#define GMP_BRIDGE_ENTRY "gmemprof_torch_bridge"

/* block()'s action for a flush's reading: not an allocator event. */
#define GMP_BRIDGE_COUNTER 255u
/* block()'s flag: `counter` holds a reading (0 is a reading too). */
#define GMP_BRIDGE_HAS_COUNTER 0x100u

/* watch()'s bits */
#define GMP_BRIDGE_WATCH_OPS 1u   /* op ranges: host->op_begin, host->op_end */
#define GMP_BRIDGE_WATCH_STEPS 2u /* host->optimizer_step */
#define GMP_BRIDGE_WATCH_MODULES 4u /* module ranges: host->range_begin, host->range_end (3) */
#define GMP_BRIDGE_WATCH_FRAMES 8u  /* the innermost user frame with each block: host->block_at (3) */
#define GMP_BRIDGE_WATCH_STACKS 16u /* and the whole Python stack (GMEMPROF_STACKS=python) (3) */
/* with MODULES: follow module calls through PyTorch's global module hooks
 * rather than a wrapper of torch.nn.Module.__call__
 * (GMEMPROF_TORCH_MODULE_HOOKS=1) (3) */
#define GMP_BRIDGE_WATCH_MODULE_HOOKS 32u

/* Who made an event and when, as the profiler sees it (opaque to the bridge). */
typedef struct gmp_bridge_origin {
    uint64_t w[6];
} gmp_bridge_origin;

/* What the profiler offers the bridge. */
typedef struct gmp_bridge_host {
    uint32_t abi;  /* GMP_BRIDGE_ABI */
    uint32_t size; /* sizeof(gmp_bridge_host) */
    /* Fills *o for an event of the calling thread, now. */
    void (*origin)(gmp_bridge_origin *o);
    /* One allocator event: action is a gmt_block_action (trace_format.h);
     * bytes what the allocator counts (a block's rounded size), requested
     * what the program asked for (0 unknown); flags GMT_BLKF_SEEDED for
     * what the allocator's snapshot showed; o from origin(), or NULL for
     * the calling thread now; with flag GMP_BRIDGE_HAS_COUNTER, counter is
     * the allocator's allocated bytes read in the callback (else bytes is
     * the size). */
    void (*block)(const gmp_bridge_origin *o, unsigned action, unsigned device, uint64_t address, uint64_t bytes,
                  uint64_t requested, uint64_t stream, uint64_t pool, unsigned flags, uint64_t counter);
    /* One line for the user, printed "gmemprof: <line>" (errors) or at
     * GMEMPROF_LOG=debug (debug != 0). */
    void (*log)(int debug, const char *line);
    /* An op starts on the calling thread: name NUL-terminated, read during
     * the call only. Ops nest per thread; op_end closes the innermost. */
    void (*op_begin)(const char *name);
    void (*op_end)(void);
    /* An optimizer step ended on the calling thread (name e.g.
     * "Optimizer.step#AdamW.step"); after_backward: a backward op ran since
     * the previous call (or since watching began). */
    void (*optimizer_step)(const char *name, int after_backward);
    /* ABI 3: */
    /* A range of kind `kind` (gmt_range_kind: GMT_RANGE_OP, GMT_RANGE_MODULE,
     * GMT_RANGE_MODULE_BWD) starts on the calling thread, on the stack that
     * op_begin uses (op_begin(n) is range_begin(GMT_RANGE_OP, n)). name
     * stays valid until its range_end: a module path is the bridge's for
     * the life of the process. range_end closes the innermost, whatever
     * its kind. */
    void (*range_begin)(unsigned kind, const char *name);
    void (*range_end)(void);
    /* Interns s (n bytes, no NUL needed: a frame "FILE:LINE FUNCTION" or a
     * stack, frames innermost first, '\n' between) and returns its id, from
     * 1; 0 when the profiler could not keep it. Copies s: called once per
     * distinct frame or stack (the bridge caches the id), never per
     * allocation. It takes a lock of its own and no other (no allocator
     * lock, never the GIL), so it may be called from an allocator callback. */
    uint32_t (*intern)(const char *s, size_t n);
    /* block() with the ids of the innermost frame of the program's own
     * code and of the whole stack at the call (from intern(), 0 none). */
    void (*block_at)(const gmp_bridge_origin *o, unsigned action, unsigned device, uint64_t address,
                     uint64_t bytes, uint64_t requested, uint64_t stream, uint64_t pool, unsigned flags,
                     uint64_t counter, uint32_t frame, uint32_t stack);
} gmp_bridge_host;

/* attach() results */
enum {
    GMP_BRIDGE_ATTACHED = 0, /* events flow from now on; the snapshot's blocks were sent first */
    GMP_BRIDGE_LATER = 1,    /* the allocator is not initialized yet: ask again later */
    GMP_BRIDGE_NEVER = -1    /* this process cannot be tracked (err says why) */
};

/* What the bridge offers the profiler. */
typedef struct gmp_bridge {
    uint32_t abi;  /* GMP_BRIDGE_ABI */
    uint32_t size; /* sizeof(gmp_bridge) */
    const char *framework;       /* "torch" */
    const char *version;         /* the framework version it was built against, "2.11.0" */
    const char *library;         /* the library it must find in the process: "libc10_cuda.so" */
    const char *build_id;        /* that library's GNU build id (hex) at build time; "" unknown */
    /* Attaches to the allocator; seeds the live blocks and segments through
     * host->block (flag SEEDED) before any live event. Never called from an
     * allocator callback. err gets one line when the result is NEVER. */
    int (*attach)(const gmp_bridge_host *host, char *err, size_t cap);
    /* Stops calling host (the allocator cannot forget a tracker: the
     * bridge's callback turns into a return). */
    void (*detach)(void);
    /* Sends the events it holds (never from an allocator callback). */
    void (*flush)(void);
    /* Watches what the GMP_BRIDGE_WATCH_* bits ask for, and stops watching
     * the rest; returns the bits it watches now. It may withhold OPS when
     * the program records op ranges itself (emit_nvtx): err then gets one
     * line. Never called from an allocator callback. */
    unsigned (*watch)(unsigned what, char *err, size_t cap);
} gmp_bridge;

typedef const gmp_bridge *(*gmp_bridge_entry_fn)(uint32_t abi);

#ifdef __cplusplus
}
#endif
#endif
