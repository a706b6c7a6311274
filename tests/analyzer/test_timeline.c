/*
 * The timeline's bands and model without a trace: bands from hand-made
 * allocations (a kernel that comes later, a window's baseline repeating a
 * live allocation, a lost free), bytes at the peak per owner, and the
 * merging of small bands above GTM_MERGE_AT, the summary of a lane's
 * live total (buckets of times, one ending at the peak). Then the PyTorch bridge's
 * layers: which CUDA allocations are part of the reserve, ranges unmapped,
 * and the layers of the traces of tl_bridge.c (written to argv[1] and
 * argv[1].ex) through the replay, the model and both writers, against the
 * numbers worked out there. Last the bridge's per-band columns (category,
 * module, op, line) of the train and modules scenarios (scenarios.c,
 * sc_modules.c: written to argv[1].train and argv[1].modules), with the
 * categories as the owners.
 *
 *   gma_test_timeline TRACE_PATH
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "category.h"
#include "export.h"
#include "gma.h"
#include "view.h"
#include "sc_modules.h"
#include "scenarios.h"
#include "timeline/tl_bands.h"
#include "timeline/tl_model.h"
#include "timeline/tl_write.h"
#include "tl_bridge.h"

#include "../check.h"


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
    /* ranges released (expandable segments' unmaps) */
    gtb_init(&s, 0);
    b = band(0x1000, 40, 10, 0);
    gtb_alloc(&s, &b, 0, 0, 0);
    CHECK(gtb_release_range(&s, 0, 0x1000 + 20, 20, 15) == 0); /* its upper half */
    CHECK(s.n == 2 && s.b[0].t1 == 15 && s.b[1].addr == 0x1000 && s.b[1].bytes == 20 && s.b[1].t0 == 15 &&
          s.b[1].t1 == GTB_OPEN);
    b = band(0x2000, 10, 16, 0);
    gtb_alloc(&s, &b, 0, 0, 0);
    b = band(0x200a, 10, 17, 0);
    gtb_alloc(&s, &b, 0, 0, 0);
    CHECK(gtb_release_range(&s, 0, 0x2004, 10, 18) == 0); /* across two: 0x2000-0x2003 and 0x200e-0x2013 go on */
    CHECK(s.n == 6 && s.b[2].t1 == 18 && s.b[3].t1 == 18);
    CHECK(s.b[4].addr == 0x2000 && s.b[4].bytes == 4 && s.b[5].addr == 0x200e && s.b[5].bytes == 6);
    CHECK(gtb_release_range(&s, 0, 0x1000, 20, 19) == 0 && s.b[1].t1 == 19 && s.n == 6); /* a whole band */
    CHECK(gtb_release_range(&s, 1, 0x2000, 100, 20) == 0 && s.b[4].t1 == GTB_OPEN); /* another device */
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
    /* the summary of the live total: 100 at 5, 300 at 15, 200 at 17, 500 at
     * 20 (the peak), 900 at 25; one bucket per time */
    static const int64_t T[5] = { 5, 15, 17, 20, 25 };
    static const uint64_t V[5] = { 100, 300, 200, 500, 900 };
    CHECK(l->nsum == 5 && l->sum_per == 1);
    for (size_t k = 0; k < 5 && l->nsum == 5; k++)
        CHECK(l->sum_t0[k] == T[k] && l->sum_t1[k] == T[k] && l->sum_end[k] == V[k] && l->sum_lo[k] == V[k] &&
              l->sum_hi[k] == V[k]);
    /* at most 4 buckets: 1 cut by count (5 times each), 2 at the largest
     * gaps (10 after 5, 5 after 20), one spare for the peak (20): 5 alone,
     * 15..20 (lowest 200, highest 500, end 500), 25 */
    CHECK(gtm_lane_summary(l, 4) == 0 && l->nsum == 3 && l->sum_per == 5);
    CHECK(l->sum_t0[0] == 5 && l->sum_t1[0] == 5 && l->sum_end[0] == 100);
    CHECK(l->sum_t0[1] == 15 && l->sum_t1[1] == 20 && l->sum_lo[1] == 200 && l->sum_hi[1] == 500 && l->sum_end[1] == 500);
    CHECK(l->sum_t0[2] == 25 && l->sum_t1[2] == 25 && l->sum_end[2] == 900);
    /* at most 2: no cut at a gap (1 by count, 1 spare): 5..20 at the peak, then 25 */
    CHECK(gtm_lane_summary(l, 2) == 0 && l->nsum == 2 && l->sum_per == 5);
    CHECK(l->sum_t0[0] == 5 && l->sum_t1[0] == 20 && l->sum_lo[0] == 100 && l->sum_hi[0] == 500 && l->sum_end[0] == 500);
    gtm_free(&d);
    gtb_free(&s);
}

