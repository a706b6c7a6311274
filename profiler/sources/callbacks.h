/*
 * The CUDA API and resource callbacks (callbacks.c): the hot path that
 * stamps every CUDA call with its thread, epoch, launch count and range in
 * the correlation table, and the switches that turn kernel collection on and
 * off at the schedule's phase edges.
 */
#ifndef GMEMPROF_PROFILER_CALLBACKS_H
#define GMEMPROF_PROFILER_CALLBACKS_H

#include <cupti.h>

#include "schedule.h"

/* The API families of every callback id (needs CUPTI loaded: names), and
 * the settings the callbacks follow: kernels (GMEMPROF_KERNELS,
 * GMP_KERNELS_*) and the schedule (with a capture schedule,
 * cudaProfilerStart/Stop are its transitions). */
void gmp_callbacks_init(int kernels, const gmp_sched_spec *schedule);
/* The function to subscribe (gmp_activity_subscribe). */
CUpti_CallbackFunc gmp_callbacks_fn(void);
/* After gmp_activity_enable: the resource callbacks and the API callbacks
 * that are on all run. */
void gmp_callbacks_enable(void);
/* Kernel, memcpy and memset collection on or off (the step lock held:
 * steps.c calls it at the phase edges). */
void gmp_callbacks_collect(int on);

#endif
