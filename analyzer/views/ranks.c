/*
 * Several per-rank traces: identification, --by rank, merged and per-rank
 * tables, and their report in the three formats (see ranks.h).
 *
 * Merging works on the finished per-rank tables (the rows tables.c built,
 * every row), matched by the text of the table's key columns (kernel and
 * range display name, step number, tag name + device + occurrence, device +
 * stream, device). How a column combines is looked up by its csv key, so a
 * column added to tables.c merges by summing unless listed here.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ranks.h"
#include "tables.h"

/* ---- set up and identification ---------------------------------------------- */

int gma_ranks_init(gma_ranks *s, const gma_opts *opt, int by_rank, int per_rank, char *const *paths, size_t n)
{
    memset(s, 0, sizeof(*s));
    s->opt = *opt;
    s->by_rank = by_rank;
    s->per_rank = per_rank;
    s->runs = calloc(n ? n : 1, sizeof(*s->runs));
    if (!s->runs)
        return -1;
    s->n = n;
    for (size_t i = 0; i < n; i++) {
        s->runs[i].path = paths[i];
        s->runs[i].hdr_rank = s->runs[i].world_size = -1;
        s->runs[i].id = (int64_t)i;
    }
    return 0;
}

void gma_ranks_free(gma_ranks *s)
{
    for (size_t i = 0; i < s->n; i++)
        gma_table_free(&s->runs[i].table);
    free(s->runs);
    gma_table_free(&s->out);
    free(s->cols);
    memset(s, 0, sizeof(*s));
}

int gma_ranks_peek(gma_ranks *s, size_t i, char *msg, size_t msgcap)
{
    gma_rankrun *u = &s->runs[i];
    gmt_reader *rd = gmt_reader_open(u->path);
    if (!rd) {
        snprintf(msg, msgcap, "cannot open %s: %s", u->path, strerror(errno));
        return -1;
    }
    gmt_record rec;
    if (gmt_reader_next(rd, &rec) == 1 && rec.type == GMT_REC_HEADER) {
        const gmt_header *h = &rec.u.header;
        u->has_header = 1;
        u->hdr_rank = h->rank;
        u->world_size = h->world_size;
        u->pid = h->pid;
        u->start_ts = h->start_ts;
        size_t hl = h->host.len < sizeof(u->host) - 1 ? h->host.len : sizeof(u->host) - 1;
        if (hl)
            memcpy(u->host, h->host.ptr, hl);
        u->host[hl] = 0;
    }
    gmt_reader_close(rd);
    return 0;
}

static void set_warn(gma_ranks *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_warn(gma_ranks *s, const char *fmt, ...)
{
    if (s->nwarn >= GMA_RANKS_MAX_WARN)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->warn[s->nwarn++], sizeof(s->warn[0]), fmt, ap);
    va_end(ap);
}

void gma_ranks_identify(gma_ranks *s)
{
    /* The header's rank when every trace has one and none repeats; else
     * the position on the command line, for every trace (mixing the two
     * could give two traces the same number). */
    int ok = 1;
    size_t missing = 0, miss_first = 0, dup_a = 0, dup_b = 0;
    int dup = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->runs[i].hdr_rank < 0) {
            if (!missing++)
                miss_first = i;
            ok = 0;
        }
        for (size_t k = 0; k < i && !dup; k++)
            if (s->runs[i].hdr_rank >= 0 && s->runs[k].hdr_rank == s->runs[i].hdr_rank) {
                dup = 1;
                dup_b = k;
                dup_a = i;
            }
    }
    ok &= !dup;
    for (size_t i = 0; i < s->n; i++)
        s->runs[i].id = ok ? s->runs[i].hdr_rank : (int64_t)i;
    if (s->n > 1 && dup)
        set_warn(s, "%s and %s both say rank %lld: ranks are numbered by position on the command line instead (0-%zu)",
                 s->runs[dup_b].path, s->runs[dup_a].path, (long long)s->runs[dup_a].hdr_rank, s->n - 1);
    else if (s->n > 1 && missing)
        set_warn(s, "%zu of %zu traces record no rank (first: %s; RANK/LOCAL_RANK were unset): ranks are numbered by "
                    "position on the command line instead (0-%zu)",
                 missing, s->n, s->runs[miss_first].path, s->n - 1);
    /* traces of different runs: the world sizes differ */
    int64_t ws = -1;
    for (size_t i = 0; i < s->n; i++) {
        int64_t w = s->runs[i].world_size;
        if (w <= 0)
            continue;
        if (ws < 0) {
            ws = w;
            dup_a = i;
        } else if (w != ws) {
            set_warn(s, "%s has world size %lld but %s has %lld: these traces come from different runs",
                     s->runs[dup_a].path, (long long)ws, s->runs[i].path, (long long)w);
            break;
        }
    }
}

