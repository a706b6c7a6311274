/* The timeline's model: lanes, owners, colours, merging (see tl_model.h). */
#include "tl_model.h"
#include "spill.h"

#include <stdlib.h>
#include <string.h>

void gtm_init(gtm_doc *d, const char *by)
{
    memset(d, 0, sizeof(*d));
    gma_vec_init(&d->lanes, sizeof(gtm_lane));
    gma_vec_init(&d->kernels, sizeof(uint32_t));
    d->by = by;
    gtm_str(d, "");
}

static void lane_free(gtm_lane *l)
{
    gma_big_free(l->b);
    for (int c = 0; c < GTM_CTX_N; c++)
        gma_big_free(l->ctx[c].b);
    gma_big_free(l->own);
    gma_big_free(l->kn);
    gma_big_free(l->rn);
    gma_big_free(l->keep);
    gma_big_free(l->cat);
    gma_big_free(l->mod);
    gma_big_free(l->op);
    gma_big_free(l->ln);
    free(l->at_peak);
    free(l->split);
    free(l->sum_t0);
    free(l->sum_t1);
    free(l->sum_lo);
    free(l->sum_hi);
    free(l->sum_end);
    gma_vec_free(&l->steps);
    gma_vec_free(&l->windows);
    gma_vec_free(&l->tags);
    gma_vec_free(&l->drv_t);
    gma_vec_free(&l->drv_v);
}

void gtm_free(gtm_doc *d)
{
    for (size_t i = 0; i < d->lanes.len; i++)
        lane_free(&GMA_VEC_AT(&d->lanes, gtm_lane, i));
    gma_vec_free(&d->lanes);
    for (size_t i = 0; i < d->nstr; i++)
        free(d->str[i]);
    free(d->str);
    gma_map_free(&d->str_of);
    free(d->rank);
    free(d->color_of);
    free(d->label);
    gma_vec_free(&d->kernels);
    memset(d, 0, sizeof(*d));
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

uint32_t gtm_str(gtm_doc *d, const char *s)
{
    uint64_t h = fnv(s);
    uint32_t i;
    /* a colliding hash probes on with the next key */
    for (; gma_map_get(&d->str_of, h, &i); h++)
        if (strcmp(d->str[i], s) == 0)
            return i;
    if (d->nstr == d->str_cap) {
        size_t nc = d->str_cap ? d->str_cap * 2 : 256;
        char **ns = realloc(d->str, nc * sizeof(*ns));
        if (!ns) {
            d->err = 1;
            return 0;
        }
        d->str = ns;
        d->str_cap = nc;
    }
    char *c = strdup(s);
    if (!c || gma_map_put(&d->str_of, h, (uint32_t)d->nstr) != 0) {
        free(c);
        d->err = 1;
        return 0;
    }
    d->str[d->nstr] = c;
    return (uint32_t)d->nstr++;
}

gtm_lane *gtm_lane_new(gtm_doc *d)
{
    gtm_lane *l = gma_vec_push(&d->lanes);
    if (!l) {
        d->err = 1;
        return NULL;
    }
    gma_vec_init(&l->steps, sizeof(gtm_mark));
    gma_vec_init(&l->windows, sizeof(gtm_mark));
    gma_vec_init(&l->tags, sizeof(gtm_mark));
    gma_vec_init(&l->drv_t, sizeof(int64_t));
    gma_vec_init(&l->drv_v, sizeof(uint64_t));
    return l;
}

static int band_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const gtb_band *x = a, *y = b;
    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The bands of one device, times made relative to origin, sorted by
 * (t0, seq); NULL on OOM (*n: how many). Sorted in runs on disk and merged
 * (every band a trace holds would not fit in memory twice). */
static gtb_band *device_bands(const gtb_set *s, unsigned device, uint64_t origin, size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++, gma_big_tick())
        k += s->b[i].device == device;
    gtb_band *out = gma_big_alloc((k ? k : 1) * sizeof(*out));
    gma_xsort x;
    gma_xsort_open(&x, sizeof(gtb_band), gma_big_run(sizeof(gtb_band)), band_cmp, NULL);
    int err = !out;
    for (size_t i = 0; i < s->n && !err; i++, gma_big_tick()) {
        if (s->b[i].device != device)
            continue;
        gtb_band b = s->b[i];
        b.t0 -= origin;
        if (b.t1 != GTB_OPEN)
            b.t1 -= origin;
        /* times relative to the origin are compared as signed values: a
         * band before the origin (clock skew) sorts first either way */
        b.t0 ^= 1ull << 63;
        err = gma_xsort_add(&x, &b) != 0;
    }
    err = err || gma_xsort_begin(&x) != 0;
    const gtb_band *q;
    k = 0;
    while (!err && (q = gma_xsort_next(&x))) {
        out[k] = *q;
        out[k++].t0 ^= 1ull << 63;
        gma_big_tick();
    }
    err = err || x.err;
    gma_xsort_close(&x);
    if (err) {
        gma_big_free(out);
        return NULL;
    }
    *n = k;
    return out;
}

