/*
 * --format table: the human report. A summary, the ranked table, the
 * allocations live at each device's peak and the leaks. Bytes in 1024-based
 * units, times in ms relative to the trace start; warnings first and last.
 * The --diff and several-rank views print here too (print.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "print.h"
#include "category.h"
#include "outfile.h"
#include "tracestr.h"
#include "gmt_text.h"

#define SECTION_GROUPS 5 /* groups per section in this format: one screen */

const char *gma_window_end_label(const gma_window *w)
{
    if (w->implicit == 1)
        return "whole trace (no window records)";
    if (w->no_end)
        return "no end record";
    return gmt_window_end_reason_name(w->reason);
}

static const char *pl(uint64_t n) { return n == 1 ? "" : "s"; }

static void print_warnings(FILE *f, const gma_report *rep) { gma_print_warnings(f, "", "", rep->warn, rep->nwarn); }

/* The PyTorch bridge's numbers: torch.cuda's counters, and at the
 * allocated peak where the reserved bytes went (layer.h). */
static void print_framework(FILE *f, const gma_replay *r)
{
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP], b3[GMA_FMT_CAP], b4[GMA_FMT_CAP], b5[GMA_FMT_CAP], b6[GMA_FMT_CAP],
        b7[GMA_FMT_CAP];
    for (unsigned d = 0; r->layer.seen && d < GMA_LAYER_DEVICES; d++) {
        const gma_layer_dev *L = &r->layer.dev[d];
        if (!gma_layer_dev_used(L) || !gma_dev_selected(r, d))
            continue;
        fprintf(f, "PyTorch    dev%u: allocated peak %s at %s ms (torch.cuda.max_memory_allocated), reserved peak %s "
                   "(max_memory_reserved)\n           at the allocated peak: reserved %s, of it cached or "
                   "fragmented %s; outside PyTorch's allocator %s; driver used %s\n",
                d, gma_fmt_bytes(b1, L->allocated_peak), gma_fmt_ms(b2, gma_rel(r, L->allocated_peak_ts)),
                gma_fmt_bytes(b3, L->reserved_peak), gma_fmt_bytes(b4, L->at_peak_reserved),
                gma_fmt_bytes(b5, gma_layer_unallocated(L)),
                gma_fmt_bytes(b6, gma_layer_outside(L->at_peak_cuda, L->at_peak_reserved)),
                L->has_peak_used ? gma_fmt_bytes(b7, L->peak_used) : "(no sample)");
        if (L->holes_state == GMA_HOLES_OK) {
            fprintf(f, "           largest free holes in its segments:");
            for (int i = 0; i < GMA_LAYER_HOLES && L->holes[i]; i++)
                fprintf(f, "%s %s", i ? "," : "", gma_fmt_bytes(b1, L->holes[i]));
            fprintf(f, "%s (%s in %llu hole%s)\n", L->holes[0] ? "" : " none", gma_fmt_bytes(b2, L->holes_bytes),
                    (unsigned long long)L->holes_count, pl(L->holes_count));
        } else if (L->holes_state != GMA_HOLES_NONE) {
            fprintf(f, "           free holes in its segments: not computed (%s)\n",
                    L->holes_state == GMA_HOLES_EXPANDABLE ? "expandable segments are mapped piecewise"
                                                           : "too many peaks with many live blocks");
        }
        if (L->ooms)
            fprintf(f, "           %llu out-of-memory failure%s, the largest request %s\n", (unsigned long long)L->ooms,
                    pl(L->ooms), gma_fmt_bytes(b1, L->oom_bytes));
    }
}