long gma_ranks_find(const gma_ranks *s, int64_t id)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->runs[i].id == id)
            return (long)i;
    return -1;
}

int gma_ranks_origin(const gma_ranks *s, uint64_t *origin)
{
    int have = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->runs[i].has_header && (!have || s->runs[i].start_ts < *origin)) {
            *origin = s->runs[i].start_ts;
            have = 1;
        }
    return have;
}

/* ---- what is kept of one replay --------------------------------------------- */

int gma_ranks_take(gma_ranks *s, size_t i, gma_replay *r)
{
    gma_rankrun *u = &s->runs[i];
    /* every row and group: --top is applied after merging (the replay
     * itself already kept only the --top allocations of --by alloc) */
    r->opt.top = 0;
    gma_report rep;
    int err = gma_report_build(&rep, r) != 0;
    u->table = rep.table;
    memset(&rep.table, 0, sizeof(rep.table));
    u->baseline = rep.baseline_bytes;
    u->alloc_bytes = rep.alloc_bytes;
    u->alloc_count = rep.alloc_count;
    u->free_bytes = rep.free_bytes;
    u->free_count = rep.free_count;
    u->leaked = rep.leaked_bytes;
    u->leaked_count = rep.leaked_count;
    u->kernels = rep.kernels;
    u->kernel_ns = rep.kernel_ns;
    u->launch_only = gma_launch_times_only(r);
    u->steps = rep.steps_count;
    u->records = r->records;
    u->dropped = r->has_stats ? r->stats.dropped_cupti + r->stats.dropped_writer : 0;
    u->truncated = r->rend.truncated || r->rend.status != GMT_OK;
    for (size_t k = 0; k < rep.nwarn; k++)
        memcpy(u->warn[k], rep.warn[k], sizeof(u->warn[k]));
    u->nwarn = rep.nwarn;
    /* the rank's peak: its highest device (a rank normally drives one) */
    for (size_t k = 0; k < rep.npeaks; k++) {
        const gma_peakview *pv = &rep.peaks[k];
        if (!u->has_peak || pv->peak > u->peak) {
            u->has_peak = 1;
            u->peak = pv->peak;
            u->peak_step = pv->step;
            u->peak_ns = gma_rel(r, pv->ts);
        }
    }
    size_t len = 0;
    int first = 1;
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++) {
        if (!r->dev[d].present || !gma_dev_selected(r, d))
            continue;
        if (first)
            u->first_dev = d;
        int w = snprintf(u->devices + len, sizeof(u->devices) - len, "%s%u", first ? "" : ",", d);
        if (w < 0 || (size_t)w >= sizeof(u->devices) - len)
            break;
        len += (size_t)w;
        first = 0;
    }
    if (r->has_header) {
        if (!u->has_header) { /* the peek saw none; the replay did */
            snprintf(u->host, sizeof(u->host), "%s", gma_strs_get(&r->strs, r->hdr_host));
            u->pid = r->hdr.pid;
        }
    }
    u->done = 1;
    gma_report_free(&rep);
    return err ? -1 : 0;
}

/* ---- generic helpers on cells -------------------------------------------------- */

static int col_of(const gma_table *t, const char *key)
{
    for (size_t c = 0; c < t->ncols; c++)
        if (strcmp(t->cols[c].key, key) == 0)
            return (int)c;
    return -1;
}

static int is_signed(gma_ctype t)
{
    return t == GMA_CT_I64 || t == GMA_CT_SBYTES || t == GMA_CT_DBYTES || t == GMA_CT_TS || t == GMA_CT_DNS;
}

