/*
 * --format csv: the ranked table as CSV with exact integers (bytes, ns),
 * preceded by the summary, live-at-the-peak and leak lines prefixed "# " so
 * that pandas.read_csv(path, comment='#') reads the table alone. Fields
 * holding a comma, a quote or '#' are quoted. The --diff and several-rank
 * views print here too, in the same manner.
 */
#include <string.h>

#include "print.h"

static void kv_str(FILE *f, const char *k, const char *v)
{
    fprintf(f, " %s=", k);
    gma_csv_text(f, v);
}

static void groups(FILE *f, const gma_report *rep, const char *prefix, const gma_vec *v)
{
    for (size_t i = 0; i < v->len; i++) {
        const gma_group *g = &GMA_VEC_AT(v, gma_group, i);
        fprintf(f, "# %s:", prefix);
        kv_str(f, "name", gma_rep_str(rep, g->name));
        fprintf(f, " bytes=%llu count=%llu\n", (unsigned long long)g->bytes, (unsigned long long)g->count);
    }
}

/* The PyTorch bridge's numbers (layer.h), one line per device. */
static void framework_csv(FILE *f, const gma_replay *r)
{
    static const char *const hs[] = { "none", "ok", "expandable", "budget" };
    for (unsigned d = 0; r->layer.seen && d < GMA_LAYER_DEVICES; d++) {
        const gma_layer_dev *L = &r->layer.dev[d];
        if (!gma_layer_dev_used(L) || !gma_dev_selected(r, d))
            continue;
        fprintf(f,
                "# framework.dev%u: layer=%s allocated_peak_bytes=%llu allocated_peak_time_ns=%lld "
                "reserved_peak_bytes=%llu at_peak_reserved_bytes=%llu at_peak_unallocated_bytes=%llu "
                "at_peak_outside_allocator_bytes=%llu at_peak_driver_used_bytes=",
                d, r->fw ? "blocks" : "segments", (unsigned long long)L->allocated_peak,
                (long long)gma_rel(r, L->allocated_peak_ts), (unsigned long long)L->reserved_peak,
                (unsigned long long)L->at_peak_reserved, (unsigned long long)gma_layer_unallocated(L),
                (unsigned long long)gma_layer_outside(L->at_peak_cuda, L->at_peak_reserved));
        if (L->has_peak_used)
            fprintf(f, "%llu", (unsigned long long)L->peak_used);
        fprintf(f, " cuda_peak_bytes=%llu holes=%s holes_bytes=%llu holes_count=%llu largest_holes_bytes=",
                (unsigned long long)L->cuda_peak, hs[L->holes_state], (unsigned long long)L->holes_bytes,
                (unsigned long long)L->holes_count);
        for (int i = 0; i < GMA_LAYER_HOLES && L->holes[i]; i++)
            fprintf(f, "%s%llu", i ? ";" : "", (unsigned long long)L->holes[i]);
        fprintf(f, " ooms=%llu\n", (unsigned long long)L->ooms);
    }
}