/* The summary counts every event of a time before its level: a free and
 * two allocations at 20 are one time (100 -> 57, never 157 or 0). */
static void test_summary(void)
{
    gtb_set s;
    gtb_init(&s, 0);
    gtb_band b = band(0x1000, 100, 10, 1);
    gtb_alloc(&s, &b, 0, 0, 0);
    b = band(0x2000, 50, 20, 1);
    gtb_alloc(&s, &b, 0, 0, 0);
    b = band(0x3000, 7, 20, 1);
    gtb_alloc(&s, &b, 0, 0, 0);
    gtb_release(&s, 0, 0x1000, 20);
    gtb_release(&s, 0, 0x2000, 30);
    gtm_doc d;
    gtm_init(&d, "kernel");
    gtm_lane *l = gtm_lane_new(&d);
    CHECK(l && gtm_lane_bands(l, &s, 0, 0) == 0);
    CHECK(gtm_lane_summary(l, 0) == 0 && l->nsum == 3 && l->sum_per == 1);
    CHECK(l->sum_end[0] == 100 && l->sum_end[1] == 57 && l->sum_end[2] == 7 && l->sum_hi[1] == 57 && l->sum_lo[1] == 57);
    CHECK(l->sum_t0[1] == 20 && l->sum_t1[2] == 30);
    /* one bucket: the three times, lowest 7, highest 100, end 7 */
    CHECK(gtm_lane_summary(l, 2) == 0 && l->nsum == 1 && l->sum_per == 3);
    CHECK(l->sum_t0[0] == 10 && l->sum_t1[0] == 30 && l->sum_lo[0] == 7 && l->sum_hi[0] == 100 && l->sum_end[0] == 7);
    /* no bands: no buckets */
    gtm_lane *e = gtm_lane_new(&d);
    gtb_set none;
    gtb_init(&none, 0);
    CHECK(e && gtm_lane_bands(e, &none, 0, 0) == 0 && gtm_lane_summary(e, 0) == 0 && e->nsum == 0);
    gtb_free(&none);
    gtm_free(&d);
    gtb_free(&s);
}

/* Every band live at the peak (none freed): the page still holds at most
 * GTM_KEEP + GTM_KEEP_PEAK of them; the rest are merged, their bytes whole
 * in the summary's total and in the merged split. */
