/*
 * --format json: one object holding everything the other formats print --
 * trace, warnings, summary (an object), table (columns and rows), live at
 * the peak, leaks -- with exact integers for bytes and nanoseconds. The
 * --diff and several-rank views print here too; every table goes through
 * gma_json_columns and gma_json_rows.
 */
#include <string.h>

#include "oom.h"
#include "print.h"
#include "tracestr.h"

void gma_json_cell(gma_jw *j, const gma_table *t, size_t col, const gma_cell *c)
{
    if (c->null) {
        gma_jw_null(j);
        return;
    }
    char buf[64];
    switch (t->cols[col].type) {
    case GMA_CT_STR: gma_jw_str(j, gma_cell_text(t, c)); break;
    case GMA_CT_U64:
    case GMA_CT_BYTES:
    case GMA_CT_NS: gma_jw_u64(j, c->v.u); break;
    case GMA_CT_I64:
    case GMA_CT_SBYTES:
    case GMA_CT_DBYTES:
    case GMA_CT_DNS:
    case GMA_CT_TS: gma_jw_i64(j, c->v.i); break;
    case GMA_CT_HEX:
        snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)c->v.u);
        gma_jw_str(j, buf);
        break;
    case GMA_CT_RATIO: gma_jw_dbl(j, c->v.d); break;
    case GMA_CT_PCT:
    case GMA_CT_SHARE:
    case GMA_CT_REAL: gma_jw_dbl_exact(j, c->v.d); break;
    }
}

void gma_json_columns(gma_jw *j, const gma_table *t)
{
    gma_jw_key(j, "columns");
    gma_jw_begin(j, '[');
    for (size_t c = 0; c < t->ncols; c++)
        gma_jw_str(j, t->cols[c].key);
    gma_jw_end(j, ']');
}

