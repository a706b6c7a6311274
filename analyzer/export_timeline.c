/*
 * --timeline OUT.svg|OUT.html: live device memory over time as a step line,
 * one colour per device, with the driver's used memory dashed, the peak
 * marked and labelled, step boundaries and tags shown, axes in 1024-based
 * units. The HTML file embeds the same SVG and a small inline script that
 * shows the values under the pointer; it loads nothing from the network.
 *
 * Memory is bounded: the samples go to a fixed number of time buckets
 * (min/max/last per bucket); when the trace outgrows them, neighbouring
 * buckets merge and the bucket width doubles.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "export.h"
#include "names.h"

#define TL_B 2048      /* buckets */
#define TL_DEV 8       /* devices drawn */
#define TL_STEPS 4096  /* step boundaries kept */

typedef struct tlb {
    uint64_t min, max, last;
    unsigned char has;
} tlb;

typedef struct gma_timeline {
    char *path;
    int html;
    int started;
    uint64_t t0, width;  /* ns per bucket */
    size_t nb;           /* buckets in use */
    tlb live[TL_DEV][TL_B];
    tlb drv[TL_DEV][TL_B];
    unsigned char used[TL_DEV], drv_used[TL_DEV];
    uint64_t steps_ts[TL_STEPS], steps_no[TL_STEPS];
    size_t nsteps, steps_dropped;
} gma_timeline;

int gma_timeline_open(gma_replay *r, const char *path)
{
    size_t n = strlen(path);
    gma_timeline *t = calloc(1, sizeof(*t));
    if (!t)
        return -1;
    t->path = strdup(path);
    if (!t->path) {
        free(t);
        return -1;
    }
    t->html = n >= 5 && strcasecmp(path + n - 5, ".html") == 0;
    t->width = 1000;
    /* Fail now rather than after a long analysis. */
    FILE *f = fopen(path, "w");
    if (!f) {
        int e = errno;
        free(t->path);
        free(t);
        errno = e;
        return -1;
    }
    fclose(f);
    r->timeline = t;
    return 0;
}

static void merge(tlb *a, const tlb *b)
{
    if (!b->has)
        return;
    if (!a->has) {
        *a = *b;
        return;
    }
    if (b->min < a->min)
        a->min = b->min;
    if (b->max > a->max)
        a->max = b->max;
    a->last = b->last;
}

static void rescale(gma_timeline *t)
{
    for (int d = 0; d < TL_DEV; d++) {
        tlb *arr[2] = { t->live[d], t->drv[d] };
        for (int k = 0; k < 2; k++) {
            tlb *x = arr[k];
            for (size_t i = 0; i < TL_B / 2; i++) {
                tlb m = x[2 * i];
                merge(&m, &x[2 * i + 1]);
                x[i] = m;
            }
            memset(&x[TL_B / 2], 0, sizeof(tlb) * (TL_B / 2));
        }
    }
    t->width *= 2;
    t->nb = (t->nb + 1) / 2;
}

static tlb *bucket(gma_timeline *t, tlb *series, uint64_t ts)
{
    if (!t->started) {
        t->started = 1;
        t->t0 = ts;
    }
    uint64_t off = ts > t->t0 ? ts - t->t0 : 0;
    while (off / t->width >= TL_B)
        rescale(t);
    size_t i = (size_t)(off / t->width);
    if (i + 1 > t->nb)
        t->nb = i + 1;
    return &series[i];
}

static void add(tlb *b, uint64_t v)
{
    if (!b->has) {
        b->has = 1;
        b->min = b->max = v;
    }
    if (v < b->min)
        b->min = v;
    if (v > b->max)
        b->max = v;
    b->last = v;
}

void gma_timeline_live(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t live)
{
    gma_timeline *t = r->timeline;
    if (dev >= TL_DEV)
        return;
    t->used[dev] = 1;
    tlb *b = bucket(t, t->live[dev], ts);
    add(b, live);
}

