/*
 * --diff OTHER: two finished replays side by side. The summaries (peak per
 * device, baseline, allocated, freed, counts, leaks, kernel time) with A, B,
 * delta and ratio; then the --by rows matched by normalized name
 * (names.c: template arguments, addresses, hash-like tokens and, for
 * kernels, generated numeric suffixes removed), ranked by |B - A| of the
 * metric, with rows present on one side only marked.
 *
 * The metric is the --sort key. Without --sort, by kernel and by range it is
 * the bytes each row holds at the peak (its allocations live at the
 * device's peak): what a person facing "out of memory" compares, where the
 * bytes allocated over the run rank the busiest rows and the net "self"
 * memory cancels across a forward pass (the free lands on a later row);
 * otherwise the bytes allocated (tags: live bytes; devices: the peak).
 */
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "tracestr.h"
#include "diff.h"
#include "modules.h"
#include "print.h"
#include "view.h"

typedef struct drow {
    size_t norm;   /* offset in the name store */
    int side;      /* 0: A, 1: B */
    int64_t value;
    uint64_t calls;
} drow;

typedef struct dctx {
    gma_strs *names;
} dctx;

static int drow_cmp(const void *pa, const void *pb, void *pc)
{
    const drow *a = pa, *b = pb;
    const dctx *c = pc;
    int n = strcmp(gma_strs_get(c->names, a->norm), gma_strs_get(c->names, b->norm));
    if (n)
        return n;
    return a->side - b->side;
}

typedef struct merged {
    size_t norm;
    int has[2];
    int64_t v[2];
    uint64_t calls[2];
    int64_t delta;
} merged;

static int merged_cmp(const void *pa, const void *pb, void *pc)
{
    const merged *a = pa, *b = pb;
    const dctx *c = pc;
    uint64_t da = a->delta < 0 ? (uint64_t)0 - (uint64_t)a->delta : (uint64_t)a->delta;
    uint64_t db = b->delta < 0 ? (uint64_t)0 - (uint64_t)b->delta : (uint64_t)b->delta;
    if (da != db)
        return da > db ? -1 : 1;
    return strcmp(gma_strs_get(c->names, a->norm), gma_strs_get(c->names, b->norm));
}

/* The key compared: the --sort key's diff, or the view's own default. */
static const gma_sortkey *diff_key(const gma_opts *o)
{
    const gma_view *v = gma_view_of(o->by);
    gma_sort m = o->sort_given ? gma_sortkey_of(o->by, o->sort)->diff : v->diff_default;
    return gma_sortkey_of(o->by, m);
}

/* The metric of one row under key m. */
static int64_t metric(const gma_replay *r, const gma_sortkey *m, const void *row)
{
    return m->metric ? m->metric(r, row) : m->value(r, row);
}

static int add(gma_vec *rows, gma_strs *names, int side, const char *norm, size_t len, int64_t v, uint64_t calls)
{
    drow *d = gma_vec_push(rows);
    if (!d)
        return -1;
    d->norm = gma_strs_add(names, norm, len);
    d->side = side;
    d->value = v;
    d->calls = calls;
    return d->norm == (size_t)-1 ? -1 : 0;
}

static int64_t sat(uint64_t v) { return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v; }

/* The display name of a row's string id, normalized (kernels k). */
static int norm_name(const gma_replay *r, uint64_t name, int k, gma_buf *b)
{
    size_t len;
    const char *raw = name ? gma_str(r, (uint32_t)name, &len) : NULL;
    gma_buf_reset(b);
    if (!name)
        gma_buf_puts(b, "(unattributed)");
    else if (!len)
        gma_kernel_display(r, (uint32_t)name, 0, b);
    else
        gma_name_normalize(raw, len, k, b);
    return b->oom ? -1 : 0;
}

