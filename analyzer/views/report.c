/*
 * The report of a finished replay (report.h): its --by table, the summary
 * totals, the allocations live at each device's peak, the leaks, and the
 * warnings and notes.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "names.h"
#include "owners.h"
#include "tables.h"
#include "tracestr.h"

/* ---- groups: live at the peak and leaks ---------------------------------------- */

typedef struct grp {
    uint32_t name;
    uint64_t bytes, count;
    size_t label;
} grp;

typedef struct grpset {
    gma_map of;
    gma_vec v; /* grp */
} grpset;

static int grp_add(grpset *g, uint32_t name, uint64_t bytes)
{
    uint32_t i;
    if (!gma_map_get(&g->of, name, &i)) {
        grp *x = gma_vec_push(&g->v);
        if (!x)
            return -1;
        x->name = name;
        i = (uint32_t)(g->v.len - 1);
        if (gma_map_put(&g->of, name, i) != 0)
            return -1;
    }
    grp *x = &GMA_VEC_AT(&g->v, grp, i);
    x->bytes += bytes;
    x->count++;
    return 0;
}

typedef struct grpctx {
    const gma_strs *labels;
} grpctx;

static int grp_cmp(const void *pa, const void *pb, void *pc)
{
    const grp *a = pa, *b = pb;
    const grpctx *c = pc;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return strcmp(gma_strs_get(c->labels, a->label), gma_strs_get(c->labels, b->label));
}

/* Labels, sorts and copies the first `top` groups to out (gma_group). */
static int grp_finish(const gma_replay *r, grpset *g, int kernels, gma_strs *strs, uint64_t top, gma_vec *out,
                      uint64_t *more)
{
    gma_buf b = { 0 };
    int err = 0;
    if (kernels) {
        uint32_t *ids = calloc(g->v.len ? g->v.len : 1, sizeof(*ids));
        size_t *offs = calloc(g->v.len ? g->v.len : 1, sizeof(*offs));
        err = !ids || !offs;
        for (size_t i = 0; i < g->v.len && !err; i++)
            ids[i] = GMA_VEC_AT(&g->v, grp, i).name;
        if (!err)
            err = gma_kernel_labels(r, ids, g->v.len, strs, offs) != 0;
        for (size_t i = 0; i < g->v.len && !err; i++)
            GMA_VEC_AT(&g->v, grp, i).label = offs[i];
        free(ids);
        free(offs);
    }
    for (size_t i = 0; i < g->v.len && !kernels; i++) {
        grp *x = &GMA_VEC_AT(&g->v, grp, i);
        gma_buf_reset(&b);
        gma_range_display(r, x->name, r->opt.full_names, &b);
        x->label = gma_strs_add(strs, gma_buf_str(&b), b.len);
        err |= x->label == (size_t)-1 || b.oom;
    }
    grpctx c = { strs };
    err |= gma_msort(g->v.data, g->v.len, sizeof(grp), grp_cmp, &c) != 0;
    gma_vec_init(out, sizeof(gma_group));
    size_t keep = top && top < g->v.len ? (size_t)top : g->v.len;
    *more = g->v.len - keep;
    for (size_t i = 0; i < keep && !err; i++) {
        const grp *x = &GMA_VEC_AT(&g->v, grp, i);
        gma_group *o = gma_vec_push(out);
        if (!o) {
            err = 1;
            break;
        }
        o->name = x->label;
        o->bytes = x->bytes;
        o->count = x->count;
    }
    gma_buf_free(&b);
    gma_map_free(&g->of);
    gma_vec_free(&g->v);
    return err ? -1 : 0;
}

static void grp_init(grpset *g)
{
    memset(g, 0, sizeof(*g));
    gma_vec_init(&g->v, sizeof(grp));
}

static size_t rep_label(gma_report *rep, const char *s)
{
    size_t off = gma_strs_add(&rep->strs, s, strlen(s));
    return off == (size_t)-1 ? 0 : off;
}