static void test_merge_live(void)
{
    size_t n = GTM_MERGE_AT + 5000;
    gtb_set s;
    gtb_init(&s, 0);
    for (size_t i = 0; i < n; i++) {
        gtb_band b = band(0x1000 * (i + 1), i + 1, 10 * i, 1); /* sizes 1..n */
        gtb_alloc(&s, &b, 0, 0, 0);
    }
    gtm_doc d;
    gtm_init(&d, "kernel");
    gtm_lane *l = gtm_lane_new(&d);
    CHECK(l && gtm_lane_bands(l, &s, 0, 0) == 0);
    uint32_t o = gtm_str(&d, "k");
    for (size_t i = 0; i < l->n; i++)
        l->own[i] = o;
    l->has_peak = 1;
    l->peak_t = (int64_t)(10 * n);
    d.split = 1;
    CHECK(gtm_lane_at_peak(&d, l) == 0 && gtm_finish(&d, 10) == 0);
    /* kept: sizes n down to n - 80,000 + 1; merged: 1..25,000 */
    size_t m = n - GTM_KEEP - GTM_KEEP_PEAK;
    CHECK(m == 25000);
    CHECK(l->nkeep == GTM_KEEP + GTM_KEEP_PEAK && l->nmerged == m);
    CHECK(l->merge_max == 25000 && l->merged_bytes == 25000ull * 25001ull / 2);
    CHECK(!l->keep[0] && !l->keep[m - 1] && l->keep[m] && l->keep[n - 1]);
    /* the summary's last level is every band: 1 + ... + 105,000 = 5,512,552,500 */
    CHECK(l->nsum > 0 && l->sum_end[l->nsum - 1] == 5512552500ull);
    /* the merged bytes of "k" (colour 0, the grey none) after a bucket's last
     * time t = 10 j: sizes 1..min(j + 1, 25,000); 312,512,500 at the end */
    CHECK(d.ncolors == 1 && l->split);
    int ok = l->split != NULL;
    for (size_t k = 0; ok && k < l->nsum; k++) {
        uint64_t j = (uint64_t)l->sum_t1[k] / 10 + 1, m2 = j < m ? j : m;
        ok = l->split[2 * k] == m2 * (m2 + 1) / 2 && l->split[2 * k + 1] == 0;
    }
    CHECK(ok);
    CHECK(l->split && l->split[2 * (l->nsum - 1)] == 312512500ull);
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
    d.split = 1;
    CHECK(gtm_finish(&d, 10) == 0);
    /* the GTM_KEEP largest, plus the two small ones live at the peak */
    CHECK(l->nkeep == GTM_KEEP + 2 && l->nmerged == n - GTM_KEEP - 2);
    CHECK(l->keep[0] && l->keep[1] && !l->keep[2] && l->keep[n - 1]);
    CHECK(l->merge_max == n - GTM_KEEP);
    /* the live total: 1 (the first) + i + 1 from 10 i to 10 i + 3, else 1;
     * so at most 1 + n, at the last band, which is kept (at the 10 n - 10 ns) */
    uint64_t hi = 0;
    for (size_t k = 0; k < l->nsum; k++)
        if (l->sum_hi[k] > hi)
            hi = l->sum_hi[k];
    CHECK(hi == 1 + n);
    /* merged: bands 2 .. n - GTM_KEEP - 1 (sizes 3 .. 65,000), each alone for
     * 3 ns: after a bucket's last time t, band t / 10 when t is its
     * allocation and it is merged, else nothing merged */
    int ok = l->split != NULL;
    for (size_t k = 0; ok && k < l->nsum; k++) {
        int64_t t = l->sum_t1[k];
        uint64_t i = (uint64_t)t / 10, want = t % 10 == 0 && i >= 2 && i < n - GTM_KEEP ? i + 1 : 0;
        ok = l->split[2 * k] == want && l->split[2 * k + 1] == 0 && want <= l->merge_max;
    }
    CHECK(ok);
    gtm_free(&d);
    gtb_free(&s);
}

/* A CUDA allocation is part of the reserve when it lies within a segment
 * (or a mapped range of an expandable one) while that lives. */
