/*
 * A table as data (table.h): rows of typed cells, and a cell as text.
 */
#include <stdlib.h>
#include <string.h>

#include "table.h"

/* ---- generic table ------------------------------------------------------ */

void gma_table_init(gma_table *t, const char *title, const gma_col *cols, size_t ncols)
{
    memset(t, 0, sizeof(*t));
    t->title = title;
    t->cols = cols;
    t->ncols = ncols;
    gma_vec_init(&t->cells, sizeof(gma_cell));
}

void gma_table_free(gma_table *t)
{
    if (t->fill_free)
        t->fill_free(t);
    t->fill = NULL;
    t->fill_free = NULL;
    gma_vec_free(&t->cells);
    gma_strs_free(&t->strs);
}

gma_cell *gma_table_row(gma_table *t)
{
    if (gma_vec_reserve(&t->cells, (t->nrows + 1) * t->ncols) != 0)
        return NULL;
    gma_cell *c = (gma_cell *)t->cells.data + t->nrows * t->ncols;
    memset(c, 0, t->ncols * sizeof(*c));
    t->cells.len = (t->nrows + 1) * t->ncols;
    t->nrows++;
    return c;
}

gma_cell *gma_table_cell_fill(const gma_table *t, size_t row, size_t col)
{
    /* printers read a table with a const pointer; a filled table's window
     * is not part of what it holds */
    gma_table *m = (gma_table *)t;
    static gma_cell empty = { 1, { 0 } };
    if (row < m->win_lo || row - m->win_lo >= m->win_n) {
        if (m->fill(m, row) != 0 || row < m->win_lo || row - m->win_lo >= m->win_n) {
            empty.null = 1;
            return &empty;
        }
    }
    return &((gma_cell *)m->cells.data)[(row - m->win_lo) * m->ncols + col];
}

void gma_cell_str(gma_table *t, gma_cell *c, const char *s)
{
    size_t off = gma_strs_add(&t->strs, s, strlen(s));
    if (off == (size_t)-1) {
        c->null = 1;
        return;
    }
    c->v.s = off;
}

void gma_cell_format(const gma_table *t, size_t col, const gma_cell *c, int human, char *out, size_t cap)
{
    char b[GMA_FMT_CAP];
    if (c->null) {
        snprintf(out, cap, "%s", human ? "-" : "");
        return;
    }
    switch (t->cols[col].type) {
    case GMA_CT_STR: snprintf(out, cap, "%s", gma_cell_text(t, c)); break;
    case GMA_CT_U64: snprintf(out, cap, "%s", human ? gma_fmt_count(b, c->v.u) : (snprintf(b, sizeof(b), "%llu", (unsigned long long)c->v.u), b)); break;
    case GMA_CT_I64: snprintf(out, cap, "%lld", (long long)c->v.i); break;
    case GMA_CT_BYTES:
        if (human)
            snprintf(out, cap, "%s", gma_fmt_bytes(b, c->v.u));
        else
            snprintf(out, cap, "%llu", (unsigned long long)c->v.u);
        break;
    case GMA_CT_SBYTES:
    case GMA_CT_DBYTES:
        if (human)
            snprintf(out, cap, "%s", gma_fmt_sbytes(b, c->v.i, t->cols[col].type == GMA_CT_DBYTES));
        else
            snprintf(out, cap, "%lld", (long long)c->v.i);
        break;
    case GMA_CT_NS:
        if (human)
            snprintf(out, cap, "%s", gma_fmt_dur(b, c->v.u));
        else
            snprintf(out, cap, "%llu", (unsigned long long)c->v.u);
        break;
    case GMA_CT_TS:
        if (human)
            snprintf(out, cap, "%s", gma_fmt_ms(b, c->v.i));
        else
            snprintf(out, cap, "%lld", (long long)c->v.i);
        break;
    case GMA_CT_DNS:
        if (human) {
            uint64_t mag = c->v.i < 0 ? (uint64_t)0 - (uint64_t)c->v.i : (uint64_t)c->v.i;
            snprintf(out, cap, "%s%s", c->v.i < 0 ? "-" : c->v.i > 0 ? "+" : "", gma_fmt_dur(b, mag));
        } else {
            snprintf(out, cap, "%lld", (long long)c->v.i);
        }
        break;
    case GMA_CT_HEX: snprintf(out, cap, "0x%llx", (unsigned long long)c->v.u); break;
    case GMA_CT_RATIO:
        if (human)
            snprintf(out, cap, "x%.2f", c->v.d);
        else
            snprintf(out, cap, "%.4f", c->v.d);
        break;
    case GMA_CT_PCT:
    case GMA_CT_SHARE:
        if (human)
            snprintf(out, cap, t->cols[col].type == GMA_CT_SHARE ? "%.1f%%" : "%+.1f%%", c->v.d * 100.0);
        else
            snprintf(out, cap, "%.17g", c->v.d);
        break;
    case GMA_CT_REAL: snprintf(out, cap, human ? "%.6g" : "%.17g", c->v.d); break;
    }
}