/* Orders two cells of one column: null first. */
static int cell_cmp(const gma_table *ta, const gma_cell *a, const gma_table *tb, const gma_cell *b, gma_ctype type)
{
    if (a->null || b->null)
        return a->null == b->null ? 0 : a->null ? -1 : 1;
    if (type == GMA_CT_STR)
        return strcmp(gma_cell_text(ta, a), gma_cell_text(tb, b));
    if (type == GMA_CT_RATIO || type == GMA_CT_PCT)
        return a->v.d < b->v.d ? -1 : a->v.d > b->v.d;
    if (is_signed(type))
        return a->v.i < b->v.i ? -1 : a->v.i > b->v.i;
    return a->v.u < b->v.u ? -1 : a->v.u > b->v.u;
}

/* Copies src's row into dst's cells from column `at` (strings re-added). */
static int copy_cells(gma_table *dst, gma_cell *d, size_t at, const gma_table *src, size_t row)
{
    for (size_t c = 0; c < src->ncols; c++) {
        const gma_cell *x = gma_table_cell(src, row, c);
        gma_cell *y = &d[at + c];
        *y = *x;
        if (src->cols[c].type == GMA_CT_STR && !x->null) {
            size_t off = gma_strs_add(&dst->strs, gma_cell_text(src, x), strlen(gma_cell_text(src, x)));
            if (off == (size_t)-1)
                return -1;
            y->v.s = off;
        }
    }
    return 0;
}

/* ---- sort keys ------------------------------------------------------------------------ */

/* A row to rank: which table, which row, and where it came from. */
typedef struct rrow {
    const gma_table *t;
    size_t row;
    int64_t rank;       /* the rank id (merged: the first rank it appeared in) */
    size_t order;       /* the row's position in its table (merged: first appearance) */
} rrow;

typedef struct rctx {
    int key, name, key2; /* columns (-1: none); key2: the secondary name column of --sort name */
    gma_ctype kt, nt, k2t;
    int asc, by_name;
} rctx;