int gtm_lane_bands(gtm_lane *l, const gtb_set *s, unsigned device, uint64_t origin)
{
    size_t n = 0;
    l->b = device_bands(s, device, origin, &n);
    l->own = gma_big_alloc((n ? n : 1) * sizeof(*l->own));
    l->kn = gma_big_alloc((n ? n : 1) * sizeof(*l->kn));
    l->rn = gma_big_alloc((n ? n : 1) * sizeof(*l->rn));
    l->keep = gma_big_alloc(n ? n : 1);
    if (!l->b || !l->own || !l->kn || !l->rn || !l->keep)
        return -1;
    l->n = n;
    l->device = device;
    l->left_out = s->left_out;
    l->left_out_bytes = s->left_out_bytes;
    return 0;
}

/* Relative times as signed values; an open band ends after every time. */
static int64_t t_end(const gtb_band *b) { return b->t1 == GTB_OPEN ? INT64_MAX : (int64_t)b->t1; }

static int addr_cmp(const void *a, const void *b)
{
    const gtb_band *x = *(const gtb_band *const *)a, *y = *(const gtb_band *const *)b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return (int64_t)x->t0 < (int64_t)y->t0 ? -1 : (int64_t)x->t0 > (int64_t)y->t0;
}

/* Marks in is_seg[] the CUDA bands that are the allocator's reserve: they
 * lie within a segment band (a segment, or with expandable segments a
 * mapped range, which CUDA sees as one allocation per chunk) while it
 * lives. */
static int match_segments(const gtb_band *seg, size_t ns, const gtb_band *cu, size_t nc, unsigned char *is_seg)
{
    const gtb_band **by = malloc((ns ? ns : 1) * sizeof(*by));
    if (!by)
        return -1;
    uint64_t widest = 0;
    for (size_t i = 0; i < ns; i++) {
        by[i] = &seg[i];
        if (seg[i].bytes > widest)
            widest = seg[i].bytes;
    }
    qsort(by, ns, sizeof(*by), addr_cmp);
    for (size_t i = 0; i < nc; i++) {
        size_t lo = 0, hi = ns;
        while (lo < hi) { /* the first segment above cu[i]'s address */
            size_t mid = lo + (hi - lo) / 2;
            if (by[mid]->addr <= cu[i].addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        /* back over the segments that begin at or below it, as far as the widest reaches */
        for (size_t k = lo; k-- > 0 && cu[i].addr - by[k]->addr < widest;) {
            const gtb_band *g = by[k];
            if (cu[i].addr + cu[i].bytes <= g->addr + g->bytes && (int64_t)cu[i].t0 < t_end(g) &&
                (int64_t)g->t0 < t_end(&cu[i])) {
                is_seg[i] = 1;
                break;
            }
        }
    }
    free(by);
    return 0;
}

typedef struct cev {
    int64_t t;
    int64_t d;
} cev;

static int cev_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const cev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->d > y->d) - (x->d < y->d); /* frees first */
}