static void print_summary(FILE *f, const gma_report *rep)
{
    const gma_replay *r = rep->r;
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP], b3[GMA_FMT_CAP], b4[GMA_FMT_CAP], b5[GMA_FMT_CAP];
    gma_print_head(f, "%s", gma_out_shown(r->path));
    print_warnings(f, rep);
    fprintf(f, "Trace      ");
    if (r->has_header) {
        fprintf(f, "pid %llu on ", (unsigned long long)r->hdr.pid);
        gma_put_text(f, gma_strs_get(&r->strs, r->hdr_host));
        if (r->hdr.rank >= 0)
            fprintf(f, ", rank %lld of %lld", (long long)r->hdr.rank, (long long)r->hdr.world_size);
        const char *ver = gma_strs_get(&r->strs, r->hdr_ver);
        if (ver[0]) {
            fprintf(f, ", profiler ");
            gma_put_text(f, ver);
        }
        fprintf(f, "; ");
    }
    fprintf(f, "%s record%s, %s long\n", gma_fmt_count(b1, r->records), pl(r->records),
            gma_fmt_dur(b2, r->has_ts ? r->last_ts - r->first_ts : 0));
    if (r->has_header && gma_strs_get(&r->strs, r->hdr_cmd)[0]) {
        fprintf(f, "Command    ");
        gma_put_text(f, gma_strs_get(&r->strs, r->hdr_cmd));
        fputc('\n', f);
    }

    fprintf(f, "Windows    %llu", (unsigned long long)rep->windows_selected);
    if (rep->steps_count)
        fprintf(f, ", steps %llu-%llu (%llu with activity)", (unsigned long long)rep->step_first,
                (unsigned long long)rep->step_last, (unsigned long long)rep->steps_count);
    else
        fprintf(f, ", no steps");
    fputc('\n', f);
    /* Many windows (a schedule with repeat): the first three and the last. */
    size_t nsel = 0, shown = 0;
    for (size_t i = 0; i < r->windows.len; i++) {
        const gma_window *w = &GMA_VEC_AT(&r->windows, gma_window, i);
        if (r->opt.window >= 0 && w->id != (uint64_t)r->opt.window)
            continue;
        nsel++;
        if (nsel > 3 && nsel != rep->windows_selected)
            continue;
        if (nsel == rep->windows_selected && nsel > 4)
            fprintf(f, "  ... %llu more windows\n", (unsigned long long)(nsel - 1 - shown));
        char c1[GMA_FMT_CAP], c2[GMA_FMT_CAP], c3[GMA_FMT_CAP], c4[GMA_FMT_CAP], c5[GMA_FMT_CAP], c6[GMA_FMT_CAP],
            c7[GMA_FMT_CAP];
        fprintf(f, "  window %llu: steps %llu-%llu, %s-%s ms, baseline %s (%llu), peak %s, allocated %s, freed %s, "
                   "leaked %s; end: %s\n",
                (unsigned long long)w->id, (unsigned long long)w->first_step, (unsigned long long)w->last_step,
                gma_fmt_ms(c1, gma_rel(r, w->begin_ts)), gma_fmt_ms(c2, gma_rel(r, w->end_ts)),
                gma_fmt_bytes(c3, w->baseline_seen_bytes), (unsigned long long)w->baseline_seen_count,
                gma_fmt_bytes(c4, w->peak), gma_fmt_bytes(c5, w->alloc_bytes), gma_fmt_bytes(c6, w->free_bytes),
                gma_fmt_bytes(c7, w->leaked_bytes), gma_window_end_label(w));
        shown++;
    }
    if (!rep->npeaks)
        fprintf(f, "Peak       no device allocations in the selection\n");
    for (size_t i = 0; i < rep->npeaks; i++) {
        const gma_peakview *pv = &rep->peaks[i];
        const gma_dev *D = &r->dev[pv->device];
        gma_buf dnb = { 0 };
        const char *dn = D->name_off ? gma_strs_get(&r->strs, D->name_off) : "";
        gma_text_clean(&dnb, dn, strlen(dn));
        dn = gma_buf_str(&dnb);
        fprintf(f, "%s dev%u%s%s%s: %s at %s ms, step %llu, window %llu; kernel %s; range %s",
                i ? "          " : "Peak      ", pv->device, dn[0] ? " (" : "", dn, dn[0] ? ")" : "",
                gma_fmt_bytes(b1, pv->peak), gma_fmt_ms(b2, gma_rel(r, pv->ts)), (unsigned long long)pv->step,
                (unsigned long long)pv->window, gma_rep_str(rep, pv->kernel), gma_rep_str(rep, pv->range));
        if (pv->module)
            fprintf(f, "; module %s", gma_rep_str(rep, pv->module));
        if (pv->line)
            fprintf(f, "; line %s", gma_rep_str(rep, pv->line));
        fputc('\n', f);
        gma_buf_free(&dnb);
        if (D->has_best)
            fprintf(f, "           driver used %s at the nearest sample (%s ms)", gma_fmt_bytes(b1, D->best_used),
                    gma_fmt_ms(b2, gma_rel(r, D->best_ts)));
        else
            fprintf(f, "           driver used: no sample");
        if (D->total_mem)
            fprintf(f, "; device total %s, peak is %.1f%%", gma_fmt_bytes(b3, D->total_mem),
                    100.0 * (double)pv->peak / (double)D->total_mem);
        fputc('\n', f);
        char split[600];
        if (gma_category_peak_split(r, pv->device, split, sizeof split))
            fprintf(f, "           by category: %s\n", split);
        if (D->all_peak > pv->peak && r->opt.step < 0)
            fprintf(f, "           outside the selection the live bytes reached %s (%s ms)\n",
                    gma_fmt_bytes(b1, D->all_peak), gma_fmt_ms(b2, gma_rel(r, D->all_peak_ts)));
    }
    print_framework(f, r);
    fprintf(f, "Baseline   %s in %s allocation%s live at window start\n", gma_fmt_bytes(b1, rep->baseline_bytes),
            gma_fmt_count(b2, rep->baseline_count), pl(rep->baseline_count));
    fprintf(f, "Allocated  %s in %s allocation%s; freed %s in %s free%s; net %s\n", gma_fmt_bytes(b1, rep->alloc_bytes),
            gma_fmt_count(b2, rep->alloc_count), pl(rep->alloc_count), gma_fmt_bytes(b3, rep->free_bytes),
            gma_fmt_count(b4, rep->free_count), pl(rep->free_count),
            gma_fmt_sbytes(b5, (int64_t)(rep->alloc_bytes - rep->free_bytes), 1));
    fprintf(f, "Leaked     %s in %s allocation%s still live at window end%s\n", gma_fmt_bytes(b1, rep->leaked_bytes),
            gma_fmt_count(b2, rep->leaked_count), pl(rep->leaked_count),
            rep->leaks.at_trace_end ? " (a window had no end: measured at the trace end)" : "");
    char kept[600];
    uint64_t kept_bytes, kept_count;
    if (gma_category_kept(r, &kept_bytes, &kept_count, kept, sizeof kept))
        fprintf(f, "           not leaks: %s in %s allocation%s kept to the end by design (%s)\n",
                gma_fmt_bytes(b1, kept_bytes), gma_fmt_count(b2, kept_count), pl(kept_count), kept);
    if (gma_launch_times_only(r))
        fprintf(f, "Kernels    %s launch%s; kernel times: not collected (GMEMPROF_KERNELS=launch): kernels are "
                   "known from their launches; record with --kernels gpu for their GPU times\n",
                gma_fmt_count(b1, rep->kernels), rep->kernels == 1 ? "" : "es");
    else
        fprintf(f, "Kernels    %s launch%s, %s of GPU time\n", gma_fmt_count(b1, rep->kernels),
                rep->kernels == 1 ? "" : "es", gma_fmt_dur(b2, rep->kernel_ns));
    fprintf(f, "Allocator  %s: %s\n", rep->mode.mode, rep->mode.meaning);
    int any = 0;
    for (int s = 0; s < GMT_SRC_COUNT_; s++) {
        const gma_srcstat *x = &r->src[s];
        if (!x->count)
            continue;
        fprintf(f, "%s%s %s alloc%s (%s), %s free%s", any ? "; " : "           sources: ", gma_source_label(s),
                gma_fmt_count(b1, x->count), pl(x->count), gma_fmt_bytes(b2, x->bytes), gma_fmt_count(b3, x->frees),
                pl(x->frees));
        any = 1;
    }
    if (rep->host_peak)
        fprintf(f, "%spinned host peak %s", any ? "; " : "           ", gma_fmt_bytes(b1, rep->host_peak));
    if (any || rep->host_peak)
        fputc('\n', f);
    if (r->has_stats) {
        fprintf(f, "Dropped    %llu records (CUPTI %llu, writer %llu); %llu unmatched correlations",
                (unsigned long long)(r->stats.dropped_cupti + r->stats.dropped_writer),
                (unsigned long long)r->stats.dropped_cupti, (unsigned long long)r->stats.dropped_writer,
                (unsigned long long)r->stats.unmatched_corr);
        if (r->stats.outside_window) /* not a loss: steps outside every window are not recorded */
            fprintf(f, "; %llu records outside windows, not recorded",
                    (unsigned long long)r->stats.outside_window);
        fputc('\n', f);
        fprintf(f, "Profiler   own device memory %s, host memory %s, host CPU %s\n",
                gma_fmt_bytes(b1, r->stats.own_device_bytes), gma_fmt_bytes(b2, r->stats.own_host_bytes),
                gma_fmt_dur(b3, r->stats.host_time_ns));
    } else {
        fprintf(f, "Dropped    unknown (no statistics record in the trace)\n");
    }
    for (size_t i = 0; i < rep->nnotes; i++) {
        fprintf(f, "Note       ");
        gma_put_text(f, rep->notes[i]);
        fputc('\n', f);
    }
}

