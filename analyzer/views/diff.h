/*
 * --diff OTHER: two finished replays side by side (diff.c).
 */
#ifndef GMA_DIFF_H
#define GMA_DIFF_H

#include <stdio.h>

#include "gma.h"
#include "print.h"

/* Compares two finished replays; prints with p. 0, or -1 when out of
 * memory or writing failed. */
int gma_diff_print(FILE *f, const gma_printer *p, const gma_replay *a, const gma_replay *b);
/* --diff compares like with like: with --layer auto and PyTorch blocks in
 * one trace only, sets opt->layer to segments for both and returns 1 with
 * a note for the user. */
int gma_diff_layer(gma_opts *opt, const char *a, const char *b, char *note, size_t cap);

/* Each allocation live at a selected device's peak, but the baseline's
 * (no owner in the window), by the normalized display name of the kernel
 * (k) or the range that made it, as --diff matches rows: fn returns 0 to
 * go on. 0, or -1 when out of memory or fn returned non-zero. */
typedef int (*gma_held_fn)(void *ctx, const char *name, size_t len, uint64_t bytes);
int gma_held_each(const gma_replay *r, int k, gma_held_fn fn, void *ctx);

#endif