/* The highest level of the framework layers together. */
static int ctx_top(gtm_lane *l)
{
    gma_xsort x;
    gma_xsort_open(&x, sizeof(cev), gma_big_run(sizeof(cev)), cev_cmp, NULL);
    int err = 0;
    for (int c = 0; c < GTM_CTX_N; c++)
        for (size_t i = 0; i < l->ctx[c].n && !err; i++, gma_big_tick()) {
            const gtb_band *b = &l->ctx[c].b[i];
            cev e = { (int64_t)b->t0, (int64_t)b->bytes };
            err = gma_xsort_add(&x, &e) != 0;
            e = (cev){ (int64_t)b->t1, -(int64_t)b->bytes };
            err = err || (b->t1 != GTB_OPEN && gma_xsort_add(&x, &e) != 0);
        }
    err = err || gma_xsort_begin(&x) != 0;
    int64_t lvl = 0;
    l->ctx_top = 0;
    const cev *e;
    while (!err && (e = gma_xsort_next(&x))) {
        lvl += e->d;
        if (lvl > 0 && (uint64_t)lvl > l->ctx_top)
            l->ctx_top = (uint64_t)lvl;
    }
    err = err || x.err;
    gma_xsort_close(&x);
    return err ? -1 : 0;
}

int gtm_lane_ctx(gtm_lane *l, const gtb_set *seg, const gtb_set *cuda, unsigned device, uint64_t origin)
{
    size_t ns = 0, nc = 0;
    gtm_ctx *S = &l->ctx[GTM_CTX_SEG], *O = &l->ctx[GTM_CTX_OUT];
    S->b = device_bands(seg, device, origin, &ns);
    gtb_band *cu = device_bands(cuda, device, origin, &nc);
    unsigned char *is_seg = calloc(nc ? nc : 1, 1);
    if (!S->b || !cu || !is_seg || match_segments(S->b, ns, cu, nc, is_seg) != 0) {
        gma_big_free(cu);
        free(is_seg);
        return -1;
    }
    S->n = ns;
    size_t k = 0;
    for (size_t i = 0; i < nc; i++, gma_big_tick())
        if (!is_seg[i])
            cu[k++] = cu[i];
    free(is_seg);
    O->b = cu;
    O->n = k;
    l->fw = 1;
    return ctx_top(l);
}

int gtm_lane_fw_cols(gtm_lane *l, int cats)
{
    size_t n = l->n ? l->n : 1;
    l->cat = cats ? gma_big_alloc(n * sizeof(*l->cat)) : NULL;
    l->mod = gma_big_alloc(n * sizeof(*l->mod));
    l->op = gma_big_alloc(n * sizeof(*l->op));
    l->ln = gma_big_alloc(n * sizeof(*l->ln));
    return (l->cat || !cats) && l->mod && l->op && l->ln ? 0 : -1;
}

static int live_at(const gtm_lane *l, size_t i)
{
    return i < l->peak_pos && (l->b[i].t1 == GTB_OPEN || (int64_t)l->b[i].t1 > l->peak_t);
}

int gtm_lane_at_peak(gtm_doc *d, gtm_lane *l)
{
    l->at_peak_cap = d->nstr;
    l->at_peak = calloc(d->nstr ? d->nstr : 1, sizeof(*l->at_peak));
    if (!l->at_peak)
        return -1;
    if (!l->has_peak)
        return 0;
    /* the bands allocated by the peak: binary search on t0 */
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((int64_t)l->b[mid].t0 <= l->peak_t)
            lo = mid + 1;
        else
            hi = mid;
    }
    l->peak_pos = lo;
    for (size_t i = 0; i < lo; i++, gma_big_tick())
        if (live_at(l, i))
            l->at_peak[l->own[i]] += l->b[i].bytes;
    for (int c = 0; c < GTM_CTX_N; c++) {
        gtm_ctx *x = &l->ctx[c];
        x->at_peak = 0;
        x->n_at_peak = 0;
        for (size_t i = 0; i < x->n && (int64_t)x->b[i].t0 <= l->peak_t; i++)
            if (t_end(&x->b[i]) > l->peak_t) {
                x->at_peak += x->b[i].bytes;
                x->n_at_peak++;
            }
    }
    return 0;
}