void gma_timeline_driver(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t used)
{
    gma_timeline *t = r->timeline;
    if (dev >= TL_DEV)
        return;
    t->drv_used[dev] = 1;
    add(bucket(t, t->drv[dev], ts), used);
}

void gma_timeline_step(gma_replay *r, uint64_t ts, uint64_t step)
{
    gma_timeline *t = r->timeline;
    if (t->nsteps >= TL_STEPS) {
        t->steps_dropped++;
        return;
    }
    t->steps_ts[t->nsteps] = ts;
    t->steps_no[t->nsteps] = step;
    t->nsteps++;
}

/* ---- drawing ------------------------------------------------------------------ */

#define W 1000.0
#define H 480.0
#define ML 80.0
#define MR 24.0
#define MT 64.0
#define MB 100.0

static const char *const COLORS[TL_DEV] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                            "#ff7f0e", "#8c564b", "#e377c2", "#17becf" };

typedef struct axes {
    double t0ms, t1ms;  /* x range, ms from the trace start */
    double ymax;        /* bytes */
    double unit;        /* bytes per label unit */
    const char *uname;
} axes;

static double xpx(const axes *a, double ms) { return ML + (ms - a->t0ms) / (a->t1ms - a->t0ms) * (W - ML - MR); }
static double ypx(const axes *a, double bytes) { return H - MB - bytes / a->ymax * (H - MT - MB); }

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, f);
            break;
        }
    }
}

static double bucket_ms(const gma_replay *r, const gma_timeline *t, size_t i)
{
    return (double)gma_rel(r, t->t0 + (uint64_t)i * t->width) / 1e6;
}

/* The y axis for values up to ymax bytes: a 1024-based unit, and a top a
 * little above ymax on a round tick. */
static void axes_scale_y(axes *a, uint64_t ymax)
{
    a->unit = ymax >= (1ull << 30) ? 1073741824.0 : ymax >= (1ull << 20) ? 1048576.0 : ymax >= 1024 ? 1024.0 : 1.0;
    a->uname = ymax >= (1ull << 30) ? "GiB" : ymax >= (1ull << 20) ? "MiB" : ymax >= 1024 ? "KiB" : "B";
    double step = gma_nice_step((double)ymax / a->unit, 6) * a->unit;
    a->ymax = step * (double)(long long)((double)ymax * 1.08 / step + 0.999);
    if (a->ymax <= 0)
        a->ymax = 1;
}

/* At most this many ticks per axis; gma_nice_step asks for 6 or 8. */
#define TICKS_MAX 64

/* The y grid with its labels and the x ticks (ms, or s for a span over
 * 10 s). Returns 1 when the x labels are seconds. */
static int svg_grid(FILE *f, const axes *a)
{
    double step = gma_nice_step(a->ymax / a->unit, 6) * a->unit;
    /* Ticks are counted, not accumulated: at a large offset (a trace whose
     * clock starts near 2^63 ns) "v += step" can stop changing v, and a
     * loop on it never ends (fuzz finding analyze-slow-input). */
    for (int i = 0; i <= TICKS_MAX; i++) {
        double v = step * i;
        if (!(v <= a->ymax * 1.0001))
            break;
        double y = ypx(a, v);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n", ML, y, W - MR, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g %s</text>\n", ML - 6, y + 4,
                v / a->unit, a->uname);
    }
    double span = a->t1ms - a->t0ms;
    int secs = span > 10000.0;
    double xs = gma_nice_step(secs ? span / 1000.0 : span, 8) * (secs ? 1000.0 : 1.0);
    double first = xs * floor(a->t0ms / xs);
    if (first < a->t0ms)
        first += xs;
    for (int i = 0; i <= TICKS_MAX; i++) {
        double ms = first + xs * i;
        if (!(ms <= a->t1ms + 1e-9))
            break;
        double x = xpx(a, ms);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", x, H - MB, x,
                H - MB + 5);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x, H - MB + 17,
                secs ? ms / 1000.0 : ms);
    }
    return secs;
}