static void test_match(void)
{
    gtb_set seg, cu;
    gtb_init(&seg, 0);
    gtb_init(&cu, 0);
    gtb_band b = band(0x10000, 2000, 100, 0);
    gtb_alloc(&seg, &b, 0, 0, 0); /* segment A: 100..200 */
    gtb_release(&seg, 0, 0x10000, 200);
    b = band(0x20000, 1000, 150, 0);
    gtb_alloc(&seg, &b, 0, 0, 0); /* segment B: 150.. */
    b = band(0x10000, 2000, 99, 0);
    gtb_alloc(&cu, &b, 0, 0, 0); /* A as CUDA saw it, a little earlier: a segment */
    gtb_release(&cu, 0, 0x10000, 201);
    b = band(0x10000, 512, 250, 0);
    gtb_alloc(&cu, &b, 0, 0, 0); /* A's address after A: outside, 512 */
    b = band(0x20000, 1000, 150, 0);
    gtb_alloc(&cu, &b, 0, 0, 0); /* B: a segment */
    b = band(0x30000, 64, 160, 0);
    gtb_alloc(&cu, &b, 0, 0, 0); /* outside, 64 */
    b = band(0x40000, 8, 170, 0);
    b.device = 1;
    gtb_alloc(&cu, &b, 0, 0, 0); /* another device */
    b = band(0x40000, 4000, 300, 0);
    gtb_alloc(&seg, &b, 0, 0, 0); /* segment C, mapped: CUDA sees chunks */
    b = band(0x40000, 2000, 300, 0);
    gtb_alloc(&cu, &b, 0, 0, 0); /* its first chunk */
    b = band(0x40000 + 2000, 2000, 310, 0);
    gtb_alloc(&cu, &b, 0, 0, 0); /* its second */
    b = band(0x40000 + 3000, 2000, 320, 0);
    gtb_alloc(&cu, &b, 0, 0, 0); /* across C's end: outside, 2000 */
    gtm_doc d;
    gtm_init(&d, "kernel");
    gtm_lane *l = gtm_lane_new(&d);
    CHECK(l && gtm_lane_bands(l, &seg, 0, 0) == 0); /* no tensors needed: any set */
    CHECK(l && gtm_lane_ctx(l, &seg, &cu, 0, 0) == 0);
    if (l) {
        CHECK(l->fw && l->ctx[GTM_CTX_SEG].n == 3 && l->ctx[GTM_CTX_OUT].n == 3);
        CHECK(l->ctx[GTM_CTX_OUT].b[0].addr == 0x30000 && l->ctx[GTM_CTX_OUT].b[1].addr == 0x10000);
        CHECK(l->ctx[GTM_CTX_OUT].b[1].bytes == 512 && l->ctx[GTM_CTX_OUT].b[2].addr == 0x40000 + 3000);
        /* highest together from 320: B 1000 + C 4000 + outside 64 + 512 + 2000 = 7576 */
        CHECK(l->ctx_top == 7576);
        l->has_peak = 1;
        l->peak_t = 180;
        CHECK(gtm_lane_at_peak(&d, l) == 0);
        CHECK(l->ctx[GTM_CTX_SEG].at_peak == 3000 && l->ctx[GTM_CTX_SEG].n_at_peak == 2);
        CHECK(l->ctx[GTM_CTX_OUT].at_peak == 64 && l->ctx[GTM_CTX_OUT].n_at_peak == 1);
    }
    gtm_free(&d);
    gtb_free(&seg);
    gtb_free(&cu);
}

static void copy_label(const char *raw, size_t len, size_t max_len, gma_buf *out)
{
    (void)max_len;
    gma_buf_putn(out, raw, len);
}

/* The whole of a writer's output, NUL-terminated (NULL on failure). */
static char *written(const gtm_doc *d, int html)
{
    FILE *f = tmpfile();
    if (!f)
        return NULL;
    int rc = html ? gtw_html(f, d) : gtw_svg(f, d);
    long n = ftell(f);
    char *s = rc == 0 && n > 0 ? malloc((size_t)n + 1) : NULL;
    if (s) {
        rewind(f);
        s[fread(s, 1, (size_t)n, f)] = 0;
    }
    fclose(f);
    return s;
}

#define MS(x) ((uint64_t)(x) * 1000000ull) /* ms after the trace start, as the model keeps times */

static gma_replay g_r;

/* Replays a trace with the timeline collecting and makes its model, as
 * gmem-analyze --timeline does; 0, or -1 (checked) with r freed. */
