/*
 * Schedule transitions (steps.c): steps, capture edges, time ticks and tags
 * from any thread, turned into schedule epochs (epoch.h) that the writer
 * applies in order.
 */
#ifndef GMEMPROF_PROFILER_STEPS_H
#define GMEMPROF_PROFILER_STEPS_H

#include <stddef.h>

#include "epoch.h"
#include "schedule.h"

/* What the modules above do at a transition, handed down at init so that
 * this module calls none of them by name. A NULL hook does nothing. */
typedef struct gmp_steps_hooks {
    void (*collect)(int on);   /* kernel collection on or off (callbacks); step lock held */
    void (*watch_ops)(int on); /* the bridge's op ranges on or off; step lock held */
    void (*attach)(void);      /* a step or tag may be the first chance to attach the bridge */
    void (*flush)(void);       /* the bridge's queued events, before a transition or tag */
} gmp_steps_hooks;

/* The settings this module follows, handed over at init (config.h). */
typedef struct gmp_steps_settings {
    gmp_sched_spec schedule; /* GMEMPROF_SCHEDULE, parsed */
    int step_source;         /* GMEMPROF_STEP_SOURCE: GMP_STEPS_* */
    int on_oom;              /* the flight recorder runs: its ring is cut at steps, op ranges stay on */
    int oom_kernels;         /* the recorder keeps kernels: collection stays on */
} gmp_steps_settings;

/* Epoch 0 from the schedule's start (light init, before any other thread).
 * hooks and set are copied; NULL hooks means none. */
void gmp_steps_init(const gmp_steps_hooks *hooks, const gmp_steps_settings *set);
/* Kernel collection as the current phase wants it (full init: steps may
 * have come before CUDA started). */
void gmp_steps_apply_collect(void);
/* A transition from any thread (kind GMP_TR_*; arg: capture on/off;
 * source: gmt_step_source). */
void gmp_steps_transition(int kind, int arg, int source);
/* A step from a step source (GMT_STEPSRC_*). Once gmemprof_step() has been
 * called, it alone makes steps. Otherwise GMEMPROF_STEP_SOURCE decides
 * (config.h): in AUTO, NVTX step markers once one has come, optimizer
 * steps until then. */
void gmp_steps_step(int source);
/* Whether optimizer steps may make steps in this run (the bridge then
 * watches them). */
int gmp_steps_wants_optimizer(void);
/* Steps taken so far, and the source of the latest (GMT_STEPSRC_NONE when
 * none). */
uint64_t gmp_steps_count(int *source);
/* A tag: every allocation made before the call is in the snapshot. */
void gmp_steps_tag(const char *name, size_t len);

/* The writer: the epoch history (a ring of GMP_EPOCH_HIST, indexed by epoch
 * modulo its size) under the step lock; NULL when try_only and the lock is
 * taken (a signal may have interrupted its holder). */
const gmp_epoch_info *gmp_steps_lock(int try_only);
void gmp_steps_unlock(void);

#endif
