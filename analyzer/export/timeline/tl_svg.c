/*
 * The static timeline picture (OUT.svg): per lane, the stacked bands of the
 * opening view as the page draws them (allocation order, one moment per
 * column: see page.js), as rectangles that run on while a band keeps its
 * place; with merged allocations the lane's live total from its summary
 * as a line (a light range within a bucket of several times), the
 * driver's used memory dashed, windows
 * shaded, steps, tags and the peak marked; the legend below. With the
 * PyTorch bridge's layers, as the page: the reserved segments light behind
 * the tensors, a line on each one's top; memory outside the allocator
 * hatched on top; the scale up to the highest of those and the driver.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spill.h"
#include "tl_write.h"

#define W 1000.0
#define LH 300.0  /* lane height */
#define ML 80.0
#define MR 24.0
#define MT 28.0
#define MB 56.0
#define NC 900    /* columns */
#define TOP 44.0  /* title */

/* Text for an SVG attribute or element: what XML 1.0 admits only. Bytes
 * that are not UTF-8 become U+FFFD (as in every output), and so do the
 * non-characters U+FFFE and U+FFFF; control bytes are left out. */
static void xml(FILE *f, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t l = gma_utf8_len(s + i, n - i);
        if (c == '<') fputs("&lt;", f);
        else if (c == '>') fputs("&gt;", f);
        else if (c == '&') fputs("&amp;", f);
        else if (c == '"') fputs("&quot;", f);
        else if (c < 0x20) (void)0;
        else if (!l || (l == 3 && c == 0xEF && (unsigned char)s[i + 1] == 0xBF && (unsigned char)s[i + 2] >= 0xBE))
            fputs("\xef\xbf\xbd", f);
        else
            fwrite(s + i, 1, l, f);
        i += l ? l : 1;
    }
}

static void fmt_b(char *out, size_t cap, double b)
{
    const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int i = 0;
    while (b >= 1024 && i < 4) {
        b /= 1024;
        i++;
    }
    snprintf(out, cap, "%.4g %s", b, u[i]);
}

/* --diff: a lane's times on the axis of steps (page.js's toU): the start
 * of its k-th distinct step is k (or the step's number), the next one's
 * k + 1, linear in between; the last step lasts as long as the one before. */
typedef struct axis {
    size_t n;              /* points (at least 2) */
    double *kt, *ku;       /* times (ns, shifted) and their units, increasing */
} axis;

static size_t axis_seg(const double *x, size_t n, double v)
{
    size_t k = 0;
    while (k + 2 < n && x[k + 1] <= v)
        k++;
    return k;
}

static double to_u(const axis *a, double t)
{
    size_t k = axis_seg(a->kt, a->n, t);
    return a->ku[k] + (t - a->kt[k]) / (a->kt[k + 1] - a->kt[k]) * (a->ku[k + 1] - a->ku[k]);
}

static double from_u(const axis *a, double u)
{
    size_t k = axis_seg(a->ku, a->n, u);
    return a->kt[k] + (u - a->ku[k]) / (a->ku[k + 1] - a->ku[k]) * (a->kt[k + 1] - a->kt[k]);
}

/* 0, or -1 when the lane has fewer than 2 distinct steps (or no memory). */
static int axis_of(const gtm_lane *l, axis *a)
{
    size_t n = 0, ns = l->steps.len;
    a->kt = malloc((ns + 1) * sizeof(double));
    a->ku = malloc((ns + 1) * sizeof(double));
    if (!a->kt || !a->ku)
        return -1;
    for (size_t i = 0; i < ns; i++) {
        const gtm_mark *m = &GMA_VEC_AT(&l->steps, gtm_mark, i);
        double t = (double)(m->t + l->shift), u = (double)m->no;
        if (n && t <= a->kt[n - 1])
            continue;
        if (n && u <= a->ku[n - 1])
            u = a->ku[n - 1] + 1;
        a->kt[n] = t;
        a->ku[n++] = u;
    }
    if (n < 2)
        return -1;
    double end = (double)(l->t_max + l->shift), next = 2 * a->kt[n - 1] - a->kt[n - 2];
    a->kt[n] = end > next ? end : next;
    a->ku[n] = a->ku[n - 1] + 1;
    a->n = n + 1;
    return 0;
}

typedef struct pane {
    double y0, v0, v1, ymax; /* top, view (ns, or steps on an axis), bytes at the top */
    const axis *ax;          /* NULL: time */
} pane;

