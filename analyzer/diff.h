/*
 * --diff OTHER: two finished replays side by side (diff.c).
 */
#ifndef GMA_DIFF_H
#define GMA_DIFF_H

#include <stdio.h>

#include "gma.h"

/* Compares two finished replays; prints in opt->format. 0, or -1 when
 * out of memory or writing failed. */
int gma_diff_print(FILE *f, const gma_replay *a, const gma_replay *b);
/* --diff compares like with like: with --layer auto and PyTorch blocks in
 * one trace only, sets opt->layer to segments for both and returns 1 with
 * a note for the user. */
int gma_diff_layer(gma_opts *opt, const char *a, const char *b, char *note, size_t cap);

#endif