void gma_json_rows(gma_jw *j, const gma_table *t)
{
    gma_jw_key(j, "rows");
    gma_jw_begin(j, '[');
    for (size_t row = 0; row < t->nrows; row++) {
        gma_jw_begin(j, '{');
        for (size_t c = 0; c < t->ncols; c++) {
            gma_jw_key(j, t->cols[c].key);
            gma_json_cell(j, t, c, gma_table_cell(t, row, c));
        }
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
}

static void groups(gma_jw *j, const gma_report *rep, const char *key, const gma_vec *v, uint64_t more)
{
    gma_jw_key(j, key);
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < v->len; i++) {
        const gma_group *g = &GMA_VEC_AT(v, gma_group, i);
        gma_jw_begin(j, '{');
        gma_jw_kstr(j, "name", gma_rep_str(rep, g->name));
        gma_jw_ku64(j, "bytes", g->bytes);
        gma_jw_ku64(j, "count", g->count);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
    char k[64];
    snprintf(k, sizeof(k), "%s_more", key);
    gma_jw_ku64(j, k, more);
}

/* The PyTorch bridge: torch.cuda's own counters over the trace (layer.h). */
static void framework_json(gma_jw *j, const gma_replay *r)
{
    gma_jw_kstr(j, "layer", r->fw ? "blocks" : "segments");
    gma_jw_key(j, "framework");
    gma_jw_begin(j, '[');
    for (unsigned d = 0; d < GMA_LAYER_DEVICES; d++) {
        const gma_layer_dev *L = &r->layer.dev[d];
        if (!gma_layer_dev_used(L) || !gma_dev_selected(r, d))
            continue;
        gma_jw_begin(j, '{');
        gma_jw_ku64(j, "device", d);
        gma_jw_ku64(j, "allocated_peak_bytes", L->allocated_peak);
        gma_jw_ki64(j, "allocated_peak_time_ns", gma_rel(r, L->allocated_peak_ts));
        gma_jw_ku64(j, "reserved_peak_bytes", L->reserved_peak);
        gma_jw_ku64(j, "at_peak_reserved_bytes", L->at_peak_reserved);
        gma_jw_ku64(j, "at_peak_unallocated_bytes", gma_layer_unallocated(L));
        gma_jw_ku64(j, "at_peak_outside_allocator_bytes", gma_layer_outside(L->at_peak_cuda, L->at_peak_reserved));
        gma_jw_key(j, "at_peak_driver_used_bytes");
        if (L->has_peak_used)
            gma_jw_u64(j, L->peak_used);
        else
            gma_jw_null(j);
        gma_jw_ku64(j, "cuda_peak_bytes", L->cuda_peak);
        static const char *const hs[] = { "none", "ok", "expandable", "budget" };
        gma_jw_kstr(j, "holes", hs[L->holes_state]);
        gma_jw_ku64(j, "holes_bytes", L->holes_bytes);
        gma_jw_ku64(j, "holes_count", L->holes_count);
        gma_jw_key(j, "largest_holes_bytes");
        gma_jw_begin(j, '[');
        for (int i = 0; i < GMA_LAYER_HOLES && L->holes[i]; i++)
            gma_jw_u64(j, L->holes[i]);
        gma_jw_end(j, ']');
        gma_jw_ku64(j, "ooms", L->ooms);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
}

/* "trace": the file, its reader status and its header. */
static void json_trace(gma_jw *j, const gma_replay *r)
{
    gma_jw_key(j, "trace");
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "path", r->path);
    gma_jw_ku64(j, "records", r->records);
    gma_jw_ku64(j, "duration_ns", r->has_ts ? r->last_ts - r->first_ts : 0);
    gma_jw_key(j, "truncated");
    gma_jw_bool(j, r->rend.truncated || r->rend.status != GMT_OK);
    gma_jw_key(j, "has_trailer");
    gma_jw_bool(j, r->rend.has_trailer);
    gma_jw_kstr(j, "reader_status", gmt_status_str(r->rend.status));
    gma_jw_kstr(j, "reader_message", r->rend.message);
    gma_jw_ku64(j, "frames", r->rend.frames);
    gma_jw_ku64(j, "file_bytes", r->rend.file_size);
    if (r->has_header) {
        gma_jw_ku64(j, "pid", r->hdr.pid);
        gma_jw_kstr(j, "host", gma_strs_get(&r->strs, r->hdr_host));
        gma_jw_kstr(j, "command", gma_strs_get(&r->strs, r->hdr_cmd));
        gma_jw_kstr(j, "profiler_version", gma_strs_get(&r->strs, r->hdr_ver));
        gma_jw_ki64(j, "rank", r->hdr.rank);
        gma_jw_ki64(j, "world_size", r->hdr.world_size);
    }
    gma_jw_end(j, '}');
}

/* "windows": one object per window shown. */
static void json_windows(gma_jw *j, const gma_replay *r)
{
    gma_jw_key(j, "windows");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < r->windows.len; i++) {
        const gma_window *w = &GMA_VEC_AT(&r->windows, gma_window, i);
        if (r->opt.window >= 0 && w->id != (uint64_t)r->opt.window)
            continue;
        gma_jw_begin(j, '{');
        gma_jw_ku64(j, "window", w->id);
        gma_jw_ku64(j, "first_step", w->first_step);
        gma_jw_ku64(j, "last_step", w->last_step);
        gma_jw_ki64(j, "begin_ns", gma_rel(r, w->begin_ts));
        gma_jw_ki64(j, "end_ns", gma_rel(r, w->end_ts));
        gma_jw_kstr(j, "end", gma_window_end_label(w));
        gma_jw_ku64(j, "baseline_bytes", w->baseline_seen_bytes);
        gma_jw_ku64(j, "baseline_count", w->baseline_seen_count);
        gma_jw_ku64(j, "baseline_bytes_recorded", w->baseline_bytes);
        gma_jw_ku64(j, "peak_bytes", w->peak);
        gma_jw_ku64(j, "alloc_bytes", w->alloc_bytes);
        gma_jw_ku64(j, "alloc_count", w->alloc_count);
        gma_jw_ku64(j, "freed_bytes", w->free_bytes);
        gma_jw_ku64(j, "free_count", w->free_count);
        gma_jw_ku64(j, "leaked_bytes", w->leaked_bytes);
        gma_jw_ku64(j, "leaked_count", w->leaked_count);
        gma_jw_ku64(j, "kernels", w->kernels);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
}

/* One device of "devices": its peak, totals and driver samples. */
static void json_device(gma_jw *j, const gma_report *rep, unsigned d)
{
    const gma_replay *r = rep->r;
    const gma_dev *D = &r->dev[d];
    const gma_peakview *pv = NULL;
    for (size_t i = 0; i < rep->npeaks; i++)
        if (rep->peaks[i].device == d)
            pv = &rep->peaks[i];
    gma_jw_begin(j, '{');
    gma_jw_ku64(j, "device", d);
    gma_jw_kstr(j, "name", D->name_off ? gma_strs_get(&r->strs, D->name_off) : "");
    gma_jw_ku64(j, "total_bytes", D->total_mem);
    gma_jw_key(j, "peak");
    if (pv) {
        gma_jw_begin(j, '{');
        gma_jw_ku64(j, "bytes", pv->peak);
        gma_jw_ki64(j, "time_ns", gma_rel(r, pv->ts));
        gma_jw_ku64(j, "step", pv->step);
        gma_jw_ku64(j, "window", pv->window);
        gma_jw_kstr(j, "kernel", gma_rep_str(rep, pv->kernel));
        gma_jw_kstr(j, "range", gma_rep_str(rep, pv->range));
        if (pv->module)
            gma_jw_kstr(j, "module", gma_rep_str(rep, pv->module));
        if (pv->line)
            gma_jw_kstr(j, "line", gma_rep_str(rep, pv->line));
        if (pv->has_cats) {
            gma_jw_key(j, "by_category");
            gma_jw_begin(j, '[');
            for (int c = 0; c < GMA_CAT_COUNT_; c++) {
                gma_jw_begin(j, '{');
                gma_jw_kstr(j, "name", gma_cat_names[c]);
                gma_jw_ku64(j, "bytes", pv->cats[c]);
                gma_jw_end(j, '}');
            }
            gma_jw_end(j, ']');
        }
        gma_jw_key(j, "driver_used_bytes");
        if (D->has_best)
            gma_jw_u64(j, D->best_used);
        else
            gma_jw_null(j);
        gma_jw_key(j, "driver_sample_ns");
        if (D->has_best)
            gma_jw_i64(j, gma_rel(r, D->best_ts));
        else
            gma_jw_null(j);
        gma_jw_end(j, '}');
    } else {
        gma_jw_null(j);
    }
    gma_jw_ku64(j, "peak_all_bytes", D->all_peak);
    gma_jw_ku64(j, "baseline_bytes", D->baseline_bytes);
    gma_jw_ku64(j, "baseline_count", D->baseline_count);
    gma_jw_ku64(j, "alloc_bytes", D->alloc_bytes);
    gma_jw_ku64(j, "alloc_count", D->alloc_count);
    gma_jw_ku64(j, "freed_bytes", D->free_bytes);
    gma_jw_ku64(j, "free_count", D->free_count);
    gma_jw_ku64(j, "leaked_bytes", D->leaked_bytes);
    gma_jw_ku64(j, "leaked_count", D->leaked_count);
    gma_jw_ku64(j, "kernels", D->kernels);
    if (gma_launch_times_only(r)) { /* launch mode: not collected */
        gma_jw_key(j, "kernel_ns");
        gma_jw_null(j);
    } else {
        gma_jw_ku64(j, "kernel_ns", D->kernel_ns);
    }
    gma_jw_key(j, "driver_used_max_bytes");
    if (D->has_sample)
        gma_jw_u64(j, D->max_used);
    else
        gma_jw_null(j);
    gma_jw_ku64(j, "pinned_host_peak_bytes", D->host_peak);
    gma_jw_end(j, '}');
}

/* "devices": the devices present and selected. */
static void json_devices(gma_jw *j, const gma_report *rep)
{
    const gma_replay *r = rep->r;
    gma_jw_key(j, "devices");
    gma_jw_begin(j, '[');
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++) {
        if (!r->dev[d].present || !gma_dev_selected(r, d))
            continue;
        json_device(j, rep, d);
    }
    gma_jw_end(j, ']');
}

