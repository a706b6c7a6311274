/*
 * Posting events to the writer: the event ring (gmp_g.ring, evring.h) and
 * the eventfd that wakes the writer early. Every source posts through here;
 * the writer reads the fd and re-arms the half-full wake-up.
 *
 * Hot path: a post is one ring push (no lock, no allocation); a wake is one
 * write() on the eventfd, made by the rare callers that need the writer now
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

/* The wake-up eventfd: made at light init (-1 without one: the writer then
 * only polls), forgotten in a fork child (it is the parent's). */
void gmp_wake_open(void);
void gmp_wake_forget(void);
int gmp_wake_fd(void);
/* Wakes the writer (async-signal-safe: one write()). */
void gmp_wake(void);

#endif