int gma_held_each(const gma_replay *r, int k, gma_held_fn fn, void *ctx)
{
    gma_buf b = { 0 };
    int err = 0;
    for (size_t i = 0; i < r->entries.len && !err; i++) {
        const gma_entry *e = &GMA_VEC_AT(&r->entries, gma_entry, i);
        if (!(e->flags & GMA_E_INUSE) || (e->flags & (GMA_E_HOST | GMA_E_BASELINE)) ||
            !gma_dev_selected(r, e->device))
            continue;
        if (!gma_entry_live_at_peak(r, e))
            continue;
        uint32_t name = k ? e->kname : e->rname;
        if (name == GMA_NAME_BASELINE)
            continue;
        err |= norm_name(r, name, k, &b) != 0 || fn(ctx, gma_buf_str(&b), b.len, e->bytes) != 0;
    }
    gma_buf_free(&b);
    return err ? -1 : 0;
}

typedef struct held_ctx {
    gma_vec *rows;
    gma_strs *names;
    int side;
} held_ctx;

static int held_row(void *p, const char *name, size_t len, uint64_t bytes)
{
    held_ctx *c = p;
    return add(c->rows, c->names, c->side, name, len, sat(bytes), 0);
}

/* The bytes live at each selected device's peak, by the kernel (k) or the
 * range that made them: rows of calls 0, summed with the table's rows by
 * name. What was live before the window has no owner in it: left out. */
static int collect_held(const gma_replay *r, int side, int k, gma_vec *rows, gma_strs *names)
{
    held_ctx c = { rows, names, side };
    return gma_held_each(r, k, held_row, &c);
}

typedef struct mod_ctx {
    gma_vec *rows;
    gma_strs *names;
    int side;
} mod_ctx;

/* A module's or line's row (modules.h): its name as shown, not normalized
 * (paths and lines hold no generated parts). */
static int mod_row(void *ctx, const char *name, size_t len, int64_t v, uint64_t calls)
{
    mod_ctx *c = ctx;
    return add(c->rows, c->names, c->side, name, len, v, calls);
}

static int col_of(const gma_table *t, const char *key)
{
    for (size_t c = 0; key && c < t->ncols; c++)
        if (strcmp(t->cols[c].key, key) == 0)
            return (int)c;
    return -1;
}

/* The rows of a view that --diff has no case for: its table, every row,
 * named by its name columns and valued by the compared key's column. */
static int collect_table(const gma_replay *r, int side, const gma_sortkey *m, gma_vec *rows, gma_strs *names)
{
    const gma_view *v = gma_view_of(r->opt.by);
    gma_table t;
    int err = v->build(r, &t, 0) != 0;
    int n0 = col_of(&t, v->names[0]), n1 = col_of(&t, v->names[1]), val = col_of(&t, m->print);
    char a[128], b[128], nm[260];
    for (size_t i = 0; i < t.nrows && !err && n0 >= 0; i++) {
        gma_cell_format(&t, (size_t)n0, gma_table_cell(&t, i, (size_t)n0), 0, a, sizeof a);
        b[0] = 0;
        if (n1 >= 0)
            gma_cell_format(&t, (size_t)n1, gma_table_cell(&t, i, (size_t)n1), 0, b, sizeof b);
        snprintf(nm, sizeof nm, "%s%s%s", a, b[0] ? " " : "", b);
        int64_t x = 0;
        if (val >= 0) {
            const gma_cell *c = gma_table_cell(&t, i, (size_t)val);
            gma_ctype ty = t.cols[val].type;
            x = ty == GMA_CT_SBYTES || ty == GMA_CT_I64 || ty == GMA_CT_TS || ty == GMA_CT_DBYTES || ty == GMA_CT_DNS
                    ? c->v.i
                    : sat(c->v.u);
        }
        err = add(rows, names, side, nm, strlen(nm), x, 0) != 0;
    }
    gma_table_free(&t);
    return err ? -1 : 0;
}

