/*
 * The interactive timeline page: one HTML file with the model as JSON in a
 * <script type="application/json"> element and the inline script/style of
 * page.js/page.css. Nothing is loaded from the network.
 *
 * The JSON is compact: per band drawn, columns of integers (allocation
 * time as the delta from the previous band's, lifetime (-1: never freed),
 * bytes, address as a delta, owner/kernel/range string, step delta, layer;
 * with the PyTorch bridge also category/module/op/line strings). With
 * merged bands and categories as owners, "split" holds the merged bytes
 * of each colour at each bucket of the summary, as deltas.
 * With the PyTorch bridge's layers, "fw" holds the reserved segments and
 * the allocations outside the allocator in the same columns (t0, dur, sz,
 * ad; "src": the CUDA API of an outside one) and the analyzer's figures at
 * its peak.
 */
#include <string.h>

#include "spill.h"
#include "tl_write.h"

static const char *const PALETTE[GTM_TOP_MAX] = {
    "#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#393b79",
    "#ad494a", "#637939", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#843c39", "#8ca252", "#de9ed6",
};

const char *gtw_color(const gtm_doc *d, size_t i) { return i < d->ncolors ? PALETTE[i] : "#c7c7c7"; }

/* A JSON string safe inside <script>: <, > and & as \u escapes; bytes
 * that are not UTF-8 as U+FFFD, as in every output. */
static void jstr(FILE *f, const char *s)
{
    size_t n = strlen(s);
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t l = gma_utf8_len(s + i, n - i);
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            fprintf(f, "\\u%04x", c);
        else if (!l)
            fputs("\\ufffd", f);
        else
            fwrite(s + i, 1, l, f);
        i += l ? l : 1;
    }
    fputc('"', f);
}

typedef enum col { C_T0, C_DUR, C_SZ, C_AD, C_OWN, C_KN, C_RN, C_ST, C_LY, C_CAT, C_MOD, C_OP, C_LN, C_N_ } col;
static const char *const COLNAME[C_N_] = { "t0", "dur", "sz", "ad", "own", "kn", "rn", "st", "ly", "cat", "mod", "op", "ln" };

/* One column of the bands drawn. */
static void band_column(FILE *f, const gtm_lane *l, col c)
{
    fprintf(f, "\"%s\":[", COLNAME[c]);
    int64_t prev_t = 0, prev_a = 0, prev_s = 0;
    int first = 1;
    for (size_t i = 0; i < l->n; i++, gma_big_tick()) {
        if (!l->keep[i])
            continue;
        const gtb_band *b = &l->b[i];
        int64_t v = 0;
        switch (c) {
        case C_T0: v = (int64_t)b->t0 - prev_t; prev_t = (int64_t)b->t0; break;
        case C_DUR: v = b->t1 == GTB_OPEN ? -1 : (int64_t)(b->t1 - b->t0); break;
        case C_SZ: v = (int64_t)b->bytes; break;
        case C_AD: v = (int64_t)(b->addr - (uint64_t)prev_a); prev_a = (int64_t)b->addr; break;
        case C_OWN: v = l->own[i]; break;
        case C_KN: v = l->kn[i]; break;
        case C_RN: v = l->rn[i]; break;
        case C_ST: v = (int64_t)(b->step - (uint64_t)prev_s); prev_s = (int64_t)b->step; break;
        case C_CAT: v = l->cat[i]; break;
        case C_MOD: v = l->mod[i]; break;
        case C_OP: v = l->op[i]; break;
        case C_LN: v = l->ln[i]; break;
        default: v = b->layer; break;
        }
        fprintf(f, first ? "%lld" : ",%lld", (long long)v);
        first = 0;
    }
    fputs("]", f);
}

