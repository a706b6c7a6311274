/* Growth laws: the simplest polynomial law that measured bytes support (fit.h). */
#include "fit.h"

#include <math.h>

const char *const gma_law_names[GMA_LAW_COUNT_] = { "constant", "linear", "quadratic" };

/* Least squares of degree d (d + 1 <= n) in u = x / xs, so that the normal
 * equations stay well conditioned for sizes in the thousands; a[] in u. */
static int solve(const double *x, const double *y, size_t n, double xs, int d, long double a[3])
{
    long double m[3][4] = { { 0 } };
    int k = d + 1;
    for (size_t i = 0; i < n; i++) {
        long double u = (long double)x[i] / xs, p[5] = { 1, u, u * u, u * u * u, u * u * u * u };
        for (int r = 0; r < k; r++) {
            for (int c = 0; c < k; c++)
                m[r][c] += p[r + c];
            m[r][k] += p[r] * (long double)y[i];
        }
    }
    for (int c = 0; c < k; c++) { /* Gauss-Jordan, partial pivoting */
        int piv = c;
        for (int r = c + 1; r < k; r++)
            if (fabsl(m[r][c]) > fabsl(m[piv][c]))
                piv = r;
        if (m[piv][c] == 0)
            return -1;
        for (int j = 0; j <= k; j++) {
            long double t = m[c][j];
            m[c][j] = m[piv][j];
            m[piv][j] = t;
        }
        for (int r = 0; r < k; r++) {
            if (r == c)
                continue;
            long double f = m[r][c] / m[c][c];
            for (int j = c; j <= k; j++)
                m[r][j] -= f * m[c][j];
        }
    }
    for (int r = 0; r < 3; r++)
        a[r] = r < k ? m[r][k] / m[r][r] : 0;
    return 0;
}

double gma_fit_eval(const gma_fit *f, double x) { return f->c[0] + x * (f->c[1] + x * f->c[2]); }

static double max_resid(const gma_fit *f, const double *x, const double *y, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double r = fabs(y[i] - gma_fit_eval(f, x[i]));
        if (r > worst)
            worst = r;
    }
    return worst;
}

int gma_fit_points(const double *x, const double *y, size_t n, gma_fit *out)
{
    if (n < 2 || n > GMA_FIT_MAX_POINTS)
        return -1;
    double xs = 0, ymax = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || !isfinite(y[i]))
            return -1;
        for (size_t j = 0; j < i; j++)
            if (x[j] == x[i])
                return -1;
        xs = x[i] > xs ? x[i] : xs;
        ymax = fabs(y[i]) > ymax ? fabs(y[i]) : ymax;
    }
    double tol = GMA_FIT_TOL_SHARE * ymax + GMA_FIT_TOL_BYTES;
    int top = n - 1 < GMA_LAW_QUADRATIC ? (int)n - 1 : GMA_LAW_QUADRATIC;
    for (int d = 0; d <= top; d++) {
        long double a[3];
        if (solve(x, y, n, xs, d, a) != 0)
            return -1;
        gma_fit f = { .law = (gma_law)d, .tol = tol };
        f.c[0] = (double)a[0];
        f.c[1] = (double)(a[1] / xs);
        f.c[2] = (double)(a[2] / ((long double)xs * xs));
        f.max_resid = max_resid(&f, x, y, n);
        f.fits = f.max_resid <= tol;
        f.limited = top < GMA_LAW_QUADRATIC;
        *out = f;
        if (f.fits)
            return 0;
    }
    return 0; /* the highest law tried, marked as a poor fit */
}

/* The smallest root of c2 s^2 + c1 s + c0 at or above lo, or INFINITY. */
static double first_root_above(double c2, double c1, double c0, double lo)
{
    double r[2] = { INFINITY, INFINITY };
    if (c2 == 0) {
        if (c1 != 0)
            r[0] = -c0 / c1;
    } else {
        double disc = c1 * c1 - 4 * c2 * c0;
        if (disc < 0)
            return INFINITY;
        double q = -0.5 * (c1 + copysign(sqrt(disc), c1));
        r[0] = q / c2;
        r[1] = q != 0 ? c0 / q : INFINITY;
    }
    double best = INFINITY;
    for (int i = 0; i < 2; i++)
        if (r[i] >= lo && r[i] < best)
            best = r[i];
    return best;
}

uint64_t gma_fit_largest(const gma_fit *f, uint64_t from, double cap)
{
    if (from < 1)
        from = 1;
    if (from > GMA_FIT_SIZE_MAX || gma_fit_eval(f, (double)from) > cap)
        return 0;
    double root = first_root_above(f->c[2], f->c[1], f->c[0] - cap, (double)from);
    if (!(root < (double)GMA_FIT_SIZE_MAX))
        return GMA_FIT_SIZE_MAX;
    /* floor(root), then corrected by evaluation: rounding may leave it one
     * size off on either side of the crossing */
    uint64_t s = (uint64_t)root;
    if (s < from)
        s = from;
    while (s > from && gma_fit_eval(f, (double)s) > cap)
        s--;
    while (s < GMA_FIT_SIZE_MAX && gma_fit_eval(f, (double)(s + 1)) <= cap && (double)(s + 1) <= root + 1)
        s++;
    return s;
}