static int model_of(const char *path, gtm_doc *d)
{
    gma_opts o;
    memset(&o, 0, sizeof(o));
    o.by = GMA_BY_KERNEL;
    o.top = 10;
    o.window = o.step = o.device = -1;
    char msg[600];
    CHECK(gma_replay_open(&g_r, &o, path) == 0 && gma_timeline_collect(&g_r) == 0);
    if (gma_replay_read(&g_r, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "%s: %s\n", path, msg);
        CHECK(!"trace read");
        gma_replay_free(&g_r);
        return -1;
    }
    CHECK(g_r.fw == 1);
    gtm_init(d, "kernel");
    CHECK(gma_timeline_model_add(d, &g_r, "") == 0);
    CHECK(gtm_labels(d, copy_label, 0) == 0 && gtm_finish(d, 10) == 0);
    return 0;
}

/* tl_bridge.c's trace: its numbers are worked out there. */
static void test_bridge(const char *path)
{
    const uint64_t M = TLB_MIB;
    gtm_doc d;
    if (tlb_write(path) != 0 || model_of(path, &d) != 0) {
        CHECK(!"tl_bridge trace written and read");
        return;
    }
    CHECK(d.lanes.len == 1);
    if (d.lanes.len == 1) {
        const gtm_lane *l = &GMA_VEC_AT(&d.lanes, gtm_lane, 0);
        const gtm_ctx *S = &l->ctx[GTM_CTX_SEG], *O = &l->ctx[GTM_CTX_OUT];
        CHECK(l->fw && l->n == 4 && l->nkeep == 4 && S->n == 2 && O->n == 2);
        /* no categories collected (model_of): the bridge's columns but the category */
        CHECK(!l->cat && l->mod && strcmp(gtm_s(&d, l->mod[0]), "(no module)") == 0);
        CHECK(l->nlayers == 3 && strcmp(gtm_s(&d, l->layer_name[1]), "reserved segments (PyTorch's caching allocator)") == 0);
        /* the tensors at the peak, 19 ms: softmax 10 + 12, gemm 4 */
        CHECK(l->has_peak && l->peak == 26 * M && l->peak_t == (int64_t)MS(19));
        uint32_t sm = gtm_str(&d, "softmax_kernel"), gm = gtm_str(&d, "gemm_kernel");
        CHECK(l->at_peak[sm] == 22 * M && l->at_peak[gm] == 4 * M);
        CHECK(d.ncolors == 2 && d.rank[0] == sm && d.rank[1] == gm);
        /* segments S1 (13 ms, open) and S2 (18 to 24 ms) */
        CHECK(S->b[0].addr == TLB_S1 && S->b[0].bytes == 20 * M && S->b[0].t0 == MS(13) && S->b[0].t1 == GTB_OPEN);
        CHECK(S->b[1].addr == TLB_S2 && S->b[1].bytes == 20 * M && S->b[1].t0 == MS(18) && S->b[1].t1 == MS(24));
        /* outside: WS 8 MiB from 11 ms, NC 2 MiB from 22 ms, never freed; the segments are not */
        CHECK(O->b[0].addr == TLB_WS && O->b[0].bytes == 8 * M && O->b[0].t0 == MS(11) && O->b[0].t1 == GTB_OPEN);
        CHECK(O->b[1].addr == TLB_NC && O->b[1].bytes == 2 * M && O->b[1].t0 == MS(22));
        CHECK(strcmp(gtm_s(&d, O->b[0].kname), "cudaMalloc") == 0);
        /* at the peak: 40 MiB reserved in 2 segments, 8 MiB outside in 1; together at most 50 MiB */
        CHECK(S->at_peak == 40 * M && S->n_at_peak == 2 && O->at_peak == 8 * M && O->n_at_peak == 1);
        CHECK(l->ctx_top == 50 * M);
        /* the analyzer's own figures (layer.c) agree */
        CHECK(l->fw_reserved == 40 * M && l->fw_outside == 8 * M);
        /* the whole run in view (no steady steps: too few): from the first band of any layer,
         * WS at 11 ms, to the last event at 29 ms, with 1/40 of that on each side */
        CHECK(l->t_min == (int64_t)MS(11) && l->t_max == (int64_t)MS(29));
        CHECK(l->view0 == (int64_t)MS(11) - (int64_t)MS(18) / 40 && l->view1 == (int64_t)MS(29) + (int64_t)MS(18) / 40);
    }
    char *svg = written(&d, 0), *html = written(&d, 1);
    CHECK(svg && strstr(svg, "id=\"gm-hatch\""));
    CHECK(svg && strstr(svg, "reserved segments (PyTorch's caching allocator): 40.00 MiB, 14.00 MiB of it in no tensor"));
    CHECK(svg && strstr(svg, "outside PyTorch's allocator (CUDA allocations in none of its segments): 8.00 MiB"));
    CHECK(svg && strstr(svg, "fill=\"url(#gm-hatch)\""));
    /* the page: the analyzer's figures, then each layer's columns (t0 deltas from 0, -1: never freed) */
    CHECK(html && strstr(html, "\"fw\":{\"reserved\":41943040,\"outside\":8388608,\"seg\":{\"t0\":[13000000,5000000],"
                               "\"dur\":[-1,6000000],\"sz\":[20971520,20971520]"));
    CHECK(html && strstr(html, "\"out\":{\"t0\":[11000000,11000000],\"dur\":[-1,-1],\"sz\":[8388608,2097152]"));
    free(svg);
    free(html);
    gtm_free(&d);
    gma_replay_free(&g_r);
}