int gma_print_csv(FILE *f, const gma_report *rep)
{
    const gma_replay *r = rep->r;
    const gma_table *t = &rep->table;
    fprintf(f, "# gmem-analyze %s", GMEMPROF_VERSION);
    kv_str(f, "trace", r->path);
    fputc('\n', f);
    gma_print_warnings(f, "# ", "", rep->warn, rep->nwarn);
    fprintf(f, "# trace: records=%llu duration_ns=%llu truncated=%d has_trailer=%d", (unsigned long long)r->records,
            (unsigned long long)(r->has_ts ? r->last_ts - r->first_ts : 0),
            r->rend.truncated || r->rend.status != GMT_OK, r->rend.has_trailer); /* as JSON's "truncated" */
    if (r->has_header) {
        fprintf(f, " pid=%llu rank=%lld", (unsigned long long)r->hdr.pid, (long long)r->hdr.rank);
        kv_str(f, "host", gma_strs_get(&r->strs, r->hdr_host));
    }
    fputc('\n', f);
    gma_print_oom_csv(f, &rep->oom); /* a failure first, as in the other formats */
    fprintf(f, "# selection: by=%s sort=%s top=%llu window=%lld step=%lld device=%lld\n", gma_by_names[r->opt.by],
            gma_sort_names[r->opt.sort], (unsigned long long)r->opt.top, (long long)r->opt.window,
            (long long)r->opt.step, (long long)r->opt.device);
    fprintf(f, "# windows: count=%llu steps=%llu first_step=%llu last_step=%llu\n",
            (unsigned long long)rep->windows_selected, (unsigned long long)rep->steps_count,
            (unsigned long long)rep->step_first, (unsigned long long)rep->step_last);
    for (size_t i = 0; i < r->windows.len; i++) {
        const gma_window *w = &GMA_VEC_AT(&r->windows, gma_window, i);
        if (r->opt.window >= 0 && w->id != (uint64_t)r->opt.window)
            continue;
        fprintf(f,
                "# window.%llu: first_step=%llu last_step=%llu begin_ns=%lld end_ns=%lld baseline_bytes=%llu "
                "baseline_count=%llu peak_bytes=%llu alloc_bytes=%llu freed_bytes=%llu leaked_bytes=%llu",
                (unsigned long long)w->id, (unsigned long long)w->first_step, (unsigned long long)w->last_step,
                (long long)gma_rel(r, w->begin_ts), (long long)gma_rel(r, w->end_ts),
                (unsigned long long)w->baseline_seen_bytes, (unsigned long long)w->baseline_seen_count,
                (unsigned long long)w->peak, (unsigned long long)w->alloc_bytes, (unsigned long long)w->free_bytes,
                (unsigned long long)w->leaked_bytes);
        kv_str(f, "end", gma_window_end_label(w));
        fputc('\n', f);
    }
    for (size_t i = 0; i < rep->npeaks; i++) {
        const gma_peakview *pv = &rep->peaks[i];
        const gma_dev *D = &r->dev[pv->device];
        fprintf(f, "# peak.dev%u: bytes=%llu time_ns=%lld step=%llu window=%llu", pv->device,
                (unsigned long long)pv->peak, (long long)gma_rel(r, pv->ts), (unsigned long long)pv->step,
                (unsigned long long)pv->window);
        kv_str(f, "kernel", gma_rep_str(rep, pv->kernel));
        kv_str(f, "range", gma_rep_str(rep, pv->range));
        if (pv->module)
            kv_str(f, "module", gma_rep_str(rep, pv->module));
        if (pv->line)
            kv_str(f, "line", gma_rep_str(rep, pv->line));
        if (D->has_best)
            fprintf(f, " driver_used_bytes=%llu driver_sample_ns=%lld", (unsigned long long)D->best_used,
                    (long long)gma_rel(r, D->best_ts));
        fprintf(f, " total_bytes=%llu baseline_bytes=%llu\n", (unsigned long long)D->total_mem,
                (unsigned long long)D->baseline_bytes);
        for (int c = 0; pv->has_cats && c < GMA_CAT_COUNT_; c++) {
            fprintf(f, "# peak.dev%u.category:", pv->device);
            kv_str(f, "name", gma_cat_names[c]);
            fprintf(f, " bytes=%llu\n", (unsigned long long)pv->cats[c]);
        }
    }
    /* empty when the kernels have launch times only (as in the rows) */
    char kns[24] = "";
    if (!gma_launch_times_only(r))
        snprintf(kns, sizeof kns, "%llu", (unsigned long long)rep->kernel_ns);
    fprintf(f,
            "# totals: baseline_bytes=%llu baseline_count=%llu alloc_bytes=%llu alloc_count=%llu freed_bytes=%llu "
            "free_count=%llu leaked_bytes=%llu leaked_count=%llu kernels=%llu kernel_ns=%s pinned_host_peak_bytes=%llu\n",
            (unsigned long long)rep->baseline_bytes, (unsigned long long)rep->baseline_count,
            (unsigned long long)rep->alloc_bytes, (unsigned long long)rep->alloc_count,
            (unsigned long long)rep->free_bytes, (unsigned long long)rep->free_count,
            (unsigned long long)rep->leaked_bytes, (unsigned long long)rep->leaked_count,
            (unsigned long long)rep->kernels, kns, (unsigned long long)rep->host_peak);
    if (gma_launch_times_only(r))
        fprintf(f, "# kernel_times: not collected (GMEMPROF_KERNELS=launch): kernels are known from their launches; "
                   "record with --kernels gpu for their GPU times\n");
    framework_csv(f, r);
    fprintf(f, "# allocator:");
    kv_str(f, "mode", rep->mode.mode);
    kv_str(f, "meaning", rep->mode.meaning);
    fputc('\n', f);
    for (int s = 0; s < GMT_SRC_COUNT_; s++) {
        const gma_srcstat *x = &r->src[s];
        if (x->count)
            fprintf(f, "# source.%s: count=%llu bytes=%llu frees=%llu freed_bytes=%llu\n", gmt_mem_source_name(s),
                    (unsigned long long)x->count, (unsigned long long)x->bytes, (unsigned long long)x->frees,
                    (unsigned long long)x->free_bytes);
    }
    if (r->has_stats) {
        fprintf(f, "# dropped: cupti=%llu writer=%llu unmatched_correlations=%llu outside_windows=%llu\n",
                (unsigned long long)r->stats.dropped_cupti, (unsigned long long)r->stats.dropped_writer,
                (unsigned long long)r->stats.unmatched_corr, (unsigned long long)r->stats.outside_window);
        fprintf(f, "# profiler: device_bytes=%llu host_bytes=%llu host_cpu_ns=%llu\n",
                (unsigned long long)r->stats.own_device_bytes, (unsigned long long)r->stats.own_host_bytes,
                (unsigned long long)r->stats.host_time_ns);
    }
    for (size_t i = 0; i < rep->nnotes; i++) {
        fputs("# note: ", f);
        gma_put_text(f, rep->notes[i]);
        fputc('\n', f);
    }
    for (size_t i = 0; i < rep->npeaks; i++) {
        const gma_peakview *pv = &rep->peaks[i];
        char p[64];
        fprintf(f, "# live_at_peak.dev%u: bytes=%llu count=%llu baseline_bytes=%llu baseline_count=%llu\n", pv->device,
                (unsigned long long)pv->bytes, (unsigned long long)pv->count, (unsigned long long)pv->baseline_bytes,
                (unsigned long long)pv->baseline_count);
        snprintf(p, sizeof(p), "live_at_peak.dev%u.kernel", pv->device);
        groups(f, rep, p, &pv->by_kernel);
        snprintf(p, sizeof(p), "live_at_peak.dev%u.range", pv->device);
        groups(f, rep, p, &pv->by_range);
        snprintf(p, sizeof(p), "live_at_peak.dev%u.module", pv->device);
        groups(f, rep, p, &pv->own.by_module);
        snprintf(p, sizeof(p), "live_at_peak.dev%u.line", pv->device);
        groups(f, rep, p, &pv->own.by_line);
    }
    gma_print_hints_csv(f, &rep->hints);
    fprintf(f, "# leaks: bytes=%llu count=%llu at_trace_end=%d\n", (unsigned long long)rep->leaks.bytes,
            (unsigned long long)rep->leaks.count, rep->leaks.at_trace_end);
    groups(f, rep, "leaks.kernel", &rep->leaks.by_kernel);
    groups(f, rep, "leaks.range", &rep->leaks.by_range);
    groups(f, rep, "leaks.module", &rep->leaks.own.by_module);
    groups(f, rep, "leaks.line", &rep->leaks.own.by_line);
    for (size_t i = 0; i < rep->leaks.growth.len; i++) {
        const gma_growth *g = &GMA_VEC_AT(&rep->leaks.growth, gma_growth, i);
        fprintf(f, "# leaks.growth:");
        kv_str(f, "name", gma_rep_str(rep, g->name));
        fprintf(f, " owner=%s steps=%llu first_step=%llu last_step=%llu bytes=%llu count=%llu bytes_per_step=%llu "
                   "min_step_bytes=%llu max_step_bytes=%llu\n",
                g->is_module ? "module" : "range", (unsigned long long)g->steps, (unsigned long long)g->first_step,
                (unsigned long long)g->last_step, (unsigned long long)g->bytes, (unsigned long long)g->count,
                (unsigned long long)(g->bytes / g->steps), (unsigned long long)g->min_step_bytes,
                (unsigned long long)g->max_step_bytes);
    }
    fprintf(f, "# table: by=%s rows=%zu total_rows=%llu\n", gma_by_names[r->opt.by], t->nrows,
            (unsigned long long)t->total_rows);

    gma_print_csv_rows(f, t);
    return ferror(f) ? -1 : 0;
}

