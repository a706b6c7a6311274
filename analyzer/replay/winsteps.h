/*
 * Windows, steps and streams: the window an event falls in (the schedule's
 * windows, or the whole trace as one), its leaks when it closes, the row
 * of each step and of each stream, and the STEP and WINDOW_END records.
 */
#ifndef GMA_WINSTEPS_H
#define GMA_WINSTEPS_H

#include "replay_int.h"

gma_steprow *gma_step_row_slow(gma_replay *r, uint64_t step);
gma_streamrow *gma_stream_row(gma_replay *r, uint64_t dev, uint64_t stream);
/* Opens window id at ts; its index, -1 out of memory. */
int64_t gma_window_open(gma_replay *r, uint64_t id, uint64_t ts, uint64_t step, int implicit);
/* The window of an event at ts when it is not the open one (win_of). */
int64_t gma_win_of_slow(gma_replay *r, uint64_t ts);
/* Closes the open window at ts: its end, and the leaks made in it. */
void gma_window_close(gma_replay *r, uint64_t ts, uint64_t last_step, uint64_t reason, int have_end);
/* STEP and WINDOW_END records. */
void gma_on_step(gma_replay *r, const gmt_step *s);
void gma_on_window_end(gma_replay *r, const gmt_window_end *e);
/* The complete steps of a finished replay's window W: its first step to
 * the one before its last (a window's last step may be cut short by its
 * end), into [*lo, *hi]; 0 when there are fewer than three. */
int gma_window_full_steps(const gma_replay *r, const gma_window *W, uint64_t *lo, uint64_t *hi);

static inline gma_steprow *step_row(gma_replay *r, uint64_t step)
{
    /* the row's address, not its index: no multiply by its size per event */
    if (r->last_step_row && r->last_step_key == step)
        return r->last_step_row;
    return gma_step_row_slow(r, step);
}

static inline int64_t win_of(gma_replay *r, uint64_t ts)
{
    /* win_from: 0 in an implicit window, its begin in a recorded one,
     * UINT64_MAX outside (where no time is >= it but UINT64_MAX, which the
     * test below sends to gma_win_of_slow too) */
    if (ts >= r->win_from && r->cur_win >= 0)
        return r->cur_win;
    return gma_win_of_slow(r, ts);
}

static inline int win_selected(const gma_replay *r, int64_t w)
{
    return w >= 0 && (r->opt.window < 0 || WIN(r, w)->id == (uint64_t)r->opt.window);
}

static inline int step_selected(const gma_replay *r)
{
    return r->opt.step < 0 || (r->has_cur_step && r->cur_step == (uint64_t)r->opt.step);
}

#endif