/* A framework layer's bands: columns as the lane's. */
static void ctx_columns(FILE *f, const gtm_doc *d, const gtm_ctx *x, int with_src)
{
    (void)d;
    int64_t prev_t = 0;
    uint64_t prev_a = 0;
    fputs("{\"t0\":[", f);
    for (size_t i = 0; i < x->n; i++) {
        fprintf(f, "%s%lld", i ? "," : "", (long long)((int64_t)x->b[i].t0 - prev_t));
        prev_t = (int64_t)x->b[i].t0;
    }
    fputs("],\"dur\":[", f);
    for (size_t i = 0; i < x->n; i++)
        fprintf(f, "%s%lld", i ? "," : "", x->b[i].t1 == GTB_OPEN ? -1LL : (long long)(x->b[i].t1 - x->b[i].t0));
    fputs("],\"sz\":[", f);
    for (size_t i = 0; i < x->n; i++)
        fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)x->b[i].bytes);
    fputs("],\"ad\":[", f);
    for (size_t i = 0; i < x->n; i++) {
        fprintf(f, "%s%lld", i ? "," : "", (long long)(x->b[i].addr - prev_a));
        prev_a = x->b[i].addr;
    }
    fputs("]", f);
    if (with_src) {
        fputs(",\"src\":[", f);
        for (size_t i = 0; i < x->n; i++)
            fprintf(f, "%s%u", i ? "," : "", x->b[i].kname);
        fputs("]", f);
    }
    fprintf(f, ",\"atPeak\":%llu}", (unsigned long long)x->at_peak);
}

static void fw_layers(FILE *f, const gtm_doc *d, const gtm_lane *l)
{
    if (!l->fw)
        return;
    fprintf(f, ",\n\"fw\":{\"reserved\":%llu,\"outside\":%llu,\"seg\":", (unsigned long long)l->fw_reserved,
            (unsigned long long)l->fw_outside);
    ctx_columns(f, d, &l->ctx[GTM_CTX_SEG], 0);
    fputs(",\"out\":", f);
    ctx_columns(f, d, &l->ctx[GTM_CTX_OUT], 1);
    fputs("}", f);
}

static void marks(FILE *f, const char *key, const gma_vec *v, int64_t sh, int kind)
{
    fprintf(f, ",\"%s\":[", key);
    for (size_t i = 0; i < v->len; i++) {
        const gtm_mark *m = &GMA_VEC_AT(v, gtm_mark, i);
        if (kind == 0)
            fprintf(f, "%s[%lld,%llu]", i ? "," : "", (long long)(m->t + sh), (unsigned long long)m->no);
        else if (kind == 1)
            fprintf(f, "%s[%lld,%lld,%llu]", i ? "," : "", (long long)(m->t + sh), (long long)(m->t_end + sh),
                    (unsigned long long)m->no);
        else
            fprintf(f, "%s[%lld,%u]", i ? "," : "", (long long)(m->t + sh), m->name);
    }
    fputs("]", f);
}

static void merged(FILE *f, const gtm_lane *l)
{
    fprintf(f, ",\"merged\":{\"n\":%zu,\"bytes\":%llu,\"max\":%llu}", l->nmerged,
            (unsigned long long)l->merged_bytes, (unsigned long long)l->merge_max);
}

/* The summary of the live total: per bucket its first time (as the delta
 * from the previous bucket's last), its length, its end level (as the
 * delta from the previous end), and its lowest and highest level below and
 * above that end. */
static void summary(FILE *f, const gtm_lane *l)
{
    fprintf(f, ",\n\"sum\":{\"per\":%zu,\"t\":[", l->sum_per);
    int64_t pt = -l->shift;
    for (size_t k = 0; k < l->nsum; k++) {
        fprintf(f, "%s%lld", k ? "," : "", (long long)(l->sum_t0[k] - pt));
        pt = l->sum_t1[k];
    }
    fputs("],\"w\":[", f);
    for (size_t k = 0; k < l->nsum; k++)
        fprintf(f, "%s%lld", k ? "," : "", (long long)(l->sum_t1[k] - l->sum_t0[k]));
    fputs("],\"e\":[", f);
    uint64_t pe = 0;
    for (size_t k = 0; k < l->nsum; k++) {
        fprintf(f, "%s%lld", k ? "," : "", (long long)(l->sum_end[k] - pe));
        pe = l->sum_end[k];
    }
    fputs("],\"lo\":[", f);
    for (size_t k = 0; k < l->nsum; k++)
        fprintf(f, "%s%llu", k ? "," : "", (unsigned long long)(l->sum_end[k] - l->sum_lo[k]));
    fputs("],\"hi\":[", f);
    for (size_t k = 0; k < l->nsum; k++)
        fprintf(f, "%s%llu", k ? "," : "", (unsigned long long)(l->sum_hi[k] - l->sum_end[k]));
    fputs("]}", f);
}