size_t gtm_color(const gtm_doc *d, uint32_t owner)
{
    return d->color_of && owner < d->nstr ? d->color_of[owner] : d->ncolors;
}

typedef struct owner_score {
    uint32_t s;
    uint64_t at_peak, total;
    const char *name;
} owner_score;

static int score_cmp(const void *a, const void *b)
{
    const owner_score *x = a, *y = b;
    if (x->at_peak != y->at_peak)
        return x->at_peak > y->at_peak ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Owners ranked by their largest bytes at a lane's peak, then by bytes
 * allocated; the first ntop coloured. */
static int rank_owners(gtm_doc *d, size_t ntop)
{
    owner_score *sc = calloc(d->nstr ? d->nstr : 1, sizeof(*sc));
    d->color_of = malloc((d->nstr ? d->nstr : 1) * sizeof(*d->color_of));
    d->rank = malloc((d->nstr ? d->nstr : 1) * sizeof(*d->rank));
    if (!sc || !d->color_of || !d->rank) {
        free(sc);
        return -1;
    }
    unsigned char *used = calloc(d->nstr ? d->nstr : 1, 1);
    if (!used) {
        free(sc);
        return -1;
    }
    for (size_t k = 0; k < d->lanes.len; k++) {
        const gtm_lane *l = &GMA_VEC_AT(&d->lanes, gtm_lane, k);
        for (size_t i = 0; i < l->n; i++, gma_big_tick()) {
            used[l->own[i]] = 1;
            sc[l->own[i]].total += l->b[i].bytes;
        }
        for (size_t o = 0; o < l->at_peak_cap; o++)
            if (l->at_peak[o] > sc[o].at_peak)
                sc[o].at_peak = l->at_peak[o];
    }
    size_t n = 0;
    for (size_t o = 0; o < d->nstr; o++)
        if (used[o]) {
            sc[o].s = (uint32_t)o;
            sc[o].name = d->str[o];
            sc[n++] = sc[o];
        }
    free(used);
    /* the fixed owners first, in their order: a rank below every score */
    size_t nf = 0;
    for (size_t f = 0; f < d->nfixed; f++)
        for (size_t i = nf; i < n; i++)
            if (sc[i].s == d->fixed[f]) {
                owner_score t = sc[nf];
                sc[nf++] = sc[i];
                sc[i] = t;
                break;
            }
    qsort(sc + nf, n - nf, sizeof(*sc), score_cmp);
    if (ntop > GTM_TOP_MAX)
        ntop = GTM_TOP_MAX;
    d->ncolors = n < ntop ? n : ntop;
    for (size_t o = 0; o < d->nstr; o++)
        d->color_of[o] = (uint32_t)d->ncolors;
    for (size_t i = 0; i < n; i++) {
        d->rank[i] = sc[i].s;
        if (i < d->ncolors)
            d->color_of[sc[i].s] = (uint32_t)i;
    }
    d->nrank = n;
    free(sc);
    return 0;
}

typedef struct bsize {
    uint64_t bytes, seq;
    uint32_t i;
} bsize;

static int size_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const bsize *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Keeps the GTM_KEEP largest bands and the GTM_KEEP_PEAK largest of the
 * others live at the peak; merges the rest, so a page holds at most
 * GTM_KEEP + GTM_KEEP_PEAK bands per lane. */
static int merge_lane(gtm_lane *l)
{
    if (l->n <= GTM_MERGE_AT) {
        memset(l->keep, 1, l->n);
        l->nkeep = l->n;
        return 0;
    }
    /* the bands by size, sorted in runs on disk and merged */
    gma_xsort x;
    gma_xsort_open(&x, sizeof(bsize), gma_big_run(sizeof(bsize)), size_cmp, NULL);
    int err = 0;
    for (size_t i = 0; i < l->n && !err; i++, gma_big_tick()) {
        bsize e = (bsize){ l->b[i].bytes, l->b[i].seq, (uint32_t)i };
        err = gma_xsort_add(&x, &e) != 0;
    }
    err = err || gma_xsort_begin(&x) != 0;
    size_t at_peak = 0, i = 0;
    const bsize *q;
    for (; !err && (q = gma_xsort_next(&x)); i++, gma_big_tick()) {
        int peak = i >= GTM_KEEP && at_peak < GTM_KEEP_PEAK && live_at(l, q->i);
        at_peak += (size_t)peak;
        l->keep[q->i] = i < GTM_KEEP || peak;
    }
    err = err || x.err;
    gma_xsort_close(&x);
    if (err)
        return -1;
    for (size_t i = 0; i < l->n; i++, gma_big_tick()) {
        if (l->keep[i]) {
            l->nkeep++;
            continue;
        }
        l->nmerged++;
        l->merged_bytes += l->b[i].bytes;
        if (l->b[i].bytes > l->merge_max)
            l->merge_max = l->b[i].bytes;
    }
    return 0;
}

static int gap_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y); /* largest first */
}