static void write_svg(FILE *f, gma_replay *r, const gma_timeline *t, const axes *a)
{
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP];
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"tl\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n", W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W, H);
    fputs("<text x=\"80\" y=\"18\" font-size=\"14\" font-weight=\"bold\">Live device memory (shaded: windows): ", f);
    xml_text(f, r->path);
    fputs("</text>\n", f);
    char warnbuf[400];
    if (gma_trace_warning(r, warnbuf, sizeof(warnbuf))) {
        fputs("<text x=\"80\" y=\"34\" fill=\"#b00000\" font-weight=\"bold\">WARNING: ", f);
        xml_text(f, warnbuf);
        fputs("</text>\n", f);
    }
    /* windows, shaded */
    for (size_t i = 0; i < r->windows.len; i++) {
        const gma_window *w = &GMA_VEC_AT(&r->windows, gma_window, i);
        if (r->opt.window >= 0 && w->id != (uint64_t)r->opt.window)
            continue;
        double x0 = xpx(a, (double)gma_rel(r, w->begin_ts) / 1e6);
        double x1 = xpx(a, (double)gma_rel(r, w->closed ? w->end_ts : r->last_ts) / 1e6);
        if (x0 < ML)
            x0 = ML;
        if (x1 > W - MR)
            x1 = W - MR;
        if (x1 > x0)
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#eef4fa\"/>\n", x0, MT,
                    x1 - x0, H - MT - MB);
    }
    int secs = svg_grid(f, a);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time since trace start (%s)</text>\n",
            (ML + W - MR) / 2, H - MB + 34, secs ? "s" : "ms");
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", ML, H - MB, W - MR, H - MB);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", ML, MT, ML, H - MB);
    /* step boundaries; labels where there is room for them */
    double last_label = -1e9;
    for (size_t i = 0; i < t->nsteps; i++) {
        double ms = (double)gma_rel(r, t->steps_ts[i]) / 1e6;
        if (ms < a->t0ms || ms > a->t1ms)
            continue;
        double x = xpx(a, ms);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#aaa\" stroke-dasharray=\"2,3\"/>\n",
                x, MT, x, H - MB);
        if (x - last_label >= 56 && x <= W - MR - 30) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\" text-anchor=\"middle\">step %llu</text>\n", x, MT - 6,
                    (unsigned long long)t->steps_no[i]);
            last_label = x;
        }
    }
    /* tags: a marker each (up to 500), a label where there is room */
    size_t ntag = 0;
    last_label = -1e9;
    for (size_t i = 0; i < r->tags.len && ntag < 500; i++) {
        const gma_tagrow *g = &GMA_VEC_AT(&r->tags, gma_tagrow, i);
        double ms = (double)gma_rel(r, g->ts) / 1e6;
        if (ms < a->t0ms || ms > a->t1ms || (i && GMA_VEC_AT(&r->tags, gma_tagrow, i - 1).ts == g->ts))
            continue;
        double x = xpx(a, ms);
        fprintf(f, "<path d=\"M%.1f %.1f l-4 8 l8 0 z\" fill=\"#444\"/>\n", x, H - MB + 40);
        ntag++;
        if (x - last_label < 16)
            continue;
        last_label = x;
        size_t len;
        const char *nm = gma_str(r, g->name, &len);
        gma_buf b = { 0 };
        gma_buf_putn(&b, nm, len > 24 ? 24 : len);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#444\" font-size=\"9\" transform=\"rotate(35 %.1f %.1f)\">", x,
                H - MB + 58, x, H - MB + 58);
        xml_text(f, gma_buf_str(&b));
        fputs("</text>\n", f);
        gma_buf_free(&b);
    }
    /* series */
    for (int d = 0; d < TL_DEV; d++) {
        if (t->drv_used[d]) {
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-dasharray=\"6,3\" stroke-opacity=\"0.6\" points=\"", COLORS[d]);
            /* a step line: the driver's value holds until the next sample */
            int have = 0;
            double prev_y = 0;
            for (size_t i = 0; i < t->nb; i++) {
                if (!t->drv[d][i].has)
                    continue;
                double x = xpx(a, bucket_ms(r, t, i)), y = ypx(a, (double)t->drv[d][i].max);
                if (have)
                    fprintf(f, " %.1f,%.1f %.1f,%.1f", x, prev_y, x, y);
                else
                    fprintf(f, "%.1f,%.1f", x, y);
                prev_y = y;
                have = 1;
            }
            fputs("\"/>\n", f);
        }
        if (!t->used[d])
            continue;
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", COLORS[d]);
        int have = 0;
        uint64_t last = 0;
        for (size_t i = 0; i < t->nb; i++) {
            const tlb *b = &t->live[d][i];
            double x0 = xpx(a, bucket_ms(r, t, i)), x1 = xpx(a, bucket_ms(r, t, i + 1));
            if (!b->has) {
                if (have)
                    fprintf(f, " %.1f,%.1f", x1, ypx(a, (double)last));
                continue;
            }
            /* the step line: up to the bucket's max, then on at its last value */
            fprintf(f, "%s%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f", have ? " " : "", x0, ypx(a, (double)(have ? last : b->max)), x0,
                    ypx(a, (double)b->max), x1, ypx(a, (double)b->max), x1, ypx(a, (double)b->last));
            last = b->last;
            have = 1;
        }
        fputs("\"/>\n", f);
    }
    /* the peak of each device */
    for (unsigned d = 0; d < TL_DEV; d++) {
        const gma_dev *D = &r->dev[d];
        if (!t->used[d] || !D->has_peak)
            continue;
        double ms = (double)gma_rel(r, D->peak_ts) / 1e6;
        double x = xpx(a, ms), y = ypx(a, (double)D->peak);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", x, y,
                COLORS[d]);
        int right = x > W * 0.7;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-weight=\"bold\" fill=\"%s\">peak dev%u %s at %s ms (step %llu)</text>\n",
                right ? x - 8 : x + 8, y - 6 < MT + 12 ? MT + 12 : y - 6, right ? "end" : "start", COLORS[d], d,
                gma_fmt_bytes(b1, D->peak), gma_fmt_ms(b2, gma_rel(r, D->peak_ts)), (unsigned long long)D->peak_step);
    }
    /* legend */
    double lx = W - MR - 230, ly = MT + 4;
    for (int d = 0; d < TL_DEV; d++) {
        if (!t->used[d] && !t->drv_used[d])
            continue;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>", lx, ly + 12,
                lx + 18, ly + 12, COLORS[d]);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">dev%d live%s</text>\n", lx + 22, ly + 16, d,
                t->drv_used[d] ? " (dashed: driver used)" : "");
        ly += 14;
    }
    fputs("</svg>\n", f);
}