static double px_x(const pane *p, double t)
{
    double u = p->ax ? to_u(p->ax, t) : t;
    return ML + (u - p->v0) / (p->v1 - p->v0) * (W - ML - MR);
}
static double px_y(const pane *p, double b) { return p->y0 + LH - MB - b / p->ymax * (LH - MT - MB); }

/* Column c's moment, as page.js's columns(): the last time of the
 * summary's bucket that ends in the column with the most live (the lane's
 * total is exact there), else the column's start; returns how many bands
 * were allocated by then. */
static size_t column_moment(const gtm_lane *l, const pane *p, int c, double *tc)
{
    double span = (p->v1 - p->v0) / NC, ca = p->v0 + c * span, cb = ca + span;
    if (p->ax) {
        ca = from_u(p->ax, ca);
        cb = from_u(p->ax, cb);
    }
    size_t lo = 0, hi = l->nsum;
    while (lo < hi) { /* the first bucket ending in or after the column */
        size_t mid = lo + (hi - lo) / 2;
        if ((double)(l->sum_t1[mid] + l->shift) < ca)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t best = SIZE_MAX;
    for (size_t k = lo; k < l->nsum && (double)(l->sum_t1[k] + l->shift) < cb; k++)
        if (best == SIZE_MAX || l->sum_end[k] > l->sum_end[best])
            best = k;
    *tc = best != SIZE_MAX ? (double)(l->sum_t1[best] + l->shift) : ca;
    lo = 0;
    hi = l->n;
    while (lo < hi) { /* the bands allocated at or before it */
        size_t mid = lo + (hi - lo) / 2;
        if ((double)((int64_t)l->b[mid].t0 + l->shift) <= *tc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One set of stacked bands over the columns: band i is live in column c
 * when allocated by its moment (i < end[c]; end NULL: t0 <= tc[c]) and not
 * yet freed; the live ones stack from base[c] bytes (NULL: 0) in index
 * order, and each band is written as one rectangle per run of columns in
 * which it keeps its place. top (optional) receives each column's level. */
typedef struct stack {
    const gtb_band *b;
    size_t n;
    const unsigned char *keep; /* NULL: every band */
    const uint32_t *own;       /* colour by owner; NULL: fill */
    const char *fill;
    const char *edge;          /* a line on each band's top, NULL none */
    int64_t shift;
} stack;

static void emit_run(FILE *f, const gtm_doc *d, const stack *s, size_t i, double x, double w, double y, double h)
{
    if (h < 0.1)
        return;
    const char *fill = s->own ? gtw_color(d, gtm_color(d, s->own[i])) : s->fill;
    fprintf(f, "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" fill=\"%s\"/>\n", x, y, w, h, fill);
    if (s->edge)
        fprintf(f, "<path d=\"M%.1f %.2fh%.1f\" stroke=\"%s\"/>\n", x, y, w, s->edge);
}

static void stack_runs(FILE *f, const gtm_doc *d, const stack *s, const pane *p, const double *tc, const size_t *endv,
                       const double *basev, double *top)
{
    size_t n = s->n ? s->n : 1, nk = 0;
    /* per band drawn (by its place in kept): the run it is in */
    int *run_c = NULL;
    double *run_y = NULL, *run_h = NULL;
    size_t *kept = gma_big_alloc(n * sizeof(*kept));
    if (!kept)
        goto out;
    for (size_t i = 0; i < s->n; i++, gma_big_tick())
        if (!s->keep || s->keep[i])
            kept[nk++] = i;
    if (s->own && d->nfixed) { /* the categories stack in their colours' order (stable) */
        size_t m = 0;
        for (size_t g = 0; g <= d->ncolors; g++)
            for (size_t i = 0; i < s->n; i++, gma_big_tick())
                if ((!s->keep || s->keep[i]) && gtm_color(d, s->own[i]) == g)
                    kept[m++] = i;
    }
    run_c = malloc((nk ? nk : 1) * sizeof(int));
    run_y = malloc((nk ? nk : 1) * sizeof(double));
    run_h = malloc((nk ? nk : 1) * sizeof(double));
    if (!run_c || !run_y || !run_h)
        goto out;
    for (size_t k = 0; k < nk; k++)
        run_c[k] = -1;
    double cw = (W - ML - MR) / NC, scale = (LH - MT - MB) / p->ymax, y0 = p->y0 + LH - MB;
    size_t pos = 0;
    for (int c = 0; c <= NC; c++) {
        size_t end = 0;
        if (c < NC && endv)
            end = endv[c];
        else if (c < NC) {
            while (pos < s->n && (double)((int64_t)s->b[pos].t0 + s->shift) <= tc[c])
                pos++, gma_big_tick();
            end = pos;
        }
        double acc = c < NC && basev ? basev[c] : 0;
        for (size_t k = 0; k < nk; k++, gma_big_tick()) {
            size_t i = kept[k];
            int live = c < NC && i < end && (s->b[i].t1 == GTB_OPEN || (double)((int64_t)s->b[i].t1 + s->shift) > tc[c]);
            double y = y0 - (acc + (live ? (double)s->b[i].bytes : 0)) * scale;
            double h = live ? (double)s->b[i].bytes * scale : 0;
            if (run_c[k] >= 0 && (!live || fabs(y - run_y[k]) > 0.05)) {
                emit_run(f, d, s, i, ML + run_c[k] * cw, (c - run_c[k]) * cw + 0.3, run_y[k], run_h[k]);
                run_c[k] = -1;
            }
            if (live && run_c[k] < 0) {
                run_c[k] = c;
                run_y[k] = y;
                run_h[k] = h;
            }
            if (live)
                acc += (double)s->b[i].bytes;
        }
        if (top && c < NC)
            top[c] = acc;
    }
out:
    gma_big_free(kept);
    free(run_c);
    free(run_y);
    free(run_h);
}

#define SEG_FILL "#c6dbef"
#define SEG_EDGE "#3182bd"
#define OUT_FILL "url(#gm-hatch)"

/* The tensors (or allocations) coloured by owner; with the bridge's layers
 * the reserved segments behind them and the memory outside the allocator
 * hatched on the higher of the two. */
static void lane_bands(FILE *f, const gtm_doc *d, const gtm_lane *l, const pane *p)
{
    double *tc = calloc(NC, sizeof(*tc)), *seg_top = calloc(NC, sizeof(double)), *top = calloc(NC, sizeof(double));
    size_t *end = calloc(NC, sizeof(*end));
    if (!tc || !seg_top || !top || !end)
        goto out;
    for (int c = 0; c < NC; c++)
        end[c] = column_moment(l, p, c, &tc[c]);
    if (l->fw) {
        stack seg = { l->ctx[GTM_CTX_SEG].b, l->ctx[GTM_CTX_SEG].n, NULL, NULL, SEG_FILL, SEG_EDGE, l->shift };
        stack_runs(f, d, &seg, p, tc, NULL, NULL, seg_top);
    }
    stack own = { l->b, l->n, l->keep, l->own, NULL, NULL, l->shift };
    stack_runs(f, d, &own, p, tc, end, NULL, top);
    if (l->fw) {
        for (int c = 0; c < NC; c++)
            top[c] = top[c] > seg_top[c] ? top[c] : seg_top[c];
        stack out = { l->ctx[GTM_CTX_OUT].b, l->ctx[GTM_CTX_OUT].n, NULL, NULL, OUT_FILL, NULL, l->shift };
        stack_runs(f, d, &out, p, tc, NULL, top, NULL);
    }
out:
    free(tc);
    free(seg_top);
    free(top);
    free(end);
}

/* With merged allocations, the lane's live total from its summary
 * (tl_model.h) above the bands: a line at each bucket's end level until the
 * next bucket (exact there), and within a bucket of several times a light
 * range from its lowest to its highest level. */
static void lane_merged(FILE *f, const gtm_doc *d, const gtm_lane *l, const pane *p)
{
    (void)d;
    if (!l->nmerged || !l->nsum)
        return;
    fputs("<path fill=\"#f4a582\" fill-opacity=\"0.6\" d=\"", f);
    for (size_t k = 0; k < l->nsum; k++) {
        double x0 = px_x(p, (double)(l->sum_t0[k] + l->shift)), x1 = px_x(p, (double)(l->sum_t1[k] + l->shift));
        x0 = x0 < ML ? ML : x0;
        x1 = x1 > W - MR ? W - MR : x1;
        if (x1 > x0 && l->sum_hi[k] > l->sum_lo[k])
            fprintf(f, "M%.1f %.1fH%.1fV%.1fH%.1fz", x0, px_y(p, (double)l->sum_lo[k]), x1, px_y(p, (double)l->sum_hi[k]), x0);
    }
    fputs("\"/>\n<path fill=\"none\" stroke=\"#525252\" stroke-width=\"1\" d=\"", f);
    for (size_t k = 0; k < l->nsum; k++) {
        double x0 = px_x(p, (double)(l->sum_t1[k] + l->shift));
        double x1 = px_x(p, (double)((k + 1 < l->nsum ? l->sum_t0[k + 1] : l->t_max) + l->shift));
        x0 = x0 < ML ? ML : x0;
        x1 = x1 > W - MR ? W - MR : x1;
        if (x1 > x0)
            fprintf(f, "M%.1f %.1fH%.1f", x0, px_y(p, (double)l->sum_end[k]), x1);
    }
    fputs("\"/>\n", f);
}

static void lane_axes(FILE *f, const gtm_doc *d, const gtm_lane *l, const pane *p)
{
    char b[64];
    double y1 = p->y0 + LH - MB;
    /* ticks on round numbers of a 1024-based unit */
    double unit = 1;
    while (unit < 1099511627776.0 && p->ymax / unit >= 1536)
        unit *= 1024;
    double ys = gma_nice_step(p->ymax / unit, 5) * unit;
    for (int i = 0; i <= 64 && ys * i <= p->ymax; i++) {
        fmt_b(b, sizeof(b), ys * i);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                ML, px_y(p, ys * i), W - MR, px_y(p, ys * i), ML - 6, px_y(p, ys * i) + 4, b);
    }
    double sc = p->ax ? 1 : 1e6; /* ticks in ms, or in steps */
    double span = (p->v1 - p->v0) / sc, xs = gma_nice_step(span, 8), first = ceil(p->v0 / sc / xs) * xs;
    for (int i = 0; i <= 64; i++) {
        double v = first + xs * i, x = ML + (v * sc - p->v0) / (p->v1 - p->v0) * (W - ML - MR);
        if (x > W - MR)
            break;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                x, y1, x, y1 + 5, x, y1 + 17, v);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", (ML + W - MR) / 2, y1 + 30,
            p->ax ? "steps (each lane's steps stretched to one unit: the lanes line up step by step)" : "time since trace start (ms)");
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", ML, y1, W - MR, y1);
    double last = -1e9;
    for (size_t i = 0; i < l->steps.len; i++) {
        const gtm_mark *m = &GMA_VEC_AT(&l->steps, gtm_mark, i);
        double x = px_x(p, (double)(m->t + l->shift));
        if (x < ML || x > W - MR)
            continue;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" stroke-dasharray=\"2,3\"/>\n", x, p->y0 + MT, x, y1);
        if (x - last >= 56) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\" text-anchor=\"middle\">step %llu</text>\n", x, p->y0 + MT - 5,
                    (unsigned long long)m->no);
            last = x;
        }
    }
    last = -1e9;
    for (size_t i = 0; i < l->tags.len && i < 500; i++) {
        const gtm_mark *m = &GMA_VEC_AT(&l->tags, gtm_mark, i);
        double x = px_x(p, (double)(m->t + l->shift));
        if (x < ML || x > W - MR)
            continue;
        fprintf(f, "<path d=\"M%.1f %.1f l-4 8 l8 0 z\" fill=\"#444\"/>\n", x, y1 + 36);
        if (x - last < 60)
            continue;
        last = x;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#444\" font-size=\"9\">", x + 5, y1 + 44);
        xml(f, gtm_s(d, m->name));
        fputs("</text>\n", f);
    }
}

