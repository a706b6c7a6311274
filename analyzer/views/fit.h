/*
 * Growth laws (fit.c): bytes measured at several sizes of one dimension
 * (batch, sequence length) fitted by the simplest law the measurements
 * support: constant, linear or quadratic in the size. Pure arithmetic on
 * points, no trace: the --fit view (fitview.c) feeds it.
 *
 * A law fits when no point lies further from it than the tolerance,
 * GMA_FIT_TOL_SHARE of the largest value plus GMA_FIT_TOL_BYTES (the
 * allocator rounds every block, so bytes are never exactly polynomial).
 * The simplest law that fits is chosen; n points can show at most a law of
 * degree n - 1 (two runs cannot tell a quadratic from a line, and the
 * view says so).
 */
#ifndef GMA_FIT_H
#define GMA_FIT_H

#include <stddef.h>
#include <stdint.h>

#define GMA_FIT_MAX_POINTS 64
#define GMA_FIT_TOL_SHARE 0.01
#define GMA_FIT_TOL_BYTES 65536.0

typedef enum gma_law {
    GMA_LAW_CONSTANT,
    GMA_LAW_LINEAR,
    GMA_LAW_QUADRATIC,
    GMA_LAW_COUNT_
} gma_law;

extern const char *const gma_law_names[GMA_LAW_COUNT_];

/* y = c[0] + c[1] x + c[2] x^2 */
typedef struct gma_fit {
    gma_law law;
    double c[3];
    double max_resid;  /* the largest |y - fit| over the points, bytes */
    double tol;        /* the tolerance it was held to */
    int fits;          /* max_resid <= tol (0: the best law n points allow, and a poor fit) */
    int limited;       /* a law of higher degree could not be tried: too few points */
} gma_fit;

/* Fits y[i] at x[i], i < n, 2 <= n <= GMA_FIT_MAX_POINTS, the x distinct
 * and positive. 0, or -1 when the points are not that. */
int gma_fit_points(const double *x, const double *y, size_t n, gma_fit *out);
/* The fit's value at x. */
double gma_fit_eval(const gma_fit *f, double x);
/* The largest integer size s, from <= s <= GMA_FIT_SIZE_MAX, whose value
 * is at most cap. 0 when not even `from` fits; GMA_FIT_SIZE_MAX when the
 * law never crosses cap before it (every size fits). */
#define GMA_FIT_SIZE_MAX ((uint64_t)1 << 40)
uint64_t gma_fit_largest(const gma_fit *f, uint64_t from, double cap);

#endif
