/*
 * The timeline's bands and model without a trace: bands from hand-made
 * allocations (a kernel that comes later, a window's baseline repeating a
 * live allocation, a lost free), bytes at the peak per owner, and the
 * merging of small bands above GTM_MERGE_AT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline/tl_bands.h"
#include "timeline/tl_model.h"

static int failures;
#define CHECK(c)                                                                 \
    do {                                                                         \
        if (!(c)) {                                                              \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                          \
        }                                                                        \
    } while (0)

static gtb_band band(uint64_t addr, uint64_t bytes, uint64_t t0, uint32_t kname)
{
    gtb_band b;
    memset(&b, 0, sizeof(b));
    b.addr = addr;
    b.bytes = bytes;
    b.t0 = t0;
    b.kname = kname;
    return b;
}

static void test_bands(void)
{
    gtb_set s;
    gtb_init(&s, 0);
    gtb_band b = band(0x1000, 100, 10, 0);
    CHECK(gtb_alloc(&s, &b, 0, 1, 77) == 0); /* its kernel comes later */
    b = band(0x2000, 200, 20, 5);
    CHECK(gtb_alloc(&s, &b, 0, 0, 0) == 0);
    b = band(0x3000, 300, 25, 0);
    CHECK(gtb_alloc(&s, &b, 0, 1, 77) == 0);
    gtb_settle(&s, 77, 9);
    CHECK(s.b[0].kname == 9 && s.b[2].kname == 9 && s.b[1].kname == 5);
    gtb_release(&s, 0, 0x1000, 30);
    CHECK(s.b[0].t1 == 30 && s.b[1].t1 == GTB_OPEN);
    gtb_release(&s, 0, 0x9999, 31); /* unknown: ignored */
    b = band(0x2000, 200, 40, 0);
    CHECK(gtb_alloc(&s, &b, 1, 0, 0) == 0); /* a baseline repeating what is live */
    CHECK(s.n == 3 && s.b[1].t1 == GTB_OPEN);
    b = band(0x3000, 64, 50, 3);
    CHECK(gtb_alloc(&s, &b, 0, 0, 0) == 0); /* its free was lost */
    CHECK(s.n == 4 && s.b[2].t1 == 50 && s.b[3].t1 == GTB_OPEN);
    gtb_free(&s);
    gtb_init(&s, 2); /* bounded */
    for (int i = 0; i < 5; i++) {
        b = band(0x100u * (unsigned)i, 10, (uint64_t)i, 0);
        CHECK(gtb_alloc(&s, &b, 0, 0, 0) == 0);
    }
    CHECK(s.n == 2 && s.left_out == 3 && s.left_out_bytes == 30);
    gtb_free(&s);
}

/* Owners "a" (kname 1) and "b" (kname 2); the peak at t = 25 after the third. */
static void test_peak(void)
{
    gtb_set s;
    gtb_init(&s, 0);
    gtb_band b = band(0x1000, 100, 10, 1);
    gtb_alloc(&s, &b, 0, 0, 0);
    b = band(0x2000, 200, 20, 2);
    gtb_alloc(&s, &b, 0, 0, 0);
    b = band(0x3000, 300, 25, 1);
    gtb_alloc(&s, &b, 0, 0, 0);
    gtb_release(&s, 0, 0x1000, 22); /* freed before the peak */
    b = band(0x4000, 400, 30, 2);   /* after the peak */
    gtb_alloc(&s, &b, 0, 0, 0);
    gtm_doc d;
    gtm_init(&d, "kernel");
    gtm_lane *l = gtm_lane_new(&d);
    CHECK(l && gtm_lane_bands(l, &s, 0, 5) == 0);
    uint32_t oa = gtm_str(&d, "a"), ob = gtm_str(&d, "b");
    for (size_t i = 0; i < l->n; i++)
        l->own[i] = l->kn[i] = l->b[i].kname == 1 ? oa : ob;
    CHECK(l->n == 4 && l->b[0].t0 == 5 && l->b[0].t1 == 17); /* relative to the origin 5 */
    l->has_peak = 1;
    l->peak = 500;
    l->peak_t = 20;
    CHECK(gtm_lane_at_peak(&d, l) == 0);
    CHECK(l->peak_pos == 3 && l->at_peak[oa] == 300 && l->at_peak[ob] == 200);
    CHECK(gtm_finish(&d, 1) == 0);
    CHECK(d.ncolors == 1 && d.rank[0] == oa && gtm_color(&d, oa) == 0 && gtm_color(&d, ob) == 1);
    CHECK(l->nkeep == 4 && l->nmerged == 0);
    gtm_free(&d);
    gtb_free(&s);
}

static void test_merge(void)
{
    size_t n = GTM_MERGE_AT + 5000;
    gtb_set s;
    gtb_init(&s, 0);
    for (size_t i = 0; i < n; i++) {
        /* sizes 1..n; each freed 3 ns later, except the first one */
        gtb_band b = band(0x1000 * (i + 1), i + 1, 10 * i, 1);
        gtb_alloc(&s, &b, 0, 0, 0);
        if (i)
            gtb_release(&s, 0, 0x1000 * (i + 1), 10 * i + 3);
    }
    gtm_doc d;
    gtm_init(&d, "kernel");
    gtm_lane *l = gtm_lane_new(&d);
    CHECK(l && gtm_lane_bands(l, &s, 0, 0) == 0);
    uint32_t o = gtm_str(&d, "k");
    for (size_t i = 0; i < l->n; i++)
        l->own[i] = o;
    l->has_peak = 1;
    l->peak_t = 10; /* the first (1 byte, never freed) and the second are live */
    CHECK(gtm_lane_at_peak(&d, l) == 0 && l->at_peak[o] == 3);
    CHECK(gtm_finish(&d, 10) == 0);
    /* the GTM_KEEP largest, plus the two small ones live at the peak */
    CHECK(l->nkeep == GTM_KEEP + 2 && l->nmerged == n - GTM_KEEP - 2);
    CHECK(l->keep[0] && l->keep[1] && !l->keep[2] && l->keep[n - 1]);
    CHECK(l->merge_max == n - GTM_KEEP);
    CHECK(l->nslices == GTM_SLICES);
    /* a merged band lives 3 ns alone: no slice's level exceeds the largest merged */
    uint64_t hi = 0;
    for (size_t k = 0; k < l->nslices * (d.ncolors + 1); k++)
        if (l->slice_v[k] > hi)
            hi = l->slice_v[k];
    CHECK(hi == l->merge_max);
    gtm_free(&d);
    gtb_free(&s);
}

int main(void)
{
    test_bands();
    test_peak();
    test_merge();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("timeline model ok\n");
    return 0;
}
