/*
 * The NVTX source (nvtx.c): our own handlers in NVTX's export table; ranges
 * and marks become events, step markers steps, tag marks tags.
 */
#ifndef GMEMPROF_PROFILER_NVTX_H
#define GMEMPROF_PROFILER_NVTX_H

#include <stdint.h>

#include "gmemprof/trace_format.h"
#include "gmp_rt.h"

/* Fills the export table of one NVTX instance: 1 done, 0 refused. */
int gmp_nvtx_attach(const void *(*get_export_table)(uint32_t));

/* A framework's op (the PyTorch bridge's op ranges) opens and closes a
 * range on the calling thread as an NVTX push and pop would: the same
 * stack, so attribution does not care which source a range came from. An
 * op's name is never a step marker, and must stay valid until its end.
 *
 * An op waits on the stack until something inside it (an allocation, a
 * free, a launch, a copy, a nested NVTX range) asks for the innermost range
 * (gmp_nvtx_current): most ops that do neither (views, shape and metadata
 * ops) then cost a clock read and no event. Both run for every op of the
 * program, so they are inline here: one function, and one cache line of
 * the stack per op. */
static inline void gmp_nvtx_range_pend(unsigned kind, const char *name)
{
    gmp_tls *t = gmp_self();
    if (!gmp_live_state())
        return;
    uint32_t d = t->nranges++;
    if (d >= GMP_RANGE_STACK)
        return; /* too deep: counted in the depth, not recorded */
    t->lv[d] = (gmp_level){0, name, gmp_now(), kind};
    t->npend++;
}

/* An op's range (GMT_RANGE_OP); a module's waits alike (GMT_RANGE_MODULE,
 * GMT_RANGE_MODULE_BWD: its name is the module's path). */
static inline void gmp_nvtx_op_begin(const char *name) { gmp_nvtx_range_pend(GMT_RANGE_OP, name); }

/* The end of an op whose range had begun, or of any level past the stack. */
void gmp_nvtx_op_end_begun(void);

static inline void gmp_nvtx_op_end(void)
{
    gmp_tls *t = gmp_self();
    if (t->npend && t->nranges - 1 < GMP_RANGE_STACK) { /* an op that never began: nothing to end */
        t->nranges--;
        t->npend--;
        return;
    }
    gmp_nvtx_op_end_begun();
}

/* The innermost recorded range of thread t (0: none), for what is made
 * inside it now. An op range begins (its RANGE_BEGIN goes out) only here,
 * when something asks for it: an op that allocates, frees, launches and
 * nests nothing leaves no event. Owner thread only. */
uint64_t gmp_nvtx_current(gmp_tls *t);

#endif
