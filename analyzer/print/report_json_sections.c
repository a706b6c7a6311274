/*
 * --format json: the reports beside the summary report -- a view's own
 * table (--by category) and the insights -- one object each.
 */
#include "print.h"

int gma_print_view_json(FILE *f, const gma_view_report *v)
{
    gma_jw j;
    gma_jw_init(&j, f);
    gma_jw_begin(&j, '{');
    gma_jw_kstr(&j, "by", v->by);
    /* every note, "" where there is none: a program finds its key */
    for (size_t i = 0; i < v->nnotes; i++)
        gma_jw_kstr(&j, v->notes[i].key, v->notes[i].text);
    gma_json_columns(&j, &v->t);
    gma_json_rows(&j, &v->t);
    gma_jw_end(&j, '}');
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}

static void insights_classes(gma_jw *j, const gma_ins_result *res, const gma_ins_dev *D)
{
    gma_jw_key(j, "classes");
    gma_jw_begin(j, '{');
    for (unsigned k = 0; k < res->ncls; k++) {
        gma_jw_key(j, res->cls_names[k]);
        gma_jw_begin(j, '{');
        gma_jw_key(j, "known");
        gma_jw_bool(j, D->cls[k].known);
        gma_jw_ku64(j, "bytes", D->cls[k].bytes);
        gma_jw_ku64(j, "count", D->cls[k].count);
        gma_jw_ku64(j, "owners", D->cls[k].owners.len);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, '}');
    if (!res->categories)
        return;
    /* the lifetime split beside the categories: what the report's hints use */
    gma_jw_key(j, "lifetimes");
    gma_jw_begin(j, '{');
    for (unsigned k = 0; k < GMA_IC_OUTSIDE; k++) {
        gma_jw_key(j, gma_ins_class_names[k]);
        gma_jw_begin(j, '{');
        gma_jw_ku64(j, "bytes", D->life[k]);
        gma_jw_ku64(j, "count", D->life_count[k]);
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, '}');
}

static void insights_fragmentation(gma_jw *j, const gma_ins_dev *D)
{
    gma_jw_key(j, "fragmentation");
    gma_jw_begin(j, '{');
    gma_jw_key(j, "known");
    gma_jw_bool(j, D->has_fw);
    gma_jw_ku64(j, "allocated_bytes", D->fw_allocated);
    gma_jw_ku64(j, "reserved_bytes", D->fw_reserved);
    gma_jw_ku64(j, "cuda_bytes", D->fw_cuda);
    gma_jw_ku64(j, "largest_request_bytes", D->largest_request);
    gma_jw_ku64(j, "largest_hole_bytes", D->largest_hole);
    gma_jw_ku64(j, "segments", D->segments);
    gma_jw_ku64(j, "ooms", D->ooms);
    gma_jw_ku64(j, "oom_bytes", D->oom_bytes);
    gma_jw_end(j, '}');
}

static void insights_growth_idle(gma_jw *j, const gma_ins_dev *D)
{
    gma_jw_key(j, "growth");
    gma_jw_begin(j, '{');
    gma_jw_ku64(j, "steps", D->nsteps);
    gma_jw_ku64(j, "step_first", D->step_first);
    gma_jw_ku64(j, "step_last", D->step_last);
    gma_jw_ku64(j, "first_bytes", D->total_first);
    gma_jw_ku64(j, "last_bytes", D->total_last);
    gma_jw_ki64(j, "slope_bytes_per_step", D->total_slope);
    gma_jw_ku64(j, "suspects", D->growth.len);
    gma_jw_end(j, '}');
    gma_jw_key(j, "idle");
    gma_jw_begin(j, '{');
    gma_jw_ku64(j, "count", D->idle_count);
    gma_jw_ku64(j, "bytes", D->idle_bytes);
    gma_jw_ku64(j, "at_peak_bytes", D->idle_at_peak);
    gma_jw_ku64(j, "at_peak_count", D->idle_at_peak_count);
    gma_jw_end(j, '}');
}