static void lane_top(FILE *f, const gtm_doc *d, const gtm_lane *l, const pane *p)
{
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP];
    if (l->drv_t.len) {
        fputs("<polyline fill=\"none\" stroke=\"#333\" stroke-dasharray=\"6,3\" points=\"", f);
        for (size_t i = 0; i < l->drv_t.len; i++) {
            double x = px_x(p, (double)(GMA_VEC_AT(&l->drv_t, int64_t, i) + l->shift));
            double xn = i + 1 < l->drv_t.len ? px_x(p, (double)(GMA_VEC_AT(&l->drv_t, int64_t, i + 1) + l->shift)) : W - MR;
            double y = px_y(p, (double)GMA_VEC_AT(&l->drv_v, uint64_t, i));
            y = y < p->y0 + MT ? p->y0 + MT : y; /* above the scale: on its top edge */
            x = x < ML ? ML : x > W - MR ? W - MR : x;
            xn = xn < ML ? ML : xn > W - MR ? W - MR : xn;
            fprintf(f, "%.1f,%.1f %.1f,%.1f ", x, y, xn, y);
        }
        fputs("\"/>\n", f);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">", ML, p->y0 + 12);
    xml(f, gtm_s(d, l->title));
    fputs(l->fw ? " (tensors; light: reserved segments; hatched: outside PyTorch's allocator" : " live (stacked bands", f);
    fputs(l->drv_t.len ? "; dashed: driver used, on the top edge where above the scale" : "", f);
    fputs(")</text>\n", f);
    if (l->warning) {
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#b00000\" font-weight=\"bold\">WARNING: ", ML + 330, p->y0 + 12);
        xml(f, gtm_s(d, l->warning));
        fputs("</text>\n", f);
    }
    if (l->has_peak) {
        double x = px_x(p, (double)(l->peak_t + l->shift)), y = px_y(p, (double)l->peak);
        int right = x > W * 0.7;
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"none\" stroke=\"black\" stroke-width=\"2\"/>\n", x, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-weight=\"bold\">peak ", right ? x - 8 : x + 8,
                y - 6 < p->y0 + MT + 12 ? p->y0 + MT + 12 : y - 6, right ? "end" : "start");
        xml(f, gtm_s(d, l->title));
        fprintf(f, " %s at %s ms (step %llu)</text>\n", gma_fmt_bytes(b1, l->peak), gma_fmt_ms(b2, l->peak_t + l->shift),
                (unsigned long long)l->peak_step);
    }
}