/* The rows of one side: (normalized name, metric, calls). */
static int collect(const gma_replay *r, int side, const gma_sortkey *m, gma_vec *rows, gma_strs *names)
{
    gma_buf b = { 0 };
    int err = 0;
    char nm[128];
    switch (r->opt.by) {
    case GMA_BY_KERNEL:
    case GMA_BY_RANGE: {
        int k = r->opt.by == GMA_BY_KERNEL;
        size_t n = k ? r->krows.len : r->rrows.len;
        for (size_t i = 0; i < n && !err; i++) {
            int64_t v;
            uint64_t calls, name;
            int used;
            if (k) {
                const gma_krow *x = &GMA_VEC_AT(&r->krows, gma_krow, i);
                used = x->calls || x->alloc_count || x->free_count;
                calls = x->calls;
                name = i ? x->name : 0;
                v = metric(r, m, x);
            } else {
                const gma_rrow *x = &GMA_VEC_AT(&r->rrows, gma_rrow, i);
                used = x->calls || x->tot_alloc || x->tot_free;
                calls = x->calls;
                name = i ? x->name : 0;
                v = metric(r, m, x);
            }
            if (!used)
                continue;
            err |= norm_name(r, name, k, &b) != 0 || add(rows, names, side, gma_buf_str(&b), b.len, v, calls) != 0;
        }
        if (m->diff == GMA_SORT_HELD && !err)
            err = collect_held(r, side, k, rows, names) != 0;
        break;
    }
    case GMA_BY_STEP:
        for (size_t i = 0; i < r->steps.len && !err; i++) {
            const gma_steprow *s = &GMA_VEC_AT(&r->steps, gma_steprow, i);
            if (!s->in_window && !s->alloc_count && !s->free_count && !s->kernels)
                continue;
            int64_t v = metric(r, m, s);
            snprintf(nm, sizeof(nm), "step %llu", (unsigned long long)s->step);
            err |= add(rows, names, side, nm, strlen(nm), v, s->kernels) != 0;
        }
        break;
    case GMA_BY_TAG:
        for (size_t i = 0; i < r->tags.len && !err; i++) {
            const gma_tagrow *g = &GMA_VEC_AT(&r->tags, gma_tagrow, i);
            size_t len;
            const char *raw = gma_str(r, g->name, &len);
            gma_buf_reset(&b);
            gma_buf_putn(&b, raw, len);
            if (g->device)
                gma_buf_printf(&b, " [dev%llu]", (unsigned long long)g->device);
            int64_t v = metric(r, m, g);
            err |= b.oom || add(rows, names, side, gma_buf_str(&b), b.len, v, 1) != 0;
        }
        break;
    case GMA_BY_STREAM:
        for (size_t i = 0; i < r->streams.len && !err; i++) {
            const gma_streamrow *s = &GMA_VEC_AT(&r->streams, gma_streamrow, i);
            if (s->stream)
                snprintf(nm, sizeof(nm), "dev%llu stream %llu", (unsigned long long)s->device,
                         (unsigned long long)s->stream);
            else
                snprintf(nm, sizeof(nm), "dev%llu (unattributed)", (unsigned long long)s->device);
            int64_t v = metric(r, m, s);
            err |= add(rows, names, side, nm, strlen(nm), v, s->kernels) != 0;
        }
        break;
    case GMA_BY_MODULE:
    case GMA_BY_LINE: {
        mod_ctx c = { rows, names, side };
        err = gma_modules_diff_rows(r, m->diff, mod_row, &c) != 0;
        break;
    }
    case GMA_BY_DEVICE:
        for (unsigned d = 0; d < GMA_MAX_DEVICES && !err; d++) {
            const gma_dev *D = &r->dev[d];
            if (!D->present || !gma_dev_selected(r, d))
                continue;
            snprintf(nm, sizeof(nm), "dev%u", d);
            int64_t v = metric(r, m, D);
            err |= add(rows, names, side, nm, strlen(nm), v, D->kernels) != 0;
        }
        break;
    default: /* a view without a case here: its own table's rows */
        err = collect_table(r, side, m, rows, names) != 0;
        break;
    }
    gma_buf_free(&b);
    return err ? -1 : 0;
}