void gma_print_head(FILE *f, const char *fmt, ...)
{
    va_list ap;
    fprintf(f, "gmem-analyze %s: ", GMEMPROF_VERSION);
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
}

void gma_print_warnings(FILE *f, const char *lead, const char *tag, const char (*warn)[GMA_WARN_LEN], size_t n)
{
    for (size_t i = 0; i < n; i++) { /* they quote paths and names */
        fprintf(f, "%sWARNING%s: ", lead, tag);
        gma_put_text(f, warn[i]);
        fputc('\n', f);
    }
}

void gma_print_rank_warnings(FILE *f, const char *lead, const gma_ranks_view *s)
{
    gma_print_warnings(f, lead, "", s->warn, s->nwarn);
    for (size_t i = 0; i < s->n; i++) {
        char tag[40];
        snprintf(tag, sizeof tag, ": rank %lld", (long long)s->runs[i].id);
        gma_print_warnings(f, lead, tag, s->runs[i].warn, s->runs[i].nwarn);
    }
}

void gma_print_title(FILE *f, const gma_table *t, const char *fmt, ...)
{
    va_list ap;
    fputc('\n', f);
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    if (t->nrows < t->total_rows)
        fprintf(f, " (top %zu of %llu)", t->nrows, (unsigned long long)t->total_rows);
    fputc('\n', f);
}

void gma_print_rows(FILE *f, const gma_table *t)
{
    if (t->nrows)
        gma_print_grid(f, t);
    else
        fprintf(f, "  (no rows)\n");
}

void gma_print_advice(FILE *f, const char *reason, const char *try_, const char *fmt, ...)
{
    va_list ap;
    fputs("  ", f);
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fprintf(f, ": %s\n      try: %s\n", reason, try_);
}

/* A text cell as the terminal gets it: a host, a path or a name from a
 * trace with its control bytes escaped and bad UTF-8 replaced. */
static const char *cell_shown(const gma_table *t, const gma_cell *cell, gma_buf *tmp)
{
    const char *s = gma_cell_text(t, cell);
    size_t n = strlen(s);
    if (gma_text_is_clean(s, n))
        return s;
    gma_buf_reset(tmp);
    gma_text_clean(tmp, s, n);
    return gma_buf_str(tmp);
}

void gma_print_grid(FILE *f, const gma_table *t)
{
    size_t w[64] = { 0 };
    char buf[1024];
    gma_buf tmp = { 0 };
    size_t nc = t->ncols < 64 ? t->ncols : 64;
    for (size_t c = 0; c < nc; c++)
        if (t->cols[c].in_table)
            w[c] = strlen(t->cols[c].title);
    for (size_t row = 0; row < t->nrows; row++)
        for (size_t c = 0; c < nc; c++) {
            if (!t->cols[c].in_table)
                continue;
            const gma_cell *cell = gma_table_cell(t, row, c);
            size_t l;
            if (t->cols[c].type == GMA_CT_STR && !cell->null) {
                l = strlen(cell_shown(t, cell, &tmp));
            } else {
                gma_cell_format(t, c, cell, 1, buf, sizeof(buf));
                l = strlen(buf);
            }
            if (l > w[c])
                w[c] = l;
        }
    int first = 1;
    for (size_t c = 0; c < nc; c++) {
        if (!t->cols[c].in_table)
            continue;
        int left = t->cols[c].type == GMA_CT_STR && !t->cols[c].right;
        int last = 1;
        for (size_t k = c + 1; k < nc; k++)
            last &= !t->cols[k].in_table;
        if (left && last)
            fprintf(f, "%s%s", first ? "" : "  ", t->cols[c].title);
        else
            fprintf(f, "%s%*s", first ? "" : "  ", left ? -(int)w[c] : (int)w[c], t->cols[c].title);
        first = 0;
    }
    fputc('\n', f);
    for (size_t row = 0; row < t->nrows; row++) {
        first = 1;
        for (size_t c = 0; c < nc; c++) {
            if (!t->cols[c].in_table)
                continue;
            const gma_cell *cell = gma_table_cell(t, row, c);
            const char *txt = buf;
            if (t->cols[c].type == GMA_CT_STR && !cell->null)
                txt = cell_shown(t, cell, &tmp);
            else
                gma_cell_format(t, c, cell, 1, buf, sizeof(buf));
            int left = t->cols[c].type == GMA_CT_STR && !t->cols[c].right;
            /* no trailing blanks on the last column */
            int last = 1;
            for (size_t k = c + 1; k < nc; k++)
                last &= !t->cols[k].in_table;
            if (left && last)
                fprintf(f, "%s%s", first ? "" : "  ", txt);
            else
                fprintf(f, "%s%*s", first ? "" : "  ", left ? -(int)w[c] : (int)w[c], txt);
            first = 0;
        }
        fputc('\n', f);
    }
    gma_buf_free(&tmp);
}