/* As model_of, with the categories collected and as the owners (gmem-analyze
 * --timeline on a bridge trace). */
static int model_of_cats(const char *path, gtm_doc *d)
{
    gma_opts o;
    memset(&o, 0, sizeof(o));
    o.by = GMA_BY_KERNEL;
    o.top = 10;
    o.window = o.step = o.device = -1;
    char msg[600];
    CHECK(gma_replay_open(&g_r, &o, path) == 0 && gma_timeline_collect(&g_r) == 0 && gma_category_open(&g_r) == 0);
    if (gma_replay_read(&g_r, msg, sizeof(msg)) != 0 || gma_category_finish(&g_r) != 0) {
        fprintf(stderr, "%s: %s\n", path, msg);
        CHECK(!"trace read");
        gma_replay_free(&g_r);
        return -1;
    }
    gtm_init(d, "kernel");
    gtm_fixed_owners(d, "category", gma_cat_names, GMA_CAT_TENSORS_);
    CHECK(gma_timeline_model_add(d, &g_r, "") == 0);
    CHECK(gtm_labels(d, copy_label, 0) == 0 && gtm_finish(d, 10) == 0);
    return 0;
}

/* Band i's columns are cat, mod, op and ln (NULL: ""). */
static int band_is(const gtm_doc *d, const gtm_lane *l, size_t i, const char *cat, const char *mod, const char *op,
                   const char *ln)
{
    int ok = i < l->n && l->cat && strcmp(gtm_s(d, l->cat[i]), cat) == 0 && strcmp(gtm_s(d, l->mod[i]), mod) == 0 &&
             strcmp(gtm_s(d, l->op[i]), op) == 0 && strcmp(gtm_s(d, l->ln[i]), ln ? ln : "") == 0;
    if (!ok && i < l->n && l->cat)
        fprintf(stderr, "band %zu: %s | %s | %s | %s\n", i, gtm_s(d, l->cat[i]), gtm_s(d, l->mod[i]),
                gtm_s(d, l->op[i]), gtm_s(d, l->ln[i]));
    return ok;
}

/* sc_train (scenarios.c): every block's category as worked out there, its
 * module (GPT forward only) and op; the owners are the categories, in
 * their order, with their bytes at the peak (t50). */