/* ---- the summary comparison ------------------------------------------------ */

static size_t summary_lines(const gma_report *ra, const gma_report *rb, gma_diff_line *out, size_t cap)
{
    size_t n = 0;
/* SLM: a line whose side am / bm was not collected (shown as missing) */
#define SLM(name, unit_, av, bv, am, bm)                                     \
    do {                                                                     \
        if (n < cap) {                                                       \
            snprintf(out[n].metric, sizeof(out[n].metric), "%s", name);      \
            out[n].u = unit_;                                                \
            out[n].a = (av);                                                 \
            out[n].b = (bv);                                                 \
            out[n].a_missing = (uint8_t)(am);                                \
            out[n].b_missing = (uint8_t)(bm);                                \
            n++;                                                             \
        }                                                                    \
    } while (0)
#define SL(name, unit_, av, bv) SLM(name, unit_, av, bv, 0, 0)
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++) {
        const gma_dev *A = &ra->r->dev[d], *B = &rb->r->dev[d];
        if (!A->has_peak && !B->has_peak)
            continue;
        char nm[48];
        snprintf(nm, sizeof(nm), "peak dev%u", d);
        SL(nm, GMA_UNIT_BYTES, A->peak, B->peak);
    }
    for (unsigned d = 0; ra->r->layer.seen && rb->r->layer.seen && d < GMA_LAYER_DEVICES; d++) {
        const gma_layer_dev *A = &ra->r->layer.dev[d], *B = &rb->r->layer.dev[d];
        if (!gma_layer_dev_used(A) && !gma_layer_dev_used(B))
            continue;
        char nm[48];
        snprintf(nm, sizeof(nm), "allocated peak dev%u", d);
        SL(nm, GMA_UNIT_BYTES, A->allocated_peak, B->allocated_peak);
        snprintf(nm, sizeof(nm), "reserved peak dev%u", d);
        SL(nm, GMA_UNIT_BYTES, A->reserved_peak, B->reserved_peak);
    }
    SL("baseline", GMA_UNIT_BYTES, ra->baseline_bytes, rb->baseline_bytes);
    SL("allocated", GMA_UNIT_BYTES, ra->alloc_bytes, rb->alloc_bytes);
    SL("allocations", GMA_UNIT_COUNT, ra->alloc_count, rb->alloc_count);
    SL("freed", GMA_UNIT_BYTES, ra->free_bytes, rb->free_bytes);
    SL("frees", GMA_UNIT_COUNT, ra->free_count, rb->free_count);
    SL("leaked", GMA_UNIT_BYTES, ra->leaked_bytes, rb->leaked_bytes);
    SL("kernel launches", GMA_UNIT_COUNT, ra->kernels, rb->kernels);
    /* launch-mode traces have no kernel times: a zero would read as kernels
     * that took no time (the summaries say "not collected"), so such a side
     * is missing, and the row is left out when both are */
    int ka = gma_launch_times_only(ra->r), kb = gma_launch_times_only(rb->r);
    if (!ka || !kb)
        SLM("kernel time", GMA_UNIT_NS, ra->kernel_ns, rb->kernel_ns, ka, kb);
    SL("windows", GMA_UNIT_COUNT, ra->windows_selected, rb->windows_selected);
    SL("steps", GMA_UNIT_COUNT, ra->steps_count, rb->steps_count);
    SL("records", GMA_UNIT_COUNT, ra->r->records, rb->r->records);
#undef SL
#undef SLM
    return n;
}

/* ---- the rows ------------------------------------------------------------------ */