/* "allocator": the mode and the sources seen. */
static void json_allocator(gma_jw *j, const gma_report *rep)
{
    const gma_replay *r = rep->r;
    gma_jw_key(j, "allocator");
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "mode", rep->mode.mode);
    gma_jw_kstr(j, "meaning", rep->mode.meaning);
    gma_jw_key(j, "sources");
    gma_jw_begin(j, '[');
    for (int s = 0; s < GMT_SRC_COUNT_; s++) {
        const gma_srcstat *x = &r->src[s];
        if (!x->count)
            continue;
        gma_jw_begin(j, '{');
        gma_jw_kstr(j, "source", gmt_mem_source_name(s));
        gma_jw_kstr(j, "label", gma_source_label(s));
        gma_jw_ku64(j, "count", x->count);
        gma_jw_ku64(j, "bytes", x->bytes);
        gma_jw_ku64(j, "frees", x->frees);
        gma_jw_ku64(j, "freed_bytes", x->free_bytes);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
    gma_jw_end(j, '}');
}

/* "dropped", "profiler_footprint" and "attribution": what the counts may miss. */
static void json_losses(gma_jw *j, const gma_replay *r)
{
    gma_jw_key(j, "dropped");
    if (r->has_stats) {
        gma_jw_begin(j, '{');
        gma_jw_ku64(j, "cupti", r->stats.dropped_cupti);
        gma_jw_ku64(j, "writer", r->stats.dropped_writer);
        gma_jw_ku64(j, "unmatched_correlations", r->stats.unmatched_corr);
        /* not a loss: records of steps outside every window, counted so
         * that made = written + cupti + writer + outside_windows */
        gma_jw_ku64(j, "outside_windows", r->stats.outside_window);
        gma_jw_end(j, '}');
    } else {
        gma_jw_null(j);
    }
    gma_jw_key(j, "profiler_footprint");
    if (r->has_stats) {
        gma_jw_begin(j, '{');
        gma_jw_ku64(j, "device_bytes", r->stats.own_device_bytes);
        gma_jw_ku64(j, "host_bytes", r->stats.own_host_bytes);
        gma_jw_ku64(j, "host_cpu_ns", r->stats.host_time_ns);
        gma_jw_end(j, '}');
    } else {
        gma_jw_null(j);
    }
    gma_jw_key(j, "attribution");
    gma_jw_begin(j, '{');
    gma_jw_ku64(j, "waits_given_up", r->pending_evicted);
    gma_jw_ku64(j, "kernels_never_seen", r->unattributed_end);
    gma_jw_ku64(j, "unknown_ranges", r->unknown_ranges);
    gma_jw_ku64(j, "unmatched_frees", r->unmatched_frees);
    gma_jw_ku64(j, "replaced_allocations", r->replaced_allocs);
    gma_jw_ku64(j, "memory_events_outside_windows", r->outside_mem);
    gma_jw_ku64(j, "memory_events_out_of_order", r->unordered_mem);
    gma_jw_end(j, '}');
}

