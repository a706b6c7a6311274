/*
 * Posting events to the writer: the event ring (gmp_g.ring, evring.h) and
 * the semaphore that wakes the writer early. Every source posts through
 * here; the writer waits on it and re-arms the half-full wake-up.
 *
 * Hot path: a post is one ring push (no lock, no allocation); a wake is one
 * sem_post (a system call only while the writer waits), made by the rare
 * callers that need the writer now
 * (a step, a tag, a completed buffer, a half-full ring).
 */
#ifndef GMEMPROF_PROFILER_POST_H
#define GMEMPROF_PROFILER_POST_H

#include "evring.h"

/* Fills tid/epoch/ts when 0, pushes; a drop is counted by the ring. */
void gmp_post(gmp_ev *ev);
/* Pushes as is: 0, or -1 dropped (counted). */
int gmp_post_ready(const gmp_ev *ev);
/* The writer, after it drained the ring: the next half-full ring wakes it again. */
void gmp_post_rearm(void);

/* The wake-up semaphore: made at light init (without one the writer only
 * polls), forgotten in a fork child (no writer runs there). */
void gmp_wake_open(void);
void gmp_wake_forget(void);
/* Wakes the writer (async-signal-safe: sem_post). */
void gmp_wake(void);
/* The writer: waits up to ms for a wake-up, then takes all pending ones. */
void gmp_wake_wait(unsigned ms);

#endif