static void test_train_cols(const char *path)
{
    gtm_doc d;
    if (sc_train(path) != 0 || model_of_cats(path, &d) != 0) {
        CHECK(!"train trace written and read");
        return;
    }
    const char *NM = "(no module)", *STEP = "Optimizer.step#Adam.step";
    CHECK(d.lanes.len == 1 && strcmp(d.by, "category") == 0 && d.split);
    if (d.lanes.len == 1) {
        const gtm_lane *l = &GMA_VEC_AT(&d.lanes, gtm_lane, 0);
        CHECK(l->n == 15 && l->cat != NULL);
        CHECK(band_is(&d, l, 0, "parameter", NM, "(no op)", NULL));              /* W */
        CHECK(band_is(&d, l, 1, "input", NM, "aten::_to_copy", NULL));           /* X */
        CHECK(band_is(&d, l, 2, "activation", "GPT", "aten::mm", NULL));         /* A1 */
        CHECK(band_is(&d, l, 3, "workspace", "GPT", "aten::mm", NULL));          /* WS */
        CHECK(band_is(&d, l, 4, "temporary", "GPT", "aten::add", NULL));         /* T1 */
        CHECK(band_is(&d, l, 5, "other", "GPT", "aten::clone", NULL));           /* L1 */
        CHECK(band_is(&d, l, 6, "gradient", NM, "MmBackward0", NULL));           /* G */
        CHECK(band_is(&d, l, 7, "optimizer state", NM, STEP, NULL));             /* S1 */
        CHECK(band_is(&d, l, 8, "optimizer state", NM, STEP, NULL));             /* S2 */
        CHECK(band_is(&d, l, 9, "temporary", NM, STEP, NULL));                   /* T2 */
        CHECK(band_is(&d, l, 10, "input", NM, "aten::_to_copy", NULL));          /* X2 */
        CHECK(band_is(&d, l, 11, "activation", "GPT", "aten::mm", NULL));        /* A2 */
        CHECK(band_is(&d, l, 12, "other", "GPT", "aten::clone", NULL));          /* L2 */
        CHECK(band_is(&d, l, 13, "gradient", NM, "MmBackward0", NULL));          /* G2 */
        CHECK(band_is(&d, l, 14, "temporary", NM, STEP, NULL));                  /* T3 */
        for (size_t i = 0; i < l->n; i++)
            CHECK(l->own[i] == l->cat[i]);
        /* ranked in the categories' order; at the peak (MiB) 8, 8, 16, 4, 0, 1, 2, 2 */
        static const uint64_t AT[8] = { 8, 8, 16, 4, 0, 1, 2, 2 };
        CHECK(d.ncolors == 8);
        for (size_t c = 0; c < 8 && d.ncolors == 8; c++) {
            CHECK(strcmp(gtm_s(&d, d.rank[c]), gma_cat_names[c]) == 0 && gtm_color(&d, d.rank[c]) == c);
            CHECK(l->at_peak[d.rank[c]] == AT[c] << 20);
        }
    }
    char *svg = written(&d, 0), *html = written(&d, 1);
    CHECK(svg && strstr(svg, "stacked in category order, coloured by category"));
    /* the columns of the page (doc strings) and the keys of "colour by", stacked by category */
    CHECK(html && strstr(html, "\"keys\":[[\"category\",\"own\"],[\"category\",\"cat\"],[\"module\",\"mod\"],"
                               "[\"op\",\"op\"],[\"line\",\"ln\"],[\"kernel\",\"kn\"],[\"range\",\"rn\"]],\"stack\":1,"));
    CHECK(html && strstr(html, "\"cat\":[") && strstr(html, "\"mod\":[") && strstr(html, "\"ln\":[0,0,"));
    free(svg);
    free(html);
    gtm_free(&d);
    gma_replay_free(&g_r);
}

/* sc_modules (sc_modules.c): each block's module (innermost module range,
 * "(backward)" for autograd's), op (innermost op range) and source line. */