/* "summary": windows, steps, devices, totals, allocator and losses. */
static void json_summary(gma_jw *j, const gma_report *rep)
{
    const gma_replay *r = rep->r;
    gma_jw_key(j, "summary");
    gma_jw_begin(j, '{');
    json_windows(j, r);
    gma_jw_key(j, "steps");
    gma_jw_begin(j, '{');
    gma_jw_ku64(j, "count", rep->steps_count);
    gma_jw_ku64(j, "first", rep->step_first);
    gma_jw_ku64(j, "last", rep->step_last);
    gma_jw_end(j, '}');
    json_devices(j, rep);

    gma_jw_ku64(j, "baseline_bytes", rep->baseline_bytes);
    gma_jw_ku64(j, "baseline_count", rep->baseline_count);
    gma_jw_ku64(j, "alloc_bytes", rep->alloc_bytes);
    gma_jw_ku64(j, "alloc_count", rep->alloc_count);
    gma_jw_ku64(j, "freed_bytes", rep->free_bytes);
    gma_jw_ku64(j, "free_count", rep->free_count);
    gma_jw_ku64(j, "leaked_bytes", rep->leaked_bytes);
    gma_jw_ku64(j, "leaked_count", rep->leaked_count);
    gma_jw_ku64(j, "kernels", rep->kernels);
    if (gma_launch_times_only(r)) { /* launch mode: no GPU time was collected */
        gma_jw_key(j, "kernel_ns");
        gma_jw_null(j);
    } else {
        gma_jw_ku64(j, "kernel_ns", rep->kernel_ns);
    }

    if (r->layer.seen)
        framework_json(j, r);
    json_allocator(j, rep);
    json_losses(j, r);
    gma_jw_key(j, "notes");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < rep->nnotes; i++)
        gma_jw_str(j, rep->notes[i]);
    gma_jw_end(j, ']');
    gma_jw_end(j, '}'); /* summary */
}

/* "live_at_peak": what was live at each device's peak. */
static void json_live_at_peak(gma_jw *j, const gma_report *rep)
{
    const gma_replay *r = rep->r;
    gma_jw_key(j, "live_at_peak");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < rep->npeaks; i++) {
        const gma_peakview *pv = &rep->peaks[i];
        gma_jw_begin(j, '{');
        gma_jw_ku64(j, "device", pv->device);
        gma_jw_ku64(j, "peak_bytes", pv->peak);
        gma_jw_ki64(j, "time_ns", gma_rel(r, pv->ts));
        gma_jw_ku64(j, "step", pv->step);
        gma_jw_ku64(j, "bytes", pv->bytes);
        gma_jw_ku64(j, "count", pv->count);
        gma_jw_ku64(j, "baseline_bytes", pv->baseline_bytes);
        gma_jw_ku64(j, "baseline_count", pv->baseline_count);
        groups(j, rep, "by_kernel", &pv->by_kernel, pv->more_kernels);
        groups(j, rep, "by_range", &pv->by_range, pv->more_ranges);
        if (pv->own.has_module)
            groups(j, rep, "by_module", &pv->own.by_module, pv->own.more_modules);
        if (pv->own.has_line)
            groups(j, rep, "by_line", &pv->own.by_line, pv->own.more_lines);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
}

/* "growth": the owners whose leaks were made in several steps (owners.h). */
static void json_growth(gma_jw *j, const gma_report *rep)
{
    const gma_leakview *lv = &rep->leaks;
    gma_jw_key(j, "growth");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < lv->growth.len; i++) {
        const gma_growth *g = &GMA_VEC_AT(&lv->growth, gma_growth, i);
        gma_jw_begin(j, '{');
        gma_jw_kstr(j, "name", gma_rep_str(rep, g->name));
        gma_jw_kstr(j, "owner", g->is_module ? "module" : "range");
        gma_jw_ku64(j, "steps", g->steps);
        gma_jw_ku64(j, "first_step", g->first_step);
        gma_jw_ku64(j, "last_step", g->last_step);
        gma_jw_ku64(j, "bytes", g->bytes);
        gma_jw_ku64(j, "count", g->count);
        gma_jw_ku64(j, "bytes_per_step", g->bytes / g->steps);
        gma_jw_ku64(j, "min_step_bytes", g->min_step_bytes);
        gma_jw_ku64(j, "max_step_bytes", g->max_step_bytes);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
    gma_jw_ku64(j, "growth_more", lv->more_growth);
}

