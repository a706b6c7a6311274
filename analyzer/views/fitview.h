/*
 * --fit: how the peak grows with a size (fitview.c). Runs of one program
 * at several sizes of one dimension (batch, sequence length), or the steps
 * of one trace at sizes the user names, each replayed alone; the bytes
 * each owner (range or kernel) holds at the peak, the allocated peak and
 * the reserved peak are fitted as laws of the size (fit.h), predicted at
 * a size the user names, and held against the device to find the largest
 * size that fits.
 */
#ifndef GMA_FITVIEW_H
#define GMA_FITVIEW_H

#include <stdio.h>

#include "fit.h"
#include "gma.h"
#include "print.h"

/* One point: a trace at a size, or one of its steps (step >= 0). */
typedef struct gma_fit_point {
    const char *path;
    int64_t step; /* -1: the whole trace (or --step) */
    uint64_t size;
} gma_fit_point;

typedef struct gma_fit_request {
    const gma_fit_point *pts;
    size_t n;
    uint64_t at;       /* the size to predict; 0: twice the largest measured */
    uint64_t capacity; /* the device's bytes; 0: the recorded device's total */
    int by_given;      /* opt->by names the owners (kernel or range); else ranges when the runs have them */
} gma_fit_request;

/* Parses --fit's list: "SIZE,SIZE,..." (one per trace, in order) or
 * "STEP=SIZE,..." (steps of one trace). Fills pts[0..*n) (paths left
 * NULL, steps -1 where not given); 0, or -1 with a message in err. */
int gma_fit_parse(const char *arg, gma_fit_point *pts, size_t cap, size_t *n, char *err, size_t errcap);
/* Parses a byte count with an optional binary suffix (K, M, G, T, or KiB,
 * MiB, GiB, TiB): 0, or -1. */
int gma_fit_parse_bytes(const char *arg, uint64_t *out);

/* Replays every point with opt (its step set per point), fits, prints
 * with p to f. Returns an exit status (gma.h): 0, GMA_EXIT_BAD_INPUT
 * (a trace unreadable, or writing failed: the message is on stderr),
 * GMA_EXIT_DAMAGED (made, but a trace is incomplete). */
int gma_fit_run(FILE *f, const gma_printer *p, const gma_opts *opt, const gma_fit_request *q);

#endif
