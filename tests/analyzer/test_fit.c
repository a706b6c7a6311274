/* Unit tests of fit.c: laws chosen and their coefficients on points built
 * from known polynomials, the tolerance's edge, two points only, a poor
 * fit, and the largest size under a cap, each worked out by hand. */
#include <math.h>

#include "fit.h"

#include "../check.h"

#define MIB 1048576.0
#define GIB 1073741824.0

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1) + 1e-6; }

static void fit3(const double *y, gma_fit *f)
{
    static const double x[3] = { 512, 1024, 2048 };
    REQUIRE(gma_fit_points(x, y, 3, f) == 0, "fit of 3 points");
}

static void test_laws(void)
{
    gma_fit f;
    /* constant: 100 MiB at every size */
    double yc[3] = { 100 * MIB, 100 * MIB, 100 * MIB };
    fit3(yc, &f);
    CHECK_EQ_U64(f.law, GMA_LAW_CONSTANT);
    CHECK(near(f.c[0], 100 * MIB) && near(f.c[1], 0) && near(f.c[2], 0), "c = %g %g %g", f.c[0], f.c[1], f.c[2]);
    CHECK(f.fits && !f.limited);
    /* linear: 1 MiB + 2048 x: 2 MiB, 3 MiB, 5 MiB */
    double yl[3] = { 2 * MIB, 3 * MIB, 5 * MIB };
    fit3(yl, &f);
    CHECK_EQ_U64(f.law, GMA_LAW_LINEAR);
    CHECK(near(f.c[0], MIB) && near(f.c[1], 2048) && near(f.c[2], 0), "c = %g %g %g", f.c[0], f.c[1], f.c[2]);
    /* quadratic: 2^20 + 2^12 x + 2^8 x^2 */
    double yq[3];
    static const double xq[3] = { 512, 1024, 2048 };
    for (int i = 0; i < 3; i++)
        yq[i] = 1048576.0 + 4096.0 * xq[i] + 256.0 * xq[i] * xq[i];
    CHECK(yq[0] == 1048576.0 + 2097152.0 + 67108864.0); /* 70254592 */
    fit3(yq, &f);
    CHECK_EQ_U64(f.law, GMA_LAW_QUADRATIC);
    CHECK(near(f.c[0], 1048576) && near(f.c[1], 4096) && near(f.c[2], 256), "c = %g %g %g", f.c[0], f.c[1],
          f.c[2]);
    CHECK(near(gma_fit_eval(&f, 4096), 1048576.0 + 4096.0 * 4096 + 256.0 * 4096 * 4096));
    CHECK(f.fits);
}

/* A constant within the tolerance (1% of the largest value + 64 KiB) stays
 * a constant; just past it, a line. */
static void test_tolerance(void)
{
    gma_fit f;
    /* d is twice the tolerance at 1 GiB; the tolerance of a set whose
     * largest value is 1 GiB + d is 0.01 * (1 GiB + d) + 65536 */
    double d = 2 * (0.01 * GIB + 65536);
    double y1[3] = { GIB, GIB, GIB + d };
    static const double x[3] = { 1, 2, 3 };
    REQUIRE(gma_fit_points(x, y1, 3, &f) == 0);
    /* three points: the mean is GIB + d/3, the worst miss 2d/3 > tol */
    CHECK_EQ_U64(f.law, GMA_LAW_LINEAR);
    double y2[2] = { GIB, GIB + d };
    static const double x2[2] = { 1, 2 };
    REQUIRE(gma_fit_points(x2, y2, 2, &f) == 0);
    /* two points: the miss is d/2 = 0.01 GiB + 65536, the tolerance
     * 0.01 (GiB + d) + 65536, larger by 0.01 d: a constant */
    CHECK_EQ_U64(f.law, GMA_LAW_CONSTANT);
    CHECK(f.limited);
    double y3[2] = { GIB, GIB + 2.2 * d };
    REQUIRE(gma_fit_points(x2, y3, 2, &f) == 0);
    CHECK_EQ_U64(f.law, GMA_LAW_LINEAR);
    CHECK(f.limited && f.fits && f.max_resid < 1);
}

/* Four points of a cubic: no law up to quadratic fits; the quadratic is
 * returned, marked. Bad points are refused. */
static void test_poor_and_bad(void)
{
    gma_fit f;
    double x[4] = { 1, 2, 3, 4 }, y[4];
    for (int i = 0; i < 4; i++)
        y[i] = GIB * x[i] * x[i] * x[i];
    REQUIRE(gma_fit_points(x, y, 4, &f) == 0);
    CHECK_EQ_U64(f.law, GMA_LAW_QUADRATIC);
    CHECK(!f.fits && f.max_resid > f.tol);
    CHECK(gma_fit_points(x, y, 1, &f) == -1);
    double xd[2] = { 2, 2 }, xz[2] = { 0, 2 };
    CHECK(gma_fit_points(xd, y, 2, &f) == -1); /* the same size twice */
    CHECK(gma_fit_points(xz, y, 2, &f) == -1); /* a size of 0 */
}

static void test_largest(void)
{
    /* 1 GiB + 1 MiB per unit under 80 GiB: (80 - 1) GiB / 1 MiB = 80896 */
    gma_fit lin = { .law = GMA_LAW_LINEAR, .c = { GIB, MIB, 0 } };
    CHECK_EQ_U64(gma_fit_largest(&lin, 1, 80 * GIB), 80896);
    CHECK_EQ_U64(gma_fit_largest(&lin, 80896, 80 * GIB), 80896);
    CHECK_EQ_U64(gma_fit_largest(&lin, 80897, 80 * GIB), 0); /* not even the smallest asked */
    /* 256 s^2 under 2^30: s^2 <= 2^22, s = 2048; one byte less: 2047 */
    gma_fit q = { .law = GMA_LAW_QUADRATIC, .c = { 0, 0, 256 } };
    CHECK_EQ_U64(gma_fit_largest(&q, 1, GIB), 2048);
    CHECK_EQ_U64(gma_fit_largest(&q, 1, GIB - 1), 2047);
    /* a constant: below the cap every size fits, above none */
    gma_fit c = { .law = GMA_LAW_CONSTANT, .c = { GIB, 0, 0 } };
    CHECK_EQ_U64(gma_fit_largest(&c, 1, 2 * GIB), GMA_FIT_SIZE_MAX);
    CHECK_EQ_U64(gma_fit_largest(&c, 1, GIB / 2), 0);
    /* a shrinking line never crosses the cap upward */
    gma_fit down = { .law = GMA_LAW_LINEAR, .c = { GIB, -1, 0 } };
    CHECK_EQ_U64(gma_fit_largest(&down, 1, GIB), GMA_FIT_SIZE_MAX);
}

int main(void)
{
    test_laws();
    test_tolerance();
    test_poor_and_bad();
    test_largest();
    return tc_result("analyzer.fit");
}