static void print_groups(FILE *f, const gma_report *rep, const char *title, const gma_vec *v, uint64_t more)
{
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP];
    size_t n = v->len < SECTION_GROUPS || !rep->r->opt.top ? v->len : SECTION_GROUPS;
    if (!v->len)
        return;
    size_t wn = strlen(title);
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(gma_rep_str(rep, GMA_VEC_AT(v, gma_group, i).name)) + 2;
        if (l > wn)
            wn = l;
    }
    fprintf(f, "  %-*s  %10s  %6s\n", (int)wn, title, "bytes", "allocs");
    for (size_t i = 0; i < n; i++) {
        const gma_group *g = &GMA_VEC_AT(v, gma_group, i);
        char nm[512];
        snprintf(nm, sizeof(nm), "  %s", gma_rep_str(rep, g->name));
        fprintf(f, "  %-*s  %10s  %6s\n", (int)wn, nm, gma_fmt_bytes(b1, g->bytes), gma_fmt_count(b2, g->count));
    }
    uint64_t rest = more + (v->len - n);
    if (rest)
        fprintf(f, "    ... %llu more\n", (unsigned long long)rest);
}

/* The owners whose leaks grew from step to step (owners.h): bytes per
 * step, the steps, the total. */
static void print_growth(FILE *f, const gma_report *rep, const gma_leakview *lv)
{
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP], b3[GMA_FMT_CAP], b4[GMA_FMT_CAP], per[2 * GMA_FMT_CAP + 2], st[48];
    const char *title = "grows per step";
    if (!lv->growth.len)
        return;
    size_t wn = strlen(title);
    for (size_t i = 0; i < lv->growth.len; i++) {
        size_t l = strlen(gma_rep_str(rep, GMA_VEC_AT(&lv->growth, gma_growth, i).name)) + 2;
        wn = l > wn ? l : wn;
    }
    fprintf(f, "  %-*s  %9s  %10s  %10s  %6s\n", (int)wn, title, "steps", "per step", "bytes", "allocs");
    for (size_t i = 0; i < lv->growth.len; i++) {
        const gma_growth *g = &GMA_VEC_AT(&lv->growth, gma_growth, i);
        char nm[512];
        snprintf(nm, sizeof(nm), "  %s", gma_rep_str(rep, g->name));
        snprintf(st, sizeof st, "%llu (%llu-%llu)", (unsigned long long)g->steps, (unsigned long long)g->first_step,
                 (unsigned long long)g->last_step);
        if (g->min_step_bytes == g->max_step_bytes)
            snprintf(per, sizeof per, "%s", gma_fmt_bytes(b1, g->min_step_bytes));
        else
            snprintf(per, sizeof per, "%s-%s", gma_fmt_bytes(b1, g->min_step_bytes), gma_fmt_bytes(b2, g->max_step_bytes));
        fprintf(f, "  %-*s  %9s  %10s  %10s  %6s\n", (int)wn, nm, st, per, gma_fmt_bytes(b3, g->bytes),
                gma_fmt_count(b4, g->count));
    }
    if (lv->more_growth)
        fprintf(f, "    ... %llu more\n", (unsigned long long)lv->more_growth);
}

/* The hints (hints.h), only when one crossed its threshold: a number, a
 * reason and what to try each. */
static void print_hints(FILE *f, const gma_hints *h)
{
    char b1[GMA_FMT_CAP], dev[32], reason[600];
    if (!h->n)
        return;
    fprintf(f, "\nHints (gmem-analyze --insights for the whole picture)\n");
    for (size_t i = 0; i < h->n; i++) {
        const gma_hint *x = &h->hint[i];
        if (x->device == GMA_HINT_ALL_DEVICES)
            snprintf(dev, sizeof(dev), "all devices");
        else
            snprintf(dev, sizeof(dev), "dev%u", x->device);
        gma_hint_reason(x, reason, sizeof(reason));
        gma_print_advice(f, reason, gma_hint_try(x), "%s %s %s, %.1f%% of the %s", dev, gma_hint_names[x->kind],
                         gma_fmt_bytes(b1, x->bytes), 100.0 * gma_hint_share(x),
                         x->kind == GMA_HINT_RESERVED ? "reserve" : "peak");
    }
}

