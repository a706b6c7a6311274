/*
 * --by alloc --top 0 without keeping every allocation (arows.c): each
 * accounted allocation's row is written, once final, as a small record to
 * sorted runs in a temporary file; the table is then made a window of rows
 * at a time by merging the runs (table.h's fill), so memory is bounded by
 * one run and one window, never by the number of rows. The rows, their
 * order and their cells are those of the kept-entry table.
 */
#ifndef GMA_AROWS_H
#define GMA_AROWS_H

#include "gma.h"
#include "table.h"

/* Starts spilling the --by alloc rows of r (registers a consumer); 0, or
 * -1 (out of memory, or no temporary file: the rows are then kept). */
int gma_aspill_open(gma_replay *r);
/* Makes t the --by alloc table of a finished replay, its rows filled on
 * demand; 0, or -1 with errno. */
int gma_aspill_table(const gma_replay *r, gma_table *t);

#endif
