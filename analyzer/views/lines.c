/* Source lines (lines.h). */
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "mtree.h"
#include "view.h"
#include "tracestr.h"

int gma_lines_init(gma_lines *l)
{
    memset(l, 0, sizeof(*l));
    gma_vec_init(&l->rows, sizeof(gma_lrow));
    gma_vec_init(&l->mods, sizeof(gma_lmod));
    return gma_vec_push(&l->rows) ? 0 : -1;
}

void gma_lines_release(gma_lines *l)
{
    gma_vec_free(&l->rows);
    gma_map_free(&l->row_of);
    gma_vec_free(&l->mods);
    gma_map_free(&l->mod_of);
}

#define LROW(l, i) (&GMA_VEC_AT(&(l)->rows, gma_lrow, (i)))

/* The row of a frame, made on first use; UINT32_MAX out of memory. */
static uint32_t row_for(gma_lines *l, uint32_t frame)
{
    uint32_t i;
    if (!frame)
        return 0;
    if (gma_map_get(&l->row_of, frame, &i))
        return i;
    gma_lrow *w = gma_vec_push(&l->rows);
    if (!w)
        return UINT32_MAX;
    w->frame = frame;
    i = (uint32_t)(l->rows.len - 1);
    if (gma_map_put(&l->row_of, frame, i) != 0) {
        l->rows.len--;
        return UINT32_MAX;
    }
    return i;
}

static uint32_t row_find(const gma_lines *l, uint32_t frame)
{
    uint32_t i;
    return !frame ? 0 : gma_map_get(&l->row_of, frame, &i) ? i : UINT32_MAX;
}

int gma_lines_alloc(gma_lines *l, uint32_t frame, uint32_t node, uint64_t bytes)
{
    uint32_t i = row_for(l, frame);
    if (i == UINT32_MAX)
        return -1;
    gma_lrow *w = LROW(l, i);
    w->alloc_bytes += bytes;
    w->alloc_count++;
    uint64_t key = (uint64_t)i << 32 | node;
    uint32_t k;
    if (!gma_map_get(&l->mod_of, key, &k)) {
        gma_lmod *x = gma_vec_push(&l->mods);
        if (!x)
            return -1;
        x->line = i;
        x->node = node;
        k = (uint32_t)(l->mods.len - 1);
        if (gma_map_put(&l->mod_of, key, k) != 0) {
            l->mods.len--;
            return -1;
        }
    }
    GMA_VEC_AT(&l->mods, gma_lmod, k).bytes += bytes;
    return 0;
}

void gma_lines_freed(gma_lines *l, uint32_t frame, uint64_t bytes)
{
    uint32_t i = row_find(l, frame);
    if (i == UINT32_MAX)
        return;
    LROW(l, i)->free_bytes += bytes;
    LROW(l, i)->free_count++;
}

void gma_lines_peak(gma_lines *l, uint32_t frame, uint64_t bytes)
{
    /* a block live at the peak but allocated outside the selection: its row still counts it */
    uint32_t i = row_for(l, frame);
    if (i != UINT32_MAX)
        LROW(l, i)->peak += bytes;
}

int gma_lines_modules(const gma_lines *l, uint32_t **ids)
{
    size_t n = l->rows.len;
    uint32_t *id = calloc(n ? n : 1, sizeof(*id));
    uint64_t *best = calloc(n ? n : 1, sizeof(*best));
    if (!id || !best) {
        free(id);
        free(best);
        return -1;
    }
    for (size_t k = 0; k < l->mods.len; k++) {
        const gma_lmod *x = &GMA_VEC_AT(&l->mods, gma_lmod, k);
        if (x->bytes > best[x->line]) {
            best[x->line] = x->bytes;
            id[x->line] = x->node;
        }
    }
    free(best);
    *ids = id;
    return 0;
}

static int64_t sat(uint64_t v) { return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v; }

/* --sort over line rows (gma_lrow): the view's key table (view.h) */
#define LR_(x) ((const gma_lrow *)(x))
static int64_t l_peak(const gma_replay *r, const void *x) { (void)r; return sat(LR_(x)->peak); }
static int64_t l_alloc(const gma_replay *r, const void *x) { (void)r; return sat(LR_(x)->alloc_bytes); }
static int64_t l_count(const gma_replay *r, const void *x) { (void)r; return sat(LR_(x)->alloc_count); }