void gma_print_csv_rows(FILE *f, const gma_table *t)
{
    for (size_t c = 0; c < t->ncols; c++) {
        if (c)
            fputc(',', f);
        gma_csv_field(f, t->cols[c].key);
    }
    fputc('\n', f);
    char buf[4096];
    for (size_t row = 0; row < t->nrows; row++) {
        for (size_t c = 0; c < t->ncols; c++) {
            if (c)
                fputc(',', f);
            const gma_cell *cell = gma_table_cell(t, row, c);
            if (t->cols[c].type == GMA_CT_STR && !cell->null) {
                gma_csv_text(f, gma_cell_text(t, cell)); /* names can be long */
                continue;
            }
            gma_cell_format(t, c, cell, 0, buf, sizeof(buf));
            gma_csv_field(f, buf);
        }
        fputc('\n', f);
    }
}

/* ---- --diff and several ranks ------------------------------------------------ */

int gma_print_diff_csv(FILE *f, const gma_diff_view *v)
{
    fprintf(f, "# gmem-analyze %s diff", GMEMPROF_VERSION);
    fprintf(f, " a=");
    gma_csv_text(f, v->ra->r->path);
    fprintf(f, " b=");
    gma_csv_text(f, v->rb->r->path);
    fputc('\n', f);
    gma_print_warnings(f, "# ", " (A)", v->ra->warn, v->ra->nwarn);
    gma_print_warnings(f, "# ", " (B)", v->rb->warn, v->rb->nwarn);
    for (size_t i = 0; i < v->ns; i++) {
        fprintf(f, "# summary: metric=");
        gma_csv_field(f, v->sl[i].metric);
        const gma_diff_line *l = &v->sl[i];
        if (l->a_missing || l->b_missing) { /* not collected: empty, as JSON's null */
            fprintf(f, " a=");
            if (!l->a_missing)
                fprintf(f, "%llu", (unsigned long long)l->a);
            fprintf(f, " b=");
            if (!l->b_missing)
                fprintf(f, "%llu", (unsigned long long)l->b);
            fprintf(f, " delta=\n");
            continue;
        }
        fprintf(f, " a=%llu b=%llu delta=%lld\n", (unsigned long long)l->a, (unsigned long long)l->b,
                (long long)(l->b - l->a));
    }
    fprintf(f, "# allocator: a=");
    gma_csv_field(f, v->ra->mode.mode);
    fprintf(f, " b=");
    gma_csv_field(f, v->rb->mode.mode);
    fprintf(f, "\n# table: by=%s metric=%s rows=%zu total_rows=%llu\n", v->by, v->metric,
            v->t->nrows, (unsigned long long)v->t->total_rows);
    gma_print_csv_rows(f, v->t);
    return ferror(f) ? -1 : 0;
}