/* "leaks": what stayed allocated, and the net per step. */
static void json_leaks(gma_jw *j, const gma_report *rep)
{
    const gma_replay *r = rep->r;
    gma_jw_key(j, "leaks");
    gma_jw_begin(j, '{');
    gma_jw_ku64(j, "bytes", rep->leaks.bytes);
    gma_jw_ku64(j, "count", rep->leaks.count);
    gma_jw_key(j, "measured_at_trace_end");
    gma_jw_bool(j, rep->leaks.at_trace_end);
    groups(j, rep, "by_kernel", &rep->leaks.by_kernel, rep->leaks.more_kernels);
    groups(j, rep, "by_range", &rep->leaks.by_range, rep->leaks.more_ranges);
    if (rep->leaks.own.has_module)
        groups(j, rep, "by_module", &rep->leaks.own.by_module, rep->leaks.own.more_modules);
    if (rep->leaks.own.has_line)
        groups(j, rep, "by_line", &rep->leaks.own.by_line, rep->leaks.own.more_lines);
    if (rep->leaks.own.has_module || rep->leaks.own.has_line)
        json_growth(j, rep);
    gma_jw_key(j, "net_per_step");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < r->steps.len; i++) {
        const gma_steprow *s = &GMA_VEC_AT(&r->steps, gma_steprow, i);
        if (!s->alloc_count && !s->free_count)
            continue;
        gma_jw_begin(j, '{');
        gma_jw_ku64(j, "step", s->step);
        gma_jw_ki64(j, "net_bytes", (int64_t)(s->alloc_bytes - s->free_bytes));
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
    gma_jw_end(j, '}');
}

int gma_print_json(FILE *f, const gma_report *rep)
{
    const gma_replay *r = rep->r;
    const gma_table *t = &rep->table;
    gma_jw jw, *j = &jw;
    gma_jw_init(j, f);
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "gmem_analyze_version", GMEMPROF_VERSION);

    json_trace(j, r);

    gma_jw_key(j, "warnings");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < rep->nwarn; i++)
        gma_jw_str(j, rep->warn[i]);
    gma_jw_end(j, ']');
    gma_json_oom(j, &rep->oom); /* a failure first (oom.h) */
    json_summary(j, rep);

    gma_jw_key(j, "table");
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "by", gma_by_names[r->opt.by]);
    gma_jw_kstr(j, "sort", gma_sort_names[r->opt.sort]);
    gma_jw_kstr(j, "sort_meaning", t->sort_note);
    gma_jw_ku64(j, "top", r->opt.top);
    gma_jw_ku64(j, "total_rows", t->total_rows);
    gma_json_columns(j, t);
    gma_json_rows(j, t);
    gma_jw_end(j, '}');

    json_live_at_peak(j, rep);
    gma_json_hints(j, &rep->hints);
    json_leaks(j, rep);
    gma_jw_end(j, '}');
    return ferror(f) ? -1 : 0;
}

/* ---- --diff and several ranks ------------------------------------------------ */

int gma_print_diff_json(FILE *f, const gma_diff_view *v)
{
    gma_jw jw, *j = &jw;
    gma_jw_init(j, f);
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "gmem_analyze_version", GMEMPROF_VERSION);
    const gma_report *reps[2] = { v->ra, v->rb };
    const char *sides[2] = { "a", "b" };
    for (int s = 0; s < 2; s++) {
        gma_jw_key(j, sides[s]);
        gma_jw_begin(j, '{');
        gma_jw_kstr(j, "path", reps[s]->r->path);
        gma_jw_key(j, "truncated");
        gma_jw_bool(j, reps[s]->r->rend.truncated || reps[s]->r->rend.status != GMT_OK);
        gma_jw_kstr(j, "allocator_mode", reps[s]->mode.mode);
        gma_jw_key(j, "warnings");
        gma_jw_begin(j, '[');
        for (size_t w = 0; w < reps[s]->nwarn; w++)
            gma_jw_str(j, reps[s]->warn[w]);
        gma_jw_end(j, ']');
        gma_jw_end(j, '}');
    }
    gma_jw_key(j, "summary");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < v->ns; i++) {
        const gma_diff_line *l = &v->sl[i];
        gma_jw_begin(j, '{');
        gma_jw_kstr(j, "metric", l->metric);
        gma_jw_kstr(j, "unit", l->u == GMA_UNIT_BYTES ? "bytes" : l->u == GMA_UNIT_NS ? "ns" : "count");
        /* null where the trace did not collect it, and then no delta or ratio */
        gma_jw_key(j, "a");
        if (l->a_missing)
            gma_jw_null(j);
        else
            gma_jw_u64(j, l->a);
        gma_jw_key(j, "b");
        if (l->b_missing)
            gma_jw_null(j);
        else
            gma_jw_u64(j, l->b);
        gma_jw_key(j, "delta");
        if (l->a_missing || l->b_missing)
            gma_jw_null(j);
        else
            gma_jw_i64(j, (int64_t)(l->b - l->a));
        gma_jw_key(j, "ratio");
        if (l->a && !l->a_missing && !l->b_missing)
            gma_jw_dbl(j, (double)l->b / (double)l->a);
        else
            gma_jw_null(j);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
    gma_jw_key(j, "table");
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "by", v->by);
    gma_jw_kstr(j, "metric", v->metric);
    gma_jw_kstr(j, "metric_meaning", v->meaning);
    gma_jw_ku64(j, "total_rows", v->t->total_rows);
    gma_json_rows(j, v->t);
    gma_jw_end(j, '}');
    gma_jw_end(j, '}');
    return ferror(f) ? -1 : 0;
}