static int rrow_cmp(const void *pa, const void *pb, void *pc)
{
    const rrow *a = pa, *b = pb;
    const rctx *c = pc;
    int n;
    if (c->by_name) {
        if (c->name >= 0 && (n = cell_cmp(a->t, gma_table_cell(a->t, a->row, (size_t)c->name), b->t,
                                          gma_table_cell(b->t, b->row, (size_t)c->name), c->nt)) != 0)
            return n;
        if (c->key2 >= 0 && (n = cell_cmp(a->t, gma_table_cell(a->t, a->row, (size_t)c->key2), b->t,
                                          gma_table_cell(b->t, b->row, (size_t)c->key2), c->k2t)) != 0)
            return n;
    } else if (c->key >= 0) {
        n = cell_cmp(a->t, gma_table_cell(a->t, a->row, (size_t)c->key), b->t, gma_table_cell(b->t, b->row, (size_t)c->key),
                     c->kt);
        if (n)
            return c->asc ? n : -n;
        if (c->name >= 0 && (n = cell_cmp(a->t, gma_table_cell(a->t, a->row, (size_t)c->name), b->t,
                                          gma_table_cell(b->t, b->row, (size_t)c->name), c->nt)) != 0)
            return n;
    }
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* How rows rank under a view's key: by the cells of its column, the name
 * columns first for --sort name, the last name column breaking ties. */
static rctx make_ctx(const gma_table *t, const gma_view *v, gma_sort s)
{
    const gma_sortkey *k = &v->keys[(unsigned)s < GMA_SORT_COUNT_ ? s : GMA_SORT_MEM];
    int last = v->names[1] ? 1 : 0;
    rctx c;
    memset(&c, 0, sizeof(c));
    c.by_name = k->compare == GMA_ORDER_NAME;
    c.key = k->print ? col_of(t, k->print) : -1;
    c.name = col_of(t, v->names[c.by_name ? 0 : last]);
    c.key2 = c.by_name && last ? col_of(t, v->names[1]) : -1;
    c.kt = c.key >= 0 ? t->cols[c.key].type : GMA_CT_U64;
    c.nt = c.name >= 0 ? t->cols[c.name].type : GMA_CT_U64;
    c.k2t = c.key2 >= 0 ? t->cols[c.key2].type : GMA_CT_U64;
    c.asc = k->compare == GMA_ORDER_ASC;
    return c;
}

/* ---- merge rules --------------------------------------------------------------------- */

/* One row of one rank, keyed for matching. */
typedef struct mentry {
    size_t key;     /* offset in the key store */
    uint32_t run;
    uint32_t row;
} mentry;

typedef struct mctx {
    const gma_strs *keys;
} mctx;

static int mentry_cmp(const void *pa, const void *pb, void *pc)
{
    const mentry *a = pa, *b = pb;
    const mctx *c = pc;
    int n = strcmp(gma_strs_get(c->keys, a->key), gma_strs_get(c->keys, b->key));
    if (n)
        return n;
    if (a->run != b->run)
        return a->run < b->run ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

/* Combines the cells of group g[0..n-1] into out (ncols of the rank tables). */
static int merge_group(gma_ranks *s, const mentry *g, size_t n, gma_table *dst, gma_cell *out)
{
    const gma_table *t0 = &s->runs[g[0].run].table;
    int peak_col = col_of(t0, "peak_bytes");
    /* the rank whose peak is highest: where GMA_MERGE_ATPEAK values come from */
    size_t at = 0;
    if (peak_col >= 0)
        for (size_t k = 1; k < n; k++) {
            const gma_table *t = &s->runs[g[k].run].table;
            const gma_table *ta = &s->runs[g[at].run].table;
            if (cell_cmp(t, gma_table_cell(t, g[k].row, (size_t)peak_col), ta,
                         gma_table_cell(ta, g[at].row, (size_t)peak_col), GMA_CT_BYTES) > 0)
                at = k;
        }
    for (size_t c = 0; c < t0->ncols; c++) {
        const gma_col *col = &t0->cols[c];
        gma_merge_rule ru = gma_view_merge_rule(gma_view_of(s->opt.by), col);
        gma_cell *o = &out[c];
        o->null = 1;
        if (ru == GMA_MERGE_KEY || ru == GMA_MERGE_FIRST || ru == GMA_MERGE_ATPEAK || col->type == GMA_CT_STR) {
            size_t from = ru == GMA_MERGE_ATPEAK ? at : 0;
            for (size_t k = from; k < n; k++) {
                const gma_table *t = &s->runs[g[k].run].table;
                const gma_cell *x = gma_table_cell(t, g[k].row, c);
                if (x->null && ru != GMA_MERGE_ATPEAK)
                    continue;
                *o = *x;
                if (col->type == GMA_CT_STR && !x->null) {
                    const char *txt = gma_cell_text(t, x);
                    size_t off = gma_strs_add(&dst->strs, txt, strlen(txt));
                    if (off == (size_t)-1)
                        return -1;
                    o->v.s = off;
                }
                break;
            }
            continue;
        }
        if (ru == GMA_MERGE_MEAN)
            continue; /* after the sums */
        int sg = is_signed(col->type);
        for (size_t k = 0; k < n; k++) {
            const gma_table *t = &s->runs[g[k].run].table;
            const gma_cell *x = gma_table_cell(t, g[k].row, c);
            if (x->null)
                continue;
            if (o->null) {
                *o = *x;
                continue;
            }
            switch (ru) {
            case GMA_MERGE_MAX:
                if (sg ? x->v.i > o->v.i : x->v.u > o->v.u)
                    o->v = x->v;
                break;
            case GMA_MERGE_MIN:
                if (sg ? x->v.i < o->v.i : x->v.u < o->v.u)
                    o->v = x->v;
                break;
            default:
                if (sg)
                    o->v.i = gma_sat_addi(o->v.i, x->v.i);
                else
                    o->v.u = gma_sat_add(o->v.u, x->v.u);
                break;
            }
        }
    }
    /* means: merged total time over merged calls */
    int tc = col_of(t0, "time_ns"), cc = col_of(t0, "calls"), mc = col_of(t0, "mean_ns");
    if (mc >= 0 && tc >= 0 && cc >= 0) {
        out[mc].null = out[tc].null || out[cc].null || !out[cc].v.u;
        out[mc].v.u = out[mc].null ? 0 : out[tc].v.u / out[cc].v.u;
    }
    return 0;
}

/* ---- the output tables ------------------------------------------------------------------ */

static const gma_col RANKCOLS[] = {
    { "rank", "rank", GMA_CT_U64, 1, 0 },               { "host", "host", GMA_CT_STR, 1, 0 },
    { "devices", "devices", GMA_CT_STR, 1, 1 },         { "peak", "peak_bytes", GMA_CT_BYTES, 1, 0 },
    { "imbalance", "imbalance", GMA_CT_PCT, 1, 0 },     { "peak step", "peak_step", GMA_CT_U64, 1, 0 },
    { "peak ms", "peak_ns", GMA_CT_TS, 1, 0 },          { "baseline", "baseline_bytes", GMA_CT_BYTES, 1, 0 },
    { "allocated", "alloc_bytes", GMA_CT_BYTES, 1, 0 }, { "freed", "freed_bytes", GMA_CT_BYTES, 1, 0 },
    { "leaked", "leaked_bytes", GMA_CT_BYTES, 1, 0 },   { "kernels", "kernels", GMA_CT_U64, 1, 0 },
    { "kernel time", "kernel_ns", GMA_CT_NS, 1, 0 },    { "steps", "steps", GMA_CT_U64, 1, 0 },
    { "dropped", "dropped", GMA_CT_U64, 1, 0 },         { "allocs", "alloc_count", GMA_CT_U64, 0, 0 },
    { "frees", "free_count", GMA_CT_U64, 0, 0 },        { "records", "records", GMA_CT_U64, 0, 0 },
    { "pid", "pid", GMA_CT_U64, 0, 0 },                 { "world size", "world_size", GMA_CT_I64, 0, 0 },
    { "trace", "trace", GMA_CT_STR, 0, 0 },
};

/* --by rank: a view of its own, one row a rank; --sort mem and peak rank by
 * the peak, alloc by bytes allocated, count by kernels, time by kernel time,
 * name by rank. Its rows are cells only (no value function). */
#define RK(n, h, o, col) { n, h, o, NULL, col, GMA_SORT_MEM, NULL, GMA_CT_BYTES, NULL, 0 }
static const gma_sortkey RANK_KEYS[GMA_SORT_COUNT_] = {
    RK("mem", "peak", GMA_ORDER_DESC, "peak_bytes"),
    RK("peak", "peak", GMA_ORDER_DESC, "peak_bytes"),
    RK("alloc", "bytes allocated", GMA_ORDER_DESC, "alloc_bytes"),
    RK("count", "kernels", GMA_ORDER_DESC, "kernels"),
    RK("time", "kernel time", GMA_ORDER_DESC, "kernel_ns"),
    RK("name", "rank", GMA_ORDER_NAME, NULL),
    RK("held", "peak", GMA_ORDER_DESC, "peak_bytes"),
};
#undef RK
static const gma_view RANK_VIEW = { "rank", RANK_KEYS, { "rank", NULL }, NULL, GMA_SORT_MEM, 0, NULL, 0, NULL };
#define NRANKCOLS (sizeof(RANKCOLS) / sizeof(RANKCOLS[0]))

static double mean_peak(const gma_ranks *s)
{
    double sum = 0;
    for (size_t i = 0; i < s->n; i++)
        sum += (double)s->runs[i].peak;
    return s->n ? sum / (double)s->n : 0.0;
}

static int build_by_rank(gma_ranks *s)
{
    gma_table tmp;
    gma_table_init(&tmp, "Ranks", RANKCOLS, NRANKCOLS);
    double mean = mean_peak(s);
    int err = 0;
    for (size_t i = 0; i < s->n && !err; i++) {
        const gma_rankrun *u = &s->runs[i];
        gma_cell *c = gma_table_row(&tmp);
        if (!c) {
            err = 1;
            break;
        }
        c[0].v.u = (uint64_t)u->id;
        gma_cell_str(&tmp, &c[1], u->host[0] ? u->host : "?");
        gma_cell_str(&tmp, &c[2], u->devices[0] ? u->devices : "-");
        c[3].v.u = u->peak;
        c[3].null = !u->has_peak;
        c[4].v.d = mean > 0 ? (double)u->peak / mean - 1.0 : 0.0;
        c[4].null = !(mean > 0);
        c[5].v.u = u->peak_step;
        c[6].v.i = u->peak_ns;
        c[5].null = c[6].null = !u->has_peak;
        c[7].v.u = u->baseline;
        c[8].v.u = u->alloc_bytes;
        c[9].v.u = u->free_bytes;
        c[10].v.u = u->leaked;
        c[11].v.u = u->kernels;
        c[12].v.u = u->kernel_ns;
        c[12].null = u->launch_only;
        c[13].v.u = u->steps;
        c[14].v.u = u->dropped;
        c[15].v.u = u->alloc_count;
        c[16].v.u = u->free_count;
        c[17].v.u = u->records;
        c[18].v.u = u->pid;
        c[18].null = !u->has_header;
        c[19].v.i = u->world_size;
        c[19].null = u->world_size <= 0;
        gma_cell_str(&tmp, &c[20], u->path);
    }
    rrow *rows = calloc(tmp.nrows ? tmp.nrows : 1, sizeof(*rows));
    err |= !rows;
    for (size_t i = 0; i < tmp.nrows && !err; i++)
        rows[i] = (rrow){ &tmp, i, s->runs[i].id, i };
    rctx c = make_ctx(&tmp, &RANK_VIEW, s->opt.sort);
    err |= !err && gma_msort(rows, tmp.nrows, sizeof(*rows), rrow_cmp, &c) != 0;
    gma_table_init(&s->out, "Ranks", RANKCOLS, NRANKCOLS);
    s->out.total_rows = tmp.nrows;
    size_t keep = s->opt.top && s->opt.top < tmp.nrows ? (size_t)s->opt.top : tmp.nrows;
    for (size_t j = 0; j < keep && !err; j++) {
        gma_cell *d = gma_table_row(&s->out);
        err |= !d || copy_cells(&s->out, d, 0, &tmp, rows[j].row) != 0;
    }
    free(rows);
    gma_table_free(&tmp);
    return err ? -1 : 0;
}

/* The columns of the rank tables with one added: before (rank) or after (ranks). */
static int extend_cols(gma_ranks *s, const gma_table *like, const gma_col *extra, int before)
{
    s->cols = malloc((like->ncols + 1) * sizeof(*s->cols));
    if (!s->cols)
        return -1;
    memcpy(s->cols + (before ? 1 : 0), like->cols, like->ncols * sizeof(*s->cols));
    s->cols[before ? 0 : like->ncols] = *extra;
    return 0;
}

static const gma_table *first_table(const gma_ranks *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->runs[i].done && s->runs[i].table.cols)
            return &s->runs[i].table;
    return NULL;
}

static int build_per_rank(gma_ranks *s)
{
    const gma_table *t0 = first_table(s);
    if (!t0)
        return -1;
    static const gma_col RC = { "rank", "rank", GMA_CT_U64, 1, 0 };
    if (extend_cols(s, t0, &RC, 1) != 0)
        return -1;
    size_t total = 0;
    for (size_t i = 0; i < s->n; i++)
        total += s->runs[i].table.nrows;
    rrow *rows = calloc(total ? total : 1, sizeof(*rows));
    if (!rows)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++)
        for (size_t k = 0; k < s->runs[i].table.nrows; k++)
            rows[m++] = (rrow){ &s->runs[i].table, k, s->runs[i].id, k };
    rctx c = make_ctx(t0, gma_view_of(s->opt.by), s->opt.sort);
    int err = gma_msort(rows, m, sizeof(*rows), rrow_cmp, &c) != 0;
    gma_table_init(&s->out, t0->title, s->cols, t0->ncols + 1);
    uint64_t all = 0;
    for (size_t i = 0; i < s->n; i++)
        all += s->runs[i].table.total_rows;
    s->out.total_rows = all > m ? all : m;
    size_t keep = s->opt.top && s->opt.top < m ? (size_t)s->opt.top : m;
    for (size_t j = 0; j < keep && !err; j++) {
        gma_cell *d = gma_table_row(&s->out);
        err |= !d;
        if (!err) {
            d[0].v.u = (uint64_t)rows[j].rank;
            err |= copy_cells(&s->out, d, 1, rows[j].t, rows[j].row) != 0;
        }
    }
    free(rows);
    return err ? -1 : 0;
}