int gma_print_table(FILE *f, const gma_report *rep)
{
    const gma_replay *r = rep->r;
    const gma_table *t = &rep->table;
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP], b3[GMA_FMT_CAP];
    print_summary(f, rep);

    gma_print_title(f, t, "%s ranked by %s", t->title, t->sort_note);
    gma_print_rows(f, t);
    if (r->opt.by == GMA_BY_TAG && !r->tags.len)
        fprintf(f, "  The trace holds no tag. A tag is an NVTX mark whose name starts with the tag prefix\n"
                   "  (\"tag:\" unless the run set gmemprof --tag-prefix), or gmemprof_mark(); user guide\n"
                   "  section 5. Marks made before the program's first CUDA call need the launcher or\n"
                   "  NVTX_INJECTION64_PATH: " GMEMPROF_DOCDIR "/troubleshooting.md.\n");

    for (size_t i = 0; i < rep->npeaks; i++) {
        const gma_peakview *pv = &rep->peaks[i];
        fprintf(f, "\nLive at the peak: dev%u, %s in %s allocation%s at %s ms (step %llu)\n", pv->device,
                gma_fmt_bytes(b1, pv->bytes), gma_fmt_count(b2, pv->count), pv->count == 1 ? "" : "s",
                gma_fmt_ms(b3, gma_rel(r, pv->ts)), (unsigned long long)pv->step);
        fprintf(f, "  baseline (allocated before the window): %s in %s allocation%s\n",
                gma_fmt_bytes(b1, pv->baseline_bytes), gma_fmt_count(b2, pv->baseline_count),
                pv->baseline_count == 1 ? "" : "s");
        print_groups(f, rep, "by kernel", &pv->by_kernel, pv->more_kernels);
        print_groups(f, rep, "by range", &pv->by_range, pv->more_ranges);
        print_groups(f, rep, "by module", &pv->own.by_module, pv->own.more_modules);
        print_groups(f, rep, "by line", &pv->own.by_line, pv->own.more_lines);
    }

    print_hints(f, &rep->hints);

    const gma_leakview *lv = &rep->leaks;
    fprintf(f, "\nLeaks: %s in %s allocation%s made in a window and still live at its end%s\n",
            gma_fmt_bytes(b1, lv->bytes), gma_fmt_count(b2, lv->count), lv->count == 1 ? "" : "s",
            lv->at_trace_end ? " (measured at the trace end)" : "");
    print_groups(f, rep, "by kernel", &lv->by_kernel, lv->more_kernels);
    print_groups(f, rep, "by range", &lv->by_range, lv->more_ranges);
    print_groups(f, rep, "by module", &lv->own.by_module, lv->own.more_modules);
    print_groups(f, rep, "by line", &lv->own.by_line, lv->own.more_lines);
    print_growth(f, rep, lv);
    /* growth across steps: the leak trend */
    size_t shown = 0;
    for (size_t i = 0; i < r->steps.len && shown < 12; i++) {
        const gma_steprow *s = &GMA_VEC_AT(&r->steps, gma_steprow, i);
        if (!s->alloc_count && !s->free_count)
            continue;
        fprintf(f, "%sstep %llu %s", shown ? ", " : "  net per step: ", (unsigned long long)s->step,
                gma_fmt_sbytes(b1, (int64_t)(s->alloc_bytes - s->free_bytes), 1));
        shown++;
    }
    if (shown)
        fputc('\n', f);
    if (rep->nwarn) {
        fputc('\n', f);
        print_warnings(f, rep);
    }
    return ferror(f) ? -1 : 0;
}

/* ---- --diff ---------------------------------------------------------------- */

static void fmt_unit(gma_unit u, int64_t v, int delta, char out[GMA_FMT_CAP])
{
    char t[GMA_FMT_CAP];
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    const char *sign = v < 0 ? "-" : (delta && v > 0 ? "+" : "");
    if (u == GMA_UNIT_BYTES)
        snprintf(out, GMA_FMT_CAP, "%s%s", sign, gma_fmt_bytes(t, mag));
    else if (u == GMA_UNIT_NS)
        snprintf(out, GMA_FMT_CAP, "%s%s", sign, gma_fmt_dur(t, mag));
    else
        snprintf(out, GMA_FMT_CAP, "%s%s", sign, gma_fmt_count(t, mag));
}

/* The summary lines as a grid of formatted strings; *err set when out of memory. */
static void print_summary_grid(FILE *f, const gma_diff_view *v, int *err)
{
    static const gma_col scols[] = { { "summary", "metric", GMA_CT_STR, 1, 0 }, { "A", "a", GMA_CT_STR, 1, 1 },
                                     { "B", "b", GMA_CT_STR, 1, 1 },            { "delta", "delta", GMA_CT_STR, 1, 1 },
                                     { "ratio", "ratio", GMA_CT_STR, 1, 1 } };
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP], b3[GMA_FMT_CAP];
    gma_table st;
    gma_table_init(&st, "summary", scols, 5);
    for (size_t i = 0; i < v->ns && !*err; i++) {
        const gma_diff_line *l = &v->sl[i];
        gma_cell *cl = gma_table_row(&st);
        if (!cl) {
            *err = 1;
            break;
        }
        gma_cell_str(&st, &cl[0], l->metric);
        if (l->a_missing || l->b_missing) { /* "-" where not collected, no delta or ratio */
            fmt_unit(l->u, (int64_t)l->a, 0, b1);
            fmt_unit(l->u, (int64_t)l->b, 0, b2);
            if (l->a_missing)
                cl[1].null = 1;
            else
                gma_cell_str(&st, &cl[1], b1);
            if (l->b_missing)
                cl[2].null = 1;
            else
                gma_cell_str(&st, &cl[2], b2);
            cl[3].null = cl[4].null = 1;
            continue;
        }
        fmt_unit(l->u, (int64_t)l->a, 0, b1);
        gma_cell_str(&st, &cl[1], b1);
        fmt_unit(l->u, (int64_t)l->b, 0, b2);
        gma_cell_str(&st, &cl[2], b2);
        fmt_unit(l->u, (int64_t)(l->b - l->a), 1, b3);
        gma_cell_str(&st, &cl[3], b3);
        if (l->a) {
            snprintf(b1, sizeof(b1), "x%.2f", (double)l->b / (double)l->a);
            gma_cell_str(&st, &cl[4], b1);
        } else {
            cl[4].null = 1;
        }
    }
    gma_print_grid(f, &st);
    gma_table_free(&st);
}