int gma_print_ranks_json(FILE *f, const gma_ranks_view *s)
{
    gma_jw jw, *j = &jw;
    gma_jw_init(j, f);
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "gmem_analyze_version", GMEMPROF_VERSION);
    gma_jw_key(j, "traces");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < s->n; i++) {
        const gma_rankrun *u = &s->runs[i];
        gma_jw_begin(j, '{');
        gma_jw_kstr(j, "path", u->path);
        gma_jw_ki64(j, "rank", u->id);
        gma_jw_ki64(j, "header_rank", u->hdr_rank);
        gma_jw_ki64(j, "world_size", u->world_size);
        gma_jw_ku64(j, "pid", u->pid);
        gma_jw_kstr(j, "host", u->host);
        gma_jw_kstr(j, "devices", u->devices);
        gma_jw_key(j, "truncated");
        gma_jw_bool(j, u->truncated);
        gma_jw_key(j, "warnings");
        gma_jw_begin(j, '[');
        for (size_t k = 0; k < u->nwarn; k++)
            gma_jw_str(j, u->warn[k]);
        gma_jw_end(j, ']');
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
    gma_jw_key(j, "warnings");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < s->nwarn; i++)
        gma_jw_str(j, s->warn[i]);
    gma_jw_end(j, ']');
    gma_jw_key(j, "summary");
    gma_jw_begin(j, '{');
    gma_jw_ku64(j, "ranks", s->n);
    gma_jw_ki64(j, "world_size", s->t.world);
    gma_jw_ku64(j, "peak_max_bytes", s->runs[s->t.hi].peak);
    gma_jw_ki64(j, "peak_max_rank", s->runs[s->t.hi].id);
    gma_jw_ku64(j, "peak_min_bytes", s->runs[s->t.lo].peak);
    gma_jw_ki64(j, "peak_min_rank", s->runs[s->t.lo].id);
    gma_jw_key(j, "peak_mean_bytes");
    gma_jw_dbl_exact(j, s->t.mean);
    gma_jw_key(j, "totals");
    gma_jw_begin(j, '{');
    gma_jw_ku64(j, "baseline_bytes", s->t.baseline);
    gma_jw_ku64(j, "alloc_bytes", s->t.alloc);
    gma_jw_ku64(j, "alloc_count", s->t.alloc_count);
    gma_jw_ku64(j, "freed_bytes", s->t.freed);
    gma_jw_ku64(j, "free_count", s->t.free_count);
    gma_jw_ku64(j, "leaked_bytes", s->t.leaked);
    gma_jw_ku64(j, "leaked_count", s->t.leaked_count);
    gma_jw_ku64(j, "kernels", s->t.kernels);
    gma_jw_key(j, "kernel_ns"); /* null when no rank collected kernel times */
    if (s->t.no_kernel_times)
        gma_jw_null(j);
    else
        gma_jw_u64(j, s->t.kernel_ns);
    gma_jw_ku64(j, "dropped", s->t.dropped);
    gma_jw_ku64(j, "records", s->t.records);
    gma_jw_end(j, '}');
    gma_jw_end(j, '}');
    gma_jw_key(j, "table");
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "by", s->by);
    gma_jw_kstr(j, "sort", s->sort);
    gma_jw_kstr(j, "mode", s->mode);
    gma_jw_ku64(j, "top", s->top);
    gma_jw_ku64(j, "total_rows", s->table->total_rows);
    gma_json_columns(j, s->table);
    gma_json_rows(j, s->table);
    gma_jw_end(j, '}');
    gma_jw_end(j, '}');
    return ferror(f) ? -1 : 0;
}

/* ---- --fit ------------------------------------------------------------------ */

static void fit_total_json(gma_jw *j, const char *key, const gma_fit_total *t)
{
    gma_jw_key(j, key);
    if (!t->present) {
        gma_jw_null(j);
        return;
    }
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "law", gma_law_names[t->fit.law]);
    gma_jw_key(j, "coefficients");
    gma_jw_begin(j, '[');
    for (int i = 0; i < 3; i++)
        gma_jw_dbl_exact(j, t->fit.c[i]);
    gma_jw_end(j, ']');
    gma_jw_key(j, "max_miss_bytes");
    gma_jw_dbl_exact(j, t->fit.max_resid);
    gma_jw_key(j, "tolerance_bytes");
    gma_jw_dbl_exact(j, t->fit.tol);
    gma_jw_key(j, "fits");
    gma_jw_bool(j, t->fit.fits);
    gma_jw_key(j, "limited");
    gma_jw_bool(j, t->fit.limited);
    gma_jw_key(j, "predicted_bytes");
    gma_jw_dbl_exact(j, t->pred);
    gma_jw_end(j, '}');
}