static void insights_whatif(gma_jw *j, const gma_ins_result *res, const gma_ins_dev *D)
{
    gma_jw_key(j, "what_if");
    if (!D->has_whatif) {
        gma_jw_null(j);
    } else {
        gma_jw_begin(j, '{');
        gma_jw_kstr(j, "owner", gma_ins_str(res, D->whatif_owner));
        gma_jw_ku64(j, "allocations", D->whatif_count);
        gma_jw_ku64(j, "moved_at_peak_bytes", D->whatif_moved_at_peak);
        gma_jw_ku64(j, "replayed_peak_bytes", D->whatif_base);
        gma_jw_ku64(j, "what_if_peak_bytes", D->whatif_peak);
        gma_jw_ku64(j, "unordered_memory_records", D->unordered);
        gma_jw_end(j, '}');
    }
    gma_jw_key(j, "what_if_recompute");
    if (!D->has_recompute) {
        gma_jw_null(j);
        return;
    }
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "layer", gma_ins_str(res, D->rc_layer));
    gma_jw_ku64(j, "ordinal", D->rc_ordinal);
    gma_jw_ku64(j, "steps", D->rc_steps);
    gma_jw_ki64(j, "forward_begin_ns", D->rc_begin_ns);
    gma_jw_ki64(j, "forward_end_ns", D->rc_end_ns);
    gma_jw_ki64(j, "backward_begin_ns", D->rc_back_ns);
    gma_jw_ku64(j, "activations", D->rc_count);
    gma_jw_ku64(j, "activation_bytes", D->rc_bytes);
    gma_jw_ku64(j, "at_peak_bytes", D->rc_at_peak);
    gma_jw_ku64(j, "replayed_peak_bytes", D->whatif_base);
    gma_jw_ku64(j, "what_if_peak_bytes", D->rc_peak);
    gma_jw_end(j, '}');
}

static void insights_dev(gma_jw *j, const gma_ins_result *res, const gma_ins_dev *D)
{
    gma_jw_begin(j, '{');
    gma_jw_ku64(j, "device", D->device);
    gma_jw_ku64(j, "peak_bytes", D->peak);
    gma_jw_ki64(j, "peak_ns", D->peak_ns);
    gma_jw_ku64(j, "peak_step", D->step);
    gma_jw_ku64(j, "peak_window", D->window);
    gma_jw_ku64(j, "live_bytes", D->live_sum);
    gma_jw_ku64(j, "allocations_not_kept", D->not_kept);
    insights_classes(j, res, D);
    insights_fragmentation(j, D);
    insights_growth_idle(j, D);
    insights_whatif(j, res, D);
    gma_jw_end(j, '}');
}

int gma_print_insights_json(FILE *f, const gma_insights_view *v)
{
    gma_jw jw, *j = &jw;
    gma_jw_init(j, f);
    gma_jw_begin(j, '{');
    gma_jw_key(j, "traces");
    gma_jw_begin(j, '[');
    for (size_t s = 0; s < v->nrun; s++) {
        const gma_ins_result *res = v->run[s];
        gma_jw_begin(j, '{');
        gma_jw_kstr(j, "path", res->path);
        gma_jw_kstr(j, "owner_kind", res->owner_kind);
        gma_jw_key(j, "warning");
        if (res->warning[0])
            gma_jw_str(j, res->warning);
        else
            gma_jw_null(j);
        gma_jw_key(j, "devices");
        gma_jw_begin(j, '[');
        for (size_t i = 0; i < res->ndev; i++)
            insights_dev(j, res, &res->dev[i]);
        gma_jw_end(j, ']');
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
    gma_jw_key(j, "table");
    gma_jw_begin(j, '{');
    gma_jw_kstr(j, "title", v->t->title);
    gma_json_columns(j, v->t);
    gma_json_rows(j, v->t);
    gma_jw_end(j, '}');
    gma_jw_end(j, '}');
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}