static int build_merged(gma_ranks *s)
{
    const gma_table *t0 = first_table(s);
    if (!t0)
        return -1;
    static const gma_col RC = { "ranks", "ranks", GMA_CT_U64, 1, 0 };
    if (extend_cols(s, t0, &RC, 0) != 0)
        return -1;
    size_t nc = t0->ncols;
    /* the key of each row: its key columns as csv text; tags add the
     * occurrence of (name, device) in their rank, so the k-th snapshot
     * named X matches the k-th of every other rank */
    gma_strs keys = { 0 };
    gma_vec ents;
    gma_vec_init(&ents, sizeof(mentry));
    gma_buf b = { 0 };
    char cellbuf[512];
    int err = 0;
    for (size_t i = 0; i < s->n && !err; i++) {
        const gma_table *t = &s->runs[i].table;
        gma_map occ = { 0 };
        for (size_t row = 0; row < t->nrows && !err; row++) {
            gma_buf_reset(&b);
            for (size_t c = 0; c < nc; c++) {
                if (gma_view_merge_rule(gma_view_of(s->opt.by), &t->cols[c]) != GMA_MERGE_KEY)
                    continue;
                const gma_cell *x = gma_table_cell(t, row, c);
                if (t->cols[c].type == GMA_CT_STR && !x->null)
                    gma_buf_puts(&b, gma_cell_text(t, x));
                else {
                    gma_cell_format(t, c, x, 0, cellbuf, sizeof(cellbuf));
                    /* numbers compare as text: pad them */
                    gma_buf_printf(&b, "%20s", cellbuf);
                }
                gma_buf_putc(&b, '\x1f');
            }
            if (s->opt.by == GMA_BY_TAG) {
                uint64_t h = gma_hash_str(gma_buf_str(&b));
                uint32_t k = 0;
                gma_map_get(&occ, h, &k);
                err |= gma_map_put(&occ, h, k + 1) != 0;
                gma_buf_printf(&b, "%010u", k);
            }
            mentry *e = gma_vec_push(&ents);
            if (!e || b.oom) {
                err = 1;
                break;
            }
            e->key = gma_strs_add(&keys, gma_buf_str(&b), b.len);
            e->run = (uint32_t)i;
            e->row = (uint32_t)row;
            err |= e->key == (size_t)-1;
        }
        gma_map_free(&occ);
    }
    mctx mc = { &keys };
    err |= !err && gma_msort(ents.data, ents.len, sizeof(mentry), mentry_cmp, &mc) != 0;
    /* merged rows, then ranked */
    gma_table tmp;
    gma_table_init(&tmp, t0->title, s->cols, nc + 1);
    gma_vec rrows;
    gma_vec_init(&rrows, sizeof(rrow));
    for (size_t i = 0; i < ents.len && !err;) {
        const mentry *g = &GMA_VEC_AT(&ents, mentry, i);
        size_t n = 1;
        while (i + n < ents.len && strcmp(gma_strs_get(&keys, g[n].key), gma_strs_get(&keys, g->key)) == 0)
            n++;
        gma_cell *d = gma_table_row(&tmp);
        rrow *x = gma_vec_push(&rrows);
        if (!d || !x) {
            err = 1;
            break;
        }
        err |= merge_group(s, g, n, &tmp, d) != 0;
        /* the ranks it appears in (a rank listing it twice counts once) */
        uint64_t ranks = 0;
        for (size_t k = 0; k < n; k++)
            ranks += k == 0 || g[k].run != g[k - 1].run;
        d[nc].v.u = ranks;
        x->t = &tmp;
        x->row = tmp.nrows - 1;
        x->rank = s->runs[g->run].id;
        x->order = g->row;
        i += n;
    }
    rctx c = make_ctx(&tmp, gma_view_of(s->opt.by), s->opt.sort);
    err |= !err && gma_msort(rrows.data, rrows.len, sizeof(rrow), rrow_cmp, &c) != 0;
    gma_table_init(&s->out, t0->title, s->cols, nc + 1);
    s->out.total_rows = rrows.len;
    size_t keep = s->opt.top && s->opt.top < rrows.len ? (size_t)s->opt.top : rrows.len;
    for (size_t j = 0; j < keep && !err; j++) {
        gma_cell *d = gma_table_row(&s->out);
        err |= !d || copy_cells(&s->out, d, 0, &tmp, GMA_VEC_AT(&rrows, rrow, j).row) != 0;
    }
    gma_table_free(&tmp);
    gma_vec_free(&rrows);
    gma_vec_free(&ents);
    gma_strs_free(&keys);
    gma_buf_free(&b);
    return err ? -1 : 0;
}