int gma_print_fit_json(FILE *f, const gma_fit_view *v)
{
    gma_jw jw, *j = &jw;
    gma_jw_init(j, f);
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "gmem_analyze_version", GMEMPROF_VERSION);
    gma_jw_key(j, "fit");
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "by", v->by);
    gma_jw_key(j, "per_step");
    gma_jw_bool(j, v->per_step);
    gma_jw_ku64(j, "at", v->at);
    gma_jw_key(j, "runs");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < v->n; i++) {
        const gma_fit_run_info *u = &v->runs[i];
        gma_jw_begin(j, '{');
        gma_jw_kstr(j, "path", u->path);
        gma_jw_ki64(j, "step", u->step);
        gma_jw_ku64(j, "size", u->size);
        gma_jw_ku64(j, "peak_bytes", u->peak);
        gma_jw_key(j, "reserved_bytes");
        if (u->has_reserved)
            gma_jw_u64(j, u->reserved);
        else
            gma_jw_null(j);
        gma_jw_ku64(j, "outside_bytes", u->outside);
        gma_jw_ku64(j, "device", u->device);
        gma_jw_ku64(j, "device_total_bytes", u->total_mem);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
    fit_total_json(j, "peak", &v->allocated);
    fit_total_json(j, "reserved_peak", &v->reserved);
    gma_jw_key(j, "device");
    gma_jw_begin(j, '{');
    gma_jw_ku64(j, "total_bytes", v->device_total);
    gma_jw_key(j, "capacity_given");
    gma_jw_bool(j, v->capacity_given);
    gma_jw_ku64(j, "outside_bytes", v->outside);
    gma_jw_ku64(j, "capacity_bytes", v->capacity);
    gma_jw_key(j, "largest_size");
    if (v->has_largest && v->largest != GMA_FIT_SIZE_MAX)
        gma_jw_u64(j, v->largest);
    else
        gma_jw_null(j);
    gma_jw_key(j, "every_size_fits");
    gma_jw_bool(j, v->has_largest && v->largest == GMA_FIT_SIZE_MAX);
    gma_jw_end(j, '}');
    gma_jw_key(j, "owners");
    gma_jw_begin(j, '{');
    gma_json_columns(j, &v->table);
    gma_json_rows(j, &v->table);
    gma_jw_end(j, '}');
    gma_jw_end(j, '}');
    gma_jw_end(j, '}');
    return ferror(f) ? -1 : 0;
}

/* ---- a trace's failures (oom.h) ------------------------------------------------ */