int gma_print_ranks_csv(FILE *f, const gma_ranks_view *s)
{
    fprintf(f, "# gmem-analyze %s traces=%zu\n", GMEMPROF_VERSION, s->n);
    gma_print_rank_warnings(f, "# ", s);
    fprintf(f, "# ranks: count=%zu world_size=%lld peak_max_bytes=%llu peak_max_rank=%lld peak_min_bytes=%llu "
               "peak_min_rank=%lld peak_mean_bytes=%.17g\n",
            s->n, (long long)s->t.world, (unsigned long long)s->runs[s->t.hi].peak, (long long)s->runs[s->t.hi].id,
            (unsigned long long)s->runs[s->t.lo].peak, (long long)s->runs[s->t.lo].id, s->t.mean);
    for (size_t i = 0; i < s->n; i++) {
        const gma_rankrun *u = &s->runs[i];
        fprintf(f, "# rank.%lld:", (long long)u->id);
        kv_str(f, "trace", u->path);
        kv_str(f, "host", u->host);
        kv_str(f, "devices", u->devices);
        fprintf(f, " pid=%llu header_rank=%lld world_size=%lld peak_bytes=%llu peak_step=%llu peak_ns=%lld truncated=%d\n",
                (unsigned long long)u->pid, (long long)u->hdr_rank, (long long)u->world_size,
                (unsigned long long)u->peak, (unsigned long long)u->peak_step, (long long)u->peak_ns, u->truncated);
    }
    char kns[24] = ""; /* empty when no rank collected kernel times, as for one trace */
    if (!s->t.no_kernel_times)
        snprintf(kns, sizeof kns, "%llu", (unsigned long long)s->t.kernel_ns);
    fprintf(f, "# totals: baseline_bytes=%llu alloc_bytes=%llu alloc_count=%llu freed_bytes=%llu free_count=%llu "
               "leaked_bytes=%llu leaked_count=%llu kernels=%llu kernel_ns=%s dropped=%llu records=%llu\n",
            (unsigned long long)s->t.baseline, (unsigned long long)s->t.alloc, (unsigned long long)s->t.alloc_count,
            (unsigned long long)s->t.freed, (unsigned long long)s->t.free_count, (unsigned long long)s->t.leaked,
            (unsigned long long)s->t.leaked_count, (unsigned long long)s->t.kernels, kns,
            (unsigned long long)s->t.dropped, (unsigned long long)s->t.records);
    fprintf(f, "# table: by=%s sort=%s mode=%s rows=%zu total_rows=%llu\n", s->by,
            s->sort, s->mode, s->table->nrows, (unsigned long long)s->table->total_rows);
    gma_print_csv_rows(f, s->table);
    return ferror(f) ? -1 : 0;
}

