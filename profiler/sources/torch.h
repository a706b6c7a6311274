/*
 * The PyTorch source: loads the bridge (profiler/sources/torch_bridge.h) when the
 * process has PyTorch's CUDA allocator, checks that it was built for that
 * same torch, attaches it, and turns its allocator events into ring events
 * (GMP_EV_BLOCK) as the CUPTI callbacks do for theirs.
 *
 * One line says what happened when PyTorch is there and the bridge is not
 * used (missing, built for another torch, refused by the allocator); the
 * recording then goes on with CUPTI alone. GMEMPROF_TORCH=0 keeps it out.
 */
#ifndef GMEMPROF_PROFILER_TORCH_H
#define GMEMPROF_PROFILER_TORCH_H

#include <stddef.h>
#include <stdint.h>

enum gmp_torch_state {
    GMP_TORCH_IDLE = 0,     /* not tried, or PyTorch not (yet) in the process */
    GMP_TORCH_BUSY = 1,     /* a thread is loading or attaching */
    GMP_TORCH_ATTACHED = 2, /* events flow */
    GMP_TORCH_OFF = 3       /* will not be used in this process (the line was printed) */
};

/* Tries to load and attach the bridge, unless done or given up: cheap then.
 * Called where no allocator lock of this thread can be in a tracker call:
 * a new CUDA context, a step, a tag. */
void gmp_torch_maybe_attach(void);
/* Has the bridge send the events it holds back (before a step, a tag and
 * the end: torch_bridge.h). Not from an allocator callback. */
void gmp_torch_flush(void);
/* Op ranges wanted or not (the schedule's collection edges, steps.c); the
 * bridge watches ops only while wanted, and from its attach on. */
void gmp_torch_watch_ops(int on);
/* Optimizer steps the bridge reported (the summary's count when they are
 * not the step source). */
uint64_t gmp_torch_optimizer_steps(void);
/* Stops the bridge's events (exit, fork child). */
void gmp_torch_detach(void);
int gmp_torch_state(void);
/* What the summary says: "" when PyTorch never showed up, else e.g.
 * "PyTorch 2.11.0 allocator". */
const char *gmp_torch_describe(void);
/* Forgets everything (tests; the library is never unloaded). */
void gmp_torch_reset(void);

/* The GNU build id of the loaded object whose file name is `name` (a base
 * name such as "libc10_cuda.so"), as lower-case hex in out. 1 found with an
 * id, 0 found without one (out = ""), -1 not loaded. */
int gmp_torch_loaded_build_id(const char *name, char *out, size_t cap);

#endif