static void write_html(FILE *f, gma_replay *r, const gma_timeline *t, const axes *a)
{
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP];
    fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>gmemprof timeline: ", f);
    xml_text(f, r->path);
    fputs("</title>\n<style>\nbody { font-family: sans-serif; margin: 16px; }\n"
          "#tip { position: fixed; display: none; background: #ffffe0; border: 1px solid #999; padding: 4px 6px; "
          "font-size: 12px; pointer-events: none; white-space: pre; }\n</style>\n</head>\n<body>\n<h2>Live device memory</h2>\n<p>",
          f);
    xml_text(f, r->path);
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++) {
        const gma_dev *D = &r->dev[d];
        if (D->has_peak && gma_dev_selected(r, d))
            fprintf(f, " | dev%u peak %s at %s ms (step %llu)", d, gma_fmt_bytes(b1, D->peak),
                    gma_fmt_ms(b2, gma_rel(r, D->peak_ts)), (unsigned long long)D->peak_step);
    }
    fputs("</p>\n", f);
    char warnbuf[400];
    if (gma_trace_warning(r, warnbuf, sizeof(warnbuf))) {
        fputs("<p style=\"color:#b00000;font-weight:bold\">WARNING: ", f);
        xml_text(f, warnbuf);
        fputs("</p>\n", f);
    }
    write_svg(f, r, t, a);
    fputs("<div id=\"tip\"></div>\n<script>\n", f);
    /* Data for the pointer: bucket start times and max live per device.
     * The script avoids the characters that XML would need escaped. */
    fprintf(f, "var D = { L: %.1f, R: %.1f, W: %.1f, t0: %.6f, t1: %.6f, n: %zu, s: [\n", ML, MR, W, a->t0ms, a->t1ms, t->nb);
    int firstd = 1;
    for (int d = 0; d < TL_DEV; d++) {
        if (!t->used[d])
            continue;
        fprintf(f, "%s{ d: %d, v: [", firstd ? "" : ",\n", d);
        uint64_t last = 0;
        for (size_t i = 0; i < t->nb; i++) {
            const tlb *b = &t->live[d][i];
            fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)(b->has ? b->max : last));
            if (b->has)
                last = b->last;
        }
        fputs("] }", f);
        firstd = 0;
    }
    fputs("\n] };\n", f);
    fputs("(function () {\n"
          "  var svg = document.getElementById('tl');\n"
          "  var tip = document.getElementById('tip');\n"
          "  function fmt(b) {\n"
          "    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];\n"
          "    var i = 0;\n"
          "    while (b >= 1024) { if (i == 4) { break; } b = b / 1024; i = i + 1; }\n"
          "    return (i ? b.toFixed(2) : b.toFixed(0)) + ' ' + u[i];\n"
          "  }\n"
          "  svg.addEventListener('mousemove', function (e) {\n"
          "    var r = svg.getBoundingClientRect();\n"
          "    var x = (e.clientX - r.left) * D.W / r.width;\n"
          "    var f = (x - D.L) / (D.W - D.L - D.R);\n"
          "    var i = Math.floor(f * D.n);\n"
          "    if (0 > i || i >= D.n) { tip.style.display = 'none'; return; }\n"
          "    var s = 't = ' + (D.t0 + f * (D.t1 - D.t0)).toFixed(3) + ' ms';\n"
          "    for (var k = 0; k != D.s.length; k = k + 1) { s = s + '\\ndev' + D.s[k].d + ' live (max in bucket): ' + fmt(D.s[k].v[i]); }\n"
          "    tip.textContent = s;\n"
          "    tip.style.left = (e.clientX + 14) + 'px';\n"
          "    tip.style.top = (e.clientY + 14) + 'px';\n"
          "    tip.style.display = 'block';\n"
          "  });\n"
          "  svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });\n"
          "})();\n</script>\n</body>\n</html>\n",
          f);
}