/* A failure's live bytes by module or by line (oom.h). */
static void json_oom_owners(gma_jw *j, const char *key, const gma_oom_owner *top, size_t n)
{
    gma_jw_key(j, key);
    gma_jw_begin(j, '[');
    for (size_t k = 0; k < n; k++) {
        gma_jw_begin(j, '{');
        gma_jw_kstr(j, "name", top[k].name);
        gma_jw_ku64(j, "bytes", top[k].bytes);
        gma_jw_ku64(j, "count", top[k].count);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
}

void gma_json_oom(gma_jw *j, const gma_oom_view *v)
{
    static const char *const cls[GMA_OOM_NCLASS] = {"persistent", "step_scoped", "temporary",
                                                    "reserved_unallocated"};
    if (!v->n)
        return;
    gma_jw_key(j, "failures");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < v->n; i++) {
        const gma_oom_fail *f = v->s[i].f;
        const gmt_oom *o = &f->o;
        gma_jw_begin(j, '{');
        gma_jw_kstr(j, "cause", gmt_oom_cause_name(o->cause));
        gma_jw_ku64(j, "dump", o->dump);
        gma_jw_ku64(j, "device", o->device);
        gma_jw_ku64(j, "bytes", o->bytes);
        gma_jw_ku64(j, "stream", o->stream);
        gma_jw_ku64(j, "tid", o->tid);
        gma_jw_ku64(j, "step", o->step);
        gma_jw_kstr(j, "op", f->op);
        gma_jw_kstr(j, "api", f->api);
        gma_jw_ku64(j, "status", o->status);
        if (o->flags & GMT_OOMF_DRIVER) {
            gma_jw_ku64(j, "driver_free", o->driver_free);
            gma_jw_ku64(j, "driver_total", o->driver_total ? o->driver_total : f->dev_total);
        }
        if (o->flags & GMT_OOMF_FRAMEWORK) {
            gma_jw_ku64(j, "fw_allocated", o->fw_allocated);
            gma_jw_ku64(j, "fw_reserved", o->fw_reserved);
        }
        gma_jw_ku64(j, "live_count", f->live_count);
        gma_jw_ku64(j, "live_bytes", f->live_bytes);
        gma_jw_ku64(j, "first_step", o->first_step);
        gma_jw_ku64(j, "trimmed", (o->flags & GMT_OOMF_TRIMMED) != 0);
        /* 1: a trace's failure outside its windows (the text's note line) */
        gma_jw_ku64(j, "outside_every_window", f->outside != 0);
        if (f->dump_file[0]) { /* a trace's failure with a dump: its file, and whether it is there */
            gma_jw_kstr(j, "dump_file", f->dump_file);
            gma_jw_ku64(j, "dump_file_found", f->dump_found != 0);
        }
        gma_jw_key(j, "classes");
        gma_jw_begin(j, '{');
        for (int k = 0; k < GMA_OOM_NCLASS; k++)
            if (k != GMA_OOM_RESERVED || (o->flags & GMT_OOMF_FRAMEWORK))
                gma_jw_ku64(j, cls[k], f->cls_bytes[k]);
        gma_jw_end(j, '}');
        const gma_oom_reasons why = v->s[i].why;
        gma_jw_kstr(j, "allocator_settings", why.conf);
        gma_jw_key(j, "causes");
        gma_jw_begin(j, '[');
        for (size_t k = 0; k < why.n; k++) {
            gma_jw_begin(j, '{');
            gma_jw_kstr(j, "cause", gma_oom_why_names[why.r[k].why]);
            gma_jw_ku64(j, "bytes", why.r[k].bytes);
            gma_jw_kstr(j, "reason", why.r[k].text);
            gma_jw_kstr(j, "try", why.r[k].try_);
            gma_jw_end(j, '}');
        }
        gma_jw_end(j, ']');
        gma_jw_key(j, "owners");
        gma_jw_begin(j, '[');
        for (size_t k = 0; k < f->ntop; k++) {
            gma_jw_begin(j, '{');
            gma_jw_kstr(j, "name", f->top[k].name);
            gma_jw_ku64(j, "bytes", f->top[k].bytes);
            gma_jw_ku64(j, "count", f->top[k].count);
            gma_jw_end(j, '}');
        }
        gma_jw_end(j, ']');
        if (f->has_module) {
            gma_jw_kstr(j, "module", f->module);
            json_oom_owners(j, "by_module", f->top_module, f->ntop_module);
        }
        if (f->has_line)
            json_oom_owners(j, "by_line", f->top_line, f->ntop_line);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
}

/* ---- the hints (hints.h): the key "hints", every number, shown or not ---------- */

static void json_opt(gma_jw *j, const char *key, int known, uint64_t v)
{
    gma_jw_key(j, key);
    if (known)
        gma_jw_u64(j, v);
    else
        gma_jw_null(j);
}

void gma_json_hints(gma_jw *j, const gma_hints *h)
{
    char reason[600];
    gma_jw_key(j, "hints");
    gma_jw_begin(j, '{');
    gma_jw_key(j, "thresholds_percent");
    gma_jw_begin(j, '{');
    gma_jw_ku64(j, "temporary_of_peak", GMA_HINT_TEMP_PCT);
    gma_jw_ku64(j, "step_scoped_of_peak", GMA_HINT_STEP_PCT);
    gma_jw_ku64(j, "reserved_unallocated_of_reserve", GMA_HINT_RESERVED_PCT);
    gma_jw_ku64(j, "growth_of_peak", GMA_HINT_GROWTH_PCT);
    gma_jw_end(j, '}');
    gma_jw_key(j, "classes");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < h->ndev; i++) {
        const gma_hint_dev *H = &h->dev[i];
        gma_jw_begin(j, '{');
        gma_jw_ku64(j, "device", H->device);
        gma_jw_ku64(j, "peak_bytes", H->peak);
        gma_jw_ku64(j, "persistent_bytes", H->persistent);
        gma_jw_ku64(j, "step_scoped_bytes", H->step);
        gma_jw_ku64(j, "temporary_bytes", H->temp);
        json_opt(j, "outside_bytes", H->outside_known, H->outside);
        json_opt(j, "reserved_unallocated_bytes", H->reserved_known, H->reserved);
        json_opt(j, "reserved_bytes", H->reserved_known, H->reserve);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
    gma_jw_key(j, "shown");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < h->n; i++) {
        const gma_hint *x = &h->hint[i];
        gma_jw_begin(j, '{');
        gma_jw_key(j, "device");
        if (x->device == GMA_HINT_ALL_DEVICES)
            gma_jw_null(j);
        else
            gma_jw_u64(j, x->device);
        gma_jw_kstr(j, "kind", gma_hint_names[x->kind]);
        gma_jw_ku64(j, "bytes", x->bytes);
        gma_jw_ku64(j, "of_bytes", x->whole);
        gma_jw_key(j, "share");
        gma_jw_dbl_exact(j, gma_hint_share(x));
        gma_jw_key(j, "owner");
        if (x->owner[0])
            gma_jw_str(j, x->owner);
        else
            gma_jw_null(j);
        gma_jw_ku64(j, "owner_bytes", x->owner_bytes);
        if (x->kind == GMA_HINT_GROWTH) {
            gma_jw_ku64(j, "step_first", x->step_first);
            gma_jw_ku64(j, "step_last", x->step_last);
            gma_jw_ku64(j, "first_bytes", x->first);
            gma_jw_ku64(j, "last_bytes", x->last);
            gma_jw_ki64(j, "slope_bytes_per_step", x->slope);
            gma_jw_ku64(j, "grew", x->grew);
        }
        gma_hint_reason(x, reason, sizeof(reason));
        gma_jw_kstr(j, "reason", reason);
        gma_jw_kstr(j, "try", gma_hint_try(x));
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
    gma_jw_end(j, '}');
}

const gma_printer gma_printer_json = { "json", gma_print_json, gma_print_diff_json, gma_print_ranks_json,
                                       gma_print_fit_json, NULL, gma_print_view_json, gma_print_insights_json, 0 };