int gma_ranks_build(gma_ranks *s)
{
    gma_table_free(&s->out);
    free(s->cols);
    s->cols = NULL;
    if (s->by_rank)
        return build_by_rank(s);
    /* one row per allocation: addresses of different processes never
     * match, so --by alloc lists every rank's rows */
    if (s->per_rank || s->opt.by == GMA_BY_ALLOC)
        return build_per_rank(s);
    return build_merged(s);
}

/* ---- printing -------------------------------------------------------------------------- */

static gma_rank_totals sum_up(const gma_ranks *s)
{
    gma_rank_totals t;
    memset(&t, 0, sizeof(t));
    t.world = -1;
    t.no_kernel_times = 1;
    for (size_t i = 0; i < s->n; i++) {
        const gma_rankrun *u = &s->runs[i];
        t.baseline = gma_sat_add(t.baseline, u->baseline);
        t.alloc = gma_sat_add(t.alloc, u->alloc_bytes);
        t.alloc_count += u->alloc_count;
        t.freed = gma_sat_add(t.freed, u->free_bytes);
        t.free_count += u->free_count;
        t.leaked = gma_sat_add(t.leaked, u->leaked);
        t.leaked_count += u->leaked_count;
        t.kernels += u->kernels;
        t.kernel_ns += u->kernel_ns;
        t.no_kernel_times &= u->launch_only;
        t.dropped += u->dropped;
        t.records += u->records;
        /* ties: the lower rank */
        const gma_rankrun *h = &s->runs[t.hi], *l = &s->runs[t.lo];
        if (u->peak > h->peak || (u->peak == h->peak && u->id < h->id))
            t.hi = i;
        if (u->peak < l->peak || (u->peak == l->peak && u->id < l->id))
            t.lo = i;
        if (u->world_size > 0 && t.world < 0)
            t.world = u->world_size;
    }
    t.mean = mean_peak(s);
    return t;
}

