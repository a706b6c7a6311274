/*
 * A table as data: typed columns (gma_col: title, key, type, shown in
 * --format table or not) and rows of typed cells (gma_cell), with the
 * strings they hold. Every view hands its rows to the printing layer
 * (print.h) in this form.
 */
#ifndef GMA_TABLE_H
#define GMA_TABLE_H

#include <stdint.h>
#include <stddef.h>

#include "util/gma_util.h"

/* ---- a generic table ------------------------------------------------------ */

typedef enum gma_ctype {
    GMA_CT_STR,
    GMA_CT_U64,
    GMA_CT_I64,
    GMA_CT_BYTES,   /* exact in csv/json, KiB/MiB/GiB in tables */
    GMA_CT_SBYTES,  /* signed bytes */
    GMA_CT_DBYTES,  /* a change in bytes: "+1.00 MiB" in tables */
    GMA_CT_NS,      /* a duration */
    GMA_CT_TS,      /* a time relative to the trace start (ns; ms in tables) */
    GMA_CT_DNS,     /* a change in time: "+1.20 ms" in tables */
    GMA_CT_HEX,     /* an address */
    GMA_CT_RATIO,   /* B / A, printed "x1.50" */
    GMA_CT_PCT,     /* a relative difference (0.1 = 10%): "+10.0%" in tables, full precision in csv/json */
    GMA_CT_SHARE,   /* a part of a whole (0.1 = 10%): "10.0%" in tables, full precision in csv/json */
    GMA_CT_REAL     /* a real number (a fitted coefficient): 6 digits in tables, full precision in csv/json */
} gma_ctype;

typedef struct gma_col {
    const char *title;  /* table header */
    const char *key;    /* csv header and json member */
    gma_ctype type;
    int in_table;       /* shown by --format table (csv/json show every column) */
    int right;          /* a text column right-aligned (numbers are always) */
} gma_col;

typedef struct gma_cell {
    int null;           /* "-" in tables, empty in csv, null in json */
    union {
        uint64_t u;
        int64_t i;
        double d;
        size_t s;       /* offset in the table's strs */
    } v;
} gma_cell;

typedef struct gma_table {
    const char *title;
    const char *sort_note;  /* what the sort key means for this table (its sort key's header, view.h) */
    const gma_col *cols;
    size_t ncols;
    gma_vec cells;          /* gma_cell, nrows x ncols */
    size_t nrows;
    uint64_t total_rows;    /* rows before --top */
    gma_strs strs;
    /* A table too large to hold (arows.h): cells and strs hold the rows
     * [win_lo, win_lo + win_n) of the nrows, and fill(t, row) replaces them
     * with a window that holds row (0, or -1: the row is shown empty). */
    int (*fill)(struct gma_table *t, size_t row);
    void (*fill_free)(struct gma_table *t);
    void *fill_ctx;
    size_t win_lo, win_n;
} gma_table;

void gma_table_init(gma_table *t, const char *title, const gma_col *cols, size_t ncols);
void gma_table_free(gma_table *t);
/* Starts a row; returns its cells (zeroed), NULL on OOM. */
gma_cell *gma_table_row(gma_table *t);
void gma_cell_str(gma_table *t, gma_cell *c, const char *s);
/* A cell of a table filled on demand (its window moved to hold row). */
gma_cell *gma_table_cell_fill(const gma_table *t, size_t row, size_t col);
static inline gma_cell *gma_table_cell(const gma_table *t, size_t row, size_t col)
{
    if (__builtin_expect(t->fill != NULL, 0))
        return gma_table_cell_fill(t, row, col);
    return &((gma_cell *)t->cells.data)[row * t->ncols + col];
}
static inline const char *gma_cell_text(const gma_table *t, const gma_cell *c)
{
    return gma_strs_get(&t->strs, c->v.s);
}

/* A cell as text ("1.50 MiB" in tables, "1572864" otherwise). */
void gma_cell_format(const gma_table *t, size_t col, const gma_cell *c, int human, char *out, size_t cap);

#endif