int gma_timeline_write(gma_replay *r)
{
    gma_timeline *t = r->timeline;
    if (!t)
        return 0;
    axes a;
    memset(&a, 0, sizeof(a));
    uint64_t ymax = 1;
    for (int d = 0; d < TL_DEV; d++)
        for (size_t i = 0; i < t->nb; i++) {
            if (t->live[d][i].has && t->live[d][i].max > ymax)
                ymax = t->live[d][i].max;
            if (t->drv[d][i].has && t->drv[d][i].max > ymax)
                ymax = t->drv[d][i].max;
        }
    a.t0ms = t->started ? (double)gma_rel(r, t->t0) / 1e6 : 0.0;
    a.t1ms = t->started ? bucket_ms(r, t, t->nb ? t->nb : 1) : 1.0;
    if (a.t1ms <= a.t0ms)
        a.t1ms = a.t0ms + 1.0;
    axes_scale_y(&a, ymax);
    FILE *f = fopen(t->path, "w");
    if (!f)
        return -1;
    if (t->html) {
        write_html(f, r, t, &a);
    } else {
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
        write_svg(f, r, t, &a);
    }
    int err = ferror(f) != 0;
    err |= fclose(f) != 0;
    return err ? -1 : 0;
}

void gma_timeline_free(gma_replay *r)
{
    gma_timeline *t = r->timeline;
    if (!t)
        return;
    free(t->path);
    free(t);
    r->timeline = NULL;
}