static const char *table_title(const gma_ranks *s, char *buf, size_t cap)
{
    if (s->by_rank)
        snprintf(buf, cap, "Ranks ranked by %s", RANK_KEYS[(unsigned)s->opt.sort < GMA_SORT_COUNT_ ? s->opt.sort : GMA_SORT_MEM].header);
    else if (s->per_rank || s->opt.by == GMA_BY_ALLOC)
        snprintf(buf, cap, "%s of every rank ranked by %s", s->out.title, gma_sortkey_of(s->opt.by, s->opt.sort)->header);
    else
        snprintf(buf, cap, "%s merged over %zu ranks ranked by %s", s->out.title, s->n,
                 gma_sortkey_of(s->opt.by, s->opt.sort)->header);
    return buf;
}

static const char *mode_name(const gma_ranks *s)
{
    return s->by_rank ? "by-rank" : (s->per_rank || s->opt.by == GMA_BY_ALLOC) ? "per-rank" : "merged";
}

int gma_ranks_print(FILE *f, const gma_printer *p, gma_ranks *s)
{
    if (!s->n || gma_ranks_build(s) != 0)
        return -1;
    char title[256];
    gma_ranks_view v = { s->runs, s->n, (const char (*)[400])s->warn, s->nwarn, sum_up(s), &s->out,
                         table_title(s, title, sizeof(title)), s->by_rank ? "rank" : gma_by_names[s->opt.by],
                         gma_sort_names[s->opt.sort], mode_name(s), s->opt.top, s->by_rank };
    return p->ranks(f, &v) != 0 || ferror(f) ? -1 : 0;
}