int gma_print_diff_table(FILE *f, const gma_diff_view *v)
{
    int err = 0;
    gma_print_head(f, "diff");
    fprintf(f, "  A: %s\n", gma_out_shown(v->ra->r->path));
    fprintf(f, "  B: %s\n", gma_out_shown(v->rb->r->path));
    gma_print_warnings(f, "", " (A)", v->ra->warn, v->ra->nwarn);
    gma_print_warnings(f, "", " (B)", v->rb->warn, v->rb->nwarn);
    print_summary_grid(f, v, &err);
    fprintf(f, "allocator  A: %s; B: %s\n", v->ra->mode.mode, v->rb->mode.mode);
    gma_print_title(f, v->t, "%s rows matched by normalized name, ranked by |B - A| of %s", v->by, v->meaning);
    gma_print_rows(f, v->t);
    return err ? -1 : 0;
}

/* ---- several ranks ---------------------------------------------------------- */

int gma_print_ranks_table(FILE *f, const gma_ranks_view *s)
{
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP], b3[GMA_FMT_CAP], b4[GMA_FMT_CAP], b5[GMA_FMT_CAP], b6[GMA_FMT_CAP];
    gma_print_head(f, "%zu trace%s", s->n, s->n == 1 ? "" : "s");
    gma_print_rank_warnings(f, "", s);
    const gma_rankrun *hi = &s->runs[s->t.hi], *lo = &s->runs[s->t.lo];
    fprintf(f, "Ranks      %zu", s->n);
    if (s->t.world > 0)
        fprintf(f, " of world size %lld", (long long)s->t.world);
    fprintf(f, "; peak max %s (rank %lld), min %s (rank %lld), mean %s; highest is %+.1f%% over the mean\n",
            gma_fmt_bytes(b1, hi->peak), (long long)hi->id, gma_fmt_bytes(b2, lo->peak), (long long)lo->id,
            gma_fmt_bytes(b3, (uint64_t)(s->t.mean + 0.5)), s->t.mean > 0 ? ((double)hi->peak / s->t.mean - 1.0) * 100.0 : 0.0);
    for (size_t i = 0; i < s->n; i++) {
        const gma_rankrun *u = &s->runs[i];
        fprintf(f, "  rank %lld: %s", (long long)u->id, u->path);
        if (u->host[0])
            fprintf(f, " (pid %llu on %s)", (unsigned long long)u->pid, u->host);
        fprintf(f, ", GPU %s; ", u->devices[0] ? u->devices : "-");
        if (u->has_peak)
            fprintf(f, "peak %s at %s ms (step %llu)", gma_fmt_bytes(b1, u->peak), gma_fmt_ms(b2, u->peak_ns),
                    (unsigned long long)u->peak_step);
        else
            fprintf(f, "no device allocations");
        fprintf(f, ", allocated %s, leaked %s, %s kernels%s\n", gma_fmt_bytes(b3, u->alloc_bytes),
                gma_fmt_bytes(b4, u->leaked), gma_fmt_count(b1, u->kernels), u->truncated ? ", TRUNCATED" : "");
    }
    fprintf(f, "All ranks  baseline %s; allocated %s in %s allocations; freed %s; leaked %s in %s allocations\n",
            gma_fmt_bytes(b1, s->t.baseline), gma_fmt_bytes(b2, s->t.alloc), gma_fmt_count(b3, s->t.alloc_count),
            gma_fmt_bytes(b4, s->t.freed), gma_fmt_bytes(b5, s->t.leaked), gma_fmt_count(b6, s->t.leaked_count));
    if (s->t.no_kernel_times)
        fprintf(f, "           %s kernel launches, kernel times not collected (GMEMPROF_KERNELS=launch); %s records "
                   "dropped\n",
                gma_fmt_count(b1, s->t.kernels), gma_fmt_count(b3, s->t.dropped));
    else
        fprintf(f, "           %s kernel launches, %s of GPU time; %s records dropped\n", gma_fmt_count(b1, s->t.kernels),
                gma_fmt_dur(b2, s->t.kernel_ns), gma_fmt_count(b3, s->t.dropped));
    gma_print_title(f, s->table, "%s", s->title);
    gma_print_rows(f, s->table);
    if (!s->by_rank)
        fprintf(f, "\nLive at the peak and leaks are per trace: gmem-analyze TRACES --rank N\n");
    if (s->nwarn) {
        fputc('\n', f);
        gma_print_warnings(f, "", "", s->warn, s->nwarn);
    }
    return ferror(f) ? -1 : 0;
}

/* ---- --fit ------------------------------------------------------------------ */

/* A coefficient's size: in byte units from 1 KiB, else bytes with up to 6
 * digits (fractions of a byte per unit of size are real). */
static void fit_coef(FILE *f, double c)
{
    char b[GMA_FMT_CAP];
    double m = c < 0 ? -c : c;
    if (m >= 1024.0)
        fprintf(f, "%s", gma_fmt_bytes(b, m >= 1.8e19 ? UINT64_MAX : (uint64_t)(m + 0.5)));
    else
        fprintf(f, "%.6g B", m);
}

/* "1.20 GiB + 2.00 KiB x s + 256 B x s^2", the terms its law has. */
static void fit_formula(FILE *f, const gma_fit *fit)
{
    fprintf(f, "%s", fit->c[0] < 0 ? "-" : "");
    fit_coef(f, fit->c[0]);
    for (int k = 1; k <= (int)fit->law; k++) {
        fprintf(f, " %c ", fit->c[k] < 0 ? '-' : '+');
        fit_coef(f, fit->c[k]);
        fprintf(f, k == 1 ? " x s" : " x s^2");
    }
}