/* The merged bytes per colour at each bucket's end: for each colour that
 * has any, its deltas from bucket to bucket ("g": the colours). */
static void split(FILE *f, const gtm_doc *d, const gtm_lane *l)
{
    if (!l->split)
        return;
    size_t G = d->ncolors + 1;
    fputs(",\n\"split\":{\"g\":[", f);
    int first = 1;
    for (size_t g = 0; g < G; g++) {
        int any = 0;
        for (size_t k = 0; k < l->nsum && !any; k++)
            any = l->split[k * G + g] != 0;
        if (!any)
            continue;
        fprintf(f, "%s%zu", first ? "" : ",", g);
        first = 0;
    }
    fputs("],\"v\":[", f);
    first = 1;
    for (size_t g = 0; g < G; g++) {
        int any = 0;
        for (size_t k = 0; k < l->nsum && !any; k++)
            any = l->split[k * G + g] != 0;
        if (!any)
            continue;
        fputs(first ? "[" : ",[", f);
        first = 0;
        uint64_t prev = 0;
        for (size_t k = 0; k < l->nsum; k++) {
            fprintf(f, "%s%lld", k ? "," : "", (long long)(l->split[k * G + g] - prev));
            prev = l->split[k * G + g];
        }
        fputs("]", f);
    }
    fputs("]}", f);
}

static void lane(FILE *f, const gtm_doc *d, const gtm_lane *l)
{
    int64_t sh = l->shift;
    fprintf(f, "{\"title\":%u,\"warning\":%u,\"layers\":[", l->title, l->warning);
    for (unsigned k = 0; k < l->nlayers; k++)
        fprintf(f, "%s%u", k ? "," : "", l->layer_name[k]);
    fputs("],\"peak\":", f);
    if (l->has_peak)
        fprintf(f, "{\"t\":%lld,\"bytes\":%llu,\"step\":%llu}", (long long)(l->peak_t + sh),
                (unsigned long long)l->peak, (unsigned long long)l->peak_step);
    else
        fputs("null", f);
    fprintf(f, ",\"view\":[%lld,%lld],\"span\":[%lld,%lld],\"nall\":%zu,\"n\":%zu,\"leftOut\":[%llu,%llu],\"t0base\":%lld,",
            (long long)(l->view0 + sh), (long long)(l->view1 + sh), (long long)(l->t_min + sh),
            (long long)(l->t_max + sh), l->n, l->nkeep, (unsigned long long)l->left_out,
            (unsigned long long)l->left_out_bytes, (long long)sh);
    for (int c = 0; c < C_N_; c++) {
        if ((c >= C_CAT && !l->mod) || (c == C_CAT && !l->cat))
            continue;
        band_column(f, l, (col)c);
        fputs(",\n", f);
    }
    /* the analyzer's bytes at the peak, per coloured owner (the legend) */
    fputs("\"legend\":[", f);
    for (size_t i = 0; i < d->ncolors; i++) {
        uint32_t o = d->rank[i];
        fprintf(f, "%s[%u,%llu]", i ? "," : "", o, (unsigned long long)(o < l->at_peak_cap ? l->at_peak[o] : 0));
    }
    fputs("]", f);
    fw_layers(f, d, l);
    merged(f, l);
    summary(f, l);
    split(f, d, l);
    marks(f, "steps", &l->steps, sh, 0);
    marks(f, "wins", &l->windows, sh, 1);
    marks(f, "tags", &l->tags, sh, 2);
    fputs(",\"drv\":[", f);
    for (size_t i = 0; i < l->drv_t.len; i++)
        fprintf(f, "%s[%lld,%llu]", i ? "," : "", (long long)(GMA_VEC_AT(&l->drv_t, int64_t, i) + sh),
                (unsigned long long)GMA_VEC_AT(&l->drv_v, uint64_t, i));
    fputs("]}", f);
}