/* The legend of the bridge's layers (the first lane's figures at its peak);
 * coloured by category, named as the categories beside the tensors'. */
static void legend_layers(FILE *f, const gtm_doc *d, const gtm_lane *l, double y)
{
    const char *cache = d->nfixed ? "allocator cache: " : "", *out = d->nfixed ? "outside the allocator: " : "";
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP];
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">layers at the peak</text>\n", ML, y + 8);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">"
               "%sreserved segments (PyTorch's caching allocator): %s, %s of it in no tensor; light, behind the tensors</text>\n",
            ML, y + 16, SEG_FILL, SEG_EDGE, ML + 18, y + 26, cache, gma_fmt_bytes(b1, l->fw_reserved),
            gma_fmt_bytes(b2, l->fw_reserved > l->peak ? l->fw_reserved - l->peak : 0));
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">"
               "%soutside PyTorch's allocator (CUDA allocations in none of its segments): %s; hatched, on top</text>\n",
            ML, y + 32, OUT_FILL, ML + 18, y + 42, out, gma_fmt_bytes(b1, l->fw_outside));
}

/* The scale: the bands' peak or the highest total; with the layers, their top and the driver's. */
static double lane_ymax(const gtm_doc *d, const gtm_lane *l)
{
    (void)d;
    double ymax = (double)l->peak;
    for (size_t k = 0; k < l->nsum; k++)
        if ((double)l->sum_hi[k] > ymax)
            ymax = (double)l->sum_hi[k];
    if (l->fw) {
        if ((double)l->ctx_top > ymax)
            ymax = (double)l->ctx_top;
        for (size_t i = 0; i < l->drv_v.len; i++)
            if ((double)GMA_VEC_AT(&l->drv_v, uint64_t, i) > ymax)
                ymax = (double)GMA_VEC_AT(&l->drv_v, uint64_t, i);
    }
    return ymax * 1.08 + 1;
}