/* The rows of both traces, matched by normalized name into mv (sorted by
 * |B - A|); names holds the names. Nonzero when out of memory. */
static int merge_rows(const gma_replay *a, const gma_replay *b, const gma_sortkey *m, gma_vec *mv, gma_strs *names)
{
    int is_max = m->diff == GMA_SORT_PEAK || gma_view_of(a->opt.by)->diff_max;
    int err = 0;
    gma_vec rows;
    gma_vec_init(&rows, sizeof(drow));
    err |= collect(a, 0, m, &rows, names) != 0;
    err |= collect(b, 1, m, &rows, names) != 0;
    dctx c = { names };
    err |= gma_msort(rows.data, rows.len, sizeof(drow), drow_cmp, &c) != 0;
    for (size_t i = 0; i < rows.len && !err; i++) {
        const drow *d = &GMA_VEC_AT(&rows, drow, i);
        merged *x = mv->len ? &GMA_VEC_AT(mv, merged, mv->len - 1) : NULL;
        if (!x || strcmp(gma_strs_get(names, x->norm), gma_strs_get(names, d->norm)) != 0) {
            x = gma_vec_push(mv);
            if (!x) {
                err = 1;
                break;
            }
            x->norm = d->norm;
        }
        int s = d->side;
        if (!x->has[s])
            x->v[s] = d->value;
        else if (is_max)
            x->v[s] = d->value > x->v[s] ? d->value : x->v[s];
        else
            x->v[s] += d->value;
        x->has[s] = 1;
        x->calls[s] += d->calls;
    }
    for (size_t i = 0; i < mv->len; i++) {
        merged *x = &GMA_VEC_AT(mv, merged, i);
        x->delta = x->v[1] - x->v[0];
    }
    err |= gma_msort(mv->data, mv->len, sizeof(merged), merged_cmp, &c) != 0;
    gma_vec_free(&rows);
    return err;
}

/* One merged row into the table's cells. */
static void fill_row(gma_table *t, gma_cell *cl, const merged *x, gma_ctype vt, const gma_strs *names)
{
    gma_cell_str(t, &cl[0], gma_strs_get(names, x->norm));
    if (vt == GMA_CT_SBYTES) {
        cl[1].v.i = x->v[0];
        cl[2].v.i = x->v[1];
    } else {
        cl[1].v.u = (uint64_t)x->v[0];
        cl[2].v.u = (uint64_t)x->v[1];
    }
    cl[1].null = !x->has[0];
    cl[2].null = !x->has[1];
    cl[3].v.i = x->delta;
    cl[4].v.d = x->v[0] ? (double)x->v[1] / (double)x->v[0] : 0.0;
    cl[4].null = !x->v[0] || !x->has[0] || !x->has[1];
    cl[5].v.u = x->calls[0];
    cl[6].v.u = x->calls[1];
    cl[5].null = !x->has[0];
    cl[6].null = !x->has[1];
    gma_cell_str(t, &cl[7], x->has[0] && x->has[1] ? "" : x->has[0] ? "A" : "B");
    cl[7].null = x->has[0] && x->has[1];
}

#define DIFF_NCOLS 8

/* The merged rows as a table (the top of them), its columns in cols (the
 * table points to them); *err set when out of memory. */