static void data(FILE *f, const gtm_doc *d)
{
    fprintf(f, "{\"v\":1,\"title\":%u,\"by\":", d->title);
    jstr(f, d->by);
    fprintf(f, ",\"stepAxis\":%d,\"ncolors\":%zu,\"colors\":[", d->step_axis, d->ncolors);
    for (size_t i = 0; i <= d->ncolors; i++) {
        fputs(i ? "," : "", f);
        jstr(f, gtw_color(d, i));
    }
    fprintf(f, "],\"merge\":{\"at\":%d,\"keep\":%d,\"sum\":%d},", GTM_MERGE_AT, GTM_KEEP, GTM_SUM_MAX);
    /* the owner keys a band has, each a column of doc strings: "colour by";
     * stack: the first key's owners stack in their colours' order */
    int fw = 0, cats = 0;
    for (size_t k = 0; k < d->lanes.len; k++) {
        fw |= GMA_VEC_AT(&d->lanes, gtm_lane, k).mod != NULL;
        cats |= GMA_VEC_AT(&d->lanes, gtm_lane, k).cat != NULL;
    }
    fputs("\"keys\":[[", f);
    jstr(f, d->by);
    fputs(",\"own\"],", f);
    if (cats)
        fputs("[\"category\",\"cat\"],", f);
    if (fw)
        fputs("[\"module\",\"mod\"],[\"op\",\"op\"],[\"line\",\"ln\"],", f);
    fprintf(f, "[\"kernel\",\"kn\"],[\"range\",\"rn\"]],\"stack\":%d,\"fwcols\":%d,", d->nfixed ? 1 : 0, fw);
    if (d->diff_a && d->diff_b) {
        fputs("\"diff\":[", f);
        jstr(f, gtm_s(d, d->diff_a));
        fputc(',', f);
        jstr(f, gtm_s(d, d->diff_b));
        fputs("],", f);
    }
    fputs("\"names\":[", f);
    for (size_t i = 0; i < d->nstr; i++) {
        fputs(i ? "," : "", f);
        jstr(f, gtm_label(d, (uint32_t)i));
    }
    fputs("],\n\"lanes\":[", f);
    for (size_t k = 0; k < d->lanes.len; k++) {
        fputs(k ? ",\n" : "", f);
        lane(f, d, &GMA_VEC_AT(&d->lanes, gtm_lane, k));
    }
    fputs("]}", f);
}

static void text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        default: fputc(*s, f); break;
        }
    }
}

int gtw_html(FILE *f, const gtm_doc *d)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>gmemprof timeline: ", f);
    text(f, gtm_s(d, d->title));
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", gtw_page_css);
    fputs("<header><h1>GPU memory timeline</h1><span id=\"src\"></span></header>\n"
          "<div id=\"bar\"><button id=\"reset\" type=\"button\">Reset view</button>"
          "<span id=\"hint\">wheel: zoom &middot; drag: pan &middot; hover: a band &middot; click: what was live then</span>"
          "<span id=\"viewinfo\"></span></div>\n"
          "<div id=\"notes\"></div>\n<canvas id=\"strip\" title=\"the whole run: click to move the view there\"></canvas>\n<div id=\"lanes\"></div>\n<div id=\"legend\"></div>\n"
          "<div id=\"live\"></div>\n<div id=\"tip\"></div>\n<pre id=\"gmem-test\" hidden></pre>\n"
          "<script type=\"application/json\" id=\"gmem-data\">",
          f);
    data(f, d);
    fprintf(f, "</script>\n<script>\n%s</script>\n</body>\n</html>\n", gtw_page_js);
    return ferror(f) ? -1 : 0;
}
