/*
 * The --by tables of a finished replay (kernel, range, alloc, step, tag,
 * stream, device), ranked by the --sort key and cut to --top. Each view and
 * its sort keys are data (view.h); the built-in views are defined here.
 */
#ifndef GMA_TABLES_H
#define GMA_TABLES_H

#include "gma.h"
#include "table.h"
#include "view.h"

/* Builds the --by table of r (opt.by, opt.sort); used by the report and
 * the rank sets. 0, or -1 out of memory. */
int gma_table_build(const gma_replay *r, gma_table *t, uint64_t top);
/* --by alloc's table (arows.c makes it from spilled rows): its columns, a
 * row of entry e (-1 out of memory), and the rows before --top. */
void gma_alloc_table_init(gma_table *t);
int gma_alloc_row(const gma_replay *r, gma_table *t, const gma_entry *e, gma_buf *b);
uint64_t gma_alloc_rows_total(const gma_replay *r);
/* Display labels of kernel name ids, unique within one list (short forms
 * that collide are redone longer, then numbered " #2"...): appends each to
 * strs and its offset to offs[i]. 0, or -1 out of memory. */
int gma_kernel_labels(const gma_replay *r, const uint32_t *ids, size_t n, gma_strs *strs, size_t *offs);

#endif