/* Region 1 of a lane's summary: its opening view; 0 the rest. */
static int region(const gtm_lane *l, int64_t t) { return t >= l->view0 && t <= l->view1; }

/* The k-th largest gap after a distinct time of region r in ev (sorted, nd
 * times) in *thr, and in *ties how many gaps equal to it are among the k
 * largest. */
static int gap_threshold(const gtm_lane *l, const cev *ev, size_t ne, size_t nd, int r, size_t k, int64_t *thr,
                         size_t *ties)
{
    (void)nd;
    /* the gaps, largest first: sorted in runs on disk and merged */
    gma_xsort x;
    gma_xsort_open(&x, sizeof(int64_t), gma_big_run(sizeof(int64_t)), gap_cmp, NULL);
    size_t ng = 0;
    int err = 0;
    for (size_t i = 1; i < ne && !err; i++, gma_big_tick())
        if (ev[i].t != ev[i - 1].t && region(l, ev[i - 1].t) == r) {
            int64_t gap = ev[i].t - ev[i - 1].t;
            err = gma_xsort_add(&x, &gap) != 0;
            ng++;
        }
    if (k > ng)
        k = ng;
    int64_t *g = k ? malloc(k * sizeof(*g)) : NULL;
    err = err || (k && !g) || gma_xsort_begin(&x) != 0;
    const int64_t *q;
    for (size_t i = 0; !err && i < k && (q = gma_xsort_next(&x)); i++)
        g[i] = *q;
    err = err || x.err;
    gma_xsort_close(&x);
    if (err) {
        free(g);
        return -1;
    }
    if (!k) {
        *thr = INT64_MAX;
        *ties = 0;
        return 0;
    }
    *thr = g[k - 1];
    size_t above = 0;
    while (above < k && g[above] > *thr)
        above++;
    *ties = k - above;
    free(g);
    return 0;
}