static int build_peak(gma_report *rep, unsigned d)
{
    const gma_replay *r = rep->r;
    const gma_dev *D = &r->dev[d];
    gma_peakview *pv = &rep->peaks[rep->npeaks++];
    memset(pv, 0, sizeof(*pv));
    pv->device = d;
    pv->peak = D->peak;
    pv->ts = D->peak_ts;
    pv->step = D->peak_step;
    pv->window = D->peak_window;
    gma_buf b = { 0 };
    gma_kernel_display(r, D->peak_kname, r->opt.full_names, &b);
    pv->kernel = rep_label(rep, gma_buf_str(&b));
    gma_buf_reset(&b);
    gma_range_display(r, D->peak_rname, r->opt.full_names, &b);
    pv->range = rep_label(rep, gma_buf_str(&b));
    gma_buf_free(&b);
    grpset gk, gr;
    grp_init(&gk);
    grp_init(&gr);
    gma_ownset os;
    gma_ownset_init(&os, r, &pv->own);
    int err = gma_owners_peak(r, d, &rep->strs, &pv->module, &pv->line) != 0;
    pv->has_cats = gma_category_at_peak(r, d, pv->cats) == 0;
    for (size_t i = 0; i < r->entries.len && !err; i++) {
        const gma_entry *e = &GMA_VEC_AT(&r->entries, gma_entry, i);
        if (!(e->flags & GMA_E_INUSE) || e->device != d || (e->flags & GMA_E_HOST))
            continue;
        if (!gma_entry_live_at_peak(r, e))
            continue;
        pv->count++;
        pv->bytes += e->bytes;
        if (e->flags & GMA_E_BASELINE) {
            pv->baseline_bytes += e->bytes;
            pv->baseline_count++;
            continue;
        }
        err |= grp_add(&gk, e->kname, e->bytes) != 0;
        err |= grp_add(&gr, e->rname, e->bytes) != 0;
        err |= gma_ownset_add(&os, r, e) != 0;
    }
    uint64_t top = r->opt.top;
    err |= gma_ownset_finish(&os, r, &rep->strs, top) != 0;
    err |= grp_finish(r, &gk, 1, &rep->strs, top, &pv->by_kernel, &pv->more_kernels) != 0;
    err |= grp_finish(r, &gr, 0, &rep->strs, top, &pv->by_range, &pv->more_ranges) != 0;
    return err ? -1 : 0;
}

static int build_leaks(gma_report *rep)
{
    const gma_replay *r = rep->r;
    gma_leakview *lv = &rep->leaks;
    grpset gk, gr;
    grp_init(&gk);
    grp_init(&gr);
    gma_ownset os;
    gma_ownset_init(&os, r, &lv->own);
    int err = 0;
    for (size_t i = 0; i < r->entries.len && !err; i++) {
        const gma_entry *e = &GMA_VEC_AT(&r->entries, gma_entry, i);
        if ((e->flags & (GMA_E_INUSE | GMA_E_LEAKED)) != (GMA_E_INUSE | GMA_E_LEAKED))
            continue;
        if (!gma_dev_selected(r, e->device))
            continue;
        lv->bytes += e->bytes;
        lv->count++;
        if (e->flags & GMA_E_LEAK_AT_END)
            lv->at_trace_end = 1;
        err |= grp_add(&gk, e->kname, e->bytes) != 0;
        err |= grp_add(&gr, e->rname, e->bytes) != 0;
        err |= gma_ownset_add(&os, r, e) != 0;
    }
    err |= gma_ownset_finish(&os, r, &rep->strs, r->opt.top) != 0;
    err |= gma_owners_growth(r, &rep->strs, r->opt.top, &lv->growth, &lv->more_growth) != 0;
    err |= grp_finish(r, &gk, 1, &rep->strs, r->opt.top, &lv->by_kernel, &lv->more_kernels) != 0;
    err |= grp_finish(r, &gr, 0, &rep->strs, r->opt.top, &lv->by_range, &lv->more_ranges) != 0;
    return err ? -1 : 0;
}

/* ---- warnings and notes ------------------------------------------------------------ */

