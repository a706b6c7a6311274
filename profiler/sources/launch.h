/*
 * Launch mode's kernel records (launch.c): the KERNEL event of a launch,
 * made from its driver callback on the launching thread, and the
 * per-thread caches that keep that free of locks, allocations and most
 * driver calls (docs/profiler-internals.md, "launch mode").
 */
#ifndef GMEMPROF_PROFILER_LAUNCH_H
#define GMEMPROF_PROFILER_LAUNCH_H

#include <stdint.h>

#include <cupti.h>

#include "gmp_rt.h"

/* Outermost launch ENTER (after the callback set cur_seq/range/epoch);
 * fam is GMP_FAM_LAUNCH or GMP_FAM_GRAPH. */
void gmp_launch_begin(gmp_tls *t, CUpti_CallbackId cbid, unsigned fam, const CUpti_CallbackData *cb);
/* Outermost launch EXIT: queues the event when the launch succeeded. */
void gmp_launch_end(gmp_tls *t, const CUpti_CallbackData *cb);

/* The CUPTI device id of a context and the CUPTI stream id of a stream
 * handle, from the thread's caches (also for launch mode's copies). */
uint32_t gmp_launch_device(gmp_tls *t, CUcontext ctx);
uint32_t gmp_launch_stream(gmp_tls *t, CUcontext ctx, CUstream h, int ptsz);

/* A module was unloaded or a stream or context destroyed: every thread's
 * caches start over at its next launch. */
void gmp_launch_new_generation(void);
/* The caches' misses, on the debug log (the end of the run). */
void gmp_launch_log_misses(void);

#endif