#define D_ GMA_ORDER_DESC
#define N_ GMA_ORDER_NAME
const gma_sortkey gma_line_keys[GMA_SORT_COUNT_] = {
    { "mem", "bytes at the peak", D_, l_peak, "peak_bytes", GMA_SORT_MEM, "self memory", GMA_CT_SBYTES, NULL, 0 },
    { "peak", "bytes at the peak", D_, l_peak, "peak_bytes", GMA_SORT_PEAK, "peak", GMA_CT_BYTES, NULL, 0 },
    { "alloc", "bytes allocated", D_, l_alloc, "alloc_bytes", GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "count", "allocations", D_, l_count, "alloc_count", GMA_SORT_COUNT, "calls", GMA_CT_U64, NULL, 0 },
    { "time", "bytes at the peak", D_, l_peak, "peak_bytes", GMA_SORT_TIME, "time", GMA_CT_NS, NULL, 0 },
    { "name", "file:line", N_, l_peak, NULL, GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "held", "bytes at the peak", D_, l_peak, "peak_bytes", GMA_SORT_HELD, "bytes held at the peak", GMA_CT_BYTES, NULL, 0 },
};

static int64_t line_key(const gma_replay *r, const gma_lrow *w, gma_sort s)
{
    return gma_line_keys[(unsigned)s < GMA_SORT_COUNT_ ? s : GMA_SORT_MEM].value(r, w);
}

static void line_name(const gma_replay *r, uint32_t frame, gma_buf *b)
{
    gma_buf_reset(b);
    if (!frame) {
        gma_buf_puts(b, "(no line)");
        return;
    }
    size_t len;
    const char *s = gma_str(r, frame, &len);
    gma_text_clean(b, s, len);
}


static const gma_col LCOLS[] = {
    { "line", "line", GMA_CT_STR, 1, 0 },
    { "allocs", "alloc_count", GMA_CT_U64, 1, 0 },
    { "allocated", "alloc_bytes", GMA_CT_BYTES, 1, 0 },
    { "freed", "freed_bytes", GMA_CT_BYTES, 1, 0 },
    { "peak", "peak_bytes", GMA_CT_BYTES, 1, 0 },
    { "module", "module", GMA_CT_STR, 1, 0 },
    { "frees", "free_count", GMA_CT_U64, 0, 0 },
};

static int used(const gma_lrow *w) { return w->alloc_count || w->free_count || w->peak; }

int gma_lines_build(const gma_replay *r, const gma_lines *l, const gma_mtree *tree, gma_table *t, uint64_t top)
{
    gma_table_init(t, "Source lines (the innermost frame of the program's code; module: most bytes)", LCOLS,
                   sizeof(LCOLS) / sizeof(LCOLS[0]));
    size_t n = l ? l->rows.len : 0, m = 0;
    gma_keyrow *rows = calloc(n ? n : 1, sizeof(*rows));
    uint32_t *mod = NULL;
    gma_strs names = { 0 };
    gma_buf b = { 0 };
    int err = !rows || (l && gma_lines_modules(l, &mod) != 0);
    for (size_t i = 0; i < n && !err; i++) {
        const gma_lrow *w = LROW(l, i);
        if (!used(w))
            continue;
        line_name(r, w->frame, &b);
        gma_keyrow *s = &rows[m++];
        s->name = gma_strs_add(&names, gma_buf_str(&b), b.len);
        s->key = line_key(r, w, r->opt.sort);
        s->idx = (uint32_t)i;
        err |= s->name == (size_t)-1 || b.oom;
    }
    if (!err && gma_keyrows_sort(rows, m, &names, r->opt.sort == GMA_SORT_NAME) != 0)
        err = 1;
    t->total_rows = m;
    size_t keep = top && top < m ? (size_t)top : m;
    for (size_t j = 0; j < keep && !err; j++) {
        const gma_lrow *w = LROW(l, rows[j].idx);
        gma_cell *cl = gma_table_row(t);
        if (!cl) {
            err = 1;
            break;
        }
        gma_cell_str(t, &cl[0], gma_strs_get(&names, rows[j].name));
        cl[1].v.u = w->alloc_count;
        cl[2].v.u = w->alloc_bytes;
        cl[3].v.u = w->free_bytes;
        cl[4].v.u = w->peak;
        gma_mtree_name(tree, mod[rows[j].idx], &b);
        gma_cell_str(t, &cl[5], gma_buf_str(&b));
        cl[6].v.u = w->free_count;
        /* a line that allocated nothing in the selection has no module of its own */
        cl[5].null = !w->alloc_count;
        err |= b.oom;
    }
    free(rows);
    free(mod);
    gma_strs_free(&names);
    gma_buf_free(&b);
    return err ? -1 : 0;
}

int gma_lines_each(const gma_replay *r, const gma_lines *l, gma_sort s, gma_modules_row_fn fn, void *ctx)
{
    gma_buf b = { 0 };
    int err = 0;
    for (size_t i = 0; l && i < l->rows.len && !err; i++) {
        const gma_lrow *w = LROW(l, i);
        if (!used(w))
            continue;
        line_name(r, w->frame, &b);
        int64_t v = line_key(r, w, s);
        err = b.oom || fn(ctx, gma_buf_str(&b), b.len, v, w->alloc_count) != 0;
    }
    gma_buf_free(&b);
    return err ? -1 : 0;
}