static void test_module_cols(const char *path)
{
    gtm_doc d;
    if (sc_modules(path) != 0 || model_of_cats(path, &d) != 0) {
        CHECK(!"modules trace written and read");
        return;
    }
    const char *F1 = "train.py:12 main", *F2 = "model.py:20 forward", *F3 = "model.py:31 forward", *NO = "(no op)";
    CHECK(d.lanes.len == 1);
    if (d.lanes.len == 1) {
        const gtm_lane *l = &GMA_VEC_AT(&d.lanes, gtm_lane, 0);
        CHECK(l->n == 8);
        /* in allocation order A B C I D E G H; categories as category.c gives them (the Peak line's split) */
        const char *mod[8] = { "M", "M.enc.0", "M.enc.0.fc", "(no module)", "M.head", "(no module)", "M.head (backward)",
                               "M.enc.0.fc (backward)" };
        const char *op[8] = { NO, "aten::mm", "aten::addmm", "aten::zeros", NO, NO, "MmBackward0", NO };
        const char *ln[8] = { F1, F2, F3, F1, F2, F1, NULL, F3 };
        for (size_t i = 0; i < 8 && l->n == 8; i++)
            CHECK(band_is(&d, l, i, gtm_s(&d, l->cat[i]), mod[i], op[i], ln[i]));
        /* at the peak by category (the report's Peak line): gradient 2, temporary 27, other 4 MiB */
        uint32_t g = gtm_str(&d, "gradient"), t = gtm_str(&d, "temporary"), o = gtm_str(&d, "other");
        CHECK(l->at_peak[g] == 2ull << 20 && l->at_peak[t] == 27ull << 20 && l->at_peak[o] == 4ull << 20);
    }
    gtm_free(&d);
    gma_replay_free(&g_r);
}

/* tlb_write_expandable's trace: a mapped range, half of it unmapped. */
static void test_expandable(const char *path)
{
    const uint64_t M = TLB_MIB;
    gtm_doc d;
    if (tlb_write_expandable(path) != 0 || model_of(path, &d) != 0) {
        CHECK(!"expandable trace written and read");
        return;
    }
    CHECK(d.lanes.len == 1);
    if (d.lanes.len == 1) {
        const gtm_lane *l = &GMA_VEC_AT(&d.lanes, gtm_lane, 0);
        const gtm_ctx *S = &l->ctx[GTM_CTX_SEG], *O = &l->ctx[GTM_CTX_OUT];
        CHECK(l->n == 2 && l->peak == 30 * M && l->peak_t == (int64_t)MS(12));
        /* the range 11 to 15 ms, its lower half from 15 ms; both CUDA chunks in it */
        CHECK(S->n == 2 && O->n == 0);
        if (S->n == 2) {
            CHECK(S->b[0].addr == TLB_EX && S->b[0].bytes == 40 * M && S->b[0].t0 == MS(11) && S->b[0].t1 == MS(15));
            CHECK(S->b[1].addr == TLB_EX && S->b[1].bytes == 20 * M && S->b[1].t0 == MS(15) && S->b[1].t1 == GTB_OPEN);
        }
        CHECK(S->at_peak == 40 * M && S->n_at_peak == 1 && O->at_peak == 0 && l->ctx_top == 40 * M);
        CHECK(l->fw_reserved == 40 * M && l->fw_outside == 0);
    }
    gtm_free(&d);
    gma_replay_free(&g_r);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gma_test_timeline TRACE_PATH (the bridge traces are written there and to TRACE_PATH.ex)\n");
        return 2;
    }
    char ex[4200], tr[4200], md[4200];
    snprintf(ex, sizeof(ex), "%s.ex", argv[1]);
    snprintf(tr, sizeof(tr), "%s.train", argv[1]);
    snprintf(md, sizeof(md), "%s.modules", argv[1]);
    test_bands();
    test_peak();
    test_summary();
    test_merge();
    test_merge_live();
    test_match();
    test_bridge(argv[1]);
    test_expandable(ex);
    test_train_cols(tr);
    test_module_cols(md);
    return tc_result("gma_test_timeline");
}