/* ---- several traces: a curve per rank ------------------------------------------ */

#define TLM_SERIES 16  /* curves drawn; more are listed as left out */

static const char *const MCOLORS[TLM_SERIES] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                                                 "#e377c2", "#17becf", "#393b79", "#ad494a", "#637939", "#7b4173",
                                                 "#bcbd22", "#843c39", "#3182bd", "#636363" };

typedef struct tlseries {
    int64_t rank;
    unsigned dev;
    uint64_t t0, width;  /* absolute trace-clock ns of bucket 0, ns per bucket */
    size_t nb;
    tlb b[TL_B];
    int has_peak;
    uint64_t peak, peak_ts;
} tlseries;

struct gma_tlmulti {
    char *path;
    int html;
    tlseries *s;
    size_t n, left_out;
    uint64_t origin;     /* the earliest trace start: time 0 of the axis */
    int has_origin;
};

struct gma_tlmulti *gma_timeline_multi_new(const char *path)
{
    struct gma_tlmulti *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->s = calloc(TLM_SERIES, sizeof(*m->s));
    m->path = strdup(path);
    if (!m->s || !m->path) {
        gma_timeline_multi_free(m);
        errno = ENOMEM;
        return NULL;
    }
    size_t n = strlen(path);
    m->html = n >= 5 && strcasecmp(path + n - 5, ".html") == 0;
    FILE *f = fopen(path, "w"); /* fail now rather than after every trace */
    if (!f) {
        int e = errno;
        gma_timeline_multi_free(m);
        errno = e;
        return NULL;
    }
    fclose(f);
    return m;
}

int gma_timeline_collect(gma_replay *r)
{
    gma_timeline *t = calloc(1, sizeof(*t));
    if (!t)
        return -1;
    t->width = 1000;
    r->timeline = t;
    return 0;
}

int gma_timeline_multi_take(struct gma_tlmulti *m, gma_replay *r, int64_t rank)
{
    const gma_timeline *t = r->timeline;
    if (!t)
        return 0;
    if (r->has_origin && (!m->has_origin || r->origin < m->origin)) {
        m->origin = r->origin;
        m->has_origin = 1;
    }
    for (unsigned d = 0; d < TL_DEV; d++) {
        if (!t->used[d])
            continue;
        if (m->n >= TLM_SERIES) {
            m->left_out++;
            continue;
        }
        tlseries *x = &m->s[m->n++];
        x->rank = rank;
        x->dev = d;
        x->t0 = t->t0;
        x->width = t->width;
        x->nb = t->nb;
        memcpy(x->b, t->live[d], sizeof(x->b));
        x->has_peak = r->dev[d].has_peak;
        x->peak = r->dev[d].peak;
        x->peak_ts = r->dev[d].peak_ts;
    }
    return 0;
}

static double mms(const struct gma_tlmulti *m, uint64_t ts) { return (double)(int64_t)(ts - m->origin) / 1e6; }

