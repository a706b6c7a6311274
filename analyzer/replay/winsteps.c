/*
 * Windows, steps and streams (winsteps.h).
 */
#include "winsteps.h"
#include "devtime.h"

gma_steprow *gma_step_row_slow(gma_replay *r, uint64_t step)
{
    uint32_t i;
    if (!gma_map_get(&r->step_of, step, &i)) {
        gma_steprow *s = gma_vec_push(&r->steps);
        if (!s) {
            oom(r);
            return NULL;
        }
        r->last_step_row = NULL; /* the rows may have moved */
        s->step = step;
        i = (uint32_t)(r->steps.len - 1);
        if (gma_map_put(&r->step_of, step, i) != 0) {
            oom(r);
            return NULL;
        }
    }
    r->last_step_key = step;
    r->last_step_row = STEPROW(r, i);
    return r->last_step_row;
}

gma_streamrow *gma_stream_row(gma_replay *r, uint64_t dev, uint64_t stream)
{
    uint64_t key = (dev << 48) ^ stream;
    uint32_t i;
    if (!gma_map_get(&r->stream_of, key, &i)) {
        gma_streamrow *s = gma_vec_push(&r->streams);
        if (!s) {
            oom(r);
            return NULL;
        }
        s->device = dev;
        s->stream = stream;
        i = (uint32_t)(r->streams.len - 1);
        if (gma_map_put(&r->stream_of, key, i) != 0) {
            oom(r);
            return NULL;
        }
    }
    return &GMA_VEC_AT(&r->streams, gma_streamrow, i);
}

int64_t gma_window_open(gma_replay *r, uint64_t id, uint64_t ts, uint64_t step, int implicit)
{
    gma_window *w = gma_vec_push(&r->windows);
    if (!w) {
        oom(r);
        return -1;
    }
    w->id = id;
    w->begin_ts = ts;
    w->first_step = w->last_step = step;
    w->implicit = implicit;
    r->cur_win = (int64_t)(r->windows.len - 1);
    r->cur_begin = ts;
    r->cur_implicit = implicit;
    r->win_from = implicit ? 0 : ts;
    /* The per-device baseline of the summary is the first selected window's. */
    if (r->baseline_win < 0 && (r->opt.window < 0 || id == (uint64_t)r->opt.window))
        r->baseline_win = r->cur_win;
    return r->cur_win;
}

/* The window an event at ts belongs to, -1 outside every window. */
int64_t gma_win_of_slow(gma_replay *r, uint64_t ts)
{
    /* late records (kernels come after their window closed) */
    size_t n = r->windows.len;
    for (size_t k = 0; k < n && k < 8; k++) {
        size_t i = n - 1 - k;
        gma_window *w = WIN(r, i);
        if ((int64_t)i != r->cur_win && w->closed && ts >= w->begin_ts && ts <= w->end_ts)
            return (int64_t)i;
    }
    /* No window records at all (and no step says we are outside one): the
     * whole trace is one implicit window. */
    if (!r->window_records && r->cur_win < 0 && (!r->phase_seen || r->cur_phase == GMT_PHASE_ACTIVE))
        return gma_window_open(r, 0, ts, r->has_cur_step ? r->cur_step : 0, 1);
    return -1;
}

void gma_window_close(gma_replay *r, uint64_t ts, uint64_t last_step, uint64_t reason, int have_end)
{
    if (r->cur_win < 0)
        return;
    uint32_t wi = (uint32_t)r->cur_win;
    gma_window *w = WIN(r, wi);
    w->end_ts = ts;
    w->last_step = last_step;
    w->reason = reason;
    w->closed = 1;
    w->no_end = !have_end;
    /* Leaks: made in this window, accounted, still live at its end. The
     * live map holds exactly the live entries: walk it, not the pool. */
    for (size_t b = 0; b < r->live.cap; b++) {
        if (!r->live.b[b].val)
            continue;
        gma_entry *e = ENT(r, r->live.b[b].val - 1);
        if ((e->flags & (GMA_E_INUSE | GMA_E_LIVE | GMA_E_ACCOUNTED | GMA_E_BASELINE)) !=
                (GMA_E_INUSE | GMA_E_LIVE | GMA_E_ACCOUNTED) ||
            e->window != wi || e->source == GMT_SRC_STATIC) /* module globals live as long as their module */
            continue;
        e->flags |= GMA_E_LEAKED | (have_end ? 0 : GMA_E_LEAK_AT_END);
        w = WIN(r, wi);
        w->leaked_bytes += e->bytes;
        w->leaked_count++;
        if (!(e->flags & GMA_E_HOST)) {
            r->dev[e->device].leaked_bytes += e->bytes;
            r->dev[e->device].leaked_count++;
        }
    }
    r->cur_win = -1;
    r->win_from = UINT64_MAX;
}

void gma_on_step(gma_replay *r, const gmt_step *s)
{
    note_ts(r, s->ts);
    if (r->has_cur_step && r->cur_step != s->step) {
        gma_steprow *prev = step_row(r, r->cur_step);
        if (prev && !prev->end_ts)
            prev->end_ts = s->ts;
    }
    r->cur_step = s->step;
    r->has_cur_step = 1;
    r->cur_phase = s->phase;
    r->phase_seen = 1;
    r->step_records++;
    gma_steprow *st = step_row(r, s->step);
    if (st) {
        st->start_ts = s->ts;
        st->has_start = 1;
        st->phase = s->phase;
    }
    int64_t w = win_of(r, s->ts);
    if (r->cur_win >= 0 && w == r->cur_win) {
        gma_window *W = WIN(r, w);
        W->last_step = s->step;
    }
    if (win_selected(r, w) && step_selected(r)) {
        if (st)
            st->in_window = 1;
        PUBLISH(r, step, s);
    }
}

void gma_on_window_end(gma_replay *r, const gmt_window_end *e)
{
    note_ts(r, e->ts);
    r->window_records = 1;
    if (r->cur_win < 0)
        return;
    int sel = win_selected(r, r->cur_win);
    gma_window_close(r, e->ts, e->step, e->reason, 1);
    if (sel)
        PUBLISH(r, window, e->window, e->ts, 0);
}

int gma_window_full_steps(const gma_replay *r, const gma_window *W, uint64_t *lo, uint64_t *hi)
{
    int any = 0;
    uint64_t a = 0, b = 0;
    for (size_t i = 0; i < r->steps.len; i++) {
        const gma_steprow *s = &GMA_VEC_AT(&r->steps, gma_steprow, i);
        if (!s->has_start || s->start_ts < W->begin_ts || (W->closed && s->start_ts > W->end_ts))
            continue;
        if (!any || s->step < a)
            a = s->step;
        if (!any || s->step > b)
            b = s->step;
        any = 1;
    }
    if (!any || b < a + 3)
        return 0;
    *lo = a;
    *hi = b - 1;
    return 1;
}