static void axes_free(axis *ax, size_t n)
{
    for (size_t k = 0; ax && k < n; k++) {
        free(ax[k].kt);
        free(ax[k].ku);
    }
    free(ax);
}

/* --diff (d->step_axis): every lane's axis of steps; NULL when a lane has
 * fewer than 2 steps (then every lane keeps its time axis, as the page). */
static axis *step_axes(const gtm_doc *d)
{
    size_t n = d->lanes.len;
    axis *ax = d->step_axis && n ? calloc(n, sizeof(*ax)) : NULL;
    for (size_t k = 0; ax && k < n; k++) {
        if (axis_of(&GMA_VEC_AT(&d->lanes, gtm_lane, k), &ax[k]) != 0) {
            axes_free(ax, n);
            return NULL;
        }
    }
    return ax;
}

int gtw_svg(FILE *f, const gtm_doc *d)
{
    size_t nl = d->lanes.len, nleg = d->ncolors + 1;
    const gtm_lane *l0 = nl ? &GMA_VEC_AT(&d->lanes, gtm_lane, 0) : NULL;
    int fw = l0 && l0->fw;
    double H = TOP + LH * (double)nl + 16.0 * (double)((nleg + 1) / 2) + 40 + (fw ? 52 : 0);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"tl\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n",
            W, H, W, H, W, H);
    if (fw)
        fputs("<defs><pattern id=\"gm-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
              "patternTransform=\"rotate(45)\"><rect width=\"3\" height=\"6\" fill=\"#525252\"/>"
              "<rect x=\"3\" width=\"3\" height=\"6\" fill=\"#d9d9d9\"/></pattern></defs>\n",
              f);
    fputs("<text x=\"80\" y=\"20\" font-size=\"14\" font-weight=\"bold\">GPU memory timeline (shaded: windows): ", f);
    xml(f, gtm_s(d, d->title));
    fprintf(f, "</text>\n<text x=\"80\" y=\"36\" fill=\"#555\">one band per allocation, stacked in %s order, coloured by %s</text>\n",
            d->nfixed ? d->by : "allocation", d->by);
    axis *ax = step_axes(d);
    double u0 = 0, u1 = 0, ytop = 0; /* on the step axis: one view and one scale for every lane */
    for (size_t k = 0; ax && k < nl; k++) {
        const gtm_lane *l = &GMA_VEC_AT(&d->lanes, gtm_lane, k);
        double a = to_u(&ax[k], (double)(l->view0 + l->shift)), b = to_u(&ax[k], (double)(l->view1 + l->shift));
        u0 = !k || a < u0 ? a : u0;
        u1 = !k || b > u1 ? b : u1;
        ytop = lane_ymax(d, l) > ytop ? lane_ymax(d, l) : ytop;
    }
    for (size_t k = 0; k < nl; k++) {
        const gtm_lane *l = &GMA_VEC_AT(&d->lanes, gtm_lane, k);
        pane p = { TOP + LH * (double)k, (double)(l->view0 + l->shift), (double)(l->view1 + l->shift), 1, NULL };
        /* the scale follows the bands (the page's too): a driver figure above it is clipped */
        p.ymax = lane_ymax(d, l);
        if (ax && u1 > u0) {
            p.ax = &ax[k];
            p.v0 = u0;
            p.v1 = u1;
            p.ymax = ytop;
        }
        for (size_t i = 0; i < l->windows.len; i++) {
            const gtm_mark *w = &GMA_VEC_AT(&l->windows, gtm_mark, i);
            double x0 = px_x(&p, (double)(w->t + l->shift)), x1 = px_x(&p, (double)(w->t_end + l->shift));
            x0 = x0 < ML ? ML : x0;
            x1 = x1 > W - MR ? W - MR : x1;
            if (x1 > x0)
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#eef4fa\"/>\n", x0, p.y0 + MT, x1 - x0, LH - MT - MB);
        }
        lane_axes(f, d, l, &p);
        lane_bands(f, d, l, &p);
        lane_merged(f, d, l, &p);
        lane_top(f, d, l, &p);
    }
    double ly = TOP + LH * (double)nl + 6;
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">bytes live at the peak, by %s</text>\n", ML, ly + 8, d->by);
    for (size_t i = 0; i < nleg; i++) {
        char b[GMA_FMT_CAP];
        double x = ML + (double)(i % 2) * 450, y = ly + 16 + 16 * (double)(i / 2);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">", x, y, gtw_color(d, i),
                x + 18, y + 10);
        if (i < d->ncolors) {
            uint32_t o = d->rank[i];
            fprintf(f, "%s ", gma_fmt_bytes(b, l0 && o < l0->at_peak_cap ? l0->at_peak[o] : 0));
            char nm[64];
            snprintf(nm, sizeof(nm), "%.54s", gtm_label(d, o)); /* fits its column */
            xml(f, nm);
        } else {
            fputs("every other owner", f);
        }
        fputs("</text>\n", f);
    }
    if (fw)
        legend_layers(f, d, l0, ly + 16 + 16 * (double)((nleg + 1) / 2));
    fputs("</svg>\n", f);
    axes_free(ax, nl);
    return ferror(f) ? -1 : 0;
}