static void fit_total_line(FILE *f, const char *lead, const gma_fit_total *t, uint64_t at)
{
    char b[GMA_FMT_CAP];
    fprintf(f, "%-11s%s in the size s: ", lead, gma_law_names[t->fit.law]);
    fit_formula(f, &t->fit);
    fprintf(f, "; at %llu: %s (predicted)", (unsigned long long)at,
            gma_fmt_bytes(b, t->pred_bytes));
    if (!t->fit.fits)
        fprintf(f, "; no law up to quadratic fits the runs (it misses one by %s): a rough guide only",
                gma_fmt_bytes(b, (uint64_t)t->fit.max_resid));
    fputc('\n', f);
}

int gma_print_fit_table(FILE *f, const gma_fit_view *v)
{
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP], b3[GMA_FMT_CAP];
    gma_print_head(f, "how the peak grows with a size, from %zu %s", v->n, v->per_step ? "steps of one trace" : "traces");
    for (size_t i = 0; i < v->n; i++) {
        const gma_fit_run_info *u = &v->runs[i];
        fprintf(f, "%-11ssize %llu: %s", i ? "" : "Runs", (unsigned long long)u->size, u->path);
        if (u->step >= 0)
            fprintf(f, " step %lld", (long long)u->step);
        fprintf(f, ", peak %s", gma_fmt_bytes(b1, u->peak));
        if (u->has_reserved)
            fprintf(f, ", reserved %s", gma_fmt_bytes(b2, u->reserved));
        fputc('\n', f);
    }
    fit_total_line(f, "Peak", &v->allocated, v->at);
    if (v->reserved.present)
        fit_total_line(f, "Reserved", &v->reserved, v->at);
    if (v->has_largest) {
        fprintf(f, "Fits       %s%s", gma_fmt_bytes(b1, v->device_total),
                v->capacity_given ? " (--capacity)" : " on the recorded device");
        if (v->outside)
            fprintf(f, " less %s outside the allocator", gma_fmt_bytes(b2, v->outside));
        fprintf(f, ": %s", v->reserved.present ? "the reserved peak" : "the peak");
        if (v->largest == GMA_FIT_SIZE_MAX)
            fprintf(f, " does not grow past it at any size\n");
        else if (v->largest == 0)
            fprintf(f, " does not fit in %s even at size 1\n", gma_fmt_bytes(b3, v->capacity));
        else
            fprintf(f, " fits up to size %llu\n", (unsigned long long)v->largest);
    } else {
        fprintf(f, "Fits       the traces name no device size: give one with --capacity BYTES\n");
    }
    if (v->allocated.fit.limited)
        fprintf(f, "Note       %zu runs tell a constant from a line only; a run at a third size tells a line from a "
                   "quadratic (as attention scores grow with the sequence length)\n",
                v->n);
    gma_print_title(f, &v->table, "Owners at the peak by %s, fastest growing first", v->by);
    gma_print_rows(f, &v->table);
    return ferror(f) ? -1 : 0;
}

/* ---- a trace's failures (oom.h) ------------------------------------------------ */

static void print_why(FILE *out, const gma_oom_reasons *w)
{
    const gma_oom_reasons why = *w;
    if (!why.n)
        return;
    fprintf(out, "  why, most likely first:\n");
    for (size_t i = 0; i < why.n; i++)
        fprintf(out, "    %zu. %s: %s\n       try: %s\n", i + 1, gma_oom_why_names[why.r[i].why], why.r[i].text,
                why.r[i].try_);
}

/* ---- the section ------------------------------------------------------------ */


static void print_cause(FILE *out, const gma_oom_fail *f)
{
    const gmt_oom *o = &f->o;
    char dump[40] = "";
    if (o->dump && !(o->flags & GMT_OOMF_IN_TRACE)) /* a trace's record names its dump on a line of its own */
        snprintf(dump, sizeof dump, ", dump %" PRIu64, o->dump);
    switch (o->cause) {
    case GMT_OOM_CUDA:
        fprintf(out, "Out of memory%s: the CUDA call %s failed (CUresult %" PRIu64 ")\n", dump,
                f->api[0] ? f->api : "(unknown)", o->status);
        break;
    case GMT_OOM_FRAMEWORK:
        fprintf(out, "Out of memory%s: the framework's allocator gave up%s%s\n", dump,
                f->api[0] ? " after " : "", f->api);
        break;
    case GMT_OOM_SIGNAL:
        fprintf(out, "Flight recorder dump%s, asked by SIGUSR2 (no failure)\n", dump);
        return;
    default:
        fprintf(out, "Flight recorder dump%s at the end of the program (no failure)\n", dump);
        return;
    }
}

static void print_request(FILE *out, const gma_oom_fail *f)
{
    const gmt_oom *o = &f->o;
    char a[32], b[32], c[32];
    if (o->cause == GMT_OOM_CUDA || o->cause == GMT_OOM_FRAMEWORK) {
        fprintf(out, "  asked       %s on device %" PRIu64 ", thread %" PRIu64 ", stream 0x%" PRIx64 ", step %" PRIu64,
                gma_oom_bytes(o->bytes, a, sizeof a), o->device, o->tid, o->stream, o->step);
        if (f->op[0])
            fprintf(out, ", in \"%s\"", f->op);
        if (f->has_module)
            fprintf(out, ", module %s", f->module);
        fputc('\n', out);
    }
    if (o->flags & GMT_OOMF_DRIVER)
        fprintf(out, "  free        %s of %s (the driver, at the failure)\n", gma_oom_bytes(o->driver_free, a, sizeof a),
                gma_oom_bytes(o->driver_total ? o->driver_total : f->dev_total, b, sizeof b));
    if (o->flags & GMT_OOMF_FRAMEWORK)
        fprintf(out, "  allocator   %s allocated, %s reserved (%s reserved but unallocated)\n",
                gma_oom_bytes(o->fw_allocated, a, sizeof a), gma_oom_bytes(o->fw_reserved, b, sizeof b),
                gma_oom_bytes(f->cls_bytes[GMA_OOM_RESERVED], c, sizeof c));
}

