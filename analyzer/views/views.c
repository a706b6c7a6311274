/*
 * The registry of --by views (view.h): one row a view, indexed by gma_by.
 */
#include <stdio.h>
#include <string.h>

#include "view.h"
#include "tables.h"
#include "arows.h"
#include "modules.h"
#include "oom.h"

static const gma_view *const VIEWS[GMA_BY_COUNT_] = {
    [GMA_BY_KERNEL] = &gma_view_kernel, [GMA_BY_RANGE] = &gma_view_range,   [GMA_BY_ALLOC] = &gma_view_alloc,
    [GMA_BY_STEP] = &gma_view_step,     [GMA_BY_TAG] = &gma_view_tag,       [GMA_BY_STREAM] = &gma_view_stream,
    [GMA_BY_DEVICE] = &gma_view_device, [GMA_BY_MODULE] = &gma_view_module, [GMA_BY_LINE] = &gma_view_line,
    [GMA_BY_CATEGORY] = &gma_view_category,
};

const gma_view *gma_view_of(gma_by by)
{
    return (unsigned)by < GMA_BY_COUNT_ && VIEWS[by] ? VIEWS[by] : &gma_view_kernel;
}

const gma_sortkey *gma_sortkey_of(gma_by by, gma_sort s)
{
    return &gma_view_of(by)->keys[(unsigned)s < GMA_SORT_COUNT_ ? s : GMA_SORT_MEM];
}

gma_merge_rule gma_view_merge_rule(const gma_view *v, const gma_col *col)
{
    for (const gma_merge *m = v->merge; m && m->key; m++)
        if (strcmp(m->key, col->key) == 0)
            return m->rule;
    return col->type == GMA_CT_STR ? GMA_MERGE_FIRST : GMA_MERGE_SUM;
}

int gma_view_report_build(gma_view_report *out, const gma_view *v, const gma_replay *r, const gma_replay *b)
{
    memset(out, 0, sizeof(*out));
    out->by = v->name;
    if (b) {
        snprintf(out->what, sizeof out->what, "diff by %s: %s (A), %s (B)", v->name, r->path, b->path);
        out->nnotes = 1;
        return v->diff_build(r, b, &out->t, &out->notes[0]);
    }
    snprintf(out->what, sizeof out->what, "%s (by %s)", r->path, v->name);
    return v->build(r, &out->t, r->opt.top);
}

void gma_view_report_free(gma_view_report *out) { gma_table_free(&out->t); }

int gma_replay_open(gma_replay *r, const gma_opts *opt, const char *path)
{
    if (gma_replay_init(r, opt, path) != 0)
        return -1;
    r->alloc_key = gma_sortkey_of(GMA_BY_ALLOC, opt->sort);
    r->arow_time_key = opt->by == GMA_BY_ALLOC && r->alloc_key->at_end;
    /* every replay collects its trace's failures, printed first; the
     * module paths and lines when a view shows them */
    if (gma_oom_open(r) != 0 ||
        ((opt->by == GMA_BY_MODULE || opt->by == GMA_BY_LINE) && gma_modules_open(r) != 0)) {
        gma_replay_free(r);
        return -1;
    }
    /* every row of --by alloc: spilled as rows end (without a temporary
     * file, kept as entries, as for --top N) */
    if (opt->alloc_spill && opt->by == GMA_BY_ALLOC && opt->top == 0)
        (void)gma_aspill_open(r);
    return 0;
}

int gma_table_build(const gma_replay *r, gma_table *t, uint64_t top)
{
    int rc = gma_view_of(r->opt.by)->build(r, t, top);
    t->sort_note = gma_sortkey_of(r->opt.by, r->opt.sort)->header;
    return rc;
}
