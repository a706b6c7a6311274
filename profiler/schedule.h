/*
 * The step window state machine (pure logic, no CUDA): torch.profiler's
 * schedule(skip_first, wait, warmup, active, repeat), a time form
 * (delay, duration) for programs without steps, and the whole run.
 *
 * Step form: steps are numbered from 0 (the steps before the first step
 * call). The first skip_first steps are NONE; then cycles of `wait` WAIT
 * steps, `warmup` WARMUP steps and `active` ACTIVE steps, `repeat` times
 * (0: forever); after the last cycle every step is DONE. A window is one
 * run of consecutive ACTIVE steps.
 */
#ifndef GMEMPROF_PROFILER_SCHEDULE_H
#define GMEMPROF_PROFILER_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "gmemprof/trace_format.h"

typedef enum gmp_sched_kind {
    GMP_SCHED_WHOLE = 0, /* no schedule: one window, the whole run */
    GMP_SCHED_STEPS = 1,
    GMP_SCHED_TIME = 2,
    GMP_SCHED_CAPTURE = 3 /* cudaProfilerStart/Stop ranges are the windows */
} gmp_sched_kind;

typedef struct gmp_sched_spec {
    gmp_sched_kind kind;
    uint64_t skip_first, wait, warmup, active, repeat; /* STEPS */
    uint64_t delay_ns, duration_ns;                    /* TIME; duration 0 = to the end */
    int on_oom; /* "on-oom": the flight recorder (wthread.c); the rest is the schedule of the trace */
} gmp_sched_spec;

/* Parses GMEMPROF_SCHEDULE text. Accepted forms:
 *   "wait=2,warmup=1,active=3[,repeat=1][,skip_first=10]"  (any order)
 *   "2,1,3[,1]" positional wait,warmup,active[,repeat] or 5 numbers
 *   "skip_first,wait,warmup,active,repeat"
 *   "delay=5s,duration=10s" (units ns, us, ms, s; bare number = seconds)
 *   "capture" (cudaProfilerStart/Stop), "" or "whole"
 *   "on-oom" (the flight recorder), alone or first before another form
 *   ("on-oom,wait=2,warmup=1,active=3"
 * Returns 0, or -1 with a message in err (what was wrong, the value, the
 * expected form). */
int gmp_sched_parse(const char *text, gmp_sched_spec *spec, char *err, size_t errcap);
size_t gmp_sched_describe(const gmp_sched_spec *spec, char *out, size_t cap);

/* What a transition did; several bits can be set at once. */
#define GMP_SCHED_EV_PHASE 0x1u        /* the phase changed */
#define GMP_SCHED_EV_WINDOW_BEGIN 0x2u /* an ACTIVE run started */
#define GMP_SCHED_EV_WINDOW_END 0x4u   /* an ACTIVE run ended */
#define GMP_SCHED_EV_COLLECT_BEGIN 0x8u /* kernel collection starts (WARMUP or ACTIVE entered) */
#define GMP_SCHED_EV_COLLECT_END 0x10u  /* kernel collection stops */

typedef struct gmp_sched {
    gmp_sched_spec spec;
    uint64_t step;      /* current step number */
    gmt_phase phase;    /* phase of the current step */
    uint64_t window;    /* windows begun so far */
    int in_window;
    uint64_t start_ns;  /* TIME: time of gmp_sched_init */
} gmp_sched;

/* Sets step 0 and its phase. For WHOLE the run starts inside window 0 (the
 * caller sees GMP_SCHED_EV_WINDOW_BEGIN from gmp_sched_init's return). */
unsigned gmp_sched_init(gmp_sched *s, const gmp_sched_spec *spec, uint64_t now_ns);
/* A step boundary: step+1 begins. Returns GMP_SCHED_EV_* bits. */
unsigned gmp_sched_step(gmp_sched *s);
/* TIME schedules: re-evaluates the phase at now_ns. */
unsigned gmp_sched_tick(gmp_sched *s, uint64_t now_ns);
/* CAPTURE: cudaProfilerStart (on=1) / cudaProfilerStop (on=0). */
unsigned gmp_sched_capture(gmp_sched *s, int on);
/* Process end: closes an open window (returns WINDOW_END if one was open). */
unsigned gmp_sched_finish(gmp_sched *s);
/* 1 when kernels are collected in the current phase (WARMUP or ACTIVE). */
int gmp_sched_collects(const gmp_sched *s);

/* Added notes (schedule.c has the full list of decisions):
 * - An omitted repeat means 1 (one cycle); "repeat=0" is torch's forever.
 * - Every cycle's ACTIVE steps are one window, as torch.profiler saves one
 *   trace per cycle: with wait=0 and warmup=0 a step can return WINDOW_END
 *   and WINDOW_BEGIN together; the END applies first.
 * - Window numbers: after WINDOW_BEGIN the new window is s->window - 1; a
 *   WINDOW_END closes s->window - 1, or s->window - 2 when WINDOW_BEGIN is
 *   set in the same return.
 * - gmp_sched_init reports a transition from "before the run" (phase NONE,
 *   no window, not collecting), so its bits can be handled like any other.
 * - After gmp_sched_finish (phase DONE) nothing changes any more; step()
 *   still counts steps. */

#endif