int gtm_lane_summary(gtm_lane *l, size_t max)
{
    if (!max)
        max = GTM_SUM_MAX;
    free(l->sum_t0);
    free(l->sum_t1);
    free(l->sum_lo);
    free(l->sum_hi);
    free(l->sum_end);
    l->sum_t0 = l->sum_t1 = NULL;
    l->sum_lo = l->sum_hi = l->sum_end = NULL;
    l->nsum = 0;
    size_t ne = 0;
    cev *ev = gma_big_alloc((2 * l->n + 1) * sizeof(*ev));
    if (!ev)
        return -1;
    /* sorted in runs on disk, merged into ev */
    gma_xsort x;
    gma_xsort_open(&x, sizeof(cev), gma_big_run(sizeof(cev)), cev_cmp, NULL);
    int err = 0;
    for (size_t i = 0; i < l->n && !err; i++, gma_big_tick()) {
        cev e = { (int64_t)l->b[i].t0, (int64_t)l->b[i].bytes };
        err = gma_xsort_add(&x, &e) != 0;
        e = (cev){ (int64_t)l->b[i].t1, -(int64_t)l->b[i].bytes };
        err = err || (l->b[i].t1 != GTB_OPEN && gma_xsort_add(&x, &e) != 0);
    }
    err = err || gma_xsort_begin(&x) != 0;
    const cev *q;
    while (!err && (q = gma_xsort_next(&x))) {
        ev[ne++] = *q;
        gma_big_tick();
    }
    err = err || x.err;
    gma_xsort_close(&x);
    if (err) {
        gma_big_free(ev);
        return -1;
    }
    /* the level after each distinct time: only those are ever live */
    size_t nd = 0;
    for (size_t i = 0; i < ne; i++, gma_big_tick())
        nd += !i || ev[i].t != ev[i - 1].t;
    if (max < 2)
        max = 2;
    /* Where every time fits, a bucket each (exact everywhere). Else the
     * opening view (region 1) and the rest (0) share the buckets, a region
     * with fewer times than its half giving the other the rest; in each,
     * half the buckets are cut by count (per times each) and the rest at the
     * largest gaps between times, so that idle stretches stay exact. Spares:
     * the peak's cut, and the cuts where the regions meet. */
    size_t per[2] = { 1, 1 }, kg[2] = { 0, 0 }, ties[2] = { 0, 0 }, nr[2] = { 0, 0 }, cap = 4;
    int64_t thr[2] = { INT64_MAX, INT64_MAX };
    for (size_t i = 0; i < ne; i++, gma_big_tick())
        if (!i || ev[i].t != ev[i - 1].t)
            nr[region(l, ev[i].t)]++;
    if (nd >= max) {
        size_t B = max - (nr[0] && nr[1] ? 3 : 1), half = B / 2, bud[2];
        bud[1] = nr[1] <= half ? nr[1] : nr[0] <= B - half ? B - nr[0] : half;
        bud[0] = B - bud[1];
        for (int r = 0; r < 2; r++) {
            if (nr[r] <= bud[r])
                continue;
            size_t kc = bud[r] / 2 ? bud[r] / 2 : 1;
            per[r] = (nr[r] + kc - 1) / kc;
            kg[r] = bud[r] > kc ? bud[r] - kc : 0;
            if (kg[r] && gap_threshold(l, ev, ne, nd, r, kg[r], &thr[r], &ties[r]) != 0) {
                gma_big_free(ev);
                return -1;
            }
        }
    }
    for (int r = 0; r < 2; r++)
        cap += nr[r] / per[r] + kg[r] + 2;
    l->sum_t0 = malloc(cap * sizeof(*l->sum_t0));
    l->sum_t1 = malloc(cap * sizeof(*l->sum_t1));
    l->sum_lo = malloc(cap * sizeof(*l->sum_lo));
    l->sum_hi = malloc(cap * sizeof(*l->sum_hi));
    l->sum_end = malloc(cap * sizeof(*l->sum_end));
    if (!l->sum_t0 || !l->sum_t1 || !l->sum_lo || !l->sum_hi || !l->sum_end) {
        gma_big_free(ev);
        return -1;
    }
    int64_t lvl = 0;
    size_t nb = 0, in = 0; /* distinct times in the open bucket */
    for (size_t i = 0; i < ne;) {
        int64_t t = ev[i].t;
        for (; i < ne && ev[i].t == t; i++, gma_big_tick())
            lvl += ev[i].d;
        uint64_t v = lvl > 0 ? (uint64_t)lvl : 0;
        if (!in) {
            l->sum_t0[nb] = t;
            l->sum_lo[nb] = l->sum_hi[nb] = v;
        }
        in++;
        l->sum_t1[nb] = t;
        l->sum_end[nb] = v;
        if (v < l->sum_lo[nb])
            l->sum_lo[nb] = v;
        if (v > l->sum_hi[nb])
            l->sum_hi[nb] = v;
        /* a bucket ends after per times, and at the peak's time: its level is exact there */
        int at_peak = l->has_peak && t <= l->peak_t && (i == ne || ev[i].t > l->peak_t);
        int r = region(l, t);
        int64_t gap = i < ne ? ev[i].t - t : 0;
        int at_gap = gap > thr[r] || (gap == thr[r] && ties[r] && ties[r]--);
        int at_edge = i < ne && region(l, ev[i].t) != r;
        if (in == per[r] || at_peak || at_gap || at_edge || i == ne) {
            nb++;
            in = 0;
        }
    }
    gma_big_free(ev);
    l->nsum = nb;
    l->sum_per = per[0] > per[1] ? per[0] : per[1];
    return 0;
}