/* The dump's file as printed: control bytes escaped (gmt_text.h). */
static const char *dump_shown(const gma_oom_fail *f, char *buf, size_t cap)
{
    gmt_text_escape(buf, cap, f->dump_file);
    return buf;
}

/* The live bytes at a failure by module or by line (oom.h). */
static void print_oom_owners(FILE *out, const char *what, uint64_t n, const gma_oom_owner *top, size_t ntop)
{
    char a[32];
    fprintf(out, "  by %s (%" PRIu64 " %s%s; the first %zu):\n", what, n, what, n == 1 ? "" : "s", ntop);
    for (size_t i = 0; i < ntop; i++)
        fprintf(out, "    %12s  %6" PRIu64 "  %s\n", gma_oom_bytes(top[i].bytes, a, sizeof a), top[i].count, top[i].name);
}

static void print_held(FILE *out, const gma_oom_fail *f)
{
    static const char *const what[GMA_OOM_NCLASS] = {
        "made before the failing step (weights, state kept across steps)",
        "made in the failing step, outside the op that failed",
        "made in the failing step, in the op that failed",
        "the allocator's cache and fragmentation",
    };
    static const char *const cls[GMA_OOM_NCLASS] = {"persistent", "step-scoped", "temporary",
                                                    "reserved, unallocated"};
    char a[32];
    fprintf(out, "  held        %s in %" PRIu64 " allocation%s on device %" PRIu64 ", by lifetime:\n",
            gma_oom_bytes(f->live_bytes, a, sizeof a), f->live_count, f->live_count == 1 ? "" : "s", f->o.device);
    for (int k = 0; k < GMA_OOM_NCLASS; k++) {
        if (k == GMA_OOM_RESERVED && !(f->o.flags & GMT_OOMF_FRAMEWORK))
            continue;
        fprintf(out, "    %-22s %12s  %6" PRIu64 "  %s\n", cls[k], gma_oom_bytes(f->cls_bytes[k], a, sizeof a),
                f->cls_count[k], what[k]);
    }
    fprintf(out, "  by owner (%" PRIu64 " owner%s; the first %zu):\n", f->owners, f->owners == 1 ? "" : "s", f->ntop);
    for (size_t i = 0; i < f->ntop; i++)
        fprintf(out, "    %12s  %6" PRIu64 "  %s\n", gma_oom_bytes(f->top[i].bytes, a, sizeof a), f->top[i].count,
                f->top[i].name);
    if (f->has_module)
        print_oom_owners(out, "module", f->modules, f->top_module, f->ntop_module);
    if (f->has_line)
        print_oom_owners(out, "line", f->lines, f->top_line, f->ntop_line);
    char shown[4 * sizeof f->dump_file];
    if (f->outside && f->dump_found)
        fprintf(out, "  note: the failure came outside the trace's windows: the memory held is what they saw; "
                     "the steps before it are in its dump, %s\n", dump_shown(f, shown, sizeof shown));
    else if (f->outside)
        fprintf(out, "  note: the failure came outside the trace's windows: the memory held is what they saw; "
                     "the steps before it are in the flight recorder's dump (gmemprof --on-oom with a "
                     "--schedule writes NAME.oom.zst beside NAME.zst)\n");
    if (f->seen_count && f->seen_bytes != f->o.live_bytes)
        fprintf(out, "  note: the dump lists %s live (LIVE records), the failure record says %s\n",
                gma_oom_bytes(f->seen_bytes, a, sizeof a), gma_oom_bytes(f->o.live_bytes, a, sizeof a));
}

static void print_steps(FILE *out, const gma_oom_section *x)
{
    const gma_oom_fail *f = x->f;
    char a[32], b[32], c[32], d[32];
    int head = 0;
    for (size_t i = 0; i < x->steps.len; i++) {
        const gma_oom_step *s = &GMA_VEC_AT(&x->steps, gma_oom_step, i);
        if (!head++)
            fprintf(out, "  the steps before it:\n    %6s %12s %12s %12s %12s\n", "step", "allocated", "freed",
                    "live at end", "peak");
        fprintf(out, "    %6" PRIu64 " %12s %12s %12s %12s%s\n", s->step, gma_oom_bytes(s->alloc_bytes, a, sizeof a),
                gma_oom_bytes(s->free_bytes, b, sizeof b), s->has_live ? gma_oom_bytes(s->live_end, c, sizeof c) : "-",
                gma_oom_bytes(s->peak, d, sizeof d), s->step == f->o.step ? "  (failed)" : "");
    }
    if (f->o.flags & GMT_OOMF_TRIMMED)
        fprintf(out, "  (the recorder's memory cap, GMEMPROF_OOM_MAX_MB, cut older steps from this dump)\n");
}

/* A trace's failure: the dump that holds the steps before it. */
static void print_dump(FILE *out, const gma_oom_fail *f)
{
    if (!f->dump_file[0])
        return;
    char shown[4 * sizeof f->dump_file];
    fprintf(out, "  the flight recorder's dump of it: %s%s\n", dump_shown(f, shown, sizeof shown),
            f->dump_found ? "" : " (not found beside this trace)");
}

int gma_print_oom_table(FILE *out, const gma_oom_view *v)
{
    for (size_t i = 0; i < v->n; i++) {
        const gma_oom_fail *f = v->s[i].f;
        print_cause(out, f);
        print_dump(out, f);
        print_request(out, f);
        print_held(out, f);
        print_steps(out, &v->s[i]);
        print_why(out, &v->s[i].why);
        fputc('\n', out);
    }
    return ferror(out) ? -1 : 0;
}

const gma_printer gma_printer_table = { "table", gma_print_table, gma_print_diff_table, gma_print_ranks_table,
                                        gma_print_fit_table, gma_print_oom_table, gma_print_view_table,
                                        gma_print_insights_table, 3 };