static void write_multi_svg(FILE *f, const struct gma_tlmulti *m, const axes *a)
{
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP];
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"tl\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n", W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"80\" y=\"18\" font-size=\"14\" font-weight=\"bold\">Live device memory per rank (%zu curve%s)</text>\n",
            m->n, m->n == 1 ? "" : "s");
    if (m->left_out)
        fprintf(f, "<text x=\"80\" y=\"34\" fill=\"#b00000\">%zu more curves not drawn (at most %d)</text>\n", m->left_out,
                TLM_SERIES);
    int secs = svg_grid(f, a);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time since the earliest trace start (%s)</text>\n",
            (ML + W - MR) / 2, H - MB + 34, secs ? "s" : "ms");
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", ML, H - MB, W - MR, H - MB);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", ML, MT, ML, H - MB);
    for (size_t k = 0; k < m->n; k++) {
        const tlseries *x = &m->s[k];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", MCOLORS[k]);
        int have = 0;
        uint64_t last = 0;
        for (size_t i = 0; i < x->nb; i++) {
            const tlb *b = &x->b[i];
            double x0 = xpx(a, mms(m, x->t0 + (uint64_t)i * x->width)), x1 = xpx(a, mms(m, x->t0 + (uint64_t)(i + 1) * x->width));
            if (!b->has) {
                if (have)
                    fprintf(f, " %.1f,%.1f", x1, ypx(a, (double)last));
                continue;
            }
            fprintf(f, "%s%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f", have ? " " : "", x0,
                    ypx(a, (double)(have ? last : b->max)), x0, ypx(a, (double)b->max), x1, ypx(a, (double)b->max), x1,
                    ypx(a, (double)b->last));
            last = b->last;
            have = 1;
        }
        fputs("\"/>\n", f);
    }
    /* each rank's peak, circled; labels only for the highest, to stay readable */
    size_t hi = 0;
    for (size_t k = 0; k < m->n; k++)
        if (m->s[k].has_peak && (!m->s[hi].has_peak || m->s[k].peak > m->s[hi].peak))
            hi = k;
    for (size_t k = 0; k < m->n; k++) {
        const tlseries *x = &m->s[k];
        if (!x->has_peak)
            continue;
        double px = xpx(a, mms(m, x->peak_ts)), py = ypx(a, (double)x->peak);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", px, py,
                MCOLORS[k]);
        if (k != hi)
            continue;
        int right = px > W * 0.7;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-weight=\"bold\" fill=\"%s\">highest: rank %lld dev%u %s at %s ms</text>\n",
                right ? px - 8 : px + 8, py - 6 < MT + 12 ? MT + 12 : py - 6, right ? "end" : "start", MCOLORS[k],
                (long long)x->rank, x->dev, gma_fmt_bytes(b1, x->peak), gma_fmt_ms(b2, (int64_t)(x->peak_ts - m->origin)));
    }
    double lx = W - MR - 230, ly = MT + 4;
    for (size_t k = 0; k < m->n; k++) {
        const tlseries *x = &m->s[k];
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>", lx, ly + 12,
                lx + 18, ly + 12, MCOLORS[k]);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">rank %lld dev%u live, peak %s</text>\n", lx + 22, ly + 16,
                (long long)x->rank, x->dev, x->has_peak ? gma_fmt_bytes(b1, x->peak) : "-");
        ly += 14;
    }
    fputs("</svg>\n", f);
}

int gma_timeline_multi_write(struct gma_tlmulti *m)
{
    if (!m)
        return 0;
    axes a;
    memset(&a, 0, sizeof(a));
    uint64_t ymax = 1;
    int have = 0;
    for (size_t k = 0; k < m->n; k++) {
        const tlseries *x = &m->s[k];
        for (size_t i = 0; i < x->nb; i++)
            if (x->b[i].has && x->b[i].max > ymax)
                ymax = x->b[i].max;
        double t0 = mms(m, x->t0), t1 = mms(m, x->t0 + (uint64_t)(x->nb ? x->nb : 1) * x->width);
        if (!have || t0 < a.t0ms)
            a.t0ms = t0;
        if (!have || t1 > a.t1ms)
            a.t1ms = t1;
        have = 1;
    }
    if (a.t1ms <= a.t0ms)
        a.t1ms = a.t0ms + 1.0;
    axes_scale_y(&a, ymax);
    FILE *f = fopen(m->path, "w");
    if (!f)
        return -1;
    if (m->html) {
        fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
              "<title>gmemprof timeline: several ranks</title>\n<style>\nbody { font-family: sans-serif; margin: 16px; }\n"
              "</style>\n</head>\n<body>\n<h2>Live device memory per rank</h2>\n",
              f);
        write_multi_svg(f, m, &a);
        fputs("</body>\n</html>\n", f);
    } else {
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
        write_multi_svg(f, m, &a);
    }
    int err = ferror(f) != 0;
    err |= fclose(f) != 0;
    return err ? -1 : 0;
}

void gma_timeline_multi_free(struct gma_tlmulti *m)
{
    if (!m)
        return;
    free(m->s);
    free(m->path);
    free(m);
}