typedef struct gev {
    int64_t t;
    int64_t d;
    uint32_t g;
} gev;

static int gev_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const gev *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

void gtm_fixed_owners(gtm_doc *d, const char *by, const char *const *names, size_t n)
{
    d->by = by;
    d->nfixed = 0;
    for (size_t i = 0; i < n && i < sizeof(d->fixed) / sizeof(d->fixed[0]); i++)
        d->fixed[d->nfixed++] = gtm_str(d, names[i]);
    d->split = 1;
}

int gtm_lane_split(const gtm_doc *d, gtm_lane *l)
{
    free(l->split);
    l->split = NULL;
    if (!l->nmerged || !l->nsum)
        return 0;
    size_t G = d->ncolors + 1;
    l->split = calloc(l->nsum * G, sizeof(*l->split));
    uint64_t *lvl = calloc(G, sizeof(*lvl));
    if (!l->split || !lvl) {
        free(lvl);
        return -1;
    }
    /* the merged bands' events in time: sorted in runs on disk, merged */
    gma_xsort x;
    gma_xsort_open(&x, sizeof(gev), gma_big_run(sizeof(gev)), gev_cmp, NULL);
    int err = 0;
    for (size_t i = 0; i < l->n && !err; i++, gma_big_tick()) {
        if (l->keep[i])
            continue;
        uint32_t g = (uint32_t)gtm_color(d, l->own[i]);
        gev e = (gev){ (int64_t)l->b[i].t0, (int64_t)l->b[i].bytes, g };
        err = gma_xsort_add(&x, &e) != 0;
        e = (gev){ (int64_t)l->b[i].t1, -(int64_t)l->b[i].bytes, g };
        err = err || (l->b[i].t1 != GTB_OPEN && gma_xsort_add(&x, &e) != 0);
    }
    err = err || gma_xsort_begin(&x) != 0;
    /* the levels after every event of a time up to the bucket's last: as
     * the summary, which counts each time whole */
    const gev *e = err ? NULL : gma_xsort_next(&x);
    for (size_t k = 0; k < l->nsum && !err; k++) {
        for (; e && e->t <= l->sum_t1[k]; e = gma_xsort_next(&x))
            lvl[e->g] = (uint64_t)((int64_t)lvl[e->g] + e->d);
        memcpy(&l->split[k * G], lvl, G * sizeof(*lvl));
    }
    err = err || x.err;
    gma_xsort_close(&x);
    free(lvl);
    return err ? -1 : 0;
}