/* ---- --fit ------------------------------------------------------------------ */

static void fit_total_csv(FILE *f, const char *key, const gma_fit_total *t)
{
    fprintf(f, "# fit.%s: law=%s c0=%.17g c1=%.17g c2=%.17g max_miss_bytes=%.17g tolerance_bytes=%.17g fits=%d "
               "limited=%d predicted_bytes=%.17g\n",
            key, gma_law_names[t->fit.law], t->fit.c[0], t->fit.c[1], t->fit.c[2], t->fit.max_resid, t->fit.tol,
            t->fit.fits, t->fit.limited, t->pred);
}

int gma_print_fit_csv(FILE *f, const gma_fit_view *v)
{
    fprintf(f, "# gmem-analyze %s fit runs=%zu per_step=%d by=%s at=%llu\n", GMEMPROF_VERSION, v->n, v->per_step, v->by,
            (unsigned long long)v->at);
    for (size_t i = 0; i < v->n; i++) {
        const gma_fit_run_info *u = &v->runs[i];
        fprintf(f, "# fit.run.%zu:", i);
        kv_str(f, "trace", u->path);
        fprintf(f, " step=%lld size=%llu peak_bytes=%llu reserved_bytes=%llu has_reserved=%d outside_bytes=%llu "
                   "device=%u device_total_bytes=%llu\n",
                (long long)u->step, (unsigned long long)u->size, (unsigned long long)u->peak,
                (unsigned long long)u->reserved, u->has_reserved, (unsigned long long)u->outside, u->device,
                (unsigned long long)u->total_mem);
    }
    fit_total_csv(f, "peak", &v->allocated);
    if (v->reserved.present)
        fit_total_csv(f, "reserved", &v->reserved);
    fprintf(f, "# fit.device: total_bytes=%llu capacity_given=%d outside_bytes=%llu capacity_bytes=%llu largest_size=",
            (unsigned long long)v->device_total, v->capacity_given, (unsigned long long)v->outside,
            (unsigned long long)v->capacity);
    if (v->has_largest && v->largest != GMA_FIT_SIZE_MAX)
        fprintf(f, "%llu", (unsigned long long)v->largest);
    fprintf(f, "\n# table: by=%s sort=growth rows=%zu total_rows=%llu\n", v->by, v->table.nrows,
            (unsigned long long)v->table.total_rows);
    gma_print_csv_rows(f, &v->table);
    return ferror(f) ? -1 : 0;
}

