/*
 * Source lines (--by line): bytes by the innermost frame of the program's
 * own code that BLOCK records carry ("FILE:LINE FUNCTION"), with the module
 * that allocated most of a line's bytes beside it. Allocations without a
 * frame go to "(no line)".
 */
#ifndef GMA_LINES_H
#define GMA_LINES_H

#include "mtree.h"
#include "view.h"

typedef struct gma_lrow {
    uint32_t frame;        /* string id, 0 "(no line)" */
    uint64_t alloc_bytes, alloc_count, free_bytes, free_count, peak;
} gma_lrow;

typedef struct gma_lmod {  /* bytes one module allocated on one line */
    uint32_t line, node;
    uint64_t bytes;
} gma_lmod;

typedef struct gma_lines {
    gma_vec rows;          /* gma_lrow; row 0 "(no line)" */
    gma_map row_of;        /* frame -> row */
    gma_vec mods;          /* gma_lmod */
    gma_map mod_of;        /* row << 32 | node -> mods index */
} gma_lines;

int gma_lines_init(gma_lines *l);
void gma_lines_release(gma_lines *l);
/* An accounted allocation of frame in module node; 0, or -1 out of memory. */
int gma_lines_alloc(gma_lines *l, uint32_t frame, uint32_t node, uint64_t bytes);
/* Its free, and its bytes live at the peak. */
void gma_lines_freed(gma_lines *l, uint32_t frame, uint64_t bytes);
void gma_lines_peak(gma_lines *l, uint32_t frame, uint64_t bytes);
/* The module of each row: the one that allocated most of its bytes (the
 * first made of a tie), 0 "(no module)"; ids[i] for row i, n rows. */
int gma_lines_modules(const gma_lines *l, uint32_t **ids);

/* The --by line table (l NULL: no rows). */
int gma_lines_build(const gma_replay *r, const gma_lines *l, const gma_mtree *tree, gma_table *t, uint64_t top);
/* The rows --diff matches, with the metric s. */
int gma_lines_each(const gma_replay *r, const gma_lines *l, gma_sort s, gma_modules_row_fn fn, void *ctx);

/* --by line's sort keys (view.h), one row per gma_sort; the view itself is
 * modules.c's (its rows need the collector). */
extern const gma_sortkey gma_line_keys[GMA_SORT_COUNT_];

#endif