int gtm_finish(gtm_doc *d, size_t ntop)
{
    if (d->err || rank_owners(d, ntop) != 0)
        return -1;
    for (size_t k = 0; k < d->lanes.len; k++) {
        gtm_lane *l = &GMA_VEC_AT(&d->lanes, gtm_lane, k);
        if (merge_lane(l) != 0 || gtm_lane_summary(l, 0) != 0 || (d->split && gtm_lane_split(d, l) != 0))
            return -1;
    }
    return 0;
}

typedef struct lab {
    const char *s;
    uint32_t raw;
} lab;

static int lab_cmp(const void *a, const void *b)
{
    const lab *x = a, *y = b;
    int c = strcmp(x->s, y->s);
    return c ? c : (x->raw > y->raw) - (x->raw < y->raw);
}

/* Marks in dup[] the labels shared by several raw names. */
static int find_dups(gtm_doc *d, size_t n, const uint32_t *raw, unsigned char *dup)
{
    lab *v = malloc((n ? n : 1) * sizeof(*v));
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = (lab){ d->str[d->label[raw[i]]], raw[i] };
    qsort(v, n, sizeof(*v), lab_cmp);
    memset(dup, 0, d->nlabel);
    for (size_t i = 1; i < n; i++)
        if (v[i].raw != v[i - 1].raw && strcmp(v[i].s, v[i - 1].s) == 0)
            dup[v[i].raw] = dup[v[i - 1].raw] = 1;
    free(v);
    return 0;
}

int gtm_labels(gtm_doc *d, void (*label)(const char *raw, size_t len, size_t max_len, gma_buf *out), int full)
{
    /* each raw name once (several string ids may carry one name) */
    uint32_t *raw = d->kernels.data;
    size_t nk = 0;
    unsigned char *seen = calloc(d->nstr ? d->nstr : 1, 1);
    if (!seen)
        return -1;
    for (size_t k = 0; k < d->kernels.len; k++)
        if (!seen[raw[k]]) {
            seen[raw[k]] = 1;
            raw[nk++] = raw[k];
        }
    free(seen);
    d->kernels.len = nk;
    d->nlabel = d->nstr;
    free(d->label);
    d->label = malloc((d->nstr ? d->nstr : 1) * sizeof(*d->label));
    unsigned char *dup = malloc(d->nstr ? d->nstr : 1);
    if (!d->label || !dup) {
        free(dup);
        return -1;
    }
    for (size_t i = 0; i < d->nstr; i++)
        d->label[i] = (uint32_t)i;
    gma_buf b = { 0 };
    uint32_t *base = malloc((nk ? nk : 1) * sizeof(*base));
    gma_map seen_base = { 0 }; /* base label -> how many were numbered */
    for (int pass = 0; pass < 3 && !full && base; pass++) {
        if (pass && find_dups(d, nk, raw, dup) != 0)
            break;
        for (size_t k = 0; k < nk; k++)
            base[k] = d->label[raw[k]]; /* equal labels are one doc string */
        for (size_t k = 0; k < nk; k++) {
            uint32_t o = raw[k];
            if (pass && !dup[o])
                continue;
            gma_buf_reset(&b);
            if (pass < 2) {
                label(d->str[o], strlen(d->str[o]), pass ? 110 : 60, &b);
            } else { /* still shared: numbered in the order the names came */
                uint32_t no = 0;
                gma_map_get(&seen_base, base[k], &no);
                if (gma_map_put(&seen_base, base[k], ++no) != 0)
                    d->err = 1;
                gma_buf_puts(&b, d->str[base[k]]);
                if (no > 1)
                    gma_buf_printf(&b, " #%u", no);
            }
            d->label[o] = gtm_str(d, gma_buf_str(&b));
        }
    }
    gma_map_free(&seen_base);
    gma_buf_free(&b);
    free(dup);
    int err = !base || d->err;
    free(base);
    return err ? -1 : 0;
}