/* ---- the hints (hints.h): "# classes.devN:" and "# hint:" lines --------------- */

void gma_print_hints_csv(FILE *f, const gma_hints *h)
{
    char reason[600];
    for (size_t i = 0; i < h->ndev; i++) {
        const gma_hint_dev *H = &h->dev[i];
        fprintf(f, "# classes.dev%u: peak_bytes=%llu persistent_bytes=%llu step_scoped_bytes=%llu temporary_bytes=%llu",
                H->device, (unsigned long long)H->peak, (unsigned long long)H->persistent,
                (unsigned long long)H->step, (unsigned long long)H->temp);
        if (H->outside_known)
            fprintf(f, " outside_bytes=%llu", (unsigned long long)H->outside);
        if (H->reserved_known)
            fprintf(f, " reserved_unallocated_bytes=%llu reserved_bytes=%llu", (unsigned long long)H->reserved,
                    (unsigned long long)H->reserve);
        fputc('\n', f);
    }
    for (size_t i = 0; i < h->n; i++) {
        const gma_hint *x = &h->hint[i];
        fprintf(f, "# hint: device=%lld kind=", x->device == GMA_HINT_ALL_DEVICES ? -1ll : (long long)x->device);
        gma_csv_field(f, gma_hint_names[x->kind]);
        fprintf(f, " bytes=%llu of_bytes=%llu", (unsigned long long)x->bytes, (unsigned long long)x->whole);
        if (x->kind == GMA_HINT_GROWTH)
            fprintf(f, " step_first=%llu step_last=%llu first_bytes=%llu last_bytes=%llu slope_bytes_per_step=%lld grew=%llu",
                    (unsigned long long)x->step_first, (unsigned long long)x->step_last,
                    (unsigned long long)x->first, (unsigned long long)x->last, (long long)x->slope,
                    (unsigned long long)x->grew);
        if (x->owner[0]) {
            fprintf(f, " owner=");
            gma_csv_text(f, x->owner);
            fprintf(f, " owner_bytes=%llu", (unsigned long long)x->owner_bytes);
        }
        gma_hint_reason(x, reason, sizeof(reason));
        fprintf(f, " reason=");
        gma_csv_field(f, reason);
        fprintf(f, " try=");
        gma_csv_field(f, gma_hint_try(x));
        fputc('\n', f);
    }
}

/* ---- a trace's failures (oom.h): "# failure.N" lines, as JSON's "failures" ------ */