/* The next of GMA_MAX_WARN slots of width bytes (a list full keeps its first). */
static void vadd(char *slots, size_t width, size_t *n, const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
static void vadd(char *slots, size_t width, size_t *n, const char *fmt, va_list ap)
{
    if (*n < GMA_MAX_WARN)
        vsnprintf(slots + (*n)++ * width, width, fmt, ap);
}

static void warn(gma_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(gma_report *rep, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd(rep->warn[0], sizeof(rep->warn[0]), &rep->nwarn, fmt, ap);
    va_end(ap);
}

static void note(gma_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(gma_report *rep, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd(rep->notes[0], sizeof(rep->notes[0]), &rep->nnotes, fmt, ap);
    va_end(ap);
}

/* What a selection could have named: " (this trace has windows 0-3)",
 * " (this trace has no steps)", for a warning to say what to pass instead. */
static void present_span(char *out, size_t cap, const char *what, int any, uint64_t lo, uint64_t hi)
{
    if (!any)
        snprintf(out, cap, " (this trace has no %ss)", what);
    else if (lo == hi)
        snprintf(out, cap, " (this trace has %s %llu only)", what, (unsigned long long)lo);
    else
        snprintf(out, cap, " (this trace has %ss %llu-%llu)", what, (unsigned long long)lo, (unsigned long long)hi);
}

static void build_messages(gma_report *rep)
{
    const gma_replay *r = rep->r;
    char b1[GMA_FMT_CAP];
    char msg[400];
    if (gma_trace_warning(r, msg, sizeof(msg)))
        warn(rep, "%s", msg);
    if (r->has_trailer_rec && (r->trailer.status & GMT_TRAILER_WRITE_ERRORS))
        warn(rep, "the profiler could not write some frames of this trace: records are missing");
    if (r->has_trailer_rec && (r->trailer.status & GMT_TRAILER_DISABLED))
        warn(rep, "the profiler turned itself off during the run: the trace stops early");
    if (r->has_stats && (r->stats.dropped_cupti || r->stats.dropped_writer))
        warn(rep, "%llu records were dropped (CUPTI %llu, writer %llu): totals are lower bounds",
             (unsigned long long)(r->stats.dropped_cupti + r->stats.dropped_writer),
             (unsigned long long)r->stats.dropped_cupti, (unsigned long long)r->stats.dropped_writer);
    char span[96];
    uint64_t lo = UINT64_MAX, hi = 0;
    if (r->opt.window >= 0 && !rep->windows_selected) {
        for (size_t i = 0; i < r->windows.len; i++) {
            uint64_t id = GMA_VEC_AT(&r->windows, gma_window, i).id;
            lo = id < lo ? id : lo;
            hi = id > hi ? id : hi;
        }
        present_span(span, sizeof span, "window", r->windows.len > 0, lo, hi);
        warn(rep, "window %lld is not in this trace%s", (long long)r->opt.window, span);
    }
    /* --step and --device as --window: a selection that matches nothing says so */
    int step_found = 0;
    lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; r->opt.step >= 0 && i < r->steps.len; i++) {
        uint64_t st = GMA_VEC_AT(&r->steps, gma_steprow, i).step;
        step_found |= st == (uint64_t)r->opt.step;
        lo = st < lo ? st : lo;
        hi = st > hi ? st : hi;
    }
    if (r->opt.step >= 0 && !step_found) {
        present_span(span, sizeof span, "step", r->steps.len > 0, lo, hi);
        warn(rep, "step %lld is not in this trace%s", (long long)r->opt.step, span);
    }
    if (r->opt.device >= 0 && r->opt.device < GMA_MAX_DEVICES && !r->dev[r->opt.device].present) {
        int any = 0;
        lo = UINT64_MAX, hi = 0;
        for (unsigned d = 0; d < GMA_MAX_DEVICES; d++)
            if (r->dev[d].present) {
                any = 1;
                lo = d < lo ? d : lo;
                hi = d > hi ? d : hi;
            }
        present_span(span, sizeof span, "device", any, lo, hi);
        warn(rep, "device %lld is not in this trace%s", (long long)r->opt.device, span);
    }
    if (gma_layer_warning(r, msg, sizeof(msg)))
        warn(rep, "%s", msg);
    if (r->unmatched_frees)
        note(rep, "frees of addresses not in the live set, ignored: %llu (%s)", (unsigned long long)r->unmatched_frees,
             gma_fmt_bytes(b1, r->unmatched_free_bytes));
    if (r->replaced_allocs)
        note(rep, "allocations at an address already live (a free was lost; the old one dropped): %llu",
             (unsigned long long)r->replaced_allocs);
    if (r->unknown_ranges)
        note(rep, "memory events naming an unknown NVTX range instance, counted as (unattributed): %llu",
             (unsigned long long)r->unknown_ranges);
    if (r->pending_evicted)
        note(rep, "kernel waits given up to bound memory (their allocations are (unattributed)): %llu",
             (unsigned long long)r->pending_evicted);
    if (r->unordered_mem)
        note(rep, "memory events older than the one before them (replayed in trace order): %llu",
             (unsigned long long)r->unordered_mem);
    if (r->bad_device)
        note(rep, "records naming a device id >= %d, ignored: %llu", GMA_MAX_DEVICES, (unsigned long long)r->bad_device);
    if (r->bad_strings)
        note(rep, "string records with an id out of range, ignored: %llu", (unsigned long long)r->bad_strings);
    if (r->huge_refused)
        note(rep, "records refused as damaged: %llu, whose sizes would take the trace's past 4 EiB in all, more "
                  "than any machine holds (so that no total wraps)", (unsigned long long)r->huge_refused);
    if (r->rend.skipped_unknown)
        note(rep, "records of a newer, unknown type, skipped: %llu", (unsigned long long)r->rend.skipped_unknown);
}

int gma_report_build(gma_report *rep, const gma_replay *r)
{
    memset(rep, 0, sizeof(*rep));
    rep->r = r;
    gma_strs_add(&rep->strs, "", 0); /* offset 0 is "" */
    int err = gma_table_build(r, &rep->table, r->opt.top) != 0;
    for (unsigned d = 0; d < GMA_MAX_DEVICES && !err; d++) {
        const gma_dev *D = &r->dev[d];
        if (D->present && gma_dev_selected(r, d)) {
            rep->alloc_bytes += D->alloc_bytes;
            rep->free_bytes += D->free_bytes;
            rep->alloc_count += D->alloc_count;
            rep->free_count += D->free_count;
            rep->leaked_bytes += D->leaked_bytes;
            rep->leaked_count += D->leaked_count;
            rep->baseline_bytes += D->baseline_bytes;
            rep->baseline_count += D->baseline_count;
            rep->kernels += D->kernels;
            rep->kernel_ns += D->kernel_ns;
            if (D->host_peak > rep->host_peak)
                rep->host_peak = D->host_peak;
            if (D->has_peak)
                err |= build_peak(rep, d) != 0;
        }
    }
    for (size_t i = 0; i < r->windows.len; i++) {
        const gma_window *w = &GMA_VEC_AT(&r->windows, gma_window, i);
        if (r->opt.window < 0 || w->id == (uint64_t)r->opt.window)
            rep->windows_selected++;
    }
    for (size_t i = 0; i < r->steps.len; i++) {
        const gma_steprow *s = &GMA_VEC_AT(&r->steps, gma_steprow, i);
        if (!s->in_window && !s->alloc_count && !s->free_count && !s->kernels)
            continue;
        if (!rep->steps_count || s->step < rep->step_first)
            rep->step_first = s->step;
        if (!rep->steps_count || s->step > rep->step_last)
            rep->step_last = s->step;
        rep->steps_count++;
    }
    if (!err)
        err |= build_leaks(rep) != 0;
    if (!err)
        err |= gma_hints_build(&rep->hints, r) != 0;
    if (!err)
        err |= gma_oom_view_build(&rep->oom, r) != 0;
    rep->mode = gma_allocator_mode(r);
    build_messages(rep);
    return err ? -1 : 0;
}

void gma_report_free(gma_report *rep)
{
    gma_oom_view_free(&rep->oom);
    gma_table_free(&rep->table);
    for (size_t i = 0; i < rep->npeaks; i++) {
        gma_vec_free(&rep->peaks[i].by_kernel);
        gma_vec_free(&rep->peaks[i].by_range);
        gma_owngroups_free(&rep->peaks[i].own);
    }
    gma_owngroups_free(&rep->leaks.own);
    gma_vec_free(&rep->leaks.growth);
    gma_vec_free(&rep->leaks.by_kernel);
    gma_vec_free(&rep->leaks.by_range);
    gma_strs_free(&rep->strs);
}