static void build_table(gma_table *t, gma_col cols[DIFF_NCOLS], const gma_opts *o, const gma_sortkey *m, const gma_vec *mv,
                        const gma_strs *names, int *err)
{
    gma_ctype vt = m->diff_type;
    /* what the count columns count */
    int calls = o->by == GMA_BY_KERNEL || o->by == GMA_BY_RANGE || o->by == GMA_BY_MODULE;
    const char *calls_a = calls ? "calls A" : o->by == GMA_BY_TAG ? "tags A" : "kernels A";
    const char *calls_b = calls ? "calls B" : o->by == GMA_BY_TAG ? "tags B" : "kernels B";
    if (o->by == GMA_BY_LINE)
        calls_a = "allocs A", calls_b = "allocs B";
    gma_ctype dt = vt == GMA_CT_U64 ? GMA_CT_I64 : vt == GMA_CT_NS ? GMA_CT_DNS : GMA_CT_DBYTES;
    const gma_col c[DIFF_NCOLS] = {
        { gma_by_names[o->by], "name", GMA_CT_STR, 1, 0 }, { "A", "a", vt, 1, 0 },
        { "B", "b", vt, 1, 0 },                            { "delta", "delta", dt, 1, 0 },
        { "ratio", "ratio", GMA_CT_RATIO, 1, 0 },          { calls_a, "calls_a", GMA_CT_U64, 1, 0 },
        { calls_b, "calls_b", GMA_CT_U64, 1, 0 },          { "only", "only", GMA_CT_STR, 1, 0 },
    };
    memcpy(cols, c, sizeof(c));
    gma_table_init(t, "diff", cols, DIFF_NCOLS);
    t->total_rows = mv->len;
    size_t keep = o->top && o->top < mv->len ? (size_t)o->top : mv->len;
    for (size_t i = 0; i < keep && !*err; i++) {
        gma_cell *cl = gma_table_row(t);
        if (!cl) {
            *err = 1;
            break;
        }
        fill_row(t, cl, &GMA_VEC_AT(mv, merged, i), vt, names);
    }
}

/* A view with its own comparison (view.h): its table of A against B and
 * its note, printed as the view's own report. */
static int diff_own(FILE *f, const gma_printer *p, const gma_view *w, const gma_replay *a, const gma_replay *b)
{
    gma_view_report v;
    int err = gma_view_report_build(&v, w, a, b) != 0 || p->view(f, &v) != 0;
    gma_view_report_free(&v);
    return err || ferror(f) ? -1 : 0;
}

int gma_diff_print(FILE *f, const gma_printer *p, const gma_replay *a, const gma_replay *b)
{
    if (gma_view_of(a->opt.by)->diff_build)
        return diff_own(f, p, gma_view_of(a->opt.by), a, b);
    const gma_opts *o = &a->opt;
    const gma_sortkey *m = diff_key(o);
    gma_report ra, rb;
    int err = 0;
    err |= gma_report_build(&ra, a) != 0;
    err |= gma_report_build(&rb, b) != 0;

    gma_strs names = { 0 };
    gma_vec mv;
    gma_vec_init(&mv, sizeof(merged));
    err |= merge_rows(a, b, m, &mv, &names);
    gma_table t;
    gma_col cols[DIFF_NCOLS];
    build_table(&t, cols, o, m, &mv, &names, &err);

    gma_diff_line sl[3 * GMA_MAX_DEVICES + 16];
    gma_diff_view v = { gma_by_names[o->by], m->name, m->diff_header, &ra, &rb, sl, 0, &t };
    v.ns = summary_lines(&ra, &rb, sl, sizeof(sl) / sizeof(sl[0]));
    err |= p->diff(f, &v) != 0;
    gma_table_free(&t);
    gma_vec_free(&mv);
    gma_strs_free(&names);
    gma_report_free(&ra);
    gma_report_free(&rb);
    if (err)
        return -1;
    return ferror(f) ? -1 : 0;
}

int gma_diff_layer(gma_opts *opt, const char *a, const char *b, char *note, size_t cap)
{
    note[0] = 0;
    if (opt->layer != GMA_LAYER_AUTO)
        return 0;
    int ha = gma_trace_has_blocks(a), hb = gma_trace_has_blocks(b);
    if (ha == hb)
        return 0;
    opt->layer = GMA_LAYER_SEGMENTS;
    snprintf(note, cap,
             "only %s has PyTorch blocks (the other was recorded without the bridge): both are compared in "
             "CUDA's allocations, as with --layer segments",
             ha ? a : b);
    return 1;
}