void gma_print_oom_csv(FILE *f, const gma_oom_view *v)
{
    static const char *const cls[GMA_OOM_NCLASS] = { "persistent", "step_scoped", "temporary",
                                                     "reserved_unallocated" };
    for (size_t i = 0; i < v->n; i++) {
        const gma_oom_section *x = &v->s[i];
        const gma_oom_fail *F = x->f;
        const gmt_oom *o = &F->o;
        fprintf(f, "# failure.%zu: cause=", i + 1);
        gma_csv_field(f, gmt_oom_cause_name(o->cause));
        fprintf(f, " dump=%llu device=%llu bytes=%llu stream=%llu tid=%llu step=%llu", (unsigned long long)o->dump,
                (unsigned long long)o->device, (unsigned long long)o->bytes, (unsigned long long)o->stream,
                (unsigned long long)o->tid, (unsigned long long)o->step);
        kv_str(f, "op", F->op);
        kv_str(f, "api", F->api);
        fprintf(f, " status=%llu", (unsigned long long)o->status);
        if (o->flags & GMT_OOMF_DRIVER)
            fprintf(f, " driver_free=%llu driver_total=%llu", (unsigned long long)o->driver_free,
                    (unsigned long long)(o->driver_total ? o->driver_total : F->dev_total));
        if (o->flags & GMT_OOMF_FRAMEWORK)
            fprintf(f, " fw_allocated=%llu fw_reserved=%llu", (unsigned long long)o->fw_allocated,
                    (unsigned long long)o->fw_reserved);
        fprintf(f, " live_count=%llu live_bytes=%llu first_step=%llu trimmed=%d outside_every_window=%d",
                (unsigned long long)F->live_count, (unsigned long long)F->live_bytes,
                (unsigned long long)o->first_step, (o->flags & GMT_OOMF_TRIMMED) != 0, F->outside != 0);
        if (F->dump_file[0]) {
            kv_str(f, "dump_file", F->dump_file);
            fprintf(f, " dump_file_found=%d", F->dump_found != 0);
        }
        for (int k = 0; k < GMA_OOM_NCLASS; k++)
            if (k != GMA_OOM_RESERVED || (o->flags & GMT_OOMF_FRAMEWORK))
                fprintf(f, " %s_bytes=%llu", cls[k], (unsigned long long)F->cls_bytes[k]);
        kv_str(f, "allocator_settings", x->why.conf);
        fputc('\n', f);
        for (size_t k = 0; k < x->why.n; k++) {
            const gma_oom_reason *w = &x->why.r[k];
            fprintf(f, "# failure.%zu.cause: cause=", i + 1);
            gma_csv_field(f, gma_oom_why_names[w->why]);
            fprintf(f, " bytes=%llu reason=", (unsigned long long)w->bytes);
            gma_csv_field(f, w->text);
            fprintf(f, " try=");
            gma_csv_field(f, w->try_);
            fputc('\n', f);
        }
        for (size_t k = 0; k < F->ntop; k++) {
            fprintf(f, "# failure.%zu.owner:", i + 1);
            kv_str(f, "name", F->top[k].name);
            fprintf(f, " bytes=%llu count=%llu\n", (unsigned long long)F->top[k].bytes,
                    (unsigned long long)F->top[k].count);
        }
        if (F->has_module) {
            fprintf(f, "# failure.%zu.request:", i + 1);
            kv_str(f, "module", F->module);
            fputc('\n', f);
        }
        for (size_t k = 0; k < F->ntop_module; k++) {
            fprintf(f, "# failure.%zu.module:", i + 1);
            kv_str(f, "name", F->top_module[k].name);
            fprintf(f, " bytes=%llu count=%llu\n", (unsigned long long)F->top_module[k].bytes,
                    (unsigned long long)F->top_module[k].count);
        }
        for (size_t k = 0; k < F->ntop_line; k++) {
            fprintf(f, "# failure.%zu.line:", i + 1);
            kv_str(f, "name", F->top_line[k].name);
            fprintf(f, " bytes=%llu count=%llu\n", (unsigned long long)F->top_line[k].bytes,
                    (unsigned long long)F->top_line[k].count);
        }
        for (size_t k = 0; k < x->steps.len; k++) {
            const gma_oom_step *s = &GMA_VEC_AT(&x->steps, gma_oom_step, k);
            fprintf(f, "# failure.%zu.step: step=%llu alloc_bytes=%llu freed_bytes=%llu live_end_bytes=", i + 1,
                    (unsigned long long)s->step, (unsigned long long)s->alloc_bytes,
                    (unsigned long long)s->free_bytes);
            if (s->has_live)
                fprintf(f, "%llu", (unsigned long long)s->live_end);
            fprintf(f, " peak_bytes=%llu\n", (unsigned long long)s->peak);
        }
    }
}

const gma_printer gma_printer_csv = { "csv", gma_print_csv, gma_print_diff_csv, gma_print_ranks_csv,
                                      gma_print_fit_csv, NULL, gma_print_view_csv, gma_print_insights_csv, 0 };
